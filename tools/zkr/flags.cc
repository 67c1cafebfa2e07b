#include "tools/zkr/flags.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gflags/gflags.h"
#include "src/macros.h"

// Every zkr flag: gflags holds its type and default; its help is its row
// in FlagRows() below (the descriptions here stay empty: one text per flag).
DEFINE_string(path, "", "");
DEFINE_string(mode, "exclusive", "");
DEFINE_string(dialect, "zkr", "");
DEFINE_string(timeout, "inf", "");
DEFINE_bool(nonblock, false, "");
DEFINE_string(on_lost, "terminate", "");
DEFINE_string(grace, "10s", "");
DEFINE_string(purpose, "", "");
DEFINE_string(revoke_signal, "URG", "");
DEFINE_bool(stats, false, "");
DEFINE_int32(leases, 0, "");
DEFINE_int32(take, 1, "");
DEFINE_string(id, "", "");
DEFINE_string(data, "", "");
DEFINE_bool(who, false, "");
DEFINE_bool(watch, false, "");
DEFINE_bool(json, false, "");
DEFINE_int32(count, 0, "");
DEFINE_string(node, "", "");
DEFINE_string(reason, "", "");
DEFINE_bool(quick, false, "");
DEFINE_string(only, "", "");
DEFINE_bool(compare, false, "");
DEFINE_int32(ensemble, 0, "");
DEFINE_string(zk, "", "");
DEFINE_string(session_timeout, "10s", "");
DEFINE_string(auth, "", "");
DEFINE_string(acl, "", "");
DEFINE_bool(verbose, false, "");
DEFINE_int32(conflict_exit_code, 3, "");
DEFINE_string(wait, "", "");
DEFINE_string(auth_file, "", "");
DEFINE_bool(quiet, false, "");
DEFINE_bool(client_log, false, "");
DEFINE_bool(recursive, false, "");

