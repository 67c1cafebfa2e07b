// The watch limits at their edges (issue 36, an independent review): a session never holds
// watches whose SetWatches packet would exceed max_request_bytes; queue
// participants reserve their watches' bytes at start and are refused at
// once (ResourceExhausted, nothing created) when they would not fit; every
// admitted wait survives a reset and is granted once its holder goes.
#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/packet_limit_server.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/lock_options.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/tcp_proxy.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace {

using ::testing::Contains;
using ::testing::Not;

size_t FillWatches(Session& session, const std::string& under);

// ---------------------------------------------------------------------------
// On the shared server, sessions with a small max_request_bytes (4 KiB).
class WatchLimitEdgesTest : public testing::ZkTest {
 protected:
  static constexpr size_t kSmall = 4096;
  std::unique_ptr<Session> Small() {
    SessionOptions options = Options();
    options.max_request_bytes = kSmall;
    return NewSession(options);
  }
  // Deletes everything under the test's root and makes the root again.
  void CleanRoot() {
    ASSERT_TRUE(testing::DeleteRecursively(admin(), root()).ok());
    ASSERT_TRUE(admin().Create(root(), "", CreateMode::kPersistent).ok());
  }
  // A lock directory held by the admin (a raw write node).
  std::string HeldDir(const std::string& name) {
    const std::string dir = Path(name);
    EXPECT_TRUE(admin().CreateParents(dir + "/x", false).ok());
    auto c = admin().Create(dir, "", CreateMode::kPersistent);
    EXPECT_TRUE(c.ok() || absl::IsAlreadyExists(c.status())) << c.status();
    auto h = admin().Create(dir + "/holder_1_0-W-", "", CreateMode::kEphemeralSequential);
    EXPECT_TRUE(h.ok()) << h.status();
    return dir;
  }
  // How many lock waits `session` admits behind held directories
  // `<prefix>-<i>` before the first refusal. Every wait is cancelled and its
  // lock destroyed before returning.
  size_t CountAdmittedWaits(Session& session, const std::string& prefix) {
    std::vector<std::unique_ptr<ExclusiveLock>> locks;
    std::vector<std::future<absl::StatusOr<LockGuard>>> futures;
    size_t admitted = 0;
    for (int i = 0; i < 200; ++i) {
      const std::string dir = HeldDir(absl::StrCat(prefix, "-", i));
      auto lock = ExclusiveLock::Create(session, dir);
      EXPECT_TRUE(lock.ok()) << lock.status();
      if (!lock.ok()) break;
      auto future = (*lock)->AcquireFuture();
      if (future.wait_for(std::chrono::milliseconds(1500)) == std::future_status::ready) {
        absl::StatusOr<LockGuard> got = future.get();
        EXPECT_TRUE(absl::IsResourceExhausted(got.status())) << got.status();
        break;
      }
      ++admitted;
      futures.push_back(std::move(future));
      locks.push_back(std::move(*lock));
    }
    for (auto& lock : locks) lock->Cancel();
    for (auto& future : futures) {
      EXPECT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    }
    futures.clear();
    locks.clear();
    return admitted;
  }
};

// leaks in the reservation across acquire/release, timeouts,
// Cancel, destroying the lock mid-wait, TryAcquire, moved guards, and a
// session expiry. A leak shows as fewer waits admitted later.
TEST_F(WatchLimitEdgesTest, NoReservationLeakAfterCycles) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  const size_t at_start = CountAdmittedWaits(*session, "a");
  std::cout << "admitted at start: " << at_start << "\n";
  ASSERT_GT(at_start, 2u);

  const std::string held = HeldDir("held");
  const std::string free_dir = Path("free");
  for (int cycle = 0; cycle < 10; ++cycle) {
    {  // timeout
      auto lock = ExclusiveLock::Create(*session, held);
      ASSERT_TRUE(lock.ok());
      auto got = (*lock)->Acquire(absl::Milliseconds(100));
      EXPECT_TRUE(absl::IsDeadlineExceeded(got.status())) << got.status();
    }
    {  // TryAcquire on a held lock
      auto lock = ExclusiveLock::Create(*session, held);
      ASSERT_TRUE(lock.ok());
      auto got = (*lock)->TryAcquire();
      EXPECT_FALSE(got.ok());
    }
    {  // Cancel mid-wait
      auto lock = ExclusiveLock::Create(*session, held);
      ASSERT_TRUE(lock.ok());
      auto future = (*lock)->AcquireFuture();
      absl::SleepFor(absl::Milliseconds(50));
      (*lock)->Cancel();
      EXPECT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    }
    {  // the lock destroyed mid-wait
      std::promise<absl::Status> p;
      auto f = p.get_future();
      auto lock = ExclusiveLock::Create(*session, held);
      ASSERT_TRUE(lock.ok());
      (*lock)->AcquireAsync([&p](absl::StatusOr<LockGuard> g) { p.set_value(g.status()); });
      absl::SleepFor(absl::Milliseconds(50));
      lock->reset();
      EXPECT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    }
    {  // acquire a free lock, move the guard around, release; the guard
       // outlives the lock object
      LockGuard kept;
      {
        auto lock = ExclusiveLock::Create(*session, free_dir);
        ASSERT_TRUE(lock.ok());
        auto got = (*lock)->Acquire(absl::Seconds(10));
        ASSERT_TRUE(got.ok()) << got.status();
        LockGuard moved = std::move(*got);
        kept = std::move(moved);
      }
      EXPECT_TRUE(kept.held());
      EXPECT_TRUE(kept.Release().ok());
    }
  }
  absl::SleepFor(absl::Seconds(1));
  const size_t after_cycles = CountAdmittedWaits(*session, "b");
  std::cout << "admitted after cycles: " << after_cycles << "\n";
  EXPECT_EQ(after_cycles, at_start) << "reservation leaked across cycles";

  // Waits pending across a session expiry, then a new generation.
  {
    testing::StateRecorder states(*session);
    const uint64_t gen = session->generation();
    std::vector<std::unique_ptr<ExclusiveLock>> locks;
    std::vector<std::future<absl::StatusOr<LockGuard>>> futures;
    for (int i = 0; i < 3; ++i) {
      auto lock = ExclusiveLock::Create(*session, held);
      ASSERT_TRUE(lock.ok());
      futures.push_back((*lock)->AcquireFuture());
      locks.push_back(std::move(*lock));
    }
    absl::SleepFor(absl::Milliseconds(300));
    ASSERT_TRUE(testing::ExpireSession(*session).ok());
    ASSERT_TRUE(states.WaitFor(SessionState::kConnected, gen + 1, absl::Seconds(30)).has_value());
    for (auto& lock : locks) lock->Cancel();
    for (auto& f : futures) EXPECT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    futures.clear();
    locks.clear();
  }
  absl::SleepFor(absl::Seconds(1));
  const size_t after_expiry = CountAdmittedWaits(*session, "c");
  std::cout << "admitted after expiry: " << after_expiry << "\n";
  EXPECT_EQ(after_expiry, at_start) << "reservation leaked across an expiry";
  session->Close();
  CleanRoot();
}

