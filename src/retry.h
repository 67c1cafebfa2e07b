// Retry when connected: the one rule for a request that failed retryably
// (IsRetryable: Unavailable, the connection was lost and the outcome is
// unknown). Report the retry to the session's observer, wait until the
// request's session generation is connected again, send again; stop when
// that generation is over (lost, superseded: a session-lost status; the
// session closed: Cancelled), at the caller's deadline, or after the
// caller's backoff policy's last attempt.
//
// Three forms of the rule:
//   * RetryWhenConnected: asynchronous, for state machines on the
//     completion thread; never blocks.
//   * AwaitConnected: the blocking wait between two attempts.
//   * RetryBlocking: a blocking loop around one call, pacing by connection
//     (RetryPlan::backoff null) or by bounded exponential backoff.
//
// Pacing. A retry after the connection dropped waits for the reconnect. A
// retry while the generation is still connected — the server refused the
// request (throttled, timed out, session moved: all Unavailable) — first
// waits the session's retry backoff for that attempt (RetryBackoff), so a
// refusing server is never hammered and a retry never runs inside the call
// that failed.
//
// Threads: RetryWhenConnected's `again`/`ended` run on the thread that
// delivers the session's next state (the ZooKeeper completion thread, the
// supervisor, or Close()'s caller), on the delayed-task thread after a
// backoff, or inline when the generation is already over: they must not
// block. AwaitConnected and RetryBlocking block: never call them on the
// completion thread.
#ifndef ZKRECIPES_SRC_RETRY_H_
#define ZKRECIPES_SRC_RETRY_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "src/session_core.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

// What a retry is reported as (Observer::OnRetry): `attempt` of `operation`
// on `path` failed with `reason`.
struct RetryNote {
  std::string operation;
  std::string path;
  int attempt = 1;
  absl::Status reason;
};

// The pause before retrying after failed attempt `attempt` (1 for the
// first): `policy`'s initial backoff doubled per attempt, capped at its
// max_backoff, plus up to 50% jitter.
absl::Duration RetryBackoff(const RetryPolicy& policy, int attempt);

// Asynchronous: reports `note` (unless null) and runs `again()` once
// `generation` is connected; `attempt` (1 for a request's first retry)
// sets the backoff if it is connected now (see Pacing). If the generation
// is over first, runs `ended(status)` instead (a session-lost status, or
// Cancelled on Close()); `ended` may be empty.
void RetryWhenConnected(SessionCore& core, uint64_t generation, int attempt,
                        const RetryNote* note, std::function<void()> again,
                        std::function<void(absl::Status)> ended = nullptr);

// Blocks between failed attempt `attempt` and the next: while `generation`
// is connected, for its backoff (see Pacing; cut short if the session's
// state changes), then until it is connected (SessionCore::WhenConnected).
// OK; a session-lost status if it is lost or superseded first, Cancelled
// on Close(), DeadlineExceeded (naming `what`) at `deadline` (monotonic),
// also when connected past it.
absl::Status AwaitConnected(SessionCore& core, uint64_t generation, absl::Duration deadline,
                            absl::string_view what, int attempt);

// How RetryBlocking paces and bounds its attempts.
struct RetryPlan {
  // Reported as (operation, path) on each retry.
  std::string operation;
  std::string path;
  // Pacing by connection (no backoff): the generation the request belongs
  // to; its end ends the retries with its status. 0: whichever generation
  // is current at each wait, and a lost one only means "on the next one".
  uint64_t generation = 0;
  // Pacing by connection: no wait lasts past it (monotonic clock).
  absl::Duration deadline = absl::InfiniteDuration();
  // Non-null: pace by this policy instead — sleep its backoff (doubling,
  // plus up to 50% jitter, capped) between attempts, at most max_attempts
  // in all, whatever the connection does.
  const RetryPolicy* backoff = nullptr;
};

absl::Status StatusOfResult(const absl::Status& status);
template <typename T>
absl::Status StatusOfResult(const absl::StatusOr<T>& result) {
  return result.status();
}

// Blocking: `call()` until its result is not retryable, retried as `plan`
// says; returns the last result, or the status that ended the waiting.
template <typename Call>
auto RetryBlocking(SessionCore& core, const RetryPlan& plan, Call call) -> decltype(call()) {
  for (int attempt = 1;; ++attempt) {
    auto result = call();
    const absl::Status status = StatusOfResult(result);
    if (!IsRetryable(status)) return result;
    if (plan.backoff != nullptr) {
      if (attempt >= plan.backoff->max_attempts) return result;
      const absl::Duration pause = RetryBackoff(*plan.backoff, attempt);
      core.ReportRetry(plan.operation, plan.path, attempt, status, pause);
      absl::SleepFor(pause);
      continue;
    }
    core.ReportRetry(plan.operation, plan.path, attempt, status);
    absl::Status connected =
        AwaitConnected(core, plan.generation != 0 ? plan.generation : core.generation(),
                       plan.deadline, absl::StrCat(plan.operation, " ", plan.path), attempt);
    if (!connected.ok() && (plan.generation != 0 || !IsSessionLost(connected))) return connected;
  }
}

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_RETRY_H_
