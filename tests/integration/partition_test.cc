// Partitions with the process running (issue 18): a participant cut off from
// the server by the loopback TCP proxy (blackhole both ways) for longer than
// its session timeout, while its process — and its clock — keeps running.
// What the lease clock exists for: the cut-off holder stops believing it
// holds (SUSPENDED, then LOST by its lease) before the server expires its
// session and anyone else acquires; a cut-off leader stops leading before
// another leads; a cut-off waiter does not jump the queue when it returns.
// All times are read from one clock, in this one process. And the clock
// nemesis: wall-clock steps around a leader change nothing.
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/zk_client.h"
#include "tests/support/fake_clock.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/status.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::TcpProxy;

// When each state was first reported (absl::InfiniteFuture() if never).
class StateTimes {
 public:
  void Record(LockState state) {
    absl::MutexLock lock(&mu_);
    auto& at = state == LockState::kSuspended ? suspended_ : lost_;
    if (state != LockState::kHeld && at == absl::InfiniteFuture()) at = absl::Now();
  }
  absl::Time suspended() const {
    absl::MutexLock lock(&mu_);
    return suspended_;
  }
  absl::Time lost() const {
    absl::MutexLock lock(&mu_);
    return lost_;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time suspended_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  absl::Time lost_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
};

class PartitionTest : public testing::ProxiedZkTest {
 protected:
  // A session reaching the server through the proxy, on `clock`.
  std::unique_ptr<Session> PartitionableSession(std::shared_ptr<Clock> clock = nullptr) {
    SessionOptions options = ProxiedOptions();
    options.clock = std::move(clock);
    return NewSession(options);
  }
  // What happened when the holder of `guard` (on PartitionableSession) was
  // cut off while another session queued for `path`.
  struct CutOff {
    absl::Time cut;              // when the proxy started dropping everything
    absl::Time lease_end;        // the holder's valid_until() just before the cut
    absl::Time acquired;         // when the other session's acquisition returned
    bool held_when_other_acquired = true;  // what the cut-off holder believed then
    absl::Status other_status;
  };
  // Queues another session for `path`, cuts the holder off (blackhole) and
  // waits until the other acquisition returns (and releases). The proxy is
  // left cut off.
  CutOff CutOffWhileAnotherAcquires(const std::string& path, LockGuard& guard) {
    CutOff result;
    auto other_session = NewSession();
    auto other = ExclusiveLock::Create(*other_session, path);
    if (!other.ok()) {
      result.other_status = other.status();
      return result;
    }
    std::thread waiter([&] {
      auto got = (*other)->Acquire(absl::Seconds(60));
      result.acquired = absl::Now();
      result.held_when_other_acquired = guard.held();
      result.other_status = got.status();
      if (got.ok()) (void)got->Release();
    });
    result.lease_end = guard.valid_until();
    result.cut = absl::Now();
    proxy_->SetMode(TcpProxy::Mode::kBlackhole);
    waiter.join();
    return result;
  }
  // Waits (bounded by `timeout`) until `path` has `count` children.
  bool WaitForChildren(const std::string& path, size_t count, absl::Duration timeout) {
    return testing::AwaitChildCount(admin(), path, count, timeout);
  }
};

TEST_F(PartitionTest, ACutOffHolderLetsGoBeforeAnyoneElseAcquires) {
  const std::string path = Path("holder");
  auto cut_off = PartitionableSession();
  ASSERT_NE(cut_off, nullptr);
  StateTimes times;
  LockOptions options;
  options.on_state_change = [&times](LockState state) { times.Record(state); };
  auto lock = ExclusiveLock::Create(*cut_off, path, options);
  ASSERT_TRUE(lock.ok());
  auto guard = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(guard.ok()) << guard.status();

  const CutOff cut_off_result = CutOffWhileAnotherAcquires(path, *guard);
  ASSERT_TRUE(cut_off_result.other_status.ok()) << cut_off_result.other_status;
  EXPECT_FALSE(cut_off_result.held_when_other_acquired) << "two holders believed they held";
  EXPECT_LT(times.suspended(), times.lost());
  EXPECT_LT(times.lost(), cut_off_result.acquired)
      << "LOST " << times.lost() << ", other acquired " << cut_off_result.acquired;
  // Before its lease ran out the holder did hold: the server expired it only
  // after the lease the holder counted on (the session timeout runs from the
  // holder's last request, which may come before the cut).
  EXPECT_GE(cut_off_result.acquired, cut_off_result.lease_end)
      << "the lock passed on within the holder's lease";
  EXPECT_GT(cut_off_result.lease_end, cut_off_result.cut) << "the holder had no lease when cut";
  // Back on the network, its late guarded write is refused: the node is gone.
  proxy_->SetMode(TcpProxy::Mode::kPass);
  auto late = guard->GuardedMulti({Op::Create(Path("late-write"), "", CreateMode::kPersistent)});
  EXPECT_FALSE(late.ok()) << "a late write went through a lost lock";
  (void)guard->Release();
  lock->reset();
  cut_off.reset();
  (void)admin().Delete(path);
}

TEST_F(PartitionTest, ACutOffLeaderStopsLeadingBeforeAnotherLeads) {
  const std::string path = Path("leader");
  auto cut_off_session = PartitionableSession();
  ASSERT_NE(cut_off_session, nullptr);
  ElectionOptions cut_off_options;
  cut_off_options.id = "cut-off";
  cut_off_options.rejoin_after_loss = false;
  auto cut_off = LeaderElection::Create(*cut_off_session, path, cut_off_options);
  ASSERT_TRUE(cut_off.ok());
  ASSERT_TRUE((*cut_off)->Join().ok());
  ASSERT_TRUE((*cut_off)->AwaitLeadership(absl::Seconds(10)).ok());

  auto other_session = NewSession();
  absl::Mutex mu;
  bool both_led = false;   // guarded by mu
  bool other_led = false;  // guarded by mu
  LeaderElection* cut_off_raw = cut_off->get();
  ElectionOptions other_options;
  other_options.id = "other";
  other_options.on_change = [&](Leadership leadership) {
    if (leadership != Leadership::kLeader) return;
    absl::MutexLock lock(&mu);
    other_led = true;
    if (cut_off_raw->IsLeader()) both_led = true;
  };
  auto other = LeaderElection::Create(*other_session, path, other_options);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->Join().ok());
  proxy_->SetMode(TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE((*other)->AwaitLeadership(absl::Seconds(60)).ok());
  const bool cut_off_leads = (*cut_off)->IsLeader();
  EXPECT_FALSE(cut_off_leads) << "two leaders believed they led";
  {
    // on_change runs on the other's dispatcher, after AwaitLeadership saw it.
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&other_led), absl::Seconds(10)))
        << "the other was never told it leads";
    EXPECT_FALSE(both_led) << "the cut-off leader still led when the other was told it leads";
  }
  proxy_->SetMode(TcpProxy::Mode::kPass);
  EXPECT_TRUE((*other)->Leave().ok());
  (void)(*cut_off)->Leave();
  other->reset();  // first: its on_change reads cut_off
  cut_off->reset();
  cut_off_session.reset();
  (void)admin().Delete(path);
}

