// zkr ls: every lock, semaphore, election, group and barrier at or below a
// path — who holds (leads) and who waits, for how long, from which host and
// pid — for people, for machines (--json), and as a live view (--watch).
//
// A snapshot, not atomic: the queues are found with FindQueuesBelow and each
// is read with InspectQueue (zkrecipes/inspect.h). --watch refreshes when a
// child watch on ROOT, a queue or a directory between them fires, and at
// least once a second (a queue made deeper, in a directory not yet watched,
// shows within that second). On a terminal it is a full screen redrawn in
// place, ages ticking, like top(1); otherwise the listing is printed again
// only when something other than the ages changed.
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gflags/gflags.h"
#include "recipes/candidate_data.h"
#include "recipes/lock_data.h"
#include "recipes/queue_node.h"
#include "src/paths.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "tools/zkr/participant_text.h"
#include "tools/zkr/plain_text.h"
#include "tools/zkr/stderr_writer.h"
#include "zkrecipes/inspect.h"

DECLARE_string(path);
DECLARE_bool(json);
DECLARE_bool(watch);
DECLARE_bool(recursive);

namespace zkr {
namespace cli {
namespace {

// How many queues a listing shows at most.
constexpr size_t kMaxQueues = 1000;

struct Queue {
  std::string path;
  std::vector<QueueEntryInfo> entries;  // in queue order; empty if `error` is set
  // Why it could not be read; `too_big`: more nodes than an inspection reads
  // one by one (kMaxInspectedNodes), which is no failure of zkr ls.
  std::string error;
  bool too_big = false;
};

struct Listing {
  bool root_exists = true;
  std::vector<Queue> queues;
  bool truncated = false;  // more queues than kMaxQueues below ROOT
  bool failed = false;     // a queue could not be read (not too_big): exit 1
};

// What the queue is, from its nodes: the server cannot tell an election from
// a group (both are the ids of their participants in join order).
std::string KindOf(const Queue& q) {
  const QueueEntryInfo& first = q.entries.front();
  if (first.barrier_member) return "barrier";
  if (first.semaphore_size > 0) return "semaphore";
  const bool readers = std::any_of(q.entries.begin(), q.entries.end(),
                                   [](const QueueEntryInfo& e) { return !e.write; });
  if (readers) return "lock";
  if (first.dialect != Dialect::kZkr) return "lock or election";
  const bool locks = std::all_of(q.entries.begin(), q.entries.end(),
                                 [](const QueueEntryInfo& e) {
                                   return internal::ParseLockNodeData(e.data).has_value();
                                 });
  return locks ? "lock" : "election or group";
}

// Its host: "-" where its node's name carries its id instead (a group's or a
// barrier's member: "<id>_<pid>_<random>").
std::string HostText(const std::string& kind, const QueueEntryInfo& e) {
  if (kind == "election or group" || kind == "barrier") {
    std::string id = e.data, data;
    if (!e.barrier_member) internal::ParseCandidateNodeData(e.data, &id, &data);
    if (absl::StartsWith(e.participant, internal::SafeLabel(id) + "_")) return "-";
  }
  return HostOf(e);
}

// Its mode: an election's or group's participants have none to show.
std::string ModeText(const std::string& kind, const QueueEntryInfo& e) {
  return kind == "election or group" ? "-" : ModeOf(e);
}

// A participant's state in its queue, as KindOf() named it.
std::string StateOf(const std::string& kind, const QueueEntryInfo& e, bool first) {
  if (kind == "barrier") return "inside";
  if (kind == "election or group") return first ? "leads" : "queued";
  return e.holds ? "holds" : "waits";
}

// Its purpose (a lock's), id and data (an election's or group's), the node
// a waiter waits on, a revocation asked: escaped, one line.
std::string DetailOf(const std::string& kind, const QueueEntryInfo& e) {
  std::vector<std::string> parts;
  if (kind == "election or group" || kind == "barrier") {
    if (e.barrier_member) {
      parts.push_back(PlainText(e.data));
    } else {
      std::string id, data;
      internal::ParseCandidateNodeData(e.data, &id, &data);
      parts.push_back(data.empty() ? PlainText(id) : absl::StrCat(PlainText(id), " (", PlainText(data), ")"));
    }
  } else if (auto lock = internal::ParseLockNodeData(e.data)) {
    if (!lock->purpose.empty()) parts.push_back(PlainText(lock->purpose));
  }
  if (!e.holds && !e.watching.empty() && kind != "election or group") {
    parts.push_back(e.watching.size() > 1
                        ? absl::StrCat("waits on all ", e.watching.size(), " before")
                        : absl::StrCat("waits on ", PlainText(ShortNodeName(e.watching.back()))));
  }
  if (e.revoke_requested) {
    parts.push_back(absl::StrCat("REVOKE REQUESTED: ", PlainText(e.revoke_reason)));
  }
  return absl::StrJoin(parts, "; ");
}

std::string SummaryOf(const std::string& kind, const Queue& q) {
  const size_t n = q.entries.size();
  size_t holding = 0;
  int leases = 0;
  for (const QueueEntryInfo& e : q.entries) {
    if (e.holds) {
      ++holding;
      leases += e.leases;
    }
  }
  const QueueEntryInfo& first = q.entries.front();
  if (kind == "barrier") {
    return first.barrier_count > 0
               ? absl::StrCat("barrier: ", n, " of ", first.barrier_count, " inside")
               : absl::StrCat("barrier: ", n, " inside");
  }
  if (kind == "election or group") {
    return absl::StrCat("election or group: ", n, n == 1 ? " participant" : " participants");
  }
  const std::string dialect =
      first.dialect == Dialect::kZkr ? "" : absl::StrCat(" (", DialectName(first.dialect), ")");
  if (kind == "semaphore") {
    return absl::StrCat("semaphore of ", first.semaphore_size, " leases: ", leases, " in use by ",
                        holding, ", ", n - holding, n - holding == 1 ? " waits" : " wait");
  }
  return absl::StrCat(kind, dialect, ": ", holding, holding == 1 ? " holds, " : " hold, ",
                      n - holding, n - holding == 1 ? " waits" : " wait");
}

// The listing as lines of text; with `ages` false, without anything that
// changes by itself as time passes (to see whether anything else changed).
std::vector<std::string> TextOf(const Listing& listing, absl::Time now, bool ages) {
  std::vector<std::string> lines;
  const std::string root = PlainText(FLAGS_path);
  if (!listing.root_exists) {
    lines.push_back(absl::StrCat(root, " does not exist"));
    return lines;
  }
  if (listing.queues.empty()) {
    lines.push_back(absl::StrCat("no lock, semaphore, election, group or barrier ",
                                 FLAGS_recursive ? "at or below " : "in ", root,
                                 FLAGS_recursive ? "" : " (-R looks deeper)"));
    return lines;
  }
  lines.push_back(absl::StrFormat("%-8s %-6s %-20s %-8s %-9s %s", "STATE", "MODE", "HOST", "PID",
                                  "AGE", "DETAIL"));
  for (const Queue& q : listing.queues) {
    if (q.entries.empty()) {
      lines.push_back(absl::StrCat(PlainText(q.path), "  ", q.too_big ? "" : "cannot read: ",
                                   PlainText(q.error)));
      continue;
    }
    const std::string kind = KindOf(q);
    lines.push_back(absl::StrCat(PlainText(q.path), "  ", SummaryOf(kind, q)));
    for (size_t i = 0; i < q.entries.size(); ++i) {
      const QueueEntryInfo& e = q.entries[i];
      lines.push_back(absl::StrFormat("  %-6s %-6s %-20s %-8s %-9s %s", StateOf(kind, e, i == 0),
                                      ModeText(kind, e), PlainText(HostText(kind, e)), PidOf(e),
                                      ages ? AgeOf(e, now) : "", DetailOf(kind, e)));
    }
  }
  if (listing.truncated) {
    lines.push_back(absl::StrCat("(only the first ", kMaxQueues, " queues are shown)"));
  }
  return lines;
}

std::string JsonOf(const Listing& listing, absl::Time now, bool ages) {
  std::string out = absl::StrCat("{\"root\":", JsonString(FLAGS_path), ",\"recursive\":",
                                 FLAGS_recursive ? "true" : "false", ",\"exists\":",
                                 listing.root_exists ? "true" : "false", ",\"truncated\":",
                                 listing.truncated ? "true" : "false", ",\"queues\":[");
  for (size_t qi = 0; qi < listing.queues.size(); ++qi) {
    const Queue& q = listing.queues[qi];
    if (q.entries.empty()) {
      absl::StrAppend(&out, qi == 0 ? "" : ",", "{\"path\":", JsonString(q.path),
                      ",\"error\":", JsonString(q.error), ",\"too_big\":",
                      q.too_big ? "true" : "false", "}");
      continue;
    }
    const std::string kind = KindOf(q);
    absl::StrAppend(&out, qi == 0 ? "" : ",", "{\"path\":", JsonString(q.path),
                    ",\"kind\":", JsonString(kind), ",\"dialect\":",
                    JsonString(DialectName(q.entries.front().dialect)), ",\"participants\":[");
    for (size_t i = 0; i < q.entries.size(); ++i) {
      const QueueEntryInfo& e = q.entries[i];
      absl::StrAppend(&out, i == 0 ? "" : ",", "{\"node\":", JsonString(e.name),
                      ",\"state\":", JsonString(StateOf(kind, e, i == 0)),
                      ",\"mode\":", JsonString(ModeText(kind, e)),
                      ",\"host\":", JsonString(HostText(kind, e)),
                      ",\"pid\":", JsonString(PidOf(e)),
                      ",\"session_id\":", JsonString(absl::StrFormat("0x%x", e.session_id)));
      if (ages) absl::StrAppend(&out, ",\"age_ms\":", absl::ToInt64Milliseconds(now - e.created));
      absl::StrAppend(&out, ",\"fencing_token\":", e.czxid, ",\"holds\":",
                      e.holds ? "true" : "false", ",\"watches\":",
                      e.watches.empty() ? "null" : JsonString(e.watches),
                      ",\"revoke_requested\":", e.revoke_requested ? "true" : "false",
                      ",\"data\":", JsonString(e.data), "}");
    }
    absl::StrAppend(&out, "]}");
  }
  absl::StrAppend(&out, "]}");
  return out;
}

// Reads the listing. `watch` (for --watch) is called for every directory it
// should watch: ROOT, each queue, and the directories between them.
absl::StatusOr<Listing> Read(Session& session,
                             const std::function<void(const std::string&)>& watch) {
  Listing listing;
  absl::StatusOr<std::optional<Stat>> root = session.Exists(FLAGS_path);
  if (!root.ok()) return root.status();
  if (!root->has_value()) {
    listing.root_exists = false;
    return listing;
  }
  if (watch) watch(FLAGS_path);
  // ROOT itself may be a queue: then it alone, or with -R it and the queues
  // below it (in directories made inside it).
  std::vector<std::string> paths = {FLAGS_path};
  absl::StatusOr<std::vector<QueueEntryInfo>> own = InspectQueue(session, FLAGS_path);
  const bool root_is_queue = !own.ok() || !own->empty();
  if (!root_is_queue || FLAGS_recursive) {
    absl::StatusOr<std::vector<std::string>> below = FindQueuesBelow(
        session, FLAGS_path, FLAGS_recursive ? INT_MAX : 1, kMaxQueues + 1);
    if (!below.ok()) return below.status();
    paths.insert(paths.end(), below->begin(), below->end());
  }
  std::set<std::string> watched;
  for (const std::string& path : paths) {
    absl::StatusOr<std::vector<QueueEntryInfo>> entries =
        path == FLAGS_path ? std::move(own) : InspectQueue(session, path);
    if (watch) {
      // The queue, and every directory from it up to ROOT.
      for (std::string dir = path; dir.size() > FLAGS_path.size() && watched.insert(dir).second;
           dir = internal::ParentPath(dir)) {
        watch(dir);
      }
    }
    if (!entries.ok()) {
      // One queue that cannot be read does not hide the others.
      Queue unread{path, {}, std::string(entries.status().message()),
                   absl::IsResourceExhausted(entries.status())};
      listing.failed = listing.failed || !unread.too_big;
      listing.queues.push_back(std::move(unread));
    } else if (!entries->empty()) {
      listing.queues.push_back(Queue{path, *std::move(entries), "", false});
    }
  }
  if (listing.queues.size() > kMaxQueues) {
    listing.queues.resize(kMaxQueues);
    listing.truncated = true;
  }
  return listing;
}

// ---- --watch -------------------------------------------------------------

// The child watches --watch keeps armed: one per directory until it fires
// (re-armed only then: never two on a path), and a flag that something
// changed. Watches fire on the session's dispatcher thread.
class ChangeWatches {
 public:
  explicit ChangeWatches(Session& session) : session_(session) {}

