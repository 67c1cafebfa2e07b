// zkr::ExclusiveLock: a mutual-exclusion lock across processes and machines.
//
// The same queue as SharedLock where every participant is a writer, so an
// ExclusiveLock and the write side of a SharedLock on one path exclude each
// other. FIFO, herd-free (each waiter watches only its direct predecessor),
// reentrant through the same object (refused with Unavailable while the hold
// reads SUSPENDED), fencing tokens, lock-loss signalling and guarded writes
// as described in zkrecipes/lock_guard.h.
//
// Thread safety: safe for concurrent use. AcquireAsync completions and
// LockOptions::on_state_change run on the session's dispatcher thread.
// REQUIRES: the Session outlives the lock object and all its guards.
//
// Example:
//   auto lock = zkr::ExclusiveLock::Create(*session, "/locks/nightly-report");
//   if (!lock.ok()) return lock.status();
//   absl::StatusOr<zkr::LockGuard> guard = (*lock)->TryAcquire();
//   if (absl::IsDeadlineExceeded(guard.status())) return;  // someone else runs it
//   if (!guard.ok()) return guard.status();
//   RunReport(guard->fencing_token());
#ifndef ZKRECIPES_EXCLUSIVE_LOCK_H_
#define ZKRECIPES_EXCLUSIVE_LOCK_H_

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

class ExclusiveLock {
 public:
  // Validates `path`; creates nothing until the first acquisition.
  static absl::StatusOr<std::unique_ptr<ExclusiveLock>> Create(Session& session, std::string path,
                                                               LockOptions options = {});
  ExclusiveLock(const ExclusiveLock&) = delete;
  ExclusiveLock& operator=(const ExclusiveLock&) = delete;
  ~ExclusiveLock();

  // As SharedLock::AcquireWrite / TryAcquireWrite / AcquireWriteAsync.
  absl::StatusOr<LockGuard> Acquire(absl::Duration timeout = absl::InfiniteDuration());
  absl::StatusOr<LockGuard> TryAcquire();
  void AcquireAsync(std::function<void(absl::StatusOr<LockGuard>)> done);
  // AcquireAsync as a future, for code that composes; Cancel() ends it too.
  std::future<absl::StatusOr<LockGuard>> AcquireFuture();
  void Cancel();

  const std::string& path() const;

 private:
  explicit ExclusiveLock(std::shared_ptr<internal::LockCore> core);
  std::shared_ptr<internal::LockCore> core_;
};

}  // namespace zkr

#endif  // ZKRECIPES_EXCLUSIVE_LOCK_H_
