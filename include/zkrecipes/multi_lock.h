// zkr::MultiLock: several locks, of mixed modes, taken all or none
// (Curator's InterProcessMultiLock, Redisson's MultiLock).
//
// The parts are put in one canonical order — by path, byte-wise — whatever
// order the caller gave. Acquire asks for every part at once: the parts' nodes
// are made in one transaction, which also writes each part's directory's data
// (empty, as the library makes its directories). That write's Stat says how
// many children the directory has once the node is in it, so a part alone there
// is held without reading the queue, and a free set is taken with one request
// and released with another. Keep no data of your own on a lock's directory.
// Where the transaction is refused (the directory does not exist yet, or the
// session may not write it: an ACL without WRITE) each part is then asked for
// on its own, as a single lock is, still together on the session: a round trip
// more. A MultiLock refused for want of WRITE remembers it and asks part by
// part from then on. Acquire keeps the parts granted at once; when a part must
// wait behind a holder, every part after it in that order is given back
// (released, or its queue node deleted) while that part waits, and asked for
// again, together, once every part up to it is held. So a multi-lock waits only
// in canonical order, holding nothing after the part it waits for, and two
// MultiLocks over overlapping sets cannot deadlock (recipes/multi_lock.cc gives
// the argument). TryAcquire tries the parts one after another. One deadline
// covers the whole set, measured on the session's monotonic clock
// (zkrecipes/clock.h): a wall-clock step neither stretches nor cuts it, and any
// timeout, however large, waits (InfiniteDuration() for ever) — with the
// allowance of a single lock's: while the server does not answer, Acquire
// returns at most one session timeout after it, since it waits to learn what
// became of the nodes it made. When a part cannot be taken (timeout, cancel,
// error), the parts already taken are released, each with the guaranteed
// delete, before Acquire returns: nothing is left held. Each part is a
// SharedLock participant on its path, so a part excludes and is excluded by
// SharedLock/ExclusiveLock holders there as they would be.
//
// A part lost while others are still being taken (its node deleted
// by an operator or a forced zkr::Revoke, or the session lost) ends the
// acquisition at once: every part is given back and Acquire fails with
// Aborted naming the lost part (IsSessionLost() when the session was lost),
// as a single lock's Acquire fails when its node vanishes while it waits.
// It is not re-taken behind the caller's back: call Acquire again to queue
// anew. A part SUSPENDED (connection down) when the set is complete is
// waited for, within the deadline, until it is HELD again. So a guard that
// Acquire returns OK is HELD in every part as they report it then (a
// part's node deleted within own_node_watch_delay of its grant is reported
// once that part's watch is armed, as for a single lock).
//
// The grant is a MultiLockGuard: it reports kLost once any part is lost,
// kSuspended while any part is suspended, and keeps each part's fencing
// token (a token is per lock: a resource guarded by lock A checks A's).
// LockOptions::on_state_change is called with that combined state when it
// changes, from the grant until the guard is released — never during an
// acquisition (nothing is granted yet), never with kReleased.
//
// Thread safety: safe for concurrent use; Cancel() from any thread ends a
// pending Acquire; destroying the MultiLock ends one too (Cancelled: its
// state lives on until that Acquire has returned). on_state_change runs on
// the session's dispatcher thread. A waiting Acquire (timeout > 0) is
// refused (FailedPrecondition) on that thread, from inside a recipe
// callback: the parts' state changes are delivered there. TryAcquire works
// there.
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

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {

namespace internal {
class MultiLockCore;
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
  // on_state_change is not called for this grant once it returns.
  absl::Status Release();

 private:
  friend class internal::MultiLockCore;
  MultiLockGuard(std::vector<LockPart> parts, std::vector<LockGuard> guards,
                 std::shared_ptr<internal::MultiLockCore> core);
  std::vector<LockPart> parts_;
  std::vector<LockGuard> guards_;
  std::shared_ptr<internal::MultiLockCore> core_;  // counts this grant for on_state_change
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
  // as SharedLock's, naming the part that failed; Aborted naming a part lost
  // meanwhile; Cancelled (Cancel(), the MultiLock destroyed, or the
  // session closed — whichever part hears of the Close() first);
  // FailedPrecondition for a second acquisition through this object at once,
  // or on the dispatcher thread. A zero timeout tries once (TryAcquire).
  absl::StatusOr<MultiLockGuard> Acquire(absl::Duration timeout = absl::InfiniteDuration());
  // Takes every part only if each is free now; DeadlineExceeded otherwise
  // (Unavailable if the connection dropped before the set was complete).
  absl::StatusOr<MultiLockGuard> TryAcquire();
  // Ends a pending Acquire (Cancelled); what it had taken is released.
  void Cancel();

  // The parts in canonical order (by path).
  const std::vector<LockPart>& parts() const;

 private:
  explicit MultiLock(std::shared_ptr<internal::MultiLockCore> core);
  // Shared with a running Acquire (which keeps it alive) and with the guards.
  const std::shared_ptr<internal::MultiLockCore> core_;
};

}  // namespace zkr

#endif  // ZKRECIPES_MULTI_LOCK_H_
