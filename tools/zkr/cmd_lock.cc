// zkr lock: acquire a lock, run a command, release — flock(1) across machines.
#include <signal.h>

#include <atomic>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/shared_lock.h"

DEFINE_string(path, "", "the lock (or election, barrier) path, e.g. /locks/nightly");
DEFINE_string(mode, "exclusive", "lock: read | write | exclusive");
DEFINE_string(timeout, "inf", "how long to wait, e.g. 30s; inf waits forever");
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
  std::atomic<bool> lost{false};
  absl::Mutex child_mu;
  Child* running = nullptr;  // guarded by child_mu
  int pending_signal = 0;    // guarded by child_mu
  auto session = ConnectFromFlags();
  if (!session.ok()) return Report("lock", session.status());

  // Lock loss while CMD runs: terminate it (unless --on-lost=ignore).
  LockOptions options;
  options.purpose = FLAGS_purpose.empty() ? absl::StrCat("zkr lock -- ", command[0]) : FLAGS_purpose;
  options.on_state_change = [&](LockState state) {
    if (state == LockState::kSuspended) {
      std::fprintf(stderr, "zkr lock: connection lost; the lock may be lost (lease until %s)\n",
                   absl::FormatTime((*session)->valid_until()).c_str());
    }
    if (state != LockState::kLost) return;
    lost = true;
    std::fprintf(stderr, "zkr lock: lock %s LOST\n", FLAGS_path.c_str());
    absl::MutexLock lock(&child_mu);
    if (running != nullptr && FLAGS_on_lost == "terminate") running->Terminate(*grace);
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
  // Ctrl-C while waiting cancels the attempt (its node is deleted). The
  // scope clears whatever handler is installed before the locals go.
  Signals::Scope scope(signals, [&](int) {
    if (shared_lock) shared_lock->Cancel();
    if (exclusive_lock) exclusive_lock->Cancel();
  });
  const bool read = FLAGS_mode == "read";
  auto acquire = [&]() -> absl::StatusOr<LockGuard> {
    if (!shared) return FLAGS_nonblock ? exclusive_lock->TryAcquire() : exclusive_lock->Acquire(*timeout);
    if (FLAGS_nonblock) return read ? shared_lock->TryAcquireRead() : shared_lock->TryAcquireWrite();
    return read ? shared_lock->AcquireRead(*timeout) : shared_lock->AcquireWrite(*timeout);
  };
  absl::StatusOr<LockGuard> guard = acquire();
  if (!guard.ok()) {
    if (absl::IsDeadlineExceeded(guard.status())) {
      std::fprintf(stderr, "zkr lock: %s is held; %s\n", FLAGS_path.c_str(),
                   FLAGS_nonblock ? "not waiting (--nonblock)"
                                  : absl::StrCat("not acquired within ", FLAGS_timeout).c_str());
      return kExitNotAcquired;
    }
    if (signals.received() != 0) return kExitInterrupted;
    return Report("lock", guard.status());
  }

  // Ctrl-C while CMD runs: forward it; release after CMD exits. Installed
  // before CMD starts, so no signal falls between the two handlers: one that
  // comes before CMD runs is held and forwarded once it does.
  signals.SetHandler([&](int signal) {
    absl::MutexLock lock(&child_mu);
    if (running != nullptr) {
      running->Signal(signal);
    } else {
      pending_signal = signal;
    }
  });
  // A signal that came while acquiring (Cancel() raced with success).
  if (signals.received() != 0) {
    (void)guard->Release();
    return kExitInterrupted;
  }
  auto child = Child::Start(command, {{"ZKR_FENCING_TOKEN", absl::StrCat(guard->fencing_token())},
                                      {"ZKR_LOCK_PATH", FLAGS_path},
                                      {"ZKR_LOCK_NODE", guard->node_path()}});
  if (!child.ok()) return Report("lock", child.status());
  {
    absl::MutexLock lock(&child_mu);
    running = child->get();
    if (lost && FLAGS_on_lost == "terminate") running->Terminate(*grace);
    if (pending_signal != 0) running->Signal(pending_signal);
  }
  const int code = (*child)->Wait();
  {
    absl::MutexLock lock(&child_mu);
    running = nullptr;
  }
  (void)guard->Release();
  if (lost && FLAGS_on_lost == "terminate") return kExitLost;
  return code;
}

}  // namespace cli
}  // namespace zkr
