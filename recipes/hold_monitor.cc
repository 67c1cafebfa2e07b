#include "recipes/hold_monitor.h"

#include <algorithm>
#include <utility>

#include "src/retry.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

std::shared_ptr<HoldMonitor> HoldMonitor::Make(std::shared_ptr<SessionCore> core, Config config,
                                               std::weak_ptr<Owner> owner) {
  return std::shared_ptr<HoldMonitor>(new HoldMonitor(std::move(core), config, std::move(owner)));
}

void HoldMonitor::SetRevokeListener(RevokeListener listener) {
  absl::MutexLock lock(&mu_);
  revoke_listener_ = std::move(listener);
}

void HoldMonitor::RaiseBasis(absl::Duration basis) {
  absl::MutexLock lock(&mu_);
  basis_ = std::max(basis_, basis);
}

void HoldMonitor::ConnectionChanged() {
  absl::MutexLock lock(&mu_);
  ++connection_epoch_;
  own_watch_sure_ = false;
}

bool HoldMonitor::OwnWatchSure() const {
  absl::MutexLock lock(&mu_);
  return own_watch_sure_;
}

std::shared_ptr<ZkClient> HoldMonitor::Client() const {
  SessionCore::Handle handle = core_->current();
  absl::MutexLock lock(&mu_);
  return handle.generation == generation_ ? handle.client : nullptr;
}

std::string HoldMonitor::node_path() const {
  absl::MutexLock lock(&mu_);
  return node_path_;
}