namespace zkr {
namespace cli {
namespace {

// The subcommands that connect to a server, and those that run a CMD.
constexpr char kConnecting[] = "lock semaphore elect group barrier revoke inspect ls";
// Those whose --path names one lock, semaphore, election, group or barrier.
constexpr char kOnePath[] = "lock semaphore elect group barrier revoke inspect";
constexpr char kRunsCmd[] = "lock semaphore elect:campaign group:join barrier:enter";

// Two flags of which only one may be given (a bool counts when true).
struct Conflict {
  const char* a;
  const char* b;
  const char* why;
};
constexpr Conflict kConflicts[] = {
    {"timeout", "nonblock", "--nonblock is --timeout=0"},
    {"zk", "ensemble", "--ensemble starts its own servers"},
    {"auth", "auth_file", "one source of credentials"},
    {"wait", "watch", "--watch prints every change, no leader included"},
    {"quiet", "verbose", "one says nothing but errors, the other more"},
};

// Where each flag set from the environment got its value (FlagSource).
absl::Mutex env_mu;
std::map<std::string, std::string>& FromEnvironment() {
  static auto* set = new std::map<std::string, std::string>;
  return *set;
}

const ShortFlag* FindShort(char letter) {
  for (const ShortFlag& flag : ShortFlags()) {
    if (flag.letter == letter) return &flag;
  }
  return nullptr;
}

std::vector<std::string> Words(absl::string_view text, char by) {
  return absl::StrSplit(text, by, absl::SkipEmpty());
}

// "lock semaphore elect:campaign" -> "lock, semaphore, elect campaign".
std::string TakersText(absl::string_view takers) {
  if (takers == "*") return "every subcommand";
  std::vector<std::string> items;
  for (const std::string& item : Words(takers, ' ')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) {
      items.push_back(item);
      continue;
    }
    const std::string sub = item.substr(0, colon);
    const std::vector<std::string> modes = Words(item.substr(colon + 1), ',');
    items.push_back(modes.size() == ModesOf(sub).size()
                        ? sub
                        : absl::StrCat(sub, " ", absl::StrJoin(modes, "/")));
  }
  return absl::StrJoin(items, ", ");
}

// For a subcommand of several modes, the modes a row is limited to: "join: ".
std::string ModePrefix(absl::string_view takers, absl::string_view sub) {
  const std::vector<std::string>& modes = ModesOf(sub);
  std::vector<std::string> taken;
  for (const std::string& mode : modes) {
    if (Takes(takers, sub, mode)) taken.push_back(mode);
  }
  if (taken.size() == modes.size()) return "";
  return absl::StrCat(absl::StrJoin(taken, ", "), ": ");
}

std::string DefaultOf(const FlagRow& row) {
  if (row.default_text != nullptr) return row.default_text;
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(row.name, &info)) return "";
  if (info.type == "bool" && info.default_value == "false") return "";
  return info.default_value;
}

// "  KEY   text..." wrapped at 80 columns, the text from column `column`.
std::string Entry(const std::string& key, const std::string& text, size_t column) {
  std::string out = absl::StrCat("  ", key);
  size_t width = out.size();
  if (width + 2 > column) {
    out += "\n";
    width = 0;
  }
  bool first = true;
  for (const std::string& word : Words(text, ' ')) {
    if (!first && width + 1 + word.size() > 80) {
      out += "\n";
      width = 0;
    }
    if (width < column) {
      out.append(column - width, ' ');
      width = column;
    } else {
      out += ' ';
      ++width;
    }
    out += word;
    width += word.size();
    first = false;
  }
  return out + "\n";
}

const FlagRow* FindRow(absl::string_view name) {
  for (const FlagRow& row : FlagRows()) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

// Optimal string alignment distance (a transposition counts as one edit).
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// Of `names`, the one nearest to `word`, at most 2 edits away; "" if none is.
std::string NearestName(absl::string_view word, const std::vector<std::string>& names) {
  std::string nearest;
  size_t best = 3;
  for (const std::string& name : names) {
    const size_t distance = EditDistance(word, name);
    if (distance < best) {
      best = distance;
      nearest = name;
    }
  }
  return nearest;
}

// "--on-lost=x" -> name "on_lost", value "x", has_value; "-x" works too.
struct FlagWord {
  std::string name;
  std::string value;
  bool has_value = false;
};
FlagWord SplitFlag(absl::string_view word) {
  FlagWord flag;
  word.remove_prefix(word.size() > 1 && word[1] == '-' ? 2 : 1);
  const size_t eq = word.find('=');
  flag.name = std::string(word.substr(0, eq));
  std::replace(flag.name.begin(), flag.name.end(), '-', '_');
  if (eq != absl::string_view::npos) {
    flag.value = std::string(word.substr(eq + 1));
    flag.has_value = true;
  }
  return flag;
}
bool IsFlagWord(absl::string_view word) { return word.size() > 1 && word[0] == '-'; }
// "-x", "-xn", "-w5": one dash, and not a long flag written with one dash
// ("-verbose", which gflags' users may type).
bool IsShortFlagWord(absl::string_view word) {
  if (word.size() < 2 || word[0] != '-' || word[1] == '-') return false;
  const std::string name = SplitFlag(word).name;
  return FindRow(name) == nullptr && !(name.rfind("no", 0) == 0 && FindRow(name.substr(2)));
}

bool IsBool(const std::string& name) {
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(name.c_str(), &info) && info.type == "bool";
}

// Whether a word of short flags takes the next word as its value ("-w 5",
// "-nw 5"; not "-w5").
bool ShortFlagsTakeNextWord(absl::string_view word) {
  for (size_t at = 1; at < word.size(); ++at) {
    const ShortFlag* flag = FindShort(word[at]);
    if (flag == nullptr) return false;
    if (flag->value == nullptr) return at + 1 == word.size();
  }
  return false;
}

}  // namespace

const std::vector<std::string>& SubcommandNames() {
  static const auto* names = new std::vector<std::string>{
      "lock", "semaphore", "elect", "group", "barrier", "revoke", "inspect", "ls", "bench", "demo"};
  return *names;
}

const std::vector<std::string>& ModesOf(absl::string_view sub) {
  static const auto* one = new std::vector<std::string>{""};
  static const auto* elect = new std::vector<std::string>{"campaign", "--who"};
  static const auto* group = new std::vector<std::string>{"join", "list"};
  static const auto* barrier = new std::vector<std::string>{"set", "remove", "wait", "enter"};
  if (sub == "elect") return *elect;
  if (sub == "group") return *group;
  if (sub == "barrier") return *barrier;
  return *one;
}

// To add a flag: DEFINE it above (or anywhere: a flag without a row here is
// refused as unknown) and give it a row; then list it in zkr.1's SYNOPSIS
// and OPTIONS (cli_usage_test checks both against `--help`).
const std::vector<FlagRow>& FlagRows() {
  static const auto* rows = new std::vector<FlagRow>{
      {"path", "P", kOnePath,
       "the lock, semaphore, election, group or barrier; zkr lock takes several (all or none)"},
      {"path", "ROOT", "ls", "where to look", "/"},
      {"recursive", "", "ls",
       "also every directory below ROOT, at any depth (the first 1000 queues)"},
      {"mode", "read|write|exclusive", "lock",
       "read holders share the lock; write = exclusive; both kinds wait in one queue"},
      {"dialect", "zkr|curator|kazoo", "lock elect",
       "whose node names to speak, to share the lock or election with Apache Curator's "
       "(InterProcessMutex for exclusive, InterProcessReadWriteLock for read/write, LeaderLatch) "
       "or Kazoo's (Lock/WriteLock, ReadLock, Election) processes; no revocation requests then, "
       "and an election's node holds the --id alone (--who reads any dialect by itself)"},
      {"timeout", "T", "lock semaphore group:join barrier:wait,enter",
       "how long to wait, connecting included (which gets at least 2s): a bare number is "
       "seconds (5, 0.5, as flock -w and timeout take it), or 30s, 1m30s, 500ms; 0 tries once, "
       "as does a timeout used up by connecting; inf waits forever"},
      {"nonblock", "", "lock semaphore group:join",
       "try once, like flock -n: connect within 2s, then take a free hold or exit 3 at once; "
       "the same as --timeout=0"},
      {"on_lost", "terminate|ignore", "lock semaphore elect:campaign group:join",
       "what happens to CMD when the hold (lock, leases, leadership, membership) may be lost: "
       "terminate = SIGTERM to CMD's group when the connection is lost or the lease has --grace "
       "left, SIGKILL by the lease's end, at once if the hold is lost (CMD is dead before anyone "
       "else can hold)"},
      {"grace", "T", "lock semaphore elect:campaign group:join",
       "time between SIGTERM and SIGKILL when CMD's group is stopped, capped at a third of "
       "the session's lease (a longer --grace is capped by it: 3.1s at the default 10s session)"},
      {"grace", "T", "revoke",
       "how long holders have to let go before they are forced (a zkr holder stops its CMD "
       "before)"},
      {"purpose", "TEXT", "lock semaphore",
       "stored in the node, shown by zkr inspect; one line", "zkr SUB -- CMD"},
      {"revoke_signal", "SIG", "lock semaphore",
       "the signal CMD's group gets when zkr revoke asks for the hold: URG (ignored by a CMD "
       "without a handler: it asks, it does not kill), USR1, USR2, HUP, INT, TERM, or none; a "
       "CMD still running is stopped before the revoker's --grace ends all the same"},
      {"stats", "", "lock semaphore elect:campaign group:join",
       "at exit, one line on stderr: waits, holds, handoffs, losses, terms, suspensions of the "
       "session and retries"},
      {"leases", "N", "semaphore",
       "the number of leases on the path (required; every participant gives the same)", ""},
      {"take", "K", "semaphore", "how many leases to take at once, all or none"},
      {"id", "ID", "elect:campaign group:join barrier:enter", "this participant's id (UTF-8 text)",
       "HOSTNAME_PID"},
      {"data", "TEXT", "elect:campaign group:join",
       "what this participant publishes on its node (say, its address)"},
      {"who", "", "elect",
       "print the leader's id (and its --data on a second line) instead of campaigning; exit 3 if "
       "there is none"},
      {"wait", "T", "elect:--who",
       "if there is no leader, wait up to T for one (bare --wait: forever); exit 3 if none came",
       "", nullptr, "inf"},
      {"watch", "", "elect:--who group:list",
       "print again at every change of what is printed, until stopped"},
      {"watch", "", "ls",
       "a live view until stopped: on a terminal a full screen redrawn in place (like top), "
       "else the listing again at every change (ages aside)"},
      {"json", "", "elect:--who group:list inspect ls bench", "print JSON"},
      {"count", "N", "barrier:enter", "how many members the double barrier waits for (required)",
       ""},
      {"node", "N", "revoke",
       "only this holder's node (a child name, see zkr inspect); an empty one is refused"},
      {"reason", "TEXT", "revoke", "why, handed to the holder", "zkr revoke, pid PID"},
      {"quick", "", "bench", "tiny counts (a smoke run)"},
      {"only", "LIST", "bench", "only these workloads, e.g. 2,3 (the floor always runs)"},
      {"compare", "", "bench", "also run Curator and Kazoo on the uncontended cycle (workload 8), with the programs in tools/bench/compare of a source tree: the build's, or the directory in ZKR_COMPARE_DIR (the packages do not ship them)"},
      {"ensemble", "N", "bench",
       "start a loopback ensemble of N members (3 or 5) instead of one server", ""},
      {"zk", "HOSTS", kConnecting, "host:port[,host:port...][/chroot]", "127.0.0.1:2181",
       "ZKR_CONNECT"},
      {"zk", "HOSTS", "demo bench", "a ZooKeeper to use", "an embedded local server"},
      {"session_timeout", "T", kConnecting,
       "the ZooKeeper session timeout, 100ms to 24h (the server negotiates it into its range)",
       nullptr, "ZKR_SESSION_TIMEOUT"},
      {"auth", "digest:USER:PASSWORD", kConnecting,
       "authenticate; the nodes zkr creates then belong to USER (with --acl=creator): others can "
       "neither see, join, nor delete them; visible in ps: prefer --auth_file",
       nullptr, "ZKR_AUTH"},
      {"auth_file", "FILE", kConnecting,
       "as --auth, read from FILE's first line (digest:USER:PASSWORD), so that no password shows "
       "in ps or the shell's history",
       nullptr, "ZKR_AUTH_FILE"},
      {"acl", "creator|open", kConnecting, "the ACL of the nodes zkr creates",
       "creator with --auth, else open", "ZKR_ACL"},
      {"verbose", "", kConnecting,
       "say more on stderr: the session's state changes and, while waiting, a line for each "
       "change of the queue (how many are ahead, who holds)",
       nullptr, "ZKR_VERBOSE"},
      {"quiet", "", kConnecting,
       "say nothing on stderr but errors: no status line while waiting, no notices (elected, "
       "a revocation requested, the connection lost)",
       nullptr, "ZKR_QUIET"},
      {"client_log", "", kConnecting, "show the ZooKeeper C client's own log on stderr", nullptr,
       "ZKR_CLIENT_LOG"},
      {"conflict_exit_code", "N", "lock semaphore group:join barrier:wait,enter elect:--who",
       "the exit code, 0 to 255, for \"not acquired in time\", \"busy\" or \"no leader\" "
       "(flock's -E)"},
  };
  return *rows;
}

const std::vector<ShortFlag>& ShortFlags() {
  static const auto* flags = new std::vector<ShortFlag>{
      {'s', "mode", "read"},        {'x', "mode", "exclusive"}, {'n', "nonblock", "true"},
      {'w', "timeout", nullptr},    {'E', "conflict_exit_code", nullptr},
      {'R', "recursive", "true"},
  };
  return *flags;
}

const std::vector<ExitRow>& ExitRows() {
  static const auto* rows = new std::vector<ExitRow>{
      {"0", "*", "success; a subcommand that runs CMD exits with CMD's own status"},
      {"1", "*",
       "other failure (message on stderr), e.g. the --zk chroot does not exist, or a node's ACL "
       "does not admit this client"},
      {"1", "semaphore", "a participant queued before gave another --leases"},
      {"1", "lock semaphore", "the path holds the other kind's nodes (a lock's and a semaphore's "
       "participants never share a path)"},
      {"1", "inspect", "the path is no queue but has queues below it (named on stderr)"},
      {"1", "ls",
       "ROOT does not exist (--json prints \"exists\":false), or a queue could not be read (the "
       "others are listed; one too large to read node by node is listed as such, exit 0)"},
      {"2", "*",
       "usage: an unknown flag or subcommand, a bad value, a flag of another subcommand, "
       "conflicting flags, a bad path, a missing command"},
      {"3", "lock semaphore group:join",
       "not acquired within --timeout, or busy with --nonblock or --timeout=0 (or the "
       "--conflict_exit_code given)"},
      {"3", "elect:--who",
       "no leader (without --watch; with --wait: none came in time), or the --conflict_exit_code "
       "given"},
      {"3", "barrier:wait,enter", "not passed within --timeout (or the --conflict_exit_code given)"},
      {"4", "lock semaphore group:join",
       "the hold was lost while CMD ran, or zkr stopped CMD because it could be (connection "
       "lost, lease running out, a revocation's deadline, Ctrl-Z past the lease): CMD's group got "
       "SIGTERM, then SIGKILL by the lease's end; not with --on_lost=ignore"},
      {"5", kConnecting,
       "no ZooKeeper server answered (within --timeout; 2s with --nonblock or --timeout=0), or a "
       "--zk host name does not resolve"},
      {"126", kRunsCmd, "CMD was found but cannot be executed"},
      {"127", kRunsCmd, "CMD was not found"},
      {"128+N", "lock semaphore group:join barrier",
       "interrupted by signal N (SIGINT: 130, SIGTERM: 143, SIGHUP, SIGUSR1/2) before CMD ran, "
       "in any phase (connecting, waiting, leaving a barrier); the participant's node is deleted"},
      {"128+N", "elect:campaign",
       "interrupted by signal N (SIGINT, SIGTERM, SIGUSR2; SIGHUP and SIGUSR1 only until it has "
       "joined: then they step down, which a waiting candidate ignores) before CMD ran, in any "
       "phase (connecting, waiting); the candidate's node is deleted"},
      {"128+N", "elect:--who group:list revoke inspect ls demo bench",
       "interrupted by signal N (SIGINT, SIGTERM, SIGHUP, SIGUSR1/2): stops at once"},
      {"128+N", kRunsCmd,
       "CMD was killed by signal N; without CMD, the hold was ended by signal N (then released)"},
  };
  return *rows;
}

bool Takes(absl::string_view takers, absl::string_view sub, absl::string_view mode) {
  if (takers == "*") return true;
  for (const std::string& item : Words(takers, ' ')) {
    const size_t colon = item.find(':');
    if (absl::string_view(item).substr(0, colon) != sub) continue;
    if (colon == std::string::npos || mode.empty()) return true;
    for (const std::string& m : Words(item.substr(colon + 1), ',')) {
      if (m == mode) return true;
    }
  }
  return false;
}

namespace {

// Sets one flag (by its long name) to `value` and records it in `line`.
// `shown` is how the user wrote it, for messages.
absl::Status SetFlag(const std::string& name, const std::string& value, const std::string& shown,
                     CommandLine* line) {
  gflags::CommandLineFlagInfo info;
  gflags::GetCommandLineFlagInfo(name.c_str(), &info);
  if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
    const char* expected = info.type == "bool"    ? "expected true or false"
                           : info.type == "int32" ? "expected a whole number (32 bits)"
                                                  : "not a valid value";
    return absl::InvalidArgumentError(absl::StrCat(shown, ": ", expected));
  }
  // An empty --node would mean "every holder": `--node="$NODE"` with NODE
  // unset must not revoke them all.
  if (name == "node" && value.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(shown, ": empty (leave --node out to revoke every holder)"));
  }
  // Likewise `--zk="$HOSTS"` must not mean the default server, nor
  // `--auth_file="$F"` no credentials, nor `--wait="$T"` no wait.
  for (const char* needs_value : {"zk", "auth", "auth_file", "acl", "wait"}) {
    if (name == needs_value && value.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(shown, ": empty (leave --", name, " out for its default)"));
    }
  }
  if (name == "path") line->paths.push_back(value);
  line->given.push_back(name);
  return absl::OkStatus();
}

