#include "tools/bench/stats.h"

#include <malloc.h>

#include <sys/resource.h>

#include <algorithm>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace bench {

double Samples::Quantile(double q) const {
  if (us_.empty()) return 0;
  std::vector<double> sorted = us_;
  std::sort(sorted.begin(), sorted.end());
  size_t index = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
  return sorted[index];
}

absl::Duration ProcessCpuTime() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return absl::DurationFromTimeval(usage.ru_utime) + absl::DurationFromTimeval(usage.ru_stime);
}

namespace {
int64_t StatusField(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) {
      int64_t kib = 0;
      for (absl::string_view part : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
        if (absl::SimpleAtoi(part, &kib)) return kib;
      }
    }
  }
  return -1;
}
}  // namespace

int64_t CurrentRssKib() { return StatusField("VmRSS:"); }
int64_t PeakRssKib() { return StatusField("VmHWM:"); }

int64_t HeapInUseBytes() {
  struct mallinfo2 info = mallinfo2();  // glibc: summed over all arenas
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
}

int64_t ServerCounter(const std::string& connect, const std::string& key) {
  // Summed over every host of the connect string: on an ensemble each
  // member counts what its own clients send.
  const std::string hosts = connect.substr(0, connect.find('/'));
  int64_t sum = 0;
  for (absl::string_view host : absl::StrSplit(hosts, ',', absl::SkipEmpty())) {
    const size_t colon = host.rfind(':');
    int port = 0;
    if (colon == absl::string_view::npos || !absl::SimpleAtoi(host.substr(colon + 1), &port)) {
      return -1;
    }
    auto text = testing::FourLetterWord(std::string(host.substr(0, colon)), port, "mntr");
    const int64_t value = text.ok() ? testing::MntrValue(*text, key) : -1;
    if (value < 0) return -1;
    sum += value;
  }
  return sum;
}

}  // namespace bench
}  // namespace zkr
