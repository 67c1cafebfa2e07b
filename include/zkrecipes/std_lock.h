// zkr::StdMutex and zkr::StdSharedMutex: an ExclusiveLock or a SharedLock
// behind the standard library's mutex interface, so that std::unique_lock,
// std::scoped_lock, std::lock_guard and std::shared_lock work with them.
//
// Threads of this process that share one adapter exclude each other as
// they would with std::mutex / std::shared_mutex (the lock objects they
// wrap, by contrast, are reentrant for every thread that shares them):
//   * one thread at a time holds StdMutex, or the write side of
//     StdSharedMutex; while it holds (or is acquiring), no other thread of
//     this process is in.
//   * StdSharedMutex's readers in this process share one read hold (one
//     node): the first queues for it, the others wait for its outcome and
//     then join it; the node goes with the last of them. (Once that hold
//     is LOST, the next reader queues a fresh node, and unlocks by the
//     readers of the lost hold never delete it.) A local writer
//     waiting keeps later local readers out (as the queue does across
//     processes), and waits for the local readers to leave.
//   * try_lock() and try_lock_shared() never wait for another thread of
//     this process: false at once (DeadlineExceeded) if one holds or is
//     acquiring — except that a reader joins a read hold already held —
//     otherwise one try at the lock (TryAcquire: a round trip; at most the
//     connect timeout when no server answers). So std::lock and
//     std::scoped_lock over several adapters, in any order on any threads,
//     cannot deadlock among this process's threads.
//   * try_lock_for(d) and try_lock_until() (and the _shared forms) wait at
//     most d in all, for this process's threads and the lock together
//     (measured on the monotonic clock; any d, however large, waits), plus
//     one exchange with the server when d is used up: a last try if the
//     local wait took it all, or the removal of the queue node they leave
//     behind (a round trip; with the connection down, at most the connect
//     timeout, or one session timeout).
//   * lock() and lock_shared() wait without bound.
// Not reentrant: lock() twice on one thread deadlocks, as with std::mutex.
//
// Failures. The standard interface has no room for a status, so:
//   * lock() and lock_shared() throw zkr::LockError (a std::system_error
//     whose status() is the reason) when the lock cannot be had — session
//     lost or closed, node vanished, or (lock_shared() while other threads
//     of this process hold the read lock) that shared hold reads SUSPENDED,
//     so it may be lost already (Unavailable). Returning from lock()
//     without the lock would let the caller run unprotected, the one
//     outcome a lock must never allow; std::mutex::lock() throws for the
//     same reason.
//   * try_lock(), try_lock_for(), try_lock_until() (and the _shared forms)
//     return false, and status() says why: DeadlineExceeded when another
//     holder (here or elsewhere) kept it, anything else for a failure. They
//     never throw.
//   * unlock() releases as LockGuard::Release() does (the delete is retried
//     until the session ends) and keeps a failure in status(); it never
//     throws, as destructors call it.
// For fencing tokens, loss signals and guarded writes, use guard() while
// holding, or the lock objects' own API.
//
// Thread safety: safe for concurrent use by any number of threads; as with
// std::mutex, unlock() comes from the thread that locked. status() is the
// adapter's last outcome, whichever thread's.
// REQUIRES: the wrapped lock outlives the adapter; the adapter is not held
// when destroyed.
//
// Example:
//   auto lock = zkr::ExclusiveLock::Create(*session, "/locks/orders");
//   zkr::StdMutex mutex(**lock);
//   {
//     std::unique_lock<zkr::StdMutex> held(mutex, std::chrono::seconds(10));
//     if (!held.owns_lock()) return mutex.status();  // DeadlineExceeded: busy
//     Write(mutex.guard().fencing_token());
//   }
#ifndef ZKRECIPES_STD_LOCK_H_
#define ZKRECIPES_STD_LOCK_H_

#include <chrono>
#include <optional>
#include <system_error>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {

namespace internal {
// The time left until `deadline` on its own clock, without overflow: each
// side is converted alone and absl::Duration saturates, so a deadline long
// past (time_point::min()) is negative and one far ahead is not wrapped.
template <class Clock, class Duration>
absl::Duration TimeLeft(const std::chrono::time_point<Clock, Duration>& deadline) {
  return absl::FromChrono(deadline.time_since_epoch()) -
         absl::FromChrono(Clock::now().time_since_epoch());
}
}  // namespace internal

