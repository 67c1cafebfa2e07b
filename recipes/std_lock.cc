#include "zkrecipes/std_lock.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace zkr {
namespace {

// Time left of `timeout`, measured from `start`; at least zero (one try).
absl::Duration Remaining(absl::Duration timeout, absl::Time start) {
  const absl::Duration left = timeout - (absl::Now() - start);
  return left > absl::ZeroDuration() ? left : absl::ZeroDuration();
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
  const absl::Time start = absl::Now();
  if (!local_.LockWhenWithTimeout(absl::Condition::kTrue, timeout)) {
    local_.Unlock();  // LockWhenWithTimeout holds the mutex either way
    absl::MutexLock lock(&state_mu_);
    status_ = absl::DeadlineExceededError(
        absl::StrCat("lock ", lock_.path(), ": another thread of this process holds it"));
    return false;
  }
  // A zero timeout tries once (TryAcquire).
  absl::StatusOr<LockGuard> guard = lock_.Acquire(Remaining(timeout, start));
  absl::MutexLock lock(&state_mu_);
  status_ = guard.status();
  if (!guard.ok()) {
    local_.Unlock();
    return false;
  }
  guard_.emplace(*std::move(guard));
  return true;
}

void StdMutex::unlock() {
  std::optional<LockGuard> guard;
  {
    absl::MutexLock lock(&state_mu_);
    guard.swap(guard_);
  }
  absl::Status released = guard.has_value() ? guard->Release() : absl::OkStatus();
  {
    absl::MutexLock lock(&state_mu_);
    status_ = std::move(released);
  }
  local_.Unlock();
}

absl::Status StdMutex::status() const {
  absl::MutexLock lock(&state_mu_);
  return status_;
}

const LockGuard& StdMutex::guard() const {
  absl::MutexLock lock(&state_mu_);
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
  const absl::Time start = absl::Now();
  const bool local = write ? local_.LockWhenWithTimeout(absl::Condition::kTrue, timeout)
                           : local_.ReaderLockWhenWithTimeout(absl::Condition::kTrue, timeout);
  if (!local) {
    write ? local_.Unlock() : local_.ReaderUnlock();  // held either way
    absl::MutexLock lock(&state_mu_);
    status_ = absl::DeadlineExceededError(
        absl::StrCat("lock ", lock_.path(), ": a thread of this process holds it"));
    return false;
  }
  const absl::Duration left = Remaining(timeout, start);
  absl::StatusOr<LockGuard> guard = write ? lock_.AcquireWrite(left) : lock_.AcquireRead(left);
  absl::MutexLock lock(&state_mu_);
  status_ = guard.status();
  if (!guard.ok()) {
    write ? local_.Unlock() : local_.ReaderUnlock();
    return false;
  }
  if (write) {
    write_guard_.emplace(*std::move(guard));
  } else {
    read_guards_.push_back(*std::move(guard));
  }
  return true;
}

void StdSharedMutex::unlock() { Unlock(/*write=*/true); }
void StdSharedMutex::unlock_shared() { Unlock(/*write=*/false); }

void StdSharedMutex::Unlock(bool write) {
  std::optional<LockGuard> guard;
  {
    absl::MutexLock lock(&state_mu_);
    if (write) {
      guard.swap(write_guard_);
    } else if (!read_guards_.empty()) {
      guard.emplace(std::move(read_guards_.back()));
      read_guards_.pop_back();
    }
  }
  // Local readers share the one read node (reentrant holds): the node goes
  // with the last of them.
  absl::Status released = guard.has_value() ? guard->Release() : absl::OkStatus();
  {
    absl::MutexLock lock(&state_mu_);
    status_ = std::move(released);
  }
  write ? local_.Unlock() : local_.ReaderUnlock();
}

absl::Status StdSharedMutex::status() const {
  absl::MutexLock lock(&state_mu_);
  return status_;
}

}  // namespace zkr
