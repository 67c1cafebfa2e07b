// An independent adversarial review (helper-59): forced revocation (bad
// graces, two requesters at once, a cut-off holder, a waiter), the standard
// library adapters (past deadlines, session loss while held), MultiLock under
// lost replies, and watch bookkeeping across session expiry on one session.
// Each test names the promise it attacks.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/revocation.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/std_lock.h"

namespace zkr {
namespace {

using testing::ClientFaults;
using testing::Eventually;
using testing::FaultRule;
using testing::TcpProxy;
using testing::WatchedPaths;

std::vector<std::string> KidsOf(Session& admin, const std::string& path) {
  auto children = admin.GetChildren(path);
  return children.ok() ? *children : std::vector<std::string>{};
}

bool NoRequestNodes(Session& admin, const std::string& path) {
  for (const std::string& child : KidsOf(admin, path)) {
    if (absl::EndsWith(child, ".revoke")) return false;
  }
  return true;
}

LockOptions Listening(std::function<void(const RevokeRequest&)> on_request) {
  LockOptions options;
  options.own_node_watch_delay = absl::ZeroDuration();
  options.on_revoke_request = std::move(on_request);
  return options;
}

// Polls a guard's state; records the (monotonic, taken before the read)
// time of the last read that said kHeld.
class HeldLedger {
 public:
  explicit HeldLedger(const LockGuard& guard) : guard_(guard) {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        const auto t0 = std::chrono::steady_clock::now();
        if (guard_.state() == LockState::kHeld) {
          absl::MutexLock lock(&mu_);
          last_held_ = t0;
        }
        std::this_thread::yield();
      }
    });
  }
  ~HeldLedger() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::chrono::steady_clock::time_point last_held() {
    absl::MutexLock lock(&mu_);
    return last_held_;
  }

 private:
  const LockGuard& guard_;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  std::chrono::steady_clock::time_point last_held_{};
  std::thread thread_;
};

// Deletes the (empty) lock directories the recipes leave as containers;
// anything else left is reported by ZkTest::TearDown.
template <class Base>
class EmptyDirsDeleted : public Base {
 protected:
  void TearDown() override {
    for (const std::string& kid : KidsOf(this->admin(), this->root())) {
      const std::string dir = this->root() + "/" + kid;
      if (KidsOf(this->admin(), dir).empty()) (void)this->admin().Delete(dir);
    }
    Base::TearDown();
  }
};

class Review59Test : public EmptyDirsDeleted<testing::ZkTest> {};
class Review59ProxiedTest : public EmptyDirsDeleted<testing::ProxiedZkTest> {};

// ---- Forced revocation ---------------------------------------------------------------

// Promise (revocation.h): the request's data is "the grace on a first line,
// revoke_grace_ms=N, none if infinite, then RevokeOptions::reason"; a holder
// "is told at once ... with the grace (RevokeRequest::grace: its deadline)";
// lock_options.h: RevokeRequest::grace "Infinite: it never forces, or did
// not say"; RevokeRequest::reason "what the requester wrote". A negative
// grace forces at once, so the holder must not be told "never forces", and
// its reason must be the requester's reason.
TEST_F(Review59Test, NegativeGraceIsNotToldAsNeverForces) {
  const std::string path = Path("neg");
  auto holder_session = NewSession();
  absl::Mutex mu;
  std::vector<RevokeRequest> heard;
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening([&](const RevokeRequest& r) {
                                      absl::MutexLock l(&mu);
                                      heard.push_back(r);
                                    }));
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  auto requester = NewSession();
  RevokeOptions ask;
  ask.grace = absl::Seconds(-5);
  ask.reason = "why";
  auto revoked = std::async(std::launch::async, [&] { return Revoke(*requester, path, ask); });
  ASSERT_TRUE(Eventually([&] { return held->state() == LockState::kLost; }))
      << "a negative grace did not force";
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return !heard.empty();
  }));
  {
    absl::MutexLock l(&mu);
    EXPECT_NE(heard[0].grace, absl::InfiniteDuration())
        << "the holder was told 'never forces' by a requester that forces at once";
    EXPECT_EQ(heard[0].reason, "why") << "the reason carries the grace line";
  }
  (void)held->Release();
  ASSERT_EQ(revoked.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto outcomes = revoked.get();
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 1u);
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_TRUE(NoRequestNodes(admin(), path));
  ASSERT_TRUE(mine->Release().ok());
  EXPECT_THAT(WatchedPaths(*requester, path), ::testing::IsEmpty());
  EXPECT_THAT(WatchedPaths(*holder_session, path), ::testing::IsEmpty());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (revocation.h): "after a forced revocation ... nobody holds beside
