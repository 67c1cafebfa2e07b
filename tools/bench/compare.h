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
#include "absl/strings/string_view.h"
#include "tools/bench/workloads.h"

namespace zkr {
namespace bench {

absl::StatusOr<std::vector<Result>> OtherLibraries(Context& context);  // 8

// Row 8m (compare_mixed.cc): contended handoffs on one Curator mutex by one
// Curator contender and one of ours (Dialect::kCurator), as a ratio to two
// Curator contenders alone; `java_command` runs CuratorHandoffBench.java.
absl::StatusOr<Result> MixedHandoffs(Context& context, const std::string& java_command);

// Rows 8s, 8rw and 8e with Curator's and Kazoo's (compare_recipes.cc): the
// semaphore (workload 9's shape), the read/write mix (4's) and election
// failover (7's), each library against ours in the same run. `java` and
// `python` run CuratorRecipeBench.java and kazoo_recipe_bench.py; both use
// `base`, which exists, and leave it empty.
absl::StatusOr<std::vector<Result>> OtherRecipes(Context& context, const std::string& base,
                                                 const std::string& java,
                                                 const std::string& python);

// Rows 8b and 8ml with Curator's and Kazoo's (compare_barrier_multilock.cc):
// a double barrier's enter+leave round of 4 sessions, and the uncontended
// cycle of a multi-lock of 4 locks (Curator only: Kazoo has none), as
// latency ratios to ours in the same run. `programs` as OtherRecipes'.
absl::StatusOr<std::vector<Result>> Barriers(Context& context, const std::string& base,
                                             const std::string (&programs)[2]);
absl::StatusOr<std::vector<Result>> MultiLocks(Context& context, const std::string& base,
                                               const std::string (&programs)[2]);

// Rows 8g, 8cg, 8kg (compare_group.cc): a member joins a group and a
// watcher on another session hears of it, as latency ratios to ours.
absl::StatusOr<std::vector<Result>> Groups(Context& context, const std::string& base,
                                           const std::string (&programs)[2]);

// Shared by the recipe rows (compare_recipes.cc).
// Runs `program` (CuratorRecipeBench or kazoo_recipe_bench) on one
// workload; its single JSON line.
absl::StatusOr<std::string> RunOne(const std::string& program, const char* workload,
                                   const Context& context, const std::string& base,
                                   double amount, double warmup);
// The number "key" in a program's line.
absl::StatusOr<double> Number(absl::string_view line, absl::string_view key);
// "Curator 5.4.0" from a program's line.
std::string LibraryOf(absl::string_view line);

// Shared by the comparison files (compare.cc).
// The value of "key" in a flat one-line JSON object, quotes stripped.
absl::string_view JsonField(absl::string_view line, absl::string_view key);
// Runs `command` through the shell; its stdout, or an error naming it.
absl::StatusOr<std::string> Output(const std::string& command);

}  // namespace bench
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_BENCH_COMPARE_H_
