// What a leader-election candidate is configured with, and how it reports
// its leadership: plain values in a leaf header (zkrecipes/leader_election.h
// and the library's election core include it; nothing here includes a
// class above it).
#ifndef ZKRECIPES_ELECTION_OPTIONS_H_
#define ZKRECIPES_ELECTION_OPTIONS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "zkrecipes/types.h"

namespace zkr {

enum class Leadership {
  kLeader,     // this candidate leads (session connected)
  kSuspended,  // it led, but the session is disconnected: may have lost it
  kNotLeader,  // not leading (waiting in the queue, lost, or left)
};
absl::string_view LeadershipName(Leadership leadership);

struct ElectionOptions {
  // The candidate's id, stored in its node and reported by
  // CurrentLeader()/Participants(). Empty: "<hostname>_<pid>".
  std::string id;
  // What the candidate publishes (say, its address), stored in its node
  // after the id; observers (LeaderObserver, `zkr elect --who`) read the
  // leader's. Change it with SetData().
  std::string data;
  // ACL of the candidate's node and of the election directory when created.
  std::vector<Acl> acl;
  // After LOST (or the node being deleted), queue again on the new session.
  bool rejoin_after_loss = true;
  // Called on the dispatcher thread on every change of this candidate's
  // leadership.
  std::function<void(Leadership)> on_change;
  // Whose node names the candidate speaks, to share the election with that
  // library's processes (README "Working with Curator and Kazoo"): kCurator
  // is a LeaderLatch ("_c_<uuid>-latch-<seq>"), kKazoo an Election (a Lock:
  // "<uuid hex>__lock__<seq>"). The node's data is then the id alone, as
  // theirs: `data` must be empty and SetData() is refused (InvalidArgument).
  Dialect dialect = Dialect::kZkr;
};

}  // namespace zkr

#endif  // ZKRECIPES_ELECTION_OPTIONS_H_