// it meanwhile"; "The request nodes Revoke made are deleted before it
// returns". Two requesters force the same holder (grace 0) at once; the
// holder never lets go. A ledger of the holder's HELD reads: none after the
// waiter's grant. Both Revokes end; no request node nor watch is left.
TEST_F(Review59Test, TwoForcedRevokesAtOnceNeverOverlapAndLeaveNothing) {
  const std::string path = Path("twice");
  auto holder_session = NewSession();
  std::atomic<int> asked{0};
  auto lock = ExclusiveLock::Create(*holder_session, path,
                                    Listening([&](const RevokeRequest&) { ++asked; }));
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  HeldLedger ledger(*held);
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::chrono::steady_clock::time_point granted_at{};
  auto next = std::async(std::launch::async, [&] {
    auto g = (*waiter)->Acquire(absl::Seconds(60));
    granted_at = std::chrono::steady_clock::now();
    return g;
  });
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  auto r1 = NewSession();
  auto r2 = NewSession();
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto a = std::async(std::launch::async, [&] { return Revoke(*r1, path, ask); });
  auto b = std::async(std::launch::async, [&] { return Revoke(*r2, path, ask); });
  ASSERT_EQ(a.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  ASSERT_EQ(b.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto oa = a.get();
  auto ob = b.get();
  ASSERT_TRUE(oa.ok()) << oa.status();
  ASSERT_TRUE(ob.ok()) << ob.status();
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ledger.Stop();
  EXPECT_LT(ledger.last_held(), granted_at) << "the forced holder read HELD after the grant";
  EXPECT_EQ(held->state(), LockState::kLost);
  EXPECT_TRUE(NoRequestNodes(admin(), path)) << absl::StrJoin(KidsOf(admin(), path), ",");
  EXPECT_THAT(WatchedPaths(*r1, path), ::testing::IsEmpty());
  EXPECT_THAT(WatchedPaths(*r2, path), ::testing::IsEmpty());
  (void)held->Release();
  EXPECT_TRUE(admin().Exists(mine->node_path())->has_value());
  ASSERT_TRUE(mine->Release().ok());
  EXPECT_THAT(WatchedPaths(*holder_session, path), ::testing::IsEmpty());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (revocation.h): "A waiter's place is never touched:
// RevokeOptions::node naming a waiter is refused" (FailedPrecondition naming
// the node); no request node is left for it.
TEST_F(Review59Test, RevokingAWaiterIsRefusedAndLeavesNothing) {
  const std::string path = Path("waiter");
  auto holder_session = NewSession();
  auto lock = ExclusiveLock::Create(*holder_session, path);
  auto held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path, Listening([](const RevokeRequest&) {}));
  auto next = (*waiter)->AcquireFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  std::string waiting;
  for (const std::string& kid : KidsOf(admin(), path)) {
    if (path + "/" + kid != held->node_path()) waiting = kid;
  }
  ASSERT_FALSE(waiting.empty());
  RevokeOptions ask;
  ask.node = waiting;
  ask.grace = absl::ZeroDuration();
  auto out = Revoke(admin(), path, ask);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), ::testing::HasSubstr(waiting));
  EXPECT_TRUE(NoRequestNodes(admin(), path));
  EXPECT_EQ(KidsOf(admin(), path).size(), 2u);
  ASSERT_TRUE(held->Release().ok());
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ASSERT_TRUE(mine->Release().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (revocation.h): "a holder cut off from the server, which cannot
// hear the mark, stops reading kHeld before anyone else is let in". The
// holder's connection is blackholed (proxy), Revoke forces with grace 0; a
// ledger of the holder's HELD reads vs the waiter's grant.
TEST_F(Review59ProxiedTest, ACutOffHolderStopsReadingHeldBeforeTheGrant) {
  const std::string path = Path("cut");
  auto holder_session = NewSession(ProxiedOptions());
  ASSERT_TRUE(holder_session);
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening([](const RevokeRequest&) {}));
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  HeldLedger ledger(*held);
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::chrono::steady_clock::time_point granted_at{};
  auto next = std::async(std::launch::async, [&] {
    auto g = (*waiter)->Acquire(absl::Seconds(60));
    granted_at = std::chrono::steady_clock::now();
    return g;
  });
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  proxy_->SetMode(TcpProxy::Mode::kBlackhole);
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto out = Revoke(admin(), path, ask);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  ASSERT_EQ(next.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ledger.Stop();
  EXPECT_LT(ledger.last_held(), granted_at) << "the cut-off holder read HELD after the grant";
  EXPECT_NE(held->state(), LockState::kHeld);
  proxy_->SetMode(TcpProxy::Mode::kPass);
  (void)held->Release();
  EXPECT_TRUE(admin().Exists(mine->node_path())->has_value());
  ASSERT_TRUE(mine->Release().ok());
  EXPECT_TRUE(NoRequestNodes(admin(), path));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (revocation.h): forced holders of a semaphore: "nobody holds
// beside it meanwhile"; one outcome per holder. A holder of all 3 leases
// (weight k = 3) never lets go; a waiter for 1 lease is granted only once the
// holder reads LOST (ledger). Nothing is left.
TEST_F(Review59Test, ForcedSemaphoreHolderOfKLeasesNeverOverlapsTheWaiter) {
  const std::string path = Path("semk");
  auto holder_session = NewSession();
  auto sem = Semaphore::Create(*holder_session, path, 3, Listening([](const RevokeRequest&) {}));
  ASSERT_TRUE(sem.ok());
  absl::StatusOr<LockGuard> held = (*sem)->Acquire(3, absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  HeldLedger ledger(*held);
  auto waiter_session = NewSession();
  auto waiter = Semaphore::Create(*waiter_session, path, 3);
  std::chrono::steady_clock::time_point granted_at{};
  auto next = std::async(std::launch::async, [&] {
    auto g = (*waiter)->Acquire(1, absl::Seconds(60));
    granted_at = std::chrono::steady_clock::now();
    return g;
  });
  ASSERT_TRUE(Eventually([&] { return KidsOf(admin(), path).size() >= 2; }));
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto out = Revoke(admin(), path, ask);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].how, RevokeOutcome::How::kForced);
  ASSERT_EQ(next.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ledger.Stop();
  EXPECT_LT(ledger.last_held(), granted_at) << "the forced k-lease holder read HELD after the grant";
  (void)held->Release();
  ASSERT_TRUE(mine->Release().ok());
  EXPECT_TRUE(NoRequestNodes(admin(), path));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
  EXPECT_THAT(WatchedPaths(*holder_session, path), ::testing::IsEmpty());
}

// Promise (revocation.h): mutual exclusion among kHeld holders "holds
// through a forced revocation"; the holder's connection is reset over and
// over (it reconnects to the same session) while Revoke forces with grace 0.
// Ledger: the holder never reads HELD after the waiter's grant.
TEST_F(Review59ProxiedTest, ForcedWhileTheHoldersConnectionKeepsResetting) {
  const std::string path = Path("reset");
  auto holder_session = NewSession(ProxiedOptions());
  ASSERT_TRUE(holder_session);
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening([](const RevokeRequest&) {}));
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  HeldLedger ledger(*held);
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::chrono::steady_clock::time_point granted_at{};
  auto next = std::async(std::launch::async, [&] {
    auto g = (*waiter)->Acquire(absl::Seconds(60));
    granted_at = std::chrono::steady_clock::now();
    return g;
  });
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  std::atomic<bool> stop{false};
  std::thread resetter([&] {
    while (!stop) {
      proxy_->ResetConnections();
      absl::SleepFor(absl::Milliseconds(30));  // fault pacing, not a race cover
    }
  });
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto out = Revoke(admin(), path, ask);
  ASSERT_EQ(next.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  stop = true;
  resetter.join();
  ASSERT_TRUE(out.ok()) << out.status();
  auto mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ledger.Stop();
  EXPECT_LT(ledger.last_held(), granted_at) << "the reconnecting holder read HELD after the grant";
  (void)held->Release();
  EXPECT_TRUE(admin().Exists(mine->node_path())->has_value());
  ASSERT_TRUE(mine->Release().ok());
  EXPECT_TRUE(NoRequestNodes(admin(), path));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (lock_options.h): RevokeRequest::grace is "The requester's grace
// (RevokeOptions::grace)". A huge (finite) grace is told as that, not as
// infinite; the holder releases when asked: "released".
TEST_F(Review59Test, HugeGraceIsToldAndAReleaseEndsRevoke) {
  const std::string path = Path("huge");
  auto holder_session = NewSession();
  std::promise<RevokeRequest> told;
  std::atomic<bool> once{false};
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening([&](const RevokeRequest& r) {
                                      if (!once.exchange(true)) told.set_value(r);
                                    }));
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  RevokeOptions ask;
  ask.grace = absl::Hours(24 * 365 * 100);
  auto revoked = std::async(std::launch::async, [&] { return Revoke(admin(), path, ask); });
  auto f = told.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  RevokeRequest r = f.get();
  EXPECT_EQ(r.grace, ask.grace);
  ASSERT_TRUE(held->Release().ok());
  ASSERT_EQ(revoked.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto out = revoked.get();
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].how, RevokeOutcome::How::kReleased);
  EXPECT_TRUE(NoRequestNodes(admin(), path));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (revocation.h): "A holder whose LockOptions::on_revoke_request is
// set is told at once ... with the grace (RevokeRequest::grace: its
// deadline)"; lock_options.h: grace "Infinite: it never forces". Requester A
// asks with an infinite grace (ask only); while it waits, requester B asks
// the same holder with a 1 s grace. B's request must reach the holder (with
// a finite grace) before B forces it: otherwise the holder, told "never
// forces", is forced without warning.
TEST_F(Review59Test, ASecondRequesterWithAFiniteGraceIsToldBeforeItForces) {
  const std::string path = Path("two_graces");
  auto holder_session = NewSession();
  absl::Mutex mu;
  std::vector<RevokeRequest> heard;
  std::vector<RevokeRequest> heard_before_lost;
  const LockGuard* watched = nullptr;
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening([&](const RevokeRequest& r) {
                                      absl::MutexLock l(&mu);
                                      heard.push_back(r);
                                    }));
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  watched = &*held;
  auto ra = NewSession();
  auto rb = NewSession();
  RevokeOptions ask_a;
  ask_a.grace = absl::InfiniteDuration();
  ask_a.reason = "A: whenever you can";
  auto a = std::async(std::launch::async, [&] { return Revoke(*ra, path, ask_a); });
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return !heard.empty();
  }));
  RevokeOptions ask_b;
  ask_b.grace = absl::Seconds(1);
  ask_b.reason = "B: within a second";
  auto b = std::async(std::launch::async, [&] { return Revoke(*rb, path, ask_b); });
  // Until the hold is LOST, collect what the holder was told.
  ASSERT_TRUE(Eventually([&] { return watched->state() == LockState::kLost; }));
  {
    absl::MutexLock l(&mu);
    heard_before_lost = heard;
  }
  bool told_finite = false;
  std::vector<std::string> seen;
  for (const RevokeRequest& r : heard_before_lost) {
    seen.push_back(absl::StrCat("'", r.reason, "' grace=", absl::FormatDuration(r.grace)));
    if (r.grace != absl::InfiniteDuration()) told_finite = true;
  }
  EXPECT_TRUE(told_finite) << "forced having been told only: " << absl::StrJoin(seen, "; ");
  (void)held->Release();
  ASSERT_EQ(b.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  ASSERT_EQ(a.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto ob = b.get();
  auto oa = a.get();
  ASSERT_TRUE(ob.ok()) << ob.status();
  ASSERT_TRUE(oa.ok()) << oa.status();
  EXPECT_TRUE(NoRequestNodes(admin(), path)) << absl::StrJoin(KidsOf(admin(), path), ",");
  EXPECT_THAT(WatchedPaths(*ra, path), ::testing::IsEmpty());
  EXPECT_THAT(WatchedPaths(*rb, path), ::testing::IsEmpty());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (revocation.h): "a connected holder reports kLost at once" and
// "nobody holds beside it meanwhile", with the holder's process slow to
// react: its on_revoke_request blocks the session's dispatcher thread (up to
// 8 s) while Revoke forces with grace 0. Ledger: no HELD read after the
// waiter's grant.
TEST_F(Review59Test, ForcedWhileTheHoldersCallbackIsSlow) {
  const std::string path = Path("slow");
  auto holder_session = NewSession();
  absl::Notification go;
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening([&](const RevokeRequest&) {
                                      go.WaitForNotificationWithTimeout(absl::Seconds(8));
                                    }));
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  HeldLedger ledger(*held);
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::chrono::steady_clock::time_point granted_at{};
  auto next = std::async(std::launch::async, [&] {
    auto g = (*waiter)->Acquire(absl::Seconds(60));
    granted_at = std::chrono::steady_clock::now();
    return g;
  });
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto out = Revoke(admin(), path, ask);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(next.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ledger.Stop();
  EXPECT_LT(ledger.last_held(), granted_at) << "the slow holder read HELD after the grant";
  go.Notify();
  (void)held->Release();
  EXPECT_TRUE(admin().Exists(mine->node_path())->has_value());
  ASSERT_TRUE(mine->Release().ok());
  EXPECT_TRUE(NoRequestNodes(admin(), path));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// ---- Standard-library adapters --------------------------------------------------------

// Promise (std_lock.h): "try_lock_for(d) and try_lock_until() ... wait at
// most d in all"; a deadline already past is d <= 0: one try. With the
// clock's earliest time point (long past), try_lock_until must return false
// promptly while another session holds.
TEST_F(Review59Test, TryLockUntilAPastTimePointReturnsPromptly) {
  const std::string path = Path("past");
  auto other = NewSession();
  auto other_lock = ExclusiveLock::Create(*other, path);
  auto held = (*other_lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto mine_session = NewSession();
  auto lock = ExclusiveLock::Create(*mine_session, path);
  StdMutex mutex(**lock);
  auto tried = std::async(std::launch::async, [&] {
    return mutex.try_lock_until(std::chrono::steady_clock::time_point::min());
  });
  const bool ready = tried.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!ready) {
    (*lock)->Cancel();  // let it end
    ASSERT_TRUE(held->Release().ok());
    if (tried.wait_for(std::chrono::seconds(20)) == std::future_status::ready && tried.get()) {
      mutex.unlock();
    }
    FAIL() << "try_lock_until(time_point::min()) waited past its (long gone) deadline";
  }
  EXPECT_FALSE(tried.get());
  EXPECT_TRUE(absl::IsDeadlineExceeded(mutex.status())) << mutex.status();
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// The same through std::unique_lock with a system_clock time point far in
// the past (a different clock than the monotonic one).
TEST_F(Review59Test, UniqueLockWithAPastSystemClockDeadlineReturnsPromptly) {
  const std::string path = Path("pastsys");
  auto other = NewSession();
  auto other_lock = ExclusiveLock::Create(*other, path);
  auto held = (*other_lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto mine_session = NewSession();
  auto lock = ExclusiveLock::Create(*mine_session, path);
  StdMutex mutex(**lock);
  auto tried = std::async(std::launch::async, [&] {
    std::unique_lock<StdMutex> u(mutex, std::chrono::system_clock::time_point::min());
    return u.owns_lock();
  });
  const bool ready = tried.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!ready) {
    (*lock)->Cancel();
    ASSERT_TRUE(held->Release().ok());
    tried.wait_for(std::chrono::seconds(20));
    FAIL() << "unique_lock(m, system_clock::time_point::min()) waited past its deadline";
  }
  EXPECT_FALSE(tried.get());
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (std_lock.h): unlock() "never throws ... keeps a failure in
// status()"; lock() throws LockError when the lock cannot be had, else the
// lock is held. After the session expires while held: unlock does not throw,
// the adapter can be locked again on the session's next generation, the new
// hold is HELD, and nothing is left afterwards.
TEST_F(Review59Test, StdMutexUsableAgainAfterItsSessionExpiredWhileHeld) {
  const std::string path = Path("stdexp");
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, path);
  StdMutex mutex(**lock);
  mutex.lock();
  const uint64_t gen = session->generation();
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(Eventually([&] { return mutex.guard().state() == LockState::kLost; }));
  EXPECT_NO_THROW(mutex.unlock());
  ASSERT_TRUE(Eventually([&] {
    return session->generation() > gen && session->state() != SessionState::kConnecting &&
           session->session_id() != 0;
  }));
  std::unique_lock<StdMutex> again(mutex, std::defer_lock);
  bool got = false;
  for (int i = 0; i < 50 && !got; ++i) {  // bounded: the new generation may still be settling
    got = again.try_lock_for(std::chrono::seconds(2));
  }
  ASSERT_TRUE(got) << mutex.status();
  EXPECT_EQ(mutex.guard().state(), LockState::kHeld);
  // Another session sees it taken.
  auto other = NewSession();
  auto other_lock = ExclusiveLock::Create(*other, path);
  auto t = (*other_lock)->TryAcquire();
  EXPECT_TRUE(absl::IsDeadlineExceeded(t.status())) << t.status();
  again.unlock();
  EXPECT_TRUE(mutex.status().ok()) << mutex.status();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
  EXPECT_THAT(WatchedPaths(*session, path), ::testing::IsEmpty());
}

// Promise (std_lock.h): "std::lock and std::scoped_lock over several
// adapters, in any order on any threads, cannot deadlock"; the shared
// adapter's readers "share one read hold (one node) ... the node goes with
// the last of them". A scoped_lock of a StdMutex and a StdSharedMutex
// (write side), against std::shared_lock readers on other threads and a
// remote writer. Nothing left.
TEST_F(Review59Test, ScopedLockMixedWithSharedReadersAndARemoteWriter) {
  const std::string pa = Path("sa");
  const std::string pb = Path("sb");
  auto session = NewSession();
  auto ea = ExclusiveLock::Create(*session, pa);
  auto sb = SharedLock::Create(*session, pb);
  StdMutex ma(**ea);
  StdSharedMutex mb(**sb);
  auto remote_session = NewSession();
  auto remote = SharedLock::Create(*remote_session, pb);
  std::atomic<int> writers_in{0}, readers_in{0};
  std::atomic<bool> overlap{false};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 6; ++i) {
        std::scoped_lock both(mb, ma);
        if (++writers_in != 1 || readers_in != 0) overlap = true;
        --writers_in;
      }
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 6; ++i) {
        std::shared_lock<StdSharedMutex> r(mb);
        ++readers_in;
        if (writers_in != 0) overlap = true;
        --readers_in;
      }
    });
  }
  std::thread remote_writer([&] {
    while (!stop) {
      auto g = (*remote)->AcquireWrite(absl::Seconds(30));
      if (g.ok()) (void)g->Release();
    }
  });
  auto done = std::async(std::launch::async, [&] {
    for (auto& th : threads) th.join();
  });
  const bool finished = done.wait_for(std::chrono::seconds(120)) == std::future_status::ready;
  stop = true;
  remote_writer.join();
  ASSERT_TRUE(finished) << "deadlock";
  EXPECT_FALSE(overlap.load());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), pa, 0));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), pb, 0));
  EXPECT_THAT(WatchedPaths(*session, root()), ::testing::IsEmpty());
}

