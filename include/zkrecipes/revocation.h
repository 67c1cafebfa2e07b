// zkr::Revoke: ask the holder(s) of a lock or semaphore to let go, then make
// them (Curator's revocation is cooperative only).
//
// 1. Cooperative: a request node "<holder's node>.revoke" is created
//    (ephemeral, owned by the caller's session; its data is the grace on a
//    first line, "revoke_grace_ms=N", none if infinite, then
//    RevokeOptions::reason). A holder whose LockOptions::on_revoke_request
//    is set is told at once, on its dispatcher thread, with the grace
//    (RevokeRequest::grace: its deadline), and releases when it can (`zkr
//    lock` and `zkr semaphore` forward it to CMD as a signal and stop CMD's
//    group before the deadline). A negative grace is 0. A request already
//    there that another requester made, telling a later deadline (or none),
//    is withdrawn and ours made in its place, so the holder is told the
//    nearer deadline before it can be forced.
// 2. Forced: a holder still there after `grace` is marked — the request's
//    data is written again — and so told that the hold is over: a
//    connected holder reports kLost at once, and its node goes when it lets
//    go (Release, or the guard's end): whatever it was doing may still be
//    stopping, and nobody holds beside it meanwhile (zkr's CMD dies first).
//    Its node is deleted by the requester only when the holder's lease
//    must have ended: one session timeout of the holder's (which it
//    publishes in its node's data) after the mark was answered, measured
//    on the requester's monotonic clock. So a holder cut off from the
//    server, which cannot hear the mark, stops reading kHeld before anyone
//    else is let in: mutual exclusion among kHeld holders holds through a
//    forced revocation (model-checked: tests/model/, "forced revocation").
//    A holder that cannot hear a mark — LockOptions::watch_own_node false
//    and no on_revoke_request, or a node another library (or a zkrecipes
//    before this protocol) made — is never forced: kNotForced, its node
//    left. Its fencing token keeps a forced-out holder's late writes out.
// A waiter's place is never touched: RevokeOptions::node naming a waiter is
// refused. The request nodes Revoke made are deleted before it returns
// (with the guaranteed delete; a create whose reply was lost is found by
// its owner), and go with the caller's session in any case. They are
// foreign names to every queue: they never block anyone.
//
// Thread safety: a blocking call; call it from any thread but the ZooKeeper
// client's own (nor a dispatcher callback).
//
// Example (a waiter that cannot wait longer):
//   zkr::RevokeOptions ask;
//   ask.reason = "nightly compaction needs the table";
//   ask.grace = absl::Seconds(30);
//   auto outcomes = zkr::Revoke(*session, "/locks/orders", ask);
#ifndef ZKRECIPES_REVOCATION_H_
#define ZKRECIPES_REVOCATION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "zkrecipes/session.h"

namespace zkr {

struct RevokeOptions {
  // One holder's node (a child name of the path); empty: every current holder.
  std::string node;
  // How long holders have to release before they are forced (measured on
  // the session's monotonic clock). A forced holder that is cut off is
  // waited for up to one more session timeout of its own. InfiniteDuration:
  // ask only, never force (Revoke waits until they go).
  absl::Duration grace = absl::Seconds(10);
  // Stored in the request node, handed to the holder: who asks, and why.
  std::string reason;
};

struct RevokeOutcome {
  enum class How {
    kReleased,  // the holder released within the grace period
    kForced,    // forced out after the grace period: its node is gone
    // Still held after the grace period, and left: its holder could not hear
    // a forced revocation (see the header comment).
    kNotForced,
  };
  std::string node;  // the holder's node (child name)
  How how = How::kReleased;
};

// "released" / "forced" / "not forced".
absl::string_view RevokeHowName(RevokeOutcome::How how);

// Revokes the holders of the lock or semaphore at `path` (or the one node
// named): returns one outcome per holder (none if nothing is held).
// Errors: InvalidArgument (bad path or node name), NotFound (the named node
// is not there), FailedPrecondition naming the node (the named node waits,
// or is not a participant of the queue), a session-lost Aborted (the
// caller's session was lost: its requests went with it), others as
// Session's.
absl::StatusOr<std::vector<RevokeOutcome>> Revoke(Session& session, const std::string& path,
                                                  RevokeOptions options = {});

}  // namespace zkr

#endif  // ZKRECIPES_REVOCATION_H_
