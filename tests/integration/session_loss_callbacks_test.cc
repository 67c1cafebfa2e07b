// Callbacks and waiters across session loss and reconnection: an async
// acquisition completes exactly once across expiry, recipes sharing a
// session all recover from its expiry, waiters are woken by a release made
// while they were disconnected, a cancel racing a grant completes once, and
// a double-barrier member expired during Leave counts as left.
#include <atomic>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/recipe_runs_fixture.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/status.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::Completion;
using testing::Eventually;
using testing::Ready;

class SessionLossCallbacksTest : public testing::RecipeRunsTest {};
class SessionLossCallbacksProxiedTest : public testing::ProxiedRecipeRunsTest {};

// A pending async acquisition when its session expires completes exactly
// once (session lost), and never again after the holder releases.
TEST_F(SessionLossCallbacksTest, AsyncAcquireCompletesOnceAcrossExpiry) {
  const std::string path = Path("lock");
  auto holder = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(holder.ok());
  auto held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();

  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, path);
  ASSERT_TRUE(lock.ok());
  Completion c;
  std::vector<LockGuard> granted;
  absl::Mutex gmu;
  (*lock)->AcquireAsync([&](absl::StatusOr<LockGuard> g) {
    c.Record(g.status());
    if (g.ok()) {
      absl::MutexLock l(&gmu);
      granted.push_back(std::move(*g));
    }
  });
  ASSERT_TRUE(Eventually([&] { return Children(path) == 2; }));
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(c.done.WaitForNotificationWithTimeout(absl::Seconds(20)))
      << "async acquisition never completed after session loss";
  EXPECT_FALSE(c.status().ok());
  EXPECT_TRUE(IsSessionLost(c.status()) || absl::IsAborted(c.status())) << c.status();
  ASSERT_TRUE(Eventually([&] { return session->state() == SessionState::kConnected && session->generation() == 2; }));
  ASSERT_TRUE(held->Release().ok());
  // The new generation must not queue the old attempt again.
  Drain(*session);
  Drain(*session);
  EXPECT_EQ(Children(path), 0u) << ChildList(path);
  EXPECT_EQ(c.calls.load(), 1);
  {
    absl::MutexLock l(&gmu);
    granted.clear();
  }
  lock->reset();
}

