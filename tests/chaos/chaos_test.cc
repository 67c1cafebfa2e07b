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
// of 3) for a few seconds; through each worker's own proxy (network.h): cut it
// off beyond its session timeout, slow it, cut one direction, reset its
// connections; and the clock nemesis: step its wall clock an hour forward and
// two back, then cut it off (it must still be told before anyone else
// begins). Meanwhile a background load (chaos_load.cc: 64 sessions on 16
// locks plus 4 candidates, straight to the ensemble) keeps the ensemble busy,
// and its rate is reported before, during and after each fault kind. Then
// calm, then shut the workers down, then check:
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
//   (f) while the workers run, no watch is left on a path that no longer
//       exists (a leaked watch: the recipes watch existing nodes only, but
//       for a followed group or election directory that is missing: its
//       GroupWatch or LeaderObserver waits for its creation);
//   (e) once every worker has exited, no znode is left under the lock and
//       election paths (the empty containers are then deleted explicitly);
//   (g) a wall-clock step changes no lease: the lease left just after each
//       step is the lease left just before it;
//   (h) the workers also observe the election (LeaderObserver) and join a
//       group (GroupMember, GroupWatch): no observer reports a leader whose
//       term ended more than a session timeout (plus the expiry tick) before,
//       counted from the end of a quorum fault (no session expires without
//       quorum); and some observer saw terms taken over.
// The report ends with a table per fault kind: count, violations laid to it,
// slowest recovery, stale writes refused, and the load's rate around it.
// It prints the operations, faults by kind, violations (must be 0), the seed
// and the slowest recovery. ZKR_CHAOS_SOAK=<seconds> runs the nemesis longer
// (default ~75 s of faults). On failure (or with ZKR_CHAOS_KEEP=1) the run's
// directory (ledger, worker and server logs) is kept and its path printed.
// checker_test.cc runs the checker on hand-written ledgers, so that it is
// known to catch what it claims to.
//
// This file holds the tests; the run's pieces live beside it: run_dir.h (the
// run directory), ledger.h (parsing the ledger), workers.h (the worker
// processes), faults.h and nemesis.h (the nemesis), checker.h (the checker).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <optional>
#include <ostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/chaos/checker.h"
#include "tests/chaos/ledger.h"
#include "tests/chaos/nemesis.h"
#include "tests/chaos/parameters.h"
#include "tests/chaos/plot.h"
#include "tests/chaos/run_dir.h"
#include "tests/chaos/sampler.h"
#include "tests/chaos/workers.h"
#include "zkrecipes/session.h"
#include "src/testing/server_process.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace chaos {
namespace {

using testing::ZooKeeperEnsemble;

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

// (f) Watched paths under `root` (with the watching sessions) that do not
// exist, seen on each member's own watch listing twice, 500 ms apart, with
// the member's own view of the paths read in between (through a session
// connected to that member alone).
std::vector<std::string> LiveLeakedWatches(ZooKeeperEnsemble& ensemble, const std::string& root,
                                           const std::set<std::string>& followed) {
  std::vector<std::string> leaks;
  for (int m = 0; m < ensemble.size(); ++m) {
    auto watched = [&]() {
      WatchListing all;
      absl::StatusOr<std::string> wchp = ensemble.FourLetterWord(m, "wchp");
      if (!wchp.ok()) return all;
      for (auto& [path, sessions] : testing::ParseWatchesByPath(*wchp)) {
        if (absl::StartsWith(path, root + "/")) all[path].insert(sessions.begin(), sessions.end());
      }
      return all;
    };
    const WatchListing first = watched();
    if (first.empty()) continue;
    SessionOptions options;
    options.connect = ensemble.member_connect_string(m);
    options.log_sink = [](absl::string_view) {};
    auto member = Session::Connect(options);
    if (!member.ok()) {
      leaks.push_back(absl::StrCat("cannot check member ", m, ": ", member.status().ToString()));
      continue;
    }
    std::set<std::string> absent;
    for (const auto& [path, sessions] : first) {
      // A directory a GroupWatch or LeaderObserver follows is watched while
      // it is missing, by design: for its creation (one exists-watch each).
      if (followed.count(path) != 0) continue;
      auto stat = (*member)->Exists(path);
      if (stat.ok() && !stat->has_value()) absent.insert(path);  // unknown counts as present
    }
    if (absent.empty()) continue;
    absl::SleepFor(absl::Milliseconds(500));  // a watch being removed has gone by then
    for (std::string& leak : LeakedWatches(first, watched(), [&](const std::string& path) {
           return absent.count(path) == 0;
         })) {
      leaks.push_back(absl::StrCat(std::move(leak), " on member ", m));
    }
  }
  return leaks;
}

// The background load: kLoadSessions sessions on kLoadLocks locks and a
// semaphore of kLoadPermits permits, plus kLoadCandidates candidates
// (chaos_load.cc), under <root>/load, on kLoadMallocArenas malloc arenas
// without glibc's per-thread cache (parameters.h).
std::unique_ptr<testing::ServerProcess> StartLoad(const std::string& connect,
                                                  const std::string& load_root,
                                                  const RunDirectory& dir,
                                                  const std::string& ledger) {
  const char* binary = std::getenv("ZKR_CHAOS_LOAD");
  if (binary == nullptr || access(binary, X_OK) != 0) {
    ADD_FAILURE() << "set ZKR_CHAOS_LOAD to the chaos_load executable (ctest does)";
    return nullptr;
  }
  // Through env(1), which execs the load in its own process (same pid, and
  // the sampler finds it by its name, chaos_load) with glibc's tunable set.
  auto load = std::make_unique<testing::ServerProcess>(
      std::vector<std::string>{"/usr/bin/env", kLoadMallocTunables, binary,
                               absl::StrCat("--zk=", connect),
                               absl::StrCat("--root=", load_root),
                               absl::StrCat("--ledger=", ledger),
                               absl::StrCat("--sessions=", kLoadSessions),
                               absl::StrCat("--locks=", kLoadLocks),
                               absl::StrCat("--semaphore_sessions=", kLoadSemaphoreSessions),
                               absl::StrCat("--permits=", kLoadPermits),
                               absl::StrCat("--candidates=", kLoadCandidates),
                               absl::StrCat("--malloc_arena_max=", kLoadMallocArenas)},
      dir.path() + "/load.log");
  absl::Status started = load->Start();
  EXPECT_TRUE(started.ok()) << started;
  return started.ok() ? std::move(load) : nullptr;
}

// The per-fault-kind table of a report.
std::string FaultTable(const Report& report) {
  auto rate = [](double r) { return r < 0 ? std::string("-") : absl::StrFormat("%.0f", r); };
  std::string table = absl::StrFormat(
      "  %-18s %5s %10s %14s %13s   %s\n", "fault", "count", "violations", "slowest recov.",
      "stale refused", "load lock CS/s (terms/s) [semaphore CS/s] before / during / after");
  for (const auto& [kind, f] : report.by_fault) {
    absl::StrAppendFormat(
        &table, "  %-18s %5d %10d %14s %13lld   %s (%s) [%s] / %s (%s) [%s] / %s (%s) [%s]\n",
        kind, f.count, f.violations,
        f.slowest_recovery_ns < 0 ? "-" : Ms(f.slowest_recovery_ns),
        static_cast<long long>(f.stale_refused), rate(f.sections_before), rate(f.terms_before),
        rate(f.sem_before), rate(f.sections_during), rate(f.terms_during), rate(f.sem_during),
        rate(f.sections_after), rate(f.terms_after), rate(f.sem_after));
  }
  return table;
}

// RSS and descriptors in the report: the first and last minute, and the
// flatness rule's comparison (judged from kFlatMinimumMinutes minutes on).
std::string Flatness(const Report& report) {
  if (report.minutes.empty()) return "no samples";
  const Minute& first = report.minutes.front();
  const Minute& last = report.minutes.back();
  std::string text = absl::StrFormat(
      "RSS (KiB) / descriptors, first minute -> last (%zu minutes): workers %lld / %lld -> "
      "%lld / %lld, load %lld / %lld -> %lld / %lld",
      report.minutes.size(), static_cast<long long>(first.worker_rss_kib),
      static_cast<long long>(first.worker_fds), static_cast<long long>(last.worker_rss_kib),
      static_cast<long long>(last.worker_fds), static_cast<long long>(first.load_rss_kib),
      static_cast<long long>(first.load_fds), static_cast<long long>(last.load_rss_kib),
      static_cast<long long>(last.load_fds));
  if (first.load_heap_kib >= 0 || last.load_heap_kib >= 0) {
    absl::StrAppend(&text, ", the load's live heap ", first.load_heap_kib, " -> ",
                    last.load_heap_kib, " KiB");
  }
  if (!report.flatness_judged) {
    absl::StrAppend(&text, "; flatness not judged (under ", kFlatMinimumMinutes, " minutes)");
  }
  for (const std::string& line : report.flatness) absl::StrAppend(&text, "\n      ", line);
  return text;
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
  {
    std::FILE* seed_file = std::fopen((dir.path() + "/seed").c_str(), "w");
    if (seed_file != nullptr) {
      std::fprintf(seed_file, "ZKR_CHAOS_SEED=%llu ZKR_CHAOS_SOAK=%lld\n",
                   static_cast<unsigned long long>(seed),
                   static_cast<long long>(absl::ToInt64Seconds(fault_phase)));
      std::fclose(seed_file);
    }
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
  // Each worker reaches the ensemble through proxies of its own, which the
  // nemesis can cut (partition_worker) or slow down (slow_worker).
  auto network = WorkerNetwork::Start(**ensemble, kWorkers);
  ASSERT_TRUE(network.ok()) << network.status();
  for (int i = 0; i < kWorkers; ++i) {
    config.worker_connect.push_back((*network)->ConnectString(i));
  }
  const absl::Time ensemble_up = absl::Now();
  const std::string load_root = root + "/load";
  std::unique_ptr<testing::ServerProcess> load =
      StartLoad(config.connect, load_root, dir, config.ledger);
  ASSERT_NE(load, nullptr);

  Workers workers(config);
  for (int i = 0; i < kWorkers; ++i)
    ASSERT_TRUE(workers.Start(i)) << "fork: " << std::strerror(errno);
  // RSS and descriptors of the workers and the load every 10 s, until the
  // workers are stopped.
  Sampler sampler(config.ledger, dir.path() + "/samples.csv", absl::Seconds(10));
  sampler.Start();
  Nemesis nemesis(seed, **ensemble, workers, **network, config.ledger);
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

  // (f) No watch left behind, while the workers still run: the recipes
  // watch existing nodes only (a data watch is never set on a missing node,
  // but by a GroupWatch or LeaderObserver on the missing directory it follows),
  // so a watched path under the run's root that no longer exists — and is
  // still watched a moment later, on every member — is a leaked watch.
  for (const std::string& leak :
       LiveLeakedWatches(**ensemble, root,
                         {config.election_path, config.election_path + "-members"})) {
    violations.push_back(absl::StrCat("(f) watch left behind: ", leak));
  }

  sampler.Stop();
  // Shut the workers down cleanly.
  for (const std::string& problem : workers.StopAll(absl::Seconds(30))) {
    violations.push_back(absl::StrCat("shutdown: ", problem));
  }
  {
    absl::Status stopped = load->Stop(absl::Seconds(30));
    if (!stopped.ok() || load->exit_code() != 0) {
      violations.push_back(absl::StrCat("shutdown: the load ", load->exit_description(),
                                        stopped.ok() ? "" : stopped.ToString()));
    }
  }
  for (const std::string& crash : nemesis.unexpected()) {
    violations.push_back(absl::StrCat("crash: ", crash));
  }

  // (e) nothing left under the lock and election paths (and the group the
  // election's workers join).
  absl::Duration empty_after = absl::ZeroDuration();
  {
    SessionOptions options;
    options.connect = config.connect;
    options.session_timeout = absl::Seconds(10);
    options.connect_timeout = absl::Seconds(30);
    auto admin = Session::Connect(options);
    ASSERT_TRUE(admin.ok()) << admin.status();
    const absl::Time deadline = absl::Now() + 2 * kSessionTimeout + kAllowance;
    std::vector<std::string> queues = {config.lock_path, config.election_path,
                                       config.election_path + "-members",
                                       load_root + "/election", load_root + "/semaphore"};
    for (int i = 0; i < kLoadLocks; ++i) queues.push_back(absl::StrCat(load_root, "/lock-", i));
    for (const std::string& path : queues) {
      absl::Duration waited;
      std::vector<std::string> left =
          Leftovers(**admin, path, deadline, &waited);
      empty_after = std::max(empty_after, waited);
      if (!left.empty()) {
        violations.push_back(absl::StrCat("(e) znodes left under ", path, ": ",
                                          absl::StrJoin(left, ", ")));
      }
    }
    queues.push_back(load_root);
    queues.push_back(root);
    for (const std::string& path : queues) {
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
  for (const Violation& v : report.violations) violations.push_back(v.text);
  // The run per minute: a CSV and its plot (RSS, descriptors, critical
  // sections per minute).
  if (!WriteMinutesCsv(dir.path() + "/minutes.csv", report.minutes)) {
    violations.push_back(absl::StrCat("cannot write ", dir.path(), "/minutes.csv"));
  }
  if (!report.minutes.empty()) {
    const std::string png = PlotMinutes(report.minutes);
    std::FILE* out = std::fopen((dir.path() + "/soak.png").c_str(), "wb");
    if (out == nullptr || std::fwrite(png.data(), 1, png.size(), out) != png.size() ||
        std::fclose(out) != 0) {
      violations.push_back(absl::StrCat("cannot write ", dir.path(), "/soak.png"));
    }
  }

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
      "  (g) wall-clock steps: %lld (each a STEP line; the lease left must not change)\n"
      "  (h) observer reports: %lld (%lld terms seen taken over); membership reports: %lld\n"
      "  load (%d sessions: %d on %d locks, %d on a semaphore of %d permits; %d candidates): "
      "%.0f lock critical sections/s, %.1f terms/s, %.0f semaphore critical sections/s over "
      "the run\n"
      "  (i) semaphore: %lld critical sections, %lld told SUSPENDED/LOST, at most %lld untold "
      "holders at once\n"
      "  (j) %s\n"
      "  violations: %zu\n%s",
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
      static_cast<long long>(report.clock_steps),
      static_cast<long long>(report.observer_reports),
      static_cast<long long>(report.observed_terms),
      static_cast<long long>(report.member_reports), kLoadSessions,
      kLoadSessions - kLoadSemaphoreSessions, kLoadLocks, kLoadSemaphoreSessions, kLoadPermits,
      kLoadCandidates, report.load_sections, report.load_terms, report.load_sem,
      static_cast<long long>(report.sem_sections), static_cast<long long>(report.sem_told),
      static_cast<long long>(report.sem_most_at_once), Flatness(report).c_str(),
      violations.size(), FaultTable(report).c_str());
  for (size_t i = 0; i < violations.size() && i < 30; ++i) {
    std::printf("  VIOLATION: %s\n", violations[i].c_str());
  }
  std::fflush(stdout);
  if (!violations.empty()) dir.keep();
  EXPECT_EQ(violations.size(), 0u)
      << "seed " << seed << "; ledger kept in " << dir.path();
  EXPECT_GT(report.writes, 0);
  EXPECT_GT(report.terms, 0);
  EXPECT_GT(report.observed_terms, 0) << "no observer saw a leader take over";
  EXPECT_GT(report.member_reports, 0);
  EXPECT_GT(report.sem_sections, 0);
  EXPECT_FALSE(report.minutes.empty()) << "no SAMPLE lines";
}

// The load alone (issue 36: its RSS crept in the hour), without workers or
// nemesis, on a 3-node ensemble like the soak's, for ZKR_LOAD_ALONE seconds
// (skipped unless set): chaos_load writes its RSS and malloc heap every 10 s
// to <run directory>/heap.csv (--heap_log), from which the test prints one
// row per minute. ZKR_LOAD_ARGS adds chaos_load flags (space-separated,
// e.g. "--candidates=0 --semaphore_sessions=0" for the locks alone, or
// "--malloc_arena_max=2"); the load inherits the environment, e.g.
// MALLOC_ARENA_MAX. ZKR_LOAD_ALONE_FAULTS=1 adds the three faults of the
// soak that reach the load (it connects straight to the ensemble), in turn,
// each followed by 25 s of calm: kill_member (kill -9 a member, restart it),
// pause_leader (SIGSTOP the quorum leader for 4 s), lose_quorum (stop 2 of
// the 3 members for 3 s) -- about one fault every 28 s.
TEST(LoadAlone, HeapPerMinute) {
  const char* env = std::getenv("ZKR_LOAD_ALONE");
  int64_t seconds = 0;
  if (env == nullptr || !absl::SimpleAtoi(env, &seconds) || seconds <= 0) {
    GTEST_SKIP() << "set ZKR_LOAD_ALONE=<seconds> to run the load alone";
  }
  const char* binary = std::getenv("ZKR_CHAOS_LOAD");
  ASSERT_TRUE(binary != nullptr && access(binary, X_OK) == 0)
      << "set ZKR_CHAOS_LOAD to the chaos_load executable";
  RunDirectory dir;
  ASSERT_FALSE(dir.path().empty());
  dir.keep();
  testing::ServerOptions server_options;
  server_options.log_file = dir.path() + "/zookeeper.log";
  auto ensemble = ZooKeeperEnsemble::Start(3, server_options);
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  const std::string root = absl::StrCat("/zkr-load-", getpid());
  const std::string heap_log = dir.path() + "/heap.csv";
  std::vector<std::string> argv = {binary,
                                   absl::StrCat("--zk=", (*ensemble)->connect_string()),
                                   absl::StrCat("--root=", root),
                                   absl::StrCat("--ledger=", dir.path(), "/ledger"),
                                   absl::StrCat("--sessions=", kLoadSessions),
                                   absl::StrCat("--locks=", kLoadLocks),
                                   absl::StrCat("--semaphore_sessions=", kLoadSemaphoreSessions),
                                   absl::StrCat("--permits=", kLoadPermits),
                                   absl::StrCat("--candidates=", kLoadCandidates),
                                   absl::StrCat("--heap_log=", heap_log)};
  if (const char* extra = std::getenv("ZKR_LOAD_ARGS")) {
    for (absl::string_view arg : absl::StrSplit(extra, ' ', absl::SkipEmpty())) {
      argv.emplace_back(arg);
    }
  }
  std::printf("load alone for %llds: %s; heap log %s; MALLOC_ARENA_MAX=%s\n",
              static_cast<long long>(seconds), absl::StrJoin(argv, " ").c_str(), heap_log.c_str(),
              std::getenv("MALLOC_ARENA_MAX") ? std::getenv("MALLOC_ARENA_MAX") : "(unset)");
  std::fflush(stdout);
  testing::ServerProcess load(argv, dir.path() + "/load.log");
  ASSERT_TRUE(load.Start().ok());
  const char* faults_env = std::getenv("ZKR_LOAD_ALONE_FAULTS");
  const bool faults = faults_env != nullptr && std::string(faults_env) == "1";
  const absl::Time end = absl::Now() + absl::Seconds(seconds);
  int fault_count = 0;
  absl::BitGen random;
  absl::Time next_fault = absl::Now() + absl::Seconds(25);
  while (absl::Now() < end && load.Running()) {
    absl::SleepFor(absl::Seconds(1));
    if (!faults || absl::Now() < next_fault || absl::Now() + absl::Seconds(10) > end) continue;
    const int member = absl::Uniform(random, 0, (*ensemble)->size());
    switch (fault_count++ % 3) {
      case 0:  // kill_member
        ASSERT_TRUE((*ensemble)->Kill(member).ok());
        ASSERT_TRUE((*ensemble)->Restart(member).ok());
        break;
      case 1: {  // pause_leader
        absl::StatusOr<int> leader = (*ensemble)->Leader();
        if (!leader.ok()) break;
        ASSERT_TRUE((*ensemble)->Pause(*leader).ok());
        absl::SleepFor(absl::Seconds(4));
        ASSERT_TRUE((*ensemble)->Resume(*leader).ok());
        break;
      }
      case 2: {  // lose_quorum
        const int other = (member + 1) % (*ensemble)->size();
        ASSERT_TRUE((*ensemble)->Stop(member).ok());
        ASSERT_TRUE((*ensemble)->Stop(other).ok());
        absl::SleepFor(absl::Seconds(3));
        ASSERT_TRUE((*ensemble)->Restart(member).ok());
        ASSERT_TRUE((*ensemble)->Restart(other).ok());
        break;
      }
    }
    ASSERT_TRUE((*ensemble)->WaitUntilServing(absl::Seconds(90)).ok());
    next_fault = absl::Now() + absl::Seconds(25);
  }
  if (faults) std::printf("faults injected: %d\n", fault_count);
  ASSERT_TRUE(load.Running()) << "the load " << load.exit_description() << "; see "
                              << dir.path();
  ASSERT_TRUE(load.Stop(absl::Seconds(30)).ok());
  EXPECT_EQ(load.exit_code(), 0) << load.exit_description();

  // One row per minute: the memory columns of the minute's last row, the
  // counters' growth over the minute.
  std::ifstream in(heap_log);
  std::string line;
  std::getline(in, line);  // the header
  std::vector<std::vector<int64_t>> rows;
  while (std::getline(in, line)) {
    std::vector<int64_t> row;
    for (absl::string_view field : absl::StrSplit(line, ',')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(field, &v)) break;
      row.push_back(v);
    }
    if (row.size() == 17) rows.push_back(std::move(row));
  }
  ASSERT_FALSE(rows.empty()) << "no rows in " << heap_log;
  std::printf("%3s %8s %8s %8s %7s %7s %3s %7s %7s %7s %7s %6s %4s %4s %7s %6s %5s\n", "min",
              "rss", "in_use", "arena", "mmapped", "free", "ar", "brk", "heaps", "stacks", "anon",
              "file", "thr", "fds", "lockCS", "semCS", "terms");
  const int64_t t0 = rows.front()[0];
  std::vector<int64_t> previous = rows.front();
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool last_of_minute =
        i + 1 == rows.size() || (rows[i + 1][0] - t0) / 60'000'000'000 != (rows[i][0] - t0) / 60'000'000'000;
    if (!last_of_minute) continue;
    const std::vector<int64_t>& r = rows[i];
    std::printf("%3lld %8lld %8lld %8lld %7lld %7lld %3lld %7lld %7lld %7lld %7lld %6lld %4lld "
                "%4lld %7lld %6lld %5lld\n",
                static_cast<long long>((r[0] - t0) / 60'000'000'000), (long long)r[1],
                (long long)r[2], (long long)r[4], (long long)r[3], (long long)r[5],
                (long long)r[6], (long long)r[7], (long long)r[8], (long long)r[9],
                (long long)r[10], (long long)r[11], (long long)r[12], (long long)r[13],
                (long long)(r[14] - previous[14]), (long long)(r[16] - previous[16]),
                (long long)(r[15] - previous[15]));
    previous = r;
  }
  std::printf("(KiB; ar = malloc arenas; brk/heaps/stacks/anon/file: RSS by mapping; "
              "lockCS/semCS/terms: in the minute)\n");
  std::fflush(stdout);
}

}  // namespace
}  // namespace chaos
}  // namespace zkr
