// zkr lock: acquire a lock, run a command, release — flock(1) across machines.
// RunHolding is that run for any recipe that grants a LockGuard (lock,
// semaphore).
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gflags/gflags.h"
#include "tools/zkr/command_run.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "tools/zkr/plain_text.h"
#include "tools/zkr/progress.h"
#include "tools/zkr/stats.h"
#include "tools/zkr/stderr_writer.h"
#include "absl/strings/str_join.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/shared_lock.h"

DECLARE_string(path);
DECLARE_string(mode);
DECLARE_string(timeout);
DECLARE_bool(nonblock);
DECLARE_string(on_lost);
DECLARE_string(grace);
DECLARE_string(purpose);
DECLARE_string(revoke_signal);
DECLARE_string(dialect);

namespace zkr {
namespace cli {

// --revoke_signal: the signal's number, 0 for none.
absl::StatusOr<int> RevokeSignal() {
  static constexpr std::pair<const char*, int> kSignals[] = {
      {"none", 0}, {"URG", SIGURG}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP},
      {"INT", SIGINT}, {"TERM", SIGTERM}};
  absl::string_view name = FLAGS_revoke_signal;
  if (name.rfind("SIG", 0) == 0) name.remove_prefix(3);
  for (const auto& [known, number] : kSignals) {
    if (name == known) return number;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--revoke_signal=", FLAGS_revoke_signal, ": expected URG, USR1, USR2, HUP, INT, TERM or none"));
}

absl::Status CheckOnLost() {
  if (FLAGS_on_lost != "terminate" && FLAGS_on_lost != "ignore") {
    return absl::InvalidArgumentError(
        absl::StrCat("--on-lost=", FLAGS_on_lost, ": expected terminate or ignore"));
  }
  return absl::OkStatus();
}

int RunHolding(Signals& signals, const std::vector<std::string>& command, const Holding& what) {
  const char* name = what.command;
  if (absl::Status s = CheckPathFlag(FLAGS_path); !s.ok()) return Report(name, s);
  // Without CMD, zkr holds until a signal ends it (HoldCommand()).
  const bool hold_only = command.empty();
  if (hold_only && FLAGS_on_lost == "ignore") {
    return Report(name, absl::InvalidArgumentError(absl::StrCat(
                            "--on_lost=ignore without CMD: nothing would end when the hold is "
                            "lost (give a CMD, or leave --on_lost out)")));
  }
  if (what.check) {
    if (absl::Status s = what.check(); !s.ok()) return Report(name, s);
  }
  if (absl::Status s = CheckOnLost(); !s.ok()) return Report(name, s);
  absl::StatusOr<int> revoke_signal = RevokeSignal();
  if (!revoke_signal.ok()) return Report(name, revoke_signal.status());
  auto timeout = ParseDurationFlag("timeout", FLAGS_timeout);
  if (!timeout.ok()) return Report(name, timeout.status());
  auto grace = ParseDurationFlag("grace", FLAGS_grace);
  if (!grace.ok()) return Report(name, grace.status());

  // What the callbacks and signal handlers use is declared first, so it
  // outlives the session (whose destruction drains pending callbacks).
  CommandRun run(FLAGS_on_lost == "terminate", *grace);
  std::atomic<bool> closing{false};  // by a signal: no lock to report lost
  StatsLine stats(name);  // --stats: printed once the session is gone
  ExitOnSignal(signals, name);
  // --timeout covers connecting too (a try: kTryConnectBound).
  const WaitLimit limit(*timeout, FLAGS_nonblock || *timeout == absl::ZeroDuration());
  auto session = ConnectFromFlags(stats.observer(), limit.deadline());
  if (!session.ok()) return Report(name, session.status());
  // From now until CMD runs, a signal closes the session: whatever is in
  // flight ends (Cancelled) and the server deletes our node, in any phase.
  // The scope clears whatever handler is installed before the locals go.
  Signals::Scope scope(signals, [&](int) {
    closing = true;
    (*session)->Close();
  });
  if (const int signal = signals.received(); signal != 0) return Interrupted(name, signal);

  // Loss while CMD runs: terminate its group (unless --on-lost=ignore).
  LockOptions options;
  options.purpose = !FLAGS_purpose.empty() ? FLAGS_purpose
                    : hold_only          ? absl::StrCat("zkr ", name, ", no CMD")
                                         : absl::StrCat("zkr ", name, " -- ",
                                                        // (a purpose is one line)
                                                        absl::StrReplaceAll(command[0],
                                                                            {{"\n", "\\n"}}));
  options.on_state_change = [&](LockState state) {
    if (state == LockState::kSuspended) {
      Inform("zkr %s: connection lost; the hold may be lost (lease until %s)\n", name,
             absl::FormatTime((*session)->valid_until()));
      run.Suspended();
    }
    if (state == LockState::kHeld) run.Held();
    if (state != LockState::kLost) return;
    if (!closing) PrintStderr("zkr %s: %s LOST\n", name, what.label.c_str());
    run.Lost();
  };
  options.dialect = what.dialect;
  // A revocation request (zkr revoke) goes to CMD's group as a signal
  // (unless --revoke_signal=none): it should finish up and exit. The
  // requester may force the hold after its grace period (then: LOST), so
  // CMD's group is stopped before that in any case.
  if (what.dialect == Dialect::kZkr) {
    const int signal = *revoke_signal;
    options.on_revoke_request = [&run, name, signal](const RevokeRequest& request) {
      Inform("zkr %s: revocation of %s requested (%s): %s%s\n", name,
             PlainText(request.node_path),
             // Another client's text: escaped, nothing for the terminal.
             request.reason.empty() ? "no reason given" : PlainText(request.reason),
             signal == 0 ? "CMD not told (--revoke_signal=none)"
                         : absl::StrCat("signal ", signal, " to CMD"),
             request.grace == absl::InfiniteDuration()
                 ? ""
                 : absl::StrCat("; forced after ", absl::FormatDuration(request.grace)));
      if (signal != 0) run.Forward(signal);
      run.RevokeRequested(request.grace);
    };
  }
  // Made after the session and gone before it (declared after it).
  absl::StatusOr<Acquirer> acquire = what.make(**session, options);
  if (!acquire.ok()) return Report(name, acquire.status());
  // A zero timeout tries once, as --nonblock does (flock -w 0); so does a
  // timeout that connecting used up.
  const absl::Duration left = limit.left();
  const bool try_once = left == absl::ZeroDuration();
  absl::StatusOr<Held> held;
  {
    // A status line on a terminal (or --verbose lines) while it waits; for
    // several locks, the first path's queue.
    std::optional<WaitProgress> progress;
    if (!try_once && !what.progress_path.empty()) {
      progress.emplace(**session, name, what.progress_path);
    }
    held = (*acquire)(try_once, left);
  }
  if (const int signal = signals.received(); signal != 0) return Interrupted(name, signal);
  if (!held.ok()) {
    if (absl::IsDeadlineExceeded(held.status())) {
      PrintStderr("zkr %s: %s %s; %s\n", name, what.label.c_str(), what.busy.c_str(),
                  FLAGS_nonblock                       ? "not waiting (--nonblock)"
                  : *timeout == absl::ZeroDuration() ? "not waiting (--timeout=0)"
                      : absl::StrCat("not acquired within ", FLAGS_timeout).c_str());
      return NotAcquiredCode();
    }
    return Report(name, held.status());
  }

  // While CMD runs, signals go to its group; the hold is released once the
  // group has exited. A signal that came after the check above closed the
  // session: then CMD does not start.
  if (const int signal = signals.SetHandler([&](int signal) { run.Forward(signal); });
      signal != 0) {
    return Interrupted(name, signal);
  }
  run.SetLease({held->valid_until, CommandRun::LeaseLength(**session)});
  JobControlScope job_control(signals, run);  // Ctrl-Z stops CMD's group too
  if (hold_only && !PrintHeld(name, held->env)) {
    (void)held->release();
    return kExitError;
  }
  const int code = run.Run(name, hold_only ? HoldCommand() : command, held->env);
  (void)held->release();
  if (run.lost() && FLAGS_on_lost == "terminate") return kExitLost;
  return code;
}

Held HeldGuard(LockGuard guard) {
  auto shared = std::make_shared<LockGuard>(std::move(guard));
  Held held;
  held.env = {{"ZKR_FENCING_TOKEN", absl::StrCat(shared->fencing_token())},
              {"ZKR_LOCK_PATH", shared->lock_path()},
              {"ZKR_LOCK_NODE", shared->node_path()}};
  held.release = [shared] { return shared->Release(); };
  held.valid_until = [shared] { return shared->valid_until(); };
  return held;
}

namespace {

// The grant of a MultiLock: ZKR_LOCK_COUNT, and per part (1.., in the
// canonical order) ZKR_LOCK_PATH_<n>, ZKR_LOCK_NODE_<n>, ZKR_FENCING_TOKEN_<n>.
Held HeldParts(MultiLockGuard guard) {
  auto shared = std::make_shared<MultiLockGuard>(std::move(guard));
  Held held;
  held.env = {{"ZKR_LOCK_COUNT", absl::StrCat(shared->parts().size())}};
  int n = 0;
  for (const LockPart& part : shared->parts()) {
    ++n;
    held.env.push_back({absl::StrCat("ZKR_LOCK_PATH_", n), part.path});
    held.env.push_back({absl::StrCat("ZKR_LOCK_NODE_", n), shared->part(part.path)->node_path()});
    held.env.push_back(
        {absl::StrCat("ZKR_FENCING_TOKEN_", n), absl::StrCat(shared->fencing_token(part.path))});
  }
  held.release = [shared] { return shared->Release(); };
  held.valid_until = [shared] { return shared->valid_until(); };
  return held;
}

absl::StatusOr<Held> Granted(absl::StatusOr<LockGuard> guard) {
  if (!guard.ok()) return guard.status();
  return HeldGuard(std::move(*guard));
}

}  // namespace

int RunLock(Signals& signals, const std::vector<std::string>& command,
            std::vector<std::string> paths) {
  if (paths.empty()) paths.push_back(FLAGS_path);  // none given: RunHolding says so
  absl::StatusOr<Dialect> dialect = DialectFlag();
  if (!dialect.ok()) return Report("lock", dialect.status());
  if (*dialect != Dialect::kZkr && paths.size() > 1) {
    return Report("lock", absl::InvalidArgumentError(absl::StrCat(
                              "--dialect=", FLAGS_dialect,
                              " takes one --path: several are a multi-lock, which speaks zkr's "
                              "names only")));
  }
  if (*dialect != Dialect::kZkr && !gflags::GetCommandLineFlagInfoOrDie("revoke_signal").is_default) {
    return Report("lock", absl::InvalidArgumentError(absl::StrCat(
                              "--revoke_signal with --dialect=", FLAGS_dialect,
                              ": that dialect has no revocation requests")));
  }
  Holding lock;
  lock.dialect = *dialect;
  lock.command = "lock";
  lock.label = absl::StrJoin(paths, " ");
  lock.progress_path = paths[0];
  lock.busy = paths.size() > 1 ? "are not all free" : "is held";
  lock.check = [paths] {
    for (const std::string& path : paths) {
      if (absl::Status s = CheckPathFlag(path); !s.ok()) return s;
    }
    if (FLAGS_mode == "read" || FLAGS_mode == "write" || FLAGS_mode == "exclusive") {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        absl::StrCat("--mode=", FLAGS_mode, ": expected read, write or exclusive"));
  };
  lock.make = [paths](Session& session, const LockOptions& options) -> absl::StatusOr<Acquirer> {
    if (paths.size() > 1) {
      std::vector<LockPart> parts;
      const LockMode mode = FLAGS_mode == "read" ? LockMode::kRead : LockMode::kWrite;
      for (const std::string& path : paths) parts.push_back({path, mode});
      auto created = MultiLock::Create(session, std::move(parts), options);
      if (!created.ok()) return created.status();
      std::shared_ptr<MultiLock> multi = std::move(*created);
      return Acquirer([multi](bool try_once, absl::Duration timeout) -> absl::StatusOr<Held> {
        absl::StatusOr<MultiLockGuard> guard =
            try_once ? multi->TryAcquire() : multi->Acquire(timeout);
        if (!guard.ok()) return guard.status();
        return HeldParts(std::move(*guard));
      });
    }
    if (FLAGS_mode == "exclusive") {
      auto created = ExclusiveLock::Create(session, FLAGS_path, options);
      if (!created.ok()) return created.status();
      std::shared_ptr<ExclusiveLock> lock = std::move(*created);
      return Acquirer([lock](bool try_once, absl::Duration timeout) {
        return Granted(try_once ? lock->TryAcquire() : lock->Acquire(timeout));
      });
    }
    auto created = SharedLock::Create(session, FLAGS_path, options);
    if (!created.ok()) return created.status();
    std::shared_ptr<SharedLock> lock = std::move(*created);
    const bool read = FLAGS_mode == "read";
    return Acquirer([lock, read](bool try_once, absl::Duration timeout) {
      if (try_once) return Granted(read ? lock->TryAcquireRead() : lock->TryAcquireWrite());
      return Granted(read ? lock->AcquireRead(timeout) : lock->AcquireWrite(timeout));
    });
  };
  return RunHolding(signals, command, lock);
}

}  // namespace cli
}  // namespace zkr
