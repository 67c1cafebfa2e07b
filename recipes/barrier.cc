// zkr::Barrier and zkr::DoubleBarrier (the ZooKeeper recipes), on the queue's
// naming and ordering code.
#include "zkrecipes/barrier.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "recipes/node_wait.h"
#include "recipes/queue_node.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/session_core.h"
#include "src/session_access.h"

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

// Creates a member's node `dir`/`prefix`<seq> and returns its name. A create
// whose reply was lost may have been applied all the same: the node is then
// found again by its prefix (unique: it carries a random part), and created
// again only once a listing shows it is not there — a second node would be a
// phantom member counting toward the barrier's count. Gives up at `deadline`
// (Unavailable); then `*unknown` says whether a node may exist.
absl::StatusOr<std::string> CreateMemberNode(Session& session, const std::string& dir,
                                             const std::string& prefix, const std::string& data,
                                             absl::Time deadline, bool* unknown) {
  CreateOptions parents;
  parents.make_parents = true;
  for (;;) {
    absl::StatusOr<CreateResult> created = session.Create(
        JoinPath(dir, prefix), data, CreateMode::kEphemeralSequential, parents);
    if (created.ok()) return std::string(NodeName(created->path));
    if (!absl::IsUnavailable(created.status())) return created.status();
    *unknown = true;
    // Applied or not? Only a listing can say (read with retries).
    for (;;) {
      absl::StatusOr<std::vector<std::string>> children = session.GetChildren(dir);
      if (children.ok()) {
        for (const std::string& child : *children) {
          if (absl::StartsWith(child, prefix)) return child;
        }
        break;  // not applied: create again
      }
      if (absl::IsNotFound(children.status())) break;  // no directory: nothing applied
      if (!absl::IsUnavailable(children.status())) return children.status();
      if (absl::Now() >= deadline) {
        return absl::UnavailableError(absl::StrCat(
            "enter double barrier ", dir, ": the member's create lost its reply and the "
            "lookup of its node did not complete before the deadline"));
      }
    }
    *unknown = false;
    if (absl::Now() >= deadline) return created.status();
  }
}

// Creates the `ready` flag; it is persistent and not sequential, so a create
// whose reply was lost is simply tried again (AlreadyExists is success).
absl::Status CreateReady(Session& session, const std::string& ready, absl::Time deadline) {
  for (;;) {
    absl::Status status = session.Create(ready, "", CreateMode::kPersistent).status();
    if (status.ok() || absl::IsAlreadyExists(status)) return absl::OkStatus();
    if (!absl::IsUnavailable(status) || absl::Now() >= deadline) return status;
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

DoubleBarrier::~DoubleBarrier() {
  if (entered()) RemoveNode(generation_, node_, "");
}

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
  const std::string prefix = NodePrefix(NewParticipantId(member_id_), NodeMode::kWrite);
  internal::SessionCore& core = *internal::CoreOf(session_);
  const uint64_t generation = core.generation();
  bool unknown = false;
  absl::StatusOr<std::string> node =
      CreateMemberNode(session_, path_, prefix, member_id_, deadline, &unknown);
  absl::Status status = node.status();
  if (node.ok()) {
    absl::StatusOr<std::vector<std::string>> children = session_.GetChildren(path_);
    status = children.status();
    if (children.ok() && static_cast<int>(ParseQueue(*children, 0).size()) >= count_) {
      // The last to arrive opens the barrier for everyone.
      status = CreateReady(session_, ready, deadline);
    } else if (children.ok()) {
      status = internal::WaitForNode(core, ready, /*want_exists=*/true, deadline);
    }
    if (status.ok()) {
      node_ = *node;
      generation_ = generation;
      return status;
    }
  }
  // Failed: our node, if any, must not count toward anyone's barrier.
  if (node.ok() || unknown) RemoveNode(generation, node.ok() ? *node : "", prefix);
  return status;
}

void DoubleBarrier::RemoveNode(uint64_t generation, const std::string& name,
                               const std::string& prefix) {
  // The locks' guarantee: the delete is retried until the node is gone or its
  // session is; we wait for that up to one session timeout (beyond it the
  // server ends the session, and the node with it).
  internal::SessionCore& core = *internal::CoreOf(session_);
  auto removed = std::make_shared<absl::Notification>();
  auto notify = [removed](absl::Status) { removed->Notify(); };
  if (!name.empty()) {
    core.DeleteGuaranteed(generation, JoinPath(path_, name), notify);
  } else {
    core.DeleteChildGuaranteed(generation, path_, prefix, notify);
  }
  removed->WaitForNotificationWithTimeout(core.negotiated_timeout());
}

absl::Status DoubleBarrier::Leave(absl::Duration timeout) {
  if (!entered()) {
    return absl::FailedPreconditionError(
        absl::StrCat("leave double barrier ", path_, ": not entered"));
  }
  absl::Status status = LeaveUntil(DeadlineAfter(timeout));
  if (!status.ok()) RemoveNode(generation_, node_, "");
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
