#include "src/retry.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/random/random.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace zkr {
namespace internal {

absl::Status StatusOfResult(const absl::Status& status) { return status; }

absl::Duration RetryBackoff(const RetryPolicy& policy, int attempt) {
  thread_local absl::BitGen random;
  absl::Duration backoff = policy.initial_backoff;
  for (int i = 1; i < attempt && backoff < policy.max_backoff; ++i) backoff *= 2;
  backoff = std::min(backoff, policy.max_backoff);
  return backoff * (1.0 + absl::Uniform(random, 0.0, 0.5));
}

void RetryWhenConnected(SessionCore& core, uint64_t generation, int attempt,
                        const RetryNote* note, std::function<void()> again,
                        std::function<void(absl::Status)> ended) {
  const bool refused = core.IsConnected(generation);  // not a dropped connection
  const absl::Duration pause =
      refused ? RetryBackoff(core.options().retry, attempt) : absl::ZeroDuration();
  if (note != nullptr) {
    core.ReportRetry(note->operation, note->path, note->attempt, note->reason, pause);
  }
  auto when_connected = [weak = core.weak_from_this(), generation, again = std::move(again),
                         ended = std::move(ended)]() mutable {
    std::shared_ptr<SessionCore> core = weak.lock();
    if (core == nullptr) {
      if (ended) ended(absl::CancelledError("session closed"));
      return;
    }
    core->WhenConnected(generation, [again = std::move(again),
                                     ended = std::move(ended)](absl::Status connected) {
      if (connected.ok()) {
        again();
      } else if (ended) {
        ended(std::move(connected));
      }
    });
  };
  if (!refused) return when_connected();
  core.delayed().RunAfter(pause, std::move(when_connected));
}

namespace {
// Sleeps up to `pause` (monotonic, not past `deadline`), cut short by any
// change of the session's state (a disconnection, loss, Close()).
void PauseWhileUnchanged(SessionCore& core, uint64_t generation, absl::Duration pause,
                         absl::Duration deadline) {
  struct Changed {
    absl::Mutex mu;
    bool changed ABSL_GUARDED_BY(mu) = false;
  };
  auto changed = std::make_shared<Changed>();  // the listener may outlive the pause
  const int id = core.AddInternalListener([changed](SessionState, uint64_t) {
    absl::MutexLock lock(&changed->mu);
    changed->changed = true;
  });
  const absl::Duration until = std::min(core.clock().Monotonic() + pause, deadline);
  if (core.IsConnected(generation)) {  // else it changed before the listener was in
    absl::MutexLock lock(&changed->mu);
    changed->mu.AwaitWithTimeout(absl::Condition(&changed->changed),
                                 until - core.clock().Monotonic());
  }
  core.RemoveInternalListener(id);
}
}  // namespace

absl::Status AwaitConnected(SessionCore& core, uint64_t generation, absl::Duration deadline,
                            absl::string_view what, int attempt) {
  struct Connected {
    absl::Notification notified;
    absl::Status status;
  };
  if (core.IsConnected(generation)) {  // refused, not dropped: back off first
    PauseWhileUnchanged(core, generation, RetryBackoff(core.options().retry, attempt), deadline);
  }
  // Past the deadline even when connected: a caller retrying requests that
  // fail while connected stops there.
  if (core.clock().Monotonic() >= deadline) {
    return absl::DeadlineExceededError(absl::StrCat(what, ": deadline passed"));
  }
  auto connected = std::make_shared<Connected>();  // the callback may outlive a timed-out wait
  core.WhenConnected(generation, [connected](absl::Status status) {
    connected->status = std::move(status);
    connected->notified.Notify();
  });
  if (!connected->notified.WaitForNotificationWithTimeout(deadline - core.clock().Monotonic())) {
    return absl::DeadlineExceededError(
        absl::StrCat(what, ": disconnected until the deadline"));
  }
  return connected->status;
}

}  // namespace internal
}  // namespace zkr
