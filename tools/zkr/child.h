// The user's command (CMD) as a process group that lives and dies with zkr.
//
// zkr forks a small guardian process, which makes a process group (named
// after its own pid), starts CMD in it and then leaves it for a group of its
// own, so that it can tell when no process is left in CMD's group (kill
// with signal 0) and signals for CMD do not reach it. The guardian:
//   - dies with zkr, taking the whole group with it (SIGKILL): if zkr is
//     killed, even with SIGKILL, nothing it started keeps running without
//     the lock (PR_SET_PDEATHSIG);
//   - kills the group (SIGKILL) at the last deadline zkr gave it (KillBy:
//     the lease's end), so a zkr that is stopped and cannot act (SIGSTOP, a
//     debugger) still cannot let CMD outlive the lease;
//   - adopts CMD's orphans (PR_SET_CHILD_SUBREAPER), reaps them, and exits
//     only once CMD has exited and no process is left in the group, so
//     Wait() returns — and zkr releases — only after CMD *and everything it
//     started in its group* has exited (checked at every SIGCHLD and every
//     50 ms: leaving the group sends no signal);
//   - lives until then, so the group's id (its pid) cannot be reused while
//     zkr may signal the group; Wait() stops signalling before it reaps it;
//   - holds no descriptor of zkr's own (no copy of the ZooKeeper socket);
//     CMD inherits 0, 1, 2 and the descriptors zkr itself was given
//     (KeepInheritedDescriptors: make's jobserver, `9>file`, socket
//     activation), as flock(1)'s CMD does.
// Signal() and Terminate() reach every process of the group.
//
// What this cannot cover: a process that leaves the group on purpose
// (setsid, setpgid — daemons do) is neither signalled nor waited for, even
// if it was adopted by the guardian first (it is only reaped if it exits
// while the guardian runs). The
// fencing token (ZKR_FENCING_TOKEN) is the real protection of the resource.
// CMD runs in a background process group: it cannot read from a terminal
// (as with timeout(1)); signals zkr receives are forwarded to it.
//
// Thread safety: Signal() and Terminate() may be called from any thread,
// concurrently with Wait(); Start() and Wait() from the main thread (the
// guardian's death signal follows the thread that forked it).
#ifndef ZKRECIPES_TOOLS_ZKR_CHILD_H_
#define ZKRECIPES_TOOLS_ZKR_CHILD_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace zkr {
namespace cli {

// Exit codes for a command that could not be started, as env(1), timeout(1)
// and nice(1) use them.
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitCommandNotFound = 127;

class Child {
 public:
  // Records the descriptors open now (from 3 on) as the caller's, for every
  // CMD to inherit. Call first thing in main(), before zkr opens any.
  static void KeepInheritedDescriptors();
  // zkr ignores SIGPIPE (a reader gone is a write error it handles: it lets
  // go, rather than die holding); CMD gets the disposition zkr was given.
  // Call first thing in main().
  static void IgnoreBrokenPipes();

  // Starts argv[0] (searched in PATH) with `env` added to the environment,
  // the default signal mask and only descriptors 0-2 and the caller's. NotFound when there is
  // no such command, PermissionDenied when it cannot be executed (both name
  // it), Internal when a fork or pipe failed. REQUIRES: the main thread.
  // `default_stop_signals`: CMD starts with SIGINT, SIGTERM, SIGUSR1 and
  // SIGUSR2 at their defaults even if zkr was given them ignored (zkr's own
  // hold process: a signal in the moment before it could set them is not
  // lost); a user's CMD gets the dispositions zkr was given, as from flock.
  static absl::StatusOr<std::unique_ptr<Child>> Start(
      const std::vector<std::string>& argv,
      const std::vector<std::pair<std::string, std::string>>& env,
      bool default_stop_signals = false);
  // The exit code for a failed Start(): 127, 126, or 1; prints the reason.
  static int ReportNotStarted(absl::string_view what, const absl::Status& status);

  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();

  // Waits until CMD and every process left in its group have exited;
  // returns CMD's exit code (128 + N when killed by signal N).
  int Wait() ABSL_LOCKS_EXCLUDED(mu_);
  // Sends `signal` to the whole group, unless it is gone.
  void Signal(int signal) ABSL_LOCKS_EXCLUDED(mu_);
  // SIGTERM to the group now, SIGKILL after `grace` if it is still there.
  void Terminate(absl::Duration grace) ABSL_LOCKS_EXCLUDED(mu_);
  // The guardian SIGKILLs the group at `deadline` (the wall clock) unless
  // told a later one first; InfiniteFuture: never (the default). The
  // backstop of the lease watchdog (command_run.h) for a zkr that cannot
  // act: stopped (SIGSTOP, a debugger) while CMD runs on. Never blocks.
  void KillBy(absl::Time deadline);

 private:
  Child(pid_t guardian, int report_fd, int deadline_fd)
      : guardian_(guardian), report_fd_(report_fd), deadline_fd_(deadline_fd) {}

  const pid_t guardian_;  // also CMD's process group's id
  const int report_fd_;   // the guardian writes CMD's wait status here
  const int deadline_fd_;  // KillBy's deadlines to the guardian (non-blocking)
  absl::Mutex mu_;
  bool reaped_ ABSL_GUARDED_BY(mu_) = false;  // then the group id may be reused
  std::vector<std::thread> killers_;
};

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_CHILD_H_
