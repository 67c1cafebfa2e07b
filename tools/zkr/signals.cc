#include "tools/zkr/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace zkr {
namespace cli {

// The signals zkr handles on its thread (SIGHUP unless ignored at start).
static sigset_t HandledSignals(bool hangup_ignored) {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT}) sigaddset(&set, signal);
  if (!hangup_ignored) sigaddset(&set, SIGHUP);
  return set;
}

class Signals::Thread {
 public:
  explicit Thread(Signals* owner) : thread_([this, owner] { Run(owner); }) {}
  ~Thread() {
    stopping_ = true;
    pthread_kill(thread_.native_handle(), SIGCONT);  // handled whatever nohup said
    thread_.join();
  }

 private:
  void Run(Signals* owner) {
    const sigset_t set = HandledSignals(owner->hangup_ignored_);
    for (;;) {
      int signal = 0;
      if (sigwait(&set, &signal) != 0) continue;
      if (stopping_) return;
      std::function<void(int)> handler;
      {
        absl::MutexLock lock(&owner->mu_);
        if (signal == SIGTSTP || signal == SIGCONT) {
          // Job control, not a request to stop: CMD's group is stopped with
          // zkr (and continued only if the hold is still good).
          handler = owner->job_control_;
        } else if ((signal == SIGHUP || signal == SIGUSR1) && owner->step_down_) {
          // Taken over (zkr elect: step down): not a request to stop.
          auto step_down = owner->step_down_;
          handler = [step_down](int) { step_down(); };
        } else {
          if (owner->received_ == 0) owner->received_ = signal;
          handler = owner->handler_;
        }
        owner->handling_ = static_cast<bool>(handler);
      }
      if (handler) handler(signal);
      {
        absl::MutexLock lock(&owner->mu_);
        owner->handling_ = false;
      }
      // Blocked, SIGTSTP does not stop us: we stop ourselves, as the shell
      // expects, once CMD's group is stopped. SIGCONT continues us. A
      // SIGCONT that came meanwhile (Ctrl-Z and fg at once) is pending here:
      // our SIGSTOP would discard it and leave zkr and CMD stopped for good,
      // so then we do not stop, and the next sigwait hands it to the job
      // control (CMD's group continued), as a stop and continue at once are
      // for any process. (A SIGCONT between this check and the kill is the
      // kernel's own window, microseconds wide: tools/zkr/README.md.)
      if (signal == SIGTSTP) {
        sigset_t pending;
        if (sigpending(&pending) != 0 || !sigismember(&pending, SIGCONT)) kill(getpid(), SIGSTOP);
      }
    }
  }
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

namespace {
// nohup(1): a SIGHUP ignored at start stays ignored.
bool HangupIgnoredAtStart() {
  struct sigaction action;
  return sigaction(SIGHUP, nullptr, &action) == 0 && action.sa_handler == SIG_IGN;
}
}  // namespace

Signals::Signals() : hangup_ignored_(HangupIgnoredAtStart()) {
  const sigset_t set = HandledSignals(hangup_ignored_);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::make_unique<Thread>(this);
}

Signals::~Signals() { thread_.reset(); }

int Signals::SetHandler(std::function<void(int)> handler) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* handling) { return !*handling; }, &handling_));
  handler_ = std::move(handler);
  return received_;
}

void Signals::SetStepDown(std::function<void()> step_down) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* handling) { return !*handling; }, &handling_));
  step_down_ = std::move(step_down);
}

void Signals::SetJobControl(std::function<void(int)> job_control) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* handling) { return !*handling; }, &handling_));
  job_control_ = std::move(job_control);
}

int Signals::received() const {
  absl::MutexLock lock(&mu_);
  return received_;
}

}  // namespace cli
}  // namespace zkr
