// QueueEntry's transitions (recipes/queue_entry.h): where each step's final
// reply leads (Next), the move itself (Go, and OnAcquired into kHeld), what
// the hold's monitor reports back, and the one place the session's observer
// hears of the attempt (ReportLocked).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "recipes/queue_decision.h"
#include "recipes/queue_entry.h"
#include "src/paths.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

QueueEntry::Target QueueEntry::Next(Step step, const Reply& reply) {
  const absl::Status& status = reply.status;
  switch (step) {
    case Step::kPeek:
      if (absl::IsNotFound(status)) return Target::To(Step::kCreate);  // no queue yet: free
      if (!status.ok()) return Target::Fail(status);
      // The other kind's nodes (or a foreign one): only a queued decision
      // says refuse or wait.
      if (HasOtherKind(reply.children, attempt_.mode, config().scheme)) {
        return Target::To(Step::kCreate);
      }
      if (!driver_->CouldTakeNow(reply.children)) {
        return Target::Fail(absl::DeadlineExceededError(
            absl::StrCat(driver_->TryGaveUp().message(), " without queueing")));
      }
      return Target::To(Step::kCreate);
    case Step::kCreateDirectory:
    case Step::kCreate:
    case Step::kRecover:
    case Step::kReadToken: {
      // The participant's protected create: once our node exists, list.
      const Participant::CreateStep next = participant_.Next(*CreateStepOf(step), reply);
      if (next == Participant::CreateStep::kFailed) return Target::Fail(status);
      if (next == Participant::CreateStep::kCreated) return Target::To(Step::kList);
      return Target::To(StepOf(next));
    }
    case Step::kList: {
      if (!status.ok() && !absl::IsNotFound(status)) return Target::Fail(status);
      std::string my_name;
      {
        absl::MutexLock lock(&mu_);
        my_name = participant_.node_name();
      }
      if (listens_) {
        // A request for our node that this listing shows may have been
        // marked before it was processed: the listing is no basis then.
        const bool seen = reply.children.Contains(RevokeRequestPath(my_name));
        absl::MutexLock lock(&mu_);
        request_seen_ = seen;
      }
      bool waited;
      {
        absl::MutexLock lock(&mu_);
        waited = waited_;
      }
      QueueDriver::Decision decision = driver_->Decide(reply.children, my_name, waited);
      switch (decision.kind) {
        case QueueDriver::Decision::Kind::kFail:
          return Target::Fail(std::move(decision.failure));
        case QueueDriver::Decision::Kind::kAcquired:
          {
            absl::MutexLock lock(&mu_);
            mark_on_acquire_ = decision.mark_on_acquire;
          }
          return decision.mark_on_acquire ? Target::To(Step::kConfirm) : GrantTarget();
        case QueueDriver::Decision::Kind::kWait:
          if (attempt_.try_only) return Target::Fail(driver_->TryGaveUp());
          bool first_wait;
          {
            absl::MutexLock lock(&mu_);
            first_wait = !waited_;
            waited_ = true;  // our release may be marked (ReleaseMarked)
            mark_on_acquire_ = decision.mark_on_acquire;
            blockers_ = std::move(decision.blockers);
            one_release_enough_ = decision.one_release_enough;
            blocker_marks_count_ = decision.blocker_marks_count;
          }
          if (first_wait && attempt_.on_wait) attempt_.on_wait();  // unlocked
          return Target::To(Step::kWatch);
      }
      return Target::Stay();
    }
    case Step::kWatch: {
      // A writer's data changes only in the transaction that releases it
      // (ReleaseMarked): it held, so it was first — nothing blocks us now,
      // whatever our listing showed (a reader watches the last writer
      // before it, so only readers were between). A reader's release says
      // nothing: other readers may still hold.
      const bool released_mark =
          reply.blocker_data_changed && config().mark_release && BlockerWrites();
      const bool gone = reply.blocker_deleted || released_mark ||
                        (!reply.watch_fired && absl::IsNotFound(status));
      if (gone || reply.watch_fired || reply.blocker_marked) {
        bool enough, own_watch_sure, mark;
        {
          absl::MutexLock lock(&mu_);
          enough = one_release_enough_ || released_mark;
          mark = mark_on_acquire_;
        }
        std::shared_ptr<HoldMonitor> monitor = this->monitor();
        own_watch_sure = monitor != nullptr && monitor->OwnWatchSure();
        // The release that lets us in: nothing can be ahead now. Else (or a
        // semaphore waiter's mark: it holds, we may be first) list again.
        if (!gone || !enough) return Target::To(Step::kList);
        if (mark) return Target::To(Step::kConfirm);
        // Our own node is still ours if its watch, armed before the blocker
        // went and on this connection, has not fired: the server sends a
        // session's events in zxid order, so an earlier deletion of our node
        // would have been handled first (design notes; model EVENT_HANDOFF).
        // Past the lease, or after a disconnect, ask (kConfirm).
        if (own_watch_sure && core_->WithinLease()) return Target::To(Step::kHeld);
        return Target::To(Step::kConfirm);
      }
      if (status.ok()) return Target::Stay();  // armed: waiting for it to fire
      return Target::Fail(status);
    }
    case Step::kConfirm: {
      // Our node still there and ours (its owner our session): we hold. Gone
      // (an operator, or our session expired): lost, as a listing would say.
      std::shared_ptr<ZkClient> client = Client();
      if (status.ok() && client != nullptr && reply.stat.ephemeral_owner == client->session_id()) {
        return GrantTarget();
      }
      if (status.ok() || absl::IsNotFound(status)) {
        return Target::Fail(absl::AbortedError(
            absl::StrCat("queue node ", node_path(), " vanished while waiting")));
      }
      return Target::Fail(status);
    }
    case Step::kCheckRevoke:
      // Marked (any data change after its creation): forced before we knew
      // we held. Else a force can come only after this answer: its send time
      // is the grant's basis.
      if (status.ok() && reply.stat.version > 0) {
        return Target::Fail(absl::AbortedError(absl::StrCat(
            "queue node ", node_path(), " was revoked by force before it held")));
      }
      if (status.ok() || absl::IsNotFound(status)) return Target::To(Step::kHeld);
      return Target::Fail(status);
    case Step::kIdle:
    case Step::kHeld:
    case Step::kReleasing:
    case Step::kCleaning:
    case Step::kDone:
      break;
  }
  return Target::Stay();
}