// The clock nemesis around a leader: wall-clock steps of an hour either way
// neither end its leadership nor stretch it — cut off after a step back, it
// still stops leading before the other candidate leads.
TEST_F(PartitionTest, WallClockStepsNeitherEndNorStretchALeadership) {
  const std::string path = Path("stepped-leader");
  auto clock = std::make_shared<testing::FakeClock>();
  auto leader_session = PartitionableSession(clock);
  ASSERT_NE(leader_session, nullptr);
  ElectionOptions options;
  options.id = "stepped";
  options.rejoin_after_loss = false;
  auto leader = LeaderElection::Create(*leader_session, path, options);
  ASSERT_TRUE(leader.ok());
  ASSERT_TRUE((*leader)->Join().ok());
  ASSERT_TRUE((*leader)->AwaitLeadership(absl::Seconds(10)).ok());
  clock->StepWall(absl::Hours(1));
  EXPECT_TRUE((*leader)->IsLeader()) << "a forward step ended the leadership";
  clock->StepWall(-absl::Hours(2));
  EXPECT_TRUE((*leader)->IsLeader()) << "a backward step ended the leadership";

  auto other_session = NewSession();
  ElectionOptions other_options;
  other_options.id = "other";
  auto other = LeaderElection::Create(*other_session, path, other_options);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->Join().ok());
  proxy_->SetMode(TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE((*other)->AwaitLeadership(absl::Seconds(60)).ok());
  EXPECT_FALSE((*leader)->IsLeader()) << "the step back stretched the cut-off leadership";
  proxy_->SetMode(TcpProxy::Mode::kPass);
  EXPECT_TRUE((*other)->Leave().ok());
  (void)(*leader)->Leave();
  leader->reset();
  other->reset();
  leader_session.reset();
  (void)admin().Delete(path);
}