// Thrown by StdMutex::lock() and StdSharedMutex::lock()/lock_shared().
class LockError : public std::system_error {
 public:
  explicit LockError(absl::Status status);
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

class StdMutex {
 public:
  explicit StdMutex(ExclusiveLock& lock) : lock_(lock) {}
  StdMutex(const StdMutex&) = delete;
  StdMutex& operator=(const StdMutex&) = delete;

  void lock() ABSL_LOCKS_EXCLUDED(mu_);
  bool try_lock() ABSL_LOCKS_EXCLUDED(mu_);
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return TryLockFor(absl::FromChrono(timeout));
  }
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return TryLockFor(internal::TimeLeft(deadline));
  }
  void unlock() ABSL_LOCKS_EXCLUDED(mu_);

  // Why the last lock attempt or unlock() failed; OK after a success.
  absl::Status status() const ABSL_LOCKS_EXCLUDED(mu_);
  // The hold, for its fencing token and state. REQUIRES: held.
  const LockGuard& guard() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  bool TryLockFor(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  bool Free() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !taken_; }

  ExclusiveLock& lock_;
  mutable absl::Mutex mu_;  // never held while waiting for the server
  // A thread of this process holds, or is acquiring: the others stay out.
  bool taken_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<LockGuard> guard_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

class StdSharedMutex {
 public:
  explicit StdSharedMutex(SharedLock& lock) : lock_(lock) {}
  StdSharedMutex(const StdSharedMutex&) = delete;
  StdSharedMutex& operator=(const StdSharedMutex&) = delete;

  // The write side.
  void lock() ABSL_LOCKS_EXCLUDED(mu_);
  bool try_lock() ABSL_LOCKS_EXCLUDED(mu_);
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return TryLockFor(absl::FromChrono(timeout), /*write=*/true);
  }
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return TryLockFor(internal::TimeLeft(deadline), /*write=*/true);
  }
  void unlock() ABSL_LOCKS_EXCLUDED(mu_);

  // The read side: this process's readers share one read hold (one node).
  void lock_shared() ABSL_LOCKS_EXCLUDED(mu_);
  bool try_lock_shared() ABSL_LOCKS_EXCLUDED(mu_);
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& timeout) {
    return TryLockFor(absl::FromChrono(timeout), /*write=*/false);
  }
  template <class Clock, class Duration>
  bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return TryLockFor(internal::TimeLeft(deadline), /*write=*/false);
  }
  void unlock_shared() ABSL_LOCKS_EXCLUDED(mu_);

  // As StdMutex::status().
  absl::Status status() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  bool TryLockFor(absl::Duration timeout, bool write) ABSL_LOCKS_EXCLUDED(mu_);
  void Unlock(bool write) ABSL_LOCKS_EXCLUDED(mu_);
  // Nobody of this process holds or acquires (a writer may enter).
  bool WriterMayEnter() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !writer_ && !reader_acquiring_ && readers_ == 0;
  }
  // No local writer in or waiting, and no local reader acquiring (a reader
  // may take the read hold, or join it).
  bool ReaderMayEnter() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !writer_ && !reader_acquiring_ && writers_waiting_ == 0;
  }

  SharedLock& lock_;
  mutable absl::Mutex mu_;  // never held while waiting for the server
  bool writer_ ABSL_GUARDED_BY(mu_) = false;  // a local writer holds or is acquiring
  int writers_waiting_ ABSL_GUARDED_BY(mu_) = 0;  // local writers waiting for the others
  // A local reader is acquiring the read hold: the others wait, then join.
  bool reader_acquiring_ ABSL_GUARDED_BY(mu_) = false;
  int readers_ ABSL_GUARDED_BY(mu_) = 0;  // local readers holding (or releasing)
  std::optional<LockGuard> write_guard_ ABSL_GUARDED_BY(mu_);
  // One per local reader: on one node, or after a lost hold also on the
  // fresh node a later reader queued (Unlock drops lost ones first).
  std::vector<LockGuard> read_guards_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace zkr

#endif  // ZKRECIPES_STD_LOCK_H_
