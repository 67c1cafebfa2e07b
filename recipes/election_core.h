// ElectionCore: one candidate of a leader election (zkr::LeaderElection,
// zkr::LeaderSelector) on the shared queue engine: a candidate is a writer in
// the election queue; leadership is "holding" it.
//
// Threads: the queue entry's and the session's callbacks run on the
// ZooKeeper completion thread; on_change is delivered to the dispatcher
// thread, in order (src/delivery.h). Join/Leave/Yield/SetData/Await* block
// and are called from users' threads.
#ifndef ZKRECIPES_RECIPES_ELECTION_CORE_H_
#define ZKRECIPES_RECIPES_ELECTION_CORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "recipes/queue_entry.h"
#include "src/callback_gate.h"
#include "src/session_access.h"
#include "zkrecipes/election_options.h"
#include "zkrecipes/observer.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace internal {

// One candidate: joins by queueing a QueueEntry, follows its held state, and
// queues again after a loss. Its state is one Candidacy value; the queue
// entry itself waits for a CONNECTED session (no second "start once
// connected" here). Callbacks from the entry and the session run on the
// completion thread; on_change is posted to the dispatcher in order.
class ElectionCore : public std::enable_shared_from_this<ElectionCore> {
 public:
  // The candidate's state.
  enum class Candidacy {
    kIdle,       // not joined (never, left, or ended by itself: see error_)
    kQueued,     // joined; our node waits in the queue (or for a session)
    kLeader,     // our node is first
    kSuspended,  // leader, but the session is disconnected
    kStopped,    // the LeaderElection is going away: no more Join()
  };
  static absl::string_view CandidacyName(Candidacy candidacy);

  ElectionCore(Session& session, std::string path, ElectionOptions options)
      : session_(session), path_(std::move(path)), options_(std::move(options)) {
    absl::MutexLock lock(&mu_);
    data_ = options_.data;
  }

  // Touches nothing of the session: a selector's thread may drop the last
  // reference after its owner (and the session) went; Shutdown() removed the
  // listener.
  ~ElectionCore() = default;

  absl::Status Join() ABSL_LOCKS_EXCLUDED(mu_);

  absl::Status Leave() ABSL_LOCKS_EXCLUDED(mu_);

  absl::Status Yield() ABSL_LOCKS_EXCLUDED(mu_);

  absl::Status SetData(std::string data) ABSL_LOCKS_EXCLUDED(mu_);

  // The take-over mark: our node's data written again, so that observers,
  // and a leader handing over, see that we lead now (LeaderInfo::taken_over:
  // version > 0). Asynchronous (we are on the completion thread; leading
  // does not wait for it); after a lost connection it is sent again once
  // connected, while the node lives. Written over the node's first version
  // only: once anything wrote the node (this mark, its reply lost, or
  // SetData) it is marked, and a mark sent again must not put older data
  // back over SetData's. Not sent under mu_ (src/zk_client.h). Not in a
  // dialect: a Curator LeaderLatch watching our node heeds only its
  // deletion, and a data change would use up its watch (it would never lead).
  void MarkTakenOver(std::string node, uint64_t generation) ABSL_LOCKS_EXCLUDED(mu_);