// The clock nemesis around a holder: steps of an hour either way neither end
// the hold nor stretch it — cut off with its clock an hour behind, it is
// still told LOST before anyone else acquires.
TEST_F(PartitionTest, WallClockStepsNeitherEndNorStretchAHold) {
  const std::string path = Path("stepped-holder");
  auto clock = std::make_shared<testing::FakeClock>();
  auto cut_off = PartitionableSession(clock);
  ASSERT_NE(cut_off, nullptr);
  StateTimes times;
  LockOptions options;
  options.on_state_change = [&times](LockState state) { times.Record(state); };
  auto lock = ExclusiveLock::Create(*cut_off, path, options);
  ASSERT_TRUE(lock.ok());
  auto guard = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(guard.ok()) << guard.status();
  clock->StepWall(absl::Hours(1));
  EXPECT_TRUE(guard->held()) << "a forward step ended the hold";
  EXPECT_GT(guard->valid_until(), clock->Now()) << "a forward step ran the lease out";
  clock->StepWall(-absl::Hours(2));
  EXPECT_TRUE(guard->held()) << "a backward step ended the hold";
  EXPECT_LT(guard->valid_until(), clock->Now() + Options().session_timeout)
      << "a backward step stretched the lease";

  const CutOff cut_off_result = CutOffWhileAnotherAcquires(path, *guard);
  ASSERT_TRUE(cut_off_result.other_status.ok()) << cut_off_result.other_status;
  EXPECT_FALSE(cut_off_result.held_when_other_acquired)
      << "the step back stretched the cut-off hold";
  EXPECT_LT(times.lost(), cut_off_result.acquired)
      << "LOST " << times.lost() << ", other acquired " << cut_off_result.acquired;
  proxy_->SetMode(TcpProxy::Mode::kPass);
  (void)guard->Release();
  lock->reset();
  cut_off.reset();
  (void)admin().Delete(path);
}

TEST_F(PartitionTest, ACutOffWaiterDoesNotJumpTheQueueWhenItReturns) {
  const std::string path = Path("waiter");
  auto holder = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(holder.ok());
  auto held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto cut_off_session = PartitionableSession();
  ASSERT_NE(cut_off_session, nullptr);
  auto cut_off = ExclusiveLock::Create(*cut_off_session, path);
  ASSERT_TRUE(cut_off.ok());
  absl::Status cut_off_status;
  absl::Notification cut_off_done;
  std::thread cut_off_waiter([&] {
    auto got = (*cut_off)->Acquire(absl::Seconds(60));
    cut_off_status = got.status();
    if (got.ok()) (void)got->Release();
    cut_off_done.Notify();
  });
  // Queued first, then the second waiter behind it.
  ASSERT_TRUE(WaitForChildren(path, 2, absl::Seconds(10)));
  auto second_session = NewSession();
  auto second = ExclusiveLock::Create(*second_session, path);
  ASSERT_TRUE(second.ok());
  absl::StatusOr<LockGuard> second_guard = absl::UnknownError("not yet");
  std::thread second_waiter([&] { second_guard = (*second)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(WaitForChildren(path, 3, absl::Seconds(10)));
  // The first waiter is cut off beyond its session timeout: the server
  // expires it and its node goes. Then the holder releases.
  proxy_->SetMode(TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(WaitForChildren(path, 2, absl::Seconds(20)));
  ASSERT_TRUE(held->Release().ok());
  second_waiter.join();
  ASSERT_TRUE(second_guard.ok()) << second_guard.status();
  // Back on the network, the cut-off waiter learns its attempt is over: it
  // does not acquire beside (or before) the second waiter.
  proxy_->SetMode(TcpProxy::Mode::kPass);
  ASSERT_TRUE(cut_off_done.WaitForNotificationWithTimeout(absl::Seconds(60)));
  cut_off_waiter.join();
  EXPECT_TRUE(IsSessionLost(cut_off_status)) << cut_off_status;
  EXPECT_TRUE(second_guard->held());
  ASSERT_TRUE(second_guard->Release().ok());
  cut_off->reset();
  cut_off_session.reset();
  (void)admin().Delete(path);
}

}  // namespace
}  // namespace zkr
