#include "recipes/member_node.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "src/retry.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

absl::StatusOr<std::shared_ptr<MemberNode>> CreateMemberNode(
    const std::shared_ptr<SessionCore>& core, const std::string& dir, const std::string& label,
    const std::string& data, const std::vector<Acl>& acl, absl::Duration deadline,
    absl::string_view what) {
  std::shared_ptr<MemberNode> node(new MemberNode(core, dir, label, data, acl, what));
  // Held from the create on; no own-node watch: nothing reports it gone.
  HoldMonitor::Config held;
  held.watch_own_node = false;
  node->monitor_ = HoldMonitor::Make(core, held, /*owner=*/{});  // hears nothing
  auto created = std::make_shared<absl::Notification>();
  auto result = std::make_shared<absl::Status>();
  node->Start([created, result](absl::Status status) {
    *result = std::move(status);
    created->Notify();
  });
  if (!created->WaitForNotificationWithTimeout(deadline - core->clock().Monotonic())) {
    node->Abandon(absl::DeadlineExceededError(
        absl::StrCat(what, " ", dir, ": the member's node was not created before the deadline")));
    created->WaitForNotification();  // Abandon completes it unless it just won
  }
  if (result->ok()) return node;
  // Every failure names the operation and the path (a status from the
  // session, "session closed", or the server's on our node, names neither).
  if (!absl::StartsWith(result->message(), absl::StrCat(what, " ", dir))) {
    *result = Restate(*result, absl::StrCat(what, " ", dir, ": ", result->message()));
  }
  // Failed: our node, if any, is being deleted; wait for that.
  auto cleaned = std::make_shared<absl::Notification>();
  node->participant_.WhenCleaned([cleaned] { cleaned->Notify(); });
  cleaned->WaitForNotificationWithTimeout(core->negotiated_timeout());
  return *result;
}

void RemoveMemberNode(const std::shared_ptr<MemberNode>& node) {
  // Beyond one session timeout the server ends the session, and the node
  // with it.
  auto removed = std::make_shared<absl::Notification>();
  node->Remove([removed] { removed->Notify(); });
  removed->WaitForNotificationWithTimeout(node->core().negotiated_timeout());
}

absl::Status SetMemberData(const std::shared_ptr<OwnedNode>& node, absl::string_view data,
                           absl::string_view what, absl::string_view lost) {
  const std::string path = node->node_path();
  if (OnCompletionThread()) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", path, ": called on the ZooKeeper completion thread"));
  }
  auto over = [&](absl::string_view why) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", node->dir(), ": ", lost, " (", why, ")"));
  };
  // Sent on the client of the node's own generation: a later session could
  // still write the node of one the library declared LOST, until the server
  // expires it. A request on a lost client fails with a session-lost status.
  SessionCore::Handle handle = node->core().current();
  if (node->state() == LockState::kLost || handle.client == nullptr ||
      handle.generation != node->generation()) {
    return over(absl::StrCat("session ended; node ", path));
  }
  absl::Notification answered;
  absl::Status written;
  handle.client->Set(path, data, -1, [&](absl::StatusOr<Stat> stat) {
    written = stat.status();
    answered.Notify();
  });
  answered.WaitForNotification();  // every completion runs exactly once
  if (IsSessionLost(written)) return over(absl::StrCat("session ended; node ", path));
  if (absl::IsNotFound(written)) return over(absl::StrCat("node ", path, " is gone"));
  return written;
}

MemberNode::MemberNode(std::shared_ptr<SessionCore> core, const std::string& dir,
                       const std::string& label, std::string data, std::vector<Acl> acl,
                       absl::string_view what)
    : core_(std::move(core)),
      what_(what),
      data_(std::move(data)),
      acl_(std::move(acl)),
      participant_(std::make_shared<const std::string>(dir), label, NodeMode::kWrite,
                   /*weight=*/1, /*leases=*/0) {}

MemberNode::~MemberNode() {
  if (session_listener_id_ != 0) core_->RemoveInternalListener(session_listener_id_);
}

uint64_t MemberNode::generation() const {
  absl::MutexLock lock(&mu_);
  return generation_;
}

