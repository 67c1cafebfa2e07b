// zkr::MultiLock: several locks, of mixed modes, taken all or none
// (Curator's InterProcessMultiLock, Redisson's MultiLock).
//
// The parts are taken one after another in one canonical order — by path,
// byte-wise — whatever order the caller gave, so two MultiLocks over
// overlapping sets cannot deadlock (each waits only for parts after those
// it holds). One deadline covers the whole set. When a part cannot be taken
// (timeout, cancel, error), the parts already taken are released, each with
// the guaranteed delete, before Acquire returns: nothing is left held.
// Each part is a SharedLock participant on its path, so a part excludes and
// is excluded by SharedLock/ExclusiveLock holders there as they would be.
//
// The grant is a MultiLockGuard: it reports kLost once any part is lost,
// kSuspended while any part is suspended, and keeps each part's fencing
// token (a token is per lock: a resource guarded by lock A checks A's).
//
// Thread safety: safe for concurrent use; Cancel() from any thread ends a
// pending Acquire. LockOptions::on_state_change is called with the
// combined state, on the session's dispatcher thread.
// REQUIRES: the Session outlives the MultiLock and its guards.
//
// Example:
//   auto both = zkr::MultiLock::Create(*session, {{"/locks/accounts/7", zkr::LockMode::kWrite},
//                                                 {"/locks/accounts/9", zkr::LockMode::kWrite}});
//   if (!both.ok()) return both.status();
//   absl::StatusOr<zkr::MultiLockGuard> held = (*both)->Acquire(absl::Seconds(10));
//   if (!held.ok()) return held.status();
//   Transfer(7, 9, held->fencing_token("/locks/accounts/7"), held->fencing_token("/locks/accounts/9"));
#ifndef ZKRECIPES_MULTI_LOCK_H_
#define ZKRECIPES_MULTI_LOCK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {

namespace internal {
class StateMix;
}  // namespace internal

enum class LockMode { kRead, kWrite };

struct LockPart {
  std::string path;
  LockMode mode = LockMode::kWrite;
};

class MultiLockGuard {
 public:
  MultiLockGuard() = default;
  MultiLockGuard(MultiLockGuard&&) noexcept = default;
  MultiLockGuard& operator=(MultiLockGuard&& other) noexcept;
  // Releases every part still held.
  ~MultiLockGuard();

  // kLost if any part is lost, else kSuspended if any is suspended, else
  // kHeld (kReleased once released, or for an empty guard).
  LockState state() const;
  bool held() const { return state() == LockState::kHeld; }
  // The parts in canonical order (by path).
  const std::vector<LockPart>& parts() const { return parts_; }
  // The part on `path`'s fencing token; 0 if it is not a part.
  int64_t fencing_token(const std::string& path) const;
  // The part on `path`'s guard (nullptr if it is not a part).
  const LockGuard* part(const std::string& path) const;
  // The earliest lease clock of the parts (they share the session).
  absl::Time valid_until() const;
  // Releases every part (each with the guaranteed delete); the first error,
  // if any, after all were tried. FailedPrecondition if empty or released.
  absl::Status Release();

 private:
  friend class MultiLock;
  MultiLockGuard(std::vector<LockPart> parts, std::vector<LockGuard> guards)
      : parts_(std::move(parts)), guards_(std::move(guards)) {}
  std::vector<LockPart> parts_;
  std::vector<LockGuard> guards_;
};

class MultiLock {
 public:
  // Validates every path (InvalidArgument naming it), refuses an empty set
  // and a path given twice. Creates nothing until the first acquisition.
  static absl::StatusOr<std::unique_ptr<MultiLock>> Create(Session& session,
                                                           std::vector<LockPart> parts,
                                                           LockOptions options = {});
  MultiLock(const MultiLock&) = delete;
  MultiLock& operator=(const MultiLock&) = delete;
  ~MultiLock();

  // Takes every part within `timeout` (for the whole set), or none: errors
  // as SharedLock's, naming the part that failed; a zero timeout tries once.
  absl::StatusOr<MultiLockGuard> Acquire(absl::Duration timeout = absl::InfiniteDuration());
  // Takes every part only if each is free now; DeadlineExceeded otherwise.
  absl::StatusOr<MultiLockGuard> TryAcquire();
  // Ends a pending Acquire (Cancelled); what it had taken is released.
  void Cancel();

  const std::vector<LockPart>& parts() const { return parts_; }

 private:
  MultiLock(std::vector<LockPart> parts, std::shared_ptr<internal::StateMix> mix);
  absl::StatusOr<MultiLockGuard> Take(absl::Duration timeout, bool try_only);
  // Part `i`, within `deadline` (try once if `try_only`); Cancel() ends it.
  absl::StatusOr<LockGuard> TakePart(size_t i, absl::Time deadline, bool try_only);

  const std::vector<LockPart> parts_;  // canonical order
  const std::shared_ptr<internal::StateMix> mix_;  // the parts' states, combined
  std::vector<std::unique_ptr<SharedLock>> locks_;  // one per part
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool taking_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace zkr

#endif  // ZKRECIPES_MULTI_LOCK_H_
