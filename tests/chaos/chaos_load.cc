// chaos_load: the busy system under the chaos nemesis (chaos_test.cc).
//
// Of --sessions sessions, the last --semaphore_sessions take one of the
// --permits permits of the semaphore <root>/semaphore in turn (hold 5-20
// ms), and the others cycle the exclusive locks <root>/lock-0 ..
// <root>/lock-<locks-1> (session i on lock i % locks); --candidates more
// sessions take turns as leader of <root>/election (join, lead ~100 ms,
// leave, join again). All connect straight to the ensemble, so that the
// nemesis's faults hit a busy ensemble rather than an idle one. Every 250 ms
// it appends to the ledger
//
//   LOAD <t_ns> <sections> <terms> <semaphore sections>
//
// the lock critical sections, leadership terms and semaphore critical
// sections completed so far, from which the checker derives the rate
// before, during and after each fault. Each semaphore hold is logged too,
// for the checker's rule (i) (never more untold holders than permits):
//
//   SENTER <holder> <token> <t_ns> <permits>   after the grant
//   SEXIT <holder> <token> <t_ns> <told>       before the release; told = 1
//                                              if the hold was reported
//                                              SUSPENDED/LOST meanwhile
//
// The locks and the election are checked by the chaos workers' rules.
//
// SIGTERM/SIGINT: stop, release, leave, close every session, exit 0.
//
// Usage: chaos_load --zk=HOSTS --root=/path --ledger=FILE [--sessions=64]
//          [--locks=16] [--semaphore_sessions=8] [--permits=4]
//          [--candidates=4] [--session_timeout_ms=3000]
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
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"

DEFINE_string(zk, "", "the ensemble's connect string");
DEFINE_string(root, "", "the path under which the load's locks and election live");
DEFINE_string(ledger, "", "the chaos run's ledger, to which LOAD lines are appended");
DEFINE_int32(sessions, 64, "sessions cycling the locks");
DEFINE_int32(locks, 16, "lock paths the sessions share");
DEFINE_int32(semaphore_sessions, 8, "of --sessions, those taking the semaphore's permits");
DEFINE_int32(permits, 4, "the semaphore's permits");
DEFINE_int32(candidates, 4, "sessions taking turns as leader");
DEFINE_int32(session_timeout_ms, 3000, "the sessions' timeout");

namespace zkr {
namespace chaos {
namespace {

std::atomic<bool> stopping{false};
std::atomic<int64_t> sections{0};
std::atomic<int64_t> terms{0};
std::atomic<int64_t> sem_sections{0};

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

// One session taking one of the semaphore's permits in turn: hold 5-20 ms,
// then pause 10-50 ms; each hold logged (SENTER/SEXIT) with whether it was
// told SUSPENDED/LOST.
void CycleSemaphore(int holder) {
  std::unique_ptr<Session> session = ConnectUntilStopped();
  if (session == nullptr) return;
  // Set by a state change of the current hold; none is delivered once its
  // Release() has returned (lock_options.h), so it is reset before each.
  auto told = std::make_shared<std::atomic<bool>>(false);
  LockOptions options;
  options.on_state_change = [told](LockState state) {
    if (state == LockState::kSuspended || state == LockState::kLost) *told = true;
  };
  auto semaphore =
      Semaphore::Create(*session, FLAGS_root + "/semaphore", FLAGS_permits, options);
  if (!semaphore.ok()) {
    std::fprintf(stderr, "chaos_load: %s\n", semaphore.status().ToString().c_str());
    return;
  }
  absl::BitGen random;
  while (!stopping) {
    *told = false;
    absl::StatusOr<LockGuard> guard = (*semaphore)->Acquire(1, absl::Milliseconds(500));
    if (guard.ok()) {
      const int64_t token = guard->fencing_token();
      AppendLine(FLAGS_ledger,
                 absl::StrCat("SENTER ", holder, " ", token, " ", NowNs(), " ", FLAGS_permits));
      absl::SleepFor(absl::Milliseconds(absl::Uniform(random, 5, 20)));
      const bool was_told = *told || guard->state() != LockState::kHeld;
      AppendLine(FLAGS_ledger,
                 absl::StrCat("SEXIT ", holder, " ", token, " ", NowNs(), " ", was_told ? 1 : 0));
      if (guard->Release().ok()) ++sem_sections;
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
  const int lock_sessions = FLAGS_sessions - FLAGS_semaphore_sessions;
  for (int i = 0; i < lock_sessions; ++i) threads.emplace_back(CycleLock, i);
  for (int i = 0; i < FLAGS_semaphore_sessions; ++i) threads.emplace_back(CycleSemaphore, i);
  for (int i = 0; i < FLAGS_candidates; ++i) threads.emplace_back(TakeTurns, i);
  std::thread reporter([] {
    while (!stopping) {
      AppendLine(FLAGS_ledger, absl::StrCat("LOAD ", NowNs(), " ", sections.load(), " ",
                                            terms.load(), " ", sem_sections.load()));
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
      FLAGS_locks <= 0 || FLAGS_candidates < 0 || FLAGS_session_timeout_ms <= 0 ||
      FLAGS_semaphore_sessions < 0 || FLAGS_semaphore_sessions > FLAGS_sessions ||
      FLAGS_permits <= 0) {
    std::fprintf(stderr,
                 "chaos_load: --zk, --root and --ledger are required; --sessions and "
                 "--candidates >= 0, 0 <= --semaphore_sessions <= --sessions, --locks, "
                 "--permits and --session_timeout_ms > 0\n");
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
