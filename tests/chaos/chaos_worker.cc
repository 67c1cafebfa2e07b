// chaos_worker: one participant of the fault-injection suite (chaos_test.cc).
//
// A separate PROCESS with its own ZooKeeper session, so that the nemesis can
// kill -9 it, SIGSTOP it, or expire its session. It loops: take the read or
// write lock on --path, and inside the critical section record into a shared
// ledger (one write(2) per line on an O_APPEND file, so lines of different
// processes never interleave):
//
//   ENTER   <id> <R|W> <token> <t_ns>
//   ACCEPT  <id> <R|W> <token> <seq> <t_ns> held=<0|1> lease_ms=<n>
//   REFUSE  <id> <R|W> <token> <bar> <t_ns> held=<0|1> lease_ms=<n>
//                          fenced access allowed / refused; held and lease_ms:
//                          what the guard said just before (held(), and
//                          valid_until() - now)
//   SUSPECT <id> <t_ns> lock|leader <why>          the library told us the
//                                                  hold/leadership may be gone
//   EXIT    <id> <R|W> <token> <t_ns>      t_ns: when the verify was sent, if it
//                                          passed (see CriticalSection)
//   AFAIL   <id> <R|W> <t_ns> <status code>        an acquisition failed
//   LEADER  <id> <epoch> <t_ns>   /  UNLEAD <id> <epoch> <t_ns>   (--election)
//   OBSERVE <id> <epoch> <taken_over 0|1> <t_ns>  (--election) this worker's
//                          LeaderObserver reported a new answer (epoch 0:
//                          nobody campaigns)
//   MEMBERS <id> <n> <t_ns>  (--election) its GroupWatch reported n members of
//                          "<election>-members", which every worker joins
//   LACCEPT <id> <epoch> <seq> <t_ns> current=1 /   the leader's fenced write,
//   LREFUSE <id> <epoch> <bar> <t_ns> current=1     made while IsCurrent() said
//   so START <id> <pid> <t_ns> / SESSION <id> <state> <generation> <t_ns> /
//   HELD_AGAIN <id> <t_ns> / STOP <id> <t_ns> <counters>
//   STEP    <id> <t_ns> <step_s> <lease_before_ms> <lease_after_ms> renewed=<0|1>
//           elapsed_ms=<n>
//                          the clock nemesis stepped this worker's wall clock
//                          (the library's Clock) by step_s; the session's
//                          lease left (valid_until() - Now() on that clock)
//                          just before and just after the step; renewed=1 if
//                          a server answer renewed the lease between the reads;
//                          elapsed_ms: how long the reads took, rounded up
//
// The fenced resource is a local file holding the highest write and read
// tokens accepted so far: under flock(2) a writer is accepted iff its token
// >= both (and then raises the write bar), a reader iff its token >= the
// highest write token (and then raises the read bar).
// The critical section is: ENTER, hold a few ms, fenced access, verify, EXIT.
// Doing the fenced access after the hold is what makes a holder paused by
// SIGSTOP (beyond its session timeout) wake up and try to use a stale token.
// "Verify" is the holder asking the library before it leaves the critical
// section whether the hold still stands (guard state, session generation and a
// server round trip: a GuardedMulti on its own node); if not, it records
// SUSPECT. So a holder is "told" during its interval when either the
// on_state_change callback reported SUSPENDED/LOST or its own check failed.
// A leader's term (LeaderSelector) is the same: LEADER, fenced writes with its
// epoch every 10-30 ms while LeadershipContext::IsCurrent() (also right after
// waking from a pause), verify (IsCurrent, same generation, CurrentLeader() is
// this candidate), UNLEAD.
//
// The session id and password (hex) are written to <ledger>.session.<id> on
// every new generation (and the server on every reconnect) so the nemesis can
// force-expire the session and find the member the worker is connected to.
//
// kClockForward / kClockBack (real-time signals, parameters.h): step the wall
// clock of the library's Clock an hour forward / back, and log STEP.
// SIGTERM/SIGINT: stop cleanly (cancel a pending acquisition, finish the
// critical section, release, leave the election, close the session), exit 0.
//
// The ledger and resource files: chaos_worker_files.h; the flags:
// chaos_worker_flags.h.
//
// Usage: chaos_worker --zk=HOSTS --path=/lock --ledger=FILE --resource=FILE
//          --id=N [--mode=mixed|write] [--election=/path]
//          [--session_timeout=3s] [--run_for=inf]
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "src/session_core.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"
#include "src/session_access.h"
#include "tests/chaos/chaos_worker_files.h"
#include "tests/chaos/chaos_worker_flags.h"
#include "tests/chaos/parameters.h"
#include "tests/support/fake_clock.h"

