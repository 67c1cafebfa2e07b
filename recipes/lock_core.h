// LockCore: what SharedLock, ExclusiveLock and Semaphore share — one participant's
// acquisitions (blocking, try, async, cancel), reentrancy and downgrade on top
// of QueueEntry; it hands out the guards over a LockHold (recipes/lock_hold.h).
#ifndef ZKRECIPES_RECIPES_LOCK_CORE_H_
#define ZKRECIPES_RECIPES_LOCK_CORE_H_

#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "recipes/lock_hold.h"
#include "recipes/queue_entry.h"
#include "zkrecipes/lock_options.h"
#include "zkrecipes/session.h"

namespace zkr {

// The public guard (zkrecipes/lock_guard.h) the core hands out: named
// here, defined above this header's includes.
class LockGuard;

namespace internal {

class LockCore : public std::enable_shared_from_this<LockCore> {
 public:
  // `leases` > 0: a semaphore of that many leases (acquired with kLease).
  // `kind`: which recipe's names the lock speaks in options.dialect.
  static absl::StatusOr<std::shared_ptr<LockCore>> Create(
      Session& session, std::string path, LockOptions options, int leases = 0,
      QueueKind kind = QueueKind::kSharedLock);
  // The lock object is going away: cancels a pending acquisition and
  // refuses new ones (Cancelled).
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);

  // `weight`: the leases a kLease acquisition asks.
  absl::StatusOr<LockGuard> Acquire(NodeMode mode, absl::Duration timeout, bool try_only,
                                    int weight = 1) ABSL_LOCKS_EXCLUDED(mu_);
  // What an internal caller (the multi-lock) asks of an async attempt
  // beyond a public one.
  struct AsyncHooks {
    // QueueEntry::Attempt::on_wait: called once if the attempt must queue
    // behind a holder (completion thread; must not block).
    std::function<void()> on_wait;
    // A failed or abandoned attempt's `done` runs once its node is gone
    // (QueueEntry::WhenCleaned) — or its session is — not before.
    bool failure_when_cleaned = false;
    // `done` runs where the outcome is heard (the completion thread, or
    // inline in Cancel()'s caller), not on the dispatcher: it must not
    // block, and must not drop a guard (its destructor waits).
    bool done_inline = false;
    // The create of the attempt's node goes into this transaction if it
    // takes it (QueueEntry::Start).
    std::shared_ptr<JointCreate> joint_create;
  };
  void AcquireAsync(NodeMode mode, std::function<void(absl::StatusOr<LockGuard>)> done,
                    int weight, AsyncHooks hooks) ABSL_LOCKS_EXCLUDED(mu_);
  void AcquireAsync(NodeMode mode, std::function<void(absl::StatusOr<LockGuard>)> done,
                    int weight = 1) ABSL_LOCKS_EXCLUDED(mu_) {
    AcquireAsync(mode, std::move(done), weight, AsyncHooks());
  }
  // Releases `guards` together: every delete sent at once, then waits for
  // them all (as LockGuard::Release each: the first error once all were
  // tried). Any thread, the dispatcher's included (nothing is delivered
  // there). The guards are empty when it returns.
  static absl::Status ReleaseTogether(std::vector<LockGuard>& guards);
  void Cancel() ABSL_LOCKS_EXCLUDED(mu_);
  // Completes an async acquisition refused before it began: `done(status)`
  // on the dispatcher thread, as every completion.
  void FailAsync(std::function<void(absl::StatusOr<LockGuard>)> done, absl::Status status);
  const std::string& path() const { return settings_->dir; }

 private:
  LockCore(Session& session, std::string path, LockOptions options, int leases,
           NodeScheme scheme);
  // A guard on the current hold (reentrancy, downgrade), an error (upgrade,
  // a semaphore object that holds already, or an acquisition already in
  // progress), or nullopt: queue a new node.
  std::optional<absl::StatusOr<LockGuard>> Reenter(NodeMode mode) ABSL_LOCKS_EXCLUDED(mu_);
  // A new attempt, registered as pending; FailedPrecondition if one is.
  absl::StatusOr<std::shared_ptr<QueueEntry>> NewEntry(NodeMode mode, bool try_only, int weight,
                                                       std::function<void()> on_wait = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SessionClosed(NodeMode mode) const;
  // A failed attempt's status, its message naming what it acquires.
  absl::Status Named(NodeMode mode, absl::Status status) const;
  // An asynchronous acquisition's outcome to `done`: inline (AsyncHooks::
  // done_inline) or on the dispatcher.
  void Tell(bool done_inline, const std::function<void(absl::StatusOr<LockGuard>)>& done,
            absl::StatusOr<LockGuard> result);
  // Turns a finished attempt into a guard (or its error).
  absl::StatusOr<LockGuard> Complete(const std::shared_ptr<QueueEntry>& entry,
                                     absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  // A guard on `hold` (counted there already): only the core makes them.
  static LockGuard GuardOn(std::shared_ptr<LockHold> hold, bool write);

  Session& session_;
  // What its attempts share, the path among it (path()).
  const std::shared_ptr<const QueueEntry::Settings> settings_;
  // The options' callbacks (the rest are in settings_).
  const std::function<void(LockState)> on_state_change_;
  const std::function<void(const RevokeRequest&)> on_revoke_request_;
  absl::Mutex mu_;
  std::weak_ptr<LockHold> hold_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<QueueEntry> pending_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

// LockCore::AcquireAsync as a future: the completion (on the dispatcher
// thread) fulfils a promise it shares.
std::future<absl::StatusOr<LockGuard>> AcquireAsFuture(LockCore& core, NodeMode mode,
                                                       int weight = 1);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_LOCK_CORE_H_
