#include "recipes/follow_loop.h"

#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/macros.h"
#include "src/retry.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {

absl::Status FollowLoop::Start() {
  ZKR_RETURN_IF_ERROR(Cover(path_));
  StartCovered();
  return absl::OkStatus();
}

void FollowLoop::StartCovered() {
  std::weak_ptr<FollowLoop> weak = weak_from_this();
  const int listener = core_->AddInternalListener([weak](SessionState state, uint64_t) {
    auto self = weak.lock();
    if (self == nullptr) return;
    // Closed: the subclass ends what waits for an answer.
    if (state == SessionState::kClosed && !self->stopped()) return self->OnSessionClosed();
    // A new session: the old one's watches are gone; look again.
    if (state == SessionState::kConnected) self->RefreshIfLive();
  });
  {
    absl::MutexLock lock(&mu_);
    listener_ = listener;
  }
  RefreshIfLive();
}

absl::Status FollowLoop::Cover(const std::string& path) {
  return reservation_.Cover(core_->WatchedPathBytes(path.size()),
                            absl::StrCat(what_, " of ", path_));
}

bool FollowLoop::Retried(const absl::Status& status) {
  return IsRetryable(status) || absl::IsResourceExhausted(status);
}

void FollowLoop::Stop() {
  KeptWatch watch;
  int listener;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    watch = std::exchange(watch_, {});
    listener = std::exchange(listener_, 0);
  }
  if (listener != 0) core_->RemoveInternalListener(listener);
  CancelKept(watch);
  reservation_.Release();
}

void FollowLoop::CancelKept(KeptWatch watch) const {
  if (watch.id == 0) return;
  if (std::shared_ptr<ZkClient> client = Client(watch.generation)) client->CancelWatch(watch.id);
}

std::shared_ptr<ZkClient> FollowLoop::Client(uint64_t generation) const {
  SessionCore::Handle handle = core_->current();
  return handle.generation == generation ? handle.client : nullptr;
}

ZkClient::WatchFn FollowLoop::Again() {
  std::weak_ptr<FollowLoop> weak = weak_from_this();
  return [weak](const WatchEvent&) {
    auto self = weak.lock();
    if (self == nullptr) return;
    {
      absl::MutexLock lock(&self->mu_);
      self->retries_in_a_row_ = 0;  // a watch fired: the read that set it was answered
    }
    self->RefreshIfLive();
  };
}

void FollowLoop::KeepWatch(uint64_t generation, uintptr_t watch) {
  const KeptWatch offered{generation, watch};
  KeptWatch dropped;
  {
    absl::MutexLock lock(&mu_);
    const auto order = [](const KeptWatch& w) { return std::tie(w.generation, w.id); };
    if (stopped_) {
      dropped = offered;
    } else if (order(offered) == order(watch_)) {
      return;
    } else if (order(offered) > order(watch_)) {
      dropped = std::exchange(watch_, offered);
    } else {
      // Older than the one kept (ids grow in the order requests are sent):
      // the reply to this very request, handled on the completion thread
      // before its send returned here, kept a newer watch already.
      dropped = offered;
    }
  }
  CancelKept(dropped);
}

void FollowLoop::RetryWhenConnected(uint64_t generation, const absl::Status& reason) {
  int attempt;
  {
    absl::MutexLock lock(&mu_);
    attempt = ++retries_in_a_row_;
  }
  const RetryNote note{what_, path_, attempt, reason};
  std::weak_ptr<FollowLoop> weak = weak_from_this();
  // A lost session ends nothing here: the next one's CONNECTED refreshes.
  internal::RetryWhenConnected(*core_, generation, note.attempt, &note, [weak] {
    if (auto self = weak.lock()) self->RefreshIfLive();
  });
}

bool FollowLoop::stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

}  // namespace internal
}  // namespace zkr
