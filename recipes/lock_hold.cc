#include "recipes/lock_hold.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "src/delivery.h"
#include "src/multi_outcome.h"
#include "src/session_access.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

LockHold::LockHold(Session& session, std::string lock_path, std::shared_ptr<QueueEntry> entry)
    : session_(session), lock_path_(std::move(lock_path)), entry_(std::move(entry)) {}

void LockHold::CountFirstGuard(bool write) {
  absl::MutexLock lock(&mu_);
  ++(write ? writes_ : reads_);
}

absl::StatusOr<bool> LockHold::CountReentry(bool write, absl::string_view what) {
  absl::MutexLock lock(&mu_);
  const LockState state = entry_->state();
  if (reads_ + writes_ == 0 || state == LockState::kLost) return false;
  if (write && writes_ == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, ": refused while this object holds only the read lock (an upgrade deadlocks; "
              "release the read hold first)"));
  }
  // An OK acquisition is HELD when it returns: a hold that may be lost
  // already (disconnected, or past the lease) is not handed out again.
  if (state != LockState::kHeld) {
    return absl::UnavailableError(absl::StrCat(
        what, ": this object's hold reads ", LockStateName(state),
        " (the session is cut off from the server, so the hold may be lost already); "
        "acquire again once it reads HELD"));
  }
  ++(write ? writes_ : reads_);
  return true;
}

bool LockHold::InUse() const {
  absl::MutexLock lock(&mu_);
  return reads_ + writes_ > 0 && entry_->state() != LockState::kLost;
}

absl::Status LockHold::ReleaseOne(bool write) {
  absl::Notification released;
  absl::Status status;
  ReleaseOneInline(write, /*caller_waits=*/true, [&](absl::Status s) {
    status = std::move(s);
    released.Notify();
  });
  released.WaitForNotification();
  return status;
}

void LockHold::ReleaseOneAsync(bool write, std::function<void(absl::Status)> done) {
  ReleaseOneInline(write, /*caller_waits=*/false,
                   Delivering(entry_->core().dispatcher(), /*gate=*/nullptr, std::move(done)));
}

void LockHold::ReleaseOneInline(bool write, bool caller_waits,
                                std::function<void(absl::Status)> done) {
  std::optional<QueueEntry::PendingRelease> pending = StartReleaseOne(write, std::move(done));
  if (pending.has_value()) QueueEntry::SendRelease(*std::move(pending), caller_waits);
}

std::optional<QueueEntry::PendingRelease> LockHold::StartReleaseOne(
    bool write, std::function<void(absl::Status)> done) {
  {
    absl::MutexLock lock(&mu_);
    --(write ? writes_ : reads_);
    if (reads_ + writes_ > 0) {
      done(absl::OkStatus());
      return std::nullopt;
    }
  }
  // The hold ends here for the user: its callbacks stop (a call running on
  // the dispatcher is waited for, unless this is that call).
  entry_->CloseUserCallbacks();
  // Keep the hold alive until the delete completes.
  return entry_->StartRelease(
      [self = shared_from_this(), done = std::move(done)](absl::Status status) {
        done(std::move(status));
      });
}

absl::Time LockHold::valid_until() const {
  LockState state = entry_->state();
  if (state != LockState::kHeld && state != LockState::kSuspended) return absl::InfinitePast();
  return entry_->core().valid_until();
}

absl::StatusOr<std::vector<OpResult>> LockHold::GuardedMulti(std::vector<Op> ops) {
  const std::string node = node_path();
  LockState state = entry_->state();
  if (state != LockState::kHeld || entry_->core().generation() != entry_->generation()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "guarded multi on lock ", lock_path_, ": the hold is ", LockStateName(state)));
  }
  ops.insert(ops.begin(), Op::Check(node));
  MultiOutcome outcome = MultiWithResults(*CoreOf(session_), ops);
  if (!outcome.status.ok()) {
    // Our check (op 0) failed: the server answered that the node is gone.
    if (!outcome.results.empty() && !outcome.results.front().status.ok() &&
        !IsRetryable(outcome.results.front().status)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "guarded multi on lock ", lock_path_, ": lock no longer held (node ", node,
          " is gone); nothing was written"));
    }
    return outcome.status;
  }
  outcome.results.erase(outcome.results.begin());
  return std::move(outcome.results);
}

}  // namespace internal
}  // namespace zkr
