// The chaos run's sampler: every period, the resident set (VmRSS of
// /proc/PID/status) and the open descriptors (entries of /proc/PID/fd) of
// every chaos_worker and chaos_load process this process started, as
//
//   SAMPLE <t_ns> <pid> <worker|load> <rss_kib> <fds>
//
// lines in the ledger (one t per round, for the checker's per-minute table
// and its flatness rule (j)) and rows of <run directory>/samples.csv. Also
// writes the checker's minutes as minutes.csv. (The load's live heap, which
// only the process itself can read, it writes to the ledger itself as HEAP
// lines: chaos_load.cc.)
// Thread-safety: a Sampler runs its own thread; Start and Stop from one
// thread. SampleChildren and WriteMinutesCsv are safe from any thread.
#ifndef ZKRECIPES_TESTS_CHAOS_SAMPLER_H_
#define ZKRECIPES_TESTS_CHAOS_SAMPLER_H_

#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tests/chaos/checker.h"
#include "tests/chaos/ledger.h"

namespace zkr {
namespace chaos {

struct ProcessSample {
  int64_t pid = 0;
  std::string name;  // worker | load
  int64_t rss_kib = 0, fds = 0;
};

namespace sampler_internal {

inline std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The entries of a directory other than . and ..; -1 if it cannot be read.
inline int64_t CountEntries(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return -1;
  int64_t n = 0;
  while (struct dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") ++n;
  }
  closedir(dir);
  return n;
}

}  // namespace sampler_internal

// The chaos_worker and chaos_load children of `parent`, sampled now. A
// process that exits while being read is left out.
inline std::vector<ProcessSample> SampleChildren(pid_t parent) {
  using sampler_internal::ReadWhole;
  std::vector<ProcessSample> samples;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return samples;
  while (struct dirent* entry = readdir(proc)) {
    int64_t pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    const std::string base = absl::StrCat("/proc/", pid);
    // stat: "<pid> (<comm>) <state> <ppid> ..."; comm may hold spaces.
    const std::string stat = ReadWhole(base + "/stat");
    const size_t close = stat.rfind(')');
    const size_t open = stat.find('(');
    if (close == std::string::npos || open == std::string::npos) continue;
    const std::string comm = stat.substr(open + 1, close - open - 1);
    std::vector<std::string> rest =
        absl::StrSplit(stat.substr(close + 1), ' ', absl::SkipEmpty());
    int64_t ppid = 0;
    if (rest.size() < 2 || !absl::SimpleAtoi(rest[1], &ppid) || ppid != parent) continue;
    ProcessSample sample;
    sample.pid = pid;
    if (comm == "chaos_worker") {
      sample.name = "worker";
    } else if (comm == "chaos_load") {
      sample.name = "load";
    } else {
      continue;
    }
    sample.rss_kib = -1;
    for (absl::string_view line : absl::StrSplit(ReadWhole(base + "/status"), '\n')) {
      if (absl::ConsumePrefix(&line, "VmRSS:")) {
        line = absl::StripAsciiWhitespace(line);
        absl::ConsumeSuffix(&line, "kB");
        (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &sample.rss_kib);
      }
    }
    sample.fds = sampler_internal::CountEntries(base + "/fd");
    if (sample.rss_kib < 0 || sample.fds < 0) continue;  // gone meanwhile
    samples.push_back(std::move(sample));
  }
  closedir(proc);
  return samples;
}

// Samples this process's chaos children every `period` until Stop().
class Sampler {
 public:
  Sampler(std::string ledger, std::string csv, absl::Duration period)
      : ledger_(std::move(ledger)), csv_(std::move(csv)), period_(period) {}
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  ~Sampler() { Stop(); }

  void Start() {
    AppendLine(csv_, "t_ns,pid,process,rss_kib,fds");
    thread_ = std::thread([this] {
      do {
        const int64_t t = NowNs();
        for (const ProcessSample& s : SampleChildren(getpid())) {
          AppendLine(ledger_, absl::StrCat("SAMPLE ", t, " ", s.pid, " ", s.name, " ",
                                           s.rss_kib, " ", s.fds));
          AppendLine(csv_, absl::StrCat(t, ",", s.pid, ",", s.name, ",", s.rss_kib, ",", s.fds));
        }
      } while (!stop_.WaitForNotificationWithTimeout(period_));
    });
  }
  void Stop() {
    if (!thread_.joinable()) return;
    stop_.Notify();
    thread_.join();
  }

 private:
  const std::string ledger_, csv_;
  const absl::Duration period_;
  absl::Notification stop_;
  std::thread thread_;
};

// The checker's minutes as CSV; false if the file cannot be written.
inline bool WriteMinutesCsv(const std::string& path, const std::vector<Minute>& minutes) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return false;
  std::fprintf(out,
               "minute,worker_rss_kib,worker_fds,load_rss_kib,load_fds,worker_sections,"
               "load_lock_sections,load_semaphore_sections,load_heap_kib\n");
  for (size_t m = 0; m < minutes.size(); ++m) {
    const Minute& x = minutes[m];
    std::fprintf(out, "%zu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", m,
                 static_cast<long long>(x.worker_rss_kib), static_cast<long long>(x.worker_fds),
                 static_cast<long long>(x.load_rss_kib), static_cast<long long>(x.load_fds),
                 static_cast<long long>(x.worker_sections),
                 static_cast<long long>(x.load_sections), static_cast<long long>(x.sem_sections),
                 static_cast<long long>(x.load_heap_kib));
  }
  return std::fclose(out) == 0;
}

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_SAMPLER_H_
