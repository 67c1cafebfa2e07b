// zkr::StdMutex and zkr::StdSharedMutex: an ExclusiveLock or a SharedLock
// behind the standard library's mutex interface, so that std::unique_lock,
// std::scoped_lock, std::lock_guard and std::shared_lock work with them.
//
// They exclude the threads of this process from each other too (a local
// mutex is taken first, then the ZooKeeper lock), as a std::mutex would;
// the lock objects they wrap, by contrast, are reentrant for every thread
// that shares them. Not reentrant: lock() twice on one thread deadlocks, as
// with std::mutex.
//
// Failures. The standard interface has no room for a status, so:
//   * lock() and lock_shared() throw zkr::LockError (a std::system_error
//     whose status() is the reason) when the lock cannot be had — session
//     lost or closed, node vanished. Returning from lock() without the
//     lock would let the caller run unprotected, the one outcome a lock
//     must never allow; std::mutex::lock() throws for the same reason.
//   * try_lock(), try_lock_for(), try_lock_until() (and the _shared forms)
//     return false, and status() says why: DeadlineExceeded when another
//     holder kept it, anything else for a failure. They never throw.
//   * unlock() releases as LockGuard::Release() does (the delete is retried
//     until the session ends) and keeps a failure in status(); it never
//     throws, as destructors call it.
// For fencing tokens, loss signals and guarded writes, use guard() while
// holding, or the lock objects' own API. (The locking members hold a local
// mutex from one call to the next, which the thread-safety analysis cannot
// follow; they are marked as not analysed.)
//
// Thread safety: safe for concurrent use by any number of threads; as with
// std::mutex, unlock() comes from the thread that locked.
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

  void lock() ABSL_NO_THREAD_SAFETY_ANALYSIS;
  bool try_lock();
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return TryLockFor(absl::FromChrono(timeout));
  }
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return TryLockFor(absl::FromChrono(deadline - Clock::now()));
  }
  void unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS;

  // Why the last lock attempt or unlock() failed; OK after a success.
  absl::Status status() const ABSL_LOCKS_EXCLUDED(state_mu_);
  // The hold, for its fencing token and state. REQUIRES: held.
  const LockGuard& guard() const ABSL_LOCKS_EXCLUDED(state_mu_);

 private:
  bool TryLockFor(absl::Duration timeout) ABSL_NO_THREAD_SAFETY_ANALYSIS;

  ExclusiveLock& lock_;
  absl::Mutex local_;  // excludes this process's threads; held while we hold
  mutable absl::Mutex state_mu_;
  std::optional<LockGuard> guard_ ABSL_GUARDED_BY(state_mu_);
  absl::Status status_ ABSL_GUARDED_BY(state_mu_);
};

class StdSharedMutex {
 public:
  explicit StdSharedMutex(SharedLock& lock) : lock_(lock) {}
  StdSharedMutex(const StdSharedMutex&) = delete;
  StdSharedMutex& operator=(const StdSharedMutex&) = delete;

  // The write side.
  void lock() ABSL_NO_THREAD_SAFETY_ANALYSIS;
  bool try_lock();
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return TryLockFor(absl::FromChrono(timeout), /*write=*/true);
  }
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return TryLockFor(absl::FromChrono(deadline - Clock::now()), /*write=*/true);
  }
  void unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS;

  // The read side: this process's readers share one read hold (one node).
  void lock_shared() ABSL_NO_THREAD_SAFETY_ANALYSIS;
  bool try_lock_shared();
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& timeout) {
    return TryLockFor(absl::FromChrono(timeout), /*write=*/false);
  }
  template <class Clock, class Duration>
  bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return TryLockFor(absl::FromChrono(deadline - Clock::now()), /*write=*/false);
  }
  void unlock_shared() ABSL_NO_THREAD_SAFETY_ANALYSIS;

  // As StdMutex::status().
  absl::Status status() const ABSL_LOCKS_EXCLUDED(state_mu_);

 private:
  bool TryLockFor(absl::Duration timeout, bool write) ABSL_NO_THREAD_SAFETY_ANALYSIS;
  void Unlock(bool write) ABSL_NO_THREAD_SAFETY_ANALYSIS;

  SharedLock& lock_;
  absl::Mutex local_;  // writer: exclusive; readers: shared
  mutable absl::Mutex state_mu_;
  std::optional<LockGuard> write_guard_ ABSL_GUARDED_BY(state_mu_);
  std::vector<LockGuard> read_guards_ ABSL_GUARDED_BY(state_mu_);  // one per local reader
  absl::Status status_ ABSL_GUARDED_BY(state_mu_);
};

}  // namespace zkr

#endif  // ZKRECIPES_STD_LOCK_H_