// A cancelled wait, once its Cancelled outcome is delivered and its lock
// object destroyed, must not keep its reservation: a new wait right after is
// admitted (else: a spurious ResourceExhausted).
TEST_F(WatchLimitEdgesTest, ReservationFreedWhenCancelReported) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  std::vector<std::unique_ptr<ExclusiveLock>> locks;
  std::vector<std::future<absl::StatusOr<LockGuard>>> futures;
  int i = 0;
  for (; i < 200; ++i) {  // fill the reservation with waits
    auto lock = ExclusiveLock::Create(*session, HeldDir(absl::StrCat("d", i)));
    ASSERT_TRUE(lock.ok());
    auto future = (*lock)->AcquireFuture();
    if (future.wait_for(std::chrono::milliseconds(1500)) == std::future_status::ready) {
      auto got = future.get();
      ASSERT_TRUE(absl::IsResourceExhausted(got.status())) << got.status();
      break;
    }
    futures.push_back(std::move(future));
    locks.push_back(std::move(*lock));
  }
  std::cout << locks.size() << " waits admitted\n";
  ASSERT_GT(locks.size(), 1u);
  // Cancel the last; its outcome delivered; its lock destroyed.
  locks.back()->Cancel();
  ASSERT_EQ(futures.back().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto cancelled = futures.back().get();
  std::cout << "cancelled wait: " << cancelled.status() << "\n";
  futures.pop_back();
  locks.pop_back();
  const absl::Time reported = absl::Now();
  auto lock = ExclusiveLock::Create(*session, HeldDir("again"));
  ASSERT_TRUE(lock.ok());
  auto future = (*lock)->AcquireFuture();
  if (future.wait_for(std::chrono::milliseconds(1500)) == std::future_status::ready) {
    auto got = future.get();
    ADD_FAILURE() << "a wait right after a cancelled one was reported: " << got.status();
    // How long until one is admitted?
    absl::Duration took = absl::InfiniteDuration();
    for (int k = 0; k < 40; ++k) {
      auto retry = ExclusiveLock::Create(*session, HeldDir("again"));
      auto f = (*retry)->AcquireFuture();
      if (f.wait_for(std::chrono::milliseconds(250)) != std::future_status::ready) {
        took = absl::Now() - reported;
        (*retry)->Cancel();
        f.wait();
        break;
      }
      (void)f.get();
    }
    std::cout << "a new wait admitted " << took << " after the cancel was reported\n";
  } else {
    (*lock)->Cancel();
    future.wait();
  }
  for (auto& l : locks) l->Cancel();
  for (auto& f : futures) f.wait();
  futures.clear();
  locks.clear();
  lock->reset();
  session->Close();
  CleanRoot();
}

// Every admitted wait cancelled, each outcome delivered, every lock object
// destroyed: a new wait right after must be admitted.
TEST_F(WatchLimitEdgesTest, ReservationsFreedWhenAllCancelsReportedRepeated) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  std::vector<std::string> dirs;
  for (int i = 0; i < 14; ++i) dirs.push_back(HeldDir(absl::StrCat("d", i)));
  const std::string free_dir = Path("free");
  for (int round = 0; round < 5; ++round) {
    std::vector<std::unique_ptr<ExclusiveLock>> locks;
    std::vector<std::future<absl::StatusOr<LockGuard>>> futures;
    for (const std::string& dir : dirs) {
      auto lock = ExclusiveLock::Create(*session, dir);
      ASSERT_TRUE(lock.ok());
      auto future = (*lock)->AcquireFuture();
      if (future.wait_for(std::chrono::milliseconds(1000)) == std::future_status::ready) {
        auto got = future.get();
        ASSERT_TRUE(absl::IsResourceExhausted(got.status())) << got.status();
        break;
      }
      futures.push_back(std::move(future));
      locks.push_back(std::move(*lock));
    }
    for (auto& l : locks) l->Cancel();
    for (auto& f : futures) {
      ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    }
    futures.clear();
    locks.clear();
    auto lock = ExclusiveLock::Create(*session, free_dir);
    ASSERT_TRUE(lock.ok());
    auto got = (*lock)->TryAcquire();
    EXPECT_TRUE(got.ok()) << "round " << round
                          << ": a free lock right after every admitted wait was cancelled "
                             "(outcomes delivered, locks destroyed): "
                          << got.status();
    if (got.ok()) {
      EXPECT_TRUE(got->Release().ok());
    } else {
      const absl::Time refused_at = absl::Now();
      absl::Duration took = absl::InfiniteDuration();
      for (int k = 0; k < 500; ++k) {
        absl::SleepFor(absl::Milliseconds(10));
        auto retry = (*lock)->TryAcquire();
        if (retry.ok()) {
          took = absl::Now() - refused_at;
          EXPECT_TRUE(retry->Release().ok());
          break;
        }
      }
      std::cout << "round " << round << ": the free lock was refused; taken " << took
                << " later\n";
    }
    absl::SleepFor(absl::Seconds(2));
  }
  session->Close();
  CleanRoot();
}

