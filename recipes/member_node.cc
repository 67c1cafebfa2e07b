#include "recipes/member_node.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

absl::StatusOr<std::shared_ptr<QueueEntry>> CreateMemberNode(
    const std::shared_ptr<SessionCore>& core, const std::string& dir, const std::string& label,
    const std::string& data, const std::vector<Acl>& acl, absl::Duration deadline,
    absl::string_view what) {
  QueueEntry::Config config;
  config.dir = dir;
  config.mode = NodeMode::kWrite;
  config.data = data;
  config.label = label;
  config.acl = acl;
  config.decide = false;
  config.watch_own_node = false;
  std::shared_ptr<QueueEntry> entry = QueueEntry::Make(core, std::move(config));
  auto created = std::make_shared<absl::Notification>();
  auto result = std::make_shared<absl::Status>();
  entry->Start([created, result](absl::Status status) {
    *result = std::move(status);
    created->Notify();
  });
  if (!created->WaitForNotificationWithTimeout(deadline - core->clock().Monotonic())) {
    entry->Abandon(absl::DeadlineExceededError(
        absl::StrCat(what, " ", dir, ": the member's node was not created before the deadline")));
    created->WaitForNotification();  // Abandon completes it unless it just won
  }
  if (result->ok()) return entry;
  // Failed: our node, if any, is being deleted; wait for that.
  auto cleaned = std::make_shared<absl::Notification>();
  entry->WhenCleaned([cleaned] { cleaned->Notify(); });
  cleaned->WaitForNotificationWithTimeout(core->negotiated_timeout());
  return *result;
}

void RemoveMemberNode(const std::shared_ptr<QueueEntry>& entry) {
  // Beyond one session timeout the server ends the session, and the node
  // with it.
  auto removed = std::make_shared<absl::Notification>();
  entry->Release([removed](absl::Status) { removed->Notify(); }, /*caller_waits=*/true);
  removed->WaitForNotificationWithTimeout(entry->core().negotiated_timeout());
}

absl::Status SetMemberData(const std::shared_ptr<QueueEntry>& entry, absl::string_view data,
                           absl::string_view what, absl::string_view lost) {
  const std::string node = entry->node_path();
  if (OnCompletionThread()) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", node, ": called on the ZooKeeper completion thread"));
  }
  auto over = [&](absl::string_view why) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", entry->config().dir, ": ", lost, " (", why, ")"));
  };
  // Sent on the client of the node's own generation: a later session could
  // still write the node of one the library declared LOST, until the server
  // expires it. A request on a lost client fails with a session-lost status.
  SessionCore::Handle handle = entry->core().current();
  if (entry->state() == LockState::kLost || handle.client == nullptr ||
      handle.generation != entry->generation()) {
    return over(absl::StrCat("session ended; node ", node));
  }
  absl::Notification answered;
  absl::Status written;
  handle.client->Set(node, data, -1, [&](absl::StatusOr<Stat> stat) {
    written = stat.status();
    answered.Notify();
  });
  answered.WaitForNotification();  // every completion runs exactly once
  if (IsSessionLost(written)) return over(absl::StrCat("session ended; node ", node));
  if (absl::IsNotFound(written)) return over(absl::StrCat("node ", node, " is gone"));
  return written;
}

}  // namespace internal
}  // namespace zkr