// Contrast to the two above: a past deadline that does not overflow the
// subtraction (now - 1 h) is one try, as promised.
TEST_F(Review59Test, TryLockUntilAnHourAgoReturnsPromptly) {
  const std::string path = Path("hourago");
  auto other = NewSession();
  auto other_lock = ExclusiveLock::Create(*other, path);
  auto held = (*other_lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto mine_session = NewSession();
  auto lock = ExclusiveLock::Create(*mine_session, path);
  StdMutex mutex(**lock);
  auto tried = std::async(std::launch::async, [&] {
    return mutex.try_lock_until(std::chrono::steady_clock::now() - std::chrono::hours(1));
  });
  ASSERT_EQ(tried.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_FALSE(tried.get());
  EXPECT_TRUE(absl::IsDeadlineExceeded(mutex.status())) << mutex.status();
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (std_lock.h): "Once that hold is LOST, the next reader queues a
// fresh node, and unlocks by the readers of the lost hold never delete it";
// "the node goes with the last of them". Reader A holds; the session
// expires; reader B (another thread) locks a fresh read hold; A unlocks:
// B's node stays and still keeps a remote writer out; B unlocks: nothing left.
TEST_F(Review59Test, SharedAdapterFreshReadHoldSurvivesTheLostReadersUnlock) {
  const std::string path = Path("sharedexp");
  auto session = NewSession();
  auto sl = SharedLock::Create(*session, path);
  StdSharedMutex mutex(**sl);
  // Each reader on its own thread, unlocking from it (std_lock.h).
  std::promise<void> a_locked, a_go, a_done, b_go, b_done;
  std::promise<bool> b_locked;
  std::thread a([&] {
    mutex.lock_shared();
    a_locked.set_value();
    a_go.get_future().wait();
    mutex.unlock_shared();
    a_done.set_value();
  });
  a_locked.get_future().wait();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 1));
  const std::string a_node = KidsOf(admin(), path)[0];
  const uint64_t gen = session->generation();
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(Eventually([&] {
    return session->generation() > gen && session->state() == SessionState::kConnected;
  }));
  std::thread b([&] {
    bool got = false;
    for (int i = 0; i < 20 && !got; ++i) got = mutex.try_lock_shared_for(std::chrono::seconds(2));
    b_locked.set_value(got);
    b_go.get_future().wait();
    if (got) mutex.unlock_shared();
    b_done.set_value();
  });
  const bool got_b = b_locked.get_future().get();
  auto finish = [&] {
    a_go.set_value();
    b_go.set_value();
    a.join();
    b.join();
  };
  if (!got_b) {
    finish();
    FAIL() << mutex.status();
  }
  ASSERT_TRUE(Eventually([&] {
    auto kids = KidsOf(admin(), path);
    return kids.size() == 1 && kids[0] != a_node;
  })) << absl::StrJoin(KidsOf(admin(), path), ",");
  const std::string b_node = KidsOf(admin(), path)[0];
  a_go.set_value();  // A's unlock (the lost hold)
  a_done.get_future().wait();
  a.join();
  EXPECT_TRUE(admin().Exists(path + "/" + b_node)->has_value()) << "A's unlock deleted B's fresh node";
  auto remote_session = NewSession();
  auto remote = SharedLock::Create(*remote_session, path);
  auto w = (*remote)->TryAcquireWrite();
  EXPECT_TRUE(absl::IsDeadlineExceeded(w.status())) << w.status();
  if (w.ok()) (void)w->Release();
  b_go.set_value();  // B's unlock
  b_done.get_future().wait();
  b.join();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
  EXPECT_THAT(WatchedPaths(*session, path), ::testing::IsEmpty());
}

// ---- MultiLock -----------------------------------------------------------------------

// Promise (multi_lock.h): "a guard that Acquire returns OK is HELD in every
// part"; "When a part cannot be taken ... the parts already taken are
// released ... nothing is left held"; release "each with the guaranteed
// delete". The joint create's reply is dropped (applied, caller sees
// Unavailable), then the joint release's reply too. Whatever Acquire says,
// every part is consistent, and nothing is left after release.
TEST_F(Review59Test, MultiLockWithLostTransactionRepliesStaysConsistent) {
  const std::string pa = Path("ma");
  const std::string pb = Path("mb");
  // The directories exist, so the joint transaction is used.
  ASSERT_TRUE(admin().Create(pa, "", CreateMode::kPersistent).ok());
  ASSERT_TRUE(admin().Create(pb, "", CreateMode::kPersistent).ok());
  for (FaultRule::Effect effect : {FaultRule::Effect::kDropReply, FaultRule::Effect::kLoseRequest}) {
    SCOPED_TRACE(effect == FaultRule::Effect::kDropReply ? "drop reply" : "lose request");
    auto faults = std::make_shared<ClientFaults>();
    auto session = NewFaultySession(faults);
    ASSERT_TRUE(session);
    auto multi = MultiLock::Create(*session, {{pb, LockMode::kWrite}, {pa, LockMode::kRead}});
    ASSERT_TRUE(multi.ok());
    faults->Add({FaultRule::Call::kMulti, effect, pa, 1});
    auto got = (*multi)->Acquire(absl::Seconds(20));
    EXPECT_TRUE(faults->UsedUp()) << "the joint create was not sent";
    if (got.ok()) {
      ASSERT_EQ(got->state(), LockState::kHeld);
      for (const std::string& p : {pa, pb}) {
        ASSERT_NE(got->part(p), nullptr);
        EXPECT_EQ(got->part(p)->state(), LockState::kHeld) << p;
        EXPECT_TRUE(admin().Exists(got->part(p)->node_path())->has_value()) << p;
      }
      EXPECT_EQ(KidsOf(admin(), pa).size(), 1u) << absl::StrJoin(KidsOf(admin(), pa), ",");
      EXPECT_EQ(KidsOf(admin(), pb).size(), 1u) << absl::StrJoin(KidsOf(admin(), pb), ",");
      faults->Add({FaultRule::Call::kMulti, effect, pa, 1});
      (void)got->Release();
    } else {
      EXPECT_TRUE(absl::IsUnavailable(got.status())) << got.status();
    }
    EXPECT_TRUE(Eventually([&] {
      return KidsOf(admin(), pa).empty() && KidsOf(admin(), pb).empty();
    })) << absl::StrJoin(KidsOf(admin(), pa), ",") << " | " << absl::StrJoin(KidsOf(admin(), pb), ",");
    EXPECT_TRUE(Eventually([&] { return WatchedPaths(*session, root()).empty(); }))
        << absl::StrJoin(WatchedPaths(*session, root()), ",");
  }
}

// Promise (multi_lock.h): "A part lost while others are still being taken
// ... ends the acquisition at once ... Aborted ... IsSessionLost() when the
// session was lost" and nothing is left; a MultiLock whose session expired
// while waiting can be acquired again on the next generation, and a
// competitor's single lock on one part is not deadlocked.
TEST_F(Review59Test, MultiLockExpiredWhileWaitingThenAcquiresAgain) {
  const std::string pa = Path("xa");
  const std::string pb = Path("xb");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, pb);
  auto blocked = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(blocked.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{pa, LockMode::kWrite}, {pb, LockMode::kWrite}});
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(testing::AwaitChildCount(admin(), pb, 2));
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto first = pending.get();
  ASSERT_FALSE(first.ok());
  EXPECT_TRUE(absl::IsAborted(first.status())) << first.status();
  auto again = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(testing::AwaitChildCount(admin(), pb, 2));
  ASSERT_TRUE(blocked->Release().ok());
  ASSERT_EQ(again.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "not woken";
  auto got = again.get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->part(pa)->state(), LockState::kHeld);
  EXPECT_EQ(got->part(pb)->state(), LockState::kHeld);
  ASSERT_TRUE(got->Release().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), pa, 0));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), pb, 0));
  EXPECT_THAT(WatchedPaths(*session, root()), ::testing::IsEmpty());
}

