#include "recipes/follow_loop.h"

#include <utility>

namespace zkr {
namespace internal {

void FollowLoop::Start() {
  std::weak_ptr<FollowLoop> weak = weak_from_this();
  const int listener = core_->AddInternalListener([weak](SessionState state, uint64_t) {
    // A new session: the old one's watches are gone; look again.
    if (state != SessionState::kConnected) return;
    if (auto self = weak.lock()) self->RefreshIfLive();
  });
  {
    absl::MutexLock lock(&mu_);
    listener_ = listener;
  }
  RefreshIfLive();
}

void FollowLoop::Stop() {
  uintptr_t watch;
  std::shared_ptr<ZkClient> client;
  int listener;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    watch = std::exchange(watch_, 0);
    client = std::exchange(watch_client_, {}).lock();
    listener = std::exchange(listener_, 0);
  }
  if (listener != 0) core_->RemoveInternalListener(listener);
  if (watch != 0 && client != nullptr) client->CancelWatch(watch);
}

std::shared_ptr<ZkClient> FollowLoop::Client(uint64_t generation) const {
  SessionCore::Handle handle = core_->current();
  return handle.generation == generation ? handle.client : nullptr;
}

ZkClient::WatchFn FollowLoop::Again() {
  std::weak_ptr<FollowLoop> weak = weak_from_this();
  return [weak](const WatchEvent&) {
    if (auto self = weak.lock()) self->RefreshIfLive();
  };
}

void FollowLoop::KeepWatch(const std::shared_ptr<ZkClient>& client, uintptr_t watch) {
  uintptr_t previous = 0;
  std::shared_ptr<ZkClient> previous_client;
  bool stopped;
  {
    absl::MutexLock lock(&mu_);
    stopped = stopped_;
    if (!stopped) {
      previous = std::exchange(watch_, watch);
      previous_client = std::exchange(watch_client_, client).lock();
    }
  }
  if (stopped) return client->CancelWatch(watch);
  if (previous == 0 || previous_client == nullptr) return;
  if (previous_client != client || previous != watch) previous_client->CancelWatch(previous);
}

void FollowLoop::RetryWhenConnected(uint64_t generation, const absl::Status& reason) {
  core_->ReportRetry(what_, path_, /*attempt=*/1, reason);
  std::weak_ptr<FollowLoop> weak = weak_from_this();
  core_->WhenConnected(generation, [weak](absl::Status connected) {
    auto self = weak.lock();
    if (self != nullptr && connected.ok()) self->RefreshIfLive();  // else a new session does
  });
}

bool FollowLoop::stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

}  // namespace internal
}  // namespace zkr