  void Watch(const std::string& dir) {
    {
      absl::MutexLock lock(&mu_);
      if (session_.generation() != generation_) {  // a new session: none armed
        generation_ = session_.generation();
        armed_.clear();
      }
      if (!armed_.insert(dir).second) return;
    }
    auto fired = [this, dir](const WatchEvent&) {
      absl::MutexLock lock(&mu_);
      armed_.erase(dir);
      changed_ = true;
    };
    if (!session_.GetChildrenAndWatch(dir, fired).ok()) {
      absl::MutexLock lock(&mu_);
      armed_.erase(dir);  // gone, or the connection: the next refresh tries again
    }
  }

  // Something else changed (the terminal came back after Ctrl-Z): refresh now.
  void Poke() {
    absl::MutexLock lock(&mu_);
    changed_ = true;
  }

  // Waits until a watch fired or `timeout` passed; then a short pause, so
  // that one burst of changes is one refresh.
  void Wait(absl::Duration timeout) {
    bool changed;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&changed_), timeout);
      changed = changed_;
    }
    if (changed) absl::SleepFor(absl::Milliseconds(50));
    absl::MutexLock lock(&mu_);
    changed_ = false;  // what fired meanwhile, the refresh that follows reads
  }

 private:
  Session& session_;
  absl::Mutex mu_;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<std::string> armed_ ABSL_GUARDED_BY(mu_);
  bool changed_ ABSL_GUARDED_BY(mu_) = false;
};

