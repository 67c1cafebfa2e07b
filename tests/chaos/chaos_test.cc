// The fault-injection suite (issue 7): Jepsen-style histories on a real
// 3-node ZooKeeper ensemble, checked by a checker.
//
// Eight chaos_worker processes (each its own session) take the read/write
// lock on one path — half of them also campaign for leadership — and record
// every critical section and leadership term in a shared ledger, with fencing
// tokens and wall-clock times (see chaos_worker.cc for the line formats and
// what "told" means). A nemesis, driven by a fixed, printed seed
// (ZKR_CHAOS_SEED replays one), injects in random order: kill -9 a worker
// (restarted), SIGSTOP a worker — preferably one inside its critical section
// or one that has just become leader — beyond its session timeout then
// SIGCONT (the paused holder / leader), force-expire a
// worker's session, kill -9 and restart the ensemble member a worker is
// connected to, SIGSTOP the quorum leader for a while, and lose quorum (stop 2
// of 3) for a few seconds. Then calm, then shut the workers down, then check:
//   (a) no two writers, and no writer and reader, overlap among holders the
//       library had not told SUSPENDED/LOST during their interval; and no
//       such holder ever saw its fenced access refused; and tokens of
//       successive untold holders increase;
//   (b) the fenced resource never accepted a lower token after a higher one
//       (nor a write below a read); refusals are counted — with whether the
//       guard still said held, lease left, at that moment: after a process
//       pause only the fence knows — and so are the overlaps plain locking
//       (ignoring SUSPENDED/LOST) would have let through;
//   (c) at most one leader per epoch, no overlapping terms among leaders not
//       told SUSPENDED/LOST, epochs increase from leader to leader;
//   (d) progress: once the nemesis stops, every worker acquires again within
//       2x the session timeout (plus a small allowance);
//   (e) once every worker has exited, no znode is left under the lock and
//       election paths (the empty containers are then deleted explicitly).
// It prints the operations, faults by kind, violations (must be 0), the seed
// and the slowest recovery. ZKR_CHAOS_SOAK=<seconds> runs the nemesis longer
// (default ~75 s of faults). On failure (or with ZKR_CHAOS_KEEP=1) the run's
// directory (ledger, worker and server logs) is kept and its path printed.
// ChaosCheckerTest runs the checker on hand-written ledgers, so that it is
// known to catch what it claims to.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/macros.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace {

using testing::ZooKeeperEnsemble;

constexpr int kWorkers = 8;
constexpr absl::Duration kSessionTimeout = absl::Seconds(3);
// Slack on top of 2x the session timeout for (d), and for leftover nodes of
// dead sessions to go in (e): process start, reconnects, a loaded machine.
constexpr absl::Duration kAllowance = absl::Seconds(2);

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }
std::string Ms(int64_t ns) { return absl::StrFormat("%.0f ms", ns / 1e6); }

// ---- a run directory
// ------------------------------------------------------------