// A word of short flags ("-x", "-xn", "-w5", "-w 5"), as flock takes them;
// `i` moves past a value taken from the next word.
absl::Status SetShortFlags(const std::vector<std::string>& argv, size_t& i, CommandLine* line) {
  const std::string& word = argv[i];
  for (size_t at = 1; at < word.size(); ++at) {
    const ShortFlag* flag = FindShort(word[at]);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag \"-", std::string(1, word[at]), "\"",
          word.size() > 2 ? absl::StrCat(" in \"", word, "\"") : "", " (see --help)"));
    }
    const std::string letter = absl::StrCat("-", std::string(1, word[at]));
    if (flag->value != nullptr) {
      ZKR_RETURN_IF_ERROR(SetFlag(flag->name, flag->value, letter, line));
      continue;
    }
    std::string value;
    if (at + 1 < word.size()) {
      value = word.substr(word[at + 1] == '=' ? at + 2 : at + 1);  // -w5, -w=5
    } else if (i + 1 < argv.size() && argv[i + 1] != "--") {
      value = argv[++i];  // -w 5
    } else {
      return absl::InvalidArgumentError(absl::StrCat(letter, " needs a value"));
    }
    return SetFlag(flag->name, value, absl::StrCat(letter, " ", value), line);
  }
  return absl::OkStatus();
}

