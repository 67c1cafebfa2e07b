// zkr::ExclusiveLock: a write-only face over LockCore.
#include "zkrecipes/exclusive_lock.h"

#include <utility>

#include "recipes/lock_core.h"
#include "zkrecipes/lock_guard.h"

namespace zkr {

using internal::NodeMode;

ExclusiveLock::ExclusiveLock(std::shared_ptr<internal::LockCore> core) : core_(std::move(core)) {}
ExclusiveLock::~ExclusiveLock() { core_->Shutdown(); }

absl::StatusOr<std::unique_ptr<ExclusiveLock>> ExclusiveLock::Create(Session& session,
                                                                     std::string path,
                                                                     LockOptions options) {
  auto core = internal::LockCore::Create(session, std::move(path), std::move(options), 0,
                                         internal::QueueKind::kExclusiveLock);
  if (!core.ok()) return core.status();
  return std::unique_ptr<ExclusiveLock>(new ExclusiveLock(std::move(*core)));
}

absl::StatusOr<LockGuard> ExclusiveLock::Acquire(absl::Duration timeout) {
  return core_->Acquire(NodeMode::kWrite, timeout, false);
}
absl::StatusOr<LockGuard> ExclusiveLock::TryAcquire() {
  return core_->Acquire(NodeMode::kWrite, absl::InfiniteDuration(), true);
}
void ExclusiveLock::AcquireAsync(std::function<void(absl::StatusOr<LockGuard>)> done) {
  core_->AcquireAsync(NodeMode::kWrite, std::move(done));
}

std::future<absl::StatusOr<LockGuard>> ExclusiveLock::AcquireFuture() {
  return internal::AcquireAsFuture(*core_, internal::NodeMode::kWrite);
}
void ExclusiveLock::Cancel() { core_->Cancel(); }
const std::string& ExclusiveLock::path() const { return core_->path(); }

}  // namespace zkr
