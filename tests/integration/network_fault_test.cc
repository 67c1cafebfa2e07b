// Defects that need a misbehaving network between client and server (issue
// "hardening the library"), reproduced through the loopback TCP proxy of the
// test support: each test failed before its fix.
#include <time.h>

#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "src/zk_client.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {

namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::TcpProxy;

absl::Duration ProcessCpu() {
  struct timespec now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return absl::DurationFromTimespec(now);
}

class NetworkFaultTest : public testing::ProxiedZkTest {};

// Item 14: a slow but live server (1.5 s each way, session timeout 6 s; the
// client stays CONNECTED) keeps the lease, and the supervisor stays idle.
TEST_F(NetworkFaultTest, ASlowServerKeepsTheLeaseAndTheSupervisorIdle) {
  SessionOptions options = ProxiedOptions();
  options.session_timeout = absl::Seconds(6);
  options.connect_timeout = absl::Seconds(30);
  proxy_->SetDelay(absl::Milliseconds(1500));  // from the start: the client adapts its pings
  auto session = NewSession(options);
  ASSERT_NE(session, nullptr);
  int samples = 0;
  int lapsed = 0;
  const absl::Duration cpu_before = ProcessCpu();
  const absl::Time start = absl::Now();
  while (absl::Now() - start < absl::Seconds(10)) {
    if (session->state() == SessionState::kConnected ||
        session->state() == SessionState::kReconnected) {
      ++samples;
      if (session->valid_until() <= absl::Now()) ++lapsed;
    }
    absl::SleepFor(absl::Milliseconds(50));  // sampling
  }
  const double cpu_share = (ProcessCpu() - cpu_before) / (absl::Now() - start);
  proxy_->SetDelay(absl::ZeroDuration());
  EXPECT_GT(samples, 100) << "the session did not stay connected";
  EXPECT_EQ(lapsed, 0) << "the lease lapsed on a connected session in " << lapsed << " of "
                       << samples << " samples";
  EXPECT_LT(cpu_share, 0.2) << "the process used " << cpu_share << " of a core while idle";
}

// Item 4: the own-node watch's request is lost with its connection; the
// watch is armed again, so an operator deleting the holder's node is seen
// (LOST), also by a leader (not leader any more).
TEST_F(NetworkFaultTest, AnOwnNodeWatchLostWithItsConnectionIsArmedAgain) {
  const std::string path = Path("rearm");
  auto session = NewSession(ProxiedOptions());
  ASSERT_NE(session, nullptr);
  absl::Notification lost;
  LockOptions lock_options;
  lock_options.own_node_watch_delay = absl::ZeroDuration();  // in flight at the cut
  lock_options.on_state_change = [&](LockState state) {
    if (state == LockState::kLost && !lost.HasBeenNotified()) lost.Notify();
  };
  auto lock = ExclusiveLock::Create(*session, path, lock_options);
  ASSERT_TRUE(lock.ok());
  testing::StateRecorder recorder(*session);
  // Slow round trips, so that the own-node watch sent after the grant is
  // still in flight when the connection is cut.
  proxy_->SetDelay(absl::Milliseconds(300));
  auto guard = (*lock)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(guard.ok()) << guard.status();
  proxy_->ResetConnections();
  proxy_->SetDelay(absl::ZeroDuration());
  ASSERT_TRUE(recorder.WaitFor(SessionState::kReconnected, session->generation()).has_value());
  // An operator deletes the holder's node; another session takes the lock.
  ASSERT_TRUE(admin().Delete(guard->node_path()).ok());
  auto other = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(other.ok());
  auto taken = (*other)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_TRUE(lost.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "the first holder still reports " << LockStateName(guard->state());
  EXPECT_NE(guard->state(), LockState::kHeld);
  ASSERT_TRUE(taken->Release().ok());
  (void)guard->Release();
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(NetworkFaultTest, ALeadersLostOwnNodeWatchIsArmedAgain) {
  const std::string path = Path("rearm-leader");
  auto session = NewSession(ProxiedOptions());
  ASSERT_NE(session, nullptr);
  // Without rejoin, so that the deposed leader does not queue again ahead of
  // the rival.
  ElectionOptions no_rejoin;
  no_rejoin.rejoin_after_loss = false;
  auto election = LeaderElection::Create(*session, path, no_rejoin);
  ASSERT_TRUE(election.ok());
  testing::StateRecorder recorder(*session);
  proxy_->SetDelay(absl::Milliseconds(300));
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(20)).ok());
  proxy_->ResetConnections();
  proxy_->SetDelay(absl::ZeroDuration());
  ASSERT_TRUE(recorder.WaitFor(SessionState::kReconnected, session->generation()).has_value());
  // An operator deletes the leader's node; another candidate leads.
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok() && children->size() == 1);
  auto rival = LeaderElection::Create(admin(), path);
  ASSERT_TRUE(rival.ok());
  ASSERT_TRUE(admin().Delete(path + "/" + children->front()).ok());
  ASSERT_TRUE((*rival)->Join().ok());
  ASSERT_TRUE((*rival)->AwaitLeadership(absl::Seconds(10)).ok());
  // The first must stop believing it leads.
  bool still_leader = true;
  for (int i = 0; i < 200 && still_leader; ++i) {
    still_leader = (*election)->IsLeader() && (*election)->epoch() < (*rival)->epoch();
    if (still_leader) absl::SleepFor(absl::Milliseconds(50));  // bounded observation
  }
  EXPECT_FALSE(still_leader) << "two leaders: the deposed one still believes it leads";
  ASSERT_TRUE((*rival)->Leave().ok());
  election->reset();
  for (int i = 0; i < 200; ++i) {
    auto left = admin().GetChildren(path);
    if (!left.ok() || left->empty()) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  (void)admin().Delete(path);
}