TEST_F(WatchLimitEdgesTest, ReservationsFreedWhenAllCancelsReported) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  std::vector<std::unique_ptr<ExclusiveLock>> locks;
  std::vector<std::future<absl::StatusOr<LockGuard>>> futures;
  for (int i = 0; i < 200; ++i) {
    auto lock = ExclusiveLock::Create(*session, HeldDir(absl::StrCat("d", i)));
    ASSERT_TRUE(lock.ok());
    auto future = (*lock)->AcquireFuture();
    if (future.wait_for(std::chrono::milliseconds(1500)) == std::future_status::ready) {
      auto got = future.get();
      ASSERT_TRUE(absl::IsResourceExhausted(got.status())) << got.status();
      break;
    }
    futures.push_back(std::move(future));
    locks.push_back(std::move(*lock));
  }
  std::cout << locks.size() << " waits admitted\n";
  for (auto& l : locks) l->Cancel();
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(absl::IsCancelled(f.get().status()));
  }
  futures.clear();
  locks.clear();
  const absl::Time reported = absl::Now();
  const std::string again = HeldDir("again");
  auto lock = ExclusiveLock::Create(*session, again);
  ASSERT_TRUE(lock.ok());
  auto got = (*lock)->Acquire(absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(got.status()))
      << "a wait right after every wait was cancelled (outcomes delivered, locks destroyed): "
      << got.status();
  if (!absl::IsDeadlineExceeded(got.status())) {
    absl::Duration took = absl::InfiniteDuration();
    for (int k = 0; k < 40; ++k) {
      auto r = (*lock)->Acquire(absl::Milliseconds(250));
      if (absl::IsDeadlineExceeded(r.status())) {
        took = absl::Now() - reported;
        break;
      }
    }
    std::cout << "a new wait admitted " << took << " after the cancels were reported\n";
  }
  lock->reset();
  session->Close();
  CleanRoot();
}

// non-queue watchers with the cap full: a clear error, never a
// silent hang.
TEST_F(WatchLimitEdgesTest, BarrierWaitWithTheCapFull) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  FillWatches(*session, Path("absent"));
  const std::string path = Path("barrier");
  auto set = Barrier::Create(admin(), path);
  ASSERT_TRUE(set.ok());
  ASSERT_TRUE((*set)->Set().ok());
  auto barrier = Barrier::Create(*session, path);
  ASSERT_TRUE(barrier.ok());
  const absl::Time start = absl::Now();
  absl::Status waited = (*barrier)->Wait(absl::Seconds(5));
  std::cout << "barrier wait: " << waited << " after " << absl::Now() - start << "\n";
  EXPECT_TRUE(absl::IsResourceExhausted(waited)) << waited;
  ASSERT_TRUE((*set)->Remove().ok());
  session->Close();
  CleanRoot();
}

TEST_F(WatchLimitEdgesTest, LeaderObserverWithTheCapFull) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  const std::string path = Path("election");
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  // Created before the cap fills: its room for the directory is reserved.
  auto observer = LeaderObserver::Create(*session, path);
  ASSERT_TRUE(observer.ok()) << observer.status();
  auto first = (*observer)->Current(absl::Seconds(5));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->has_value());
  const std::string absent = Path("absent");
  const size_t filled = FillWatches(*session, absent);
  // Created with the cap full: refused at once (a few bytes may be left
  // that fit one or two; they are kept, as they took them).
  std::vector<std::unique_ptr<LeaderObserver>> late;
  absl::Status refused;
  for (int i = 0; i < 4 && refused.ok(); ++i) {
    auto another = LeaderObserver::Create(*session, path);
    if (another.ok()) late.push_back(std::move(*another));
    refused = another.status();
  }
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  // A candidate joins (another process's, with a 300-byte name): the
  // leader's node needs far more room than is left (under 80 bytes, or the
  // fill would have taken it); the observer must say so, not go silent.
  auto candidate = admin().Create(path + "/" + std::string(300, 'b') + "_1_0-W-", "",
                                  CreateMode::kEphemeralSequential);
  ASSERT_TRUE(candidate.ok()) << candidate.status();
  auto change = (*observer)->AwaitChange(*first, absl::Seconds(10));
  std::cout << "observer AwaitChange after a candidate joined, the cap full: " << change.status()
            << "\n";
  EXPECT_TRUE(absl::IsResourceExhausted(change.status())) << change.status();
  // Room frees (the plain watches fire): the observer answers, unasked.
  ASSERT_TRUE(admin().Create(absent, "", CreateMode::kPersistent).ok());
  for (size_t i = 0; i < filled; ++i) {
    ASSERT_TRUE(admin().Create(absl::StrFormat("%s/w%06d", absent, i), "", CreateMode::kPersistent).ok());
  }
  EXPECT_TRUE(testing::Eventually(
      [&] {
        auto now = (*observer)->Current(absl::Seconds(1));
        return now.ok() && now->has_value();
      },
      absl::Seconds(15)))
      << "the observer did not answer once room was free";
  ASSERT_TRUE(admin().Delete(candidate->path).ok());
  late.clear();
  observer->reset();
  session->Close();
  CleanRoot();
}

