// Measurement helpers for the benchmark: latency samples, process CPU time
// and memory, and the server's own counters.
#ifndef ZKRECIPES_TOOLS_BENCH_STATS_H_
#define ZKRECIPES_TOOLS_BENCH_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace zkr {
namespace bench {

// Latency samples in microseconds.
class Samples {
 public:
  void Add(absl::Duration d) { us_.push_back(absl::ToDoubleMicroseconds(d)); }
  size_t size() const { return us_.size(); }
  // The q-quantile (0..1), 0 without samples.
  double Quantile(double q) const;

 private:
  std::vector<double> us_;
};

// This process's user+system CPU time so far.
absl::Duration ProcessCpuTime();
// Current and peak resident set size of this process, in KiB.
int64_t CurrentRssKib();
int64_t PeakRssKib();
// Bytes the process has allocated and not freed (malloc's own count): what
// live objects hold, unlike RSS, which also keeps freed memory malloc has not
// returned to the kernel.
int64_t HeapInUseBytes();

// A numeric line "<key>\t<value>" of the server's `mntr` reply, or -1.
int64_t ServerCounter(const std::string& connect, const std::string& key);

}  // namespace bench
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_BENCH_STATS_H_
