#include "recipes/member_node.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

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

}  // namespace internal
}  // namespace zkr