// A group watch created before the cap fills keeps its room and reports
// every change; one created with the cap full is refused at once.
TEST_F(WatchLimitEdgesTest, GroupWatchWithTheCapFull) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  const std::string path = Path("group");
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  absl::Mutex mu;
  std::vector<size_t> sizes;
  auto watch = GroupWatch::Create(*session, path, [&](const std::vector<GroupMemberInfo>& m) {
    absl::MutexLock l(&mu);
    sizes.push_back(m.size());
  });
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(testing::Eventually(
      [&] {
        absl::MutexLock l(&mu);
        return !sizes.empty();
      },
      absl::Seconds(10)));
  FillWatches(*session, Path("absent"));
  std::vector<std::unique_ptr<GroupWatch>> late;  // as for LeaderObserverWithTheCapFull
  absl::Status refused;
  for (int i = 0; i < 4 && refused.ok(); ++i) {
    auto another = GroupWatch::Create(*session, path, [](const std::vector<GroupMemberInfo>&) {});
    if (another.ok()) late.push_back(std::move(*another));
    refused = another.status();
  }
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  auto member = GroupMember::Create(admin(), path);
  ASSERT_TRUE(member.ok());
  ASSERT_TRUE((*member)->Join().ok());
  const bool seen = testing::Eventually(
      [&] {
        absl::MutexLock l(&mu);
        return !sizes.empty() && sizes.back() == 1;
      },
      absl::Seconds(10));
  {
    absl::MutexLock l(&mu);
    std::cout << "group watch reports: " << absl::StrJoin(sizes, ",") << "\n";
  }
  EXPECT_TRUE(seen) << "a member joined; the group watch (its room reserved before the cap "
                       "filled) did not report it within 10 s";
  member->reset();
  late.clear();
  watch->reset();
  session->Close();
  CleanRoot();
}

// InspectQueue at its boundary: 2,000 participants (each with a pending
// revocation request beside it: 4,000 children) are inspected; 2,001 are
// refused with ResourceExhausted naming the path and the count.
TEST_F(WatchLimitEdgesTest, InspectAtTheBoundary) {
  const std::string dir = Path("q");
  ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
  std::vector<Op> ops;
  for (int i = 0; i < 2000; ++i) {
    const std::string node = absl::StrFormat("%s/holder_1_%d-W-%010d", dir, i, i);
    ops.push_back(Op::Create(node, "", CreateMode::kPersistent));
    ops.push_back(Op::Create(node + ".revoke", "", CreateMode::kPersistent));
    if (ops.size() >= 200) {
      auto made = admin().Multi(ops);
      ASSERT_TRUE(made.ok()) << made.status();
      ops.clear();
    }
  }
  const absl::Time start = absl::Now();
  auto queue = InspectQueue(admin(), dir);
  std::cout << "2000 participants: " << queue.status() << " in " << absl::Now() - start
            << "\n";
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_EQ(queue->size(), 2000u);
  ASSERT_TRUE(admin()
                  .Create(absl::StrFormat("%s/holder_1_x-W-%010d", dir, 2000), "",
                          CreateMode::kPersistent)
                  .ok());
  auto refused = InspectQueue(admin(), dir);
  std::cout << "2001 participants: " << refused.status() << "\n";
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr(dir));
  EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr("2001"));
  ASSERT_TRUE(testing::DeleteRecursively(admin(), dir).ok());
}

