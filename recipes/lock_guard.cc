// zkr::LockGuard, SharedLock and ExclusiveLock: thin faces over LockCore.
#include "zkrecipes/lock_guard.h"

#include <utility>

#include "recipes/lock_core.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {

using internal::NodeMode;

absl::string_view LockStateName(LockState state) {
  switch (state) {
    case LockState::kHeld: return "HELD";
    case LockState::kSuspended: return "SUSPENDED";
    case LockState::kLost: return "LOST";
    case LockState::kReleased: return "RELEASED";
  }
  return "UNKNOWN";
}

// ---- LockGuard ----------------------------------------------------------

LockGuard::LockGuard() = default;
LockGuard::LockGuard(std::shared_ptr<internal::LockHold> hold, bool write)
    : hold_(std::move(hold)), write_(write) {}
LockGuard::LockGuard(LockGuard&& other) noexcept
    : hold_(std::move(other.hold_)), write_(other.write_) {}
LockGuard& LockGuard::operator=(LockGuard&& other) noexcept {
  if (this != &other) {
    if (hold_ != nullptr) (void)Release();
    hold_ = std::move(other.hold_);
    write_ = other.write_;
  }
  return *this;
}
LockGuard::~LockGuard() {
  if (hold_ != nullptr) (void)Release();
}

bool LockGuard::held() const { return state() == LockState::kHeld; }
LockState LockGuard::state() const {
  return hold_ == nullptr ? LockState::kReleased : hold_->state();
}
bool LockGuard::is_write() const { return write_; }
int64_t LockGuard::fencing_token() const {
  return hold_ == nullptr ? 0 : hold_->fencing_token();
}
absl::Time LockGuard::valid_until() const {
  return hold_ == nullptr ? absl::InfinitePast() : hold_->valid_until();
}
std::string LockGuard::node_path() const { return hold_ == nullptr ? "" : hold_->node_path(); }
std::string LockGuard::lock_path() const { return hold_ == nullptr ? "" : hold_->lock_path(); }

absl::Status LockGuard::Release() {
  if (hold_ == nullptr) {
    return absl::FailedPreconditionError("release: this guard holds nothing (already released)");
  }
  std::shared_ptr<internal::LockHold> hold = std::move(hold_);
  hold_ = nullptr;
  return hold->ReleaseOne(write_);
}

void LockGuard::ReleaseAsync(std::function<void(absl::Status)> done) {
  if (hold_ == nullptr) {
    return done(absl::FailedPreconditionError("release: this guard holds nothing (already released)"));
  }
  std::shared_ptr<internal::LockHold> hold = std::move(hold_);
  hold_ = nullptr;
  hold->ReleaseOneAsync(write_, std::move(done));
}

absl::StatusOr<std::vector<OpResult>> LockGuard::GuardedMulti(std::vector<Op> ops) {
  if (hold_ == nullptr) {
    return absl::FailedPreconditionError("guarded multi: this guard holds nothing");
  }
  return hold_->GuardedMulti(std::move(ops));
}

// ---- SharedLock -----------------------------------------------------------

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

// ---- ExclusiveLock --------------------------------------------------------

ExclusiveLock::ExclusiveLock(std::shared_ptr<internal::LockCore> core) : core_(std::move(core)) {}
ExclusiveLock::~ExclusiveLock() { core_->Shutdown(); }

absl::StatusOr<std::unique_ptr<ExclusiveLock>> ExclusiveLock::Create(Session& session,
                                                                     std::string path,
                                                                     LockOptions options) {
  auto core = internal::LockCore::Create(session, std::move(path), std::move(options));
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
