// StdMutex / StdSharedMutex (zkrecipes/std_lock.h) with the standard
// library's lock types, and the futures of the lock objects, against a real
// server: exclusion across sessions and across threads of one process, the
// failure paths (throw from lock(), false plus a status from try_lock*),
// and what holds between threads sharing one adapter: try_* never wait for
// them past their bound, std::scoped_lock in opposite orders, local readers
// sharing one read hold.
#include "zkrecipes/std_lock.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/support/directory_check.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using testing::ZkTest;
using testing::Eventually;
using testing::Ready;

class StdLockTest : public ZkTest {
 protected:
  bool WaitForChildren(const std::string& path, size_t count) {
    return testing::AwaitChildCount(admin(), path, count);
  }

  // Another thread takes the adapter (`hold`) and keeps it while `probe`
  // runs here; it lets go (`unhold`) once `probe` returned — or after 20 s,
  // a bound that only an adapter whose try_* waits for it reaches. Returns
  // whether `probe` returned while the other thread still held.
  bool ProbeWhileAnotherThreadHolds(std::function<void()> hold, std::function<void()> unhold,
                                    std::function<void()> probe) {
    absl::Notification holding, probed;
    std::atomic<bool> let_go{false};
    std::thread holder([&] {
      hold();
      holding.Notify();
      probed.WaitForNotificationWithTimeout(absl::Seconds(20));
      let_go = true;
      unhold();
    });
    holding.WaitForNotification();
    probe();
    const bool in_time = !let_go.load();
    probed.Notify();
    holder.join();
    return in_time;
  }
};