// a refusal by the reservation, async form: `done` runs exactly
// once, on the dispatcher thread (never inline on the caller's thread
// before AcquireAsync returns), for a lock and a semaphore.
TEST_F(WatchLimitEdgesTest, AsyncRefusalRunsOnTheDispatcherOnce) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  std::vector<std::unique_ptr<ExclusiveLock>> locks;
  std::vector<std::future<absl::StatusOr<LockGuard>>> futures;
  for (int i = 0; i < 200; ++i) {  // fill the reservation
    auto lock = ExclusiveLock::Create(*session, HeldDir(absl::StrCat("d", i)));
    ASSERT_TRUE(lock.ok());
    auto future = (*lock)->AcquireFuture();
    if (future.wait_for(std::chrono::milliseconds(1000)) == std::future_status::ready) {
      ASSERT_TRUE(absl::IsResourceExhausted(future.get().status()));
      break;
    }
    futures.push_back(std::move(future));
    locks.push_back(std::move(*lock));
  }
  // The dispatcher thread's id, from a completion.
  std::promise<std::thread::id> dispatcher;
  session->ExistsAsync("/", [&](absl::StatusOr<std::optional<Stat>>) {
    dispatcher.set_value(std::this_thread::get_id());
  });
  const std::thread::id dispatcher_id = dispatcher.get_future().get();
  const std::thread::id caller = std::this_thread::get_id();
  struct Seen {
    absl::Mutex mu;
    int calls = 0;
    bool inline_call = false;
    std::thread::id thread;
    absl::Status status;
  };
  auto check = [&](const char* what, Seen& seen) {
    ASSERT_TRUE(testing::Eventually([&] {
      absl::MutexLock l(&seen.mu);
      return seen.calls > 0;
    }, absl::Seconds(10))) << what << ": never completed";
    absl::SleepFor(absl::Milliseconds(300));
    absl::MutexLock l(&seen.mu);
    std::cout << what << ": " << seen.status << (seen.inline_call ? " (inline)" : "") << "\n";
    EXPECT_TRUE(absl::IsResourceExhausted(seen.status)) << what << ": " << seen.status;
    EXPECT_EQ(seen.calls, 1) << what;
    EXPECT_FALSE(seen.inline_call) << what << ": done ran inline, before AcquireAsync returned";
    EXPECT_EQ(seen.thread, dispatcher_id) << what << ": done did not run on the dispatcher thread";
  };
  {
    Seen seen;
    bool returned = false;
    auto lock = ExclusiveLock::Create(*session, HeldDir("refused"));
    ASSERT_TRUE(lock.ok());
    (*lock)->AcquireAsync([&](absl::StatusOr<LockGuard> r) {
      absl::MutexLock l(&seen.mu);
      ++seen.calls;
      seen.inline_call = !returned && std::this_thread::get_id() == caller;
      seen.thread = std::this_thread::get_id();
      seen.status = r.status();
    });
    {
      absl::MutexLock l(&seen.mu);
      returned = true;
    }
    check("lock", seen);
  }
  {
    Seen seen;
    bool returned = false;
    auto pool = Semaphore::Create(*session, Path("pool"), 1);
    ASSERT_TRUE(pool.ok()) << pool.status();
    (*pool)->AcquireAsync(1, [&](absl::StatusOr<LockGuard> r) {
      absl::MutexLock l(&seen.mu);
      ++seen.calls;
      seen.inline_call = !returned && std::this_thread::get_id() == caller;
      seen.thread = std::this_thread::get_id();
      seen.status = r.status();
    });
    {
      absl::MutexLock l(&seen.mu);
      returned = true;
    }
    check("semaphore", seen);
  }
  for (auto& l : locks) l->Cancel();
  for (auto& f : futures) f.wait();
  futures.clear();
  locks.clear();
  session->Close();
  CleanRoot();
}

// an admitted wait whose predecessor goes must move to the next
// one. Plain watches fill the cap while it waits; the next predecessor's
// name is longer (another process, 100-byte label). The wait must still be
// granted when both go (or, at worst, fail loudly — never hang).
TEST_F(WatchLimitEdgesTest, AdmittedWaitMovesToALongerPredecessorAtTheCap) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  const std::string dir = Path("lock");
  ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
  auto a = admin().Create(dir + "/" + std::string(100, 'a') + "_1_0-W-", "",
                          CreateMode::kEphemeralSequential);
  ASSERT_TRUE(a.ok());
  auto b = admin().Create(dir + "/b_1_0-W-", "", CreateMode::kEphemeralSequential);
  ASSERT_TRUE(b.ok());
  auto lock = ExclusiveLock::Create(*session, dir);
  ASSERT_TRUE(lock.ok());
  auto future = (*lock)->AcquireFuture();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(2)), std::future_status::timeout)
      << "refused: " << future.get().status();
  FillWatches(*session, Path("absent"));
  ASSERT_TRUE(admin().Delete(b->path).ok());  // the wait moves to a's node
  absl::SleepFor(absl::Seconds(2));
  if (future.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready) {
    auto got = future.get();
    ADD_FAILURE() << "an admitted wait failed when its predecessor went (its holder still "
                     "there): " << got.status();
  } else {
    ASSERT_TRUE(admin().Delete(a->path).ok());
    ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "admitted wait not granted 10 s after every node before it went";
    auto got = future.get();
    EXPECT_TRUE(got.ok()) << got.status();
    if (got.ok()) (void)got->Release();
  }
  lock->reset();
  session->Close();
  CleanRoot();
}

