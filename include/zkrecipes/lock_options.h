// zkr::LockOptions and zkr::RevokeRequest: the options of SharedLock,
// ExclusiveLock, Semaphore and MultiLock, and what a revocation request
// says. A leaf beside types.h: the recipes' internals include it without
// reaching up to the lock objects (zkrecipes/lock_guard.h).
#ifndef ZKRECIPES_LOCK_OPTIONS_H_
#define ZKRECIPES_LOCK_OPTIONS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "zkrecipes/types.h"

namespace zkr {

// A request to release a hold (zkrecipes/revocation.h).
struct RevokeRequest {
  std::string lock_path;  // the lock (or semaphore) path
  std::string node_path;  // the hold's node
  std::string reason;     // what the requester wrote: who asks, and why
  // The requester's grace (RevokeOptions::grace): it may force the hold this
  // long after asking, so stop what the hold protects sooner, counting from
  // when the request was heard less the request's way here. Infinite: it
  // never forces, or did not say (a requester before this field).
  absl::Duration grace = absl::InfiniteDuration();
};

// Options shared by SharedLock, ExclusiveLock, Semaphore and MultiLock.
struct LockOptions {
  // What this participant is doing, stored in its node for operators
  // (`zkr inspect`); free text on one line (a newline: InvalidArgument from
  // Create).
  std::string purpose;
  // ACL of the participant's nodes and of the lock directory (and its parents)
  // when this participant creates them. Empty: the session's default_acl.
  // With digest auth and CreatorAllAcl(), clients without the credentials can
  // neither delete a holder's node nor add nodes to the queue.
  std::vector<Acl> acl;
  // Watch the holder's own node and report kLost if someone deletes it, and
  // its revocation request (zkrecipes/revocation.h): a forced revocation is
  // then kLost at once, and can be made safely. Costs two extra requests
  // (one per watch) per hold that lasts own_node_watch_delay, sent then
  // (never on the acquisition's critical path). False (and no
  // on_revoke_request): a deleted node is not noticed, and zkr::Revoke
  // never forces this participant's holds (kNotForced).
  bool watch_own_node = true;
  // How long a hold lasts before its own-node watch is armed. A hold released
  // sooner sends no request for it; a deletion during the delay is reported
  // when the watch is armed (its read finds the node gone), so a deleted
  // node is reported within this delay plus a round trip. Zero: at once.
  // The revocation request's watch waits at most half the session's lease,
  // whatever this says (until it is set, a hold counts on its grant's lease).
  absl::Duration own_node_watch_delay = absl::Milliseconds(10);
  // Called on the session's dispatcher thread whenever a hold of this lock
  // changes state (kSuspended, kHeld again after RECONNECTED, kLost). Must not
  // block for long. Neither this nor on_revoke_request runs for a hold once
  // its last guard's Release() returns: a call in progress is waited for
  // (not from inside it), so do not release holding a lock they take.
  std::function<void(LockState state)> on_state_change;
  // Set: while held, listen for revocation requests (zkr::Revoke,
  // zkrecipes/revocation.h; `zkr revoke`) and call this, on the dispatcher
  // thread, for each. Cooperative: release when you can. A requester may
  // force the hold after its grace period: it is then kLost. Costs one
  // watch per hold, set at once (also without watch_own_node).
  std::function<void(const RevokeRequest& request)> on_revoke_request;
  // Whose node names this participant speaks, to share the lock with that
  // library's processes (README "Working with Curator and Kazoo"). kCurator:
  // an ExclusiveLock is an InterProcessMutex, a SharedLock an
  // InterProcessReadWriteLock; kKazoo: Lock/WriteLock and ReadLock. In a
  // dialect the node's data is `purpose` alone, and there is no revocation
  // (on_revoke_request is refused: InvalidArgument), since peers would
  // misread its nodes; semaphores and multi-locks speak only kZkr. A child
  // of the lock that this dialect cannot read, seen in a listing while the
  // acquisition decides, fails it with FailedPrecondition naming it (so
  // does another library's in kZkr). It is a guard against a wrong dialect,
  // not a protocol: a child added later — after the grant, or behind us
  // while we wait on a writer's marked release, which grants without a new
  // listing — is not looked for.
  Dialect dialect = Dialect::kZkr;
};

}  // namespace zkr

#endif  // ZKRECIPES_LOCK_OPTIONS_H_