// Two processes' worth of contenders (two sessions), two threads each,
// through std::unique_lock: never two inside at once, by a ledger of who
// is in.
TEST_F(StdLockTest, UniqueLockExcludesAcrossSessionsAndThreads) {
  const std::string path = Path("unique");
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<ExclusiveLock>> locks;
  std::vector<std::unique_ptr<StdMutex>> mutexes;
  for (int s = 0; s < 2; ++s) {
    sessions.push_back(NewSession());
    auto lock = ExclusiveLock::Create(*sessions.back(), path);
    ASSERT_TRUE(lock.ok());
    locks.push_back(std::move(*lock));
    mutexes.push_back(std::make_unique<StdMutex>(*locks.back()));
  }
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> entries{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      StdMutex& mutex = *mutexes[t % 2];  // two threads share each adapter
      for (int round = 0; round < 10; ++round) {
        std::unique_lock<StdMutex> held(mutex);
        if (inside.fetch_add(1) != 0) ++overlaps;
        EXPECT_GT(mutex.guard().fencing_token(), 0);
        std::this_thread::yield();
        inside.fetch_sub(1);
        ++entries;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(entries.load(), 40);
  mutexes.clear();
  locks.clear();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// try_lock_for while another session holds: false, DeadlineExceeded in
// status(); then, once released, true. std::scoped_lock over two adapters
// takes both (it uses try_lock to avoid deadlock).
TEST_F(StdLockTest, TryLockForReportsBusyAndScopedLockTakesTwo) {
  const std::string a = Path("a"), b = Path("b");
  auto holder = ExclusiveLock::Create(admin(), a);
  ASSERT_TRUE(holder.ok());
  auto held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto session = NewSession();
  auto lock_a = ExclusiveLock::Create(*session, a);
  auto lock_b = ExclusiveLock::Create(*session, b);
  ASSERT_TRUE(lock_a.ok() && lock_b.ok());
  StdMutex mutex_a(**lock_a), mutex_b(**lock_b);
  std::unique_lock<StdMutex> busy(mutex_a, std::chrono::milliseconds(200));
  EXPECT_FALSE(busy.owns_lock());
  EXPECT_TRUE(absl::IsDeadlineExceeded(mutex_a.status())) << mutex_a.status();
  EXPECT_FALSE(mutex_a.try_lock());
  ASSERT_TRUE(held->Release().ok());
  {
    std::scoped_lock both(mutex_a, mutex_b);
    EXPECT_TRUE(mutex_a.status().ok()) << mutex_a.status();
    EXPECT_TRUE(mutex_a.guard().held());
    EXPECT_TRUE(mutex_b.guard().held());
  }
  auto children = admin().GetChildren(a);
  EXPECT_TRUE(!children.ok() || children->empty()) << "released by scoped_lock";
  lock_a->reset();
  lock_b->reset();
  holder->reset();
  (void)admin().Delete(a);
  (void)admin().Delete(b);
}

// lock() on a closed session throws LockError carrying the reason, rather
// than returning without the lock; try_lock() returns false.
TEST_F(StdLockTest, LockThrowsWhenTheLockCannotBeHad) {
  const std::string path = Path("closed");
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, path);
  ASSERT_TRUE(lock.ok());
  StdMutex mutex(**lock);
  session->Close();
  bool thrown = false;
  try {
    std::lock_guard<StdMutex> held(mutex);
  } catch (const LockError& error) {
    thrown = true;
    EXPECT_FALSE(error.status().ok());
  }
  EXPECT_TRUE(thrown) << "lock() returned without the lock";
  EXPECT_FALSE(mutex.try_lock());
  EXPECT_FALSE(mutex.status().ok());
  (void)admin().Delete(path);
}

// std::shared_lock: two readers (one per session) inside together; a
// writer's try_lock_for fails while they are; std::unique_lock gets it after.
TEST_F(StdLockTest, SharedLockLetsReadersShareAndKeepsWritersOut) {
  const std::string path = Path("shared");
  auto s1 = NewSession(), s2 = NewSession(), s3 = NewSession();
  auto l1 = SharedLock::Create(*s1, path), l2 = SharedLock::Create(*s2, path),
       l3 = SharedLock::Create(*s3, path);
  ASSERT_TRUE(l1.ok() && l2.ok() && l3.ok());
  StdSharedMutex m1(**l1), m2(**l2), writer(**l3);
  {
    std::shared_lock<StdSharedMutex> r1(m1);
    std::shared_lock<StdSharedMutex> r2(m2, std::chrono::seconds(10));
    ASSERT_TRUE(r2.owns_lock()) << m2.status();
    EXPECT_FALSE(writer.try_lock_for(std::chrono::milliseconds(200)));
    EXPECT_TRUE(absl::IsDeadlineExceeded(writer.status())) << writer.status();
  }
  {
    std::unique_lock<StdSharedMutex> w(writer, std::chrono::seconds(10));
    EXPECT_TRUE(w.owns_lock()) << writer.status();
    EXPECT_FALSE(m1.try_lock_shared());
  }
  l1->reset();
  l2->reset();
  l3->reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// The futures: one that completes when the holder lets go, and one that a
// Cancel() ends.
TEST_F(StdLockTest, FuturesCompleteOnAcquisitionAndOnCancel) {
  const std::string path = Path("future");
  auto holder = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(holder.ok());
  auto held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto session = NewSession();
  auto waiter = SharedLock::Create(*session, path);
  ASSERT_TRUE(waiter.ok());
  std::future<absl::StatusOr<LockGuard>> read = (*waiter)->AcquireReadFuture();
  EXPECT_EQ(read.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  ASSERT_TRUE(held->Release().ok());
  ASSERT_EQ(read.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> guard = read.get();
  ASSERT_TRUE(guard.ok()) << guard.status();
  // A writer behind the read hold, cancelled.
  auto other = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(other.ok());
  std::future<absl::StatusOr<LockGuard>> write = (*other)->AcquireFuture();
  EXPECT_EQ(write.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  (*other)->Cancel();
  ASSERT_EQ(write.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_FALSE(write.get().ok());
  ASSERT_TRUE(guard->Release().ok());
  other->reset();
  waiter->reset();
  holder->reset();
  (void)admin().Delete(path);
}

// Issue 31 item 6: while another thread of this process holds the adapter,
// try_lock() fails at once and try_lock_for() within its bound — false,
// DeadlineExceeded — instead of waiting for that thread's unlock.
TEST_F(StdLockTest, TryLockDoesNotWaitForAnotherLocalThread) {
  const std::string path = Path("local");
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, path);
  ASSERT_TRUE(lock.ok());
  StdMutex mutex(**lock);
  bool now = true, within = true;
  absl::Status status;
  const bool in_time = ProbeWhileAnotherThreadHolds(
      [&] { mutex.lock(); }, [&] { mutex.unlock(); },
      [&] {
        now = mutex.try_lock();
        if (now) mutex.unlock();
        within = mutex.try_lock_for(std::chrono::milliseconds(200));
        status = mutex.status();
        if (within) mutex.unlock();
      });
  EXPECT_TRUE(in_time) << "try_lock* waited for the other thread's unlock";
  EXPECT_FALSE(now);
  EXPECT_FALSE(within);
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  // Free again: both take it.
  ASSERT_TRUE(mutex.try_lock()) << mutex.status();
  mutex.unlock();
  ASSERT_TRUE(mutex.try_lock_for(std::chrono::seconds(10))) << mutex.status();
  mutex.unlock();
  lock->reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Issue 31 item 6, the shared adapter: a local writer keeps try_lock_shared()
// and try_lock_shared_for() out without making them wait past their bound;
// a local reader does the same to try_lock() and try_lock_for().
TEST_F(StdLockTest, SharedTryLocksDoNotWaitForAnotherLocalThread) {
  const std::string path = Path("local-shared");
  auto session = NewSession();
  auto lock = SharedLock::Create(*session, path);
  ASSERT_TRUE(lock.ok());
  StdSharedMutex mutex(**lock);
  bool now = true, within = true;
  absl::Status status;
  EXPECT_TRUE(ProbeWhileAnotherThreadHolds(
      [&] { mutex.lock(); }, [&] { mutex.unlock(); },
      [&] {
        now = mutex.try_lock_shared();
        if (now) mutex.unlock_shared();
        within = mutex.try_lock_shared_for(std::chrono::milliseconds(200));
        status = mutex.status();
        if (within) mutex.unlock_shared();
      }))
      << "try_lock_shared* waited for the local writer's unlock";
  EXPECT_FALSE(now);
  EXPECT_FALSE(within);
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  now = within = true;
  EXPECT_TRUE(ProbeWhileAnotherThreadHolds(
      [&] { mutex.lock_shared(); }, [&] { mutex.unlock_shared(); },
      [&] {
        now = mutex.try_lock();
        if (now) mutex.unlock();
        within = mutex.try_lock_for(std::chrono::milliseconds(200));
        status = mutex.status();
        if (within) mutex.unlock();
      }))
      << "try_lock* waited for the local reader's unlock";
  EXPECT_FALSE(now);
  EXPECT_FALSE(within);
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  lock->reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Issue 31 item 7: std::scoped_lock(a, b) on one thread and
// std::scoped_lock(b, a) on another, sharing both adapters, 20 rounds each:
// std::lock relies on try_lock failing fast, so neither deadlocks. (A
// deadlock cannot be undone: after a generous bound the binary exits.)
TEST_F(StdLockTest, ScopedLockInOppositeOrdersOnTwoThreadsDoesNotDeadlock) {
  const std::string a = Path("a"), b = Path("b");
  auto session = NewSession();
  auto lock_a = ExclusiveLock::Create(*session, a);
  auto lock_b = ExclusiveLock::Create(*session, b);
  ASSERT_TRUE(lock_a.ok() && lock_b.ok());
  StdMutex mutex_a(**lock_a), mutex_b(**lock_b);
  absl::Mutex mu;
  int finished = 0;
  std::atomic<int> inside{0}, overlaps{0}, rounds{0};
  auto run = [&](StdMutex& first, StdMutex& second) {
    for (int round = 0; round < 20; ++round) {
      std::scoped_lock both(first, second);
      if (inside.fetch_add(1) != 0) ++overlaps;
      EXPECT_TRUE(first.guard().held());
      EXPECT_TRUE(second.guard().held());
      inside.fetch_sub(1);
      ++rounds;
    }
    absl::MutexLock lock(&mu);
    ++finished;
  };
  std::thread forward(run, std::ref(mutex_a), std::ref(mutex_b));
  std::thread backward(run, std::ref(mutex_b), std::ref(mutex_a));
  bool done;
  {
    absl::MutexLock lock(&mu);
    auto both_finished = [&finished]() { return finished == 2; };
    done = mu.AwaitWithTimeout(absl::Condition(&both_finished), absl::Seconds(120));
  }
  if (!done) {
    ADD_FAILURE() << "deadlock: " << rounds.load() << " of 40 rounds done";
    std::fflush(stdout);
    std::_Exit(1);  // the threads cannot be joined
  }
  forward.join();
  backward.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(rounds.load(), 40);
  lock_a->reset();
  lock_b->reset();
  EXPECT_TRUE(WaitForChildren(a, 0));
  EXPECT_TRUE(WaitForChildren(b, 0));
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// Issue 31 item 8: two threads of this process wait in lock_shared()
// together (a writer of another session holds): neither throws; once the
// writer lets go both hold, on one read node. Meanwhile a third reader's
// try_lock_shared_for() times out (DeadlineExceeded), not refused.
TEST_F(StdLockTest, LocalReadersWaitingTogetherShareOneReadHold) {
  const std::string path = Path("readers");
  auto writer = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(writer.ok());
  auto written = (*writer)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(written.ok()) << written.status();
  auto session = NewSession();
  auto lock = SharedLock::Create(*session, path);
  ASSERT_TRUE(lock.ok());
  StdSharedMutex mutex(**lock);
  absl::Notification in_first, in_second, leave;
  absl::Status second_error;
  std::thread first([&] {
    mutex.lock_shared();
    in_first.Notify();
    leave.WaitForNotification();
    mutex.unlock_shared();
  });
  ASSERT_TRUE(WaitForChildren(path, 2));  // the first reader waits behind the writer
  EXPECT_FALSE(mutex.try_lock_shared_for(std::chrono::milliseconds(100)));
  EXPECT_TRUE(absl::IsDeadlineExceeded(mutex.status())) << mutex.status();
  std::thread second([&] {
    try {
      mutex.lock_shared();
    } catch (const LockError& error) {
      second_error = error.status();
      in_second.Notify();
      return;
    }
    in_second.Notify();
    leave.WaitForNotification();
    mutex.unlock_shared();
  });
  ASSERT_TRUE(written->Release().ok());
  ASSERT_TRUE(in_first.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_TRUE(in_second.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(second_error.ok()) << second_error;
  EXPECT_TRUE(WaitForChildren(path, 1)) << "the local readers hold one node";
  leave.Notify();
  first.join();
  second.join();
  EXPECT_TRUE(WaitForChildren(path, 0));
  lock->reset();
  writer->reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Each test checks that no node is left in a directory under its root.
using StdLockEdgeTest = testing::DirectoryCheckedTest<ZkTest>;

TEST_F(StdLockEdgeTest, TryLockForNeverWaitsPastBound) {
  const std::string p = Path("m");
  auto other = NewSession();
  auto other_lock = ExclusiveLock::Create(*other, p);
  auto held = (*other_lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, p);
  StdMutex mutex(**lock);
  for (int i = 0; i < 5; ++i) {
    absl::Time start = absl::Now();
    EXPECT_FALSE(mutex.try_lock_for(std::chrono::milliseconds(150)));
    absl::Duration took = absl::Now() - start;
    EXPECT_LT(took, absl::Milliseconds(150) + absl::Seconds(1)) << took;
    EXPECT_TRUE(absl::IsDeadlineExceeded(mutex.status())) << mutex.status();
    start = absl::Now();
    EXPECT_FALSE(mutex.try_lock());
    EXPECT_LT(absl::Now() - start, absl::Seconds(1));
    // Past deadline in try_lock_until.
    EXPECT_FALSE(mutex.try_lock_until(std::chrono::steady_clock::now() - std::chrono::seconds(5)));
  }
  // Local contention: a thread holds the adapter; another's try_lock_for is bounded.
  ASSERT_TRUE(held->Release().ok());
  mutex.lock();
  auto f = std::async(std::launch::async, [&] {
    absl::Time start = absl::Now();
    bool got = mutex.try_lock_for(std::chrono::milliseconds(200));
    return std::make_pair(got, absl::Now() - start);
  });
  ASSERT_TRUE(Ready(f, absl::Seconds(10)));
  auto [got, took] = f.get();
  EXPECT_FALSE(got);
  EXPECT_LT(took, absl::Milliseconds(200) + absl::Seconds(1));
  mutex.unlock();
  EXPECT_TRUE(Eventually([&] { return Children(p) == 0; }));
}

TEST_F(StdLockEdgeTest, SharedTryLockSharedForBoundedBehindLocalWriter) {
  const std::string p = Path("rw");
  auto session = NewSession();
  auto lock = SharedLock::Create(*session, p);
  ASSERT_TRUE(lock.ok());
  StdSharedMutex mutex(**lock);
  mutex.lock_shared();
  // A local writer waits for the reader, blocking later readers locally.
  auto writer = std::async(std::launch::async, [&] {
    bool got = mutex.try_lock_for(std::chrono::seconds(3));
    if (got) mutex.unlock();
    return got;
  });
  absl::SleepFor(absl::Milliseconds(100));  // let the writer start waiting (not a sync point)
  auto reader = std::async(std::launch::async, [&] {
    absl::Time start = absl::Now();
    bool got = mutex.try_lock_shared_for(std::chrono::milliseconds(200));
    if (got) mutex.unlock_shared();
    return absl::Now() - start;
  });
  ASSERT_TRUE(Ready(reader, absl::Seconds(10)));
  EXPECT_LT(reader.get(), absl::Milliseconds(200) + absl::Seconds(1));
  mutex.unlock_shared();
  ASSERT_TRUE(Ready(writer, absl::Seconds(10)));
  EXPECT_TRUE(writer.get()) << mutex.status();
  EXPECT_TRUE(Eventually([&] { return Children(p) == 0; }));
}

TEST_F(StdLockEdgeTest, ScopedLockOppositeOrdersNoDeadlock) {
  const std::string pa = Path("a"), pb = Path("b");
  auto s1 = NewSession();
  auto la = ExclusiveLock::Create(*s1, pa);
  auto lb = ExclusiveLock::Create(*s1, pb);
  StdMutex ma(**la), mb(**lb);
  auto s2 = NewSession();
  auto la2 = ExclusiveLock::Create(*s2, pa);
  auto lb2 = ExclusiveLock::Create(*s2, pb);
  StdMutex ma2(**la2), mb2(**lb2);
  std::atomic<int> inside{0}, overlaps{0};
  auto body = [&](StdMutex& x, StdMutex& y) {
    for (int i = 0; i < 15; ++i) {
      std::scoped_lock both(x, y);
      if (inside.fetch_add(1) != 0) ++overlaps;
      std::this_thread::yield();
      inside.fetch_sub(1);
    }
  };
  auto t1 = std::async(std::launch::async, body, std::ref(ma), std::ref(mb));
  auto t2 = std::async(std::launch::async, body, std::ref(mb), std::ref(ma));
  auto t3 = std::async(std::launch::async, body, std::ref(mb2), std::ref(ma2));
  ASSERT_TRUE(Ready(t1, absl::Seconds(90))) << "deadlock";
  ASSERT_TRUE(Ready(t2, absl::Seconds(90))) << "deadlock";
  ASSERT_TRUE(Ready(t3, absl::Seconds(90))) << "deadlock";
  t1.get(); t2.get(); t3.get();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_TRUE(Eventually([&] { return Children(pa) == 0 && Children(pb) == 0; }));
}

TEST_F(StdLockEdgeTest, SharedLocalReadersShareOneNode) {
  const std::string p = Path("rw");
  auto session = NewSession();
  auto lock = SharedLock::Create(*session, p);
  StdSharedMutex mutex(**lock);
  constexpr int kReaders = 8;
  std::atomic<int> in{0};
  absl::Notification go_out;
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&] {
      std::shared_lock<StdSharedMutex> r(mutex);
      ++in;
      go_out.WaitForNotificationWithTimeout(absl::Seconds(30));
    });
  }
  ASSERT_TRUE(Eventually([&] { return in.load() == kReaders; }));
  EXPECT_EQ(Children(p), 1u);
  go_out.Notify();
  for (auto& t : threads) t.join();
  EXPECT_TRUE(Eventually([&] { return Children(p) == 0; }));
}

// Readers and writers over three sessions, two threads each: a writer is
// never inside with anyone else.
TEST_F(StdLockEdgeTest, SharedMutexExclusionAcrossSessions) {
  const std::string p = Path("rw");
  std::atomic<int> writers{0}, readers{0}, violations{0};
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<SharedLock>> locks;
  std::vector<std::unique_ptr<StdSharedMutex>> mutexes;
  for (int i = 0; i < 3; ++i) {
    sessions.push_back(NewSession());
    locks.push_back(std::move(*SharedLock::Create(*sessions.back(), p)));
    mutexes.push_back(std::make_unique<StdSharedMutex>(*locks.back()));
  }
  std::vector<std::future<void>> runs;
  for (int i = 0; i < 6; ++i) {
    runs.push_back(std::async(std::launch::async, [&, i] {
      StdSharedMutex& m = *mutexes[i % 3];
      for (int k = 0; k < 10; ++k) {
        if ((i + k) % 3 == 0) {
          std::unique_lock<StdSharedMutex> w(m);
          if (writers.fetch_add(1) != 0 || readers.load() != 0) ++violations;
          std::this_thread::yield();
          writers.fetch_sub(1);
        } else {
          std::shared_lock<StdSharedMutex> r(m);
          readers.fetch_add(1);
          if (writers.load() != 0) ++violations;
          std::this_thread::yield();
          readers.fetch_sub(1);
        }
      }
    }));
  }
  for (auto& r : runs) {
    ASSERT_TRUE(Ready(r, absl::Seconds(120))) << "stuck";
    r.get();
  }
  EXPECT_EQ(violations.load(), 0);
  EXPECT_TRUE(Eventually([&] { return Children(p) == 0; }));
  mutexes.clear();
  locks.clear();
}

}  // namespace
}  // namespace zkr