// Issue 18, item 3: a waiter cancelled while the removal of its watch is
// lost with the connection leaves no watch behind. The C client keeps its
// copy of a watch until the server confirms the removal, and sets it again
// on reconnect: the removal must be sent again then.
// A waiter holds on its blocker's deletion event without a request only
// while its own-node watch's events are known to come in order: after a
// reconnect (watches set again may fire out of order) it confirms its node
// (one exists) before holding.
TEST_F(NetworkFaultTest, AWaiterThatReconnectedConfirmsItsNodeBeforeHolding) {
  const std::string path = Path("confirm-after-reconnect");
  auto holder = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(holder.ok());
  auto held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto faults = std::make_shared<testing::ClientFaults>();  // counts the calls
  auto session = testing::ConnectWithFaults(ProxiedOptions(), faults);
  ASSERT_TRUE(session.ok()) << session.status();
  auto waiter = ExclusiveLock::Create(**session, path);
  ASSERT_TRUE(waiter.ok());
  absl::Notification acquired;
  absl::StatusOr<LockGuard> guard = absl::UnknownError("not yet");
  (*waiter)->AcquireAsync([&](absl::StatusOr<LockGuard> result) {
    guard = std::move(result);
    acquired.Notify();
  });
  for (int i = 0; i < 3000 && testing::WatchedPaths(**session, path).size() < 2; ++i) {
    absl::SleepFor(absl::Milliseconds(2));  // until it watches the holder and its own node
  }
  ASSERT_EQ(testing::WatchedPathsOfOthers(**session, path),
            std::vector<std::string>{held->node_path()});
  testing::StateRecorder recorder(**session);
  const uint64_t generation = (*session)->generation();
  proxy_->ResetConnections();
  ASSERT_TRUE(recorder.WaitFor(SessionState::kReconnected, generation).has_value());
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(acquired.WaitForNotificationWithTimeout(absl::Seconds(20)));
  ASSERT_TRUE(guard.ok()) << guard.status();
  EXPECT_EQ(faults->Calls(testing::FaultRule::Call::kExists, path + "/"), 1)
      << "after the reconnect the waiter must confirm its node once before holding";
  ASSERT_TRUE(guard->Release().ok());
  waiter->reset();
  holder->reset();
  (void)admin().Delete(path);
}

