// `zkr bench`: lock, handoff, election and scale figures, each reported as a
// ratio to the raw ZooKeeper floor measured in the same run by the same C
// client (absolute times on shared machines are noise; ratios are not).
#ifndef ZKRECIPES_TOOLS_BENCH_BENCH_H_
#define ZKRECIPES_TOOLS_BENCH_BENCH_H_

#include <string>

namespace zkr {
namespace bench {

struct BenchOptions {
  // Empty: start an embedded local server.
  std::string connect;
  // Tiny counts (seconds in all): the CTest smoke run.
  bool quick = false;
  // One JSON line per workload instead of the table.
  bool json = false;
  // Only the workloads whose number is in this comma-separated list; empty = all.
  std::string only;
  // Also workload 8: Curator and Kazoo on the same cycle (needs their
  // packages; not part of the default run).
  bool compare = false;
  // > 0: start a loopback ensemble of this many members (3 or 5) instead of
  // one server; every floor is measured on it too.
  int ensemble = 0;
};

// Runs the workloads; returns the process exit code.
int RunBench(const BenchOptions& options);

}  // namespace bench
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_BENCH_BENCH_H_
