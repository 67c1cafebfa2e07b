// LockHold: one granted queue node of a lock or semaphore and the guards
// counting on it; the last guard's release deletes the node. The public
// guards (zkrecipes/lock_guard.h) are thin faces over it, made by LockCore.
#ifndef ZKRECIPES_RECIPES_LOCK_HOLD_H_
#define ZKRECIPES_RECIPES_LOCK_HOLD_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "recipes/queue_entry.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace internal {

// One granted queue node and the read/write guards counting on it.
// Thread-safe.
class LockHold : public std::enable_shared_from_this<LockHold> {
 public:
  LockHold(Session& session, std::string lock_path, std::shared_ptr<QueueEntry> entry);

  // Counts the first guard of a new hold.
  void CountFirstGuard(bool write) ABSL_LOCKS_EXCLUDED(mu_);
  // Reentry: counts one more guard on this hold, in the same step as the
  // check that some guard still counts on it and that it is HELD: true;
  // false once the last guard let go or the hold is lost (queue a fresh
  // node); FailedPrecondition for a write on a read-only hold; Unavailable
  // while the hold reads SUSPENDED (it may be lost already).
  absl::StatusOr<bool> CountReentry(bool write, absl::string_view what)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Some guard still counts on this hold, and it is not lost.
  bool InUse() const ABSL_LOCKS_EXCLUDED(mu_);
  // Drops one guard's count; the last one deletes the node (and waits).
  absl::Status ReleaseOne(bool write) ABSL_LOCKS_EXCLUDED(mu_);
  // The same; `done` runs on the dispatcher thread.
  void ReleaseOneAsync(bool write, std::function<void(absl::Status)> done)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The same, but a last guard's release is begun and returned, not sent
  // (LockCore::ReleaseTogether sends several in one transaction:
  // QueueEntry::ReleaseJointly); nullopt when nothing is to be sent (other
  // guards still count, or not held: `done` has run then).
  std::optional<QueueEntry::PendingRelease> StartReleaseOne(
      bool write, std::function<void(absl::Status)> done) ABSL_LOCKS_EXCLUDED(mu_);

  LockState state() const { return entry_->state(); }
  int64_t fencing_token() const { return entry_->fencing_token(); }
  std::string node_path() const { return entry_->node_path(); }
  const std::string& lock_path() const { return lock_path_; }
  absl::Time valid_until() const;
  absl::StatusOr<std::vector<OpResult>> GuardedMulti(std::vector<Op> ops);

 private:
  // `done` runs inline or on the completion thread; `caller_waits`: the
  // caller blocks until it has run (QueueEntry::Release).
  void ReleaseOneInline(bool write, bool caller_waits, std::function<void(absl::Status)> done)
      ABSL_LOCKS_EXCLUDED(mu_);

  Session& session_;
  const std::string lock_path_;
  const std::shared_ptr<QueueEntry> entry_;
  mutable absl::Mutex mu_;
  int reads_ ABSL_GUARDED_BY(mu_) = 0;
  int writes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_LOCK_HOLD_H_
