#include "zkrecipes/group_member.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "recipes/candidate_data.h"
#include "recipes/follow_loop.h"
#include "recipes/member_node.h"
#include "recipes/queue_node.h"
#include "src/callback_gate.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/session_access.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {
namespace {

// The members among `children`, in join order (sequence order relative to
// the first).
std::vector<QueueNode> MemberNodes(const std::vector<std::string>& children) {
  std::vector<QueueNode> nodes = ParseQueue(children, 0);
  if (!nodes.empty()) nodes = ParseQueue(children, nodes.front().sequence);
  return nodes;
}

GroupMemberInfo MemberOf(const QueueNode& node, const NodeData& read) {
  GroupMemberInfo member;
  ParseCandidateNodeData(read.data, &member.id, &member.data);
  member.node = node.name;
  member.session_id = read.stat.ephemeral_owner;
  return member;
}

}  // namespace

// GroupWatch's loop (recipes/follow_loop.h), on the completion thread: list
// the group with a child watch, read every member, report the list; a
// missing group gets an exists watch instead. Reads of an older listing
// still in flight when a newer one starts are not reported.
class MembershipCore : public FollowLoop {
 public:
  MembershipCore(std::shared_ptr<SessionCore> core, std::string path, GroupWatch::OnChange on_change)
      : FollowLoop(std::move(core), "group watch", std::move(path)),
        on_change_(std::move(on_change)) {}

  void Shutdown() {
    listener_gate_->Close();
    Stop();
  }

 private:
  std::shared_ptr<MembershipCore> Self() {
    return std::static_pointer_cast<MembershipCore>(shared_from_this());
  }

  void Refresh() override {
    SessionCore::Handle handle = SessionHandle();
    if (handle.client == nullptr) return;
    const uint64_t round = ++round_;
    const uint64_t generation = handle.generation;
    std::weak_ptr<MembershipCore> weak = Self();
    KeepWatch(generation,
              handle.client->GetChildren(
                  path(), Again(),
                  [weak, generation, round](absl::StatusOr<ChildList> children) {
                    if (auto self = weak.lock()) {
                      self->OnListing(generation, round, AsVector(std::move(children)));
                    }
                  }));
  }

  void OnListing(uint64_t generation, uint64_t round,
                 absl::StatusOr<std::vector<std::string>> children) {
    // A watch refused for room is tried again too (paced) until room frees.
    if (Retried(children.status())) return RetryWhenConnected(generation, children.status());
    std::shared_ptr<ZkClient> client = Client(generation);
    if (client == nullptr) return;
    std::weak_ptr<MembershipCore> weak = Self();
    if (absl::IsNotFound(children.status())) {
      Report(round, {});
      // No group yet (a listing sets no watch then): watch for its creation.
      return KeepWatch(generation, client->Exists(path(), Again(), [weak, generation](absl::StatusOr<Stat> stat) {
        auto self = weak.lock();
        if (self != nullptr && stat.ok()) self->RefreshIfLive();  // created meanwhile
        if (self != nullptr && Retried(stat.status())) self->RetryWhenConnected(generation, stat.status());
      }));
    }
    if (!children.ok()) return;
    // Read every member, then report them all at once, in join order.
    auto gather = std::make_shared<Gather>();
    gather->nodes = MemberNodes(*children);
    gather->reads.resize(gather->nodes.size(), absl::UnknownError("not read"));
    gather->left = gather->nodes.size();
    if (gather->nodes.empty()) return Report(round, {});
    for (size_t i = 0; i < gather->nodes.size(); ++i) {
      client->Get(JoinPath(path(), gather->nodes[i].name), nullptr,
                  [weak, gather, i, generation, round](absl::StatusOr<NodeData> read) {
                    gather->reads[i] = std::move(read);
                    if (--gather->left != 0) return;  // the last reply reports
                    if (auto self = weak.lock()) self->OnMembersRead(generation, round, *gather);
                  });
    }
  }

  // One listing's member reads.
  struct Gather {
    std::vector<QueueNode> nodes;
    std::vector<absl::StatusOr<NodeData>> reads;  // each written by its own reply
    std::atomic<size_t> left{0};                  // replies still to come
  };