// Close() returns only once the session is closed, also when another
// thread is already closing it: `zkr` closes its session from a signal
// thread while the main thread, its wait failed by that close, closes it
// again and exits — before this, the second Close() returned at once and
// the process could exit with the close unsent, its nodes left until the
// session timed out.
TEST_F(NetworkFaultTest, ASecondCloseReturnsOnlyOnceTheSessionIsClosed) {
  const std::string path = Path("second-close");
  auto session = NewSession(ProxiedOptions());
  ASSERT_NE(session, nullptr);
  auto created = session->Create(path, "", CreateMode::kEphemeral);
  ASSERT_TRUE(created.ok()) << created.status();
  proxy_->SetDelay(absl::Milliseconds(300));  // the close takes two of these
  std::thread first([&] { session->Close(); });
  for (int i = 0; i < 2000 && session->state() != SessionState::kClosed; ++i) {
    absl::SleepFor(absl::Milliseconds(1));  // until the first Close() has begun
  }
  session->Close();
  auto stat = admin().Exists(path);
  EXPECT_TRUE(stat.ok() && !stat->has_value())
      << "the second Close() returned before the session was closed";
  first.join();
  proxy_->SetDelay(absl::ZeroDuration());
  (void)admin().Delete(path);
}

TEST_F(NetworkFaultTest, AWatchRemovalLostWithItsConnectionIsSentAgain) {
  const std::string path = Path("lost-removal");
  auto holder = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(holder.ok());
  auto held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  SessionOptions options = ProxiedOptions();
  options.session_timeout = absl::Seconds(10);  // outlives a reconnect attempt lost in the partition
  auto session = NewSession(options);
  ASSERT_NE(session, nullptr);
  auto waiter = ExclusiveLock::Create(*session, path);
  ASSERT_TRUE(waiter.ok());
  absl::Notification cancelled;
  (*waiter)->AcquireAsync([&](absl::StatusOr<LockGuard>) { cancelled.Notify(); });
  for (int i = 0; i < 3000 && testing::WatchedPathsOfOthers(*session, path).empty(); ++i) {
    absl::SleepFor(absl::Milliseconds(2));  // until the waiter watches the holder
  }
  ASSERT_THAT(testing::WatchedPathsOfOthers(*session, path), ElementsAre(held->node_path()));
  // The waiter's node: its deletion (after the reconnect) ends the cancel.
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok() && children->size() == 2);
  const std::string waiter_node =
      path + "/" + (path + "/" + children->front() == held->node_path() ? children->back()
                                                                        : children->front());
  absl::Notification waiter_node_gone;
  ASSERT_TRUE(admin()
                  .GetAndWatch(waiter_node,
                               [&](const WatchEvent& event) {
                                 if (event.type == WatchEvent::Type::kDeleted) {
                                   waiter_node_gone.Notify();
                                 }
                               })
                  .ok());
  testing::StateRecorder recorder(*session);
  const uint64_t generation = session->generation();
  // The cancel's requests (remove the watch, delete the node) go into a
  // partition, and the connection is reset under them: both fail with
  // connection loss, and the C client still has the watch.
  proxy_->SetMode(TcpProxy::Mode::kBlackhole);
  (*waiter)->Cancel();
  proxy_->ResetConnections();
  proxy_->SetMode(TcpProxy::Mode::kPass);
  ASSERT_TRUE(cancelled.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(recorder.WaitFor(SessionState::kReconnected, generation).has_value());
  ASSERT_TRUE(waiter_node_gone.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_THAT(testing::WatchedPaths(*session, path), IsEmpty())
      << "the cancelled waiter still watches the holder";
  session->Close();  // before the release (which would fire a leaked watch): audited
  ASSERT_TRUE(held->Release().ok());
  (void)admin().Delete(path);
}

}  // namespace
}  // namespace zkr