// The flag of `sub` nearest to `name` (NearestName), or "".
std::string NearestFlag(absl::string_view name, absl::string_view sub) {
  std::vector<std::string> flags;
  for (const FlagRow& row : FlagRows()) {
    if (Takes(row.takers, sub, "")) flags.push_back(row.name);
  }
  return NearestName(name, flags);
}

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLine(absl::string_view sub,
                                             const std::vector<std::string>& argv) {
  CommandLine line;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word == "--") {
      line.command.assign(argv.begin() + i + 1, argv.end());
      break;
    }
    if (!IsFlagWord(word)) {
      line.args.push_back(word);
      continue;
    }
    FlagWord flag = SplitFlag(word);
    if (IsShortFlagWord(word)) {
      ZKR_RETURN_IF_ERROR(SetShortFlags(argv, i, &line));
      continue;
    }
    if (FindRow(flag.name) == nullptr && flag.name.rfind("no", 0) == 0 &&
        FindRow(flag.name.substr(2)) != nullptr && IsBool(flag.name.substr(2)) &&
        !flag.has_value) {
      flag.name = flag.name.substr(2);  // --noverbose
      flag.value = "false";
      flag.has_value = true;
    }
    gflags::CommandLineFlagInfo info;
    const bool defined = gflags::GetCommandLineFlagInfo(flag.name.c_str(), &info);
    const FlagRow* row = FindRow(flag.name);
    if (row == nullptr) {
      const bool ours = defined && info.filename.find("tools/") != std::string::npos;
      if (ours) {
        return absl::InvalidArgumentError(
            absl::StrCat(word, " has no row in zkr's flag table (tools/zkr/flags.cc)"));
      }
      const std::string nearest = NearestFlag(flag.name, sub);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag \"", word, "\"",
          nearest.empty() ? "" : absl::StrCat("; did you mean \"--", nearest, "\"?"),
          " (see zkr ", sub, " --help)"));
    }
    if (!flag.has_value) {
      if (info.type == "bool") {
        flag.value = "true";
      } else if (row->bare != nullptr) {
        flag.value = row->bare;  // --wait: forever
      } else if (i + 1 < argv.size() && argv[i + 1] != "--") {
        flag.value = argv[++i];  // --path /x
      } else {
        return absl::InvalidArgumentError(absl::StrCat(word, " needs a value"));
      }
    }
    const std::string shown = absl::StrCat(word.substr(0, word.find('=')), "=", flag.value);
    ZKR_RETURN_IF_ERROR(SetFlag(flag.name, flag.value, shown, &line));
  }
  return line;
}

