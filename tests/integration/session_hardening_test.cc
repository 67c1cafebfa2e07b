// Session defects reproduced against a real server (issue "hardening the
// library"): each test failed before its fix. Calls after Close(), a missing
// chroot, operations cut short by a lost lease, and a lease that a wall-clock
// step could move.
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_clock.h"
#include "src/zk_client.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/status.h"

namespace zkr {

using internal::SetClientLog;
namespace {

using ::testing::HasSubstr;
using testing::ZkTest;

class SessionHardeningTest : public ZkTest {};

// Item 11: after Close(), asynchronous calls complete on the dispatcher
// thread with the blocking call's status.
TEST_F(SessionHardeningTest, AsyncCallsAfterCloseCompleteOnTheDispatcherThread) {
  auto session = NewSession();
  session->Close();
  const absl::Status blocking = session->Get(root()).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(blocking)) << blocking;
  absl::Notification done;
  absl::Status async;
  std::thread::id ran_on;
  session->GetAsync(root(), [&](absl::StatusOr<std::string> data) {
    async = data.status();
    ran_on = std::this_thread::get_id();
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_NE(ran_on, std::this_thread::get_id()) << "done ran inline on the caller's thread";
  EXPECT_EQ(async.code(), blocking.code()) << async;
}

// Item 13: a chroot that does not exist is reported as such, at once, not
// as "no ZooKeeper server answered" after the connect timeout.
TEST_F(SessionHardeningTest, AMissingChrootIsReportedAsNotFound) {
  SessionOptions options = Options();
  options.connect = connect_ + Path("not-yet-there");
  options.connect_timeout = absl::Seconds(60);
  const absl::Time start = absl::Now();
  auto session = Session::Connect(options);
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(absl::IsNotFound(session.status())) << session.status();
  EXPECT_THAT(session.status().message(), HasSubstr("not-yet-there"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(60)) << "waited out the connect timeout";
  // Once it exists, the same string connects.
  ASSERT_TRUE(admin().Create(Path("not-yet-there"), "", CreateMode::kPersistent).ok());
  auto connected = Session::Connect(options);
  ASSERT_TRUE(connected.ok()) << connected.status();
  (*connected)->Close();
  ASSERT_TRUE(admin().Delete(Path("not-yet-there")).ok());
}

// Item 16: an operation in flight when the lease runs out is reported as a
// lost session, never as Cancelled (reserved for the caller's own Close()).
TEST_F(SessionHardeningTest, AnOperationCutShortByTheLeaseIsSessionLostNotCancelled) {
  testing::ZooKeeperServer* server = testing::SharedServer();
  ASSERT_NE(server, nullptr);
  SessionOptions options = Options();
  options.reconnect_after_loss = false;
  options.retry.max_attempts = 1;
  options.log_sink = [](absl::string_view) {};
  auto session = NewSession(options);
  ASSERT_TRUE(server->Pause().ok());
  absl::Status status = session->Exists("/").status();
  // The first failure may be the connection loss; what follows the lease's
  // end must be the lost session.
  if (absl::IsUnavailable(status)) status = session->Exists("/").status();
  ASSERT_TRUE(server->Resume().ok());
  EXPECT_FALSE(absl::IsCancelled(status)) << status;
  EXPECT_TRUE(IsSessionLost(status)) << status;
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

// Item 17: the lease is measured on the monotonic clock. A wall-clock step
// backwards does not extend it (LOST is declared on time while the server
// is unreachable); a step forwards does not shorten it (a holder stays HELD).
TEST_F(SessionHardeningTest, WallClockStepsNeitherExtendNorShortenTheLease) {
  testing::ZooKeeperServer* server = testing::SharedServer();
  ASSERT_NE(server, nullptr);
  auto clock = std::make_shared<testing::FakeClock>();
  SessionOptions options = Options();
  options.clock = clock;
  options.log_sink = [](absl::string_view) {};
  auto session = NewSession(options);
  auto lock = ExclusiveLock::Create(*session, Path("stepped"));
  ASSERT_TRUE(lock.ok());
  auto guard = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(guard.ok()) << guard.status();

  clock->StepWall(absl::Hours(1));
  EXPECT_TRUE(guard->held()) << "a forward wall-clock step shortened the hold";
  EXPECT_EQ(session->state(), SessionState::kConnected);
  EXPECT_GT(guard->valid_until(), clock->Now()) << "valid_until is reported on the wall clock";

  clock->StepWall(-absl::Hours(2));
  auto states = std::make_unique<testing::StateRecorder>(*session);  // goes before `session`
  const uint64_t generation = session->generation();
  ASSERT_TRUE(server->Pause().ok());
  // Lease: 4 s timeout minus the margin, from the last answer. A lease
  // extended by the backward step would last another hour.
  const bool declared =
      states->WaitFor(SessionState::kLost, generation, absl::Seconds(15)).has_value();
  ASSERT_TRUE(server->Resume().ok());
  EXPECT_TRUE(declared) << "the backward wall-clock step extended the lease";
  EXPECT_NE(guard->state(), LockState::kHeld);
  (void)guard->Release();
  lock->reset();
  states.reset();
  session.reset();
  // The old session's node goes when the server, paused meanwhile, expires it.
  for (int i = 0; i < 400; ++i) {
    auto children = admin().GetChildren(Path("stepped"));
    if (!children.ok() || children->empty()) break;
    absl::SleepFor(absl::Milliseconds(50));  // polling the server, not deciding
  }
  (void)admin().Delete(Path("stepped"));
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

}  // namespace
}  // namespace zkr
