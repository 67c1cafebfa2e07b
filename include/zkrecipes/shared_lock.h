// zkr::SharedLock: a read/write lock shared by processes on many machines.
//
// Any number of readers, or one writer, hold the lock at a time. Waiters are
// served in arrival order (FIFO by ZooKeeper sequence number): a writer is
// never starved by readers that arrive after it. Herd-free: a waiting reader
// watches only the last writer before it, a waiting writer only its direct
// predecessor, so one release wakes only those who can proceed.
//
// A SharedLock object is one participant. Re-acquiring through the same
// object while it holds increments a count (reentrancy); each acquisition
// returns its own LockGuard. While the hold reads SUSPENDED (it may be lost
// already) re-acquiring is refused with Unavailable. Holding write,
// AcquireRead() downgrades: the read hold keeps the write node's place, so a
// writer already waiting cannot get in (readers queued behind keep waiting
// until the last hold is released).
// Holding only read, AcquireWrite() is refused (FailedPrecondition): an
// upgrade deadlocks. Threads that must exclude each other use separate lock
// objects. Guards, not threads, own holds: a guard may be moved to and
// released from another thread.
//
// A lock (SharedLock, ExclusiveLock, a MultiLock part) and a Semaphore
// cannot share a path: a participant that finds a semaphore's node earliest
// in the queue is refused (FailedPrecondition naming the path; it leaves no
// node); one queued behind a semaphore node that is not the earliest waits
// for it to go (zkrecipes/semaphore.h).
//
// Thread safety: safe for concurrent use. Blocking calls wait on the calling
// thread; AcquireReadAsync/AcquireWriteAsync completions and
// LockOptions::on_state_change run on the session's dispatcher thread.
// REQUIRES: the Session outlives the lock object and all its guards.
//
// Example:
//   auto lock = zkr::SharedLock::Create(*session, "/locks/orders");
//   if (!lock.ok()) return lock.status();
//   absl::StatusOr<zkr::LockGuard> read = (*lock)->AcquireRead(absl::Seconds(10));
//   if (!read.ok()) return read.status();   // DeadlineExceeded after 10s
//   ... read the orders table, passing read->fencing_token() along ...
#ifndef ZKRECIPES_SHARED_LOCK_H_
#define ZKRECIPES_SHARED_LOCK_H_

#include <functional>
#include <future>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/session.h"

namespace zkr {

namespace internal {
class LockCore;
}  // namespace internal

class SharedLock {
 public:
  // Validates `path` (InvalidArgument naming it). Creates nothing yet: the
  // lock directory (a container node) appears on first acquisition and
  // vanishes when no participant is left.
  static absl::StatusOr<std::unique_ptr<SharedLock>> Create(Session& session, std::string path,
                                                            LockOptions options = {});
  SharedLock(const SharedLock&) = delete;
  SharedLock& operator=(const SharedLock&) = delete;
  // Cancels a pending acquisition. Guards already handed out stay valid.
  ~SharedLock();

  // Waits up to `timeout` for the read (write) lock; a zero (or negative)
  // timeout tries once, exactly as TryAcquireRead (TryAcquireWrite): it
  // acquires a free lock and fails only if it is held. Errors: DeadlineExceeded
  // (not acquired in time; our queue node is deleted before this returns,
  // or, with the connection down, deleted in the background once it is
  // back, waiting at most one session timeout), Cancelled (Cancel(), same),
  // Aborted with IsSessionLost() (session lost while waiting; or "vanished
  // while waiting" if the expiry's delete of our node is heard first),
  // FailedPrecondition (upgrade, or another acquisition of this object in
  // progress, or closed session), PermissionDenied (ACL), others as Session.
  absl::StatusOr<LockGuard> AcquireRead(absl::Duration timeout = absl::InfiniteDuration());
  absl::StatusOr<LockGuard> AcquireWrite(absl::Duration timeout = absl::InfiniteDuration());
  // Acquires only if possible without waiting; DeadlineExceeded otherwise.
  // Reads the queue first and creates no node when it cannot win.
  absl::StatusOr<LockGuard> TryAcquireRead();
  absl::StatusOr<LockGuard> TryAcquireWrite();
  // Asynchronous forms: return at once; `done` runs on the dispatcher thread.
  // Use Cancel() to give up. An empty `done` starts nothing (nobody would
  // hear of the outcome).
  void AcquireReadAsync(std::function<void(absl::StatusOr<LockGuard>)> done);
  void AcquireWriteAsync(std::function<void(absl::StatusOr<LockGuard>)> done);
  // The async forms as futures, for code that composes; Cancel() ends them.
  std::future<absl::StatusOr<LockGuard>> AcquireReadFuture();
  std::future<absl::StatusOr<LockGuard>> AcquireWriteFuture();
  // Cancels the pending acquisition (blocking or async) of this object, from
  // any thread: it completes with Cancelled and its node is deleted.
  void Cancel();

  const std::string& path() const;

 private:
  explicit SharedLock(std::shared_ptr<internal::LockCore> core);
  std::shared_ptr<internal::LockCore> core_;
};

}  // namespace zkr

#endif  // ZKRECIPES_SHARED_LOCK_H_
