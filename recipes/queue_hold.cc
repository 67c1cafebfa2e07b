// QueueEntry's grant (recipes/queue_entry.h): the step into kHeld, and what
// the hold's monitor (recipes/hold_monitor.h) reports back to the engine.
#include <utility>

#include "absl/strings/str_cat.h"
#include "recipes/queue_entry.h"

namespace zkr {
namespace internal {

void QueueEntry::OnAcquired() {
  Done done;
  bool arm;  // an own-node watch is wanted and none was set while waiting
  bool request_seen;
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr || abandoned_) return;
    step_ = Step::kHeld;
    arm = monitor_->Hold(participant_.node_path(), generation_);
    done = std::move(done_);
    done_ = nullptr;
    request_seen = request_seen_;
  }
  report_.Granted();
  // Scheduled before the caller hears of the hold, so that a release right
  // after finds the tasks to cancel.
  const HoldMonitor::Arming arming = monitor_->Schedule(arm, request_seen);
  done(absl::OkStatus());  // first: the own-node watch is off the critical path
  monitor_->ArmNow(arming);
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
  monitor_->SetHeldState(LockState::kLost);  // ignored unless held
}

void QueueEntry::OnHeldState(LockState state, uint64_t generation) {
  StateListener listener;
  {
    absl::MutexLock lock(&mu_);
    listener = state_listener_;
  }
  if (state == LockState::kLost) report_.Lost(/*session_lost=*/core_->GenerationOver(generation));
  if (listener) listener(state);
}

}  // namespace internal
}  // namespace zkr
