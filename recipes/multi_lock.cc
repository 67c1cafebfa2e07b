#include "zkrecipes/multi_lock.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

#include "absl/strings/str_cat.h"

namespace zkr {
namespace internal {

// The parts' states and the combined one, reported to the user's
// on_state_change when it changes. Part callbacks run on the dispatcher
// thread; the lock is held only to compute.
class StateMix {
 public:
  StateMix(size_t parts, std::function<void(LockState)> listener)
      : states_(parts, LockState::kReleased), listener_(std::move(listener)) {}

  // A new grant: every part held.
  void Reset() {
    absl::MutexLock lock(&mu_);
    std::fill(states_.begin(), states_.end(), LockState::kHeld);
    reported_ = LockState::kHeld;
  }
  void Update(size_t part, LockState state) {
    LockState combined;
    {
      absl::MutexLock lock(&mu_);
      states_[part] = state;
      combined = Combine(states_);
      if (combined == reported_) return;
      reported_ = combined;
    }
    if (listener_) listener_(combined);
  }
  static LockState Combine(const std::vector<LockState>& states) {
    auto any = [&](LockState s) { return std::count(states.begin(), states.end(), s) > 0; };
    if (states.empty() || any(LockState::kReleased)) return LockState::kReleased;
    if (any(LockState::kLost)) return LockState::kLost;
    if (any(LockState::kSuspended)) return LockState::kSuspended;
    return LockState::kHeld;
  }

 private:
  absl::Mutex mu_;
  std::vector<LockState> states_ ABSL_GUARDED_BY(mu_);
  LockState reported_ ABSL_GUARDED_BY(mu_) = LockState::kReleased;
  const std::function<void(LockState)> listener_;
};

}  // namespace internal

namespace {

absl::string_view ModeName(LockMode mode) { return mode == LockMode::kRead ? "read" : "write"; }

}  // namespace

// ---- MultiLockGuard ---------------------------------------------------------

MultiLockGuard& MultiLockGuard::operator=(MultiLockGuard&& other) noexcept {
  if (this != &other) {
    (void)Release();
    parts_ = std::move(other.parts_);
    guards_ = std::move(other.guards_);
  }
  return *this;
}

MultiLockGuard::~MultiLockGuard() {
  if (!guards_.empty()) (void)Release();
}

LockState MultiLockGuard::state() const {
  std::vector<LockState> states;
  for (const LockGuard& guard : guards_) states.push_back(guard.state());
  return internal::StateMix::Combine(states);
}

int64_t MultiLockGuard::fencing_token(const std::string& path) const {
  const LockGuard* guard = part(path);
  return guard == nullptr ? 0 : guard->fencing_token();
}

const LockGuard* MultiLockGuard::part(const std::string& path) const {
  for (size_t i = 0; i < parts_.size() && i < guards_.size(); ++i) {
    if (parts_[i].path == path) return &guards_[i];
  }
  return nullptr;
}

absl::Time MultiLockGuard::valid_until() const {
  absl::Time earliest = absl::InfiniteFuture();
  for (const LockGuard& guard : guards_) earliest = std::min(earliest, guard.valid_until());
  return guards_.empty() ? absl::InfinitePast() : earliest;
}

absl::Status MultiLockGuard::Release() {
  if (guards_.empty()) return absl::FailedPreconditionError("release multi-lock: not held");
  absl::Status first;
  // The reverse of the order they were taken in.
  for (auto guard = guards_.rbegin(); guard != guards_.rend(); ++guard) {
    absl::Status released = guard->Release();
    if (first.ok() && !released.ok()) first = released;
  }
  guards_.clear();
  return first;
}

// ---- MultiLock --------------------------------------------------------------

MultiLock::MultiLock(std::vector<LockPart> parts, std::shared_ptr<internal::StateMix> mix)
    : parts_(std::move(parts)), mix_(std::move(mix)) {}

MultiLock::~MultiLock() { Cancel(); }

absl::StatusOr<std::unique_ptr<MultiLock>> MultiLock::Create(Session& session,
                                                             std::vector<LockPart> parts,
                                                             LockOptions options) {
  if (parts.empty()) return absl::InvalidArgumentError("multi-lock: no parts given");
  std::sort(parts.begin(), parts.end(),
            [](const LockPart& a, const LockPart& b) { return a.path < b.path; });
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].path == parts[i - 1].path) {
      return absl::InvalidArgumentError(
          absl::StrCat("multi-lock: path ", parts[i].path, " is given twice"));
    }
  }
  auto mix = std::make_shared<internal::StateMix>(parts.size(), options.on_state_change);
  std::unique_ptr<MultiLock> multi(new MultiLock(parts, mix));
  for (size_t i = 0; i < multi->parts_.size(); ++i) {  // each path validated here
    LockOptions part_options = options;
    part_options.on_state_change = [mix, i](LockState state) { mix->Update(i, state); };
    auto lock = SharedLock::Create(session, multi->parts_[i].path, part_options);
    if (!lock.ok()) return lock.status();
    multi->locks_.push_back(std::move(*lock));
  }
  return multi;
}