absl::Status ApplyEnvironment(absl::string_view sub, absl::string_view mode,
                              const CommandLine& line) {
  for (const FlagRow& row : FlagRows()) {
    if (row.env == nullptr || !Takes(row.takers, sub, mode)) continue;
    if (std::find(line.given.begin(), line.given.end(), row.name) != line.given.end()) continue;
    // --auth on the command line also overrides ZKR_AUTH_FILE, and the
    // other way round: one source of credentials.
    const absl::string_view name = row.name;
    if ((name == "auth" || name == "auth_file") &&
        std::find_if(line.given.begin(), line.given.end(), [](const std::string& g) {
          return g == "auth" || g == "auth_file";
        }) != line.given.end()) {
      continue;
    }
    const char* value = std::getenv(row.env);
    if (value == nullptr || *value == '\0') continue;
    if (gflags::SetCommandLineOption(row.name, value).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(row.env, "=", value, ": not a valid value"));
    }
    absl::MutexLock lock(&env_mu);
    FromEnvironment()[row.name] = row.env;
  }
  std::string auth, auth_file;
  if (gflags::GetCommandLineOption("auth", &auth) &&
      gflags::GetCommandLineOption("auth_file", &auth_file) && !auth.empty() &&
      !auth_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(FlagSource("auth"), " and ",
                                                   FlagSource("auth_file"),
                                                   ": give one (one source of credentials)"));
  }
  return absl::OkStatus();
}

