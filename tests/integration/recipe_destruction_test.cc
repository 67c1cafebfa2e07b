// Recipe objects destroyed at awkward moments: inside their own completion
// or state callback, inside a group watch's callback, from another thread
// while a call waits, and while the session is disconnected. No hang, no
// crash, no node or server watch left.
#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/recipe_runs_fixture.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::Eventually;
using testing::Ready;

class RecipeDestructionTest : public testing::RecipeRunsTest {};
class RecipeDestructionProxiedTest : public testing::ProxiedRecipeRunsTest {};

// The lock object and its grant are destroyed from inside the grant's own
// completion (on the dispatcher thread): no hang, no crash, nothing left.
TEST_F(RecipeDestructionTest, LockDestroyedInsideItsOwnCompletion) {
  const std::string path = Path("lock");
  auto holder = ExclusiveLock::Create(admin(), path);
  auto held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto session = NewSession();
  auto created = ExclusiveLock::Create(*session, path);
  ASSERT_TRUE(created.ok());
  auto* lock = created->release();
  absl::Notification finished;
  std::atomic<int> calls{0};
  lock->AcquireAsync([&, lock](absl::StatusOr<LockGuard> g) {
    calls++;
    EXPECT_TRUE(g.ok()) << g.status();
    if (g.ok()) {
      EXPECT_TRUE(g->Release().ok());
    }
    delete lock;
    finished.Notify();
  });
  ASSERT_TRUE(Eventually([&] { return Children(path) == 2; }));
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(finished.WaitForNotificationWithTimeout(absl::Seconds(20)))
      << "destroying the lock inside its completion hung";
  Drain(*session);
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(Children(path), 0u);
  EXPECT_TRUE(testing::WatchedPaths(*session, root()).empty());
}

// A lock whose hold is lost (session expired) is destroyed, guard and all,
// from inside its own on_state_change(kLost).
TEST_F(RecipeDestructionTest, LockAndGuardDestroyedInsideOnStateChangeLost) {
  const std::string path = Path("lock");
  auto session = NewSession();
  std::unique_ptr<ExclusiveLock> lock;
  std::unique_ptr<LockGuard> guard;
  absl::Notification destroyed;
  std::atomic<int> lost_calls{0};
  LockOptions options;
  options.on_state_change = [&](LockState s) {
    if (s != LockState::kLost) return;
    if (lost_calls.fetch_add(1) != 0) return;
    guard.reset();
    lock.reset();
    destroyed.Notify();
  };
  auto created = ExclusiveLock::Create(*session, path, options);
  ASSERT_TRUE(created.ok());
  lock = std::move(*created);
  auto g = lock->Acquire(absl::Seconds(10));
  ASSERT_TRUE(g.ok());
  guard = std::make_unique<LockGuard>(std::move(*g));
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(absl::Seconds(20)))
      << "kLost not reported, or destroying inside it hung";
  Drain(*session);
  EXPECT_EQ(lost_calls.load(), 1);
  EXPECT_EQ(Children(path), 0u);
}

// A Semaphore destroyed from another thread while Acquire is waiting on
// it: Acquire returns Cancelled, no node and no server watch is left.
TEST_F(RecipeDestructionTest, SemaphoreDestroyedWhileAcquireWaits) {
  const std::string path = Path("sem");
  auto holder = Semaphore::Create(admin(), path, 2);
  auto held = (*holder)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto session = NewSession();
  auto sem = Semaphore::Create(*session, path, 2);
  ASSERT_TRUE(sem.ok());
  auto pending = std::async(std::launch::async, [&] { return (*sem)->Acquire(1).status(); });
  ASSERT_TRUE(Eventually([&] { return Children(path) == 2; }));
  sem->reset();
  ASSERT_TRUE(Ready(pending, absl::Seconds(20))) << "Acquire hung after the semaphore was destroyed";
  absl::Status s = pending.get();
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
  EXPECT_TRUE(Eventually([&] { return Children(path) == 1; })) << "waiter's node left";
  EXPECT_TRUE(testing::WatchedPaths(*session, root()).empty())
      << absl::StrJoin(testing::WatchedPaths(*session, root()), ",");
  ASSERT_TRUE(held->Release().ok());
}

// The same for a MultiLock (documented: Cancelled), a SharedLock reader and
// a DoubleBarrier cannot be destroyed mid-call, so: MultiLock.
TEST_F(RecipeDestructionTest, MultiLockDestroyedWhileAcquireWaitsLeavesNoWatch) {
  const std::string a = Path("a"), b = Path("b");
  auto blocker = ExclusiveLock::Create(admin(), b);
  auto held = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kRead}});
  ASSERT_TRUE(multi.ok());
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire().status(); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 1 && Children(b) == 2; }));
  multi->reset();
  ASSERT_TRUE(Ready(pending, absl::Seconds(20)));
  absl::Status s = pending.get();
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
  EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 1; }));
  EXPECT_TRUE(testing::WatchedPaths(*session, root()).empty())
      << absl::StrJoin(testing::WatchedPaths(*session, root()), ",");
  ASSERT_TRUE(held->Release().ok());
}

