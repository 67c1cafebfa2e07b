// zkr::Barrier and zkr::DoubleBarrier (the ZooKeeper recipes), on the queue's
// naming and ordering code.
#include "zkrecipes/barrier.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "recipes/lock_queue.h"
#include "recipes/node_wait.h"
#include "recipes/queue_node.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/session_core.h"
#include "src/session_access.h"
#include "src/zk_status.h"

namespace zkr {

using internal::ValidatePath;
using internal::ValidateNodeName;
using internal::NodeName;
using internal::JoinPath;
using internal::NodeMode;
using internal::QueueNode;
using internal::ParseQueueNode;
using internal::ParseQueue;
using internal::NodePrefix;
using internal::NewParticipantId;
namespace {

absl::Time DeadlineAfter(absl::Duration timeout) {
  return timeout == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + timeout;
}

absl::Status IgnoreNotFound(absl::Status status) {
  return absl::IsNotFound(status) ? absl::OkStatus() : status;
}

// Creates the `ready` flag; it is persistent and not sequential, so a create
// whose reply was lost is simply tried again (AlreadyExists is success).
absl::Status CreateReady(Session& session, const std::string& ready, absl::Time deadline) {
  for (;;) {
    absl::Status status = session.Create(ready, "", CreateMode::kPersistent).status();
    if (status.ok() || absl::IsAlreadyExists(status)) return absl::OkStatus();
    if (!internal::IsRetryable(status) || absl::Now() >= deadline) return status;
  }
}

}  // namespace

// ---- Barrier -------------------------------------------------------------------

Barrier::Barrier(Session& session, std::string path) : session_(session), path_(std::move(path)) {}

absl::StatusOr<std::unique_ptr<Barrier>> Barrier::Create(Session& session, std::string path) {
  ZKR_RETURN_IF_ERROR(ValidatePath(path));
  if (path == "/") return absl::InvalidArgumentError("invalid barrier path \"/\"");
  return std::unique_ptr<Barrier>(new Barrier(session, std::move(path)));
}

absl::Status Barrier::Set() {
  CreateOptions options;
  options.make_parents = true;
  absl::Status status = session_.Create(path_, "", CreateMode::kPersistent, options).status();
  return absl::IsAlreadyExists(status) ? absl::OkStatus() : status;
}

absl::Status Barrier::Remove() { return IgnoreNotFound(session_.Delete(path_)); }

absl::Status Barrier::Wait(absl::Duration timeout) {
  return internal::WaitForNode(*internal::CoreOf(session_), path_, /*want_exists=*/false,
                               DeadlineAfter(timeout));
}

absl::StatusOr<bool> Barrier::IsSet() {
  ZKR_ASSIGN_OR_RETURN(std::optional<Stat> stat, session_.Exists(path_));
  return stat.has_value();
}

// ---- DoubleBarrier ---------------------------------------------------------------

DoubleBarrier::DoubleBarrier(Session& session, std::string path, std::string member_id, int count)
    : session_(session), path_(std::move(path)), member_id_(std::move(member_id)), count_(count) {}

DoubleBarrier::~DoubleBarrier() { RemoveNode(); }

absl::StatusOr<std::unique_ptr<DoubleBarrier>> DoubleBarrier::Create(Session& session,
                                                                     std::string path,
                                                                     std::string member_id,
                                                                     int count) {
  ZKR_RETURN_IF_ERROR(ValidatePath(path));
  if (path == "/") return absl::InvalidArgumentError("invalid barrier path \"/\"");
  absl::Status id = ValidateNodeName(member_id);
  if (!id.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid member id: ", id.message()));
  }
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("double barrier ", path, ": count must be at least 1, got ", count));
  }
  return std::unique_ptr<DoubleBarrier>(
      new DoubleBarrier(session, std::move(path), std::move(member_id), count));
}

