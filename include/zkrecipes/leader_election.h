// zkr::LeaderElection: exactly one leader among candidates on many machines.
//
// Each candidate queues one EPHEMERAL_SEQUENTIAL node (data: its id) under
// the election path; the first node is the leader; every other candidate
// watches only its direct predecessor (no herd). When the predecessor
// vanishes the candidate re-reads the queue and decides again.
//
// Safety: leadership follows the session. On SUSPENDED the leader is told it
// may have lost leadership (IsLeader() turns false, on_change(kSuspended));
// after RECONNECTED its node is re-checked and it is leader again
// (kLeader). On LOST, or if its node is deleted, it is told (kNotLeader) and
// is not leader again until it re-wins — on the new session, automatically,
// if rejoin_after_loss. Honouring SUSPENDED and LOST, two candidates never
// both believe they lead: the session's lease clock declares LOST before the
// server can expire the session and elect someone else. epoch() is the
// leader node's czxid: strictly increasing from leader to leader, for
// followers and storage to reject a deposed leader.
//
// A new leader marks its node (rewrites its data) once it wins, so that
// observers (zkrecipes/leader_observer.h) and a leader handing over
// (LeaveAndHandOver) can tell that it has taken over. The mark is written
// over the node's first version only, so a mark sent again (its reply lost)
// never puts older data back over SetData's.
//
// Two styles:
//   * latch: Join(), IsLeader(), AwaitLeadership(timeout), on_change,
//     Yield(), SetData(), Leave() / LeaveAndHandOver();
//   * selector (LeaderSelector below): take_leadership runs on the selector's
//     own thread; leadership ends when it returns; optionally re-queue.
//
// Thread safety: safe for concurrent use. on_change runs on the session's
// dispatcher thread. REQUIRES: the Session outlives the election object.
//
// Example (latch):
//   zkr::ElectionOptions options;
//   options.id = "replica-3";
//   options.on_change = [&](zkr::Leadership l) { if (l != zkr::Leadership::kLeader) StopServing(); };
//   auto election = zkr::LeaderElection::Create(*session, "/services/db/leader", options);
//   if (!election.ok() || !(*election)->Join().ok()) return;
//   if ((*election)->AwaitLeadership(absl::Minutes(1)).ok()) ServeAsPrimary((*election)->epoch());
#ifndef ZKRECIPES_LEADER_ELECTION_H_
#define ZKRECIPES_LEADER_ELECTION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "zkrecipes/election_options.h"
#include "zkrecipes/session.h"

namespace zkr {

namespace internal {
class ElectionCore;
}  // namespace internal

class LeaderElection {
 public:
  // Validates `path` and options.id; creates nothing yet.
  static absl::StatusOr<std::unique_ptr<LeaderElection>> Create(Session& session,
                                                                std::string path,
                                                                ElectionOptions options = {});
  LeaderElection(const LeaderElection&) = delete;
  LeaderElection& operator=(const LeaderElection&) = delete;
  // Leave()s. After it returns, on_change is neither running nor called
  // again: a call in progress is waited for (not from inside on_change, which
  // may destroy its own election). Do not destroy it holding a lock
  // on_change takes.
  ~LeaderElection();

  // Queues this candidate and returns at once (leadership is reported
  // through IsLeader/AwaitLeadership/on_change). FailedPrecondition if
  // already joined.
  absl::Status Join();
  // Deletes the candidate's node; a leader stops leading. FailedPrecondition
  // if not joined; Unavailable if the node's removal is not confirmed within
  // one session timeout (it is still retried, and goes with the session at
  // the latest). The destructor waits no longer either.
  absl::Status Leave();
  // Leave(), then wait (up to `timeout`) until another candidate leads and
  // has taken over (LeaderInfo::taken_over; in a dialect, where nobody
  // marks, until another candidate is first): a leader shutting down hands
  // over before it goes. DeadlineExceeded if none did in time (it has left
  // anyway).
  absl::Status LeaveAndHandOver(absl::Duration timeout);
  // A leader steps down without leaving: its node is deleted and it queues
  // again at the back, so the next candidate leads. Returns once its new
  // node is in the queue (while connected): a candidate that yields after
  // that queues behind it. FailedPrecondition if not leading.
  absl::Status Yield();
  // Publishes `data` (ElectionOptions::data) while leading: one write to
  // the leader's own node, on the session that created it, which fails
  // (FailedPrecondition) once the node or that session is gone — a deposed
  // leader cannot publish. Not from the ZooKeeper completion thread.
  absl::Status SetData(std::string data);
  bool joined() const;
  // True while this candidate leads and its session is connected.
  bool IsLeader() const;
  Leadership leadership() const;
  // Waits until IsLeader(). DeadlineExceeded after `timeout`;
  // FailedPrecondition if not joined.
  absl::Status AwaitLeadership(absl::Duration timeout = absl::InfiniteDuration());
  // The leader's fencing epoch (czxid of its node) while IsLeader(), else 0.
  int64_t epoch() const;

  // Observers (no need to join): the leader's id, or nullopt without
  // candidates; every candidate's id in queue order (leader first).
  absl::StatusOr<std::optional<std::string>> CurrentLeader();
  absl::StatusOr<std::vector<std::string>> Participants();

  const std::string& path() const;
  const std::string& id() const;

 private:
  friend class LeaderSelector;
  explicit LeaderElection(std::shared_ptr<internal::ElectionCore> core);
  std::shared_ptr<internal::ElectionCore> core_;
};

// What take_leadership is given.
class LeadershipContext {
 public:
  virtual ~LeadershipContext() = default;
  // The leader's fencing epoch.
  virtual int64_t epoch() const = 0;
  // False once leadership was suspended or lost: return promptly.
  virtual bool IsCurrent() const = 0;
  // Waits until leadership is no longer current or `timeout` passes; returns
  // IsCurrent().
  virtual bool WaitWhileCurrent(absl::Duration timeout) const = 0;
};

// The selector style: runs `take_leadership` on its own thread each time this
// candidate wins; leadership ends (the node is deleted) when it returns; with
// requeue, the candidate then queues again. A session lost while it waits in
// the queue is election.rejoin_after_loss's to handle: with it (the default)
// the candidate queues again on the next session; without it the campaign
// ends there, as that option says, requeue or not.
class LeaderSelector {
 public:
  struct Options {
    ElectionOptions election;
    bool requeue = true;
  };
  static absl::StatusOr<std::unique_ptr<LeaderSelector>> Create(
      Session& session, std::string path, std::function<void(LeadershipContext&)> take_leadership,
      Options options);
  LeaderSelector(const LeaderSelector&) = delete;
  LeaderSelector& operator=(const LeaderSelector&) = delete;
  // Stop()s. May be called from inside take_leadership (its own thread):
  // the election is left before it returns; the selector's thread then
  // finishes the term by itself, touching neither this object nor the
  // session (which may go next).
  ~LeaderSelector();

  // Starts campaigning on the selector's thread. FailedPrecondition if started.
  absl::Status Start();
  // Stops campaigning, waits for a running take_leadership to return (it sees
  // IsCurrent() == false) and leaves the election. Idempotent, and may be
  // called from several threads at once; from inside take_leadership it
  // leaves and returns without waiting for the term (which ends when
  // take_leadership returns).
  void Stop();
  // How many times take_leadership has been called.
  int terms() const;
  LeaderElection& election();

 private:
  class Impl;
  explicit LeaderSelector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zkr

#endif  // ZKRECIPES_LEADER_ELECTION_H_