absl::StatusOr<MultiLockGuard> MultiLock::Acquire(absl::Duration timeout) {
  return Take(timeout, timeout <= absl::ZeroDuration());
}

absl::StatusOr<MultiLockGuard> MultiLock::TryAcquire() { return Take(absl::ZeroDuration(), true); }

void MultiLock::Cancel() {
  absl::MutexLock lock(&mu_);
  if (!taking_) return;
  cancelled_ = true;
  // Under our mutex: a part's acquisition starts under it too (TakePart),
  // so it is either pending now and cancelled, or will see the flag.
  for (const auto& part : locks_) part->Cancel();
}

absl::StatusOr<MultiLockGuard> MultiLock::Take(absl::Duration timeout, bool try_only) {
  {
    absl::MutexLock lock(&mu_);
    if (taking_) {
      return absl::FailedPreconditionError(
          "multi-lock: another acquisition through this object is in progress");
    }
    taking_ = true;
    cancelled_ = false;
  }
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<LockGuard> taken;
  absl::Status failed;
  for (size_t i = 0; i < parts_.size(); ++i) {
    absl::StatusOr<LockGuard> guard = TakePart(i, deadline, try_only);
    if (!guard.ok()) {
      failed = absl::Status(guard.status().code(),
                            absl::StrCat("multi-lock part ", parts_[i].path, " (",
                                         ModeName(parts_[i].mode), "): ",
                                         guard.status().message()));
      break;
    }
    taken.push_back(std::move(*guard));
  }
  {
    absl::MutexLock lock(&mu_);
    taking_ = false;
  }
  if (!failed.ok()) {
    // Give back what was taken, in reverse order, before answering.
    for (auto guard = taken.rbegin(); guard != taken.rend(); ++guard) (void)guard->Release();
    return failed;
  }
  mix_->Reset();
  return MultiLockGuard(parts_, std::move(taken));
}

absl::StatusOr<LockGuard> MultiLock::TakePart(size_t i, absl::Time deadline, bool try_only) {
  SharedLock& lock = *locks_[i];
  const bool read = parts_[i].mode == LockMode::kRead;
  if (try_only) return read ? lock.TryAcquireRead() : lock.TryAcquireWrite();
  std::future<absl::StatusOr<LockGuard>> pending;
  {
    absl::MutexLock hold(&mu_);
    if (cancelled_) return absl::CancelledError("cancelled");
    pending = read ? lock.AcquireReadFuture() : lock.AcquireWriteFuture();
  }
  const absl::Duration left = deadline - absl::Now();
  const bool in_time =
      deadline == absl::InfiniteFuture() ||
      pending.wait_for(std::chrono::microseconds(absl::ToInt64Microseconds(
          std::max(left, absl::ZeroDuration())))) == std::future_status::ready;
  if (!in_time) {
    lock.Cancel();
    absl::StatusOr<LockGuard> late = pending.get();
    if (late.ok()) return late;  // it won just as the deadline passed
    if (!absl::IsCancelled(late.status())) return late.status();
    return absl::DeadlineExceededError(absl::StrCat(
        "not acquired within the multi-lock's deadline; ", late.status().message()));
  }
  return pending.get();
}

}  // namespace zkr
