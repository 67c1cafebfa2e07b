// zkr::LockGuard: a thin face over one LockHold.
#include "zkrecipes/lock_guard.h"

#include <utility>

#include "recipes/lock_hold.h"

namespace zkr {

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

}  // namespace zkr
