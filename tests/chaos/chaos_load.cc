// chaos_load: the busy system under the chaos nemesis (chaos_test.cc).
//
// --sessions sessions cycle the exclusive locks <root>/lock-0 ..
// <root>/lock-<locks-1> (session i on lock i % locks), and --candidates more
// sessions take turns as leader of <root>/election (join, lead ~100 ms,
// leave, join again), all connected straight to the ensemble, so that the
// nemesis's faults hit a busy ensemble rather than an idle one. Every 250 ms
// it appends to the ledger
//
//   LOAD <t_ns> <sections> <terms>
//
// the critical sections and leadership terms completed so far, from which
// the checker derives the rate before, during and after each fault. It
// checks nothing itself: the chaos workers are the ones checked.
//
// SIGTERM/SIGINT: stop, release, leave, close every session, exit 0.
//
// Usage: chaos_load --zk=HOSTS --root=/path --ledger=FILE [--sessions=64]
//          [--locks=16] [--candidates=4] [--session_timeout_ms=3000]
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gflags/gflags.h"
#include "tests/chaos/ledger.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/session.h"

DEFINE_string(zk, "", "the ensemble's connect string");
DEFINE_string(root, "", "the path under which the load's locks and election live");
DEFINE_string(ledger, "", "the chaos run's ledger, to which LOAD lines are appended");
DEFINE_int32(sessions, 64, "sessions cycling the locks");
DEFINE_int32(locks, 16, "lock paths the sessions share");
DEFINE_int32(candidates, 4, "sessions taking turns as leader");
DEFINE_int32(session_timeout_ms, 3000, "the sessions' timeout");

namespace zkr {
namespace chaos {
namespace {

std::atomic<bool> stopping{false};
std::atomic<int64_t> sections{0};
std::atomic<int64_t> terms{0};

// A connected session, retrying while the ensemble is unavailable; null once
// stopping.
std::unique_ptr<Session> ConnectUntilStopped() {
  SessionOptions options;
  options.connect = FLAGS_zk;
  options.session_timeout = absl::Milliseconds(FLAGS_session_timeout_ms);
  options.connect_timeout = absl::Seconds(10);
  options.log_level = ClientLogLevel::kError;
  while (!stopping) {
    absl::StatusOr<std::unique_ptr<Session>> session = Session::Connect(options);
    if (session.ok()) return std::move(*session);
    absl::SleepFor(absl::Milliseconds(200));
  }
  return nullptr;
}

// One session cycling one lock: hold ~1 ms, then pause 10-50 ms.
void CycleLock(int index) {
  std::unique_ptr<Session> session = ConnectUntilStopped();
  if (session == nullptr) return;
  auto lock = ExclusiveLock::Create(*session, absl::StrCat(FLAGS_root, "/lock-", index % FLAGS_locks));
  if (!lock.ok()) {
    std::fprintf(stderr, "chaos_load: %s\n", lock.status().ToString().c_str());
    return;
  }
  absl::BitGen random;
  while (!stopping) {
    absl::StatusOr<LockGuard> guard = (*lock)->Acquire(absl::Milliseconds(500));
    if (guard.ok()) {
      absl::SleepFor(absl::Milliseconds(1));
      if (guard->Release().ok()) ++sections;
    } else if (!absl::IsDeadlineExceeded(guard.status())) {
      absl::SleepFor(absl::Milliseconds(50));  // the ensemble is down: back off
    }
    absl::SleepFor(absl::Milliseconds(absl::Uniform(random, 10, 50)));
  }
}

// One candidate taking turns as leader: join, lead ~100 ms, leave.
void TakeTurns(int index) {
  std::unique_ptr<Session> session = ConnectUntilStopped();
  if (session == nullptr) return;
  ElectionOptions options;
  options.id = absl::StrCat("load-", index);
  auto election = LeaderElection::Create(*session, FLAGS_root + "/election", options);
  if (!election.ok()) {
    std::fprintf(stderr, "chaos_load: %s\n", election.status().ToString().c_str());
    return;
  }
  while (!stopping) {
    if (!(*election)->Join().ok()) {
      absl::SleepFor(absl::Milliseconds(50));
      continue;
    }
    absl::Status led = absl::DeadlineExceededError("not yet");
    while (!stopping && absl::IsDeadlineExceeded(led)) {
      led = (*election)->AwaitLeadership(absl::Milliseconds(500));
    }
    if (led.ok()) {
      absl::SleepFor(absl::Milliseconds(100));
      ++terms;
    } else if (!stopping) {
      absl::SleepFor(absl::Milliseconds(50));  // the ensemble is down: back off
    }
    (void)(*election)->Leave();
  }
}

int Run(const sigset_t& signals) {
  std::vector<std::thread> threads;
  for (int i = 0; i < FLAGS_sessions; ++i) threads.emplace_back(CycleLock, i);
  for (int i = 0; i < FLAGS_candidates; ++i) threads.emplace_back(TakeTurns, i);
  std::thread reporter([] {
    while (!stopping) {
      AppendLine(FLAGS_ledger, absl::StrCat("LOAD ", NowNs(), " ", sections.load(), " ", terms.load()));
      absl::SleepFor(absl::Milliseconds(250));
    }
  });
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  stopping = true;
  for (std::thread& thread : threads) thread.join();
  reporter.join();
  return 0;
}

}  // namespace
}  // namespace chaos
}  // namespace zkr

int main(int argc, char** argv) {
  gflags::SetUsageMessage("the chaos suite's background load (see chaos_load.cc)");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_zk.empty() || FLAGS_root.empty() || FLAGS_ledger.empty() || FLAGS_sessions < 0 ||
      FLAGS_locks <= 0 || FLAGS_candidates < 0 || FLAGS_session_timeout_ms <= 0) {
    std::fprintf(stderr,
                 "chaos_load: --zk, --root and --ledger are required; --sessions and "
                 "--candidates >= 0, --locks and --session_timeout_ms > 0\n");
    return 2;
  }
  // Block the stop signals in every thread (threads inherit the mask); the
  // main thread takes them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return zkr::chaos::Run(signals);
}
