// HoldMonitor: what a queue participant (recipes/queue_entry.h) knows about
// its hold once its node exists — the own-node watch, the ownership
// re-check after a reconnect, the held state and the revocation request's
// watch (recipes/revoke_watch.h).
//
// Guarantees:
// - The own-node watch (a data watch: none is left on a node already gone)
//   is armed beside a waiter's first blocker watch (WatchWhileWaiting), or
//   once the hold has lasted `own_node_watch_delay` (Schedule/ArmNow), and
//   kept: a failed arming is sent again once the generation is connected
//   (the retry primitive, src/retry.h), and that arming re-checks that the
//   node is still ours. Its deletion, or a node no longer owned by our
//   session, is reported once per event through `node_gone`.
// - OwnWatchSure(): the watch's arming said the node is ours, on the
//   connection still in use — its events come in zxid order (the engine
//   may then hold on its blocker's event itself, recipes/README.md).
// - The held state: HELD from Hold() until Stop(); SUSPENDED while
//   disconnected, past the session's lease, or while a force may have been
//   marked unheard (RevokeWatch::MayHold); LOST (final) when the node or
//   the session goes, a revocation is forced, or the own-node watch is
//   refused for room (ResourceExhausted: the hold could not hear of its
//   node's deletion). Every change is reported
//   once through `state_changed`; after Stop() nothing changes nor is
//   armed, and state() reads RELEASED.
// - The revocation request's watch (with `listens`): at once with
//   `watch_revoke`, or when a request was seen, otherwise with the own-node
//   watch but within half the lease at the latest.
//
// Threads: the callbacks run on the ZooKeeper completion thread (watch
// events and replies), the session's supervisor or the caller of the
// engine's session listener; they must not block. Internally synchronised
// by a leaf mutex: the engine may call it under its own lock (the methods
// marked so), and it never calls back while holding its own.
#ifndef ZKRECIPES_RECIPES_HOLD_MONITOR_H_
#define ZKRECIPES_RECIPES_HOLD_MONITOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "recipes/revoke_watch.h"
#include "src/session_core.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace internal {

class HoldMonitor : public std::enable_shared_from_this<HoldMonitor> {
 public:
  struct Config {
    // After acquisition (and while waiting, if the engine asks), watch our
    // own node and report LOST if it vanishes ...
    bool watch_own_node = true;
    // ... armed once the hold has lasted this long.
    absl::Duration own_node_watch_delay = absl::ZeroDuration();
    // Follow the revocation request at once and hand each request to the
    // revoke listener.
    bool watch_revoke = false;
    // The participant hears a forced revocation (QueueEntry::Settings::revocable).
    bool listens = false;
  };
  // Who hears what the monitor finds (the queue entry), on the completion
  // thread, never under the monitor's mutex. Held weakly: an owner gone
  // hears nothing. (An interface, not two std::functions: the monitor is
  // part of every waiting participant's memory.)
  class Owner {
   public:
    virtual ~Owner() = default;
    // Our node was deleted, or is not our session's.
    virtual void OnOwnNodeGone() = 0;
    // The held state changed to `state`; `generation`: the hold's.
    virtual void OnHeldState(LockState state, uint64_t generation) = 0;
  };
  using RevokeListener = std::function<void(std::string reason)>;

  static std::shared_ptr<HoldMonitor> Make(std::shared_ptr<SessionCore> core, Config config,
                                           std::weak_ptr<Owner> owner);

  // Called with each revocation request while held (watch_revoke), on the
  // completion thread; must not block. Set before the hold.
  void SetRevokeListener(RevokeListener listener) ABSL_LOCKS_EXCLUDED(mu_);
  // A reply the server processed before anything a later decision depends
  // on was sent at `basis` (monotonic): the grant's basis is the latest.
  // May be called under the engine's lock.
  void RaiseBasis(absl::Duration basis) ABSL_LOCKS_EXCLUDED(mu_);
  // The connection dropped (any session state but CONNECTED): watches set
  // again after a reconnect may fire out of zxid order. May be called under
  // the engine's lock.
  void ConnectionChanged() ABSL_LOCKS_EXCLUDED(mu_);

  // A waiter's own-node watch on `node_path` (of `generation`), unless one
  // is set already.
  void WatchWhileWaiting(std::string node_path, uint64_t generation) ABSL_LOCKS_EXCLUDED(mu_);
  // The own-node watch's arming said the node is ours, on this connection.
  bool OwnWatchSure() const ABSL_LOCKS_EXCLUDED(mu_);