  void OnMembersRead(uint64_t generation, uint64_t round, const Gather& gather) {
    std::vector<GroupMemberInfo> members;
    for (size_t i = 0; i < gather.nodes.size(); ++i) {
      const absl::StatusOr<NodeData>& read = gather.reads[i];
      // A read lost with the connection says nothing about the member: read
      // them all again once connected (the listing's watch may not see a
      // change to correct a list reported without it).
      if (IsRetryable(read.status())) return RetryWhenConnected(generation, read.status());
      // Nor does a read refused because the session is lost (which it may
      // not have heard yet): the new session's listing reports.
      if (zkr::IsSessionLost(read.status())) return;
      // A member gone meanwhile is left out (its leave is a change of its
      // own, reported next).
      if (read.ok()) members.push_back(MemberOf(gather.nodes[i], *read));
    }
    // The session ended meanwhile: the new one's listing reports.
    if (Client(generation) == nullptr) return;
    Report(round, std::move(members));
  }

  void Report(uint64_t round, std::vector<GroupMemberInfo> members) ABSL_LOCKS_EXCLUDED(report_mu_) {
    if (round != round_.load() || stopped()) return;  // a newer listing is on its way
    {
      // Only a change is reported: a listing again (the first one's exists
      // watch firing, a new session's look) may find the same list.
      absl::MutexLock lock(&report_mu_);
      if (reported_.has_value() && SameMembers(*reported_, members)) return;
      reported_ = members;
    }
    Deliver(core().dispatcher(), listener_gate_,
                [listener = on_change_, members = std::move(members)] { listener(members); });
  }

  static bool SameMembers(const std::vector<GroupMemberInfo>& a,
                          const std::vector<GroupMemberInfo>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const GroupMemberInfo& x, const GroupMemberInfo& y) {
                        return x.id == y.id && x.data == y.data && x.node == y.node &&
                               x.session_id == y.session_id;
                      });
  }

  const GroupWatch::OnChange on_change_;
  std::atomic<uint64_t> round_{0};
  absl::Mutex report_mu_;
  // The list last reported (none before the first).
  std::optional<std::vector<GroupMemberInfo>> reported_ ABSL_GUARDED_BY(report_mu_);
  // Closed by Shutdown(): deliveries already posted are dropped.
  const std::shared_ptr<CallbackGate> listener_gate_ = std::make_shared<CallbackGate>();
};

}  // namespace internal

using internal::CoreOf;

absl::StatusOr<std::vector<GroupMemberInfo>> ListGroup(Session& session, const std::string& path) {
  ZKR_RETURN_IF_ERROR(internal::ValidatePath(path));
  absl::StatusOr<std::vector<std::string>> children = session.GetChildren(path);
  if (absl::IsNotFound(children.status())) return std::vector<GroupMemberInfo>();
  if (!children.ok()) return children.status();
  std::vector<GroupMemberInfo> members;
  for (const internal::QueueNode& node : internal::MemberNodes(*children)) {
    internal::NodeData read;
    absl::StatusOr<std::string> data = session.Get(internal::JoinPath(path, node.name), &read.stat);
    if (absl::IsNotFound(data.status())) continue;  // left meanwhile
    if (!data.ok()) return data.status();
    read.data = *std::move(data);
    members.push_back(internal::MemberOf(node, read));
  }
  return members;
}

// ---- GroupMember ------------------------------------------------------------

GroupMember::GroupMember(Session& session, std::string path, GroupOptions options)
    : session_(session), path_(std::move(path)), options_(std::move(options)) {
  absl::MutexLock lock(&mu_);
  data_ = options_.data;
}

GroupMember::~GroupMember() { (void)Leave(); }

