#include "src/delayed_tasks.h"

#include <utility>

namespace zkr {
namespace internal {

DelayedTasks::~DelayedTasks() { Shutdown(); }

DelayedTasks& DelayedTasks::Shared() {
  static DelayedTasks* const shared = new DelayedTasks(SystemClock());
  return *shared;
}

uint64_t DelayedTasks::RunAfter(absl::Duration delay, std::function<void()> task) {
  const absl::Duration due = clock_->Monotonic() + delay;
  absl::MutexLock lock(&mu_);
  if (stopping_) return 0;
  const uint64_t id = next_id_++;
  tasks_.emplace(Key{due, id}, std::move(task));
  due_by_id_.emplace(id, due);
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  return id;
}

void DelayedTasks::Cancel(uint64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = due_by_id_.find(id);
  if (it == due_by_id_.end()) return;
  tasks_.erase(Key{it->second, id});
  due_by_id_.erase(it);
}

void DelayedTasks::Shutdown() {
  std::thread thread;
  std::map<Key, std::function<void()>> dropped;  // destroyed unlocked
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    dropped.swap(tasks_);
    due_by_id_.clear();
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

void DelayedTasks::Run() {
  absl::MutexLock lock(&mu_);
  for (;;) {
    wake_at_ = tasks_.empty() ? absl::InfiniteDuration() : tasks_.begin()->first.first;
    mu_.AwaitWithTimeout(absl::Condition(this, &DelayedTasks::ShouldWake),
                         wake_at_ - clock_->Monotonic());
    if (stopping_) return;
    const absl::Duration now = clock_->Monotonic();
    while (!tasks_.empty() && tasks_.begin()->first.first <= now) {
      std::function<void()> task = std::move(tasks_.begin()->second);
      due_by_id_.erase(tasks_.begin()->first.second);
      tasks_.erase(tasks_.begin());
      mu_.Unlock();
      task();
      task = nullptr;  // what it captured goes unlocked
      mu_.Lock();
      if (stopping_) return;
    }
  }
}

}  // namespace internal
}  // namespace zkr
