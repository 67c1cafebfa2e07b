// zkr: the command-line tool over the zkrecipes recipes.
#include <fcntl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "tools/bench/bench.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "tools/zkr/demo.h"
#include "zkrecipes/version.h"

DECLARE_string(zk);
DECLARE_bool(json);
DEFINE_bool(quick, false, "bench: tiny counts (a smoke run)");
DEFINE_string(only, "", "bench: only these workloads, e.g. 2,3 (the floor always runs)");
DEFINE_bool(compare, false, "bench: also run Curator and Kazoo on the uncontended cycle (workload 8)");
DEFINE_int32(ensemble, 0, "bench: start a loopback ensemble of this many members (3 or 5) instead of one server");

namespace {

constexpr char kExitCodes[] =
    "Exit codes:\n"
    "  0    success (lock/elect/barrier enter: CMD's own exit code)\n"
    "  1    other failure (message on stderr), e.g. the --zk chroot does not exist, or\n"
    "       the node's ACL does not admit this client (not authenticated)\n"
    "  2    usage: bad flag, bad path, missing command\n"
    "  3    lock (semaphore leases) not acquired in time, or busy with --nonblock or\n"
    "       --timeout=0;\n"
    "       elect --who: no leader; barrier wait/enter: not passed within --timeout\n"
    "  4    the lock (leases) was lost while CMD ran (CMD's group got SIGTERM, then SIGKILL after\n"
    "       --grace)\n"
    "  5    no ZooKeeper server answered\n"
    "  126  CMD was found but cannot be executed\n"
    "  127  CMD was not found\n"
    "  130  interrupted (SIGINT, SIGTERM, SIGHUP) before CMD ran, in any phase (connecting,\n"
    "       waiting, leaving a barrier); the participant's node is deleted\n"
    "       (demo, bench, inspect: they stop at once)\n"
    "  128+N  CMD was killed by signal N\n"
    "\n"
    "CMD and its processes:\n"
    "  CMD runs in a process group of its own, under a small guardian process. Every\n"
    "  signal zkr gets while CMD runs, and the termination when the lock or leadership is\n"
    "  lost, goes to the whole group; zkr releases only after every process of the group\n"
    "  has exited. If zkr dies, even by SIGKILL, the whole group is killed with it. CMD\n"
    "  inherits descriptors 0-2 only. A process that leaves the group on purpose (setsid,\n"
    "  a daemon) is neither signalled nor waited for: hand ZKR_FENCING_TOKEN to the\n"
    "  resource you protect, it is the real protection. CMD cannot read from the\n"
    "  terminal (it is not in the foreground group, as with timeout(1)).\n";

constexpr char kGlobal[] =
    "Global flags:\n"
    "  --zk=HOSTS            host:port[,host:port...][/chroot]; default $ZKR_CONNECT, else "
    "127.0.0.1:2181\n"
    "  --session_timeout=10s ZooKeeper session timeout\n"
    "  --auth=digest:USER:PASSWORD  authenticate; the nodes zkr creates (lock, election\n"
    "                        and barrier directories and participants) then belong to\n"
    "                        USER: others can neither see, join, nor delete them\n"
    "  --acl=creator|open    ACL of created nodes; default creator with --auth, else open\n"
    "  --verbose             show the client's log and session state changes\n";

struct Subcommand {
  const char* name;
  const char* usage;
};

constexpr Subcommand kSubcommands[] = {
    {"lock",
     "zkr lock --path=P [--mode=read|write|exclusive] [--timeout=30s|0 | --nonblock]\n"
     "         [--on_lost=terminate|ignore] [--grace=10s] [--purpose=TEXT]\n"
     "         [--revoke_signal=USR1|...|none] [--stats] -- CMD ARGS...\n"
     "  Acquires the lock (waits up to --timeout, default forever; 0 tries once), runs\n"
     "  CMD, releases once CMD's whole process group has exited, and exits with CMD's\n"
     "  status. CMD gets ZKR_FENCING_TOKEN (strictly increasing across holders: hand it\n"
     "  to the resource you protect), ZKR_LOCK_PATH and ZKR_LOCK_NODE. If the lock is\n"
     "  lost while CMD runs (session lost, node deleted) CMD's group gets SIGTERM, then\n"
     "  SIGKILL after --grace, and zkr exits 4. A signal before CMD runs deletes the\n"
     "  queued node (exit 130); while CMD runs it is forwarded to CMD's group and the\n"
     "  lock released after the group exits. read/write share one queue with exclusive\n"
     "  (exclusive = write).\n"
     "  Several --path flags take all those locks or none (in path order, so two\n"
     "  commands naming the same locks in any order cannot deadlock; one --timeout for\n"
     "  all; a lock not taken in time gives back the others). CMD then gets\n"
     "  ZKR_LOCK_COUNT and, per lock n = 1.. in path order, ZKR_LOCK_PATH_n,\n"
     "  ZKR_LOCK_NODE_n and ZKR_FENCING_TOKEN_n; losing any lock is losing them all.\n"
     "  --stats prints one line at exit: how long the lock was waited for and held,\n"
     "  handoffs, losses, suspensions of the session and retries."},
    {"semaphore",
     "zkr semaphore --path=P --leases=N [--take=K] [--timeout=30s|0 | --nonblock]\n"
     "         [--on_lost=terminate|ignore] [--grace=10s] [--purpose=TEXT] [--stats]\n"
     "         -- CMD ARGS...\n"
     "  Takes K (default 1) of the N leases on P, all or none, and runs CMD as zkr lock\n"
     "  does (same exit codes, signals and loss handling). Waiters are served in order:\n"
     "  a large request is not passed by later small ones. Every participant of P must\n"
     "  give the same N; one that differs from a participant queued before it is\n"
     "  refused (exit 1). CMD also gets ZKR_LEASES=K and ZKR_SEMAPHORE_SIZE=N."},
    {"elect",
     "zkr elect --path=P [--id=ID] [--data=TEXT] [--on_lost=terminate|ignore] [--grace=10s]\n"
     "          [--stats] -- CMD ARGS...\n"
     "zkr elect --path=P --who [--watch] [--json]\n"
     "  Campaigns; runs CMD once elected (ZKR_LEADER_EPOCH = the leadership's fencing\n"
     "  epoch, ZKR_ELECTION_PATH); if leadership is lost CMD's group gets SIGTERM\n"
     "  (SIGKILL after --grace) and zkr campaigns again. When CMD exits by itself zkr\n"
     "  leaves the election and exits with CMD's status. --data is published on the\n"
     "  candidate's node (say, its address). SIGHUP makes a leader step down: CMD's\n"
     "  group is stopped as on a loss, the next candidate leads, and zkr queues again at\n"
     "  the back. --who prints the leader's id, and its data on a second line (JSON with\n"
     "  --json; exit 3 if there is none); with --watch, a line (or JSON object) at every\n"
     "  change of leader until stopped. --id must be UTF-8 text. --stats prints one\n"
     "  line at exit: terms led and for how long, suspensions and retries."},
    {"barrier",
     "zkr barrier --path=P set|remove|wait [--timeout=T]\n"
     "zkr barrier --path=P --count=N [--id=ID] [--timeout=T] enter [-- CMD ARGS...]\n"
     "  set/remove/wait: the simple barrier (wait returns once the node is removed).\n"
     "  enter: the double barrier: waits until N members entered; with CMD, runs it and\n"
     "  then leaves, waiting until all members have left; exits with CMD's status. A\n"
     "  signal while CMD runs goes to CMD's group, and zkr then leaves without waiting."},
    {"group",
     "zkr group --path=P join [--id=ID] [--data=TEXT] [--timeout=30s] -- CMD ARGS...\n"
     "zkr group --path=P list [--json] [--watch]\n"
     "  join: is a member of group P (its node holds ID and --data) while CMD runs, and\n"
     "  leaves once CMD's group has exited (signals and exit codes as zkr lock; CMD\n"
     "  gets ZKR_GROUP_PATH and ZKR_GROUP_NODE). list: prints \"ID<TAB>DATA\" per member\n"
     "  in join order (one JSON object with --json); with --watch, the whole list\n"
     "  again after every join or leave (plain lists end with a blank line), until\n"
     "  stopped."},
    {"revoke",
     "zkr revoke --path=P [--node=N] [--grace=10s] [--reason=TEXT]\n"
     "  Asks the holders of the lock or semaphore P (or only node N, see zkr inspect)\n"
     "  to let go: a holder run by zkr lock/semaphore passes it to CMD as a signal\n"
     "  (--revoke_signal, default USR1). A holder still there after --grace is forced:\n"
     "  it loses the lock (zkr lock terminates its CMD, exit 4); one cut off from the\n"
     "  server is waited for until its lease has ended. Prints \"<node> released\",\n"
     "  \"<node> forced\" or \"<node> not forced\" (a holder that cannot hear it) per holder."},
    {"inspect",
     "zkr inspect --path=P [--json]\n"
     "  The queue of a lock, semaphore or election: mode (R, W, or S<k>/<N> leases),\n"
     "  sequence, who holds, whom each waiter watches, owning session, age, host, the\n"
     "  participant's data, and revocation requests pending."},
    {"bench",
     "zkr bench [--zk=HOSTS | --ensemble=3] [--quick] [--json] [--only=2,3] [--compare]\n"
     "  Starts its own local ZooKeeper (unless --zk) and measures: (1) the raw C-client\n"
     "  floor, (2) uncontended lock cycles, (3) handoff under contention, (4) mixed\n"
     "  read/write, (5) 256 locks at once, (6) a 10,000-deep queue, (7) election failover,\n"
     "  (9) a semaphore of 4 leases under 16 sessions;\n"
     "  every figure as a ratio to the floor of the same run, with the targets.\n"
     "  --compare adds (8): Apache Curator and Kazoo on the cycle of (2), against the same\n"
     "  server (their Debian packages: `tools/run.sh bench --compare` installs them).\n"
     "  --ensemble=N runs them on a loopback ensemble of N members (3 or 5) started with\n"
     "  the test fixtures, as users run ZooKeeper; floors are measured on it too."},
    {"demo",
     "zkr demo [--zk=HOSTS]\n"
     "  A tour on an embedded local ZooKeeper (or --zk): the herd-free read/write queue,\n"
     "  a contention run checked by a ledger, and a leader failover."},
};

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "zkr: ZooKeeper locks, semaphores, elections, groups and barriers for shell "
               "scripts\n(zkr --version prints the version)\n\n");
  for (const Subcommand& sub : kSubcommands) std::fprintf(out, "%s\n\n", sub.usage);
  std::fprintf(out, "%s\n%s", kGlobal, kExitCodes);
}

}  // namespace

