// The phase of `zkr lock`, `zkr semaphore`, `zkr elect` and `zkr barrier
// enter` in which CMD runs: it starts CMD (tools/zkr/child.h), forwards the
// signals zkr gets to CMD's whole process group, and returns only once the
// group has exited.
//
// The rule it keeps (issue 32): CMD's group is dead before another holder
// can be granted, whatever --grace says. While CMD runs, a watchdog knows
// the hold's lease (valid_until: the earliest moment the server could
// expire the session, less a margin; never extended from "now") and:
//   - sends SIGTERM when the hold becomes SUSPENDED, or when the lease has
//     no more than the effective grace left, whichever comes first;
//   - sends SIGKILL no later than the lease's end (re-read: it moves on
//     while the connection is healthy);
//   - on LOST, sends SIGKILL at once if the lease has ended (the session
//     expired), else SIGTERM and SIGKILL by the effective grace or the
//     lease's end, whichever is first (a node deleted by hand);
//   - for a revocation request that says its deadline (the requester's
//     grace), TERM as above and KILL before the deadline, measured from
//     when the request was heard, less a quarter of it (at most 1 s) for the
//     request's way to us.
// The effective grace is --grace capped at a third of the lease: while
// connected the remaining lease swings between about 2/3 and all of it (a
// heartbeat every third of the session timeout), so a grace of 2/3 would
// fire on a healthy hold; at a third, a heartbeat may come a third of the
// lease late (a loaded machine, a server's GC pause) before CMD is told.
// If zkr sent TERM or KILL for the hold's sake, lost() is true (zkr exits 4),
// even when the connection came back in time and the hold is still ours:
// CMD was told to stop and did not finish on its own terms; the hold is
// kept until its group has exited, then released.
//
// Thread safety: every method but Run() may be called from any thread (the
// signal thread, a session callback), before, during or after Run(), which
// runs on the main thread.
#ifndef ZKRECIPES_TOOLS_ZKR_COMMAND_RUN_H_
#define ZKRECIPES_TOOLS_ZKR_COMMAND_RUN_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tools/zkr/child.h"
#include "tools/zkr/common.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace cli {

class CommandRun {
 public:
  // The hold CMD runs under, as the watchdog reads it.
  struct Lease {
    // The hold's lease end (LockGuard::valid_until, Session::valid_until),
    // re-read by the watchdog. Null: no hold (zkr barrier): no watchdog.
    std::function<absl::Time()> valid_until;
    // The lease's length (LeaseLength()): --grace is capped at half of it.
    absl::Duration length = absl::InfiniteDuration();
  };
  // The length of `session`'s lease: negotiated timeout less the margin.
  static absl::Duration LeaseLength(const Session& session);

  // `terminate_on_loss` (--on_lost=terminate): CMD is stopped as the header
  // says; otherwise a loss is only remembered (lost()). `grace`: --grace.
  CommandRun(bool terminate_on_loss, absl::Duration grace)
      : terminate_on_loss_(terminate_on_loss), grace_(grace), refresh_(grace) {}
  CommandRun(const CommandRun&) = delete;
  CommandRun& operator=(const CommandRun&) = delete;

  // The hold's lease, once granted; before Run(). Without one (zkr
  // barrier) only a step-down or a loss stops CMD.
  void SetLease(Lease lease) ABSL_LOCKS_EXCLUDED(mu_, lease_mu_);

  // A signal for CMD's group; one that comes before CMD runs is held and
  // sent once it does.
  void Forward(int signal) ABSL_LOCKS_EXCLUDED(mu_);
  // The hold is SUSPENDED (SIGTERM now) / held again after a reconnect.
  void Suspended() ABSL_LOCKS_EXCLUDED(mu_);
  void Held() ABSL_LOCKS_EXCLUDED(mu_);
  // The hold is LOST (see above); a CMD not yet started does not start.
  void Lost() ABSL_LOCKS_EXCLUDED(mu_);
  // A revocation request was heard, whose requester may force the hold
  // `requester_grace` after asking (InfiniteDuration: never).
  void RevokeRequested(absl::Duration requester_grace) ABSL_LOCKS_EXCLUDED(mu_);
  // zkr elect steps down: SIGTERM now, SIGKILL after the effective grace;
  // Run() returns once the group is gone (the caller then yields). A CMD
  // not yet started does not start.
  void StepDown() ABSL_LOCKS_EXCLUDED(mu_);
  // Job control (Signals::SetJobControl). SIGTSTP: stop CMD's group
  // (SIGSTOP). SIGCONT: continue it if the hold is still good (not lost nor
  // suspended, within its lease), else SIGKILL it (a loss: lost()).
  void JobControl(int signal) ABSL_LOCKS_EXCLUDED(mu_);