absl::StatusOr<std::unique_ptr<GroupMember>> GroupMember::Create(Session& session,
                                                                 std::string path,
                                                                 GroupOptions options) {
  ZKR_RETURN_IF_ERROR(internal::ValidatePath(path));
  if (path == "/") return absl::InvalidArgumentError("invalid group path \"/\"");
  ZKR_ASSIGN_OR_RETURN(options.id, internal::ParticipantLabel(std::move(options.id), "group member"));
  ZKR_RETURN_IF_ERROR(internal::CheckCandidateData(*internal::CoreOf(session),
                                                  "member data for group", path, options.id,
                                                  options.data, &options.acl));
  return std::unique_ptr<GroupMember>(new GroupMember(session, std::move(path), std::move(options)));
}

absl::Status GroupMember::Join(absl::Duration timeout) {
  const std::shared_ptr<internal::SessionCore> core = CoreOf(session_);
  const absl::Duration deadline = core->clock().Monotonic() + timeout;  // infinite stays so
  std::string data;
  {
    absl::MutexLock lock(&mu_);
    // One node per member: refused while another Join() is creating it, and
    // while the node may exist (held, or suspended: it may come back).
    if (joining_) {
      return absl::FailedPreconditionError(
          absl::StrCat("join group ", path_, ": another Join() is in progress"));
    }
    if (entry_ != nullptr && entry_->state() != LockState::kLost) {
      return absl::FailedPreconditionError(absl::StrCat("join group ", path_, ": already joined"));
    }
    joining_ = true;
    data = data_;
  }
  absl::StatusOr<std::shared_ptr<internal::MemberNode>> entry = internal::CreateMemberNode(
      core, path_, options_.id, internal::CandidateNodeData(options_.id, data), options_.acl,
      deadline, "join group");
  absl::MutexLock lock(&mu_);
  joining_ = false;
  if (!entry.ok()) return entry.status();
  entry_ = *std::move(entry);
  return absl::OkStatus();
}

absl::Status GroupMember::SetData(std::string data) {
  // Refused before it is kept: data that cannot be written would make every
  // later Join() fail.
  ZKR_RETURN_IF_ERROR(internal::CheckCandidateData(*CoreOf(session_), "set data in group", path_,
                                                  options_.id, data));
  std::shared_ptr<internal::MemberNode> entry;
  {
    absl::MutexLock lock(&mu_);
    if (entry_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("set data in group ", path_, ": not joined"));
    }
    entry = entry_;
  }
  ZKR_RETURN_IF_ERROR(internal::SetMemberData(entry, internal::CandidateNodeData(options_.id, data),
                                              "set data in group", "not a member any more"));
  // Kept for the next Join() only once written: a refused SetData changes
  // nothing.
  absl::MutexLock lock(&mu_);
  data_ = std::move(data);
  return absl::OkStatus();
}

absl::Status GroupMember::Leave() {
  std::shared_ptr<internal::MemberNode> entry;
  {
    absl::MutexLock lock(&mu_);
    entry = std::move(entry_);
  }
  if (entry == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("leave group ", path_, ": not joined"));
  }
  internal::RemoveMemberNode(entry);
  return absl::OkStatus();
}

bool GroupMember::joined() const {
  absl::MutexLock lock(&mu_);
  return entry_ != nullptr && entry_->state() == LockState::kHeld;
}

std::string GroupMember::node_path() const {
  absl::MutexLock lock(&mu_);
  return entry_ == nullptr ? "" : entry_->node_path();
}

// ---- GroupWatch -------------------------------------------------------------

GroupWatch::GroupWatch(std::shared_ptr<internal::MembershipCore> core) : core_(std::move(core)) {}
GroupWatch::~GroupWatch() { core_->Shutdown(); }

absl::StatusOr<std::unique_ptr<GroupWatch>> GroupWatch::Create(Session& session, std::string path,
                                                               OnChange on_change) {
  ZKR_RETURN_IF_ERROR(internal::ValidatePath(path));
  if (!on_change) return absl::InvalidArgumentError("group watch " + path + ": no on_change");
  auto core = std::make_shared<internal::MembershipCore>(CoreOf(session), std::move(path),
                                                         std::move(on_change));
  ZKR_RETURN_IF_ERROR(core->Start());
  return std::unique_ptr<GroupWatch>(new GroupWatch(std::move(core)));
}

}  // namespace zkr