int main(int argc, char** argv) {
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
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    PrintUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? zkr::cli::kExitUsage : zkr::cli::kExitOk;
  }
  // The subcommand is the first argument naming one; flags may come before it.
  const Subcommand* sub = nullptr;
  int sub_index = 0;
  for (int i = 1; i < argc && sub == nullptr && std::strcmp(argv[i], "--") != 0; ++i) {
    for (const Subcommand& candidate : kSubcommands) {
      if (std::strcmp(argv[i], candidate.name) == 0) {
        sub = &candidate;
        sub_index = i;
      }
    }
  }
  if (sub == nullptr) {
    std::fprintf(stderr, "zkr: no subcommand given (lock, semaphore, elect, group, barrier, revoke, inspect, demo, bench)\n\n");
    PrintUsage(stderr);
    return zkr::cli::kExitUsage;
  }
  const std::string name = sub->name;
  // Split off the command after "--", answer --help ourselves, accept
  // --dashed-names for --underscored_names, and refuse unknown flags (exit 2).
  std::vector<std::string> command;
  std::vector<std::string> normalized;
  for (int i = 1; i < argc; ++i) {
    if (i == sub_index) continue;
    if (std::strcmp(argv[i], "--") == 0) {
      for (int j = i + 1; j < argc; ++j) command.push_back(argv[j]);
      break;
    }
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("%s\n\n%s\n%s", sub->usage, kGlobal, kExitCodes);
      return zkr::cli::kExitOk;
    }
    std::string arg = argv[i];
    if (arg.size() > 1 && arg[0] == '-') {
      const size_t start = arg.find_first_not_of('-');
      const size_t end = std::min(arg.find('='), arg.size());
      for (size_t k = start; k < end; ++k) {
        if (arg[k] == '-') arg[k] = '_';
      }
      std::string flag = arg.substr(start, end - start);
      gflags::CommandLineFlagInfo info;
      if (!gflags::GetCommandLineFlagInfo(flag.c_str(), &info) &&
          !(flag.rfind("no", 0) == 0 && gflags::GetCommandLineFlagInfo(flag.c_str() + 2, &info))) {
        std::fprintf(stderr, "zkr %s: unknown flag \"%s\" (see zkr %s --help)\n", name.c_str(),
                     argv[i], name.c_str());
        return zkr::cli::kExitUsage;
      }
    }
    normalized.push_back(arg);
  }
  // Every --path given, in order (gflags keeps only the last): zkr lock
  // takes them all at once, as a MultiLock; the others take one.
  std::vector<std::string> paths;
  for (size_t i = 0; i < normalized.size(); ++i) {
    const std::string& arg = normalized[i];
    const size_t start = arg.find_first_not_of('-');
    if (start == 0 || start == std::string::npos) continue;
    const std::string flag = arg.substr(start);
    if (flag.rfind("path=", 0) == 0) paths.push_back(flag.substr(5));
    if (flag == "path" && i + 1 < normalized.size()) paths.push_back(normalized[i + 1]);
  }
  if (paths.size() > 1 && name != "lock") {
    std::fprintf(stderr, "zkr %s: --path given %zu times (only zkr lock takes several)\n",
                 name.c_str(), paths.size());
    return zkr::cli::kExitUsage;
  }
  std::vector<char*> flags = {argv[0]};
  for (std::string& arg : normalized) flags.push_back(arg.data());
  int flag_count = static_cast<int>(flags.size());
  char** flag_argv = flags.data();
  gflags::SetUsageMessage(sub->usage);
  gflags::AllowCommandLineReparsing();
  gflags::ParseCommandLineNonHelpFlags(&flag_count, &flag_argv, /*remove_flags=*/true);
  std::vector<std::string> args(flag_argv + 1, flag_argv + flag_count);

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
    std::fprintf(stderr, "zkr %s: unexpected argument \"%s\" (the command goes after --)\n",
                 name.c_str(), args[0].c_str());
    return zkr::cli::kExitUsage;
  }
  if (name == "lock") return zkr::cli::RunLock(signals, command, paths);
  if (name == "semaphore") return zkr::cli::RunSemaphore(signals, command);
  if (name == "revoke") return zkr::cli::RunRevoke(signals);
  if (name == "group") return zkr::cli::RunGroup(signals, args, command);
  if (name == "elect") return zkr::cli::RunElect(signals, command);
  if (name == "barrier") return zkr::cli::RunBarrier(signals, args, command);
  return zkr::cli::RunInspect();
}
