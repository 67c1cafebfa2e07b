// zkr::Revoke: ask the holder(s) of a lock or semaphore to let go, then make
// them (Curator's revocation is cooperative only).
//
// 1. Cooperative: a request node "<holder's node>.revoke" is created
//    (ephemeral, owned by the caller's session; its data is
//    RevokeOptions::reason). A holder whose LockOptions::on_revoke_request
//    is set is told at once, on its dispatcher thread (`zkr lock` and `zkr
//    semaphore` forward it to CMD as a signal), and releases when it can.
// 2. Forced: a holder still there after `grace` has its node deleted. It
//    sees kLost (its own-node watch); its fencing token is what makes its
//    late writes harmless. A waiter's place is never touched.
// The request nodes are deleted before Revoke returns (and go with the
// caller's session in any case). They are foreign names to every queue:
// they never block anyone.
//
// Thread safety: a blocking call; call it from any thread but the ZooKeeper
// client's own.
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
  // How long holders have to release before their nodes are deleted.
  // InfiniteDuration: ask only, never force (Revoke waits until they go).
  absl::Duration grace = absl::Seconds(10);
  // Stored in the request node, handed to the holder: who asks, and why.
  std::string reason;
};

struct RevokeOutcome {
  enum class How {
    kReleased,  // the holder released within the grace period
    kForced,    // its node was deleted after the grace period
  };
  std::string node;  // the holder's node (child name)
  How how = How::kReleased;
};

// "released" / "forced".
absl::string_view RevokeHowName(RevokeOutcome::How how);

// Revokes the holders of the lock or semaphore at `path` (or the one node
// named): returns one outcome per holder (none if nothing is held).
// Errors: InvalidArgument (bad path or node name), NotFound (the named node
// is not there), others as Session's.
absl::StatusOr<std::vector<RevokeOutcome>> Revoke(Session& session, const std::string& path,
                                                  RevokeOptions options = {});

}  // namespace zkr

#endif  // ZKRECIPES_REVOCATION_H_
