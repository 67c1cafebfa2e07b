// Tasks that run once, after a delay, unless cancelled first.
#ifndef ZKRECIPES_SRC_DELAYED_TASKS_H_
#define ZKRECIPES_SRC_DELAYED_TASKS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "zkrecipes/clock.h"

namespace zkr {
namespace internal {

// Runs each task once its delay has passed on `clock`'s monotonic time, on
// a thread of its own (started with the first task). The library uses one
// for the whole process (Shared()), so that sessions' brief holds share its
// few wake-ups. Tasks must not block:
// they send a request and return. RunAfter() and Cancel() are thread-safe
// and never wait for a running task; a task cancelled while it runs
// finishes. The thread sleeps until the earliest task is due and is woken
// only when a new task is due before that, so a task scheduled and
// cancelled again and again (a short hold) costs no wake-up each time.
class DelayedTasks {
 public:
  explicit DelayedTasks(std::shared_ptr<Clock> clock) : clock_(std::move(clock)) {}
  DelayedTasks(const DelayedTasks&) = delete;
  DelayedTasks& operator=(const DelayedTasks&) = delete;
  // Shutdown().
  ~DelayedTasks();

  // Schedules `task` to run after `delay`; returns its id (never 0). After
  // Shutdown(), the task is dropped.
  uint64_t RunAfter(absl::Duration delay, std::function<void()> task) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the task `id` unless it has started; 0 and unknown ids are
  // ignored.
  void Cancel(uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops every pending task and joins the thread (which must not be the
  // caller). Idempotent.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);

  // The process's instance, on the system clock; never destroyed (its
  // thread may still sleep at exit).
  static DelayedTasks& Shared();

 private:
  // (due time, id): ordered by due time, unique by id.
  using Key = std::pair<absl::Duration, uint64_t>;
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // For Await: stopping, or a task is due before the planned wake-up.
  bool ShouldWake() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || (!tasks_.empty() && tasks_.begin()->first.first < wake_at_);
  }

  const std::shared_ptr<Clock> clock_;
  absl::Mutex mu_;
  std::map<Key, std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, absl::Duration> due_by_id_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::Duration wake_at_ ABSL_GUARDED_BY(mu_) = absl::InfiniteDuration();
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_DELAYED_TASKS_H_
