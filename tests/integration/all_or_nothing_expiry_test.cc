// The semaphore's and the multi-lock's all-or-nothing promises under
// session expiry and a partition that ends in loss: a grant is lost whole
// and reported once, never granted across generations, and a waiter behind
// an expired one is granted.
#include <atomic>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/recipe_runs_fixture.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::Eventually;
using testing::Ready;

class AllOrNothingExpiryTest : public testing::RecipeRunsTest {};
class AllOrNothingExpiryProxiedTest : public testing::ProxiedRecipeRunsTest {};

// Strict FIFO semaphore (N=3): B holds 2; A (another session) waits for 2;
// C (a third) asks 1 behind A and must wait (FIFO). A's session expires:
// A fails (session lost), and C, whose predecessor vanished with the
// session, is granted. Never more than 3 leases, never a grant to A.
TEST_F(AllOrNothingExpiryTest, SemaphoreWaiterBehindAnExpiredWaiterIsGranted) {
  const std::string path = Path("sem");
  auto b = Semaphore::Create(admin(), path, 3);
  auto bg = (*b)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(bg.ok());
  auto sa = NewSession();
  auto sc = NewSession();
  auto a = Semaphore::Create(*sa, path, 3);
  auto c = Semaphore::Create(*sc, path, 3);
  auto fa = std::async(std::launch::async, [&] { return (*a)->Acquire(2, absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] { return Children(path) == 2; }));
  auto fc = std::async(std::launch::async, [&] { return (*c)->Acquire(1, absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] { return Children(path) == 3; }));
  EXPECT_FALSE(Ready(fc, absl::Milliseconds(200))) << "C passed A (not FIFO)";
  ASSERT_TRUE(testing::ExpireSession(*sa).ok());
  ASSERT_TRUE(Ready(fa, absl::Seconds(20))) << "A's Acquire did not end on session loss";
  auto ra = fa.get();
  EXPECT_FALSE(ra.ok());
  ASSERT_TRUE(Ready(fc, absl::Seconds(20))) << "C never granted after A's session expired";
  auto rc = fc.get();
  EXPECT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(Children(path), 2u) << "B's and C's nodes only";
  if (rc.ok()) {
    EXPECT_TRUE(rc->Release().ok());
  }
  ASSERT_TRUE(bg->Release().ok());
  a->reset();
  c->reset();
}

// A grant of k leases whose session expires is lost as a whole: the guard
// reports kLost once, and all N leases become free for another session.
TEST_F(AllOrNothingExpiryTest, SemaphoreGrantLostWholeOnExpiry) {
  const std::string path = Path("sem");
  auto session = NewSession();
  std::atomic<int> lost{0};
  LockOptions options;
  options.on_state_change = [&](LockState s) {
    if (s == LockState::kLost) lost++;
  };
  auto a = Semaphore::Create(*session, path, 3, options);
  auto ag = (*a)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(ag.ok());
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(Eventually([&] { return ag->state() == LockState::kLost; }));
  auto c = Semaphore::Create(admin(), path, 3);
  auto cg = (*c)->Acquire(3, absl::Seconds(20));
  EXPECT_TRUE(cg.ok()) << cg.status();
  Drain(*session);
  EXPECT_EQ(lost.load(), 1);
  EXPECT_TRUE(ag->Release().ok());
  // A second grant through A on the new generation waits behind C.
  auto again = (*a)->TryAcquire(1);
  EXPECT_TRUE(absl::IsDeadlineExceeded(again.status())) << again.status();
  if (cg.ok()) {
    EXPECT_TRUE(cg->Release().ok());
  }
  auto third = (*a)->Acquire(3, absl::Seconds(10));
  EXPECT_TRUE(third.ok()) << third.status();
  if (third.ok()) {
    EXPECT_TRUE(third->Release().ok());
  }
}

