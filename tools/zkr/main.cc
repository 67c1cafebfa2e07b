// zkr: the command-line tool over the zkrecipes recipes.
#include <fcntl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "gflags/gflags.h"
#include "tools/bench/bench.h"
#include "tools/zkr/child.h"
#include "tools/zkr/command_run.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/completion.h"
#include "tools/zkr/common.h"
#include "tools/zkr/demo.h"
#include "tools/zkr/flags.h"
#include "tools/zkr/stderr_writer.h"
#include "zkrecipes/version.h"

DECLARE_string(zk);
DECLARE_bool(json);
DECLARE_bool(quick);
DECLARE_string(only);
DECLARE_bool(compare);
DECLARE_int32(ensemble);
DECLARE_int32(conflict_exit_code);

namespace {

using zkr::cli::kExitOk;
using zkr::cli::kExitUsage;

constexpr char kCmdProcesses[] =
    "CMD and its processes:\n"
    "  CMD runs in a process group of its own, under a small guardian process. Every\n"
    "  signal zkr gets while CMD runs, and the termination when the hold may be lost,\n"
    "  goes to the whole group; zkr releases only after every process of the group\n"
    "  has exited. If zkr dies, even by SIGKILL, the whole group is killed with it.\n"
    "  A process that leaves the group on purpose (setsid,\n"
    "  a daemon) is neither signalled nor waited for: hand ZKR_FENCING_TOKEN to the\n"
    "  resource you protect, it is the real protection. CMD cannot read from the\n"
    "  terminal (it is not in the foreground group, as with timeout(1)).\n"
    "  CMD inherits descriptors 0-2 and those zkr was given (make's jobserver, exec 9>\n"
    "  idioms, socket activation), none of zkr's own.\n";

constexpr char kEnvironment[] =
    "Environment:\n"
    "  A flag that has a variable (ZKR_CONNECT, ZKR_SESSION_TIMEOUT, ZKR_AUTH_FILE,\n"
    "  ZKR_AUTH, ZKR_ACL, ZKR_VERBOSE, ZKR_QUIET, ZKR_CLIENT_LOG; see Flags) and is not\n"
    "  on the command line takes\n"
    "  the variable's value if set and not empty: the command line, then the\n"
    "  environment, then the default. --auth on the command line also overrides\n"
    "  ZKR_AUTH_FILE, and --auth_file ZKR_AUTH.\n";

// A subcommand's usage: its synopsis (naming every flag of its own, without
// defaults) and what it does. Its flags and exit codes come from
// tools/zkr/flags.cc.
struct Subcommand {
  const char* name;
  const char* synopsis;
  const char* description;
  bool runs_cmd;
};

constexpr Subcommand kSubcommands[] = {
    {"lock",
     "zkr lock --path=P [--path=P2...] [-s | -x | --mode=read|write|exclusive]\n"
     "         [-w T | --timeout=T | -n | --nonblock] [-E N | --conflict_exit_code=N]\n"
     "         [--dialect=zkr|curator|kazoo] [--on_lost=terminate|ignore] [--grace=T] [--purpose=TEXT]\n"
     "         [--revoke_signal=SIG] [--stats] [-- CMD ARGS...]",
     "  Acquires the lock (waits up to --timeout, default forever; 0 tries once), runs\n"
     "  CMD, releases once CMD's whole process group has exited, and exits with CMD's\n"
     "  status. CMD gets ZKR_FENCING_TOKEN (strictly increasing across holders: hand it\n"
     "  to the resource you protect), ZKR_LOCK_PATH and ZKR_LOCK_NODE. CMD is dead\n"
     "  before anyone else can hold: if the hold may be lost while CMD runs (connection\n"
     "  lost, or only --grace left of the lease) CMD's group gets SIGTERM, and SIGKILL no\n"
     "  later than the lease's end; zkr exits 4. Ctrl-Z stops CMD's group with zkr; fg\n"
     "  continues it only while the hold is still good (else SIGKILL, exit 4). A SIGHUP\n"
     "  ignored at start (nohup) stays ignored. A signal before CMD runs deletes the\n"
     "  queued node (exit 130); while CMD runs it is forwarded to CMD's group and the\n"
     "  lock released after the group exits. read/write share one queue with exclusive\n"
     "  (exclusive = write).\n"
     "  Several --path flags take all those locks or none (in path order, so two\n"
     "  commands naming the same locks in any order cannot deadlock; one --timeout for\n"
     "  all; a lock not taken in time gives back the others). CMD then gets\n"
     "  ZKR_LOCK_COUNT and, per lock n = 1.. in path order, ZKR_LOCK_PATH_n,\n"
     "  ZKR_LOCK_NODE_n and ZKR_FENCING_TOKEN_n; losing any lock is losing them all.\n"
     "  zkr revoke asks the holder to let go: CMD's group gets --revoke_signal, and is\n"
     "  stopped before the revoker's --grace ends. --dialect=curator|kazoo shares one\n"
     "  lock with Apache Curator's or Kazoo's processes (one --path; no revoke).\n"
     "  Without CMD, zkr holds until SIGINT or SIGTERM (then releases and exits\n"
     "  128+N), printing what CMD would get (ZKR_FENCING_TOKEN=..., one per line) once\n"
     "  held; a loss or a revocation ends the hold as it would end CMD (exit 4).",
     true},
    {"semaphore",
     "zkr semaphore --path=P --leases=N [--take=K] [-w T | --timeout=T | -n | --nonblock]\n"
     "         [-E N | --conflict_exit_code=N] [--on_lost=terminate|ignore] [--grace=T]\n"
     "         [--purpose=TEXT] [--revoke_signal=SIG] [--stats] [-- CMD ARGS...]",
     "  Takes K (default 1) of the N leases on P, all or none, and runs CMD as zkr lock\n"
     "  does (same exit codes, signals, revocation and loss handling). Waiters are\n"
     "  served in order: a large request is not passed by later small ones. Every\n"
     "  participant of P must give the same N; one that differs from a participant\n"
     "  queued before it is refused (exit 1). CMD also gets ZKR_LEASES=K and\n"
     "  ZKR_SEMAPHORE_SIZE=N. Without CMD, zkr holds until a signal, as zkr lock does.",
     true},
    {"elect",
     "zkr elect --path=P [--id=ID] [--data=TEXT] [--on_lost=terminate|ignore] [--grace=T]\n"
     "          [--dialect=zkr|curator|kazoo] [--stats] [-- CMD ARGS...]\n"
     "zkr elect --path=P --who [--wait[=T] | --watch] [--json] [-E N | --conflict_exit_code=N]",
     "  Campaigns (mode \"campaign\"); runs CMD once elected (ZKR_LEADER_EPOCH = the\n"
     "  leadership's fencing epoch, ZKR_ELECTION_PATH); if leadership may be lost CMD's\n"
     "  group is stopped as zkr lock's is, and zkr campaigns again. When CMD\n"
     "  exits by itself zkr leaves the election and exits with CMD's status. --data is\n"
     "  published on the candidate's node (say, its address). SIGHUP (unless ignored\n"
     "  at start: nohup) or SIGUSR1 makes a leader step down: CMD's group is stopped\n"
     "  first (SIGTERM, SIGKILL after --grace), then the next candidate leads and zkr\n"
     "  queues again at the back. --dialect=curator|kazoo campaigns beside Curator's\n"
     "  LeaderLatch or Kazoo's Election processes (the node holds the id alone: no --data).\n"
     "  Without CMD, zkr leads until a signal ends it (exit 128+N), printing\n"
     "  ZKR_LEADER_EPOCH=... and ZKR_ELECTION_PATH=... each time it is elected; a step-\n"
     "  down or a loss ends that term as it would end CMD, and zkr campaigns again.\n"
     "  --who prints the leader's id, and its data on a second line (JSON with --json;\n"
     "  exit 3 if there is none); with --wait, waits for one first (bare: forever);\n"
     "  with --watch, a line (or JSON object) at every change of leader until stopped.",
     true},
    {"group",
     "zkr group --path=P join [--id=ID] [--data=TEXT] [-w T | --timeout=T | -n | --nonblock]\n"
     "          [-E N | --conflict_exit_code=N] [--on_lost=terminate|ignore] [--grace=T]\n"
     "          [--stats] [-- CMD ARGS...]\n"
     "zkr group --path=P list [--json] [--watch]",
     "  join: is a member of group P (its node holds ID and --data) while CMD runs, and\n"
     "  leaves once CMD's group has exited (signals and exit codes as zkr lock; CMD\n"
     "  gets ZKR_GROUP_PATH and ZKR_GROUP_NODE). list: prints \"ID<TAB>DATA\" per member\n"
     "  in join order, escaped (one JSON object with --json); with --watch, the whole\n"
     "  list again after every join or leave, with current data (plain lists end\n"
     "  with a blank line; a data change alone is not printed), until\n"
     "  stopped. join without CMD: a member until a signal ends it.",
     true},
    {"barrier",
     "zkr barrier --path=P set|remove\n"
     "zkr barrier --path=P wait [--timeout=T] [-E N | --conflict_exit_code=N]\n"
     "zkr barrier --path=P --count=N [--id=ID] [--timeout=T] [-E N | --conflict_exit_code=N]\n"
     "          enter [-- CMD ARGS...]",
     "  set/remove/wait: the simple barrier (wait returns once the node is removed).\n"
     "  enter: the double barrier: waits until N members entered; with CMD, runs it and\n"
     "  then leaves, waiting until all members have left; exits with CMD's status; if\n"
     "  leaving then fails, a line on stderr says so, and its code (130, 3, 1) is the\n"
     "  exit code only if CMD exited 0. A signal while CMD runs goes to CMD's group,\n"
     "  and zkr then leaves without waiting. --id: UTF-8 text without control\n"
     "  characters.",
     true},
    {"revoke",
     "zkr revoke --path=P [--node=N] [--grace=T] [--reason=TEXT]",
     "  Asks the holders of the lock or semaphore P (or only node N, see zkr inspect)\n"
     "  to let go: a holder run by zkr lock/semaphore passes it to CMD as a signal\n"
     "  (its --revoke_signal) and stops CMD before --grace ends (exit 4). A holder\n"
     "  still there after --grace is forced: it loses the lock; one cut off from the server is\n"
     "  waited for until its lease has ended. Prints \"<node> released\", \"<node> forced\"\n"
     "  or \"<node> not forced\" (a holder that cannot hear it) per holder.",
     false},
    {"inspect",
     "zkr inspect --path=P [--json]",
     "  The queue of a lock, semaphore or election: mode (R, W, or S<k>/<N> leases),\n"
     "  sequence, who holds, whom each waiter watches, owning session, age, host, the\n"
     "  participant's data (escaped), and revocation requests pending. A double\n"
     "  barrier's members are listed as members (how many of --count are inside,\n"
     "  whether it is open). A path that is no queue but has queues below it (a\n"
     "  parent of locks) exits 1 naming them on stderr; an absent or empty path is an\n"
     "  empty queue (exit 0).",
     false},
    {"ls",
     "zkr ls [--path=ROOT] [-R | --recursive] [--json] [--watch]",
     "  Every lock, semaphore, election, group and barrier in ROOT (default /; with -R\n"
     "  also below it), or ROOT alone if it is one: a line per queue (its kind, how many\n"
     "  hold and wait), then a line per participant: holds, waits, leads, queued or\n"
     "  inside; its mode; the host and pid of a zkr participant; the age of its node (a\n"
     "  holder has held for at most that long); its purpose or id, and whom a waiter\n"
     "  waits on. The server cannot tell an election from a group: such a queue is an\n"
     "  \"election or group\" whose first participant leads if it is an election.\n"
     "  --watch is a live view until stopped: on a terminal a full screen redrawn in\n"
     "  place at every change and every second (Ctrl-C leaves it as it was); otherwise\n"
     "  the listing (or JSON object) again at every change, ages aside, each plain\n"
     "  listing followed by a blank line.",
     false},
    {"bench",
     "zkr bench [--zk=HOSTS | --ensemble=N] [--quick] [--json] [--only=LIST] [--compare]",
     "  Starts its own local ZooKeeper (unless --zk) and measures: (1) the raw C-client\n"
     "  floor, (2) uncontended lock cycles, (3) handoff under contention, (4) mixed\n"
     "  read/write, (5) 256 locks at once, (6) a 10,000-deep queue, (7) election failover,\n"
     "  (9) a semaphore of 4 leases under 16 sessions;\n"
     "  every figure as a ratio to the floor of the same run, with the targets.\n"
     "  --compare adds (8): Apache Curator and Kazoo on the cycle of (2), against the same\n"
     "  server (their Debian packages: `tools/run.sh bench --compare` installs them).\n"
     "  --ensemble=N runs them on a loopback ensemble of N members (3 or 5) started with\n"
     "  the test fixtures, as users run ZooKeeper; floors are measured on it too.",
     false},
    {"demo",
     "zkr demo [--zk=HOSTS]",
     "  A tour on an embedded local ZooKeeper (or --zk): one session shared by every\n"
     "  recipe, the herd-free read/write queue (who waits on whom), a contention run\n"
     "  checked by a ledger, a semaphore shared by workers, and a leader failover.",
     false},
};

std::string Indented(const char* text) {
  return absl::StrCat("  ", absl::StrReplaceAll(text, {{"\n", "\n  "}}), "\n");
}

// zkr --help (and a bare zkr, on stderr): every synopsis, flag and exit code.
void PrintUsage(FILE* out) {
  std::string usage;
  for (const Subcommand& sub : kSubcommands) usage += Indented(sub.synopsis);
  std::fprintf(out,
               "zkr: ZooKeeper locks, semaphores, elections, groups and barriers for shell "
               "scripts\n(zkr --version prints the version; zkr SUB --help describes SUB;\n"
               "zkr --bash-completion prints a bash completion script)\n\n"
               "Usage:\n%s\nFlags:\n%s\nExit codes:\n%s\n%s\n%s",
               usage.c_str(), zkr::cli::FlagsHelp("").c_str(),
               zkr::cli::ExitCodesHelp("").c_str(), kCmdProcesses, kEnvironment);
}

// zkr SUB --help.
void PrintSubcommandUsage(const Subcommand& sub) {
  std::printf("Usage:\n%s\nDescription:\n%s\n\nFlags:\n%s\nExit codes:\n%s%s%s",
              Indented(sub.synopsis).c_str(), sub.description,
              zkr::cli::FlagsHelp(sub.name).c_str(), zkr::cli::ExitCodesHelp(sub.name).c_str(),
              sub.runs_cmd ? "\n" : "", sub.runs_cmd ? kCmdProcesses : "");
}

const Subcommand* FindSubcommand(const std::string& name) {
  for (const Subcommand& sub : kSubcommands) {
    if (name == sub.name) return &sub;
  }
  return nullptr;
}

}  // namespace

