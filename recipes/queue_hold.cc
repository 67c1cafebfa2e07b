// QueueEntry's held phase (recipes/queue_entry.h): the grant, the
// own-node watch, the ownership re-check after a reconnect, the held state
// and the revocation request's watch.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "recipes/queue_entry.h"
#include "src/retry.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

LockState QueueEntry::state() const {
  LockState state;
  std::shared_ptr<RevokeWatch> revoke_watch;
  absl::Duration basis;
  {
    absl::MutexLock lock(&mu_);
    state = step_ == Step::kHeld ? held_state_ : LockState::kReleased;
    revoke_watch = revoke_watch_;
    basis = basis_;
  }
  if (state != LockState::kHeld) return state;
  // Past the session's lease the server may have expired us (say, after this
  // process was paused) even if no event has said so yet.
  if (!core_->WithinLease()) return LockState::kSuspended;
  // A force may have been marked that we cannot have heard of: our request
  // watch is not known to be set, and the lease of the request that granted
  // us (or that set it last) has run out (recipes/revoke_watch.h).
  if (listens_) {
    const absl::Duration now = core_->clock().Monotonic();
    const absl::Duration lease = core_->LeaseLength();
    if (revoke_watch != nullptr ? !revoke_watch->MayHold(now, lease) : now >= basis + lease) {
      return LockState::kSuspended;
    }
  }
  return state;
}

void QueueEntry::OnAcquired() {
  Done done;
  bool arm;  // an own-node watch is wanted and none was set while waiting
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr || abandoned_) return;
    step_ = Step::kHeld;
    held_state_ = LockState::kHeld;
    done = std::move(done_);
    done_ = nullptr;
    arm = config_.watch_own_node && own_watch_ == 0;
  }
  report_.Granted();
  const bool deferred = arm && config_.own_node_watch_delay > absl::ZeroDuration();
  // The request watch: with the own-node watch (a brief hold costs no
  // request), at once if the caller listens for requests or one is there;
  // within half the lease at the latest: until its watch is set the hold
  // counts only on the lease of the grant (RevokeWatch::MayHold), and an
  // undisturbed hold must not read SUSPENDED for want of it.
  bool follow_now = false;
  bool follow_later = false;
  absl::Duration follow_delay = config_.own_node_watch_delay;
  if (listens_) {
    bool request_seen;
    {
      absl::MutexLock lock(&mu_);
      request_seen = request_seen_;
    }
    follow_now = config_.watch_revoke || request_seen ||
                 config_.own_node_watch_delay <= absl::ZeroDuration();
    follow_later = !follow_now;
    if (follow_later) follow_delay = std::min(follow_delay, core_->LeaseLength() / 2);
  }
  // Armed only if the hold lasts: a brief hold costs no request for them.
  // Scheduled before the caller hears of the hold, so that a release right
  // after finds the tasks to cancel; one task when both are due together.
  const bool together = deferred && follow_later && follow_delay == config_.own_node_watch_delay;
  std::weak_ptr<QueueEntry> weak = weak_from_this();
  if (deferred) {
    const uint64_t task =
        core_->delayed().RunAfter(config_.own_node_watch_delay, [weak, together] {
          auto self = weak.lock();
          if (self == nullptr) return;
          self->WatchOwnNode(/*verify=*/false);
          if (together) self->StartRevokeWatch();
        });
    absl::MutexLock lock(&mu_);
    own_watch_task_ = task;
  }
  if (follow_later && !together) {
    const uint64_t task = core_->delayed().RunAfter(follow_delay, [weak] {
      if (auto self = weak.lock()) self->StartRevokeWatch();
    });
    absl::MutexLock lock(&mu_);
    revoke_watch_task_ = task;
  }
  done(absl::OkStatus());  // first: the own-node watch is off the critical path
  if (arm && !deferred) WatchOwnNode(/*verify=*/false);
  if (follow_now) StartRevokeWatch();
}

void QueueEntry::StartRevokeWatch() {
  RevokeListener listener;
  uint64_t generation;
  absl::Duration basis;
  {
    absl::MutexLock lock(&mu_);
    revoke_watch_task_ = 0;
    if (step_ != Step::kHeld || revoke_watch_ != nullptr) return;  // released, or started
    if (config_.watch_revoke) listener = revoke_listener_;
    generation = generation_;
    basis = basis_;
  }
  std::weak_ptr<QueueEntry> weak = weak_from_this();
  std::shared_ptr<RevokeWatch> watch =
      RevokeWatch::Start(core_, generation, node_path(), basis, std::move(listener), [weak] {
        if (auto self = weak.lock()) self->OnRevokeForced();
      });
  bool released;
  {
    absl::MutexLock lock(&mu_);
    released = step_ != Step::kHeld;
    if (!released) revoke_watch_ = watch;
  }
  if (released) watch->Stop();  // released while we armed it
}