absl::Status DoubleBarrier::Enter(absl::Duration timeout) {
  if (entered()) {
    return absl::FailedPreconditionError(
        absl::StrCat("enter double barrier ", path_, ": already entered"));
  }
  const absl::Time deadline = DeadlineAfter(timeout);
  const std::string ready = JoinPath(path_, "ready");
  // Our node, through the queue engine's participant: protected create (a
  // create whose reply was lost is found again by its unique id, never made
  // twice: a second node would be a phantom member) and guaranteed delete.
  internal::QueueEntry::Config config;
  config.dir = path_;
  config.mode = NodeMode::kWrite;
  config.data = member_id_;
  config.label = member_id_;
  config.decide = false;
  config.watch_own_node = false;
  std::shared_ptr<internal::QueueEntry> entry =
      internal::QueueEntry::Make(internal::CoreOf(session_), std::move(config));
  auto created = std::make_shared<absl::Notification>();
  auto result = std::make_shared<absl::Status>();
  entry->Start([created, result](absl::Status status) {
    *result = std::move(status);
    created->Notify();
  });
  if (!created->WaitForNotificationWithDeadline(deadline)) {
    entry->Abandon(absl::DeadlineExceededError(absl::StrCat(
        "enter double barrier ", path_, ": the member's node was not created before the deadline")));
    created->WaitForNotification();  // Abandon completes it unless it just won
  }
  absl::Status status = *result;
  if (status.ok()) {
    absl::StatusOr<std::vector<std::string>> children = session_.GetChildren(path_);
    status = children.status();
    if (children.ok() && static_cast<int>(ParseQueue(*children, 0).size()) >= count_) {
      // The last to arrive opens the barrier for everyone.
      status = CreateReady(session_, ready, deadline);
    } else if (children.ok()) {
      status = internal::WaitForNode(*internal::CoreOf(session_), ready, /*want_exists=*/true,
                                     deadline);
    }
    if (status.ok()) {
      entry_ = std::move(entry);
      node_ = std::string(NodeName(entry_->node_path()));
      return status;
    }
    entry_ = std::move(entry);
    RemoveNode();
    return status;
  }
  // Failed before: our node, if any, is being deleted; wait for that as
  // RemoveNode() does.
  auto cleaned = std::make_shared<absl::Notification>();
  entry->WhenCleaned([cleaned] { cleaned->Notify(); });
  cleaned->WaitForNotificationWithTimeout(internal::CoreOf(session_)->negotiated_timeout());
  return status;
}

void DoubleBarrier::RemoveNode() {
  // The locks' guarantee: the delete is retried until the node is gone or its
  // session is; we wait for that up to one session timeout (beyond it the
  // server ends the session, and the node with it).
  if (entry_ == nullptr) return;
  auto removed = std::make_shared<absl::Notification>();
  entry_->Release([removed](absl::Status) { removed->Notify(); }, /*caller_waits=*/true);
  removed->WaitForNotificationWithTimeout(internal::CoreOf(session_)->negotiated_timeout());
  entry_ = nullptr;
}

absl::Status DoubleBarrier::Leave(absl::Duration timeout) {
  if (!entered()) {
    return absl::FailedPreconditionError(
        absl::StrCat("leave double barrier ", path_, ": not entered"));
  }
  absl::Status status = LeaveUntil(DeadlineAfter(timeout));
  RemoveNode();  // already gone after a normal Leave: then at once
  node_.clear();
  return status;
}

absl::Status DoubleBarrier::LeaveUntil(absl::Time deadline) {
  const std::string mine = JoinPath(path_, node_);
  const int32_t my_sequence = ParseQueueNode(node_)->sequence;
  const std::string ready = JoinPath(path_, "ready");
  for (;;) {
    absl::StatusOr<std::vector<std::string>> children = session_.GetChildren(path_);
    // The directory is a container: once empty the server may reap it.
    if (absl::IsNotFound(children.status())) return absl::OkStatus();
    if (!children.ok()) return children.status();
    std::vector<QueueNode> members = ParseQueue(*children, my_sequence);
    if (members.empty()) {
      // Everybody has left, some maybe by session expiry (then nobody was
      // "the last one out"): whoever finds the barrier empty removes the flag.
      if (std::find(children->begin(), children->end(), "ready") == children->end()) {
        return absl::OkStatus();
      }
      return IgnoreNotFound(session_.Delete(ready));
    }
    if (members.size() == 1 && members.front().name == node_) {
      // The last one out also removes the ready flag (the directory, a
      // container, then goes by itself).
      ZKR_RETURN_IF_ERROR(IgnoreNotFound(session_.Delete(mine)));
      return IgnoreNotFound(session_.Delete(ready));
    }
    // The lowest waits for the highest; everyone else leaves and waits for
    // the lowest. Nobody watches the directory.
    const std::string lowest = JoinPath(path_, members.front().name);
    const std::string highest = JoinPath(path_, members.back().name);
    if (lowest == mine) {
      ZKR_RETURN_IF_ERROR(
          internal::WaitForNode(*internal::CoreOf(session_), highest, /*want_exists=*/false, deadline));
    } else {
      ZKR_RETURN_IF_ERROR(IgnoreNotFound(session_.Delete(mine)));
      ZKR_RETURN_IF_ERROR(
          internal::WaitForNode(*internal::CoreOf(session_), lowest, /*want_exists=*/false, deadline));
    }
  }
}

}  // namespace zkr