std::string EnvironmentNote(absl::string_view message) {
  absl::MutexLock lock(&env_mu);
  std::vector<std::string> items;
  for (const auto& [name, variable] : FromEnvironment()) {
    std::string value;
    gflags::GetCommandLineOption(name.c_str(), &value);
    // A credential's value is never shown (nor looked for in the message).
    const bool secret = name == "auth";
    const bool named = absl::StrContains(message, name) ||
                       (!secret && !value.empty() && absl::StrContains(message, value));
    if (named) items.push_back(absl::StrCat(variable, "=", secret ? "(not shown)" : value));
  }
  if (items.empty()) return "";
  return absl::StrCat(" (from the environment: ", absl::StrJoin(items, ", "), ")");
}

std::string FlagSource(absl::string_view name) {
  absl::MutexLock lock(&env_mu);
  auto it = FromEnvironment().find(std::string(name));
  return it != FromEnvironment().end() ? it->second : absl::StrCat("--", name);
}

std::string ModeOf(absl::string_view sub, const std::vector<std::string>& args) {
  const std::vector<std::string>& modes = ModesOf(sub);
  if (modes.size() == 1) return modes[0];
  // A mode named "--flag" is chosen by that bool flag (elect --who), and
  // then the other mode is the default (elect: campaign); other modes are
  // chosen by an action word (group join).
  bool by_flag = false;
  for (const std::string& mode : modes) {
    by_flag = by_flag || mode.rfind("--", 0) == 0;
    std::string value;
    if (mode.rfind("--", 0) == 0 && gflags::GetCommandLineOption(mode.c_str() + 2, &value) &&
        value == "true") {
      return mode;
    }
  }
  for (const std::string& mode : modes) {
    if (mode.rfind("--", 0) != 0 && (by_flag || (args.size() == 1 && args[0] == mode))) {
      return mode;
    }
  }
  return "";
}

