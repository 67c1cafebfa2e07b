#include "src/dispatcher.h"

#include <utility>

namespace zkr {
namespace internal {

Dispatcher::Dispatcher()
    : queue_(std::make_shared<Queue>()), thread_([queue = queue_] { Run(queue); }) {}

Dispatcher::~Dispatcher() { Shutdown(); }

void Dispatcher::Shutdown() {
  {
    absl::MutexLock lock(&queue_->mu);
    queue_->stopping = true;
  }
  if (!thread_.joinable()) return;
  if (OnDispatcherThread()) {
    thread_.detach();  // the thread owns the queue too and ends by itself
  } else {
    thread_.join();
  }
}

void Dispatcher::Drain() {
  if (OnDispatcherThread()) return;
  absl::MutexLock lock(&queue_->mu);
  queue_->mu.Await(absl::Condition(queue_.get(), &Queue::Idle));
}

void Dispatcher::Post(std::function<void()> task) {
  if (!Enqueue(task)) task();
}

void Dispatcher::PostUnlessStopped(std::function<void()> task) { Enqueue(task); }

bool Dispatcher::Enqueue(std::function<void()>& task) {
  absl::MutexLock lock(&queue_->mu);
  if (queue_->stopped) return false;
  queue_->tasks.push_back(std::move(task));
  return true;
}

bool Dispatcher::OnDispatcherThread() const {
  return std::this_thread::get_id() == thread_.get_id();
}

void Dispatcher::Run(std::shared_ptr<Queue> queue) {
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&queue->mu);
      queue->mu.Await(absl::Condition(queue.get(), &Queue::HasWork));
      if (queue->tasks.empty()) {  // stopping and drained
        queue->stopped = true;
        return;
      }
      task = std::move(queue->tasks.front());
      queue->tasks.pop_front();
      queue->running = true;
    }
    task();
    task = nullptr;  // what it captured goes before Drain() returns
    absl::MutexLock lock(&queue->mu);
    queue->running = false;
  }
}

}  // namespace internal
}  // namespace zkr
