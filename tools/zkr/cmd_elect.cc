// zkr elect: run a command only while this process is the elected leader.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gflags/gflags.h"
#include "src/utf8.h"
#include "tools/zkr/command_run.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "tools/zkr/plain_text.h"
#include "tools/zkr/progress.h"
#include "tools/zkr/stats.h"
#include "tools/zkr/stderr_writer.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"

DECLARE_string(path);
DECLARE_string(on_lost);
DECLARE_string(grace);
DECLARE_string(id);
DECLARE_bool(who);
DECLARE_bool(watch);
DECLARE_string(data);
DECLARE_bool(json);
DECLARE_string(wait);

namespace zkr {

namespace cli {
namespace {

// One answer of the observer, as --who prints it.
std::string LeaderLine(const std::optional<LeaderInfo>& leader) {
  if (FLAGS_json) {
    if (!leader.has_value()) return "{\"leader\":null}";
    return absl::StrCat("{\"leader\":{\"id\":", JsonString(leader->id),
                        ",\"data\":", JsonString(leader->data), ",\"epoch\":", leader->epoch,
                        ",\"node\":", JsonString(leader->node),
                        ",\"taken_over\":", leader->taken_over ? "true" : "false", "}}");
  }
  if (!leader.has_value()) return "(none)";
  // Escaped: the id and the data are one line each, whatever the data holds.
  return leader->data.empty() ? PlainText(leader->id)
                              : absl::StrCat(PlainText(leader->id), "\n", PlainText(leader->data));
}

// --who: the leader now; with --wait, the first one within the wait.
int PrintLeader(Session& session, absl::Duration wait) {
  auto observer = LeaderObserver::Create(session, FLAGS_path);
  if (!observer.ok()) return Report("elect", observer.status());
  absl::StatusOr<std::optional<LeaderInfo>> leader =
      (*observer)->Current(session.options().connect_timeout);
  const absl::Time deadline = absl::Now() + wait;
  while (leader.ok() && !leader->has_value() && absl::Now() < deadline) {
    leader = (*observer)->AwaitChange(*leader, deadline - absl::Now());
    if (absl::IsDeadlineExceeded(leader.status())) leader = std::optional<LeaderInfo>();
  }
  if (!leader.ok()) return Report("elect", leader.status());
  if (!leader->has_value() && !FLAGS_json) {
    PrintStderr("zkr elect: no leader at %s%s\n", FLAGS_path.c_str(),
                wait > absl::ZeroDuration() ? absl::StrCat(" within ", FLAGS_wait).c_str() : "");
    return NotAcquiredCode();
  }
  std::printf("%s\n", LeaderLine(*leader).c_str());
  return leader->has_value() ? kExitOk : NotAcquiredCode();
}

// --who --watch: a line per change, until a signal ends zkr (exit 130).
int WatchLeader(Session& session) {
  // A line only when it differs from the last one printed: a change the
  // line does not show (the new leader's takeover mark, in plain output)
  // prints nothing. On the dispatcher thread, one call at a time.
  // (Shared: the observer may call a copy of the callback.)
  auto last = std::make_shared<std::string>();
  auto observer = LeaderObserver::Create(
      session, FLAGS_path, [last](const std::optional<LeaderInfo>& l) {
        std::string line = LeaderLine(l);
        if (line == *last) return;
        std::printf("%s\n", line.c_str());
        FlushOrExit("elect");
        *last = std::move(line);
      });
  if (!observer.ok()) return Report("elect", observer.status());
  for (;;) absl::SleepFor(absl::Hours(1));  // the observer's callbacks print
}

}  // namespace

int RunElect(Signals& signals, const std::vector<std::string>& command) {
  if (absl::Status s = CheckPathFlag(FLAGS_path); !s.ok()) return Report("elect", s);
  // Without CMD, zkr leads until a signal ends it (HoldCommand()).
  const bool hold_only = !FLAGS_who && command.empty();
  if (hold_only && FLAGS_on_lost == "ignore") {
    return Report("elect", absl::InvalidArgumentError(
                               "--on_lost=ignore without CMD: nothing would end when leadership "
                               "is lost (give a CMD, or leave --on_lost out)"));
  }
  absl::Duration wait = absl::ZeroDuration();
  if (!FLAGS_wait.empty()) {
    auto parsed = ParseDurationFlag("wait", FLAGS_wait);
    if (!parsed.ok()) return Report("elect", parsed.status());
    wait = *parsed;
  }
  // --who prints the id and inspect lists it: it must be text.
  if (absl::Status s = CheckIdFlag(FLAGS_id, "candidate"); !s.ok()) return Report("elect", s);
  if (absl::Status s = CheckOnLost(); !s.ok()) return Report("elect", s);
  auto grace = ParseDurationFlag("grace", FLAGS_grace);
  if (!grace.ok()) return Report("elect", grace.status());
  absl::StatusOr<Dialect> dialect = DialectFlag();
  if (!dialect.ok()) return Report("elect", dialect.status());
  // What callbacks and handlers use outlives the session (declared first).
  absl::Mutex run_mu;
  CommandRun* current_run = nullptr;  // guarded by run_mu: this term's CMD
  // A step-down that came between the grant and the run (guarded by run_mu).
  bool step_down_pending = false;
  StatsLine stats("elect");  // --stats: printed once the session is gone
  ExitOnSignal(signals, "elect");
  auto session = ConnectFromFlags(stats.observer());
  if (!session.ok()) return Report("elect", session.status());
  // Until CMD runs, a signal closes the session: the campaign ends in any
  // phase and the server deletes our node. The scope clears whatever
  // handler is installed before the locals go.
  auto close_session = [&](int) { (*session)->Close(); };
  Signals::Scope scope(signals, close_session);
  if (const int signal = signals.received(); signal != 0) return Interrupted("elect", signal);
  if (FLAGS_who && FLAGS_watch) {
    ExitOnSignal(signals, "elect");  // nothing to undo: stop at once
    return WatchLeader(**session);
  }
  if (FLAGS_who) return PrintLeader(**session, wait);

  ElectionOptions options;
  options.id = FLAGS_id;
  options.data = FLAGS_data;
  options.dialect = *dialect;
  options.on_change = [&](Leadership leadership) {
    Inform("zkr elect: %s\n", std::string(LeadershipName(leadership)));
    absl::MutexLock lock(&run_mu);
    if (current_run == nullptr) return;
    switch (leadership) {
      case Leadership::kSuspended: current_run->Suspended(); break;
      case Leadership::kLeader: current_run->Held(); break;
      case Leadership::kNotLeader: current_run->Lost(); break;
    }
  };
  auto election = LeaderElection::Create(**session, FLAGS_path, options);
  if (!election.ok()) return Report("elect", election.status());
  // SIGHUP (unless ignored at start: nohup) and SIGUSR1: step down — CMD's
  // group is stopped first (TERM, KILL after the effective grace), then the
  // next candidate leads and we queue again at the back. Cleared before the
  // election goes.
  struct StepDownScope {
    Signals& signals;
    ~StepDownScope() { signals.SetStepDown(nullptr); }
  } step_down_scope{signals};
  LeaderElection* raw_election = election->get();
  signals.SetStepDown([&run_mu, &current_run, &step_down_pending, raw_election] {
    absl::MutexLock lock(&run_mu);
    if (current_run != nullptr) {
      Inform("zkr elect: stepping down: stopping CMD first\n");
      current_run->StepDown();  // the main thread yields once CMD's group is gone
    } else if (raw_election->IsLeader()) {
      // Granted, CMD not yet started: the main thread steps down before
      // starting it (a Yield here could hand over while CMD starts).
      step_down_pending = true;
    } else {
      Inform("zkr elect: step-down: not leading; nothing to do\n");
    }
  });
  absl::Status joined = (*election)->Join();
  if (const int signal = signals.received(); signal != 0) return Interrupted("elect", signal);
  if (!joined.ok()) return Report("elect", joined);

  for (;;) {
    absl::Status leading;
    {
      WaitProgress progress(**session, "elect", FLAGS_path);  // on a terminal, or --verbose
      leading = (*election)->AwaitLeadership();
    }
    if (const int signal = signals.received(); signal != 0) return Interrupted("elect", signal);
    if (!leading.ok()) return Report("elect", leading);
    CommandRun run(FLAGS_on_lost == "terminate", *grace);
    Session* raw_session = session->get();
    run.SetLease({[raw_session] { return raw_session->valid_until(); },
                  CommandRun::LeaseLength(*raw_session)});
    {
      absl::MutexLock lock(&run_mu);
      current_run = &run;
      if (std::exchange(step_down_pending, false)) run.StepDown();  // CMD does not start
    }
    if (!(*election)->IsLeader()) run.Lost();  // lost before on_change could see the run
    // While CMD runs, signals go to its group. One that came after the
    // check above closed the session: then CMD does not start.
    int code = kExitError;
    bool unwritten = false;
    {
      JobControlScope job_control(signals, run);  // Ctrl-Z stops CMD's group too
      const std::vector<std::pair<std::string, std::string>> env = {
          {"ZKR_LEADER_EPOCH", absl::StrCat((*election)->epoch())},
          {"ZKR_ELECTION_PATH", FLAGS_path}};
      if (const int signal = signals.SetHandler([&](int signal) { run.Forward(signal); });
          signal != 0) {
        code = Interrupted("elect", signal);
      } else if (hold_only && !PrintHeld("elect", env)) {
        unwritten = true;  // no term nobody was told of: leave below
      } else {
        code = run.Run("elect", hold_only ? HoldCommand() : command, env);
      }
    }
    {
      absl::MutexLock lock(&run_mu);
      current_run = nullptr;
    }
    if (unwritten) {
      (void)(*election)->Leave();
      return kExitError;
    }
    if (signals.received() == 0 && run.stepped_down()) {
      // CMD's group is gone: only now may the next candidate lead.
      absl::Status yielded = (*election)->Yield();
      if (yielded.ok()) {
        Inform("zkr elect: step-down: CMD stopped; stepped down; queued again at the back\n");
      } else {
        PrintStderr("zkr elect: step-down: %s\n", std::string(yielded.message()).c_str());
      }
      if (const int signal = signals.SetHandler(close_session); signal != 0) {
        return Interrupted("elect", signal);
      }
      continue;
    }
    if (signals.received() != 0 || !run.lost() || FLAGS_on_lost == "ignore") {
      (void)(*election)->Leave();
      return code;
    }
    // Leadership was lost and CMD's group terminated: campaign again (the
    // election re-queues by itself on the new session). A term stopped for
    // its lease (the connection went quiet, not yet SUSPENDED) still reads
    // as leading: wait until the lease is good again or leadership is gone,
    // rather than start CMD again only to stop it (a paced check: the lease
    // moves with each heartbeat, which tells nobody).
    Inform("zkr elect: leadership lost; CMD stopped; campaigning again\n");
    while (signals.received() == 0 && (*election)->IsLeader() &&
           (*session)->valid_until() - absl::Now() <= run.grace()) {
      absl::SleepFor(absl::Milliseconds(50));
    }
    if (const int signal = signals.SetHandler(close_session); signal != 0) {
      return Interrupted("elect", signal);
    }
  }
}

}  // namespace cli
}  // namespace zkr
