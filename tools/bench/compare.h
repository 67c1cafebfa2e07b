// Workload 8 (opt-in, `zkr bench --compare`): the same uncontended lock cycle
// as workload 2, run by Apache Curator (Java) and Kazoo (Python) against the
// benchmark's server, each as a ratio to a raw floor measured just before it.
// The programs live in tools/bench/compare/ (see its README); their packages
// are not build dependencies (`tools/run.sh bench --compare` installs them).
#ifndef ZKRECIPES_TOOLS_BENCH_COMPARE_H_
#define ZKRECIPES_TOOLS_BENCH_COMPARE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/workloads.h"

namespace zkr {
namespace bench {

absl::StatusOr<std::vector<Result>> OtherLibraries(Context& context);  // 8

// Row 8m (compare_mixed.cc): contended handoffs on one Curator mutex by one
// Curator contender and one of ours (Dialect::kCurator), as a ratio to two
// Curator contenders alone; `java_command` runs CuratorHandoffBench.java.
absl::StatusOr<Result> MixedHandoffs(Context& context, const std::string& java_command);

}  // namespace bench
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_BENCH_COMPARE_H_