  // The engine holds `node_path` on `generation`: HELD. Returns whether an
  // own-node watch is wanted and none is set. Called under the engine's
  // lock, with the step that makes it hold.
  bool Hold(std::string node_path, uint64_t generation) ABSL_LOCKS_EXCLUDED(mu_);
  // What Hold() leaves to arm now (ArmNow), once the holder has been told.
  struct Arming {
    bool own_watch = false;
    bool revoke_watch = false;
  };
  // Schedules the watches a brief hold should not pay for (before the
  // holder is told, so that a release right after finds them to cancel);
  // `arm`: Hold()'s answer; `request_seen`: the granting listing showed a
  // revocation request for our node.
  Arming Schedule(bool arm, bool request_seen) ABSL_LOCKS_EXCLUDED(mu_);
  void ArmNow(const Arming& arming) ABSL_LOCKS_EXCLUDED(mu_);

  // The engine neither waits nor holds any more: nothing changes from here
  // on. Called under the engine's lock; Stopped() (outside it) ends what
  // Stop() returns.
  struct Stopping {
    uint64_t own_watch_task = 0;
    uint64_t revoke_watch_task = 0;
    std::shared_ptr<RevokeWatch> revoke_watch;
  };
  Stopping Stop() ABSL_LOCKS_EXCLUDED(mu_);
  void Stopped(const Stopping& stopping);

  // A session event for a hold (the engine's step is HELD): `gone`, the
  // hold's generation is over (LOST); SUSPENDED; RECONNECTED re-checks.
  void OnSessionState(SessionState state, bool gone) ABSL_LOCKS_EXCLUDED(mu_);
  // Sets the held state (ignored unless held, and once LOST).
  void SetHeldState(LockState state) ABSL_LOCKS_EXCLUDED(mu_);
  // HELD, SUSPENDED or LOST while held (see above); RELEASED otherwise.
  LockState state() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class Phase { kWaiting, kHeld, kStopped };
  HoldMonitor(std::shared_ptr<SessionCore> core, Config config, std::weak_ptr<Owner> owner)
      : core_(std::move(core)), config_(config), owner_(std::move(owner)) {}
  // Tells the owner that our node is gone (or not ours).
  void NodeGone();
  // The client of the hold's generation, or null if the session moved on.
  std::shared_ptr<ZkClient> Client() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string node_path() const ABSL_LOCKS_EXCLUDED(mu_);
  // A data watch on our own node, re-armed after every failed arming once
  // connected again. With `verify`, its reply also re-checks that the node
  // is still ours (after a reconnect).
  void WatchOwnNode(bool verify) ABSL_LOCKS_EXCLUDED(mu_);
  // Follows our revocation request while held (RevokeWatch).
  void StartRevokeWatch() ABSL_LOCKS_EXCLUDED(mu_);
  void VerifyAfterReconnect() ABSL_LOCKS_EXCLUDED(mu_);
  // HELD if our node exists and belongs to `client`'s session, else LOST
  // (an exists: no read permission needed, no watch).
  void VerifyOwnership(const std::shared_ptr<ZkClient>& client) ABSL_LOCKS_EXCLUDED(mu_);

  const std::shared_ptr<SessionCore> core_;
  const Config config_;
  const std::weak_ptr<Owner> owner_;

  mutable absl::Mutex mu_;
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kWaiting;
  std::string node_path_ ABSL_GUARDED_BY(mu_);
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  uintptr_t own_watch_ ABSL_GUARDED_BY(mu_) = 0;  // a ZkClient watch id
  uint64_t own_watch_task_ ABSL_GUARDED_BY(mu_) = 0;  // its deferred arming
  // The own-node watch's arming reply said the node is ours, and the
  // connection has not dropped since it was sent (connection_epoch_ counts
  // every session state change but the first CONNECTED).
  bool own_watch_sure_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t connection_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  LockState held_state_ ABSL_GUARDED_BY(mu_) = LockState::kHeld;
  RevokeListener revoke_listener_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<RevokeWatch> revoke_watch_ ABSL_GUARDED_BY(mu_);  // while held
  uint64_t revoke_watch_task_ ABSL_GUARDED_BY(mu_) = 0;  // its deferred start
  // The basis of a grant (RevokeWatch): the send time of the latest request
  // the server processed before the grant.
  absl::Duration basis_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_HOLD_MONITOR_H_