// A fresh directory, removed at the end unless keep() was called.
class RunDirectory {
 public:
  RunDirectory() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = absl::StrCat(
        tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/zkr-chaos-XXXXXX");
    if (mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;
  ~RunDirectory() {
    if (path_.empty()) return;
    if (keep_) {
      std::printf("chaos: run directory kept for inspection: %s\n",
                  path_.c_str());
      return;
    }
    std::string command = absl::StrCat("rm -rf '", path_, "'");
    (void)std::system(command.c_str());
  }
  const std::string& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

// ---- the ledger
// ---------------------------------------------------------------------

struct Entry {
  std::string line;
  std::string kind;
  int worker = -1;     // -1 for the nemesis
  int64_t t = 0;       // ns since the epoch
  bool write = false;  // ENTER/EXIT/ACCEPT/REFUSE/AFAIL
  int64_t token = 0;   // token, or epoch for leader lines
  int64_t seq = 0;     // ACCEPT/LACCEPT
  std::string what;    // SUSPECT: lock|leader; NEMESIS: fault kind
  std::string detail;  // SUSPECT: why; NEMESIS: begin|end; AFAIL: code
  int target = -1;     // NEMESIS
  // ACCEPT/REFUSE: the guard still said held() with lease left.
  bool vouched = false;
};

// Parses one ledger line; nullopt if malformed.
std::optional<Entry> ParseEntry(const std::string& line) {
  std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (f.empty()) return std::nullopt;
  Entry e;
  e.line = line;
  e.kind = f[0];
  auto num = [&](size_t i, int64_t* out) {
    return i < f.size() && absl::SimpleAtoi(f[i], out);
  };
  auto mode = [&](size_t i) {
    if (i >= f.size() || (f[i] != "R" && f[i] != "W")) return false;
    e.write = f[i] == "W";
    return true;
  };
  if (e.kind == "NEMESIS") {
    // NEMESIS <t> <kind> <begin|end> <target> [detail...]
    int64_t target = -1;
    if (!num(1, &e.t) || f.size() < 5 || !num(4, &target)) return std::nullopt;
    e.what = f[2];
    e.detail = f[3];
    e.target = static_cast<int>(target);
    return e;
  }
  int64_t worker = 0;
  if (!num(1, &worker)) return std::nullopt;
  e.worker = static_cast<int>(worker);
  bool ok = false;
  if (e.kind == "ENTER" || e.kind == "EXIT") {
    ok = mode(2) && num(3, &e.token) && num(4, &e.t);
  } else if (e.kind == "ACCEPT") {
    ok = mode(2) && num(3, &e.token) && num(4, &e.seq) && num(5, &e.t);
  } else if (e.kind == "REFUSE") {
    int64_t highest = 0;
    ok = mode(2) && num(3, &e.token) && num(4, &highest) && num(5, &e.t);
    e.seq = highest;
    int64_t lease_ms = 0;
    e.vouched = f.size() >= 8 && f[6] == "held=1" &&
                absl::StartsWith(f[7], "lease_ms=") &&
                absl::SimpleAtoi(f[7].substr(9), &lease_ms) && lease_ms > 0;
  } else if (e.kind == "SUSPECT") {
    ok = num(2, &e.t) && f.size() >= 5;
    if (ok) {
      e.what = f[3];
      e.detail = f[4];
    }
  } else if (e.kind == "AFAIL") {
    ok = mode(2) && num(3, &e.t) && f.size() >= 5;
    if (ok) e.detail = f[4];
  } else if (e.kind == "LEADER" || e.kind == "UNLEAD") {
    ok = num(2, &e.token) && num(3, &e.t);
  } else if (e.kind == "LACCEPT") {
    ok = num(2, &e.token) && num(3, &e.seq) && num(4, &e.t);
  } else if (e.kind == "LREFUSE") {
    int64_t highest = 0;
    ok = num(2, &e.token) && num(3, &highest) && num(4, &e.t);
    e.seq = highest;
    e.vouched = f.size() >= 6 && f[5] == "current=1";
  } else if (e.kind == "START") {
    ok = num(3, &e.t);
  } else if (e.kind == "SESSION") {
    ok = num(4, &e.t);
    if (ok) e.detail = f[2];
  } else if (e.kind == "HELD_AGAIN" || e.kind == "STOP" || e.kind == "ERROR" ||
             e.kind == "RELEASE_ERROR") {
    ok = num(2, &e.t);
  }
  if (!ok) return std::nullopt;
  return e;
}

// Reads the ledger as it grows.
class LedgerReader {
 public:
  explicit LedgerReader(std::string path) : path_(std::move(path)) {}

  // New complete lines since the last call (malformed ones counted).
  std::vector<Entry> Poll() {
    std::vector<Entry> out;
    std::ifstream in(path_, std::ios::binary);
    if (!in) return out;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    offset_ += chunk.size();
    partial_ += chunk;
    size_t start = 0;
    for (size_t nl = partial_.find('\n'); nl != std::string::npos;
         nl = partial_.find('\n', start)) {
      std::string line = partial_.substr(start, nl - start);
      start = nl + 1;
      std::optional<Entry> entry = ParseEntry(line);
      if (entry.has_value()) {
        out.push_back(std::move(*entry));
      } else {
        malformed_.push_back(line);
      }
    }
    partial_.erase(0, start);
    return out;
  }
  const std::vector<std::string>& malformed() const { return malformed_; }

 private:
  const std::string path_;
  size_t offset_ = 0;
  std::string partial_;
  std::vector<std::string> malformed_;
};

// Appends the nemesis's own lines to the ledger (one write(2) each).
void AppendLine(const std::string& file, const std::string& text) {
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string line = text + "\n";
  (void)write(fd, line.data(), line.size());
  close(fd);
}

// ---- the worker processes
// ----------------------------------------------------------

struct WorkerConfig {
  std::string binary, connect, lock_path, election_path, ledger, resource,
      directory;
};

// The eight worker processes. Kills (SIGKILL) and reaps every live one when
// destroyed. Used from the test's main thread only (the thread that forks:
// workers get PR_SET_PDEATHSIG, tied to it).
class Workers {
 public:
  explicit Workers(WorkerConfig config)
      : config_(std::move(config)), pids_(kWorkers, -1) {}
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() {
    for (int i = 0; i < kWorkers; ++i) Kill(i, SIGKILL);
  }

  static bool Mixed(int i) { return i % 2 == 0; }
  static bool Campaigns(int i) { return i % 4 < 2; }

  bool Start(int i) {
    std::vector<std::string> args = {
        config_.binary,
        absl::StrCat("--zk=", config_.connect),
        absl::StrCat("--path=", config_.lock_path),
        absl::StrCat("--ledger=", config_.ledger),
        absl::StrCat("--resource=", config_.resource),
        absl::StrCat("--id=", i),
        absl::StrCat("--mode=", Mixed(i) ? "mixed" : "write"),
        absl::StrCat("--session_timeout=",
                     absl::FormatDuration(kSessionTimeout))};
    if (Campaigns(i))
      args.push_back(absl::StrCat("--election=", config_.election_path));
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const std::string log =
        absl::StrCat(config_.directory, "/worker-", i, ".log");
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {  // only async-signal-safe calls until exec
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    pids_[i] = pid;
    ++starts_;
    return true;
  }

  // Sends `signal`; SIGKILL also reaps.
  void Kill(int i, int signal) {
    if (pids_[i] <= 0) return;
    kill(pids_[i], signal);
    if (signal == SIGKILL) {
      while (waitpid(pids_[i], nullptr, 0) < 0 && errno == EINTR) {
      }
      pids_[i] = -1;
    }
  }

  // Workers that exited by themselves since the last call: "worker i: status".
  std::vector<std::pair<int, std::string>> ReapUnexpected() {
    std::vector<std::pair<int, std::string>> dead;
    for (int i = 0; i < kWorkers; ++i) {
      if (pids_[i] <= 0) continue;
      int status = 0;
      if (waitpid(pids_[i], &status, WNOHANG) == pids_[i]) {
        dead.emplace_back(i, Describe(status));
        pids_[i] = -1;
      }
    }
    return dead;
  }

  // SIGTERM to all, then waits up to `timeout` for each; returns a problem
  // per worker that did not exit cleanly (then killed).
  std::vector<std::string> StopAll(absl::Duration timeout) {
    std::vector<std::string> problems;
    for (int i = 0; i < kWorkers; ++i) {
      if (pids_[i] > 0) kill(pids_[i], SIGTERM);
    }
    const absl::Time deadline = absl::Now() + timeout;
    for (int i = 0; i < kWorkers; ++i) {
      if (pids_[i] <= 0) {
        problems.push_back(
            absl::StrCat("worker ", i, " was not running at shutdown"));
        continue;
      }
      int status = 0;
      pid_t done = 0;
      while ((done = waitpid(pids_[i], &status, WNOHANG)) == 0 &&
             absl::Now() < deadline) {
        absl::SleepFor(absl::Milliseconds(20));
      }
      if (done == pids_[i]) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          problems.push_back(absl::StrCat("worker ", i, " ", Describe(status)));
        }
        pids_[i] = -1;
      } else {
        problems.push_back(absl::StrCat("worker ", i, " did not exit within ",
                                        absl::FormatDuration(timeout),
                                        " of SIGTERM"));
        Kill(i, SIGKILL);
      }
    }
    return problems;
  }

  bool running(int i) const { return pids_[i] > 0; }
  int starts() const { return starts_; }

 private:
  static std::string Describe(int status) {
    if (WIFEXITED(status))
      return absl::StrCat("exited with status ", WEXITSTATUS(status));
    if (WIFSIGNALED(status))
      return absl::StrCat("died of signal ", WTERMSIG(status));
    return absl::StrCat("ended with wait status ", status);
  }

  const WorkerConfig config_;
  std::vector<pid_t> pids_;
  int starts_ = 0;
};

// ---- the nemesis
// --------------------------------------------------------------------

enum class Fault {
  kKillWorker,
  kPauseWorker,
  kExpireSession,
  kKillMember,
  kPauseLeader,
  kLoseQuorum
};
constexpr Fault kAllFaults[] = {Fault::kKillWorker,    Fault::kPauseWorker,
                                Fault::kExpireSession, Fault::kKillMember,
                                Fault::kPauseLeader,   Fault::kLoseQuorum};

const char* FaultName(Fault f) {
  switch (f) {
    case Fault::kKillWorker:
      return "kill_worker";
    case Fault::kPauseWorker:
      return "pause_worker";
    case Fault::kExpireSession:
      return "expire_session";
    case Fault::kKillMember:
      return "kill_member";
    case Fault::kPauseLeader:
      return "pause_leader";
    case Fault::kLoseQuorum:
      return "lose_quorum";
  }
  return "?";
}
bool TargetsWorker(const std::string& kind) {
  return kind == "kill_worker" || kind == "pause_worker" ||
         kind == "expire_session";
}

// What the nemesis knows of the run from the ledger, live.
struct LiveView {
  std::map<int, std::pair<int64_t, bool>>
      holding;                        // worker -> (ENTER time, write)
  std::map<int, int64_t> leading;     // worker -> LEADER time
  std::map<int, int64_t> last_enter;  // worker -> time of its latest ENTER

  void Apply(const Entry& e) {
    if (e.kind == "ENTER") {
      holding[e.worker] = {e.t, e.write};
      last_enter[e.worker] = e.t;
    } else if (e.kind == "EXIT") {
      holding.erase(e.worker);
    } else if (e.kind == "LEADER") {
      leading[e.worker] = e.t;
    } else if (e.kind == "UNLEAD") {
      leading.erase(e.worker);
    } else if (e.kind == "START") {
      holding.erase(e.worker);
      leading.erase(e.worker);
    }
  }
};

class Nemesis {
 public:
  Nemesis(uint64_t seed, ZooKeeperEnsemble& ensemble, Workers& workers,
          std::string ledger)
      : rng_(seed),
        ensemble_(ensemble),
        workers_(workers),
        ledger_(ledger),
        reader_(ledger) {}

  // Injects faults until `duration` has passed (at least one; the last one
  // is completed and healed). Returns false (with `error`) if the harness
  // itself failed.
  bool Run(absl::Duration duration, std::string* error) {
    const absl::Time end = absl::Now() + duration;
    std::vector<Fault> round;
    for (;;) {
      if (round.empty()) {  // every kind once per round, in a random order
        round.assign(std::begin(kAllFaults), std::end(kAllFaults));
        std::shuffle(round.begin(), round.end(), rng_);
      }
      const Fault fault = round.back();
      round.pop_back();
      absl::Status status = Inject(fault);
      if (!status.ok()) {
        *error = absl::StrCat(FaultName(fault), ": ", status.ToString());
        return false;
      }
      ++counts_[FaultName(fault)];
      healed_ = absl::Now();
      // After the last fault the test itself measures the recovery (d).
      if (healed_ >= end) return true;
      AwaitRecovery(absl::ToUnixNanos(healed_));
      Calm(Uniform(300, 1000));
    }
  }

  // When the last fault was healed.
  absl::Time healed() const { return healed_; }

  // Waits (bounded by 2x the session timeout plus the allowance) until every
  // worker has entered its critical section since `healed`, so that faults
  // do not pile up and each recovery can be measured.
  void AwaitRecovery(int64_t healed) {
    const absl::Time deadline =
        absl::FromUnixNanos(healed) + 2 * kSessionTimeout + kAllowance;
    for (;;) {
      Refresh();
      int recovered = 0;
      for (const auto& [worker, t] : view_.last_enter)
        recovered += t > healed ? 1 : 0;
      if (recovered == kWorkers || absl::Now() >= deadline) return;
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

  // Follows the ledger for `ms`, restarting workers that died by themselves.
  void Calm(int ms) {
    const absl::Time until = absl::Now() + absl::Milliseconds(ms);
    do {
      Refresh();
      absl::SleepFor(absl::Milliseconds(20));
    } while (absl::Now() < until);
  }

  void Refresh() {
    for (const Entry& e : reader_.Poll()) view_.Apply(e);
    for (const auto& [worker, how] : workers_.ReapUnexpected()) {
      unexpected_.push_back(
          absl::StrCat("worker ", worker, " ", how, " by itself"));
      view_.holding.erase(worker);
      workers_.Start(worker);
    }
  }

  const std::map<std::string, int>& counts() const { return counts_; }
  const std::vector<std::string>& unexpected() const { return unexpected_; }
  // Forced expiries that could not be confirmed within their timeout.
  int expire_failures() const { return expire_failures_; }
  const LiveView& view() const { return view_; }
  LedgerReader& reader() { return reader_; }

 private:
  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  int AnyWorker() { return Uniform(0, kWorkers - 1); }

  void Note(const char* kind, const char* phase, int target,
            const std::string& detail = "") {
    AppendLine(ledger_,
               absl::StrCat("NEMESIS ", NowNs(), " ", kind, " ", phase, " ",
                            target, detail.empty() ? "" : " ", detail));
  }

  // A worker inside its critical section right now (ENTERed within the last
  // few ms and not yet EXITed), waiting up to 2 s for one; else `fallback`.
  int CurrentHolder(int fallback) {
    const absl::Time until = absl::Now() + absl::Seconds(2);
    while (absl::Now() < until) {
      Refresh();
      const int64_t now = NowNs();
      for (const auto& [worker, enter] : view_.holding) {
        if (now - enter.first < 4'000'000 && workers_.running(worker))
          return worker;
      }
      absl::SleepFor(absl::Microseconds(500));
    }
    return fallback;
  }

  // A worker that has just become leader (its term lasts 100-400 ms),
  // waiting up to 2 s for one; else `fallback`.
  int CurrentLeader(int fallback) {
    const absl::Time until = absl::Now() + absl::Seconds(2);
    while (absl::Now() < until) {
      Refresh();
      const int64_t now = NowNs();
      for (const auto& [worker, since] : view_.leading) {
        if (now - since < 30'000'000 && workers_.running(worker)) return worker;
      }
      absl::SleepFor(absl::Microseconds(500));
    }
    return fallback;
  }

  // Session id and password from <ledger>.session.<i>, and the member the
  // worker is connected to (-1 if unknown).
  struct SessionInfo {
    int64_t id = 0;
    std::string password;
    int member = -1;
  };
  std::optional<SessionInfo> ReadSession(int worker) {
    std::ifstream in(absl::StrCat(ledger_, ".session.", worker));
    std::string id_hex, password_hex, server;
    if (!(in >> id_hex >> password_hex)) return std::nullopt;
    in >> server;
    SessionInfo info;
    uint64_t id = 0;
    if (!absl::SimpleHexAtoi(id_hex, &id)) return std::nullopt;
    info.id = static_cast<int64_t>(id);
    info.password = absl::HexStringToBytes(password_hex);
    std::vector<std::string> host_port = absl::StrSplit(server, ':');
    int port = 0;
    if (host_port.size() == 2 && absl::SimpleAtoi(host_port[1], &port)) {
      info.member = ensemble_.MemberByClientPort(port);
    }
    return info;
  }

  absl::Status Heal() { return ensemble_.WaitUntilServing(absl::Seconds(90)); }

  absl::Status Inject(Fault fault) {
    const char* kind = FaultName(fault);
    switch (fault) {
      case Fault::kKillWorker: {
        // Half the time a holder: its node then blocks the queue until its
        // session expires.
        int w = AnyWorker();
        if (Uniform(0, 1) == 0) w = CurrentHolder(w);
        const bool holding = view_.holding.count(w) > 0;
        workers_.Kill(w, SIGKILL);
        Note(kind, "begin", w, holding ? "holder" : "");
        view_.holding.erase(w);
        Calm(Uniform(0, 1000));
        if (!workers_.Start(w))
          return absl::InternalError(absl::StrCat("cannot restart worker ", w));
        Note(kind, "end", w);
        return absl::OkStatus();
      }
      case Fault::kPauseWorker: {
        // The paused-holder case: prefer a worker inside its critical
        // section (always the first time), else the leader (always the
        // second time), else anyone.
        int w = AnyWorker();
        const int pauses = counts_["pause_worker"];
        const int choice = pauses == 0 ? 0 : pauses == 1 ? 2 : Uniform(0, 3);
        if (choice <= 1) {
          w = CurrentHolder(w);
        } else if (choice == 2) {
          w = CurrentLeader(w);
        }
        workers_.Kill(w, SIGSTOP);
        const bool holding = view_.holding.count(w) > 0;
        const bool leading = view_.leading.count(w) > 0;
        Note(
            kind, "begin", w,
            absl::StrCat(holding ? "holder" : "", holding && leading ? "," : "",
                         leading ? "leader" : ""));
        absl::SleepFor(kSessionTimeout +
                       absl::Milliseconds(Uniform(500, 2000)));
        workers_.Kill(w, SIGCONT);
        Note(kind, "end", w);
        return absl::OkStatus();
      }
      case Fault::kExpireSession: {
        int w = AnyWorker();
        if (Uniform(0, 1) == 0) w = CurrentHolder(w);
        std::optional<SessionInfo> session = ReadSession(w);
        if (!session.has_value()) return absl::OkStatus();  // not connected yet
        Note(kind, "begin", w, absl::StrCat(absl::Hex(session->id)));
        absl::Status expired =
            testing::ExpireSession(ensemble_.connect_string(), session->id,
                                   session->password, absl::Seconds(30));
        Note(kind, "end", w, expired.ok() ? "expired" : "failed");
        if (!expired.ok()) ++expire_failures_;
        return absl::OkStatus();
      }
      case Fault::kKillMember: {
        // The member some worker is connected to.
        int member = Uniform(0, ensemble_.size() - 1);
        if (std::optional<SessionInfo> s = ReadSession(AnyWorker());
            s && s->member >= 0) {
          member = s->member;
        }
        Note(kind, "begin", member);
        ZKR_RETURN_IF_ERROR(ensemble_.Kill(member));
        Calm(Uniform(500, 3000));
        ZKR_RETURN_IF_ERROR(ensemble_.Restart(member));
        ZKR_RETURN_IF_ERROR(Heal());
        Note(kind, "end", member);
        return absl::OkStatus();
      }
      case Fault::kPauseLeader: {
        absl::StatusOr<int> leader = ensemble_.Leader();
        if (!leader.ok()) {
          ZKR_RETURN_IF_ERROR(Heal());
          leader = ensemble_.Leader();
          if (!leader.ok()) return leader.status();
        }
        Note(kind, "begin", *leader);
        ZKR_RETURN_IF_ERROR(ensemble_.Pause(*leader));
        Calm(Uniform(2000, 7000));
        ZKR_RETURN_IF_ERROR(ensemble_.Resume(*leader));
        ZKR_RETURN_IF_ERROR(Heal());
        Note(kind, "end", *leader);
        return absl::OkStatus();
      }
      case Fault::kLoseQuorum: {
        const int spared = Uniform(0, ensemble_.size() - 1);
        std::vector<int> down;
        for (int i = 0; i < ensemble_.size(); ++i) {
          if (i != spared) down.push_back(i);
        }
        Note(kind, "begin", spared);
        for (int m : down) ZKR_RETURN_IF_ERROR(ensemble_.Stop(m));
        Calm(Uniform(2000, 5000));
        for (int m : down) ZKR_RETURN_IF_ERROR(ensemble_.Restart(m));
        ZKR_RETURN_IF_ERROR(Heal());
        Note(kind, "end", spared);
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  std::mt19937_64 rng_;
  ZooKeeperEnsemble& ensemble_;
  Workers& workers_;
  const std::string ledger_;
  LedgerReader reader_;
  LiveView view_;
  std::map<std::string, int> counts_;
  std::vector<std::string> unexpected_;
  absl::Time healed_ = absl::Now();
  int expire_failures_ = 0;
};

// ---- the checker
// ------------------------------------------------------------------------

// One critical section or leadership term.
struct Interval {
  int worker = 0;
  bool write = true;  // leadership terms count as exclusive
  int64_t token = 0;  // fencing token / epoch
  int64_t begin = 0, end = 0;
  bool open = false;  // no EXIT/UNLEAD: ended by kill -9 (end = kill time)
  bool told = false;  // SUSPENDED/LOST/failed check during [begin, end]
  int refused = 0;    // fenced accesses refused
  std::string begin_line, end_line;

  std::string Describe() const {
    return absl::StrCat("[", begin_line, "] .. [", open ? "killed: " : "",
                        end_line, "]", told ? " (told)" : "");
  }
};

struct Report {
  std::vector<std::string> violations;
  int64_t reads = 0, writes = 0, accepted = 0, refused = 0, stale_refused = 0;
  int64_t terms = 0, leader_accepted = 0, leader_refused = 0;
  int64_t plain_overlaps = 0, told_holds = 0, killed_holds = 0,
          leader_plain_overlaps = 0;
  int64_t failed_acquires = 0;
  std::map<std::string, int64_t> failures_by_code;
  // Time until every worker acquired again after a fault healed.
  std::string slowest_recovery = "none";
  int64_t slowest_recovery_ns = 0;
  int slow_recoveries = 0;  // beyond 2x the session timeout + allowance
  std::vector<std::string> slow_recovery_list;
  int64_t stale_overlapping = 0;  // told holds that overlapped another hold
  int64_t stale_overlapping_refused = 0;  // ... and were refused by the fence
  // Refusals of holders whose guard still said held() with lease left.
  int64_t refused_while_vouched = 0;
  // Leader refusals while IsCurrent() still said yes.
  int64_t leader_refused_while_current = 0;
};

class Checker {
 public:
  explicit Checker(std::vector<Entry> entries) : entries_(std::move(entries)) {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.t < b.t; });
  }

  Report Check() {
    Report r;
    for (const Entry& e : entries_) {
      if (e.kind == "NEMESIS" && e.what == "kill_worker" &&
          e.detail == "begin") {
        kills_[e.target].push_back(e.t);
      } else if (e.kind == "SUSPECT") {
        (e.what == "leader" ? leader_told_ : lock_told_)[e.worker].push_back(
            e.t);
      } else if (e.kind == "AFAIL") {
        ++r.failed_acquires;
        ++r.failures_by_code[e.detail];
      }
    }
    std::vector<Interval> holds =
        Intervals("ENTER", "EXIT", "ACCEPT", "REFUSE", lock_told_, r);
    std::vector<Interval> terms =
        Intervals("LEADER", "UNLEAD", "LACCEPT", "LREFUSE", leader_told_, r);
    for (const Interval& h : holds) {
      (h.write ? r.writes : r.reads)++;
      if (h.told) ++r.told_holds;
      if (h.open) ++r.killed_holds;
      if (h.told) r.stale_refused += h.refused;
      if (h.refused > 0 && !h.told) {
        r.violations.push_back(
            absl::StrCat("(a) a holder never told SUSPENDED/LOST was refused "
                         "by the fenced resource: ",
                         h.Describe()));
      }
    }
    r.terms = static_cast<int64_t>(terms.size());
    for (const Interval& t : terms) {
      if (t.refused > 0 && !t.told) {
        r.violations.push_back(
            absl::StrCat("(c) a leader never told SUSPENDED/LOST was refused "
                         "by the fenced resource: ",
                         t.Describe()));
      }
    }
    std::set<const Interval*> stale;
    r.plain_overlaps = Overlaps(holds, "(a) lock", &r.violations, &stale);
    r.stale_overlapping = static_cast<int64_t>(stale.size());
    for (const Interval* h : stale)
      r.stale_overlapping_refused += h->refused > 0 ? 1 : 0;
    r.leader_plain_overlaps = Overlaps(terms, "(c) leadership", &r.violations);
    TokenOrder(holds, "(a) lock", &r.violations);
    TokenOrder(terms, "(c) leadership", &r.violations);
    FenceOrder("ACCEPT", "(b) resource", &r);
    FenceOrder("LACCEPT", "(c) leader resource", &r);
    OneLeaderPerEpoch(&r.violations);
    Recoveries(&r);
    return r;
  }

 private:
  bool ToldIn(const std::map<int, std::vector<int64_t>>& told, int worker,
              int64_t begin, int64_t end) const {
    auto it = told.find(worker);
    if (it == told.end()) return false;
    auto first = std::lower_bound(it->second.begin(), it->second.end(), begin);
    return first != it->second.end() && *first <= end;
  }

  std::optional<int64_t> KillAfter(int worker, int64_t t) const {
    auto it = kills_.find(worker);
    if (it == kills_.end()) return std::nullopt;
    auto k = std::lower_bound(it->second.begin(), it->second.end(), t);
    if (k == it->second.end()) return std::nullopt;
    return *k;
  }

  std::vector<Interval> Intervals(
      const std::string& begin_kind, const std::string& end_kind,
      const std::string& accept_kind, const std::string& refuse_kind,
      const std::map<int, std::vector<int64_t>>& told, Report& r) {
    const bool leadership = begin_kind == "LEADER";
    std::vector<Interval> out;
    std::map<std::pair<int, int64_t>, size_t> open;  // (worker, token) -> index
    for (const Entry& e : entries_) {
      if (e.kind == begin_kind) {
        const auto key = std::make_pair(e.worker, e.token);
        if (open.count(key) > 0) {
          r.violations.push_back(
              absl::StrCat(leadership ? "(c)" : "(a)", " token ", e.token,
                           " began twice by worker ", e.worker,
                           " without ending: [", e.line, "]"));
        }
        Interval i;
        i.worker = e.worker;
        i.write = leadership || e.write;
        i.token = e.token;
        i.begin = e.t;
        i.begin_line = e.line;
        open[key] = out.size();
        out.push_back(i);
      } else if (e.kind == accept_kind || e.kind == refuse_kind) {
        auto it = open.find({e.worker, e.token});
        if (it == open.end()) {
          r.violations.push_back(absl::StrCat(
              "fenced access outside any interval: [", e.line, "]"));
          continue;
        }
        if (e.kind == refuse_kind) {
          ++out[it->second].refused;
          ++(leadership ? r.leader_refused : r.refused);
          if (e.vouched) {
            ++(leadership ? r.leader_refused_while_current
                          : r.refused_while_vouched);
          }
        } else {
          ++(leadership ? r.leader_accepted : r.accepted);
        }
      } else if (e.kind == end_kind) {
        auto it = open.find({e.worker, e.token});
        if (it == open.end()) {
          r.violations.push_back(
              absl::StrCat("end without a beginning: [", e.line, "]"));
          continue;
        }
        out[it->second].end = e.t;
        out[it->second].end_line = e.line;
        open.erase(it);
      }
    }
    for (const auto& [key, index] : open) {
      Interval& i = out[index];
      std::optional<int64_t> killed = KillAfter(i.worker, i.begin);
      if (killed.has_value()) {
        i.open = true;
        i.end = *killed;
        i.end_line = absl::StrCat("kill -9 at ", *killed);
      } else {
        r.violations.push_back(
            absl::StrCat(leadership ? "(c) term" : "(a) hold",
                         " never ended (worker neither exited it nor was "
                         "killed): [",
                         i.begin_line, "]"));
        i.end = INT64_MAX;
        i.end_line = "never";
      }
    }
    for (Interval& i : out) i.told = ToldIn(told, i.worker, i.begin, i.end);
    std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) {
      return a.begin < b.begin;
    });
    return out;
  }

  // Counts overlapping pairs (at least one exclusive) ignoring told; reports
  // as violations those where neither side was told.
  static int64_t Overlaps(const std::vector<Interval>& sorted,
                          const std::string& what,
                          std::vector<std::string>* violations,
                          std::set<const Interval*>* stale = nullptr) {
    int64_t plain = 0;
    std::vector<const Interval*> active;
    for (const Interval& b : sorted) {
      active.erase(
          std::remove_if(active.begin(), active.end(),
                         [&](const Interval* a) { return a->end <= b.begin; }),
          active.end());
      for (const Interval* a : active) {
        if (!a->write && !b.write) continue;
        if (a->worker == b.worker && !a->open) {
          // The same process cannot hold twice at once in this workload.
          violations->push_back(absl::StrCat(
              what, ": worker ", b.worker, " overlaps itself: ", a->Describe(),
              " and ", b.Describe()));
          continue;
        }
        ++plain;
        if (stale != nullptr) {
          if (a->told) stale->insert(a);
          if (b.told) stale->insert(&b);
        }
        if (!a->told && !b.told) {
          violations->push_back(
              absl::StrCat(what,
                           " overlap between holders never told "
                           "SUSPENDED/LOST: ",
                           a->Describe(), " and ", b.Describe()));
        }
      }
      active.push_back(&b);
    }
    return plain;
  }

  // Among untold intervals: one that begins after another ended (at least
  // one of them exclusive) carries a larger token.
  static void TokenOrder(const std::vector<Interval>& by_begin,
                         const std::string& what,
                         std::vector<std::string>* violations) {
    std::vector<const Interval*> by_end;
    for (const Interval& i : by_begin) {
      if (!i.told) by_end.push_back(&i);
    }
    std::sort(
        by_end.begin(), by_end.end(),
        [](const Interval* a, const Interval* b) { return a->end < b->end; });
    const Interval* max_any = nullptr;
    const Interval* max_write = nullptr;
    size_t next = 0;
    for (const Interval& b : by_begin) {
      if (b.told) continue;
      while (next < by_end.size() && by_end[next]->end < b.begin) {
        const Interval* a = by_end[next++];
        if (max_any == nullptr || a->token > max_any->token) max_any = a;
        if (a->write && (max_write == nullptr || a->token > max_write->token))
          max_write = a;
      }
      const Interval* before = b.write ? max_any : max_write;
      if (before != nullptr && before->token >= b.token) {
        violations->push_back(
            absl::StrCat(what, ": token went backwards: ", before->Describe(),
                         " ended before ", b.Describe(), " began"));
      }
    }
  }

  // Accepted accesses, in acceptance (= ledger time, written under the
  // resource's flock) order: a write's token is never lower than an earlier
  // accepted write's or read's, a read's never lower than an earlier write's;
  // write sequence numbers increase.
  void FenceOrder(const std::string& kind, const std::string& what, Report* r) {
    const Entry* last_write = nullptr;
    const Entry* max_read = nullptr;
    for (const Entry& e : entries_) {
      if (e.kind != kind) continue;
      const bool write = kind != "ACCEPT" || e.write;
      if (last_write != nullptr && e.token < last_write->token) {
        r->violations.push_back(
            absl::StrCat(what, " accepted a lower token after a higher: [",
                         last_write->line, "] then [", e.line, "]"));
      }
      if (!write) {
        if (max_read == nullptr || e.token > max_read->token) max_read = &e;
        continue;
      }
      if (max_read != nullptr && e.token < max_read->token) {
        r->violations.push_back(
            absl::StrCat(what, " accepted a write below a read's token: [",
                         max_read->line, "] then [", e.line, "]"));
      }
      if (last_write != nullptr && e.seq <= last_write->seq) {
        r->violations.push_back(
            absl::StrCat(what, " sequence did not increase: [",
                         last_write->line, "] then [", e.line, "]"));
      }
      last_write = &e;
    }
  }

  void OneLeaderPerEpoch(std::vector<std::string>* violations) {
    std::map<int64_t, const Entry*> first;
    for (const Entry& e : entries_) {
      if (e.kind != "LEADER") continue;
      auto [it, inserted] = first.emplace(e.token, &e);
      if (!inserted && it->second->worker != e.worker) {
        violations->push_back(absl::StrCat("(c) two leaders for epoch ",
                                           e.token, ": [", it->second->line,
                                           "] and [", e.line, "]"));
      }
    }
  }

  // For each fault: from its healing until every worker has entered its
  // critical section again (unless the next fault began first).
  void Recoveries(Report* r) {
    std::map<int, std::vector<int64_t>> enters;
    for (const Entry& e : entries_) {
      if (e.kind == "ENTER") enters[e.worker].push_back(e.t);
    }
    std::vector<const Entry*> nemesis;
    for (const Entry& e : entries_) {
      if (e.kind == "NEMESIS") nemesis.push_back(&e);
    }
    const int64_t bound =
        absl::ToInt64Nanoseconds(2 * kSessionTimeout + kAllowance);
    for (size_t i = 0; i < nemesis.size(); ++i) {
      const Entry& e = *nemesis[i];
      if (e.detail != "end") continue;
      int64_t next_fault = INT64_MAX;
      for (size_t j = i + 1; j < nemesis.size(); ++j) {
        if (nemesis[j]->detail == "begin") {
          next_fault = nemesis[j]->t;
          break;
        }
      }
      int64_t took = 0;
      for (int w = 0; w < kWorkers; ++w) {
        const std::vector<int64_t>& list = enters[w];
        auto next = std::upper_bound(list.begin(), list.end(), e.t);
        took = std::max(took, next == list.end() ? INT64_MAX : *next - e.t);
      }
      const std::string fault = absl::StrCat(
          e.what, " (", TargetsWorker(e.what) ? "worker " : "member ", e.target,
          ")");
      if (took > bound || took > next_fault - e.t) {
        ++r->slow_recoveries;
        r->slow_recovery_list.push_back(absl::StrCat(
            fault, took == INT64_MAX ? " never" : absl::StrCat(" ", Ms(took)),
            took > next_fault - e.t ? " (the next fault came first)" : ""));
        continue;
      }
      if (took > r->slowest_recovery_ns) {
        r->slowest_recovery_ns = took;
        r->slowest_recovery =
            absl::StrCat(Ms(took), " after ", fault, " healed");
      }
    }
  }

  std::vector<Entry> entries_;
  std::map<int, std::vector<int64_t>> kills_, lock_told_, leader_told_;
};

// ---- the test
// ---------------------------------------------------------------------------

uint64_t SeedFromEnv() {
  uint64_t seed = 20240607;
  if (const char* env = std::getenv("ZKR_CHAOS_SEED");
      env != nullptr && *env != '\0') {
    if (!absl::SimpleAtoi(env, &seed))
      ADD_FAILURE() << "ZKR_CHAOS_SEED=" << env << " is not a number";
  }
  return seed;
}

absl::Duration FaultPhaseFromEnv() {
  if (const char* env = std::getenv("ZKR_CHAOS_SOAK");
      env != nullptr && *env != '\0') {
    int64_t seconds = 0;
    if (absl::SimpleAtoi(env, &seconds) && seconds > 0)
      return absl::Seconds(seconds);
    ADD_FAILURE() << "ZKR_CHAOS_SOAK=" << env << " is not a number of seconds";
  }
  return absl::Seconds(75);
}

// The children left under `path` once every worker has exited, waiting
// (bounded) for nodes of sessions that died by kill -9 to expire. Sets
// `waited` to how long it took the path to become empty.
std::vector<std::string> Leftovers(Session& session, const std::string& path,
                                   absl::Time deadline,
                                   absl::Duration* waited) {
  const absl::Time start = absl::Now();
  for (;;) {
    absl::StatusOr<std::vector<std::string>> children =
        session.GetChildren(path);
    if (absl::IsNotFound(children.status()) ||
        (children.ok() && children->empty())) {
      *waited = absl::Now() - start;
      return {};
    }
    if (absl::Now() >= deadline) {
      if (!children.ok()) {
        return {absl::StrCat("cannot list ", path, ": ",
                             children.status().ToString())};
      }
      return *children;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

TEST(ChaosTest, LocksAndLeadershipStayExclusiveAndLiveUnderFaults) {
  const absl::Time test_start = absl::Now();
  const uint64_t seed = SeedFromEnv();
  const absl::Duration fault_phase = FaultPhaseFromEnv();
  std::printf(
      "chaos seed: %llu (replay with ZKR_CHAOS_SEED=%llu); faults for %s\n",
      static_cast<unsigned long long>(seed),
      static_cast<unsigned long long>(seed),
      absl::FormatDuration(fault_phase).c_str());
  std::fflush(stdout);
  const char* binary = std::getenv("ZKR_CHAOS_WORKER");
  ASSERT_TRUE(binary != nullptr && access(binary, X_OK) == 0)
      << "set ZKR_CHAOS_WORKER to the chaos_worker executable (ctest does)";

  RunDirectory dir;
  ASSERT_FALSE(dir.path().empty()) << "cannot create a run directory";
  if (const char* keep = std::getenv("ZKR_CHAOS_KEEP");
      keep != nullptr && *keep == '1') {
    dir.keep();
  }
  testing::ServerOptions server_options;
  server_options.log_file = dir.path() + "/zookeeper.log";
  auto ensemble = ZooKeeperEnsemble::Start(3, server_options);
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  const std::string root = absl::StrCat("/zkr-chaos-", getpid());
  WorkerConfig config;
  config.binary = binary;
  config.connect = (*ensemble)->connect_string();
  config.lock_path = root + "/lock";
  config.election_path = root + "/election";
  config.ledger = dir.path() + "/ledger";
  config.resource = dir.path() + "/resource";
  config.directory = dir.path();
  const absl::Time ensemble_up = absl::Now();

  Workers workers(config);
  for (int i = 0; i < kWorkers; ++i)
    ASSERT_TRUE(workers.Start(i)) << "fork: " << std::strerror(errno);
  Nemesis nemesis(seed, **ensemble, workers, config.ledger);
  // Warm-up: every worker has been in its critical section once.
  {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (nemesis.view().last_enter.size() < kWorkers &&
           absl::Now() < deadline) {
      nemesis.Calm(100);
    }
    ASSERT_EQ(nemesis.view().last_enter.size(), static_cast<size_t>(kWorkers))
        << "not every worker acquired the lock within 60 s; see " << dir.path();
  }

  const absl::Time faults_start = absl::Now();
  std::string harness_error;
  const bool nemesis_ok = nemesis.Run(fault_phase, &harness_error);
  if (!nemesis_ok) dir.keep();
  ASSERT_TRUE(nemesis_ok) << "the nemesis could not inject or heal a fault: "
                          << harness_error;
  ASSERT_TRUE((*ensemble)->WaitUntilServing(absl::Seconds(90)).ok());
  const absl::Time faults_end = nemesis.healed();
  const int64_t calm_ns = absl::ToUnixNanos(faults_end);
  AppendLine(config.ledger, absl::StrCat("NEMESIS ", calm_ns, " calm now -1"));

  // (d) progress: every worker acquires again within 2x the session timeout.
  std::vector<std::string> violations;
  std::map<int, int64_t> recovered;  // worker -> ns after calm
  {
    const absl::Time deadline = faults_end + 2 * kSessionTimeout + kAllowance;
    for (;;) {
      nemesis.Refresh();
      for (const auto& [worker, t] : nemesis.view().last_enter) {
        if (t > calm_ns && recovered.count(worker) == 0)
          recovered[worker] = t - calm_ns;
      }
      if (recovered.size() == kWorkers || absl::Now() >= deadline) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    for (int i = 0; i < kWorkers; ++i) {
      if (recovered.count(i) == 0) {
        violations.push_back(
            absl::StrCat("(d) worker ", i, " did not acquire within ",
                         absl::FormatDuration(2 * kSessionTimeout + kAllowance),
                         " after the nemesis stopped"));
      }
    }
  }
  int64_t slowest_final = 0;
  for (const auto& [worker, ns] : recovered)
    slowest_final = std::max(slowest_final, ns);

  // Shut the workers down cleanly.
  for (const std::string& problem : workers.StopAll(absl::Seconds(30))) {
    violations.push_back(absl::StrCat("shutdown: ", problem));
  }
  for (const std::string& crash : nemesis.unexpected()) {
    violations.push_back(absl::StrCat("crash: ", crash));
  }

  // (e) nothing left under the lock and election paths.
  absl::Duration empty_after = absl::ZeroDuration();
  {
    SessionOptions options;
    options.connect = config.connect;
    options.session_timeout = absl::Seconds(10);
    options.connect_timeout = absl::Seconds(30);
    auto admin = Session::Connect(options);
    ASSERT_TRUE(admin.ok()) << admin.status();
    const absl::Time deadline = absl::Now() + 2 * kSessionTimeout + kAllowance;
    for (const std::string& path : {config.lock_path, config.election_path}) {
      absl::Duration waited;
      std::vector<std::string> left =
          Leftovers(**admin, path, deadline, &waited);
      empty_after = std::max(empty_after, waited);
      if (!left.empty()) {
        violations.push_back(absl::StrCat("(e) znodes left under ", path, ": ",
                                          absl::StrJoin(left, ", ")));
      }
    }
    for (const std::string& path :
         {config.lock_path, config.election_path, root}) {
      absl::Status deleted =
          (*admin)->Delete(path);  // empty containers not yet reaped
      if (!deleted.ok() && !absl::IsNotFound(deleted)) {
        violations.push_back(
            absl::StrCat("(e) cannot delete ", path, ": ", deleted.ToString()));
      }
    }
    (*admin)->Close();
  }

  // The checker over the whole ledger.
  LedgerReader reader(config.ledger);
  std::vector<Entry> entries = reader.Poll();
  for (const std::string& line : reader.malformed()) {
    violations.push_back(absl::StrCat("malformed ledger line: \"",
                                      absl::CHexEscape(line), "\""));
  }
  Report report = Checker(entries).Check();
  violations.insert(violations.end(), report.violations.begin(),
                    report.violations.end());

  std::vector<std::string> faults;
  int total_faults = 0;
  for (const auto& [kind, count] : nemesis.counts()) {
    faults.push_back(absl::StrCat(kind, "=", count));
    total_faults += count;
  }
  std::vector<std::string> failures;
  for (const auto& [code, count] : report.failures_by_code) {
    failures.push_back(absl::StrCat(code, "=", count));
  }
  std::printf(
      "chaos report (seed %llu)\n"
      "  durations: ensemble start %s, faults %s, whole test %s\n"
      "  operations: %lld critical sections (%lld write, %lld read), %lld "
      "fenced accepts, "
      "%lld leader terms (%lld leader writes), %d worker starts, %lld failed "
      "acquisitions (%s)\n"
      "  faults: %d (%s)%s\n"
      "  (a) holds told SUSPENDED/LOST: %lld; holds cut by kill -9: %lld\n"
      "  (b) fence refusals: %lld (of stale holders: %lld; %lld while the "
      "guard still said "
      "held with lease left); leader fence refusals: %lld (%lld while still "
      "'current')\n"
      "      plain locking (ignoring SUSPENDED/LOST) would have let %lld pairs "
      "of holds overlap "
      "(%lld stale holders, %lld of them stopped by the fence; the others' "
      "writes came before "
      "the newer holder's); leadership overlaps: %lld\n"
      "  (d) slowest recovery (every worker acquired again) after a fault: %s; "
      "%d slower than "
      "%s%s%s; after the nemesis stopped: %s\n"
      "  (e) lock and election paths empty %s after the workers exited\n"
      "  violations: %zu\n",
      static_cast<unsigned long long>(seed),
      absl::FormatDuration(ensemble_up - test_start).c_str(),
      absl::FormatDuration(faults_end - faults_start).c_str(),
      absl::FormatDuration(absl::Now() - test_start).c_str(),
      static_cast<long long>(report.reads + report.writes),
      static_cast<long long>(report.writes),
      static_cast<long long>(report.reads),
      static_cast<long long>(report.accepted),
      static_cast<long long>(report.terms),
      static_cast<long long>(report.leader_accepted), workers.starts(),
      static_cast<long long>(report.failed_acquires),
      absl::StrJoin(failures, ", ").c_str(), total_faults,
      absl::StrJoin(faults, ", ").c_str(),
      nemesis.expire_failures() > 0
          ? absl::StrCat("; ", nemesis.expire_failures(), " expiries failed")
                .c_str()
          : "",
      static_cast<long long>(report.told_holds),
      static_cast<long long>(report.killed_holds),
      static_cast<long long>(report.refused),
      static_cast<long long>(report.stale_refused),
      static_cast<long long>(report.refused_while_vouched),
      static_cast<long long>(report.leader_refused),
      static_cast<long long>(report.leader_refused_while_current),
      static_cast<long long>(report.plain_overlaps),
      static_cast<long long>(report.stale_overlapping),
      static_cast<long long>(report.stale_overlapping_refused),
      static_cast<long long>(report.leader_plain_overlaps),
      report.slowest_recovery.c_str(), report.slow_recoveries,
      absl::FormatDuration(2 * kSessionTimeout + kAllowance).c_str(),
      report.slow_recovery_list.empty() ? "" : ": ",
      absl::StrJoin(report.slow_recovery_list, "; ").c_str(),
      Ms(slowest_final).c_str(), absl::FormatDuration(empty_after).c_str(),
      violations.size());
  for (size_t i = 0; i < violations.size() && i < 30; ++i) {
    std::printf("  VIOLATION: %s\n", violations[i].c_str());
  }
  std::fflush(stdout);
  if (!violations.empty()) dir.keep();
  EXPECT_EQ(violations.size(), 0u)
      << "seed " << seed << "; ledger kept in " << dir.path();
  EXPECT_GT(report.writes, 0);
  EXPECT_GT(report.terms, 0);
}

// ---- the checker itself, on hand-written ledgers
// ---------------------------------------

Report CheckLines(const std::vector<std::string>& lines) {
  std::vector<Entry> entries;
  for (const std::string& line : lines) {
    std::optional<Entry> entry = ParseEntry(line);
    EXPECT_TRUE(entry.has_value()) << line;
    if (entry.has_value()) entries.push_back(*entry);
  }
  return Checker(entries).Check();
}

TEST(ChaosCheckerTest, TwoUntoldWritersOverlappingIsAViolation) {
  Report r = CheckLines({"ENTER 1 W 10 100", "ACCEPT 1 W 10 1 110",
                         "EXIT 1 W 10 200", "ENTER 2 W 20 150",
                         "ACCEPT 2 W 20 2 160", "EXIT 2 W 20 250"});
  EXPECT_EQ(r.plain_overlaps, 1);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_NE(r.violations[0].find("overlap"), std::string::npos)
      << r.violations[0];
}

TEST(ChaosCheckerTest, AnOverlapWithAToldHolderIsCountedNotAViolation) {
  Report r =
      CheckLines({"ENTER 1 W 10 100", "SUSPECT 1 180 lock SUSPENDED",
                  "REFUSE 1 W 10 20 190", "EXIT 1 W 10 200", "ENTER 2 W 20 150",
                  "ACCEPT 2 W 20 1 160", "EXIT 2 W 20 250"});
  EXPECT_TRUE(r.violations.empty()) << r.violations[0];
  EXPECT_EQ(r.plain_overlaps, 1);
  EXPECT_EQ(r.stale_overlapping, 1);
  EXPECT_EQ(r.stale_overlapping_refused, 1);
  EXPECT_EQ(r.stale_refused, 1);
  // A SUSPECT outside the interval does not count.
  r = CheckLines({"ENTER 1 W 10 100", "EXIT 1 W 10 200",
                  "SUSPECT 1 201 lock LOST", "ENTER 2 W 20 150",
                  "EXIT 2 W 20 250"});
  EXPECT_EQ(r.violations.size(), 1u);
}

TEST(ChaosCheckerTest, ReadersMayOverlapReadersButNotWriters) {
  EXPECT_TRUE(CheckLines({"ENTER 1 R 10 100", "EXIT 1 R 10 200",
                          "ENTER 2 R 11 150", "EXIT 2 R 11 250"})
                  .violations.empty());
  EXPECT_EQ(CheckLines({"ENTER 1 R 10 100", "EXIT 1 R 10 200",
                        "ENTER 2 W 11 150", "EXIT 2 W 11 250"})
                .violations.size(),
            1u);
}

TEST(ChaosCheckerTest, TokensMustIncreaseAndUntoldHoldersMustNotBeRefused) {
  // A later untold writer with a lower token.
  EXPECT_EQ(CheckLines({"ENTER 1 W 20 100", "EXIT 1 W 20 200",
                        "ENTER 2 W 10 300", "EXIT 2 W 10 400"})
                .violations.size(),
            1u);
  // An untold holder refused by the fence.
  EXPECT_EQ(CheckLines(
                {"ENTER 1 W 20 100", "REFUSE 1 W 20 30 150", "EXIT 1 W 20 200"})
                .violations.size(),
            1u);
  // The fence accepting a lower write token after a higher one, or a write
  // below a read.
  EXPECT_FALSE(
      CheckLines({"ENTER 1 W 20 100", "ACCEPT 1 W 20 1 150", "EXIT 1 W 20 200",
                  "ENTER 2 W 10 300", "SUSPECT 2 310 lock LOST",
                  "ACCEPT 2 W 10 2 350", "EXIT 2 W 10 400"})
          .violations.empty());
  EXPECT_FALSE(
      CheckLines({"ENTER 1 R 20 100", "ACCEPT 1 R 20 0 150", "EXIT 1 R 20 200",
                  "ENTER 2 W 10 300", "SUSPECT 2 310 lock LOST",
                  "ACCEPT 2 W 10 1 350", "EXIT 2 W 10 400"})
          .violations.empty());
}

TEST(ChaosCheckerTest, HoldsEndByExitOrKill) {
  EXPECT_EQ(CheckLines({"ENTER 1 W 20 100"}).violations.size(), 1u);
  Report r = CheckLines({"ENTER 1 W 20 100", "NEMESIS 150 kill_worker begin 1",
                         "NEMESIS 160 kill_worker end 1", "ENTER 2 W 30 3000",
                         "EXIT 2 W 30 3100"});
  EXPECT_TRUE(r.violations.empty()) << r.violations[0];
  EXPECT_EQ(r.killed_holds, 1);
}

TEST(ChaosCheckerTest, LeadershipIsOnePerEpochAndExclusiveAmongUntoldLeaders) {
  EXPECT_FALSE(CheckLines({"LEADER 1 7 100", "UNLEAD 1 7 200", "LEADER 2 7 300",
                           "UNLEAD 2 7 400"})
                   .violations.empty());
  EXPECT_FALSE(CheckLines({"LEADER 1 7 100", "UNLEAD 1 7 200", "LEADER 2 9 150",
                           "UNLEAD 2 9 400"})
                   .violations.empty());
  EXPECT_TRUE(CheckLines({"LEADER 1 7 100", "SUSPECT 1 160 leader SUSPENDED",
                          "UNLEAD 1 7 200", "LEADER 2 9 150", "UNLEAD 2 9 400"})
                  .violations.empty());
  EXPECT_FALSE(CheckLines({"LEADER 1 9 100", "UNLEAD 1 9 200", "LEADER 2 7 300",
                           "UNLEAD 2 7 400"})
                   .violations.empty());
}

}  // namespace
}  // namespace zkr