LockState HoldMonitor::state() const {
  LockState state;
  std::shared_ptr<RevokeWatch> revoke_watch;
  absl::Duration basis;
  {
    absl::MutexLock lock(&mu_);
    state = phase_ == Phase::kHeld ? held_state_ : LockState::kReleased;
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
  if (config_.listens) {
    const absl::Duration now = core_->clock().Monotonic();
    const absl::Duration lease = core_->LeaseLength();
    if (revoke_watch != nullptr ? !revoke_watch->MayHold(now, lease) : now >= basis + lease) {
      return LockState::kSuspended;
    }
  }
  return state;
}

void HoldMonitor::WatchWhileWaiting(std::string node_path, uint64_t generation) {
  {
    absl::MutexLock lock(&mu_);
    if (own_watch_ != 0) return;  // set already
    node_path_ = std::move(node_path);
    generation_ = generation;
  }
  WatchOwnNode(/*verify=*/false);
}

bool HoldMonitor::Hold(std::string node_path, uint64_t generation) {
  absl::MutexLock lock(&mu_);
  phase_ = Phase::kHeld;
  held_state_ = LockState::kHeld;
  node_path_ = std::move(node_path);
  generation_ = generation;
  return config_.watch_own_node && own_watch_ == 0;
}

HoldMonitor::Arming HoldMonitor::Schedule(bool arm, bool request_seen) {
  const bool deferred = arm && config_.own_node_watch_delay > absl::ZeroDuration();
  // The request watch: with the own-node watch (a brief hold costs no
  // request), at once if the caller listens for requests or one is there;
  // within half the lease at the latest: until its watch is set the hold
  // counts only on the lease of the grant (RevokeWatch::MayHold), and an
  // undisturbed hold must not read SUSPENDED for want of it.
  bool follow_now = false;
  bool follow_later = false;
  absl::Duration follow_delay = config_.own_node_watch_delay;
  if (config_.listens) {
    follow_now = config_.watch_revoke || request_seen ||
                 config_.own_node_watch_delay <= absl::ZeroDuration();
    follow_later = !follow_now;
    if (follow_later) follow_delay = std::min(follow_delay, core_->LeaseLength() / 2);
  }
  // Armed only if the hold lasts: a brief hold costs no request for them.
  // One task when both are due together.
  const bool together = deferred && follow_later && follow_delay == config_.own_node_watch_delay;
  std::weak_ptr<HoldMonitor> weak = weak_from_this();
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
  return Arming{arm && !deferred, follow_now};
}

void HoldMonitor::ArmNow(const Arming& arming) {
  if (arming.own_watch) WatchOwnNode(/*verify=*/false);
  if (arming.revoke_watch) StartRevokeWatch();
}

HoldMonitor::Stopping HoldMonitor::Stop() {
  absl::MutexLock lock(&mu_);
  phase_ = Phase::kStopped;
  return Stopping{std::exchange(own_watch_task_, 0), std::exchange(revoke_watch_task_, 0),
                  std::move(revoke_watch_)};
}

void HoldMonitor::Stopped(const Stopping& stopping) {
  if (stopping.revoke_watch != nullptr) stopping.revoke_watch->Stop();
  core_->delayed().Cancel(stopping.own_watch_task);  // a brief hold: never armed
  core_->delayed().Cancel(stopping.revoke_watch_task);
}

void HoldMonitor::StartRevokeWatch() {
  RevokeListener listener;
  uint64_t generation;
  absl::Duration basis;
  std::string path;
  {
    absl::MutexLock lock(&mu_);
    revoke_watch_task_ = 0;
    if (phase_ != Phase::kHeld || revoke_watch_ != nullptr) return;  // released, or started
    if (config_.watch_revoke) listener = revoke_listener_;
    generation = generation_;
    basis = basis_;
    path = node_path_;
  }
  std::weak_ptr<HoldMonitor> weak = weak_from_this();
  // A forced revocation: LOST at once, but the node stays until the holder
  // lets go (Release) — what it was doing may still be stopping (zkr's CMD),
  // and the next holder must not start beside it. A holder that never lets
  // go loses the node to the requester, one session timeout after the mark.
  std::shared_ptr<RevokeWatch> watch =
      RevokeWatch::Start(core_, generation, std::move(path), basis, std::move(listener), [weak] {
        if (auto self = weak.lock()) self->SetHeldState(LockState::kLost);
      });
  bool released;
  {
    absl::MutexLock lock(&mu_);
    released = phase_ != Phase::kHeld;
    if (!released) revoke_watch_ = watch;
  }
  if (released) watch->Stop();  // released while we armed it
}

void HoldMonitor::WatchOwnNode(bool verify) {
  uint64_t deferred, connection;
  {
    absl::MutexLock lock(&mu_);
    if (phase_ == Phase::kStopped) return;  // released: nothing to watch
    deferred = std::exchange(own_watch_task_, 0);
    own_watch_sure_ = false;  // until this arming's reply says so
    connection = connection_epoch_;
  }
  core_->delayed().Cancel(deferred);  // armed now (after a reconnect): once is enough
  // The cancelled task may have carried the request watch's start too.
  if (deferred != 0 && config_.listens) StartRevokeWatch();
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SetHeldState(LockState::kLost);
  std::weak_ptr<HoldMonitor> weak = weak_from_this();
  // A data watch: on a node already gone (released meanwhile) none is left.
  const uintptr_t watch = client->Get(
      node_path(),
      [weak](const WatchEvent& event) {
        auto self = weak.lock();
        if (self == nullptr) return;
        if (event.type == WatchEvent::Type::kDeleted) {
          self->NodeGone();  // ignored once released
        } else {
          self->WatchOwnNode(/*verify=*/false);  // data changed by someone: keep watching
        }
      },
      [weak, client, verify, connection](absl::StatusOr<NodeData> own) {
        auto self = weak.lock();
        if (self == nullptr) return;
        if (absl::IsNotFound(own.status())) return self->NodeGone();
        if (own.ok()) {
          const bool ours = own->stat.ephemeral_owner == client->session_id();
          if (!ours) return self->NodeGone();
          {
            absl::MutexLock lock(&self->mu_);
            // Armed on the connection still in use: its events come in order.
            self->own_watch_sure_ = connection == self->connection_epoch_;
          }
          if (verify) self->SetHeldState(LockState::kHeld);
          return;
        }
        // Refused for room (the session's watches are at the packet limit,
        // src/watch_registry.h): a hold that cannot watch its node would not
        // hear of its deletion, so it is not held.
        if (absl::IsResourceExhausted(own.status())) {
          return self->SetHeldState(LockState::kLost);
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
        uint64_t generation;
        {
          absl::MutexLock lock(&self->mu_);
          if (self->phase_ == Phase::kStopped) return;
          generation = self->generation_;
        }
        RetryWhenConnected(*self->core_, generation, /*attempt=*/1, /*note=*/nullptr, [weak] {
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

void HoldMonitor::OnSessionState(SessionState state, bool gone) {
  if (gone) return SetHeldState(LockState::kLost);
  if (state == SessionState::kSuspended) return SetHeldState(LockState::kSuspended);
  if (state == SessionState::kReconnected) VerifyAfterReconnect();
}

void HoldMonitor::VerifyAfterReconnect() {
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

void HoldMonitor::VerifyOwnership(const std::shared_ptr<ZkClient>& client) {
  auto self = shared_from_this();
  client->Exists(node_path(), nullptr, [self, client](absl::StatusOr<Stat> stat) {
    if (IsRetryable(stat.status())) return;  // SUSPENDED again; the next RECONNECTED re-checks
    const bool ours = stat.ok() && stat->ephemeral_owner == client->session_id();
    self->SetHeldState(ours ? LockState::kHeld : LockState::kLost);
  });
}

void HoldMonitor::SetHeldState(LockState state) {
  uint64_t generation;
  {
    absl::MutexLock lock(&mu_);
    if (phase_ != Phase::kHeld || held_state_ == state || held_state_ == LockState::kLost) return;
    held_state_ = state;
    generation = generation_;
  }
  if (auto owner = owner_.lock()) owner->OnHeldState(state, generation);
}

void HoldMonitor::NodeGone() {
  if (auto owner = owner_.lock()) owner->OnOwnNodeGone();
}

}  // namespace internal
}  // namespace zkr