std::optional<Participant::CreateStep> QueueEntry::CreateStepOf(Step step) {
  switch (step) {
    case Step::kCreateDirectory: return Participant::CreateStep::kCreateDirectory;
    case Step::kCreate: return Participant::CreateStep::kCreate;
    case Step::kRecover: return Participant::CreateStep::kRecover;
    case Step::kReadToken: return Participant::CreateStep::kReadToken;
    default: return std::nullopt;
  }
}

QueueEntry::Step QueueEntry::StepOf(Participant::CreateStep step) {
  switch (step) {
    case Participant::CreateStep::kCreateDirectory: return Step::kCreateDirectory;
    case Participant::CreateStep::kCreate: return Step::kCreate;
    case Participant::CreateStep::kRecover: return Step::kRecover;
    case Participant::CreateStep::kReadToken: return Step::kReadToken;
    case Participant::CreateStep::kCreated:
    case Participant::CreateStep::kFailed: break;
  }
  return Step::kCleaning;  // not a step of its own
}

QueueEntry::Target QueueEntry::GrantTarget() {
  // The listing showed a revocation request for our node: read it first.
  absl::MutexLock lock(&mu_);
  return Target::To(request_seen_ ? Step::kCheckRevoke : Step::kHeld);
}

void QueueEntry::Go(Step from, Target target) {
  if (!target.moves) return;
  switch (target.to) {
    case Step::kCleaning:
      return Finish(std::move(target.failure));
    case Step::kHeld:
      return OnAcquired();
    case Step::kList:
      if (from == Step::kCreate) return ListBehindCreate();  // already sent
      break;
    default:
      break;
  }
  GoTo(target.to);
}

