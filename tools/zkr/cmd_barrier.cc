// zkr barrier: the barrier and double-barrier recipes from the shell.
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "tools/zkr/command_run.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "zkrecipes/barrier.h"

DECLARE_string(path);
DECLARE_string(timeout);
DECLARE_string(id);
DECLARE_int32(count);

namespace zkr {

namespace cli {
namespace {

int RunSimpleBarrier(Session& session, const std::string& action, absl::Duration timeout,
                     Signals& signals) {
  auto barrier = Barrier::Create(session, FLAGS_path);
  if (!barrier.ok()) return Report("barrier", barrier.status());
  absl::Status status;
  if (action == "set") status = (*barrier)->Set();
  if (action == "remove") status = (*barrier)->Remove();
  if (action == "wait") status = (*barrier)->Wait(timeout);
  if (const int signal = signals.received(); signal != 0) return Interrupted("barrier", signal);
  return status.ok() ? kExitOk : Report("barrier", status);
}

}  // namespace

int RunBarrier(Signals& signals, const std::vector<std::string>& args,
               const std::vector<std::string>& command) {
  if (absl::Status s = CheckPathFlag(FLAGS_path); !s.ok()) return Report("barrier", s);
  if (args.size() != 1) {
    return Report("barrier", absl::InvalidArgumentError(
                                 "expected one action: set | remove | wait | enter"));
  }
  const std::string& action = args[0];
  auto timeout = ParseDurationFlag("timeout", FLAGS_timeout);
  if (!timeout.ok()) return Report("barrier", timeout.status());
  if (action == "leave") {
    return Report("barrier", absl::InvalidArgumentError(
                                 "leave needs the member's own session: use "
                                 "'zkr barrier --path P --count N enter -- CMD', which leaves "
                                 "(waiting for all members) after CMD exits"));
  }
  if (action != "set" && action != "remove" && action != "wait" && action != "enter") {
    return Report("barrier", absl::InvalidArgumentError(absl::StrCat(
                                 "unknown action \"", action, "\": set | remove | wait | enter")));
  }
  // enter's own flags are checked before connecting: bad input is a usage
  // error (exit 2) whether or not a server answers.
  if (action == "enter" && FLAGS_count < 1) {
    return Report("barrier", absl::InvalidArgumentError(absl::StrCat(
                                 "--count: enter needs at least 1 member, got ", FLAGS_count)));
  }
  // The id follows elect's rules (its node's data holds it; the node's name
  // a safe copy): any UTF-8 text without control characters.
  if (action == "enter") {
    if (absl::Status s = CheckIdFlag(FLAGS_id, "barrier member"); !s.ok()) {
      return Report("barrier", s);
    }
  }
  ExitOnSignal(signals, "barrier");
  // --timeout covers connecting and entering (or waiting); 0 checks once.
  const WaitLimit limit(*timeout, *timeout == absl::ZeroDuration());
  auto session = ConnectFromFlags(nullptr, limit.deadline());
  if (!session.ok()) return Report("barrier", session.status());
  // Except while CMD runs, a signal closes the session: a wait ends in any
  // phase and the server deletes our member node. The scope clears whatever
  // handler is installed before the locals go.
  auto close_session = [&](int) { (*session)->Close(); };
  Signals::Scope scope(signals, close_session);
  if (const int signal = signals.received(); signal != 0) return Interrupted("barrier", signal);
  if (action != "enter") {
    return RunSimpleBarrier(**session, action, limit.left(), signals);
  }

  // An empty id: the library's default, "<hostname>_<pid>".
  auto barrier = DoubleBarrier::Create(**session, FLAGS_path, FLAGS_id, FLAGS_count);
  if (!barrier.ok()) return Report("barrier", barrier.status());
  absl::Status entered = (*barrier)->Enter(limit.left());
  if (const int signal = signals.received(); signal != 0) return Interrupted("barrier", signal);
  if (!entered.ok()) return Report("barrier", entered);
  if (command.empty()) return kExitOk;  // a start gate
  CommandRun run(/*terminate_on_loss=*/false, absl::ZeroDuration());
  JobControlScope job_control(signals, run);  // Ctrl-Z stops CMD's group too
  if (const int signal = signals.SetHandler([&](int signal) { run.Forward(signal); });
      signal != 0) {
    return Interrupted("barrier", signal);
  }
  const int code = run.Run("barrier", command, {{"ZKR_BARRIER_PATH", FLAGS_path}});
  // Told to stop while CMD ran (the signal went to CMD): leave without
  // waiting for the others (our node goes; the last one out also removes
  // the ready flag).
  if (signals.SetHandler(close_session) != 0) {
    (void)(*barrier)->Leave(absl::ZeroDuration());
    return code;
  }
  absl::Status left = (*barrier)->Leave(*timeout);
  const int signal = signals.received();
  if (signal != 0) left = absl::CancelledError(absl::StrCat("interrupted (", strsignal(signal), ")"));
  if (left.ok()) return code;
  // CMD ran: its failure is what the caller must see; the failed leave is
  // said on stderr and decides the exit code only after a CMD that succeeded.
  const int report_code =
      Report("barrier", absl::Status(left.code(), absl::StrCat("leaving failed after CMD exited ",
                                                               code, ": ", left.message())));
  const int leave_code = signal != 0 ? 128 + signal : report_code;
  return code != kExitOk ? code : leave_code;
}

}  // namespace cli
}  // namespace zkr