// One session hosts several recipes. Its expiry must not silence the
// recipes that survive it: a group watch hears later joins, an election
// rejoins and leads, and a new async acquisition on the new generation is
// delivered exactly once when the holder releases.
TEST_F(SessionLossCallbacksTest, RecipesOnOneSessionAllRecoverFromItsExpiry) {
  const std::string group = Path("group"), elect = Path("elect"), lockp = Path("lock");
  auto session = NewSession();

  absl::Mutex mu;
  std::vector<size_t> lists;
  auto watch = GroupWatch::Create(*session, group, [&](const std::vector<GroupMemberInfo>& m) {
    absl::MutexLock l(&mu);
    lists.push_back(m.size());
  });
  ASSERT_TRUE(watch.ok()) << watch.status();

  std::atomic<int> lead_changes{0};
  ElectionOptions eo;
  eo.id = "solo";
  eo.on_change = [&](Leadership) { lead_changes++; };
  auto election = LeaderElection::Create(*session, elect, eo);
  ASSERT_TRUE(election.ok());
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());

  auto member = GroupMember::Create(admin(), group, GroupOptions{"m1", "", {}});
  ASSERT_TRUE(member.ok());
  ASSERT_TRUE((*member)->Join().ok());
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return !lists.empty() && lists.back() == 1;
  }));

  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(Eventually([&] { return session->generation() == 2 && session->state() == SessionState::kConnected; }));

  // Election: leads again on the new generation.
  EXPECT_TRUE((*election)->AwaitLeadership(absl::Seconds(20)).ok()) << "election silenced after expiry";
  EXPECT_EQ(Children(elect), 1u);

  // Group watch: still hears a join after expiry.
  auto member2 = GroupMember::Create(admin(), group, GroupOptions{"m2", "", {}});
  ASSERT_TRUE(member2.ok());
  ASSERT_TRUE((*member2)->Join().ok());
  EXPECT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return !lists.empty() && lists.back() == 2;
  })) << "group watch deaf after the session's expiry";

  // Lock on the new generation: one completion when the holder releases.
  auto holder = ExclusiveLock::Create(admin(), lockp);
  auto held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto lock = ExclusiveLock::Create(*session, lockp);
  Completion c;
  std::unique_ptr<LockGuard> got;
  absl::Mutex gm;
  (*lock)->AcquireAsync([&](absl::StatusOr<LockGuard> g) {
    c.Record(g.status());
    if (g.ok()) {
      absl::MutexLock l(&gm);
      got = std::make_unique<LockGuard>(std::move(*g));
    }
  });
  ASSERT_TRUE(Eventually([&] { return Children(lockp) == 2; }));
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(c.done.WaitForNotificationWithTimeout(absl::Seconds(20))) << "lock waiter never woken";
  EXPECT_TRUE(c.status().ok()) << c.status();
  Drain(*session);
  EXPECT_EQ(c.calls.load(), 1);
  {
    absl::MutexLock l(&gm);
    if (got) {
      EXPECT_TRUE(got->Release().ok());
    }
    got.reset();
  }
  ASSERT_TRUE((*member)->Leave().ok());
  ASSERT_TRUE((*member2)->Leave().ok());
  ASSERT_TRUE((*election)->Leave().ok());
  lock->reset();
  election->reset();
  watch->reset();
}

