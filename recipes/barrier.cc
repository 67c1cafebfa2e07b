// zkr::Barrier and zkr::DoubleBarrier (the ZooKeeper recipes), on the queue's
// naming and ordering code.
#include "zkrecipes/barrier.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "recipes/barrier_member.h"
#include "recipes/member_node.h"
#include "recipes/node_wait.h"
#include "recipes/queue_node.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/retry.h"
#include "src/session_core.h"
#include "src/session_access.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {

using internal::ValidatePath;
using internal::NodeName;
using internal::JoinPath;
using internal::NodeMode;
using internal::QueueNode;
using internal::ParseQueueNode;
using internal::ParseQueue;
using internal::NodePrefix;
using internal::NewParticipantId;
// Every retry below is the retry primitive's blocking loop (src/retry.h),
// its RetryPlan written {operation, path, generation, deadline}: generation
// 0 is whichever session is current (a leaving member may have lost its node
// already).
using internal::RetryBlocking;
using internal::SessionCore;
namespace {

// A deadline on the session's monotonic clock (an infinite timeout stays
// infinite): stepping the wall clock neither stretches nor cuts a wait.
absl::Duration DeadlineAfter(Session& session, absl::Duration timeout) {
  return internal::CoreOf(session)->clock().Monotonic() + timeout;
}

absl::Status IgnoreNotFound(absl::Status status) {
  return absl::IsNotFound(status) ? absl::OkStatus() : status;
}

// Creates the `ready` flag on our member node's session (its generation):
// persistent and not sequential, so a create whose reply was lost is simply
// sent again (AlreadyExists is success), once connected.
absl::Status CreateReady(Session& session, uint64_t generation, const std::string& ready,
                         absl::Duration deadline) {
  SessionCore& core = *internal::CoreOf(session);
  return RetryBlocking(core, {"create", ready, generation, deadline}, [&] {
    SessionCore::Handle handle = core.current();
    if (handle.generation != generation || handle.client == nullptr) {
      return internal::SessionLostStatus("create", ready);  // our node went with it
    }
    absl::Notification replied;
    absl::Status status;
    handle.client->Create(ready, "", CreateMode::kPersistent, core.default_acl(),
                          [&](absl::StatusOr<CreateResult> created) {
                            status = created.status();
                            replied.Notify();
                          });
    replied.WaitForNotification();  // every completion runs exactly once
    return absl::IsAlreadyExists(status) ? absl::OkStatus() : status;
  });
}

// What the data of `nodes` (children of `dir`, in queue order) says: the
// first that is not a double-barrier member — a lock's, a semaphore's, a
// candidate's or a group member's participant, named alike: only its data
// tells — and how many members are still there. Read in one round trip,
// retried on our member node's session (`generation`) after a lost
// connection.
struct Membership {
  std::string foreign;  // "" if every node still there is a member
  int members = 0;
};
absl::StatusOr<Membership> ReadMembership(Session& session, uint64_t generation,
                                          const std::string& dir,
                                          const std::vector<QueueNode>& nodes,
                                          absl::Duration deadline) {
  if (nodes.empty()) return Membership();
  SessionCore& core = *internal::CoreOf(session);
  return RetryBlocking(core, {"enter double barrier: read", dir, generation, deadline},
                       [&]() -> absl::StatusOr<Membership> {
    SessionCore::Handle handle = core.current();
    if (handle.generation != generation || handle.client == nullptr) {
      return internal::SessionLostStatus("enter double barrier", dir);  // our node went too
    }
    std::vector<absl::StatusOr<internal::NodeData>> reads(nodes.size(), absl::UnknownError(""));
    absl::BlockingCounter left(static_cast<int>(nodes.size()));
    for (size_t i = 0; i < nodes.size(); ++i) {
      handle.client->Get(JoinPath(dir, nodes[i].name), nullptr,
                         [&reads, &left, i](absl::StatusOr<internal::NodeData> read) {
                           reads[i] = std::move(read);
                           left.DecrementCount();
                         });
    }
    left.Wait();  // every completion runs exactly once
    Membership membership;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (absl::IsNotFound(reads[i].status())) continue;  // gone (a member that gave up)
      // A node we may not read is no member we can count (members' nodes
      // carry the session's default ACL): another recipe's, as far as we know.
      if (absl::IsPermissionDenied(reads[i].status())) {
        membership.foreign = nodes[i].name;
        break;
      }
      if (!reads[i].ok()) return reads[i].status();
      std::string id;
      int count = 0;
      if (!internal::ParseBarrierMemberData(reads[i]->data, &id, &count)) {
        membership.foreign = nodes[i].name;
        break;
      }
      ++membership.members;
    }
    return membership;
  });
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
                               DeadlineAfter(session_, timeout));
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
  // As an election's or a group's: the id is stored in the member's node;
  // its name carries a copy made safe (NewParticipantId).
  ZKR_ASSIGN_OR_RETURN(member_id, internal::ParticipantLabel(std::move(member_id), "barrier member"));
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
  const absl::Duration deadline = DeadlineAfter(session_, timeout);
  const std::string ready = JoinPath(path_, "ready");
  // Our node: protected create and guaranteed delete (recipes/member_node.h).
  absl::StatusOr<std::shared_ptr<internal::MemberNode>> entry =
      internal::CreateMemberNode(internal::CoreOf(session_), path_, member_id_,
                                 internal::BarrierMemberData(member_id_, count_), {},
                                 deadline, "enter double barrier");
  if (!entry.ok()) return entry.status();
  const uint64_t generation = (*entry)->generation();
  absl::StatusOr<std::vector<std::string>> children =
      RetryBlocking(*internal::CoreOf(session_),
                    {"enter double barrier", path_, generation, deadline},
                    [&] { return session_.GetChildren(path_); });
  absl::Status status = children.status();
  bool last = false;  // we are the count_-th member: we open the barrier
  if (children.ok()) {
    std::vector<QueueNode> others;
    const std::string mine(NodeName((*entry)->node_path()));
    for (QueueNode& node : ParseQueue(*children, 0)) {
      if (node.name != mine) others.push_back(std::move(node));
    }
    // Another recipe's participant named like a member must not count. The
    // earliest node is checked on every entry (a path a lock or semaphore
    // holds is refused at once); every other node only by the member that
    // would open the barrier (one read each per round, in one round trip).
    last = static_cast<int>(others.size()) + 1 >= count_;
    if (!last && others.size() > 1) others.resize(1);
    absl::StatusOr<Membership> read =
        ReadMembership(session_, generation, path_, others, deadline);
    if (!read.ok()) {
      status = read.status();
    } else if (!read->foreign.empty()) {
      status = absl::FailedPreconditionError(absl::StrCat(
          "enter double barrier ", path_, ": ", read->foreign,
          " there is another recipe's participant (a lock's, a semaphore's, an election's or a "
          "group's); a double barrier cannot share its path"));
    } else if (last && read->members + 1 < count_) {
      last = false;  // a member gave up since the listing: wait for the next
    }
  }
  if (status.ok() && last) {
    // The last to arrive opens the barrier for everyone.
    status = CreateReady(session_, generation, ready, deadline);
  } else if (status.ok()) {
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
  absl::Status status = LeaveUntil(DeadlineAfter(session_, timeout));
  RemoveNode();  // already gone after a normal Leave: then at once
  node_.clear();
  return status;
}

