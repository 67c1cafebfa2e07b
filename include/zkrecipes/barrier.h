// zkr::Barrier and zkr::DoubleBarrier: processes that must wait for each other.
//
// Barrier (the ZooKeeper barrier recipe): one process Set()s the barrier node,
// workers Wait() until some process Remove()s it. Waiters watch the barrier
// node; nothing polls.
//
// DoubleBarrier (the ZooKeeper double-barrier recipe): `count` members Enter()
// and all are released together once `count` have entered; at the end each
// Leave()s and all return once every member has left. While leaving, the
// lowest member watches the highest and the others watch the lowest: no herd.
// A member whose session dies while inside has its node removed by the
// server: for Leave() that counts as having left; for Enter() it no longer
// counts toward `count` (the others keep waiting, up to their timeout). A
// member's create whose reply is lost is found again by the member's unique
// node name, never made twice (no phantom member); a member's node is
// deleted as a lock holder's is, retried after reconnects until it is gone
// (the same participant code). A barrier path serves one round: use a fresh
// path per round. Another recipe's participant at the path (a lock's, a
// semaphore's, an election's or a group's: named like members, told apart
// by their data; a node the member may not read counts as one) is never
// counted as a member: each member reads the earliest node's data, and the
// member that would open the barrier reads every other's (one round trip).
// Either one that finds such a node fails Enter with FailedPrecondition
// naming it, and leaves nothing; members in between, which read only the
// earliest, keep waiting (up to their timeout), since the barrier cannot
// open. A candidate whose published data copies a member's mark is not told
// apart.
//
// Timeouts are measured on the session's monotonic clock. A request that
// fails with its connection (the `ready` create, a listing, a leaving
// member's delete) is sent again once the session is connected, up to the
// timeout. If the session is lost meanwhile (the server silent past its
// lease), Enter() and Leave() return the session-lost status (Aborted,
// IsSessionLost()), and the member's node goes as the server expires the
// session, a moment later.
//
// Thread safety: each object is used by one thread at a time; the blocking
// calls may be made from any thread, including session callbacks.
// REQUIRES: the Session outlives the barrier object.
//
// Example:
//   auto barrier = zkr::DoubleBarrier::Create(*session, "/jobs/nightly/round-42", "worker-7", 5);
//   if (!barrier.ok()) return barrier.status();
//   if (absl::Status s = (*barrier)->Enter(absl::Minutes(5)); !s.ok()) return s;  // all 5 start
//   DoWork();
//   return (*barrier)->Leave(absl::Minutes(5));  // and finish together
#ifndef ZKRECIPES_BARRIER_H_
#define ZKRECIPES_BARRIER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace internal {
class MemberNode;
}  // namespace internal

class Barrier {
 public:
  // Validates `path`.
  static absl::StatusOr<std::unique_ptr<Barrier>> Create(Session& session, std::string path);

  // Creates the barrier node (and its parents, as containers). OK if it exists.
  absl::Status Set();
  // Deletes the barrier node, releasing every waiter. OK if it is absent.
  absl::Status Remove();
  // Waits until the barrier node is absent. DeadlineExceeded after `timeout`
  // (also while the server does not answer: it creates nothing, so it has
  // nothing to clean up). A zero timeout asks once, its answer awaited up to
  // SessionOptions::connect_timeout, as TryAcquire does.
  absl::Status Wait(absl::Duration timeout = absl::InfiniteDuration());
  // Whether the barrier node exists now.
  absl::StatusOr<bool> IsSet();

 private:
  Barrier(Session& session, std::string path);
  Session& session_;
  const std::string path_;
};

class DoubleBarrier {
 public:
  // Validates `path`, `member_id` and count >= 1. The member id is any text
  // without control characters, as an election's or a group's; empty means
  // "<hostname>_<pid>". It is stored in the member's node (with the count,
  // for InspectQueue); the node's name carries a copy with every character
  // outside [A-Za-z0-9._-] replaced by '_'.
  static absl::StatusOr<std::unique_ptr<DoubleBarrier>> Create(Session& session, std::string path,
                                                               std::string member_id, int count);
  // Removes this member's node if entered, without waiting for the others
  // (retried until gone; waits at most one session timeout).
  ~DoubleBarrier();

  // Joins and waits until `count` members have entered. On DeadlineExceeded
  // this member's node is removed again (when the server has not answered,
  // that takes at most one session timeout more, as a timed-out lock
  // acquisition's). FailedPrecondition if entered.
  absl::Status Enter(absl::Duration timeout = absl::InfiniteDuration());
  // Removes this member and waits until every member has left.
  // FailedPrecondition if not entered. On DeadlineExceeded this member has
  // already left; others may still be inside. While the server does not
  // answer, it returns at most one session timeout after the deadline (its
  // listings and its delete wait for an answer or the connection's loss).
  absl::Status Leave(absl::Duration timeout = absl::InfiniteDuration());
  bool entered() const { return !node_.empty(); }

 private:
  DoubleBarrier(Session& session, std::string path, std::string member_id, int count);
  // `deadline` on the session's monotonic clock.
  absl::Status LeaveUntil(absl::Duration deadline);
  // Deletes our node as locks do: retried until gone (bounded wait).
  void RemoveNode();

  Session& session_;
  const std::string path_;
  const std::string member_id_;
  const int count_;
  std::string node_;  // our node's name while entered
  // Our participant in the queue engine (its node) while entered.
  std::shared_ptr<internal::MemberNode> entry_;
};

}  // namespace zkr

#endif  // ZKRECIPES_BARRIER_H_