// Waiters of every kind whose session is disconnected (not expired) while
// the holder releases: the watch event must reach them after reconnecting
// (no stale watch, no silenced waiter), each exactly once.
TEST_F(SessionLossCallbacksProxiedTest, WaitersWokenByAReleaseDuringTheirDisconnection) {
  const std::string lockp = Path("lock"), semp = Path("sem"), elect = Path("elect"),
                    dbar = Path("dbar"), group = Path("group");
  auto xl = ExclusiveLock::Create(admin(), lockp);
  auto xg = (*xl)->Acquire(absl::Seconds(10));
  auto xs = Semaphore::Create(admin(), semp, 2);
  auto sg = (*xs)->Acquire(2, absl::Seconds(10));
  ElectionOptions leo;
  leo.id = "leader";
  auto leader = LeaderElection::Create(admin(), elect, leo);
  ASSERT_TRUE((*leader)->Join().ok());
  ASSERT_TRUE((*leader)->AwaitLeadership(absl::Seconds(10)).ok());
  ASSERT_TRUE(xg.ok() && sg.ok());

  SessionOptions options = ProxiedOptions();
  options.session_timeout = absl::Seconds(10);
  auto session = NewSession(options);
  testing::StateRecorder states(*session);
  auto lock = ExclusiveLock::Create(*session, lockp);
  auto sem = Semaphore::Create(*session, semp, 2);
  std::atomic<int> leads{0};
  ElectionOptions eo;
  eo.id = "follower";
  eo.on_change = [&](Leadership l) {
    if (l == Leadership::kLeader) leads++;
  };
  auto election = LeaderElection::Create(*session, elect, eo);
  auto dbarrier = DoubleBarrier::Create(*session, dbar, "in", 2);
  absl::Mutex mu;
  std::vector<size_t> lists;
  auto watch = GroupWatch::Create(*session, group, [&](const std::vector<GroupMemberInfo>& m) {
    absl::MutexLock l(&mu);
    lists.push_back(m.size());
  });
  ASSERT_TRUE(watch.ok());

  Completion c_lock, c_sem;
  std::unique_ptr<LockGuard> g_lock, g_sem;
  absl::Mutex gmu;
  (*lock)->AcquireAsync([&](absl::StatusOr<LockGuard> g) {
    c_lock.Record(g.status());
    if (g.ok()) {
      absl::MutexLock l(&gmu);
      g_lock = std::make_unique<LockGuard>(std::move(*g));
    }
  });
  (*sem)->AcquireAsync(1, [&](absl::StatusOr<LockGuard> g) {
    c_sem.Record(g.status());
    if (g.ok()) {
      absl::MutexLock l(&gmu);
      g_sem = std::make_unique<LockGuard>(std::move(*g));
    }
  });
  ASSERT_TRUE((*election)->Join().ok());
  auto f_dbar = std::async(std::launch::async, [&] { return (*dbarrier)->Enter(absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] {
    return Children(lockp) == 2 && Children(semp) == 2 && Children(elect) == 2 && Children(dbar) == 1;
  }));
  ASSERT_TRUE(Eventually([&] { absl::MutexLock l(&mu); return !lists.empty(); }) ||
              true);  // a group that does not exist yet may report nothing

  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(states.WaitFor(SessionState::kSuspended, 1).has_value());
  // Everything changes while the waiter's session cannot hear.
  ASSERT_TRUE(xg->Release().ok());
  ASSERT_TRUE(sg->Release().ok());
  ASSERT_TRUE((*leader)->Leave().ok());
  auto other = DoubleBarrier::Create(admin(), dbar, "other", 2);
  auto f_other = std::async(std::launch::async, [&] { return (*other)->Enter(absl::Seconds(60)); });
  auto member = GroupMember::Create(admin(), group, GroupOptions{"m", "", {}});
  ASSERT_TRUE((*member)->Join().ok());
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();
  ASSERT_TRUE(states.WaitFor(SessionState::kReconnected, 1).has_value());

  EXPECT_TRUE(c_lock.done.WaitForNotificationWithTimeout(absl::Seconds(20))) << "lock waiter silenced";
  EXPECT_TRUE(c_sem.done.WaitForNotificationWithTimeout(absl::Seconds(20))) << "semaphore waiter silenced";
  EXPECT_TRUE((*election)->AwaitLeadership(absl::Seconds(20)).ok()) << "follower never led";
  ASSERT_TRUE(Ready(f_dbar, absl::Seconds(30))) << "double barrier member silenced";
  EXPECT_TRUE(f_dbar.get().ok());
  ASSERT_TRUE(Ready(f_other, absl::Seconds(30)));
  EXPECT_TRUE(f_other.get().ok());
  EXPECT_TRUE(Eventually([&] { absl::MutexLock l(&mu); return !lists.empty() && lists.back() == 1; }))
      << "group watch silenced";
  EXPECT_TRUE(c_lock.status().ok()) << c_lock.status();
  EXPECT_TRUE(c_sem.status().ok()) << c_sem.status();
  Drain(*session);
  EXPECT_EQ(c_lock.calls.load(), 1);
  EXPECT_EQ(c_sem.calls.load(), 1);
  EXPECT_EQ(leads.load(), 1);
  {
    absl::MutexLock l(&gmu);
    if (g_lock) {
      EXPECT_TRUE(g_lock->Release().ok());
    }
    if (g_sem) {
      EXPECT_TRUE(g_sem->Release().ok());
    }
    g_lock.reset();
    g_sem.reset();
  }
  auto l1 = std::async(std::launch::async, [&] { return (*dbarrier)->Leave(absl::Seconds(30)); });
  EXPECT_TRUE((*other)->Leave(absl::Seconds(30)).ok());
  EXPECT_TRUE(l1.get().ok());
  ASSERT_TRUE((*member)->Leave().ok());
  ASSERT_TRUE((*election)->Leave().ok());
  watch->reset();
  election->reset();
}

