// MemberNode: a member's node — one Participant (recipes/participant.h)
// made without the queue engine, since a member decides nothing: the
// participant's protected create (a create whose reply was lost is found
// again by its unique id, never made twice: a second node would be a
// phantom member), its held state (HoldMonitor, no own-node watch:
// SUSPENDED while disconnected or past the lease, LOST with its session,
// re-checked after a reconnect) and its guaranteed delete. A double-barrier
// member and a group member are one each.
//
// The create runs the participant's steps (directory, create, recovery,
// token) as the queue engine does, one request at a time, each stamped with
// an epoch; a reply lost with the connection sends its step again once the
// generation is connected (src/retry.h; the create's: the recovery). A
// member started between generations waits for the next CONNECTED.
//
// Threads: CreateMemberNode, RemoveMemberNode and SetMemberData block (any
// thread but the ZooKeeper client's); the steps run on the completion
// thread. Internally synchronised.
#ifndef ZKRECIPES_RECIPES_MEMBER_NODE_H_
#define ZKRECIPES_RECIPES_MEMBER_NODE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "recipes/hold_monitor.h"
#include "recipes/participant.h"
#include "src/session_core.h"

namespace zkr {
namespace internal {

class MemberNode;

// Creates the member node `<label>_<pid>_<random>-W-<seq>` under `dir` with
// `data` by `deadline`, a time on the session's monotonic clock
// (core->clock().Monotonic(); InfiniteDuration() for none). On failure (its
// node, if any, deleted — waited for up to one session timeout) returns
// why; `what` names the act in errors.
absl::StatusOr<std::shared_ptr<MemberNode>> CreateMemberNode(
    const std::shared_ptr<SessionCore>& core, const std::string& dir, const std::string& label,
    const std::string& data, const std::vector<Acl>& acl, absl::Duration deadline,
    absl::string_view what);

// Deletes it (retried after reconnects until it is gone or its session is),
// waiting for that up to one session timeout.
void RemoveMemberNode(const std::shared_ptr<MemberNode>& node);

// Writes `data` to a node (a group member's or an election candidate's),
// on the node's own session only: once that session is over (LOST, even
// before the server expires it and while a new session is connected) or
// the node is gone, FailedPrecondition ("<what> <dir>: <lost> (...)") and
// nothing is written. Otherwise the write's status (Unavailable: outcome
// unknown). The caller checks the size first (CheckCandidateData).
absl::Status SetMemberData(const std::shared_ptr<OwnedNode>& node, absl::string_view data,
                           absl::string_view what, absl::string_view lost);

class MemberNode : public OwnedNode, public std::enable_shared_from_this<MemberNode> {
 public:
  ~MemberNode() override;

  SessionCore& core() const override { return *core_; }
  const std::string& dir() const override { return participant_.dir(); }
  std::string node_path() const override { return participant_.node_path(); }
  uint64_t generation() const override ABSL_LOCKS_EXCLUDED(mu_);
  // HELD, SUSPENDED or LOST once created; RELEASED before and after.
  LockState state() const override { return monitor_->state(); }

 private:
  friend absl::StatusOr<std::shared_ptr<MemberNode>> CreateMemberNode(
      const std::shared_ptr<SessionCore>&, const std::string&, const std::string&,
      const std::string&, const std::vector<Acl>&, absl::Duration, absl::string_view);
  friend void RemoveMemberNode(const std::shared_ptr<MemberNode>&);
  using CreateStep = Participant::CreateStep;
  using Done = std::function<void(absl::Status)>;
  enum class Phase { kIdle, kCreating, kHeld, kReleasing, kCleaning, kDone };

  // `what`: the caller's operation, for messages ("join group").
  MemberNode(std::shared_ptr<SessionCore> core, const std::string& dir, const std::string& label,
             std::string data, std::vector<Acl> acl, absl::string_view what);
  // done(OK) once the node exists, or done(why) once the create failed or
  // was abandoned; exactly once.
  void Start(Done done) ABSL_LOCKS_EXCLUDED(mu_);
  // Gives up a create not yet done: done(why), and whatever may have been
  // created is deleted. False, with no effect, once created.
  bool Abandon(absl::Status why) ABSL_LOCKS_EXCLUDED(mu_);
  // Deletes the created node (the guaranteed delete); `removed` runs once
  // it is gone (or its session is). Nothing if it was never created.
  void Remove(std::function<void()> removed) ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t EnterLocked(CreateStep step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void GoTo(CreateStep step) ABSL_LOCKS_EXCLUDED(mu_);
  void Send(CreateStep step, uint64_t epoch) ABSL_LOCKS_EXCLUDED(mu_);
  void OnReply(uint64_t epoch, CreateStep step, Participant::Reply reply) ABSL_LOCKS_EXCLUDED(mu_);
  bool StillAt(uint64_t epoch) ABSL_LOCKS_EXCLUDED(mu_);
  void OnCreated() ABSL_LOCKS_EXCLUDED(mu_);
  void Finish(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  void OnSessionState(SessionState state, uint64_t generation) ABSL_LOCKS_EXCLUDED(mu_);

  const std::shared_ptr<SessionCore> core_;
  const std::string what_;  // the caller's operation, for messages
  const std::string data_;
  const std::vector<Acl> acl_;  // empty: the session's default
  Participant participant_;  // also what is left to clean (WhenCleaned)
  // The held state (no own-node watch). Set once, by CreateMemberNode.
  std::shared_ptr<HoldMonitor> monitor_;

  mutable absl::Mutex mu_;
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kIdle;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;  // of the request in flight
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  int retries_in_a_row_ ABSL_GUARDED_BY(mu_) = 0;  // replies lost to connection loss
  Done done_ ABSL_GUARDED_BY(mu_);
  int session_listener_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_MEMBER_NODE_H_