  // Lost, or CMD was stopped by zkr for the hold's sake (exit 4).
  bool lost() const ABSL_LOCKS_EXCLUDED(mu_);
  bool stepped_down() const ABSL_LOCKS_EXCLUDED(mu_);
  // The effective grace: --grace capped at a third of the lease.
  absl::Duration grace() const ABSL_LOCKS_EXCLUDED(mu_);

  // Starts CMD with `env` added and waits for its group. Returns CMD's exit
  // code, or 126/127 (reported on stderr as "zkr <what>: ...") when it could
  // not be started, or 4 (kExitLost) without starting it when the hold is
  // already lost, suspended or past its lease, or a step-down came first.
  int Run(absl::string_view what, const std::vector<std::string>& argv,
          const std::vector<std::pair<std::string, std::string>>& env) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The watchdog, on a thread of its own while `child` runs.
  void Watch(Child& child) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Time LeaseEnd() const ABSL_LOCKS_EXCLUDED(lease_mu_);
  // Wakes the watchdog.
  void Changed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { changed_ = true; }

  const bool terminate_on_loss_;
  // Not under mu_: valid_until takes the hold's own lock.
  mutable absl::Mutex lease_mu_;
  Lease lease_ ABSL_GUARDED_BY(lease_mu_);
  mutable absl::Mutex mu_;
  absl::Duration grace_ ABSL_GUARDED_BY(mu_);  // effective, once SetLease() capped it
  // How long before the lease's end the watchdog re-reads it at the latest
  // (and tells the guardian, Child::KillBy): at least the grace, and up to
  // kGuardianMargin so that the guardian's kill never overtakes a lease
  // that moved on while zkr was busy.
  static constexpr absl::Duration kGuardianMargin = absl::Seconds(1);
  absl::Duration refresh_ ABSL_GUARDED_BY(mu_);
  absl::Time told_dead_by_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();  // to the guardian
  std::string what_ ABSL_GUARDED_BY(mu_);
  Child* running_ ABSL_GUARDED_BY(mu_) = nullptr;
  int pending_signal_ ABSL_GUARDED_BY(mu_) = 0;
  bool changed_ ABSL_GUARDED_BY(mu_) = false;  // the watchdog has something to look at
  bool done_ ABSL_GUARDED_BY(mu_) = false;     // the group has exited
  bool suspended_ ABSL_GUARDED_BY(mu_) = false;
  bool lost_ ABSL_GUARDED_BY(mu_) = false;
  bool terminated_ ABSL_GUARDED_BY(mu_) = false;  // stopped by zkr for the hold's sake
  bool stepping_down_ ABSL_GUARDED_BY(mu_) = false;
  bool paused_ ABSL_GUARDED_BY(mu_) = false;  // stopped with zkr (Ctrl-Z)
  bool term_sent_ ABSL_GUARDED_BY(mu_) = false;
  bool kill_sent_ ABSL_GUARDED_BY(mu_) = false;
  // CMD must be dead by: for the hold's sake (LOST, a revocation's
  // deadline, a continue past the lease) / for a step-down.
  absl::Time hold_dead_by_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  absl::Time step_down_dead_by_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  std::string why_ ABSL_GUARDED_BY(mu_);  // of the latest deadline, for the messages
  absl::Time last_lease_end_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();  // while held
};

// Without a CMD (`zkr lock --path=P`), zkr holds with a CMD of its own: zkr
// itself, run as `zkr --hold-until-signal`, which waits for a signal that
// ends it (SIGINT, SIGTERM, SIGUSR1/2; SIGHUP unless ignored at start). So
// the hold ends, is stopped and reports its end exactly as one with a CMD.
inline constexpr char kHoldUntilSignal[] = "--hold-until-signal";
// That CMD's argv.
std::vector<std::string> HoldCommand();
// That CMD's body (main() calls it for kHoldUntilSignal): never returns.
[[noreturn]] void HoldUntilSignal();
// Prints what CMD would get (`env`) on stdout as KEY=VALUE lines, for a
// hold without a CMD. False (said on stderr) if stdout cannot take them:
// then the caller lets go and exits 1.
bool PrintHeld(absl::string_view what,
               const std::vector<std::pair<std::string, std::string>>& env);

// Ctrl-Z and fg reach `run` (CommandRun::JobControl) for the scope's
// lifetime.
class JobControlScope {
 public:
  JobControlScope(Signals& signals, CommandRun& run) : signals_(signals) {
    signals_.SetJobControl([&run](int signal) { run.JobControl(signal); });
  }
  ~JobControlScope() { signals_.SetJobControl(nullptr); }
  JobControlScope(const JobControlScope&) = delete;
  JobControlScope& operator=(const JobControlScope&) = delete;

 private:
  Signals& signals_;
};

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_COMMAND_RUN_H_
