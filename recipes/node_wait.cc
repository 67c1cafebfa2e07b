#include "recipes/node_wait.h"

#include <zookeeper/zookeeper.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {

absl::Status WaitForNode(SessionCore& core, const std::string& path, bool want_exists,
                         absl::Time deadline) {
  if (ZkClient::OnCompletionThread()) {
    return absl::FailedPreconditionError(
        absl::StrCat("wait for ", path, ": called on the ZooKeeper completion thread"));
  }
  for (;;) {
    // Fires on the node's change, or on session loss (the watch then never
    // fires).
    auto changed = std::make_shared<absl::Notification>();
    int listener = core.AddInternalListener([changed](SessionState state, uint64_t) {
      if ((state == SessionState::kLost || state == SessionState::kClosed) &&
          !changed->HasBeenNotified()) {
        changed->Notify();
      }
    });
    SessionCore::Handle handle = core.current();
    absl::Notification replied;
    int rc = ZOK;
    handle.client->Exists(
        path,
        [changed](int, const std::string&) {
          if (!changed->HasBeenNotified()) changed->Notify();
        },
        [&](int result, const Stat&) {
          rc = result;
          replied.Notify();
        });
    replied.WaitForNotification();  // every completion runs exactly once
    absl::Status status;
    if (rc == ZOK || rc == ZNONODE) {
      if ((rc == ZOK) == want_exists) {
        core.RemoveInternalListener(listener);
        return absl::OkStatus();
      }
      if (!changed->WaitForNotificationWithDeadline(deadline)) {
        status = absl::DeadlineExceededError(absl::StrCat(
            "wait until ", path, want_exists ? " exists" : " is gone", ": deadline passed"));
      }
    } else if (absl::IsUnavailable(ZkStatus(rc, "exists", path))) {
      // Disconnected: wait for the reconnect (or the loss), then ask again.
      auto connected = std::make_shared<absl::Notification>();
      core.WhenConnected(handle.generation, [connected](absl::Status) { connected->Notify(); });
      if (!connected->WaitForNotificationWithDeadline(deadline)) {
        status = absl::DeadlineExceededError(
            absl::StrCat("wait for ", path, ": disconnected until the deadline"));
      }
    } else if (rc == ZCLOSING && !core.closed()) {
      status = SessionLostStatus("wait for", path);
    } else {
      status = ZkStatus(rc, "wait for", path);
    }
    core.RemoveInternalListener(listener);
    if (!status.ok()) return status;
  }
}

}  // namespace internal
}  // namespace zkr
