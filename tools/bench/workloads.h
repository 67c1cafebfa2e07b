// The benchmark's workloads (numbered as in the benchmark issue) and the
// result row each produces.
#ifndef ZKRECIPES_TOOLS_BENCH_WORKLOADS_H_
#define ZKRECIPES_TOOLS_BENCH_WORKLOADS_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/bench/stats.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace bench {

struct Result {
  Result() = default;
  Result(std::string id, std::string name) : id(std::move(id)), name(std::move(name)) {}

  std::string id;    // "1a", "2w", ...
  std::string name;  // what was measured
  double p50_us = 0;
  double p99_us = 0;
  // The measured ratio to the floor (latency: p50 / floor p50, lower is
  // better; throughput: rate / floor rate, higher is better); 0 if none.
  double ratio = 0;
  std::string target;  // e.g. "<= 1.05x"
  bool met = true;
  // Why `met` is false, one entry per failed condition ("p50 1.07x > 1.05x").
  std::vector<std::string> shortfalls;
  // Records one condition of the target; a failed one is named in the output.
  void Require(bool ok, std::string shortfall) {
    if (ok) return;
    met = false;
    shortfalls.push_back(std::move(shortfall));
  }
  // Further figures: name -> value (cycles/s, requests/cycle, CPU us/op ...).
  std::vector<std::pair<std::string, double>> figures;
  // Measured in this process (so its peak RSS is reported with it); false
  // for the other libraries of workload 8, which run as their own processes.
  bool in_process = true;
};

struct Context {
  std::string connect;
  std::string root;  // a fresh path for this run
  bool quick = false;
  // Filled by workload 1 and used by the others as their floor.
  double floor_cycle_p50_us = 0;
  double floor_cpu_us_per_cycle = 0;
  double floor_pipelined_ops_per_s = 0;
  double floor_handoff_p50_us = 0;
  double floor_settled_handoff_p50_us = 0;  // 1hs: after kFailoverSettle idle
  double floor_failover_p50_us = 0;
};

// Helpers the workload files share.
// A session for the benchmark (reporting to `observer`, if given).
absl::StatusOr<std::unique_ptr<Session>> Connect(const Context& context,
                                                  std::shared_ptr<Observer> observer = nullptr);
// `n` sessions, each its own participant.
// `observer_for(i)`, if given, is session i's observer.
absl::StatusOr<std::vector<std::unique_ptr<Session>>> ConnectMany(
    const Context& context, int n,
    const std::function<std::shared_ptr<Observer>(int)>& observer_for = nullptr);
// A latency row: p50/p99 of `samples` and, with a floor, p50 / floor p50.
Result LatencyRow(std::string id, std::string name, const Samples& samples,
                  double floor_p50_us = 0);
double CpuUsPerOp(absl::Duration cpu, int64_t ops);
// The figure `name` of `r`, or 0.
double FigureOf(const Result& r, absl::string_view name);
// Deletes a queue directory (a container the server may have reaped).
absl::Status DeleteLockDirectory(Session& session, const std::string& path);

absl::StatusOr<std::vector<Result>> RawFloor(Context& context);            // 1
absl::StatusOr<std::vector<Result>> Uncontended(Context& context);         // 2
absl::StatusOr<std::vector<Result>> Handoff(Context& context);             // 3
absl::StatusOr<std::vector<Result>> MixedReadWrite(Context& context);      // 4
absl::StatusOr<std::vector<Result>> ManyLocks(Context& context);           // 5
absl::StatusOr<std::vector<Result>> DeepQueue(Context& context);           // 6
absl::StatusOr<std::vector<Result>> ElectionFailover(Context& context);    // 7 (election_rows.cc)
absl::StatusOr<std::vector<Result>> SemaphoreContention(Context& context); // 9 (semaphore_rows.cc)
// Workload 9's first pair for workload 8 (semaphore_rows.cc): zkr::Semaphore
// at defaults or (`textbook`) the raw textbook one, 4 leases, 16 sessions,
// each taking a lease and giving it back at once in a loop for `run_for`;
// the row's figures include acquisitions_per_s.
absl::StatusOr<Result> SemaphoreForTime(Context& context, bool textbook, absl::Duration run_for);
// Workload 7's failover row alone (election_rows.cc), for workload 8.
absl::StatusOr<Result> FailoverRow(Context& context);

}  // namespace bench
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_BENCH_WORKLOADS_H_