absl::Status DoubleBarrier::LeaveUntil(absl::Duration deadline) {
  const std::string mine = JoinPath(path_, node_);
  const int32_t my_sequence = ParseQueueNode(node_)->sequence;
  const std::string ready = JoinPath(path_, "ready");
  // Our node may be gone with a lost session (that counts as having left):
  // retried on whichever session is current.
  auto delete_node = [&](const std::string& node) {
    return RetryBlocking(*internal::CoreOf(session_),
                         {"leave double barrier: delete", node, /*generation=*/0, deadline},
                         [&] { return IgnoreNotFound(session_.Delete(node)); });
  };
  for (;;) {
    absl::StatusOr<std::vector<std::string>> children =
        RetryBlocking(*internal::CoreOf(session_),
                      {"leave double barrier", path_, /*generation=*/0, deadline},
                      [&] { return session_.GetChildren(path_); });
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
      return delete_node(ready);
    }
    if (members.size() == 1 && members.front().name == node_) {
      // The last one out also removes the ready flag (the directory, a
      // container, then goes by itself).
      ZKR_RETURN_IF_ERROR(delete_node(mine));
      return delete_node(ready);
    }
    // The lowest waits for the highest; everyone else leaves and waits for
    // the lowest. Nobody watches the directory.
    const std::string lowest = JoinPath(path_, members.front().name);
    const std::string highest = JoinPath(path_, members.back().name);
    if (lowest == mine) {
      ZKR_RETURN_IF_ERROR(
          internal::WaitForNode(*internal::CoreOf(session_), highest, /*want_exists=*/false, deadline));
    } else {
      ZKR_RETURN_IF_ERROR(delete_node(mine));
      ZKR_RETURN_IF_ERROR(
          internal::WaitForNode(*internal::CoreOf(session_), lowest, /*want_exists=*/false, deadline));
    }
  }
}

}  // namespace zkr
