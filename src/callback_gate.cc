#include "src/callback_gate.h"

#include <algorithm>
#include <utility>

namespace zkr {
namespace internal {

void CallbackGate::Run(absl::FunctionRef<void()> callback) {
  const std::thread::id me = std::this_thread::get_id();
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    running_.push_back(me);
  }
  callback();
  absl::MutexLock lock(&mu_);
  running_.erase(std::find(running_.begin(), running_.end(), me));
}

void CallbackGate::Close() {
  const std::thread::id me = std::this_thread::get_id();
  absl::MutexLock lock(&mu_);
  closed_ = true;
  // Calls on this thread are the caller's own callers: not waited for.
  auto only_mine = [this, me]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return std::all_of(running_.begin(), running_.end(),
                       [me](std::thread::id id) { return id == me; });
  };
  mu_.Await(absl::Condition(&only_mine));
}

}  // namespace internal
}  // namespace zkr