void QueueEntry::MoveLocked(Step step, const absl::Status* failure) {
  Transition moved{step_, step};
  moved.failure = failure;
  step_ = step;
  ReportLocked(moved);
}

void QueueEntry::ReportLocked(const Transition& t) {
  if (t.reply != nullptr) {  // leaving `from` on a reply
    const absl::Status& status = t.reply->status;
    if (IsRetryable(status)) {
      if (core_->events().on()) {
        core_->ReportRetry(absl::StrCat("lock step ", StepName(t.from)), dir(), t.attempt,
                           status);
      }
      return;
    }
    if (report_ == nullptr) return;
    if (t.from == Step::kList && (status.ok() || absl::IsNotFound(status))) {
      report_->Queued(t.reply->children, participant_.node_name());  // the first listing only
    }
    // The node we waited on changed: granted, or list again.
    if (t.from == Step::kWatch && t.to != Step::kWatch && t.to != Step::kCleaning) {
      report_->Handoff(
          [&] {
            mu_.AssertHeld();  // called at once, under our lock
            return t.reply->blocker < blockers_.size() ? blockers_[t.reply->blocker] : "";
          },
          /*granted=*/t.to != Step::kList);
    }
    return;
  }
  if (report_ == nullptr) return;
  if (t.from == Step::kHeld && t.to == Step::kHeld) {  // the hold's state changed
    if (t.held == LockState::kLost) report_->Lost(/*session_lost=*/core_->GenerationOver(t.generation));
    return;
  }
  if (t.from == Step::kIdle) report_->Started();  // also when it waits in kIdle
  switch (t.to) {
    case Step::kWatch: return report_->Watching();
    case Step::kHeld: return report_->Granted();
    case Step::kCleaning:
      return report_->Failed(t.failure != nullptr ? *t.failure : absl::OkStatus(),
                            participant_.node_name());
    case Step::kReleasing: return report_->ReleaseStarted();
    case Step::kDone: return report_->Released();
    default: return;
  }
}

bool QueueEntry::BlockerWrites() {
  std::string blocker;
  {
    absl::MutexLock lock(&mu_);
    if (blockers_.size() != 1) return false;
    blocker = blockers_.front();
  }
  std::optional<QueueNode> node = ParseQueueNode(blocker, config().scheme);
  return node.has_value() && node->mode == NodeMode::kWrite;
}

void QueueEntry::OnAcquired() {
  Done done;
  bool arm;  // an own-node watch is wanted and none was set while waiting
  bool request_seen;
  std::shared_ptr<HoldMonitor> monitor;
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr || abandoned_) return;
    MoveLocked(Step::kHeld);
    monitor = MonitorLocked();
    arm = monitor->Hold(participant_.node_path(), generation_);
    done = std::move(done_);
    done_ = nullptr;
    request_seen = request_seen_;
  }
  // Scheduled before the caller hears of the hold, so that a release right
  // after finds the tasks to cancel.
  const HoldMonitor::Arming arming = monitor->Schedule(arm, request_seen);
  done(absl::OkStatus());  // first: the own-node watch is off the critical path
  monitor->ArmNow(arming);
}

void QueueEntry::OnOwnNodeGone() {
  bool waiting;
  {
    absl::MutexLock lock(&mu_);
    waiting = Acquiring(step_);
  }
  if (waiting) {
    return Finish(absl::AbortedError(
        absl::StrCat("queue node ", node_path(), " vanished while waiting")));
  }
  // Only its own watch tells of it: the monitor is made.
  if (std::shared_ptr<HoldMonitor> monitor = this->monitor()) {
    monitor->SetHeldState(LockState::kLost);  // ignored unless held
  }
}

void QueueEntry::OnHeldState(LockState state, uint64_t generation) {
  StateListener listener;
  {
    absl::MutexLock lock(&mu_);
    Transition moved{Step::kHeld, Step::kHeld};
    moved.held = state;
    moved.generation = generation;
    ReportLocked(moved);
    listener = state_listener_;
  }
  if (listener) listener(state);
}

}  // namespace internal
}  // namespace zkr