// An async acquisition cancelled while it is being granted: exactly one
// completion each time; a grant delivered OK is held; nothing is left.
TEST_F(SessionLossCallbacksTest, CancelRacingGrantCompletesExactlyOnce) {
  const std::string path = Path("lock");
  auto session = NewSession();
  auto holder = ExclusiveLock::Create(admin(), path);
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(round);
    auto held = (*holder)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held.ok());
    auto lock = ExclusiveLock::Create(*session, path);
    Completion c;
    std::unique_ptr<LockGuard> got;
    absl::Mutex gm;
    (*lock)->AcquireAsync([&](absl::StatusOr<LockGuard> g) {
      const absl::Status status = g.status();
      if (g.ok()) {
        EXPECT_TRUE(g->held());
        absl::MutexLock l(&gm);
        got = std::make_unique<LockGuard>(std::move(*g));
      }
      // Only once the guard is kept: the test releases what `got` holds
      // after `done` (recorded first, a granted guard could be kept after
      // the test looked, and its node stayed: seen once in 40 rounds).
      c.Record(status);
    });
    ASSERT_TRUE(Eventually([&] { return Children(path) == 2; }));
    held->ReleaseAsync([](absl::Status) {});
    if (round % 2) absl::SleepFor(absl::Microseconds(round * 50));  // vary the race's phase
    (*lock)->Cancel();
    ASSERT_TRUE(c.done.WaitForNotificationWithTimeout(absl::Seconds(20)));
    EXPECT_TRUE(c.status().ok() || absl::IsCancelled(c.status())) << c.status();
    Drain(*session);
    Drain(admin());
    EXPECT_EQ(c.calls.load(), 1);
    {
      absl::MutexLock l(&gm);
      if (got) {
        EXPECT_TRUE(got->Release().ok());
      }
      got.reset();
    }
    lock->reset();
    ASSERT_TRUE(Eventually([&] { return Children(path) == 0; })) << ChildList(path);
  }
  EXPECT_TRUE(testing::WatchedPaths(*session, root()).empty());
}

// A double-barrier member whose session expires while it waits in Leave
// has left (documented): its Leave does not hang, and the other member's
// Leave completes.
TEST_F(SessionLossCallbacksTest, DoubleBarrierExpiryDuringLeaveCountsAsLeft) {
  const std::string dbar = Path("dbar");
  auto s1 = NewSession();
  auto b1 = DoubleBarrier::Create(*s1, dbar, "one", 2);
  auto b2 = DoubleBarrier::Create(admin(), dbar, "two", 2);
  auto e1 = std::async(std::launch::async, [&] { return (*b1)->Enter(absl::Seconds(30)); });
  ASSERT_TRUE((*b2)->Enter(absl::Seconds(30)).ok());
  ASSERT_TRUE(Ready(e1));
  ASSERT_TRUE(e1.get().ok());
  // "two" leaves first and waits for "one"; "one" is expired meanwhile.
  auto l2 = std::async(std::launch::async, [&] { return (*b2)->Leave(absl::Seconds(30)); });
  // Leave is under way once "two" watches a node under the barrier (the
  // lowest member keeps its node and watches the highest).
  ASSERT_TRUE(Eventually([&] { return !testing::WatchedPaths(admin(), dbar).empty(); }));
  ASSERT_TRUE(testing::ExpireSession(*s1).ok());
  ASSERT_TRUE(Ready(l2)) << "the remaining member's Leave hung after the other expired";
  EXPECT_TRUE(l2.get().ok());
  auto l1 = std::async(std::launch::async, [&] { return (*b1)->Leave(absl::Seconds(30)); });
  ASSERT_TRUE(Ready(l1)) << "the expired member's Leave hung";
  absl::Status s = l1.get();
  std::cerr << "expired member's Leave: " << s << "\n";
  EXPECT_TRUE(Eventually([&] { return Children(dbar) == 0; }));
  b1->reset();
  b2->reset();
}

}  // namespace
}  // namespace zkr
