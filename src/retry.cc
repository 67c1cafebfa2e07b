#include "src/retry.h"

#include <memory>
#include <utility>

#include "absl/synchronization/notification.h"

namespace zkr {
namespace internal {

absl::Status StatusOfResult(const absl::Status& status) { return status; }

void RetryWhenConnected(SessionCore& core, uint64_t generation, const RetryNote* note,
                        std::function<void()> again, std::function<void(absl::Status)> ended) {
  if (note != nullptr) core.ReportRetry(note->operation, note->path, note->attempt, note->reason);
  core.WhenConnected(generation, [again = std::move(again),
                                  ended = std::move(ended)](absl::Status connected) {
    if (connected.ok()) {
      again();
    } else if (ended) {
      ended(std::move(connected));
    }
  });
}

absl::Status AwaitConnected(SessionCore& core, uint64_t generation, absl::Duration deadline,
                            absl::string_view what) {
  struct Connected {
    absl::Notification notified;
    absl::Status status;
  };
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
