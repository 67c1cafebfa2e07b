// zkr's signal handling: the signals that end, step down or job-control
// zkr are blocked in every thread and taken on a thread of its own.
#ifndef ZKRECIPES_TOOLS_ZKR_SIGNALS_H_
#define ZKRECIPES_TOOLS_ZKR_SIGNALS_H_

#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace zkr {
namespace cli {

// Blocks SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGTSTP and SIGCONT in
// every thread and handles them on a thread of its own. A SIGHUP ignored at
// start (nohup) stays ignored: it is neither blocked nor handled. Must be
// created before any other thread.
class Signals {
 public:
  Signals();
  ~Signals();
  // Installs the handler (called on the signal thread with the signal
  // number) and returns the first signal received so far, 0 if none: a
  // signal either came before (returned: the caller acts on it) or reaches
  // the new handler. Waits for a handler call in progress to finish, so that
  // after it returns the previous handler no longer runs.
  // REQUIRES: not called from a handler.
  int SetHandler(std::function<void(int)> handler) ABSL_LOCKS_EXCLUDED(mu_);

  // Installs a handler for the scope's lifetime; clears it on exit, so no
  // handler outlives the locals it refers to.
  class Scope {
   public:
    Scope(Signals& signals, std::function<void(int)> handler) : signals_(signals) {
      signals_.SetHandler(std::move(handler));
    }
    ~Scope() { signals_.SetHandler(nullptr); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Signals& signals_;
  };
  // The first signal received, or 0.
  int received() const ABSL_LOCKS_EXCLUDED(mu_);
  // While set, SIGUSR1 — and SIGHUP, unless ignored at start — call
  // `step_down` (on the signal thread) instead of the handler, and do not
  // count as received() (zkr elect: step down). Null clears it; returns once
  // a call in progress has finished. REQUIRES: not called from a handler.
  void SetStepDown(std::function<void()> step_down) ABSL_LOCKS_EXCLUDED(mu_);
  // Job control (Ctrl-Z, fg): SIGTSTP calls `job_control(SIGTSTP)` if set,
  // then stops zkr (SIGSTOP); SIGCONT calls `job_control(SIGCONT)`. Neither
  // counts as received(). Null clears it; returns once a call in progress has
  // finished. REQUIRES: not called from a handler.
  void SetJobControl(std::function<void(int)> job_control) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether SIGHUP was ignored at start (nohup): then it is never handled.
  bool hangup_ignored() const { return hangup_ignored_; }

 private:
  mutable absl::Mutex mu_;
  std::function<void(int)> handler_ ABSL_GUARDED_BY(mu_);
  std::function<void()> step_down_ ABSL_GUARDED_BY(mu_);
  std::function<void(int)> job_control_ ABSL_GUARDED_BY(mu_);
  const bool hangup_ignored_;
  int received_ ABSL_GUARDED_BY(mu_) = 0;
  bool handling_ ABSL_GUARDED_BY(mu_) = false;  // a handler call is running
  class Thread;
  std::unique_ptr<Thread> thread_;
};

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_SIGNALS_H_