void MemberNode::Start(Done done) {
  // The node's create must fit the server's packet limit (counted as for a
  // queue participant's, which leaves room for a marked release): refused
  // here, before anything is sent.
  absl::Status fits =
      participant_.CheckRequestSize(*core_, data_.size() + kReleasedMark.size(), acl_);
  if (!fits.ok()) {
    {
      absl::MutexLock lock(&mu_);
      abandoned_ = true;
    }
    participant_.MarkCleaned();  // nothing was created
    return done(fits);
  }
  std::weak_ptr<MemberNode> weak = weak_from_this();
  const int listener = core_->AddInternalListener([weak](SessionState state, uint64_t generation) {
    if (auto self = weak.lock()) self->OnSessionState(state, generation);
  });
  SessionState state;
  bool between_generations;
  uint64_t epoch = 0;
  {
    // The state is read in the same critical section that records the
    // attempt: a CONNECTED delivered before it is seen here, one delivered
    // after it finds done_ set (OnSessionState), so none is missed.
    absl::MutexLock lock(&mu_);
    state = core_->state();
    between_generations = state == SessionState::kLost || state == SessionState::kConnecting;
    done_ = std::move(done);
    generation_ = core_->generation();
    session_listener_id_ = listener;
    // Between generations the create waits for the next CONNECTED.
    if (!between_generations) epoch = EnterLocked(CreateStep::kCreate);
  }
  if (!between_generations) return Send(CreateStep::kCreate, epoch);
  if (state == SessionState::kLost && !core_->options().reconnect_after_loss) {
    Finish(SessionLostStatus(what_, dir()));
  }
}

uint64_t MemberNode::EnterLocked(CreateStep step) {
  phase_ = Phase::kCreating;
  if (step == CreateStep::kCreate) participant_.CreateEntered();
  return ++epoch_;
}

void MemberNode::GoTo(CreateStep step) {
  uint64_t epoch;
  {
    absl::MutexLock lock(&mu_);
    if (abandoned_ || phase_ != Phase::kCreating) return;  // gave up, or done
    epoch = EnterLocked(step);
  }
  Send(step, epoch);
}

void MemberNode::Send(CreateStep step, uint64_t epoch) {
  SessionCore::Handle handle = core_->current();
  if (handle.generation != generation() || handle.client == nullptr) {
    // The session moved on: no create was sent.
    if (step == CreateStep::kCreate && participant_.CreateDropped()) {
      participant_.MarkCleaned();
    }
    return Finish(SessionLostStatus(what_, dir()));
  }
  auto self = shared_from_this();
  auto reply = [self, epoch, step](Participant::Reply r) {
    self->OnReply(epoch, step, std::move(r));
  };
  const std::vector<Acl>& acl = acl_.empty() ? core_->default_acl() : acl_;
  if (step != CreateStep::kCreate) return participant_.Send(*handle.client, step, acl, reply);
  participant_.SendCreate(core_, generation(), *handle.client, data_, acl, reply,
                          [self] { self->participant_.MarkCleaned(); });
}

void MemberNode::OnReply(uint64_t epoch, CreateStep step, Participant::Reply reply) {
  bool abandoned;
  int attempt;
  {
    absl::MutexLock lock(&mu_);
    if (epoch != epoch_) return;  // stale: moved on, or gave up
    participant_.Note(step, reply);  // kept even when abandoned: cleaning reads it
    abandoned = abandoned_;
    retries_in_a_row_ = IsRetryable(reply.status) ? retries_in_a_row_ + 1 : 0;
    attempt = retries_in_a_row_;
  }
  if (abandoned) return;  // Finish() has started cleaning
  if (IsRetryable(reply.status)) {
    const RetryNote note{absl::StrCat(what_, " step ", Participant::StepName(step)), dir(), attempt,
                         reply.status};
    const CreateStep again = Participant::RetryStep(step);
    auto self = shared_from_this();
    return RetryWhenConnected(
        *core_, generation(), attempt, &note,
        [self, again, epoch] {
          if (self->StillAt(epoch)) self->GoTo(again);
        },
        [self, epoch](absl::Status lost) {
          if (self->StillAt(epoch)) self->Finish(std::move(lost));
        });
  }
  const CreateStep next = participant_.Next(step, reply);
  if (next == CreateStep::kFailed) return Finish(reply.status);
  if (next == CreateStep::kCreated) return OnCreated();
  GoTo(next);
}

