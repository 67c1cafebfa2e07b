// zkr lock: acquire a lock, run a command, release — flock(1) across machines.
#include <signal.h>

#include <atomic>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "tools/zkr/command_run.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/shared_lock.h"

DEFINE_string(path, "", "the lock (or election, barrier) path, e.g. /locks/nightly");
DEFINE_string(mode, "exclusive", "lock: read | write | exclusive");
DEFINE_string(timeout, "inf", "how long to wait, e.g. 30s; 0 tries once; inf waits forever");
DEFINE_bool(nonblock, false, "lock: fail at once (exit 3) if the lock is held");
DEFINE_string(on_lost, "terminate",
              "lock/elect: what to do with CMD when the lock/leadership is lost: terminate "
              "(SIGTERM, then SIGKILL after --grace) | ignore");
DEFINE_string(grace, "10s", "time between SIGTERM and SIGKILL when terminating CMD");
DEFINE_string(purpose, "", "lock: free text stored in the lock node, shown by zkr inspect");

namespace zkr {
namespace cli {

absl::Status CheckOnLost() {
  if (FLAGS_on_lost != "terminate" && FLAGS_on_lost != "ignore") {
    return absl::InvalidArgumentError(
        absl::StrCat("--on-lost=", FLAGS_on_lost, ": expected terminate or ignore"));
  }
  return absl::OkStatus();
}

int RunLock(Signals& signals, const std::vector<std::string>& command) {
  if (absl::Status s = CheckPathFlag(FLAGS_path); !s.ok()) return Report("lock", s);
  if (command.empty()) {
    return Report("lock", absl::InvalidArgumentError("no command: zkr lock --path P -- CMD ARGS"));
  }
  if (FLAGS_mode != "read" && FLAGS_mode != "write" && FLAGS_mode != "exclusive") {
    return Report("lock", absl::InvalidArgumentError(absl::StrCat(
                              "--mode=", FLAGS_mode, ": expected read, write or exclusive")));
  }
  if (absl::Status s = CheckOnLost(); !s.ok()) return Report("lock", s);
  auto timeout = ParseDurationFlag("timeout", FLAGS_timeout);
  if (!timeout.ok()) return Report("lock", timeout.status());
  auto grace = ParseDurationFlag("grace", FLAGS_grace);
  if (!grace.ok()) return Report("lock", grace.status());

  // What the callbacks and signal handlers use is declared first, so it
  // outlives the session (whose destruction drains pending callbacks).
  CommandRun run(FLAGS_on_lost == "terminate", *grace);
  std::atomic<bool> closing{false};  // by a signal: no lock to report lost
  ExitOnSignal(signals, "lock");
  auto session = ConnectFromFlags();
  if (!session.ok()) return Report("lock", session.status());
  // From now until CMD runs, a signal closes the session: whatever is in
  // flight ends (Cancelled) and the server deletes our node, in any phase.
  // The scope clears whatever handler is installed before the locals go.
  Signals::Scope scope(signals, [&](int) {
    closing = true;
    (*session)->Close();
  });
  if (signals.received() != 0) return Interrupted("lock");

  // Lock loss while CMD runs: terminate its group (unless --on-lost=ignore).
  LockOptions options;
  options.purpose = FLAGS_purpose.empty() ? absl::StrCat("zkr lock -- ", command[0]) : FLAGS_purpose;
  options.on_state_change = [&](LockState state) {
    if (state == LockState::kSuspended) {
      std::fprintf(stderr, "zkr lock: connection lost; the lock may be lost (lease until %s)\n",
                   absl::FormatTime((*session)->valid_until()).c_str());
    }
    if (state != LockState::kLost) return;
    if (!closing) std::fprintf(stderr, "zkr lock: lock %s LOST\n", FLAGS_path.c_str());
    run.Lost();
  };

  const bool shared = FLAGS_mode != "exclusive";
  std::unique_ptr<SharedLock> shared_lock;
  std::unique_ptr<ExclusiveLock> exclusive_lock;
  if (shared) {
    auto created = SharedLock::Create(**session, FLAGS_path, options);
    if (!created.ok()) return Report("lock", created.status());
    shared_lock = std::move(*created);
  } else {
    auto created = ExclusiveLock::Create(**session, FLAGS_path, options);
    if (!created.ok()) return Report("lock", created.status());
    exclusive_lock = std::move(*created);
  }
  // A zero timeout tries once, as --nonblock does (flock -w 0).
  const bool try_once = FLAGS_nonblock || *timeout == absl::ZeroDuration();
  const bool read = FLAGS_mode == "read";
  auto acquire = [&]() -> absl::StatusOr<LockGuard> {
    if (!shared) return try_once ? exclusive_lock->TryAcquire() : exclusive_lock->Acquire(*timeout);
    if (try_once) return read ? shared_lock->TryAcquireRead() : shared_lock->TryAcquireWrite();
    return read ? shared_lock->AcquireRead(*timeout) : shared_lock->AcquireWrite(*timeout);
  };
  absl::StatusOr<LockGuard> guard = acquire();
  if (signals.received() != 0) return Interrupted("lock");
  if (!guard.ok()) {
    if (absl::IsDeadlineExceeded(guard.status())) {
      std::fprintf(stderr, "zkr lock: %s is held; %s\n", FLAGS_path.c_str(),
                   FLAGS_nonblock ? "not waiting (--nonblock)"
                   : try_once     ? "not waiting (--timeout=0)"
                                  : absl::StrCat("not acquired within ", FLAGS_timeout).c_str());
      return kExitNotAcquired;
    }
    return Report("lock", guard.status());
  }

  // While CMD runs, signals go to its group; the lock is released once the
  // group has exited. A signal that came after the check above closed the
  // session: then CMD does not start.
  if (signals.SetHandler([&](int signal) { run.Forward(signal); }) != 0) {
    return Interrupted("lock");
  }
  const int code = run.Run("lock", command,
                           {{"ZKR_FENCING_TOKEN", absl::StrCat(guard->fencing_token())},
                            {"ZKR_LOCK_PATH", FLAGS_path},
                            {"ZKR_LOCK_NODE", guard->node_path()}});
  (void)guard->Release();
  if (run.lost() && FLAGS_on_lost == "terminate") return kExitLost;
  return code;
}

}  // namespace cli
}  // namespace zkr