// ---- Watch bookkeeping across session loss -------------------------------------------

// Promise (session.h / every recipe): after an expiry and recovery, one
// recipe's stale watch never silences another's wake-up on the same
// session. Two readers on ONE session wait behind a remote writer (both
// watch the writer's node: the same path, the same session). The session
// expires; both re-queue on the next generation; one of them is cancelled
// (its watch on the shared path goes); the writer releases: the other is
// woken. Nothing is left, no orphan watch.
TEST_F(Review59Test, SharedWatchPathSurvivesExpiryAndACancelledNeighbour) {
  const std::string path = Path("rw");
  auto writer_session = NewSession();
  auto writer = SharedLock::Create(*writer_session, path);
  auto w = (*writer)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(w.ok());
  auto session = NewSession();
  auto r1 = SharedLock::Create(*session, path);
  auto r2 = SharedLock::Create(*session, path);
  {
    auto f1 = (*r1)->AcquireReadFuture();
    auto f2 = (*r2)->AcquireReadFuture();
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 3));
    ASSERT_TRUE(testing::ExpireSession(*session).ok());
    ASSERT_EQ(f1.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    ASSERT_EQ(f2.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    EXPECT_FALSE(f1.get().ok());
    EXPECT_FALSE(f2.get().ok());
  }
  auto f1 = (*r1)->AcquireReadFuture();
  auto f2 = (*r2)->AcquireReadFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 3));
  (*r1)->Cancel();
  ASSERT_EQ(f1.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_TRUE(absl::IsCancelled(f1.get().status()));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  ASSERT_TRUE(w->Release().ok());
  ASSERT_EQ(f2.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "the remaining reader was never woken";
  auto g2 = f2.get();
  ASSERT_TRUE(g2.ok()) << g2.status();
  ASSERT_TRUE(g2->Release().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
  EXPECT_TRUE(Eventually([&] { return WatchedPaths(*session, path).empty(); }))
      << absl::StrJoin(WatchedPaths(*session, path), ",");
}

// The same promise across recipes: two exclusive locks and a semaphore on
// one session wait behind blockers; the session expires while they wait;
// they queue again on the next generation; the blockers release in turn:
// every waiter is woken; no orphan watch after everything ends.
TEST_F(Review59Test, ThreeRecipesOnOneSessionAllWokenAfterExpiry) {
  const std::string p1 = Path("e1");
  const std::string p2 = Path("e2");
  const std::string p3 = Path("e3");
  auto blockers = NewSession();
  auto b1 = ExclusiveLock::Create(*blockers, p1);
  auto b2 = ExclusiveLock::Create(*blockers, p2);
  auto b3 = Semaphore::Create(*blockers, p3, 2);
  auto h1 = (*b1)->Acquire(absl::Seconds(10));
  auto h2 = (*b2)->Acquire(absl::Seconds(10));
  auto h3 = (*b3)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(h1.ok() && h2.ok() && h3.ok());
  auto session = NewSession();
  auto l1 = ExclusiveLock::Create(*session, p1);
  auto l2 = ExclusiveLock::Create(*session, p2);
  auto s3 = Semaphore::Create(*session, p3, 2);
  {
    auto f1 = (*l1)->AcquireFuture();
    auto f2 = (*l2)->AcquireFuture();
    auto f3 = (*s3)->AcquireFuture(1);
    ASSERT_TRUE(testing::AwaitChildCount(admin(), p1, 2));
    ASSERT_TRUE(testing::AwaitChildCount(admin(), p2, 2));
    ASSERT_TRUE(Eventually([&] { return KidsOf(admin(), p3).size() >= 2; }));
    ASSERT_TRUE(testing::ExpireSession(*session).ok());
    for (auto* f : {&f1, &f2, &f3}) {
      ASSERT_EQ(f->wait_for(std::chrono::seconds(20)), std::future_status::ready);
      EXPECT_FALSE(f->get().ok());
    }
  }
  auto f1 = (*l1)->AcquireFuture();
  auto f2 = (*l2)->AcquireFuture();
  auto f3 = (*s3)->AcquireFuture(1);
  ASSERT_TRUE(testing::AwaitChildCount(admin(), p1, 2));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), p2, 2));
  ASSERT_TRUE(h2->Release().ok());
  ASSERT_EQ(f2.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "l2 not woken";
  ASSERT_TRUE(h3->Release().ok());
  ASSERT_EQ(f3.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "s3 not woken";
  ASSERT_TRUE(h1->Release().ok());
  ASSERT_EQ(f1.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "l1 not woken";
  auto g1 = f1.get();
  auto g2 = f2.get();
  auto g3 = f3.get();
  ASSERT_TRUE(g1.ok()) << g1.status();
  ASSERT_TRUE(g2.ok()) << g2.status();
  ASSERT_TRUE(g3.ok()) << g3.status();
  ASSERT_TRUE(g1->Release().ok());
  ASSERT_TRUE(g2->Release().ok());
  ASSERT_TRUE(g3->Release().ok());
  for (const std::string& p : {p1, p2, p3}) ASSERT_TRUE(testing::AwaitChildCount(admin(), p, 0)) << p;
  EXPECT_TRUE(Eventually([&] { return WatchedPaths(*session, root()).empty(); }))
      << absl::StrJoin(WatchedPaths(*session, root()), ",");
  EXPECT_TRUE(Eventually([&] { return WatchedPaths(*blockers, root()).empty(); }))
      << absl::StrJoin(WatchedPaths(*blockers, root()), ",");
}


// The same promise with a lock, an election and a group watch on one
// session: all wait (the lock behind a blocker, the candidate behind a
// leader, the group watch for a member); the session expires; the lock
// queues again (the election rejoins by itself); then, one after another:
// the leader leaves, a member joins, the blocker releases — each must reach
// its recipe. After everything ends the session has no watch under root.
TEST_F(Review59Test, LockElectionAndGroupWatchOnOneSessionAllHearAfterExpiry) {
  const std::string lp = Path("l");
  const std::string ep = Path("e");
  const std::string gp = Path("g");
  auto others = NewSession();
  auto blocker = ExclusiveLock::Create(*others, lp);
  auto blocked = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(blocked.ok());
  auto leader = LeaderElection::Create(*others, ep);
  ASSERT_TRUE((*leader)->Join().ok());
  ASSERT_TRUE((*leader)->AwaitLeadership(absl::Seconds(10)).ok());
  auto session = NewSession();
  absl::Mutex mu;
  size_t last_members = 0;
  int lists = 0;
  auto group = GroupWatch::Create(*session, gp, [&](const std::vector<GroupMemberInfo>& m) {
    absl::MutexLock l(&mu);
    last_members = m.size();
    ++lists;
  });
  ASSERT_TRUE(group.ok()) << group.status();
  auto candidate = LeaderElection::Create(*session, ep);
  ASSERT_TRUE((*candidate)->Join().ok());
  auto lock = ExclusiveLock::Create(*session, lp);
  {
    auto f = (*lock)->AcquireFuture();
    ASSERT_TRUE(testing::AwaitChildCount(admin(), lp, 2));
    ASSERT_TRUE(testing::AwaitChildCount(admin(), ep, 2));
    ASSERT_TRUE(testing::ExpireSession(*session).ok());
    ASSERT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    EXPECT_FALSE(f.get().ok());
  }
  auto f = (*lock)->AcquireFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), lp, 2));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), ep, 2)) << "the candidate did not rejoin";
  ASSERT_TRUE((*leader)->Leave().ok());
  EXPECT_TRUE((*candidate)->AwaitLeadership(absl::Seconds(20)).ok()) << "candidate not woken";
  auto member = GroupMember::Create(*others, gp);
  ASSERT_TRUE(member.ok()) << member.status();
  ASSERT_TRUE((*member)->Join().ok());
  EXPECT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return last_members == 1;
  })) << "the group watch did not hear the member";
  ASSERT_TRUE(blocked->Release().ok());
  ASSERT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "lock not woken";
  auto g = f.get();
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(g->Release().ok());
  ASSERT_TRUE((*member)->Leave().ok());
  EXPECT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return last_members == 0;
  })) << "the group watch did not hear the member leave";
  ASSERT_TRUE((*candidate)->Leave().ok());
  group->reset();
  candidate->reset();
  lock->reset();
  EXPECT_TRUE(Eventually([&] { return WatchedPaths(*session, root()).empty(); }))
      << absl::StrJoin(WatchedPaths(*session, root()), ",");
  EXPECT_TRUE(Eventually([&] { return WatchedPaths(*others, root()).empty(); }))
      << absl::StrJoin(WatchedPaths(*others, root()), ",");
}


