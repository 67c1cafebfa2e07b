// zkr elect: run a command only while this process is the elected leader.
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"

DECLARE_string(path);
DECLARE_string(on_lost);
DECLARE_string(grace);
DEFINE_string(id, "", "elect/barrier: this participant's id; default <hostname>_<pid>");
DEFINE_bool(who, false, "elect: print the current leader's id and exit (3 if there is none)");

namespace zkr {
namespace cli {
namespace {

int PrintLeader(Session& session) {
  auto queue = InspectQueue(session, FLAGS_path);
  if (!queue.ok()) return Report("elect", queue.status());
  if (queue->empty()) {
    std::fprintf(stderr, "zkr elect: no leader at %s\n", FLAGS_path.c_str());
    return kExitNotAcquired;
  }
  std::printf("%s\n", queue->front().data.c_str());
  return kExitOk;
}

}  // namespace

int RunElect(Signals& signals, const std::vector<std::string>& command) {
  if (absl::Status s = CheckPathFlag(FLAGS_path); !s.ok()) return Report("elect", s);
  if (!FLAGS_who && command.empty()) {
    return Report("elect", absl::InvalidArgumentError(
                               "no command: zkr elect --path P --id ID -- CMD ARGS (or --who)"));
  }
  if (absl::Status s = CheckOnLost(); !s.ok()) return Report("elect", s);
  auto grace = ParseDurationFlag("grace", FLAGS_grace);
  if (!grace.ok()) return Report("elect", grace.status());
  // What callbacks and handlers use outlives the session (declared first).
  std::atomic<bool> lost{false};
  absl::Mutex child_mu;
  Child* running = nullptr;  // guarded by child_mu
  auto session = ConnectFromFlags();
  if (!session.ok()) return Report("elect", session.status());
  if (FLAGS_who) return PrintLeader(**session);

  ElectionOptions options;
  options.id = FLAGS_id;
  options.on_change = [&](Leadership leadership) {
    std::fprintf(stderr, "zkr elect: %s\n", std::string(LeadershipName(leadership)).c_str());
    if (leadership != Leadership::kNotLeader) return;
    absl::MutexLock lock(&child_mu);
    if (running == nullptr) return;
    lost = true;
    if (FLAGS_on_lost == "terminate") running->Terminate(*grace);
  };
  auto election = LeaderElection::Create(**session, FLAGS_path, options);
  if (!election.ok()) return Report("elect", election.status());
  if (absl::Status joined = (*election)->Join(); !joined.ok()) return Report("elect", joined);
  // Ctrl-C while campaigning: leave (AwaitLeadership then returns). The
  // scope clears whatever handler is installed before the locals go.
  auto campaigning = [&](int) { (void)(*election)->Leave(); };
  Signals::Scope scope(signals, campaigning);

  for (;;) {
    absl::Status leading = (*election)->AwaitLeadership();
    if (signals.received() != 0) return kExitInterrupted;
    if (!leading.ok()) return Report("elect", leading);
    auto child = Child::Start(command, {{"ZKR_LEADER_EPOCH", absl::StrCat((*election)->epoch())},
                                        {"ZKR_ELECTION_PATH", FLAGS_path}});
    if (!child.ok()) return Report("elect", child.status());
    lost = false;
    {
      absl::MutexLock lock(&child_mu);
      running = child->get();
      if (!(*election)->IsLeader() && FLAGS_on_lost == "terminate") {
        lost = true;
        running->Terminate(*grace);
      }
    }
    signals.SetHandler([&](int signal) {
      absl::MutexLock lock(&child_mu);
      if (running != nullptr) running->Signal(signal);
    });
    const int code = (*child)->Wait();
    {
      absl::MutexLock lock(&child_mu);
      running = nullptr;
    }
    if (signals.received() != 0 || !lost || FLAGS_on_lost == "ignore") {
      (void)(*election)->Leave();
      return code;
    }
    // Leadership was lost and CMD terminated: campaign again (the election
    // re-queues by itself on the new session).
    std::fprintf(stderr, "zkr elect: leadership lost; CMD stopped; campaigning again\n");
    signals.SetHandler(campaigning);
  }
}

}  // namespace cli
}  // namespace zkr