absl::Status CheckFlagsTaken(absl::string_view sub, absl::string_view mode,
                             const std::vector<std::string>& given) {
  const std::set<std::string> names(given.begin(), given.end());
  std::vector<std::string> foreign;
  for (const std::string& name : given) {
    bool taken = false;
    std::vector<std::string> takers;
    for (const FlagRow& row : FlagRows()) {
      if (name != row.name) continue;
      taken = taken || Takes(row.takers, sub, mode);
      takers.push_back(TakersText(row.takers));
    }
    const std::string item = absl::StrCat("--", name, " (", absl::StrJoin(takers, ", "), ")");
    if (!taken && std::find(foreign.begin(), foreign.end(), item) == foreign.end()) {
      foreign.push_back(item);
    }
  }
  const std::string what =
      mode.empty() || mode == "campaign" ? absl::StrCat("zkr ", sub)
                                         : absl::StrCat("zkr ", sub, " ", mode);
  if (!foreign.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        foreign.size() == 1 ? "not a flag of " : "not flags of ", what, ": ",
        absl::StrJoin(foreign, "; "), " (see zkr ", sub, " --help)"));
  }
  auto on = [&](const char* name) {
    std::string value;
    return names.count(name) != 0 && gflags::GetCommandLineOption(name, &value) &&
           value != "false";
  };
  for (const Conflict& c : kConflicts) {
    if (on(c.a) && on(c.b)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", c.a, " and --", c.b, ": give one (", c.why, ")"));
    }
  }
  return absl::OkStatus();
}