namespace {

int RunZkr(int argc, char** argv) {
  // Descriptors 0-2 are open (on /dev/null if zkr got them closed), so that
  // no descriptor of ours ever lands there and is inherited by CMD.
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) open("/dev/null", O_RDWR);
  }
  // Before any thread exists: signals are handled on a thread of their own.
  zkr::cli::Signals signals;
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("zkr %s (zkrecipes %s, ZooKeeper C client %s)\n", ZKRECIPES_VERSION_STRING,
                std::string(zkr::Version()).c_str(),
                std::string(zkr::ZooKeeperClientVersion()).c_str());
    return zkr::cli::kExitOk;
  }
  if (argc == 2 && (std::strcmp(argv[1], "--bash-completion") == 0 ||
                    std::strcmp(argv[1], "--bash_completion") == 0)) {
    std::printf("%s", zkr::cli::BashCompletion().c_str());
    return zkr::cli::kExitOk;
  }
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? zkr::cli::kExitUsage : zkr::cli::kExitOk;
  }
  // The subcommand is the first word that is neither a flag nor a flag's
  // value; flags may come before it.
  std::vector<std::string> words(argv + 1, argv + argc);
  const int at = zkr::cli::SubcommandIndex(words);
  if (at < 0) {
    zkr::cli::PrintStderr("zkr: no subcommand given (%s; see zkr --help)\n",
                          absl::StrJoin(zkr::cli::SubcommandNames(), ", ").c_str());
    return kExitUsage;
  }
  const Subcommand* sub = FindSubcommand(words[at]);
  if (sub == nullptr) {
    const std::string nearest = zkr::cli::NearestSubcommand(words[at]);
    zkr::cli::PrintStderr(
        "zkr: unknown subcommand \"%s\"%s (see zkr --help)\n", words[at].c_str(),
        nearest.empty() ? "" : absl::StrCat("; did you mean \"", nearest, "\"?").c_str());
    return kExitUsage;
  }
  const std::string name = sub->name;
  words.erase(words.begin() + at);
  for (const std::string& word : words) {
    if (word == "--") break;
    if (word == "--help" || word == "-h") {
      PrintSubcommandUsage(*sub);
      return kExitOk;
    }
  }
  // Each flag is set and checked here (exit 2 naming it): its value, that
  // this subcommand in this mode takes it, that it conflicts with no other.
  absl::StatusOr<zkr::cli::CommandLine> line = zkr::cli::ParseCommandLine(name, words);
  if (!line.ok()) return zkr::cli::Report(name, line.status());
  const std::string mode = zkr::cli::ModeOf(name, line->args);
  if (absl::Status s = zkr::cli::CheckFlagsTaken(name, mode, line->given); !s.ok()) {
    return zkr::cli::Report(
        mode.empty() || mode == "campaign" ? name : absl::StrCat(name, " ", mode), s);
  }
  // What the command line left unset, the environment may set (ZKR_...).
  if (absl::Status s = zkr::cli::ApplyEnvironment(name, mode, *line); !s.ok()) {
    return zkr::cli::Report(name, s);
  }
  if (FLAGS_conflict_exit_code < 0 || FLAGS_conflict_exit_code > 255) {
    return zkr::cli::Report(name, absl::InvalidArgumentError(absl::StrCat(
                                      "--conflict_exit_code=", FLAGS_conflict_exit_code,
                                      ": expected 0 to 255")));
  }
  const std::vector<std::string>& command = line->command;
  const std::vector<std::string>& paths = line->paths;
  const std::vector<std::string>& args = line->args;
  if (paths.size() > 1 && name != "lock") {
    zkr::cli::PrintStderr("zkr %s: --path given %zu times (only zkr lock takes several)\n",
                          name.c_str(), paths.size());
    return kExitUsage;
  }

  if (name == "demo" || name == "bench" || name == "inspect") {
    // These leave nothing that must be undone on the way out: a signal ends
    // the process at once. An embedded server dies with it (PR_SET_PDEATHSIG)
    // and its directory is removed by the next process that starts one.
    zkr::cli::ExitOnSignal(signals, name);
  }
  if (name == "demo") return zkr::cli::RunDemo(FLAGS_zk);
  if (name == "bench") {
    zkr::bench::BenchOptions options;
    options.connect = FLAGS_zk;
    options.quick = FLAGS_quick;
    options.json = FLAGS_json;
    options.only = FLAGS_only;
    options.compare = FLAGS_compare;
    options.ensemble = FLAGS_ensemble;
    return zkr::bench::RunBench(options);
  }
  if (!args.empty() && name != "barrier" && name != "group") {
    zkr::cli::PrintStderr("zkr %s: unexpected argument \"%s\" (the command goes after --)\n",
                          name.c_str(), args[0].c_str());
    return zkr::cli::kExitUsage;
  }
  if (name == "lock") return zkr::cli::RunLock(signals, command, paths);
  if (name == "semaphore") return zkr::cli::RunSemaphore(signals, command);
  if (name == "revoke") return zkr::cli::RunRevoke(signals);
  if (name == "group") return zkr::cli::RunGroup(signals, args, command);
  if (name == "elect") return zkr::cli::RunElect(signals, command);
  if (name == "barrier") return zkr::cli::RunBarrier(signals, args, command);
  if (name == "ls") return zkr::cli::RunLs(signals);
  return zkr::cli::RunInspect();
}

}  // namespace

// Whatever ran, its output must have reached stdout for exit 0.
int main(int argc, char** argv) {
  // zkr run without a CMD holds with this process as its CMD (command_run.h).
  if (argc == 2 && std::strcmp(argv[1], zkr::cli::kHoldUntilSignal) == 0) {
    zkr::cli::HoldUntilSignal();
  }
  // Before anything opens a descriptor: those the caller passed reach CMD.
  zkr::cli::Child::KeepInheritedDescriptors();
  zkr::cli::Child::IgnoreBrokenPipes();
  const int code = zkr::cli::FinishOutput(argc > 1 ? argv[1] : "", RunZkr(argc, argv));
  // The last lines for stderr, unless it stays blocked (stderr_writer.h).
  zkr::cli::FlushStderr(zkr::cli::kExitFlushBound);
  return code;
}