// Cuts `line` to `columns` bytes without splitting a UTF-8 sequence.
std::string FitTo(std::string line, size_t columns) {
  if (line.size() <= columns) return line;
  size_t cut = columns;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  line.resize(cut);
  return line;
}

// The terminal's full-screen view (the alternate screen, as top uses): left
// as it was found when zkr ends or is stopped (Ctrl-Z), entered again on fg.
constexpr char kEnterScreen[] = "\x1b[?1049h\x1b[?25l";
constexpr char kLeaveScreen[] = "\x1b[?25h\x1b[?1049l";

// Writes `text` to `fd` if it can be written within a moment, bypassing
// stdio: a redraw blocked on a stopped terminal (Ctrl-S, a stalled ssh)
// holds stdout's lock and the terminal's, and a signal must end zkr anyway.
void WriteIfWritable(int fd, absl::string_view text) {
  struct pollfd out = {fd, POLLOUT, 0};
  if (poll(&out, 1, 100) == 1 && (out.revents & POLLOUT) != 0) {
    (void)!write(fd, text.data(), text.size());
  }
}

void Draw(const std::vector<std::string>& body) {
  struct winsize size = {};
  int rows = 24, columns = 80;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0 && size.ws_col > 0) {
    rows = size.ws_row;
    columns = size.ws_col;
  }
  std::vector<std::string> lines = {
      absl::StrCat("zkr ls ", PlainText(FLAGS_path), FLAGS_recursive ? " -R" : "", "   ",
                   absl::FormatTime("%H:%M:%S", absl::Now(), absl::LocalTimeZone()),
                   "   (Ctrl-C quits)"),
      ""};
  lines.insert(lines.end(), body.begin(), body.end());
  if (lines.size() > static_cast<size_t>(rows)) {
    const size_t hidden = lines.size() - rows + 1;
    lines.resize(rows - 1);
    lines.push_back(absl::StrCat("... ", hidden, " more lines (a taller window shows them)"));
  }
  std::string screen = "\x1b[H";
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::StrAppend(&screen, FitTo(lines[i], columns), "\x1b[K", i + 1 < lines.size() ? "\n" : "");
  }
  absl::StrAppend(&screen, "\x1b[J");
  std::fputs(screen.c_str(), stdout);
  FlushOrExit("ls");
}