// A GroupMember destroyed from inside a GroupWatch callback of its own
// session (~GroupMember Leave()s, a synchronous delete on the dispatcher).
TEST_F(RecipeDestructionTest, GroupMemberDestroyedInsideGroupWatchCallback) {
  const std::string group = Path("group");
  auto session = NewSession();
  std::unique_ptr<GroupMember> member;
  absl::Mutex mu;
  absl::Notification destroyed;
  std::atomic<bool> armed{false};
  auto watch = GroupWatch::Create(*session, group, [&](const std::vector<GroupMemberInfo>& m) {
    if (!armed.load() || m.size() != 2) return;
    if (destroyed.HasBeenNotified()) return;
    absl::MutexLock l(&mu);
    member.reset();
    destroyed.Notify();
  });
  ASSERT_TRUE(watch.ok());
  {
    auto created = GroupMember::Create(*session, group, GroupOptions{"mine", "", {}});
    ASSERT_TRUE(created.ok());
    absl::MutexLock l(&mu);
    member = std::move(*created);
    ASSERT_TRUE(member->Join().ok());
  }
  armed = true;
  auto other = GroupMember::Create(admin(), group, GroupOptions{"other", "", {}});
  ASSERT_TRUE((*other)->Join().ok());
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "destroying a member inside a watch callback hung";
  EXPECT_TRUE(Eventually([&] { return Children(group) == 1; }));
  ASSERT_TRUE((*other)->Leave().ok());
  watch->reset();
}

// A GroupWatch destroyed inside its own on_change (documented as allowed).
TEST_F(RecipeDestructionTest, GroupWatchDestroyedInsideItsOwnCallback) {
  const std::string group = Path("group");
  auto session = NewSession();
  std::unique_ptr<GroupWatch> watch;
  absl::Mutex mu;
  absl::Notification destroyed;
  std::atomic<int> after{0};
  auto created = GroupWatch::Create(*session, group, [&](const std::vector<GroupMemberInfo>& m) {
    if (destroyed.HasBeenNotified()) {
      after++;
      return;
    }
    if (m.size() != 1) return;
    absl::MutexLock l(&mu);
    watch.reset();
    destroyed.Notify();
  });
  ASSERT_TRUE(created.ok());
  {
    absl::MutexLock l(&mu);
    watch = std::move(*created);
  }
  auto member = GroupMember::Create(admin(), group, GroupOptions{"m", "", {}});
  ASSERT_TRUE((*member)->Join().ok());
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(absl::Seconds(20)));
  auto member2 = GroupMember::Create(admin(), group, GroupOptions{"m2", "", {}});
  ASSERT_TRUE((*member2)->Join().ok());
  Drain(*session);
  Drain(admin());
  EXPECT_EQ(after.load(), 0) << "on_change ran after its watch was destroyed";
  EXPECT_TRUE(Eventually([&] { return testing::WatchedPaths(*session, root()).empty(); },
                         absl::Seconds(5)))
      << absl::StrJoin(testing::WatchedPaths(*session, root()), ",");
  ASSERT_TRUE((*member)->Leave().ok());
  ASSERT_TRUE((*member2)->Leave().ok());
}

// Recipes destroyed while their session is disconnected (a partition,
// healed within the lease): once connected again, nothing is left on the
// server and no watch of the session remains.
TEST_F(RecipeDestructionProxiedTest, RecipesDestroyedWhileDisconnectedLeaveNothing) {
  const std::string lockp = Path("lock"), semp = Path("sem"), group = Path("group"),
                    elect = Path("elect"), dbar = Path("dbar");
  SessionOptions options = ProxiedOptions();
  options.session_timeout = absl::Seconds(10);
  auto session = NewSession(options);
  testing::StateRecorder states(*session);

  auto lock = ExclusiveLock::Create(*session, lockp);
  auto guard = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(guard.ok());
  auto sem = Semaphore::Create(*session, semp, 3);
  auto lease = (*sem)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(lease.ok());
  auto member = GroupMember::Create(*session, group, GroupOptions{"m", "", {}});
  ASSERT_TRUE((*member)->Join().ok());
  ElectionOptions eo;
  eo.id = "c";
  auto election = LeaderElection::Create(*session, elect, eo);
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  auto barrier = DoubleBarrier::Create(*session, dbar, "x", 1);
  ASSERT_TRUE((*barrier)->Enter(absl::Seconds(10)).ok());

  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(states.WaitFor(SessionState::kSuspended, 1).has_value());

  // Every destruction starts while the connection is down (each on its
  // own thread: most block until the delete is done).
  std::atomic<int> started{0};
  std::vector<std::thread> destroyers;
  std::vector<std::function<void()>> jobs = {
      [&] { guard = absl::CancelledError(); lock->reset(); },
      [&] { lease = absl::CancelledError(); sem->reset(); },
      [&] { member->reset(); },
      [&] { election->reset(); },
      [&] { barrier->reset(); },
  };
  for (auto& job : jobs) destroyers.emplace_back([&started, &job] { started++; job(); });
  ASSERT_TRUE(Eventually([&] { return started.load() == 5; }));
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();  // the blackholed connection would only time out
  for (auto& t : destroyers) t.join();
  ASSERT_EQ(session->generation(), 1u) << "the session was lost: the test did not test";
  EXPECT_TRUE(Eventually([&] {
    return Children(lockp) == 0 && Children(semp) == 0 && Children(group) == 0 &&
           Children(elect) == 0 && Children(dbar) == 0;
  })) << "nodes left after destruction while disconnected: lock=" << Children(lockp)
         << " sem=" << Children(semp) << " group=" << Children(group)
         << " elect=" << Children(elect) << " dbar=" << Children(dbar)
         << " generation=" << session->generation();
  EXPECT_TRUE(testing::WatchedPaths(*session, root()).empty())
      << absl::StrJoin(testing::WatchedPaths(*session, root()), ",");
}

}  // namespace
}  // namespace zkr
