// zkr::SharedLock: a read/write face over LockCore.
#include "zkrecipes/shared_lock.h"

#include <utility>

#include "recipes/lock_core.h"
#include "zkrecipes/lock_guard.h"

namespace zkr {

using internal::NodeMode;

SharedLock::SharedLock(std::shared_ptr<internal::LockCore> core) : core_(std::move(core)) {}
SharedLock::~SharedLock() { core_->Shutdown(); }

absl::StatusOr<std::unique_ptr<SharedLock>> SharedLock::Create(Session& session,
                                                               std::string path,
                                                               LockOptions options) {
  auto core = internal::LockCore::Create(session, std::move(path), std::move(options));
  if (!core.ok()) return core.status();
  return std::unique_ptr<SharedLock>(new SharedLock(std::move(*core)));
}

absl::StatusOr<LockGuard> SharedLock::AcquireRead(absl::Duration timeout) {
  return core_->Acquire(NodeMode::kRead, timeout, false);
}
absl::StatusOr<LockGuard> SharedLock::AcquireWrite(absl::Duration timeout) {
  return core_->Acquire(NodeMode::kWrite, timeout, false);
}
absl::StatusOr<LockGuard> SharedLock::TryAcquireRead() {
  return core_->Acquire(NodeMode::kRead, absl::InfiniteDuration(), true);
}
absl::StatusOr<LockGuard> SharedLock::TryAcquireWrite() {
  return core_->Acquire(NodeMode::kWrite, absl::InfiniteDuration(), true);
}
void SharedLock::AcquireReadAsync(std::function<void(absl::StatusOr<LockGuard>)> done) {
  core_->AcquireAsync(NodeMode::kRead, std::move(done));
}
void SharedLock::AcquireWriteAsync(std::function<void(absl::StatusOr<LockGuard>)> done) {
  core_->AcquireAsync(NodeMode::kWrite, std::move(done));
}

std::future<absl::StatusOr<LockGuard>> SharedLock::AcquireReadFuture() {
  return internal::AcquireAsFuture(*core_, internal::NodeMode::kRead);
}

std::future<absl::StatusOr<LockGuard>> SharedLock::AcquireWriteFuture() {
  return internal::AcquireAsFuture(*core_, internal::NodeMode::kWrite);
}
void SharedLock::Cancel() { core_->Cancel(); }
const std::string& SharedLock::path() const { return core_->path(); }

}  // namespace zkr
