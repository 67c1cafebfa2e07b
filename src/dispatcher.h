// The thread that runs user callbacks, in the order they were posted.
#ifndef ZKRECIPES_SRC_DISPATCHER_H_
#define ZKRECIPES_SRC_DISPATCHER_H_

#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace zkr {
namespace internal {

// Runs posted tasks one at a time on its own thread, in post order. Post() is
// thread-safe and never blocks on a running task, so the ZooKeeper completion
// thread may post. A task may post further tasks.
class Dispatcher {
 public:
  Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;
  // Shutdown().
  ~Dispatcher();

  // Runs the tasks already posted, then joins the thread. Called from a
  // dispatched task, it lets that thread finish the queue by itself.
  // Idempotent.
  void Shutdown();
  // Waits until every task posted so far has run (the thread stays, for
  // tasks posted later). From a dispatched task: returns at once.
  void Drain();

  // Queues `task`; after Shutdown(), runs it inline on the calling thread.
  void Post(std::function<void()> task);
  // Queues `task`; after Shutdown(), drops it (for reports that must never
  // run on the caller's thread).
  void PostUnlessStopped(std::function<void()> task);

  // True when called from this dispatcher's thread.
  bool OnDispatcherThread() const;

 private:
  struct Queue {
    absl::Mutex mu;
    std::deque<std::function<void()>> tasks ABSL_GUARDED_BY(mu);
    bool stopping ABSL_GUARDED_BY(mu) = false;
    bool stopped ABSL_GUARDED_BY(mu) = false;  // the thread has exited
    bool running ABSL_GUARDED_BY(mu) = false;  // a task is running
    // Conditions for absl::Mutex::Await (the analysis checks their bodies).
    bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return stopped || (tasks.empty() && !running);
    }
    bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return stopping || !tasks.empty(); }
  };
  static void Run(std::shared_ptr<Queue> queue);
  // Moves `task` into the queue unless the thread has stopped (then false,
  // and `task` is left as it was).
  bool Enqueue(std::function<void()>& task);

  std::shared_ptr<Queue> queue_;
  std::thread thread_;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_DISPATCHER_H_
