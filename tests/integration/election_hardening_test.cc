// Election defects reproduced against a real server (issue "hardening the
// library"): each test failed before its fix. A selector whose leader's
// lease lapsed, Stop() from inside the term, Leave() racing the win, and
// AwaitLeadership() when the candidacy can no longer succeed.
#include <atomic>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_clock.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using ::testing::IsEmpty;
using testing::ZkTest;

class ElectionHardeningTest : public ZkTest {
 protected:
  std::unique_ptr<LeaderElection> NewElection(Session& session, const std::string& path,
                                              ElectionOptions options = {}) {
    auto election = LeaderElection::Create(session, path, std::move(options));
    EXPECT_TRUE(election.ok()) << election.status();
    return election.ok() ? std::move(*election) : nullptr;
  }
  std::vector<std::string> Children(const std::string& path) {
    auto children = admin().GetChildren(path);
    return children.ok() ? *children : std::vector<std::string>();
  }
};

// Item 7: a leader whose lease has lapsed (as after a process pause) is not
// leader until the lease is renewed; AwaitLeadership waits for that instead
// of failing, so a selector's thread never ends while its node leads.
TEST_F(ElectionHardeningTest, ALapsedLeaseMakesAwaitLeadershipWaitForRenewalNotFail) {
  auto clock = std::make_shared<testing::FakeClock>();
  SessionOptions options = Options();
  options.clock = clock;
  auto session = NewSession(options);
  const std::string path = Path("lapsed");
  auto election = NewElection(*session, path);
  ASSERT_TRUE(election->Join().ok());
  ASSERT_TRUE(election->AwaitLeadership(absl::Seconds(10)).ok());
  // A pause: monotonic time jumps past the lease; no event says so.
  clock->AdvanceMonotonic(absl::Seconds(60));
  EXPECT_FALSE(election->IsLeader());
  // The next heartbeat (within a third of the timeout) renews the lease.
  absl::Status status = election->AwaitLeadership(absl::Seconds(20));
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(election->IsLeader());
  ASSERT_TRUE(election->Leave().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Item 8: Stop() from inside take_leadership ends the term and the
// selector, without the thread joining itself.
TEST_F(ElectionHardeningTest, StopFromInsideTakeLeadershipDoesNotKillTheProcess) {
  const std::string path = Path("stop-inside");
  std::unique_ptr<LeaderSelector> selector;
  absl::Notification term_over;
  LeaderSelector::Options options;
  auto created = LeaderSelector::Create(
      admin(), path,
      [&](LeadershipContext&) {
        selector->Stop();
        term_over.Notify();
      },
      options);
  ASSERT_TRUE(created.ok()) << created.status();
  selector = std::move(*created);
  ASSERT_TRUE(selector->Start().ok());
  ASSERT_TRUE(term_over.WaitForNotificationWithTimeout(absl::Seconds(20)));
  selector->Stop();  // from the test thread too: joins the finished thread
  EXPECT_EQ(selector->terms(), 1);
  EXPECT_FALSE(selector->election().joined());
  EXPECT_THAT(Children(path), IsEmpty());
  selector.reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Item 9: Leave() racing the candidate's own win returns and deletes the
// node, whichever side wins the race.
TEST_F(ElectionHardeningTest, LeaveRacingTheWinReturnsAndLeavesNoNode) {
  const std::string path = Path("leave-race");
  auto a_session = NewSession();
  auto b_session = NewSession();
  for (int i = 0; i < 300; ++i) {
    auto a = NewElection(*a_session, path);
    auto b = NewElection(*b_session, path);
    ASSERT_TRUE(a->Join().ok());
    ASSERT_TRUE(a->AwaitLeadership(absl::Seconds(10)).ok());
    ASSERT_TRUE(b->Join().ok());
    for (int spin = 0; spin < 2000 && Children(path).size() < 2; ++spin) {
      absl::SleepFor(absl::Microseconds(200));  // until B is queued
    }
    absl::Notification b_left;
    std::thread leaver([&] {
      (void)b->Leave();
      b_left.Notify();
    });
    ASSERT_TRUE(a->Leave().ok());
    const bool returned = b_left.WaitForNotificationWithTimeout(absl::Seconds(20));
    if (!returned) {
      ADD_FAILURE() << "B's Leave() hung in round " << i;
      leaver.detach();
      return;
    }
    leaver.join();
    ASSERT_THAT(Children(path), IsEmpty()) << "round " << i << ": B's node outlived Leave()";
  }
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Item 10: once the candidacy can never succeed, AwaitLeadership returns at
// once and joined() says false: after Close() (queued and leading alike),
// and after the session expired without rejoin_after_loss.
TEST_F(ElectionHardeningTest, AwaitLeadershipReturnsWhenTheSessionCloses) {
  const std::string path = Path("closed");
  auto leader_session = NewSession();
  auto leader = NewElection(*leader_session, path);
  ASSERT_TRUE(leader->Join().ok());
  ASSERT_TRUE(leader->AwaitLeadership(absl::Seconds(10)).ok());
  auto queued_session = NewSession();
  auto queued = NewElection(*queued_session, path);
  ASSERT_TRUE(queued->Join().ok());

  absl::Notification returned;
  absl::Status status;
  std::thread waiter([&] {
    status = queued->AwaitLeadership();
    returned.Notify();
  });
  queued_session->Close();
  EXPECT_TRUE(returned.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "AwaitLeadership kept waiting on a closed session";
  if (!returned.HasBeenNotified()) {
    waiter.detach();
    return;
  }
  waiter.join();
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_FALSE(queued->joined());

  leader_session->Close();
  status = leader->AwaitLeadership(absl::Seconds(10));
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_FALSE(leader->joined());
  queued.reset();
  leader.reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(ElectionHardeningTest, WithoutRejoinAwaitLeadershipReportsTheLostSession) {
  const std::string path = Path("expired");
  auto session = NewSession();
  ElectionOptions options;
  options.rejoin_after_loss = false;
  auto leader = NewElection(*session, path, options);
  ASSERT_TRUE(leader->Join().ok());
  ASSERT_TRUE(leader->AwaitLeadership(absl::Seconds(10)).ok());
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  (void)session->Exists(root());  // hear of it
  absl::Status status = leader->AwaitLeadership(absl::Seconds(15));
  // The expiry deletes the node: which the candidate hears of first (its
  // own-node watch, or the session's EXPIRED) decides the message; both are
  // Aborted ("start again").
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_FALSE(leader->joined());
  leader.reset();
  (void)admin().Delete(path);
}

}  // namespace
}  // namespace zkr