// Promise (revocation.h): "The request nodes Revoke made are deleted before
// it returns (with the guaranteed delete; a create whose reply was lost is
// found by its owner)"; mutual exclusion through a forced revocation. The
// requester's session loses the reply of its request create, of its mark
// (set), and of its deletes. The holder never lets go (grace 0).
TEST_F(Review59Test, ForcedRevokeWithLostRepliesOnTheRequesterLeavesNothing) {
  const std::string path = Path("lossy");
  auto holder_session = NewSession();
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening([](const RevokeRequest&) {}));
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  HeldLedger ledger(*held);
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::chrono::steady_clock::time_point granted_at{};
  auto next = std::async(std::launch::async, [&] {
    auto g = (*waiter)->Acquire(absl::Seconds(60));
    granted_at = std::chrono::steady_clock::now();
    return g;
  });
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  auto faults = std::make_shared<ClientFaults>();
  auto requester = NewFaultySession(faults);
  ASSERT_TRUE(requester);
  faults->Add({FaultRule::Call::kCreate, FaultRule::Effect::kDropReply, path + "/", 1});
  faults->Add({FaultRule::Call::kSet, FaultRule::Effect::kDropReply, path + "/", 1});
  faults->Add({FaultRule::Call::kDelete, FaultRule::Effect::kDropReply, path + "/", 2});
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto revoked = std::async(std::launch::async, [&] { return Revoke(*requester, path, ask); });
  ASSERT_EQ(revoked.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto out = revoked.get();
  // Right after Revoke returns: none of its request nodes.
  EXPECT_TRUE(NoRequestNodes(admin(), path)) << absl::StrJoin(KidsOf(admin(), path), ",");
  EXPECT_TRUE(faults->UsedUp());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].how, RevokeOutcome::How::kForced);
  ASSERT_EQ(next.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ledger.Stop();
  EXPECT_LT(ledger.last_held(), granted_at);
  (void)held->Release();
  ASSERT_TRUE(mine->Release().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
  EXPECT_TRUE(Eventually([&] { return WatchedPaths(*requester, root()).empty(); }));
}

// The shared adapter's timed forms share the std_lock.h:146/159 template:
// try_lock_shared_until(time_point::min()) behind a remote writer.
TEST_F(Review59Test, TryLockSharedUntilAPastTimePointReturnsPromptly) {
  const std::string path = Path("pastshared");
  auto other = NewSession();
  auto other_lock = SharedLock::Create(*other, path);
  auto held = (*other_lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto mine_session = NewSession();
  auto lock = SharedLock::Create(*mine_session, path);
  StdSharedMutex mutex(**lock);
  auto tried = std::async(std::launch::async, [&] {
    return mutex.try_lock_shared_until(std::chrono::steady_clock::time_point::min());
  });
  const bool ready = tried.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!ready) {
    (*lock)->Cancel();
    ASSERT_TRUE(held->Release().ok());
    if (tried.wait_for(std::chrono::seconds(20)) == std::future_status::ready && tried.get()) {
      mutex.unlock_shared();
    }
    FAIL() << "try_lock_shared_until(time_point::min()) waited past its deadline";
  }
  EXPECT_FALSE(tried.get());
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
}

// Promise (multi_lock.h): "One deadline covers the whole set ... while the
// server does not answer, Acquire returns at most one session timeout after
// it"; "nothing is left held". A multi-lock waits behind a blocker on its
// second part; the replies of its listings are lost. Acquire(2 s) returns
// DeadlineExceeded (or another error) within 2 s + one session timeout
// (4 s) + slack; no node of its is left.
TEST_F(Review59Test, MultiLockDeadlineHonouredWithLostListings) {
  const std::string pa = Path("ta");
  const std::string pb = Path("tb");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, pb);
  auto blocked = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(blocked.ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_TRUE(session);
  faults->Add({FaultRule::Call::kGetChildren, FaultRule::Effect::kDropReply, pb, 3});
  faults->Add({FaultRule::Call::kExists, FaultRule::Effect::kDropReply, pb, 2});
  auto multi = MultiLock::Create(*session, {{pa, LockMode::kWrite}, {pb, LockMode::kWrite}});
  const absl::Time start = absl::Now();
  auto got = (*multi)->Acquire(absl::Seconds(2));
  const absl::Duration took = absl::Now() - start;
  EXPECT_FALSE(got.ok());
  EXPECT_LT(took, absl::Seconds(2) + absl::Seconds(4) + absl::Seconds(4)) << took;
  std::printf("multi: %s after %s; listings %d, exists %d, faults used up: %d\n",
              got.status().ToString().c_str(), absl::FormatDuration(took).c_str(),
              faults->Calls(FaultRule::Call::kGetChildren, pb),
              faults->Calls(FaultRule::Call::kExists, pb), faults->UsedUp());
  EXPECT_TRUE(Eventually([&] { return KidsOf(admin(), pa).empty() && KidsOf(admin(), pb).size() == 1; }))
      << absl::StrJoin(KidsOf(admin(), pa), ",") << " | " << absl::StrJoin(KidsOf(admin(), pb), ",");
  ASSERT_TRUE(blocked->Release().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), pb, 0));
  EXPECT_TRUE(Eventually([&] { return WatchedPaths(*session, root()).empty(); }))
      << absl::StrJoin(WatchedPaths(*session, root()), ",");
}

}  // namespace
}  // namespace zkr
