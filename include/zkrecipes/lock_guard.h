// zkr::LockGuard: one hold of a zkrecipes lock (SharedLock or ExclusiveLock).
//
// A guard is the proof of a hold. It releases on destruction; it may be moved
// to, and released from, any thread (ownership belongs to the guard, not to
// the thread that acquired it). A guard is not safe for concurrent use by
// several threads without external synchronisation; distinct guards are.
//
// What "held" means: ZooKeeper grants the hold through an ephemeral node of
// this process's session. If the session is SUSPENDED (disconnected) the
// hold is kSuspended: it may already be lost — stop acting on it, or act only
// through fencing tokens or GuardedMulti(). On RECONNECTED the lock re-checks
// that its node still exists and belongs to the current session before it
// reports kHeld again. If the session is LOST, or the node is deleted by
// someone else, the hold is kLost for good: acquire again.
//
// Fencing: fencing_token() is the czxid of the hold's node. Successive
// holders of a lock get strictly increasing tokens (also after the lock
// directory was deleted and re-created). A protected resource remembers the
// highest token it has seen and rejects requests carrying a lower one; that is
// what makes a paused or partitioned former holder harmless.
//
// Example:
//   absl::StatusOr<zkr::LockGuard> guard = lock->AcquireWrite(absl::Seconds(5));
//   if (!guard.ok()) return guard.status();
//   storage.Write(key, value, /*fence=*/guard->fencing_token());
//   // released when `guard` goes out of scope
#ifndef ZKRECIPES_LOCK_GUARD_H_
#define ZKRECIPES_LOCK_GUARD_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "zkrecipes/lock_options.h"
#include "zkrecipes/session.h"
#include "zkrecipes/types.h"

namespace zkr {

namespace internal {
class LockCore;
class LockHold;
}  // namespace internal

class LockGuard {
 public:
  // An empty guard: holds nothing.
  LockGuard();
  LockGuard(LockGuard&& other) noexcept;
  // Releases what this guard held, then takes `other`'s hold.
  LockGuard& operator=(LockGuard&& other) noexcept;
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;
  // Release()s if still held.
  ~LockGuard();

  // True while state() is kHeld.
  bool held() const;
  LockState state() const;
  // True for a write/exclusive hold, false for a read hold.
  bool is_write() const;
  // The czxid of the hold's node (0 for an empty guard).
  int64_t fencing_token() const;
  // The session's lease clock while held or suspended; InfinitePast after
  // loss or release.
  absl::Time valid_until() const;
  // The full path of the hold's node (shared by reentrant holds).
  std::string node_path() const;
  // The lock's path.
  std::string lock_path() const;

  // Releases this hold. When it was the last hold on the node (reentrancy,
  // downgrade), the node is deleted; if the connection is down the delete is
  // retried after reconnecting, and this waits for it (at most until the
  // session's lease runs out). FailedPrecondition if already released or
  // empty. Releasing a lost hold returns OK (nothing is left to delete).
  absl::Status Release();
  // The same without waiting: `done` runs on the session's dispatcher thread
  // once the node is deleted (or at once, with FailedPrecondition, if this
  // guard holds nothing). The guard is empty when this returns.
  void ReleaseAsync(std::function<void(absl::Status)> done);

  // Runs `ops` atomically, only if this hold's node still exists: a check on
  // the node is prepended, so the server itself rejects the writes of a holder
  // that lost the lock. FailedPrecondition (naming the node) when the check
  // fails or the hold is not current; otherwise as Session::Multi. The results
  // do not include the check.
  absl::StatusOr<std::vector<OpResult>> GuardedMulti(std::vector<Op> ops);

 private:
  friend class internal::LockCore;  // makes the guards
  LockGuard(std::shared_ptr<internal::LockHold> hold, bool write);

  std::shared_ptr<internal::LockHold> hold_;
  bool write_ = false;
};

}  // namespace zkr

#endif  // ZKRECIPES_LOCK_GUARD_H_