  // Our node now, or "" (to tell our own leadership from a successor's).
  std::string node_path() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return entry_ == nullptr ? "" : entry_->node_path();
  }

  // Stops on_change deliveries not yet run and waits for one running (the
  // owner is going away).
  void StopNotifying() { listener_gate_->Close(); }

  // Makes Join() fail and waiters return from now on; leaves if joined.
  // Stopped is for good: the session listener goes too, so that nothing of
  // the session is touched after this returns.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);

  bool joined() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return Joined();
  }
  // kLeader only within the session's lease: past it the server may have
  // expired us (say, after this process was paused) before any event says so.
  Leadership leadership() const ABSL_LOCKS_EXCLUDED(mu_);
  // Read with the state it belongs to (a term that ends in between is not
  // reported as current).
  int64_t epoch() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return candidacy_ == Candidacy::kLeader && WithinLease() ? epoch_ : 0;
  }

  absl::Status AwaitLeadership(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  // Waits while leadership of `epoch` is current; returns whether it still is.
  bool WaitWhileLeader(int64_t epoch, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  bool WithinLease() const { return CoreOf(session_)->WithinLease(); }

  const std::string& path() const { return path_; }
  const std::string& id() const { return options_.id; }
  Dialect dialect() const { return options_.dialect; }
  Session& session() const { return session_; }

 private:
  static Leadership LeadershipOf(Candidacy candidacy) {
    return candidacy == Candidacy::kLeader      ? Leadership::kLeader
           : candidacy == Candidacy::kSuspended ? Leadership::kSuspended
                                                : Leadership::kNotLeader;
  }
  bool Joined() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return candidacy_ == Candidacy::kQueued || candidacy_ == Candidacy::kLeader ||
           candidacy_ == Candidacy::kSuspended;
  }

  // Queues a new node. The entry waits by itself for a CONNECTED session —
  // one after `after_generation` if that is not 0 (that generation's session
  // was found lost: QueueEntry::Attempt::after_generation).
  void StartCandidate(uint64_t after_generation = 0) ABSL_LOCKS_EXCLUDED(mu_);

  // Gives up `entry`: deletes a queued node (returns once it is gone) or
  // releases a held one. The on_change notice a step-down deferred
  // (MoveTo's `defer_notice`) is posted once the delete is on its way.
  absl::Status Withdraw(std::shared_ptr<QueueEntry> entry);

  void OnStartDone(QueueEntry* entry, absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);

  void OnHeldState(QueueEntry* entry, LockState state) ABSL_LOCKS_EXCLUDED(mu_);

  void OnSessionState(SessionState state) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (state == SessionState::kClosed && Joined()) {
      EndCandidacy(absl::CancelledError(absl::StrCat("election ", path_, ": session closed")));
    }
  }

  // The candidacy can no longer succeed: not joined any more, and waiters
  // are told `why`.
  void EndCandidacy(absl::Status why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    MoveTo(Candidacy::kIdle, 0);
    entry_ = nullptr;
    error_ = std::move(why);
  }

  // The one place the state changes; on_change hears of every change of
  // leadership, the observer of every term (a term that ends says `why`).
  // `defer_notice`: a leader stepping down (Yield, Leave) posts its
  // on_change(kNotLeader) only once its node's delete is sent
  // (PostDeferredNoticeLocked), so that the dispatcher's wake-up does not
  // delay the successor's hand-over; any later move posts it first, so
  // on_change still hears every change in order.
  void MoveTo(Candidacy next, int64_t epoch, TermEnded::Why why = TermEnded::Why::kLost,
              bool defer_notice = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PostDeferredNoticeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Tells the session's observer of a term that ended and one that began
  // with the move from `before` (of `epoch_before`) to the current state.
  void ReportTerms(Candidacy before, int64_t epoch_before, TermEnded::Why why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Session& session_;
  const std::string path_;
  const ElectionOptions options_;
  const std::shared_ptr<CallbackGate> listener_gate_ = std::make_shared<CallbackGate>();

  mutable absl::Mutex mu_;
  Candidacy candidacy_ ABSL_GUARDED_BY(mu_) = Candidacy::kIdle;
  int64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;  // while kLeader / kSuspended
  std::shared_ptr<QueueEntry> entry_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);  // why the last candidacy ended by itself
  std::string data_ ABSL_GUARDED_BY(mu_);  // what we publish (options_.data, SetData)
  int listener_id_ ABSL_GUARDED_BY(mu_) = 0;
  // The on_change notice of the last move, not posted yet: a step-down's
  // until its delete is sent (MoveTo's defer_notice); else none.
  std::optional<Leadership> deferred_notice_ ABSL_GUARDED_BY(mu_);
  // Yield()'s removal of the leader's node in flight, and the outcome of
  // the last one: a Leave() meanwhile (which finds no entry: Yield took it)
  // returns only once that node is gone, with that outcome.
  int yield_withdrawals_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status yield_withdrawn_ ABSL_GUARDED_BY(mu_);
  // Monotonic, observed sessions only: when the current wait in the queue,
  // or the current term, began.
  absl::Duration since_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_ELECTION_CORE_H_