int Watch(Signals& signals, Session& session) {
  const bool screen = !FLAGS_json && isatty(STDOUT_FILENO) == 1;
  auto leave = [screen](int signal) {
    if (screen) WriteIfWritable(STDOUT_FILENO, kLeaveScreen);
    WriteIfWritable(STDERR_FILENO, absl::StrCat("zkr ls: interrupted (", strsignal(signal), ")\n"));
    FlushStderr(kExitFlushBound);
    std::_Exit(128 + signal);
  };
  if (const int received = signals.SetHandler(leave); received != 0) leave(received);
  ChangeWatches watches(session);
  if (screen) {
    std::fputs(kEnterScreen, stdout);
    // Ctrl-Z: the shell gets its own screen back; fg: the view again, now.
    signals.SetJobControl([&watches](int signal) {
      WriteIfWritable(STDOUT_FILENO, signal == SIGTSTP ? kLeaveScreen : kEnterScreen);
      if (signal == SIGCONT) watches.Poke();
    });
  }
  std::string shown;      // non-terminal: the last listing printed, without ages
  std::string error_said;  // the last refresh error told
  for (;;) {
    absl::StatusOr<Listing> listing =
        Read(session, [&watches](const std::string& dir) { watches.Watch(dir); });
    const absl::Time now = absl::Now();
    if (screen) {
      Draw(listing.ok() ? TextOf(*listing, now, true)
                        : std::vector<std::string>{absl::StrCat("cannot read: ",
                                                                listing.status().message())});
    } else if (!listing.ok()) {
      if (listing.status().ToString() != error_said) {
        error_said = listing.status().ToString();
        PrintStderr("zkr ls: %s (trying again)\n", std::string(listing.status().message()).c_str());
      }
    } else {
      error_said.clear();
      const std::string key = FLAGS_json ? JsonOf(*listing, now, false)
                                         : absl::StrJoin(TextOf(*listing, now, false), "\n");
      if (key != shown) {
        shown = key;
        std::printf("%s\n%s", FLAGS_json ? JsonOf(*listing, now, true).c_str()
                                         : absl::StrJoin(TextOf(*listing, now, true), "\n").c_str(),
                    FLAGS_json ? "" : "\n");
        FlushOrExit("ls");
      }
    }
    watches.Wait(absl::Seconds(1));
  }
}

}  // namespace

