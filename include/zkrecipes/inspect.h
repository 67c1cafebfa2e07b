// zkr::InspectQueue: what an operator wants to see of a lock, semaphore or
// election: who holds, who waits on whom, and revocation requests pending.
//
// Reads the queue directory and each participant's node once (not atomic:
// a snapshot assembled from several reads) and applies the same decision
// the participants apply, so it reports who holds and whom each waiter
// watches; a double barrier's members are reported as members. Safe from any thread but the ZooKeeper client's own.
//
// Example:
//   for (const zkr::QueueEntryInfo& e : *zkr::InspectQueue(*session, "/locks/orders"))
//     std::cout << e.name << (e.holds ? " holds" : " waits on " + e.watches) << "\n";
#ifndef ZKRECIPES_INSPECT_H_
#define ZKRECIPES_INSPECT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "zkrecipes/session.h"

namespace zkr {

struct QueueEntryInfo {
  std::string name;         // the child name
  std::string participant;  // "<host>_<pid>_<random>" part of the name (a
                            // peer's: Curator's "_c_<uuid>", Kazoo's uuid)
  // Whose names the queue speaks, found from its children (the one most
  // of them parse in): Curator's and Kazoo's queues are read as ours.
  Dialect dialect = Dialect::kZkr;
  bool write = true;        // W (write, exclusive, candidate) or R (read)
  // A semaphore participant (S): the leases it asks, of how many.
  int leases = 0;
  int semaphore_size = 0;
  int32_t sequence = 0;     // ZooKeeper's sequence suffix
  int64_t session_id = 0;   // the owning session (ephemeralOwner)
  absl::Time created;       // the node's creation time (server clock)
  int64_t czxid = 0;        // its fencing token
  std::string data;         // lock metadata, or a candidate's id
  bool holds = false;       // holds the lock / is the leader
  std::string watches;      // for a waiter: the child it waits on (the last one)
  // Every child it waits on: one, but a semaphore's first waiter watches
  // every node before it.
  std::vector<std::string> watching;
  // A revocation request for this node is pending (zkrecipes/revocation.h).
  bool revoke_requested = false;
  std::string revoke_reason;
  // A double barrier's member (zkrecipes/barrier.h): members neither hold
  // nor wait on one another, so `holds` is false and `watching` empty;
  // `data` is the member's id, `barrier_count` how many members the barrier
  // waits for (0 if not known: its node was made by an older version).
  bool barrier_member = false;
  int barrier_count = 0;
};

// The queue at `path` in order (first = holder/leader). Foreign children are
// skipped; an absent directory is an empty queue. A queue of more than
// kMaxInspectedNodes participants is refused with ResourceExhausted naming
// the path and the count (each node is read, and placed against the whole
// listing).
extern const size_t kMaxInspectedNodes;
absl::StatusOr<std::vector<QueueEntryInfo>> InspectQueue(Session& session,
                                                         const std::string& path);

// For a path that is not a queue itself (a parent of locks, say): the
// queues below it — the directories holding participant nodes — at most
// `depth` levels down (InvalidArgument for a negative depth), as full paths
// in tree order (depth first, each directory's children by name: "/a/q"
// before "/a-x"), the first `limit` of them. One listing per directory
// visited; of a queue's children only those that are not its participants'
// nodes are searched.
absl::StatusOr<std::vector<std::string>> FindQueuesBelow(Session& session, const std::string& path,
                                                         int depth = 3, size_t limit = 100);

}  // namespace zkr

#endif  // ZKRECIPES_INSPECT_H_
