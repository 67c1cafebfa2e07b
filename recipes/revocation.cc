#include "zkrecipes/revocation.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "recipes/revoke_watch.h"
#include "src/macros.h"
#include "src/paths.h"
#include "zkrecipes/inspect.h"

namespace zkr {

using internal::JoinPath;

absl::string_view RevokeHowName(RevokeOutcome::How how) {
  return how == RevokeOutcome::How::kForced ? "forced" : "released";
}

namespace {

// Waits until `path` is gone or `deadline` passes; true if gone. An exists
// watch, not polling: the watch's callback notifies.
absl::StatusOr<bool> WaitUntilGone(Session& session, const std::string& path,
                                   absl::Time deadline) {
  for (;;) {
    auto gone = std::make_shared<absl::Notification>();
    ZKR_ASSIGN_OR_RETURN(std::optional<Stat> stat,
                         session.ExistsAndWatch(path, [gone](const WatchEvent&) {
                           if (!gone->HasBeenNotified()) gone->Notify();
                         }));
    if (!stat.has_value()) return true;
    if (!gone->WaitForNotificationWithDeadline(deadline)) return false;
    // Changed (not necessarily deleted): look again.
  }
}

}  // namespace

absl::StatusOr<std::vector<RevokeOutcome>> Revoke(Session& session, const std::string& path,
                                                  RevokeOptions options) {
  ZKR_RETURN_IF_ERROR(internal::ValidatePath(path));
  std::vector<std::string> targets;
  if (!options.node.empty()) {
    ZKR_RETURN_IF_ERROR(internal::ValidateNodeName(options.node));
    ZKR_ASSIGN_OR_RETURN(std::optional<Stat> stat, session.Exists(JoinPath(path, options.node)));
    if (!stat.has_value()) {
      return absl::NotFoundError(absl::StrCat("revoke ", path, ": no node ", options.node));
    }
    targets.push_back(options.node);
  } else {
    ZKR_ASSIGN_OR_RETURN(std::vector<QueueEntryInfo> queue, InspectQueue(session, path));
    for (const QueueEntryInfo& entry : queue) {
      if (entry.holds) targets.push_back(entry.name);
    }
  }
  // Ask every target first, so that all have the whole grace period.
  std::vector<std::string> requests;
  for (const std::string& node : targets) {
    const std::string request = internal::RevokeRequestPath(JoinPath(path, node));
    absl::StatusOr<CreateResult> created =
        session.Create(request, options.reason, CreateMode::kEphemeral);
    if (created.ok()) {
      requests.push_back(request);
    } else if (!absl::IsAlreadyExists(created.status()) && !absl::IsNotFound(created.status())) {
      return created.status();  // NotFound: the directory went with its last holder
    }
  }
  const absl::Time deadline = absl::Now() + options.grace;
  std::vector<RevokeOutcome> outcomes;
  absl::Status failed;
  for (const std::string& node : targets) {
    const std::string node_path = JoinPath(path, node);
    absl::StatusOr<bool> gone = WaitUntilGone(session, node_path, deadline);
    if (!gone.ok()) {
      failed = gone.status();
      break;
    }
    RevokeOutcome outcome{node, RevokeOutcome::How::kReleased};
    if (!*gone) {
      absl::Status deleted = session.Delete(node_path);
      if (deleted.ok()) outcome.how = RevokeOutcome::How::kForced;
      else if (!absl::IsNotFound(deleted)) failed = deleted;  // NotFound: released just now
    }
    if (!failed.ok()) break;
    outcomes.push_back(std::move(outcome));
  }
  for (const std::string& request : requests) (void)session.Delete(request);
  if (!failed.ok()) return failed;
  return outcomes;
}

}  // namespace zkr