int SubcommandIndex(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size() && argv[i] != "--"; ++i) {
    if (!IsFlagWord(argv[i])) return static_cast<int>(i);
    // "-w 5": the value is not the subcommand.
    if (IsShortFlagWord(argv[i])) {
      if (ShortFlagsTakeNextWord(argv[i])) ++i;
      continue;
    }
    const FlagWord flag = SplitFlag(argv[i]);
    // "--path /x": the value is not the subcommand.
    const FlagRow* row = FindRow(flag.name);
    if (!flag.has_value && row != nullptr && !IsBool(flag.name) && row->bare == nullptr) ++i;
  }
  return -1;
}

std::string NearestSubcommand(absl::string_view word) {
  return NearestName(word, SubcommandNames());
}

std::string FlagsHelp(absl::string_view sub) {
  std::string out;
  for (const FlagRow& row : FlagRows()) {
    if (!sub.empty() && !Takes(row.takers, sub, "")) continue;
    // "-s, -x, --mode=read|write|exclusive", "--wait[=T]".
    std::string key;
    std::vector<std::string> short_values;  // "-s = --mode=read"
    for (const ShortFlag& flag : ShortFlags()) {
      if (row.name != absl::string_view(flag.name)) continue;
      absl::StrAppend(&key, "-", std::string(1, flag.letter), ", ");
      if (flag.value != nullptr && !IsBool(flag.name)) {
        short_values.push_back(
            absl::StrCat("-", std::string(1, flag.letter), " is --", flag.name, "=", flag.value));
      }
    }
    absl::StrAppend(&key, "--", row.name, row.bare != nullptr ? "[" : "", *row.value ? "=" : "",
                    row.value, row.bare != nullptr ? "]" : "");
    const std::string where =
        sub.empty() ? absl::StrCat(TakersText(row.takers), ": ") : ModePrefix(row.takers, sub);
    const std::string default_value = DefaultOf(row);
    out += Entry(
        key,
        absl::StrCat(where, row.text,
                     short_values.empty() ? "" : absl::StrCat("; ", absl::StrJoin(short_values, ", ")),
                     row.env == nullptr ? "" : absl::StrCat("; environment: ", row.env),
                     default_value.empty() ? "" : absl::StrCat(" (default ", default_value, ")")),
        26);
  }
  return out;
}

std::string ExitCodesHelp(absl::string_view sub) {
  std::string out;
  std::string last;
  for (const ExitRow& row : ExitRows()) {
    if (!sub.empty() && !Takes(row.takers, sub, "")) continue;
    const std::string where =
        sub.empty() ? absl::StrCat(TakersText(row.takers), ": ") : ModePrefix(row.takers, sub);
    // A code's further rows continue its entry.
    out += Entry(row.code == last ? "" : row.code, absl::StrCat(where, row.text), 9);
    last = row.code;
  }
  return out;
}

}  // namespace cli
}  // namespace zkr