// queue participants only (no plain watches). Each admitted
// wait moves from a short-named predecessor to a long-named one (another
// process's 300-byte label): its reservation's 16-byte margin is exceeded.
// Every admitted wait must still be granted once the nodes before it go.
TEST_F(WatchLimitEdgesTest, AdmittedWaitsMoveToLongPredecessorsNoPlainWatches) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  std::vector<std::string> longs, shorts;
  std::vector<std::unique_ptr<ExclusiveLock>> locks;
  std::vector<std::future<absl::StatusOr<LockGuard>>> futures;
  for (int i = 0; i < 50; ++i) {
    const std::string dir = Path(absl::StrCat("l", i));
    ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
    auto a = admin().Create(dir + "/" + std::string(300, 'a') + "_1_0-W-", "",
                            CreateMode::kEphemeralSequential);
    auto b = admin().Create(dir + "/b_1_0-W-", "", CreateMode::kEphemeralSequential);
    ASSERT_TRUE(a.ok() && b.ok());
    auto lock = ExclusiveLock::Create(*session, dir);
    ASSERT_TRUE(lock.ok());
    auto future = (*lock)->AcquireFuture();
    if (future.wait_for(std::chrono::milliseconds(1000)) == std::future_status::ready) {
      auto got = future.get();
      ASSERT_TRUE(absl::IsResourceExhausted(got.status())) << got.status();
      ASSERT_TRUE(admin().Delete(a->path).ok());
      ASSERT_TRUE(admin().Delete(b->path).ok());
      break;
    }
    longs.push_back(a->path);
    shorts.push_back(b->path);
    futures.push_back(std::move(future));
    locks.push_back(std::move(*lock));
  }
  std::cout << locks.size() << " waits admitted\n";
  for (const auto& p : shorts) ASSERT_TRUE(admin().Delete(p).ok());
  absl::SleepFor(absl::Seconds(2));
  size_t failed_early = 0;
  std::string first;
  for (auto& f : futures) {
    if (f.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready) {
      auto got = f.get();
      if (++failed_early == 1) first = got.status().ToString();
    }
  }
  std::cout << failed_early << " of " << futures.size()
            << " admitted waits ended when their short predecessor went\n";
  EXPECT_EQ(failed_early, 0u) << "first: " << first;
  for (const auto& p : longs) ASSERT_TRUE(admin().Delete(p).ok());
  size_t granted = 0;
  for (auto& f : futures) {
    if (!f.valid()) continue;
    if (f.wait_for(std::chrono::seconds(10)) != std::future_status::ready) continue;
    auto got = f.get();
    if (got.ok()) {
      ++granted;
      (void)got->Release();
    }
  }
  std::cout << granted << " granted\n";
  EXPECT_EQ(granted, futures.size());
  locks.clear();
  session->Close();
  CleanRoot();
}

// Holds must count against the reservation (a hold keeps its own-node
// watch): with holds taken, fewer waits fit.
TEST_F(WatchLimitEdgesTest, HoldsKeepTheirReservation) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  const size_t at_start = CountAdmittedWaits(*session, "a");
  absl::SleepFor(absl::Seconds(3));  // the cancelled waits' reservations go
  std::vector<LockGuard> guards;
  for (int i = 0; i < 3; ++i) {
    auto lock = ExclusiveLock::Create(*session, Path(absl::StrCat("h", i)));
    ASSERT_TRUE(lock.ok());
    auto got = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(got.ok()) << got.status();
    guards.push_back(std::move(*got));  // the lock object goes; the hold stays
  }
  const size_t with_holds = CountAdmittedWaits(*session, "b");
  std::cout << "admitted: " << at_start << " at start, " << with_holds << " with 3 holds\n";
  EXPECT_LT(with_holds, at_start) << "holds reserve nothing once their lock object is gone";
  for (auto& g : guards) EXPECT_TRUE(g.Release().ok());
  guards.clear();
  session->Close();
  CleanRoot();
}

// Fills the session's watches to the hard cap with plain watching reads
// (no reservation), then returns how many were set.
size_t FillWatches(Session& session, const std::string& under) {
  size_t set = 0;
  for (int i = 0; i < 100000; ++i) {
    auto r = session.ExistsAndWatch(absl::StrFormat("%s/w%06d", under, i),
                                    [](const WatchEvent&) {});
    if (!r.ok()) {
      EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
      std::cout << "budget full after " << set << " watches: " << r.status() << "\n";
      break;
    }
    ++set;
  }
  return set;
}

// plain watches fill the packet to the hard cap (they reserve
// nothing). A lock then taken on a free directory: either refused at once
// with nothing created, or granted with a working own-node watch (its node
// deleted by someone else turns the hold LOST).
// A hold whose own-node watch is refused for room turns LOST (it could not
// hear of its node's deletion).
TEST_F(WatchLimitEdgesTest, HolderAfterPlainWatchesFillTheCap) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  FillWatches(*session, Path("absent"));
  const std::string dir = Path("lock");
  ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
  auto lock = ExclusiveLock::Create(*session, dir);
  ASSERT_TRUE(lock.ok());
  auto got = (*lock)->Acquire(absl::Seconds(10));
  std::cout << "acquire: " << got.status() << "\n";
  auto children = admin().GetChildren(dir);
  ASSERT_TRUE(children.ok());
  if (!got.ok()) {
    EXPECT_TRUE(absl::IsResourceExhausted(got.status())) << got.status();
    EXPECT_THAT(*children, ::testing::IsEmpty()) << "refused, but a node was left";
  } else {
    ASSERT_EQ(children->size(), 1u);
    std::cout << "hold state at grant: " << LockStateName(got->state()) << "\n";
    // Its node still there: once the own-node watch is refused (armed after
    // the hold's own_node_watch_delay), the hold must not read HELD — it
    // would not hear of a deletion by someone else.
    EXPECT_TRUE(testing::Eventually([&] { return got->state() == LockState::kLost; },
                                    absl::Seconds(10)))
        << "hold still " << LockStateName(got->state())
        << " with its own-node watch refused at the hard cap";
    ASSERT_TRUE(admin().Delete(dir + "/" + (*children)[0]).ok());
    (void)got->Release();
  }
  session->Close();
  CleanRoot();
}

