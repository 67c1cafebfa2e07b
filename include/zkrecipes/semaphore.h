// zkr::Semaphore: N leases on one path, shared by processes on many machines
// (a counting semaphore; Curator's InterProcessSemaphoreV2).
//
// A participant asks for k of the N leases and holds them all or none.
// Strict FIFO: a participant holds when the leases asked by everyone queued
// before it, plus its own k, fit in N, so a large request is never passed
// by later small ones (no starvation). Herd-free: the first waiter watches
// the nodes before it, each later waiter only the one before it, so a
// release wakes only the waiter it lets in, and that waiter's acquisition
// wakes only the next one (tests/model/semaphore.pml checks the rule).
//
// The size N is part of every participant's node name ("...-S<k>of<N>-"):
// a participant whose N differs from a participant queued before it is
// refused with FailedPrecondition naming both (Curator mixes them silently).
//
// A lock and a semaphore cannot share a path: the earliest node in the
// queue says whose the path is, and a participant that finds a lock's node
// earliest is refused (FailedPrecondition naming the path; it leaves no
// node), as is a lock participant that finds a semaphore's. A node of the
// other kind queued before a participant but not the earliest (one about to
// be refused) is waited for: the participant is never granted beside it.
// Once a participant has waited it is not refused later.
//
// A Semaphore object is one participant: it holds at most one grant (of k
// leases) at a time; asking again while it holds is refused
// (FailedPrecondition) — use another object for another grant. The grant is
// a LockGuard with the same guarantees as a lock's (zkrecipes/lock_guard.h):
// state and loss signal, lease clock (valid_until), fencing token (the
// czxid of its node, growing across successive grants), guarded writes,
// guaranteed delete on release, protected create.
//
// Thread safety: safe for concurrent use. Blocking calls wait on the calling
// thread; AcquireAsync completions and LockOptions::on_state_change run on
// the session's dispatcher thread.
// REQUIRES: the Session outlives the semaphore object and all its guards.
//
// Example:
//   auto pool = zkr::Semaphore::Create(*session, "/limits/db-connections", 4);
//   if (!pool.ok()) return pool.status();
//   absl::StatusOr<zkr::LockGuard> lease = (*pool)->Acquire(1, absl::Seconds(30));
//   if (!lease.ok()) return lease.status();
//   RunQuery(lease->fencing_token());  // released when `lease` goes
#ifndef ZKRECIPES_SEMAPHORE_H_
#define ZKRECIPES_SEMAPHORE_H_

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

class Semaphore {
 public:
  // Validates `path` and `leases` (1 to 1,000,000; InvalidArgument naming
  // the value). Creates nothing until the first acquisition.
  static absl::StatusOr<std::unique_ptr<Semaphore>> Create(Session& session, std::string path,
                                                           int leases, LockOptions options = {});
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;
  // Cancels a pending acquisition. Guards already handed out stay valid.
  ~Semaphore();

  // Waits up to `timeout` for `count` leases (1..leases(), else
  // InvalidArgument); a zero timeout tries once. Errors as
  // SharedLock::AcquireWrite, plus FailedPrecondition for a participant
  // queued before us with another number of leases, or for a second grant
  // through this object.
  absl::StatusOr<LockGuard> Acquire(int count = 1,
                                    absl::Duration timeout = absl::InfiniteDuration());
  // Acquires only if `count` leases are free now; DeadlineExceeded otherwise.
  // Reads the queue first and creates no node when they are not.
  absl::StatusOr<LockGuard> TryAcquire(int count = 1);
  // Returns at once; `done` runs on the dispatcher thread. Cancel() gives up.
  // An empty `done` starts nothing.
  void AcquireAsync(int count, std::function<void(absl::StatusOr<LockGuard>)> done);
  std::future<absl::StatusOr<LockGuard>> AcquireFuture(int count = 1);
  void Cancel();

  const std::string& path() const;
  int leases() const { return leases_; }

 private:
  Semaphore(std::shared_ptr<internal::LockCore> core, int leases);
  // InvalidArgument unless 1 <= count <= leases().
  absl::Status CheckCount(int count) const;
  std::shared_ptr<internal::LockCore> core_;
  const int leases_;
};

}  // namespace zkr

#endif  // ZKRECIPES_SEMAPHORE_H_
