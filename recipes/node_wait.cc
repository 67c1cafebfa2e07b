#include "recipes/node_wait.h"

#include <zookeeper/zookeeper.h>

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
  absl::Notification notified;
  std::atomic<int> event{0};  // the watch's event type, 0 for a session end
  void Fire(int type) {
    int none = 0;
    if (event.compare_exchange_strong(none, type) || type == 0) {
      if (!notified.HasBeenNotified()) notified.Notify();
    }
  }
};

}  // namespace

absl::Status WaitForNode(SessionCore& core, const std::string& path, bool want_exists,
                         absl::Time deadline) {
  if (ZkClient::OnCompletionThread()) {
    return absl::FailedPreconditionError(
        absl::StrCat("wait for ", path, ": called on the ZooKeeper completion thread"));
  }
  for (;;) {
    auto wake = std::make_shared<Wake>();
    int listener = core.AddInternalListener([wake](SessionState state, uint64_t) {
      if (state == SessionState::kLost || state == SessionState::kClosed) wake->Fire(0);
    });
    SessionCore::Handle handle = core.current();
    absl::Notification replied;
    int rc = ZOK;
    auto on_reply = [&](int result) {
      rc = result;
      replied.Notify();
    };
    auto on_watch = [wake](int type, const std::string&) { wake->Fire(type); };
    // Waiting for a deletion: a data watch, which the server sets only on an
    // existing node. Waiting for a creation: an exists watch.
    const uintptr_t watch =
        want_exists
            ? handle.client->Exists(path, on_watch, [&](int r, const Stat&) { on_reply(r); })
            : handle.client->Get(path, on_watch,
                                 [&](int r, std::string, const Stat&) { on_reply(r); });
    replied.WaitForNotification();  // every completion runs exactly once
    absl::Status status;
    bool again = false;
    if (rc == ZOK || rc == ZNONODE) {
      if ((rc == ZOK) == want_exists) {
        handle.client->CancelWatch(watch);  // an exists watch on a node that is there
        core.RemoveInternalListener(listener);
        return absl::OkStatus();
      }
      if (!wake->notified.WaitForNotificationWithDeadline(deadline)) {
        status = absl::DeadlineExceededError(absl::StrCat(
            "wait until ", path, want_exists ? " exists" : " is gone", ": deadline passed"));
      } else {
        const int event = wake->event.load();
        const bool reached = want_exists ? event == ZOO_CREATED_EVENT : event == ZOO_DELETED_EVENT;
        if (reached) {
          core.RemoveInternalListener(listener);
          return absl::OkStatus();
        }
        again = true;  // the data changed, or the session ended: ask again
      }
    } else if (absl::IsUnavailable(ZkStatus(rc, "exists", path))) {
      // Disconnected: wait for the reconnect (or the loss), then ask again.
      auto connected = std::make_shared<absl::Notification>();
      core.WhenConnected(handle.generation, [connected](absl::Status) { connected->Notify(); });
      if (!connected->WaitForNotificationWithDeadline(deadline)) {
        status = absl::DeadlineExceededError(
            absl::StrCat("wait for ", path, ": disconnected until the deadline"));
      } else {
        again = true;
      }
    } else if (rc == ZCLOSING && !core.closed()) {
      status = SessionLostStatus("wait for", path);
    } else {
      status = ZkStatus(rc, "wait for", path);
    }
    handle.client->CancelWatch(watch);  // given up, or asking again
    core.RemoveInternalListener(listener);
    if (!again) return status;
  }
}

}  // namespace internal
}  // namespace zkr