// the same, with a wait behind a held lock: refused at once and
// nothing created, or admitted and granted when the holder goes.
TEST_F(WatchLimitEdgesTest, WaiterAfterPlainWatchesFillTheCap) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  FillWatches(*session, Path("absent"));
  const std::string dir = HeldDir("lock");
  auto lock = ExclusiveLock::Create(*session, dir);
  ASSERT_TRUE(lock.ok());
  auto future = (*lock)->AcquireFuture();
  if (future.wait_for(std::chrono::seconds(3)) == std::future_status::ready) {
    auto got = future.get();
    std::cout << "wait: " << got.status() << "\n";
    EXPECT_TRUE(absl::IsResourceExhausted(got.status())) << got.status();
    auto children = admin().GetChildren(dir);
    ASSERT_TRUE(children.ok());
    EXPECT_EQ(children->size(), 1u) << "refused, but a node was left: "
                                    << absl::StrJoin(*children, ",");
    auto stat = admin().Exists(dir);
    ASSERT_TRUE(stat.ok() && stat->has_value());
    EXPECT_EQ((*stat)->cversion, 1)
        << "refused, but not 'at once, creating nothing': the wait created a node first "
           "(its admission reserved nothing for the plain watches that fill the cap)";
  } else {
    auto children = admin().GetChildren(dir);
    ASSERT_TRUE(children.ok());
    std::cout << "wait admitted; children: " << absl::StrJoin(*children, ",") << "\n";
    for (const auto& c : *children) {
      if (absl::StartsWith(c, "holder_")) {
        ASSERT_TRUE(admin().Delete(dir + "/" + c).ok());
      }
    }
    ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "admitted wait not granted 10 s after its holder went (its watch was refused?)";
    auto got = future.get();
    EXPECT_TRUE(got.ok()) << got.status();
    if (got.ok()) (void)got->Release();
  }
  lock->reset();
  session->Close();
  CleanRoot();
}

// ---------------------------------------------------------------------------
// Own server with a 64 KiB jute.maxbuffer, behind a TCP proxy.
class LongNamesTest : public testing::PacketLimitServerTest {};

