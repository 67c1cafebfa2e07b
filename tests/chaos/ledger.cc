// The chaos run's ledger: parsing, following, appending; see ledger.h.
#include "tests/chaos/ledger.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace zkr {
namespace chaos {

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }
std::string Ms(int64_t ns) { return absl::StrFormat("%.0f ms", ns / 1e6); }

std::optional<Entry> ParseEntry(const std::string& line) {
  std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (f.empty()) return std::nullopt;
  Entry e;
  e.line = line;
  e.kind = f[0];
  auto num = [&](size_t i, int64_t* out) {
    return i < f.size() && absl::SimpleAtoi(f[i], out);
  };
  auto mode = [&](size_t i) {
    if (i >= f.size() || (f[i] != "R" && f[i] != "W")) return false;
    e.write = f[i] == "W";
    return true;
  };
  if (e.kind == "NEMESIS") {
    // NEMESIS <t> <kind> <begin|end> <target> [detail...]
    int64_t target = -1;
    if (!num(1, &e.t) || f.size() < 5 || !num(4, &target)) return std::nullopt;
    e.what = f[2];
    e.detail = f[3];
    e.target = static_cast<int>(target);
    return e;
  }
  if (e.kind == "LOAD") {
    // LOAD <t> <sections> <terms> [<semaphore sections>]
    if (!num(1, &e.t) || !num(2, &e.sections) || !num(3, &e.terms)) return std::nullopt;
    if (f.size() > 4 && !num(4, &e.sem_sections)) return std::nullopt;
    return e;
  }
  if (e.kind == "SAMPLE") {
    // SAMPLE <t> <pid> <worker|load> <rss_kib> <fds>
    if (!num(1, &e.t) || !num(2, &e.pid) || f.size() < 6 || !num(4, &e.rss_kib) ||
        !num(5, &e.fds)) {
      return std::nullopt;
    }
    e.what = f[3];
    return e;
  }
  if (e.kind == "HEAP") {
    // HEAP <t> <pid> <load> <live heap KiB> <arena KiB>
    if (!num(1, &e.t) || !num(2, &e.pid) || f.size() < 6 || !num(4, &e.heap_kib) ||
        !num(5, &e.arena_kib)) {
      return std::nullopt;
    }
    e.what = f[3];
    return e;
  }
  int64_t worker = 0;
  if (!num(1, &worker)) return std::nullopt;
  e.worker = static_cast<int>(worker);
  bool ok = false;
  if (e.kind == "ENTER" || e.kind == "EXIT") {
    ok = mode(2) && num(3, &e.token) && num(4, &e.t);
  } else if (e.kind == "ACCEPT") {
    ok = mode(2) && num(3, &e.token) && num(4, &e.seq) && num(5, &e.t);
  } else if (e.kind == "REFUSE") {
    int64_t highest = 0;
    ok = mode(2) && num(3, &e.token) && num(4, &highest) && num(5, &e.t);
    e.seq = highest;
    int64_t lease_ms = 0;
    e.vouched = f.size() >= 8 && f[6] == "held=1" &&
                absl::StartsWith(f[7], "lease_ms=") &&
                absl::SimpleAtoi(f[7].substr(9), &lease_ms) && lease_ms > 0;
  } else if (e.kind == "SUSPECT") {
    ok = num(2, &e.t) && f.size() >= 5;
    if (ok) {
      e.what = f[3];
      e.detail = f[4];
    }
  } else if (e.kind == "AFAIL") {
    ok = mode(2) && num(3, &e.t) && f.size() >= 5;
    if (ok) e.detail = f[4];
  } else if (e.kind == "SENTER") {
    // SENTER <holder> <token> <t> <permits>
    ok = num(2, &e.token) && num(3, &e.t) && num(4, &e.permits);
  } else if (e.kind == "SEXIT") {
    // SEXIT <holder> <token> <t> <told: 0|1>
    int64_t told = 0;
    ok = num(2, &e.token) && num(3, &e.t) && num(4, &told) && (told == 0 || told == 1);
    e.told = told == 1;
  } else if (e.kind == "LEADER" || e.kind == "UNLEAD") {
    ok = num(2, &e.token) && num(3, &e.t);
  } else if (e.kind == "OBSERVE") {
    ok = num(2, &e.token) && num(4, &e.t) && f.size() >= 4;
    if (ok) e.detail = f[3];  // taken over: 1 or 0
  } else if (e.kind == "MEMBERS") {
    ok = num(2, &e.seq) && num(3, &e.t);
  } else if (e.kind == "LACCEPT") {
    ok = num(2, &e.token) && num(3, &e.seq) && num(4, &e.t);
  } else if (e.kind == "LREFUSE") {
    int64_t highest = 0;
    ok = num(2, &e.token) && num(3, &highest) && num(4, &e.t);
    e.seq = highest;
    e.vouched = f.size() >= 6 && f[5] == "current=1";
  } else if (e.kind == "STEP") {
    ok = num(2, &e.t) && num(3, &e.step_s) && num(4, &e.lease_before_ms) &&
         num(5, &e.lease_after_ms);
    e.renewed = f.size() >= 7 && f[6] == "renewed=1";
    ok = ok && f.size() >= 8 && absl::StartsWith(f[7], "elapsed_ms=") &&
         absl::SimpleAtoi(f[7].substr(11), &e.elapsed_ms);
  } else if (e.kind == "START") {
    ok = num(3, &e.t);
  } else if (e.kind == "SESSION") {
    ok = num(4, &e.t);
    if (ok) e.detail = f[2];
  } else if (e.kind == "HELD_AGAIN" || e.kind == "STOP" || e.kind == "ERROR" ||
             e.kind == "RELEASE_ERROR") {
    ok = num(2, &e.t);
  }
  if (!ok) return std::nullopt;
  return e;
}

std::vector<Entry> LedgerReader::Poll() {
  std::vector<Entry> out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return out;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  offset_ += chunk.size();
  partial_ += chunk;
  size_t start = 0;
  for (size_t nl = partial_.find('\n'); nl != std::string::npos;
       nl = partial_.find('\n', start)) {
    std::string line = partial_.substr(start, nl - start);
    start = nl + 1;
    std::optional<Entry> entry = ParseEntry(line);
    if (entry.has_value()) {
      out.push_back(std::move(*entry));
    } else {
      malformed_.push_back(line);
    }
  }
  partial_.erase(0, start);
  return out;
}

void AppendLine(const std::string& file, const std::string& text) {
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string line = text + "\n";
  (void)write(fd, line.data(), line.size());
  close(fd);
}

}  // namespace chaos
}  // namespace zkr
