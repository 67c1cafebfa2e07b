#include "zkrecipes/std_lock.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/await_until.h"
#include "zkrecipes/clock.h"

namespace zkr {
namespace {

// Waits are measured on the monotonic clock, as absl::Durations: a huge or
// infinite timeout saturates instead of overflowing, and a wall-clock step
// changes nothing.
const Clock& Monotonic() {
  static const std::shared_ptr<Clock> clock = SystemClock();
  return *clock;
}

// The monotonic end of a wait of `timeout` from now.
absl::Duration EndOf(absl::Duration timeout) { return Monotonic().Monotonic() + timeout; }

// Time left until `end`; at least zero (one try).
absl::Duration Left(absl::Duration end) {
  const absl::Duration left = end - Monotonic().Monotonic();
  return left > absl::ZeroDuration() ? left : absl::ZeroDuration();
}

// Waits on `mu` until `cond` holds or `end` passes; whether it holds. With
// `end` already past it only looks: try_lock() never waits.
bool AwaitUntil(absl::Mutex& mu, const absl::Condition& cond, absl::Duration end)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  return internal::AwaitUntil(mu, cond, end, Monotonic());
}

}  // namespace

LockError::LockError(absl::Status status)
    : std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                        std::string(status.ToString())),
      status_(std::move(status)) {}

// ---- StdMutex ---------------------------------------------------------------

// lock() is try_lock() without a deadline: it returns only holding, or
// throws why not.
void StdMutex::lock() {
  if (!TryLockFor(absl::InfiniteDuration())) throw LockError(status());
}

bool StdMutex::try_lock() { return TryLockFor(absl::ZeroDuration()); }

bool StdMutex::TryLockFor(absl::Duration timeout) {
  const absl::Duration end = EndOf(timeout);
  {
    absl::MutexLock lock(&mu_);
    if (!AwaitUntil(mu_, absl::Condition(this, &StdMutex::Free), end)) {
      status_ = absl::DeadlineExceededError(absl::StrCat(
          "lock ", lock_.path(), ": another thread of this process holds it or is acquiring it"));
      return false;
    }
    taken_ = true;  // ours now: the other threads wait (or try_lock fails) from here
  }
  // Zero left: one try (TryAcquire).
  absl::StatusOr<LockGuard> guard = lock_.Acquire(Left(end));
  absl::MutexLock lock(&mu_);
  status_ = guard.status();
  if (!guard.ok()) {
    taken_ = false;
    return false;
  }
  guard_.emplace(*std::move(guard));
  return true;
}

void StdMutex::unlock() {
  std::optional<LockGuard> guard;
  {
    absl::MutexLock lock(&mu_);
    guard.swap(guard_);
  }
  // Unlocked: the release waits for the delete.
  absl::Status released = guard.has_value() ? guard->Release() : absl::OkStatus();
  absl::MutexLock lock(&mu_);
  status_ = std::move(released);
  if (guard.has_value()) taken_ = false;  // the next thread may queue now
}

absl::Status StdMutex::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

const LockGuard& StdMutex::guard() const {
  absl::MutexLock lock(&mu_);
  return *guard_;
}

// ---- StdSharedMutex ---------------------------------------------------------

void StdSharedMutex::lock() {
  if (!TryLockFor(absl::InfiniteDuration(), /*write=*/true)) throw LockError(status());
}

void StdSharedMutex::lock_shared() {
  if (!TryLockFor(absl::InfiniteDuration(), /*write=*/false)) throw LockError(status());
}

bool StdSharedMutex::try_lock() { return TryLockFor(absl::ZeroDuration(), /*write=*/true); }
bool StdSharedMutex::try_lock_shared() {
  return TryLockFor(absl::ZeroDuration(), /*write=*/false);
}

bool StdSharedMutex::TryLockFor(absl::Duration timeout, bool write) {
  const absl::Duration end = EndOf(timeout);
  {
    absl::MutexLock lock(&mu_);
    bool may_enter;
    if (write) {
      ++writers_waiting_;  // keeps later local readers out meanwhile
      may_enter = AwaitUntil(mu_, absl::Condition(this, &StdSharedMutex::WriterMayEnter), end);
      --writers_waiting_;
      if (may_enter) writer_ = true;
    } else {
      may_enter = AwaitUntil(mu_, absl::Condition(this, &StdSharedMutex::ReaderMayEnter), end);
      if (may_enter) reader_acquiring_ = true;
    }
    if (!may_enter) {
      status_ = absl::DeadlineExceededError(absl::StrCat(
          "lock ", lock_.path(), ": another thread of this process holds it or is acquiring it"));
      return false;
    }
  }
  // One local acquisition at a time reaches the lock object (it allows one
  // pending acquisition). A reader while local readers hold joins their
  // hold at once (reentrancy); the first one queues. Zero left: one try.
  const absl::Duration left = Left(end);
  absl::StatusOr<LockGuard> guard = write ? lock_.AcquireWrite(left) : lock_.AcquireRead(left);
  absl::MutexLock lock(&mu_);
  status_ = guard.status();
  if (write) {
    writer_ = guard.ok();
  } else {
    reader_acquiring_ = false;
  }
  if (!guard.ok()) return false;
  if (write) {
    write_guard_.emplace(*std::move(guard));
  } else {
    read_guards_.push_back(*std::move(guard));
    ++readers_;
  }
  return true;
}

void StdSharedMutex::unlock() { Unlock(/*write=*/true); }
void StdSharedMutex::unlock_shared() { Unlock(/*write=*/false); }

void StdSharedMutex::Unlock(bool write) {
  std::optional<LockGuard> guard;
  {
    absl::MutexLock lock(&mu_);
    if (write) {
      guard.swap(write_guard_);
    } else if (!read_guards_.empty()) {
      // The guards are not the threads': any reader's unlock drops one.
      // After a lost hold a reader may have queued a fresh node, so they
      // may be on two nodes; a lost one goes first, so the fresh node keeps
      // at least as many guards as readers still on it (no reader's unlock
      // can delete a node another reader still counts on).
      auto lost = std::find_if(read_guards_.begin(), read_guards_.end(), [](const LockGuard& g) {
        return g.state() == LockState::kLost;
      });
      auto drop = lost != read_guards_.end() ? lost : read_guards_.end() - 1;
      guard.emplace(std::move(*drop));
      read_guards_.erase(drop);
    }
  }
  // Unlocked: local readers share the one read node (reentrant holds), and
  // the last one's release waits for its delete. Only then may a local
  // writer queue (readers_ counts this reader until here).
  absl::Status released = guard.has_value() ? guard->Release() : absl::OkStatus();
  absl::MutexLock lock(&mu_);
  status_ = std::move(released);
  if (!guard.has_value()) return;
  if (write) {
    writer_ = false;
  } else {
    --readers_;
  }
}

absl::Status StdSharedMutex::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

}  // namespace zkr