namespace zkr {
namespace chaos {
namespace {

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }

// ---- the worker
// --------------------------------------------------------------------

class Worker {
 public:
  Worker(Flags flags, const LedgerFile& ledger)
      : flags_(std::move(flags)), ledger_(ledger) {}

  int Run(const sigset_t& signals);

 private:
  void Log(absl::string_view what) { ledger_.Append(std::string(what)); }
  // Rewrites <ledger>.session.<id>: "<session id hex> <password hex> <server>
  // <generation>".
  void WriteSessionFile();
  // One critical section on a granted hold.
  void CriticalSection(LockGuard& guard, bool write);
  // The leader's term (LeaderSelector's take_leadership).
  void Lead(LeadershipContext& context);
  // Fenced access with `token` on `file`; `update` for a write.
  // `belief` is appended to the line: what the library said just before.
  void Fence(const std::string& file, bool leader, bool write, int64_t token,
             const std::string& belief);
  // Steps the wall clock by `step` and logs STEP (on the signal thread).
  void StepClock(absl::Duration step);
  // The session's lease left, on the library's clock, in ms.
  int64_t LeaseLeftMs(absl::Time valid_until) const {
    return absl::ToInt64Milliseconds(valid_until - clock_->Now());
  }

  const Flags flags_;
  const LedgerFile& ledger_;
  const std::string tag_ = absl::StrCat(flags_.id);
  std::atomic<bool> stop_{false};
  // The library's clock: the system's, with a wall clock the nemesis steps.
  const std::shared_ptr<testing::FakeClock> clock_ = std::make_shared<testing::FakeClock>();
  std::unique_ptr<Session> session_;
  // session_ once connected, for the signal thread (which is joined before
  // session_ goes).
  std::atomic<Session*> live_session_{nullptr};
  absl::Mutex lock_mu_;  // guards the pointer lock_ (for the signal thread)
  std::unique_ptr<SharedLock> lock_;
  std::unique_ptr<LeaderSelector> selector_;
  std::unique_ptr<LeaderObserver> observer_;
  std::unique_ptr<GroupMember> member_;
  std::unique_ptr<GroupWatch> members_watch_;
  std::string candidate_id_;
  absl::Mutex file_mu_;  // serialises session-file rewrites
  absl::BitGen random_;  // main thread only
  absl::Mutex leader_random_mu_;
  absl::BitGen leader_random_ ABSL_GUARDED_BY(leader_random_mu_);
  std::atomic<int64_t> acquired_{0}, failed_{0}, terms_{0}, refused_{0};
};

void Worker::WriteSessionFile() {
  internal::SessionCore::Handle handle = internal::CoreOf(*session_)->current();
  if (handle.client == nullptr) return;
  const std::string text = absl::StrCat(
      absl::Hex(handle.client->session_id()), " ",
      absl::BytesToHexString(handle.client->password()), " ",
      handle.client->current_server(), " ", handle.generation, "\n");
  const std::string file = absl::StrCat(flags_.ledger, ".session.", flags_.id);
  const std::string temp = absl::StrCat(file, ".tmp");
  absl::MutexLock lock(&file_mu_);
  FILE* out = std::fopen(temp.c_str(), "w");
  if (out == nullptr) return;
  std::fputs(text.c_str(), out);
  std::fclose(out);
  std::rename(temp.c_str(), file.c_str());
}

void Worker::Fence(const std::string& file, bool leader, bool write,
                   int64_t token, const std::string& belief) {
  ResourceFile resource(file);
  if (!resource.ok()) {
    Log(absl::StrCat("ERROR ", tag_, " ", NowNs(), " cannot open ", file, ": ",
                     std::strerror(errno)));
    return;
  }
  const char* mode = write ? "W" : "R";
  // A write must carry a token no lower than any write or read accepted
  // before (so a stale writer cannot slip in under readers); a read no lower
  // than any accepted write. The ledger line is written while the flock is
  // held, so ledger time order is acceptance order.
  const int64_t bar =
      write ? std::max(resource.highest_write(), resource.highest_read())
            : resource.highest_write();
  if (token >= bar) {
    if (write) {
      resource.Store(token, resource.highest_read(), resource.seq() + 1);
    } else if (token > resource.highest_read()) {
      resource.Store(resource.highest_write(), token, resource.seq());
    }
    Log(leader ? absl::StrCat("LACCEPT ", tag_, " ", token, " ", resource.seq(),
                              " ", NowNs(), belief)
               : absl::StrCat("ACCEPT ", tag_, " ", mode, " ", token, " ",
                              resource.seq(), " ", NowNs(), belief));
  } else {
    ++refused_;
    Log(leader ? absl::StrCat("LREFUSE ", tag_, " ", token, " ", bar, " ",
                              NowNs(), belief)
               : absl::StrCat("REFUSE ", tag_, " ", mode, " ", token, " ", bar,
                              " ", NowNs(), belief));
  }
}

void Worker::CriticalSection(LockGuard& guard, bool write) {
  const char* mode = write ? "W" : "R";
  const int64_t token = guard.fencing_token();
  const uint64_t generation = session_->generation();
  Log(absl::StrCat("ENTER ", tag_, " ", mode, " ", token, " ", NowNs()));
  absl::SleepFor(absl::Milliseconds(absl::Uniform(random_, 5, 25)));
  // What the library says right before the access: whether the hold is
  // still held and how much of its lease is left (recorded to show that after
  // a process pause only the fence, not the lease clock, stops a stale holder).
  const bool held = guard.held();
  const int64_t lease_ms = LeaseLeftMs(guard.valid_until());
  Fence(flags_.resource, /*leader=*/false, write, token,
        absl::StrCat(" held=", held ? 1 : 0, " lease_ms=", lease_ms));
  // Before leaving: does the library still vouch for the hold? A verify that
  // passes proves the hold stood when it was sent, and nothing is done with
  // the resource after it: the interval ends then. (Ending it when the EXIT
  // line is written would count a pause between the verify and the write —
  // the nemesis pauses holders — as holding on while untold.)
  const int64_t verified_at = NowNs();
  std::string why;
  if (!guard.held()) {
    why = absl::StrCat("verify:state=", LockStateName(guard.state()));
  } else if (session_->generation() != generation) {
    why = "verify:new-generation";
  } else {
    absl::StatusOr<std::vector<OpResult>> check = guard.GuardedMulti({});
    if (!check.ok()) {
      why = absl::StrCat("verify:",
                         absl::StatusCodeToString(check.status().code()));
    }
  }
  if (!why.empty())
    Log(absl::StrCat("SUSPECT ", tag_, " ", NowNs(), " lock ", why));
  Log(absl::StrCat("EXIT ", tag_, " ", mode, " ", token, " ",
                   why.empty() ? verified_at : NowNs()));
}

void Worker::Lead(LeadershipContext& context) {
  const int64_t epoch = context.epoch();
  const uint64_t generation = session_->generation();
  ++terms_;
  Log(absl::StrCat("LEADER ", tag_, " ", epoch, " ", NowNs()));
  absl::Duration term, pace;
  {
    absl::MutexLock lock(&leader_random_mu_);
    term = absl::Milliseconds(absl::Uniform(leader_random_, 100, 400));
  }
  const absl::Time end = absl::Now() + term;
  // Act as leader (a fenced write with the epoch), wait a little, and act
  // again while the library says leadership is current — also once more
  // right after a pause, as a real leader would.
  const std::string leader_resource = flags_.resource + ".leader";
  Fence(leader_resource, /*leader=*/true, /*write=*/true, epoch, " current=1");
  for (;;) {
    {
      absl::MutexLock lock(&leader_random_mu_);
      pace = absl::Milliseconds(absl::Uniform(leader_random_, 10, 30));
    }
    context.WaitWhileCurrent(pace);
    if (stop_ || !context.IsCurrent()) break;
    Fence(leader_resource, /*leader=*/true, /*write=*/true, epoch,
          " current=1");
    if (absl::Now() >= end) break;
  }
  const int64_t verified_at = NowNs();  // as in CriticalSection
  std::string why;
  if (!context.IsCurrent()) {
    why = "verify:not-current";
  } else if (session_->generation() != generation) {
    why = "verify:new-generation";
  } else {
    absl::StatusOr<std::optional<std::string>> leader =
        selector_->election().CurrentLeader();
    if (!leader.ok()) {
      why = absl::StrCat("verify:",
                         absl::StatusCodeToString(leader.status().code()));
    } else if (!leader->has_value() || **leader != candidate_id_) {
      why = absl::StrCat("verify:leader=", leader->value_or("none"));
    }
  }
  if (!why.empty())
    Log(absl::StrCat("SUSPECT ", tag_, " ", NowNs(), " leader ", why));
  Log(absl::StrCat("UNLEAD ", tag_, " ", epoch, " ", why.empty() ? verified_at : NowNs()));
}

void Worker::StepClock(absl::Duration step) {
  Session* session = live_session_.load();
  if (session == nullptr) {
    clock_->StepWall(step);
    return;
  }
  // The send time of the latest answered request: if it moves between the
  // two reads, an answer renewed the lease meanwhile (it may then grow).
  auto answered = [session] {
    internal::SessionCore::Handle handle = internal::CoreOf(*session)->current();
    return handle.client != nullptr ? handle.client->last_response() : absl::ZeroDuration();
  };
  const absl::Duration start = clock_->Monotonic();
  const absl::Duration answered_before = answered();
  const int64_t before_ms = LeaseLeftMs(session->valid_until());
  clock_->StepWall(step);
  const int64_t after_ms = LeaseLeftMs(session->valid_until());
  const bool renewed = answered() != answered_before;
  // The lease left shrinks by the time the reads took (a preemption
  // included), rounded up.
  const int64_t elapsed_ms = absl::ToInt64Milliseconds(clock_->Monotonic() - start) + 1;
  Log(absl::StrCat("STEP ", tag_, " ", NowNs(), " ", absl::ToInt64Seconds(step), " ", before_ms,
                   " ", after_ms, " renewed=", renewed ? 1 : 0, " elapsed_ms=", elapsed_ms));
}

int Worker::Run(const sigset_t& signals) {
  Log(absl::StrCat("START ", tag_, " ", getpid(), " ", NowNs()));
  SessionOptions options;
  options.connect = flags_.zk;
  options.session_timeout = flags_.session_timeout;
  options.connect_timeout = absl::Seconds(10);
  options.log_level = ClientLogLevel::kError;
  options.clock = clock_;
  // Connect, retrying while the ensemble is unavailable, until stopped.
  std::atomic<bool> signalled{false};
  std::atomic<bool> loop_done{false};
  // Handles SIGTERM/SIGINT: sets stop_, then keeps cancelling the lock's
  // pending acquisition until the main loop is done.
  // Also steps the clock on kClockForward / kClockBack.
  std::thread signal_thread([&] {
    int signal_number = 0;
    for (;;) {
      sigwait(&signals, &signal_number);
      if (signal_number == kClockForward) {
        StepClock(kClockStep);
      } else if (signal_number == kClockBack) {
        StepClock(-kClockStep);
      } else {
        break;
      }
    }
    signalled = true;
    stop_ = true;
    while (!loop_done) {
      {
        absl::MutexLock lock(&lock_mu_);
        if (lock_ != nullptr) lock_->Cancel();
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  });
  auto finish = [&](int code) {
    loop_done = true;
    if (!signalled) kill(getpid(), SIGTERM);  // wakes the signal thread
    signal_thread.join();
    return code;
  };

  while (!stop_) {
    absl::StatusOr<std::unique_ptr<Session>> session =
        Session::Connect(options);
    if (session.ok()) {
      session_ = std::move(*session);
      live_session_ = session_.get();
      break;
    }
    Log(absl::StrCat("ERROR ", tag_, " ", NowNs(), " connect: ",
                     absl::StatusCodeToString(session.status().code())));
    absl::SleepFor(absl::Milliseconds(200));
  }
  if (session_ == nullptr) {
    Log(absl::StrCat("STOP ", tag_, " ", NowNs(), " never-connected"));
    return finish(0);
  }
  session_->AddStateListener([this](SessionState state, uint64_t generation) {
    Log(absl::StrCat("SESSION ", tag_, " ", SessionStateName(state), " ",
                     generation, " ", NowNs()));
    if (state == SessionState::kConnected ||
        state == SessionState::kReconnected) {
      WriteSessionFile();
    }
  });
  WriteSessionFile();

  LockOptions lock_options;
  lock_options.purpose = absl::StrCat("chaos worker ", flags_.id);
  lock_options.on_state_change = [this](LockState state) {
    if (state == LockState::kSuspended || state == LockState::kLost) {
      Log(absl::StrCat("SUSPECT ", tag_, " ", NowNs(), " lock ",
                       LockStateName(state)));
    } else if (state == LockState::kHeld) {
      Log(absl::StrCat("HELD_AGAIN ", tag_, " ", NowNs()));
    }
  };
  {
    absl::StatusOr<std::unique_ptr<SharedLock>> lock =
        SharedLock::Create(*session_, flags_.path, lock_options);
    if (!lock.ok()) {
      std::fprintf(stderr, "chaos_worker %d: %s\n", flags_.id,
                   lock.status().ToString().c_str());
      return finish(3);
    }
    absl::MutexLock l(&lock_mu_);
    lock_ = std::move(*lock);
  }

  if (!flags_.election.empty()) {
    candidate_id_ = absl::StrCat("w", flags_.id, "_", getpid());
    LeaderSelector::Options selector_options;
    selector_options.election.id = candidate_id_;
    selector_options.election.on_change = [this](Leadership leadership) {
      if (leadership != Leadership::kLeader) {
        Log(absl::StrCat("SUSPECT ", tag_, " ", NowNs(), " leader ",
                         LeadershipName(leadership)));
      }
    };
    selector_options.requeue = true;
    absl::StatusOr<std::unique_ptr<LeaderSelector>> selector =
        LeaderSelector::Create(
            *session_, flags_.election,
            [this](LeadershipContext& context) { Lead(context); },
            selector_options);
    if (!selector.ok()) {
      std::fprintf(stderr, "chaos_worker %d: %s\n", flags_.id,
                   selector.status().ToString().c_str());
      return finish(3);
    }
    selector_ = std::move(*selector);
    absl::Status started = selector_->Start();
    if (!started.ok()) {
      std::fprintf(stderr, "chaos_worker %d: %s\n", flags_.id,
                   started.ToString().c_str());
      return finish(3);
    }
    // Followers too: who leads (checked: never a leader deposed for longer
    // than a session timeout), and the group every worker is a member of.
    auto observer = LeaderObserver::Create(
        *session_, flags_.election, [this](const std::optional<LeaderInfo>& leader) {
          Log(absl::StrCat("OBSERVE ", tag_, " ", leader ? leader->epoch : 0, " ",
                           leader && leader->taken_over ? 1 : 0, " ", NowNs()));
        });
    const std::string group = flags_.election + "-members";
    GroupOptions member_options;
    member_options.id = candidate_id_;
    auto member = GroupMember::Create(*session_, group, member_options);
    auto members_watch =
        GroupWatch::Create(*session_, group, [this](const std::vector<GroupMemberInfo>& members) {
          Log(absl::StrCat("MEMBERS ", tag_, " ", members.size(), " ", NowNs()));
        });
    if (!observer.ok() || !member.ok() || !members_watch.ok()) return finish(3);
    observer_ = std::move(*observer);
    member_ = std::move(*member);
    members_watch_ = std::move(*members_watch);
    (void)member_->Join(flags_.session_timeout);  // a failed join is a member less
  }

  const absl::Time end = absl::Now() + flags_.run_for;
  const absl::Duration acquire_timeout = 2 * flags_.session_timeout;
  while (!stop_ && absl::Now() < end) {
    const bool write = flags_.mode == "write" || absl::Bernoulli(random_, 0.7);
    absl::StatusOr<LockGuard> guard = write
                                          ? lock_->AcquireWrite(acquire_timeout)
                                          : lock_->AcquireRead(acquire_timeout);
    if (!guard.ok()) {
      ++failed_;
      Log(absl::StrCat("AFAIL ", tag_, " ", write ? "W" : "R", " ", NowNs(),
                       " ", absl::StatusCodeToString(guard.status().code())));
      // The whole status in the worker's log: an unexpected code (INTERNAL
      // once in the hour's soak) needs its message to be understood.
      if (!absl::IsDeadlineExceeded(guard.status())) {
        std::fprintf(stderr, "acquisition failed: %s\n", guard.status().ToString().c_str());
      }
      if (!absl::IsDeadlineExceeded(guard.status()) && !stop_) {
        absl::SleepFor(
            absl::Milliseconds(absl::Uniform(random_, 20, 100)));  // backoff
      }
      continue;
    }
    ++acquired_;
    CriticalSection(*guard, write);
    absl::Status released = guard->Release();
    if (!released.ok()) {
      Log(absl::StrCat("RELEASE_ERROR ", tag_, " ", NowNs(), " ",
                       absl::StatusCodeToString(released.code())));
    }
    absl::SleepFor(absl::Milliseconds(absl::Uniform(random_, 0, 5)));
  }

  if (selector_ != nullptr) selector_->Stop();
  const int code = finish(0);
  selector_.reset();
  members_watch_.reset();
  member_.reset();  // leaves
  observer_.reset();
  {
    absl::MutexLock l(&lock_mu_);
    lock_.reset();
  }
  session_->Close();
  Log(absl::StrCat("STOP ", tag_, " ", NowNs(), " acquired=", acquired_.load(),
                   " failed=", failed_.load(), " terms=", terms_.load(),
                   " refused=", refused_.load()));
  session_.reset();
  return code;
}

}  // namespace
}  // namespace chaos
}  // namespace zkr

int main(int argc, char** argv) {
  // A crash leaves its stack, symbolized, in the worker's log (the nemesis
  // reports the worker "killed by signal N by itself").
  // (Under AddressSanitizer its own handler reports a crash better: the whole
  // stack, through its interceptors.)
  absl::InitializeSymbolizer(argv[0]);
#ifndef __SANITIZE_ADDRESS__
  absl::InstallFailureSignalHandler(absl::FailureSignalHandlerOptions());
#endif
  // Block the stop and clock signals in every thread (threads inherit the mask); one
  // thread takes them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, zkr::chaos::kClockForward);
  sigaddset(&signals, zkr::chaos::kClockBack);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::string error;
  std::optional<zkr::chaos::Flags> flags =
      zkr::chaos::ParseFlags(argc, argv, &error);
  if (!flags.has_value()) return zkr::chaos::Usage(error);
  zkr::chaos::LedgerFile ledger(flags->ledger);
  if (!ledger.ok()) {
    return zkr::chaos::Usage(absl::StrCat("cannot open ledger ", flags->ledger,
                                          ": ", std::strerror(errno)));
  }
  zkr::chaos::Worker worker(std::move(*flags), ledger);
  return worker.Run(signals);
}