// A forced revocation: LOST at once, but the node stays until the holder
// lets go (Release) — what it was doing may still be stopping (zkr's CMD),
// and the next holder must not start beside it. A holder that never lets go
// loses the node to the requester, one session timeout after the mark.
void QueueEntry::OnRevokeForced() { SetHeldState(LockState::kLost); }

bool QueueEntry::OwnWatchUnset() {
  absl::MutexLock lock(&mu_);
  return own_watch_ == 0;
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
  SetHeldState(LockState::kLost);  // ignored unless held
}

void QueueEntry::WatchOwnNode(bool verify) {
  uint64_t deferred, connection;
  {
    absl::MutexLock lock(&mu_);
    if (step_ != Step::kHeld && !Acquiring(step_)) return;  // released: nothing to watch
    deferred = std::exchange(own_watch_task_, 0);
    own_watch_sure_ = false;  // until this arming's reply says so
    connection = connection_epoch_;
  }
  core_->delayed().Cancel(deferred);  // armed now (after a reconnect): once is enough
  // The cancelled task may have carried the request watch's start too.
  if (deferred != 0 && listens_) StartRevokeWatch();
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SetHeldState(LockState::kLost);
  std::weak_ptr<QueueEntry> weak = weak_from_this();
  // A data watch: on a node already gone (released meanwhile) none is left.
  const uintptr_t watch = client->Get(
      node_path(),
      [weak](const WatchEvent& event) {
        auto self = weak.lock();
        if (self == nullptr) return;
        if (event.type == WatchEvent::Type::kDeleted) {
          self->OnOwnNodeGone();  // ignored once released
        } else {
          self->WatchOwnNode(/*verify=*/false);  // data changed by someone: keep watching
        }
      },
      [weak, client, verify, connection](absl::StatusOr<NodeData> own) {
        auto self = weak.lock();
        if (self == nullptr) return;
        if (absl::IsNotFound(own.status())) return self->OnOwnNodeGone();
        if (own.ok()) {
          const bool ours = own->stat.ephemeral_owner == client->session_id();
          if (!ours) return self->OnOwnNodeGone();
          {
            absl::MutexLock lock(&self->mu_);
            // Armed on the connection still in use: its events come in order.
            self->own_watch_sure_ = connection == self->connection_epoch_;
          }
          if (verify) self->SetHeldState(LockState::kHeld);
          return;
        }
        // A final refusal (PermissionDenied: the node's ACL does not let us
        // read it) would be the same again: no watch then, and ownership
        // after a reconnect is checked without reading the data.
        if (!IsRetryable(own.status()) && !IsSessionLost(own.status())) {
          if (verify) self->VerifyOwnership(client);
          return;
        }
        // Not armed (the connection dropped with the request in flight):
        // arm it again, and re-check, once connected; a lost session is
        // reported by OnSessionState.
        {
          absl::MutexLock lock(&self->mu_);
          if (self->step_ != Step::kHeld && !self->Acquiring(self->step_)) return;
        }
        internal::RetryWhenConnected(*self->core_, self->generation(), /*note=*/nullptr, [weak] {
          if (auto self = weak.lock()) self->WatchOwnNode(/*verify=*/true);
        });
      });
  uintptr_t previous;
  {
    absl::MutexLock lock(&mu_);
    previous = std::exchange(own_watch_, watch);
  }
  if (previous != watch) client->CancelWatch(previous);  // keep one
}

void QueueEntry::VerifyAfterReconnect() {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SetHeldState(LockState::kLost);
  uintptr_t own_watch;
  {
    absl::MutexLock lock(&mu_);
    own_watch = own_watch_;
  }
  // Without a live own-node watch (its arming failed), set one: its reply
  // re-checks the node too.
  if (config_.watch_own_node && !client->WatchArmed(own_watch)) {
    return WatchOwnNode(/*verify=*/true);
  }
  VerifyOwnership(client);
}

void QueueEntry::VerifyOwnership(const std::shared_ptr<ZkClient>& client) {
  auto self = shared_from_this();
  client->Exists(node_path(), nullptr, [self, client](absl::StatusOr<Stat> stat) {
    if (IsRetryable(stat.status())) return;  // SUSPENDED again; the next RECONNECTED re-checks
    const bool ours = stat.ok() && stat->ephemeral_owner == client->session_id();
    self->SetHeldState(ours ? LockState::kHeld : LockState::kLost);
  });
}

void QueueEntry::SetHeldState(LockState state) {
  StateListener listener;
  uint64_t generation;
  {
    absl::MutexLock lock(&mu_);
    if (step_ != Step::kHeld || held_state_ == state || held_state_ == LockState::kLost) return;
    held_state_ = state;
    listener = state_listener_;
    generation = generation_;
  }
  if (state == LockState::kLost) report_.Lost(/*session_lost=*/core_->GenerationOver(generation));
  if (listener) listener(state);
}

}  // namespace internal
}  // namespace zkr
