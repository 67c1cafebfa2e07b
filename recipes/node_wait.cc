#include "recipes/node_wait.h"

#include <atomic>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {
namespace {

// One round's wake-up: the watch fired (with its event), or the session
// ended (then the watch never fires).
struct Wake {
  enum Why { kNone, kSessionEnded, kCreated, kDeleted, kOther };
  absl::Notification notified;
  std::atomic<int> why{kNone};  // the first reason
  void Fire(Why reason) {
    int none = kNone;
    if (why.compare_exchange_strong(none, reason) || reason == kSessionEnded) {
      if (!notified.HasBeenNotified()) notified.Notify();
    }
  }
};

}  // namespace

absl::Status WaitForNode(SessionCore& core, const std::string& path, bool want_exists,
                         absl::Duration deadline) {
  if (OnCompletionThread()) {
    return absl::FailedPreconditionError(
        absl::StrCat("wait for ", path, ": called on the ZooKeeper completion thread"));
  }
  // The read's answer is awaited until the deadline; a deadline already
  // past (a zero timeout: try once) still asks once, as TryAcquire does:
  // its answer is awaited up to the connect timeout.
  const absl::Duration now = core.clock().Monotonic();
  const absl::Duration reply_deadline =
      deadline > now ? deadline : now + core.options().connect_timeout;
  for (int refused = 0;;) {
    auto wake = std::make_shared<Wake>();
    int listener = core.AddInternalListener([wake](SessionState state, uint64_t) {
      if (state == SessionState::kLost || state == SessionState::kClosed) {
        wake->Fire(Wake::kSessionEnded);
      }
    });
    SessionCore::Handle handle = core.current();
    // The read's reply, shared with its completion: a reply that comes after
    // the deadline (the member went silent, so it comes only once the client
    // gives up on the connection) finds it still there.
    struct Reply {
      absl::Notification replied;
      absl::Status status;  // OK: the node exists; NotFound: it does not
    };
    auto reply_slot = std::make_shared<Reply>();
    auto on_reply = [reply_slot](absl::Status result) {
      reply_slot->status = std::move(result);
      reply_slot->replied.Notify();
    };
    // Its room in the session's watch budget, held until it fires or is
    // cancelled.
    absl::StatusOr<ZkClient::WatchFn> on_watch = core.ReservedWatch(
        path, absl::StrCat("wait until ", path, want_exists ? " exists" : " is gone"),
        [wake](const WatchEvent& event) {
          wake->Fire(event.type == WatchEvent::Type::kCreated   ? Wake::kCreated
                     : event.type == WatchEvent::Type::kDeleted ? Wake::kDeleted
                                                                : Wake::kOther);
        });
    if (!on_watch.ok()) {
      core.RemoveInternalListener(listener);
      return on_watch.status();
    }
    // Waiting for a deletion: a data watch, which the server sets only on an
    // existing node. Waiting for a creation: an exists watch.
    const uintptr_t watch =
        want_exists
            ? handle.client->Exists(
                  path, *std::move(on_watch),
                  [on_reply](absl::StatusOr<Stat> stat) { on_reply(stat.status()); })
            : handle.client->Get(
                  path, *std::move(on_watch),
                  [on_reply](absl::StatusOr<NodeData> node) { on_reply(node.status()); });
    // Every completion runs exactly once, but not necessarily by the
    // deadline: past it, the wait ends without the answer (the watch, set or
    // not yet, is given up below).
    if (!reply_slot->replied.WaitForNotificationWithTimeout(reply_deadline -
                                                            core.clock().Monotonic())) {
      handle.client->CancelWatch(watch);
      core.RemoveInternalListener(listener);
      return absl::DeadlineExceededError(absl::StrCat(
          "wait until ", path, want_exists ? " exists" : " is gone",
          ": deadline passed (the server had not answered)"));
    }
    const absl::Status reply = reply_slot->status;
    absl::Status status;
    bool again = false;
    if (reply.ok() || absl::IsNotFound(reply)) {
      if (reply.ok() == want_exists) {
        handle.client->CancelWatch(watch);  // an exists watch on a node that is there
        core.RemoveInternalListener(listener);
        return absl::OkStatus();
      }
      if (!wake->notified.WaitForNotificationWithTimeout(deadline - core.clock().Monotonic())) {
        status = absl::DeadlineExceededError(absl::StrCat(
            "wait until ", path, want_exists ? " exists" : " is gone", ": deadline passed"));
      } else {
        const int why = wake->why.load();
        const bool reached = why == (want_exists ? Wake::kCreated : Wake::kDeleted);
        if (reached) {
          core.RemoveInternalListener(listener);
          return absl::OkStatus();
        }
        again = true;  // the data changed, or the session ended: ask again
      }
    } else if (IsRetryable(reply)) {
      // Wait for the reconnect (or the loss; paced if still connected), then ask again.
      status = AwaitConnected(core, handle.generation, deadline, absl::StrCat("wait for ", path),
                              ++refused);
      again = !absl::IsDeadlineExceeded(status);
    } else {
      status = reply;
    }
    handle.client->CancelWatch(watch);  // given up, or asking again
    core.RemoveInternalListener(listener);
    if (!again) return status;
  }
}

}  // namespace internal
}  // namespace zkr
