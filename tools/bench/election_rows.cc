// Workload 7: election failover (the leader's session closes) and the
// graceful hand-overs (the leader yields, or leaves), each from the old leader's act to
// the new leader's on_change(kLeader), as ratios to the raw floors.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "src/macros.h"
#include "tools/bench/raw_floor.h"
#include "tools/bench/workloads.h"
#include "zkrecipes/leader_election.h"

namespace zkr {
namespace bench {
namespace {

// Two candidates hand leadership back and forth, the leader stepping down
// by Yield() (7y: it queues again at once) or Leave() (7l: it joins again
// after the hand-over, outside the timed interval): from the call to the
// other's on_change(kLeader), as a ratio to the raw handoff after the same
// idle settle (1hs), the ratio to the unsettled one (1h) printed beside it.
absl::StatusOr<Result> HandOverRow(Context& context, bool leave) {
  const int rounds = context.quick ? 3 : 50;
  const std::string path = context.root + (leave ? "/election-leave" : "/election-yield");
  struct Candidate {  // destroyed election first, then session, then the rest
    absl::Mutex mu;
    int terms = 0;         // guarded by mu
    absl::Time led_at;     // guarded by mu: the last on_change(kLeader)
    std::unique_ptr<Session> session;
    std::unique_ptr<LeaderElection> election;
  };
  std::vector<std::unique_ptr<Candidate>> candidates;
  for (int n = 0; n < 2; ++n) {
    auto c = std::make_unique<Candidate>();
    ZKR_ASSIGN_OR_RETURN(c->session, Connect(context));
    ElectionOptions options;
    options.id = absl::StrCat(leave ? "leaver-" : "yielder-", n);
    Candidate* raw = c.get();
    options.on_change = [raw](Leadership l) {
      if (l != Leadership::kLeader) return;
      absl::MutexLock lock(&raw->mu);
      ++raw->terms;
      raw->led_at = absl::Now();
    };
    ZKR_ASSIGN_OR_RETURN(c->election, LeaderElection::Create(*c->session, path, options));
    ZKR_RETURN_IF_ERROR(c->election->Join());
    ZKR_RETURN_IF_ERROR(candidates.empty() ? c->election->AwaitLeadership(absl::Seconds(10))
                                           : absl::OkStatus());
    candidates.push_back(std::move(c));
  }
  auto both_queued = [&]() -> absl::Status {
    for (int i = 0; i < 1000; ++i) {
      auto ids = candidates[0]->election->Participants();
      if (ids.ok() && ids->size() == 2) break;
      absl::SleepFor(absl::Milliseconds(2));
    }
    absl::SleepFor(kFailoverSettle);  // the waiter's watch is set, as in the floor
    return absl::OkStatus();
  };
  Samples handover;
  absl::Duration cpu;
  for (int round = 0; round < rounds; ++round) {
    ZKR_RETURN_IF_ERROR(both_queued());
    Candidate& leader = *candidates[round % 2];
    Candidate& next = *candidates[(round + 1) % 2];
    int before;
    {
      absl::MutexLock lock(&next.mu);
      before = next.terms;
    }
    const absl::Duration cpu_before = ProcessCpuTime();
    const absl::Time stepped_down = absl::Now();
    ZKR_RETURN_IF_ERROR(leave ? leader.election->Leave() : leader.election->Yield());
    {
      absl::MutexLock lock(&next.mu);
      auto led = [&next, before]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(next.mu) {
        return next.terms > before;
      };
      if (!next.mu.AwaitWithTimeout(absl::Condition(&led), absl::Seconds(20))) {
        return absl::DeadlineExceededError("the step-down was not taken over");
      }
      cpu += ProcessCpuTime() - cpu_before;
      handover.Add(next.led_at - stepped_down);
    }
    if (leave) ZKR_RETURN_IF_ERROR(leader.election->Join());
  }
  for (auto& c : candidates) (void)c->election->Leave();
  (void)candidates[0]->session->Delete(path);
  Result r = leave ? LatencyRow("7l", "step-down: leader Leave() -> next leader's callback",
                                handover, context.floor_settled_handoff_p50_us)
                   : LatencyRow("7y", "graceful hand-over: leader Yield() -> next leader's callback",
                                handover, context.floor_settled_handoff_p50_us);
  r.target = "<= 1.0x raw handoff (settled, 1hs)";
  r.Require(r.ratio <= 1.0, absl::StrFormat("p50 %.2fx > 1.0x", r.ratio));
  r.figures = {{"ratio_to_raw_handoff", context.floor_handoff_p50_us > 0
                                            ? r.p50_us / context.floor_handoff_p50_us
                                            : 0},
               {"client_cpu_us_per_handover", CpuUsPerOp(cpu, rounds)}};
  return r;
}

}  // namespace

absl::StatusOr<Result> FailoverRow(Context& context) {
  const int rounds = context.quick ? 3 : 50;
  const std::string path = context.root + "/election";
  struct Candidate {  // destroyed election first, then session, then the rest
    absl::Notification led;
    absl::Time led_at;
    std::unique_ptr<Session> session;
    std::unique_ptr<LeaderElection> election;
  };
  auto join = [&](int n) -> absl::StatusOr<std::unique_ptr<Candidate>> {
    auto c = std::make_unique<Candidate>();
    ZKR_ASSIGN_OR_RETURN(c->session, Connect(context));
    ElectionOptions options;
    options.id = absl::StrCat("candidate-", n);
    options.rejoin_after_loss = false;
    Candidate* raw = c.get();
    options.on_change = [raw](Leadership l) {
      if (l == Leadership::kLeader && !raw->led.HasBeenNotified()) {
        raw->led_at = absl::Now();
        raw->led.Notify();
      }
    };
    ZKR_ASSIGN_OR_RETURN(c->election, LeaderElection::Create(*c->session, path, options));
    ZKR_RETURN_IF_ERROR(c->election->Join());
    return c;
  };
  Samples failover;
  absl::Duration cpu;  // client CPU from the leader's close to the new leader's callback
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Candidate> leader, join(0));
  if (!leader->led.WaitForNotificationWithTimeout(absl::Seconds(10))) {
    return absl::DeadlineExceededError("no first leader");
  }
  for (int round = 1; round <= rounds; ++round) {
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Candidate> next, join(round));
    // Wait until the successor is queued (its node exists) before the kill.
    for (int i = 0; i < 1000; ++i) {
      auto ids = next->election->Participants();
      if (ids.ok() && ids->size() == 2) break;
      absl::SleepFor(absl::Milliseconds(2));
    }
    absl::SleepFor(kFailoverSettle);  // its watch is set; as idle as the floor's holder
    const absl::Duration cpu_before = ProcessCpuTime();
    absl::Time killed = absl::Now();
    leader->session->Close();  // the leader's session ends: its node goes
    if (!next->led.WaitForNotificationWithTimeout(absl::Seconds(20))) {
      return absl::DeadlineExceededError("no new leader");
    }
    cpu += ProcessCpuTime() - cpu_before;
    failover.Add(next->led_at - killed);
    leader = std::move(next);
  }
  (void)leader->election->Leave();
  (void)leader->session->Delete(path);
  Result r = LatencyRow("7", "election failover: leader session closed -> new leader's callback",
                        failover, context.floor_failover_p50_us);
  // The floor for this row is the raw handoff (1h). A failover
  // starts with a session close, which the raw failover (1f) includes and
  // the raw handoff does not: the target is judged against 1f, and the ratio
  // to 1h is printed too.
  r.target = "<= 1.20x raw failover";
  r.Require(r.ratio <= 1.2, absl::StrFormat("p50 %.2fx > 1.20x", r.ratio));
  r.figures = {{"ratio_to_raw_handoff", context.floor_handoff_p50_us > 0
                                            ? r.p50_us / context.floor_handoff_p50_us
                                            : 0},
               {"client_cpu_us_per_failover", CpuUsPerOp(cpu, rounds)}};
  return r;
}

absl::StatusOr<std::vector<Result>> ElectionFailover(Context& context) {
  ZKR_ASSIGN_OR_RETURN(Result failover, FailoverRow(context));
  ZKR_ASSIGN_OR_RETURN(Result yield, HandOverRow(context, /*leave=*/false));
  ZKR_ASSIGN_OR_RETURN(Result leave, HandOverRow(context, /*leave=*/true));
  return std::vector<Result>{failover, yield, leave};
}

}  // namespace bench
}  // namespace zkr
