// zkr::Barrier and zkr::DoubleBarrier (the ZooKeeper recipes), on the queue's
// naming and ordering code.
#include "zkrecipes/barrier.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "recipes/lock_queue.h"
#include "recipes/member_node.h"
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
  // Our node: protected create and guaranteed delete (recipes/member_node.h).
  absl::StatusOr<std::shared_ptr<internal::QueueEntry>> entry =
      internal::CreateMemberNode(internal::CoreOf(session_), path_, member_id_, member_id_, {},
                                 deadline, "enter double barrier");
  if (!entry.ok()) return entry.status();
  absl::StatusOr<std::vector<std::string>> children = session_.GetChildren(path_);
  absl::Status status = children.status();
  if (children.ok() && static_cast<int>(ParseQueue(*children, 0).size()) >= count_) {
    // The last to arrive opens the barrier for everyone.
    status = CreateReady(session_, ready, deadline);
  } else if (children.ok()) {
    status = internal::WaitForNode(*internal::CoreOf(session_), ready, /*want_exists=*/true,
                                   deadline);
  }
  entry_ = *std::move(entry);
  if (status.ok()) {
    node_ = std::string(NodeName(entry_->node_path()));
    return status;
  }
  RemoveNode();
  return status;
}

void DoubleBarrier::RemoveNode() {
  if (entry_ == nullptr) return;
  internal::RemoveMemberNode(entry_);
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