bool MemberNode::StillAt(uint64_t epoch) {
  absl::MutexLock lock(&mu_);
  return epoch == epoch_;
}

void MemberNode::OnCreated() {
  Done done;
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr || abandoned_) return;
    phase_ = Phase::kHeld;
    monitor_->Hold(participant_.node_path(), generation_);
    done = std::move(done_);
    done_ = nullptr;
  }
  done(absl::OkStatus());
}

bool MemberNode::Abandon(absl::Status why) {
  {
    // Decided in one step with OnCreated (which refuses an abandoned node).
    absl::MutexLock lock(&mu_);
    if (phase_ == Phase::kHeld || phase_ == Phase::kReleasing) return false;
    abandoned_ = true;
  }
  Finish(std::move(why));
  return true;
}

void MemberNode::Finish(absl::Status status) {
  Done done;
  int listener = 0;
  Participant::Cleanup cleanup;
  uint64_t generation;
  HoldMonitor::Stopping stopping;
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr) return;  // already created or finished
    done = std::move(done_);
    done_ = nullptr;
    abandoned_ = true;
    std::swap(listener, session_listener_id_);
    phase_ = Phase::kCleaning;
    ++epoch_;  // whatever is in flight is stale now
    stopping = monitor_->Stop();
    cleanup = participant_.PlanCleanup();
    generation = generation_;
  }
  if (listener != 0) core_->RemoveInternalListener(listener);
  monitor_->Stopped(stopping);
  auto self = shared_from_this();
  participant_.Clean(cleanup, core_, generation, [self] { self->participant_.MarkCleaned(); });
  done(std::move(status));
}

void MemberNode::Remove(std::function<void()> removed) {
  uint64_t generation;
  int listener = 0;
  bool held;
  HoldMonitor::Stopping stopping;
  {
    absl::MutexLock lock(&mu_);
    held = phase_ == Phase::kHeld;
    if (held) {
      phase_ = Phase::kReleasing;
      stopping = monitor_->Stop();
      std::swap(listener, session_listener_id_);
    }
    generation = generation_;
  }
  if (!held) return removed();  // never created (or removed already)
  monitor_->Stopped(stopping);
  if (listener != 0) core_->RemoveInternalListener(listener);
  auto self = shared_from_this();
  // The caller waits for it: the first attempt may be made on its thread.
  Participant::DeleteGuaranteed(
      core_, generation, node_path(),
      [self, removed](absl::Status) {
        {
          absl::MutexLock lock(&self->mu_);
          self->phase_ = Phase::kDone;
        }
        self->participant_.MarkCleaned();
        removed();
      },
      /*caller_waits=*/true);
}

void MemberNode::OnSessionState(SessionState state, uint64_t generation) {
  Phase phase;
  uint64_t mine;
  uint64_t epoch = 0;
  {
    absl::MutexLock lock(&mu_);
    phase = phase_;
    mine = generation_;
    if (phase == Phase::kIdle && done_ != nullptr && state == SessionState::kConnected) {
      generation_ = generation;  // started between generations: begin on this one
      epoch = EnterLocked(CreateStep::kCreate);
    }
  }
  if (epoch != 0) return Send(CreateStep::kCreate, epoch);
  const bool gone = generation != mine || state == SessionState::kLost ||
                    state == SessionState::kClosed;
  if (phase == Phase::kIdle || phase == Phase::kCreating) {
    if (state == SessionState::kClosed) {
      Finish(absl::CancelledError(absl::StrCat(what_, " ", dir(), ": session closed")));
    } else if (gone && phase != Phase::kIdle) {
      Finish(SessionLostStatus(what_, dir()));
    }
    return;
  }
  if (phase == Phase::kHeld) monitor_->OnSessionState(state, gone);
}

}  // namespace internal
}  // namespace zkr