// the reservation assumes a blocker's name is at most 16 bytes
// longer than ours. Holders (another process) with 300-byte names: each
// wait's real watches are far larger than reserved. Promise: every wait is
// refused up front (nothing created) or admitted, survives a reset and is
// granted once its holder goes; the session is never lost.
TEST_F(LongNamesTest, LongHolderNamesBeyondTheReservation) {
  auto admin = Connect(server_->connect_string());
  ASSERT_NE(admin, nullptr);
  auto proxy = testing::TcpProxy::Start("127.0.0.1", server_->client_port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const std::string root = "/longnames";
  const std::string holder_prefix = std::string(300, 'h') + "_1_0-W-";
  constexpr size_t kDirs = 400;
  ASSERT_TRUE(admin->Create(root, "", CreateMode::kPersistent).ok());
  std::vector<std::string> dirs;
  std::vector<Op> ops;
  for (size_t i = 0; i < kDirs; ++i) {
    dirs.push_back(absl::StrFormat("%s/%04d", root, i));
    ops.push_back(Op::Create(dirs.back(), "", CreateMode::kPersistent));
    ops.push_back(Op::Create(dirs.back() + "/" + holder_prefix, "", CreateMode::kEphemeralSequential));
    if (ops.size() >= 100) {
      auto made = admin->Multi(ops);
      ASSERT_TRUE(made.ok()) << made.status();
      ops.clear();
    }
  }
  if (!ops.empty()) {
    ASSERT_TRUE(admin->Multi(ops).ok());
    ops.clear();
  }

  auto waiters = Connect((*proxy)->address());
  ASSERT_NE(waiters, nullptr);
  testing::StateRecorder states(*waiters);
  const int64_t session_id = waiters->session_id();
  struct Out {
    absl::Mutex mu;
    std::vector<absl::Status> status;
    std::vector<absl::Time> at;
    std::vector<LockGuard> guards;
    size_t done = 0;
  } out;
  out.status.resize(kDirs);
  out.at.resize(kDirs);
  out.guards.resize(kDirs);
  std::vector<std::unique_ptr<ExclusiveLock>> locks;
  for (size_t i = 0; i < kDirs; ++i) {
    auto lock = ExclusiveLock::Create(*waiters, dirs[i]);
    ASSERT_TRUE(lock.ok());
    (*lock)->AcquireAsync([&out, i](absl::StatusOr<LockGuard> r) {
      absl::MutexLock l(&out.mu);
      out.status[i] = r.status();
      out.at[i] = absl::Now();
      if (r.ok()) out.guards[i] = std::move(*r);
      ++out.done;
    });
    locks.push_back(std::move(*lock));
  }
  auto done = [&] {
    absl::MutexLock l(&out.mu);
    return out.done;
  };
  size_t watching = 0;
  bool settled = testing::Eventually(
      [&] {
        watching = WatchesUnder(*waiters, root);
        return done() + watching / 2 >= kDirs;
      },
      absl::Seconds(90));
  std::cout << "settled=" << settled << ": " << done() << " done, " << watching
            << " paths watched\n";
  // Each refused wait must have left nothing (only the holder's node).
  size_t refused_late = 0, hard_cap = 0, created_then_deleted = 0;
  {
    std::vector<size_t> refused;
    {
      absl::MutexLock l(&out.mu);
      for (size_t i = 0; i < kDirs; ++i) {
        if (out.at[i] != absl::Time() && !out.status[i].ok()) refused.push_back(i);
      }
    }
    for (size_t i : refused) {
      auto children = admin->GetChildren(dirs[i]);
      ASSERT_TRUE(children.ok());
      if (children->size() != 1) ++refused_late;
      auto stat = admin->Exists(dirs[i]);
      ASSERT_TRUE(stat.ok() && stat->has_value());
      if ((*stat)->cversion > 1) ++created_then_deleted;
      absl::MutexLock l(&out.mu);
      if (absl::StartsWith(out.status[i].message(), "watch on")) ++hard_cap;
    }
    std::cout << hard_cap << " refused by the hard cap (after admission), "
              << created_then_deleted << " refused after creating a node (cversion)\n";
    std::cout << refused.size() << " refused, " << refused_late
              << " of them left a node\n";
    if (!refused.empty()) {
      absl::MutexLock l(&out.mu);
      std::cout << "first refusal: " << out.status[refused[0]] << "\n";
    }
  }
  EXPECT_EQ(refused_late, 0u);
  EXPECT_EQ(created_then_deleted, 0u)
      << "refusals not 'at once, creating nothing': an admitted wait created its node, "
         "then hit the hard cap on its blocker's watch";
  const absl::Time reset_at = absl::Now();
  (*proxy)->ResetConnections();
  auto reconnected =
      states.WaitFor(SessionState::kReconnected, waiters->generation(), absl::Seconds(30));
  EXPECT_TRUE(reconnected.has_value()) << "not reconnected after the reset";
  for (size_t i = 0; i < kDirs; ++i) {
    ops.push_back(Op::Delete(dirs[i] + "/" + holder_prefix + "0000000000"));
    if (ops.size() >= 100 || i + 1 == kDirs) {
      auto deleted = admin->Multi(ops);
      ASSERT_TRUE(deleted.ok()) << deleted.status();
      ops.clear();
    }
  }
  EXPECT_TRUE(testing::Eventually([&] { return done() == kDirs; }, absl::Seconds(60)))
      << done() << " of " << kDirs << " completed 60 s after the holders went";
  size_t granted = 0, refused = 0, other = 0;
  {
    absl::MutexLock l(&out.mu);
    for (size_t i = 0; i < kDirs; ++i) {
      if (out.at[i] == absl::Time()) continue;
      if (out.status[i].ok()) {
        ++granted;
      } else if (absl::IsResourceExhausted(out.status[i]) && out.at[i] < reset_at) {
        ++refused;
      } else {
        if (++other <= 3) std::cout << "wait " << i << ": " << out.status[i] << "\n";
      }
    }
    for (auto& g : out.guards) {
      if (g.held()) (void)g.Release();
    }
  }
  std::cout << granted << " granted, " << refused << " refused up front, " << other
            << " otherwise\n";
  EXPECT_EQ(other, 0u);
  EXPECT_EQ(waiters->session_id(), session_id) << "the session was lost";
  EXPECT_THAT(states.states(), Not(Contains(SessionState::kLost)));
  locks.clear();
  waiters->Close();
  (void)testing::DeleteRecursively(*admin, root);
  admin->Close();
}


// Fills `session`'s watch budget as close to full as path lengths allow
// (plain exists-watches on absent nodes under `base`); returns how many.
size_t FillExactly(Session& session, const std::string& base) {
  size_t set = 0;
  std::string last;
  for (size_t pad : {400, 200, 100, 50, 25, 12, 6, 3, 1, 0}) {
    while (true) {
      auto r = session.ExistsAndWatch(
          absl::StrFormat("%s/%05d%s", base, set, std::string(pad, 'p')),
          [](const WatchEvent&) {});
      if (!r.ok()) {
        EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
        last = std::string(r.status().message());
        break;
      }
      ++set;
    }
  }
  std::cout << set << " watches; last refusal: " << last << "\n";
  return set;
}

// plain watches filled to the session's watch budget (to within a few bytes),
// then the connection reset: the SetWatches packet must pass the server's
// jute.maxbuffer and the session survive with its watches.
void ResetAtTheCap(LongNamesTest& t, testing::ZooKeeperServer& server, const std::string& chroot) {
  auto admin = t.Connect(server.connect_string());
  ASSERT_NE(admin, nullptr);
  if (!chroot.empty()) {
    ASSERT_TRUE(admin->CreateParents(chroot + "/x", false).ok());
    auto c = admin->Create(chroot, "", CreateMode::kPersistent);
    ASSERT_TRUE(c.ok() || absl::IsAlreadyExists(c.status()));
  }
  auto proxy = testing::TcpProxy::Start("127.0.0.1", server.client_port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  auto session = t.Connect((*proxy)->address() + chroot);
  ASSERT_NE(session, nullptr);
  testing::StateRecorder states(*session);
  const int64_t id = session->session_id();
  const size_t set = FillExactly(*session, "/f");
  const size_t before = t.WatchesUnder(*session, chroot + "/f");
  std::cout << "server lists " << before << " of them\n";
  (*proxy)->ResetConnections();
  auto reconnected =
      states.WaitFor(SessionState::kReconnected, session->generation(), absl::Seconds(30));
  EXPECT_TRUE(reconnected.has_value())
      << "not reconnected 30 s after a reset with " << set << " watches at the cap";
  EXPECT_EQ(session->session_id(), id) << "the session was lost";
  EXPECT_THAT(states.states(), Not(Contains(SessionState::kLost)));
  if (reconnected.has_value()) {
    EXPECT_EQ(t.WatchesUnder(*session, chroot + "/f"), set) << "watches not all re-armed";
  }
  session->Close();
  admin->Close();
}

TEST_F(LongNamesTest, ResetWithPlainWatchesAtTheCap) {
  ResetAtTheCap(*this, *server_, "");
}

// a chroot in the connect string lengthens every path in the
// SetWatches packet.
TEST_F(LongNamesTest, ResetWithPlainWatchesAtTheCapUnderAChroot) {
  ResetAtTheCap(*this, *server_, "/" + std::string(150, 'c') + "/" + std::string(100, 'd'));
}
}  // namespace
}  // namespace zkr