int RunLs(Signals& signals) {
  if (FLAGS_path.empty()) FLAGS_path = "/";
  // Any path, "/" included (CheckPathFlag is for one lock or election).
  if (absl::Status valid = internal::ValidatePath(FLAGS_path); !valid.ok()) {
    return Report("ls", absl::InvalidArgumentError(absl::StrCat("--path: ", valid.message())));
  }
  // Nothing to undo: a signal stops zkr at once (--watch first restores the
  // terminal).
  ExitOnSignal(signals, "ls");
  auto session = ConnectFromFlags();
  if (!session.ok()) return Report("ls", session.status());
  if (FLAGS_watch) return Watch(signals, **session);
  absl::StatusOr<Listing> listing = Read(**session, nullptr);
  if (!listing.ok()) return Report("ls", listing.status());
  if (!listing->root_exists && !FLAGS_json) {
    return Report("ls", absl::NotFoundError(absl::StrCat(FLAGS_path, " does not exist")));
  }
  const absl::Time now = absl::Now();
  if (FLAGS_json) {
    std::printf("%s\n", JsonOf(*listing, now, true).c_str());
  } else if (listing->queues.empty()) {
    Inform("zkr ls: %s\n", TextOf(*listing, now, true).front());
  } else {
    for (const std::string& line : TextOf(*listing, now, true)) std::printf("%s\n", line.c_str());
  }
  return FinishOutput("ls", listing->root_exists && !listing->failed ? kExitOk : kExitError);
}

}  // namespace cli
}  // namespace zkr