// A MultiLock grant whose session expires: on_state_change reports the
// combined kLost exactly once (not once per part), every part is free for
// another session, and the MultiLock can be acquired again on the new
// generation.
TEST_F(AllOrNothingExpiryTest, MultiLockGrantLostOnceOnExpiry) {
  const std::string a = Path("a"), b = Path("b"), c = Path("c");
  auto session = NewSession();
  absl::Mutex mu;
  std::vector<LockState> seen;
  LockOptions options;
  options.on_state_change = [&](LockState s) {
    absl::MutexLock l(&mu);
    seen.push_back(s);
  };
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kRead}, {c, LockMode::kWrite}}, options);
  ASSERT_TRUE(multi.ok());
  auto held = (*multi)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(Eventually([&] { return held->state() == LockState::kLost; }));
  auto other = MultiLock::Create(admin(), {{a, LockMode::kWrite}, {b, LockMode::kWrite}, {c, LockMode::kWrite}});
  auto og = (*other)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(og.ok()) << og.status();
  Drain(*session);
  {
    absl::MutexLock l(&mu);
    int losts = 0;
    for (auto s : seen) losts += s == LockState::kLost;
    EXPECT_EQ(losts, 1) << "kLost reported " << losts << " times";
    EXPECT_FALSE(!seen.empty() && seen.back() != LockState::kLost) << "state after kLost";
  }
  EXPECT_TRUE(held->Release().ok());
  ASSERT_TRUE(og->Release().ok());
  auto again = (*multi)->Acquire(absl::Seconds(20));
  EXPECT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(Children(a) + Children(b) + Children(c), 3u);
  if (again.ok()) {
    EXPECT_TRUE(again->Release().ok());
  }
}

// The multi-lock's session expires while the first part is held and the
// last is awaited, and the session is back (generation 2) before the last
// part frees: Acquire must fail (the first part was lost), never return a
// guard, and leave no node of the new generation.
TEST_F(AllOrNothingExpiryTest, MultiLockNeverGrantsAcrossGenerations) {
  const std::string a = Path("a"), b = Path("b");
  auto blocker = ExclusiveLock::Create(admin(), b);
  auto bg = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(bg.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}});
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 1 && Children(b) == 2; }));
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(Eventually([&] { return session->generation() == 2 && session->state() == SessionState::kConnected; }));
  ASSERT_TRUE(bg->Release().ok());
  ASSERT_TRUE(Ready(pending, absl::Seconds(20)));
  auto r = pending.get();
  EXPECT_FALSE(r.ok()) << "granted across a session loss";
  if (!r.ok()) {
    EXPECT_TRUE(absl::IsAborted(r.status())) << r.status();
  }
  if (r.ok()) (void)r->Release();
  EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 0; }));
  multi->reset();
}

// Partition (not expiry at first) while a multi-lock and a semaphore wait;
// the blocker releases during the partition, so the grants would come; the
// partition lasts until the lease runs out (LOST). Neither may return a
// grant: all or nothing, and nothing is left.
TEST_F(AllOrNothingExpiryProxiedTest, GrantsPendingAcrossAPartitionThatEndsInLossAreRefused) {
  const std::string a = Path("a"), b = Path("b"), semp = Path("sem");
  auto bl = ExclusiveLock::Create(admin(), b);
  auto bg = (*bl)->Acquire(absl::Seconds(10));
  auto xs = Semaphore::Create(admin(), semp, 3);
  auto sg = (*xs)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(bg.ok() && sg.ok());
  auto session = NewSession(ProxiedOptions());
  testing::StateRecorder states(*session);
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}});
  auto sem = Semaphore::Create(*session, semp, 3);
  auto fm = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  auto fs = std::async(std::launch::async, [&] { return (*sem)->Acquire(2, absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 1 && Children(b) == 2 && Children(semp) == 2; }));
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(states.WaitFor(SessionState::kSuspended, 1).has_value());
  ASSERT_TRUE(bg->Release().ok());
  ASSERT_TRUE(sg->Release().ok());
  ASSERT_TRUE(states.WaitFor(SessionState::kLost, 1, absl::Seconds(30)).has_value());
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();
  ASSERT_TRUE(Ready(fm, absl::Seconds(30))) << "multi-lock hung";
  ASSERT_TRUE(Ready(fs, absl::Seconds(30))) << "semaphore hung";
  auto rm = fm.get();
  auto rs = fs.get();
  std::cerr << "multi: " << rm.status() << "\nsem: " << rs.status() << "\n";
  EXPECT_FALSE(rm.ok()) << "multi-lock granted across a session loss";
  EXPECT_FALSE(rs.ok()) << "semaphore granted across a session loss";
  if (rm.ok()) {
    EXPECT_TRUE(rm->held()) << "an OK multi-lock guard that is not held";
    (void)rm->Release();
  }
  if (rs.ok()) {
    EXPECT_TRUE(rs->held()) << "an OK semaphore guard that is not held";
    (void)rs->Release();
  }
  EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 0 && Children(semp) == 0; }))
      << "left: a=" << Children(a) << " b=" << Children(b) << " sem=" << Children(semp);
  multi->reset();
  sem->reset();
}

}  // namespace
}  // namespace zkr
