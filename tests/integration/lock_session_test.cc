// SharedLock and ExclusiveLock through faults of their session, against a
// real server: a given-up attempt's delete lost with its connection and
// retried, the holder's session expiring, and acquisitions started while the
// session is between generations. (A lost create reply, recovered by id:
// protected_create_test.cc; an acquisition without reconnect_after_loss:
// lock_lifecycle_test.cc.)
#include <zookeeper/zookeeper.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"
#include "src/paths.h"
#include "src/testing/faulty_client.h"
#include "src/zk_client.h"
#include "tests/support/lock_fixture.h"
#include "tests/support/zk_test.h"
#include "tools/zkr/ledger.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"

namespace zkr {

using internal::NodeName;
using internal::OnCompletionThread;
using internal::SetClientLog;
using internal::NodeMode;
using internal::QueueNode;
using internal::ParseQueueNode;
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::LockTest;
using testing::ZkTest;

// A give-up's delete that is lost with its connection is retried once
// connected again (a guaranteed delete): the node goes while its session
// lives on, and the attempt returns only once it is gone.
TEST_F(LockTest, AGivenUpAttemptsLostDeleteIsRetried) {
  const std::string path = Path("lost-delete");
  auto holder = NewSharedLock(admin(), path);
  auto held = holder->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto faults = std::make_shared<testing::ClientFaults>();
  auto waiter_session = NewFaultySession(faults);
  const int64_t waiter_id = waiter_session->session_id();
  auto waiter = NewSharedLock(*waiter_session, path);
  faults->Add({testing::FaultRule::Call::kDelete, testing::FaultRule::Effect::kLoseRequest,
               path + "/", 1});
  absl::Status attempt = waiter->AcquireWrite(absl::Milliseconds(300)).status();
  EXPECT_TRUE(absl::IsDeadlineExceeded(attempt)) << attempt;
  EXPECT_EQ(Children(path), std::vector<std::string>{std::string(NodeName(held->node_path()))})
      << "the lost delete was not retried";
  EXPECT_EQ(waiter_session->session_id(), waiter_id);
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, HolderSessionExpiryPassesTheLockOnAndTheHolderSeesLost) {
  const std::string path = Path("expiry");
  absl::Notification lost;
  LockOptions options;
  options.on_state_change = [&](LockState state) {
    if (state == LockState::kLost) lost.Notify();
  };
  auto holder_session = NewSession();
  auto waiter_session = NewSession();
  auto holder = NewSharedLock(*holder_session, path, options);
  auto waiter = NewSharedLock(*waiter_session, path);
  auto held = holder->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  absl::Notification waiter_in;
  std::optional<LockGuard> waiter_guard;
  waiter->AcquireWriteAsync([&](absl::StatusOr<LockGuard> guard) {
    ASSERT_TRUE(guard.ok()) << guard.status();
    waiter_guard.emplace(std::move(*guard));
    waiter_in.Notify();
  });
  ASSERT_TRUE(WaitForChildren(path, 2));
  ASSERT_TRUE(testing::ExpireSession(*holder_session).ok());
  ASSERT_TRUE(waiter_in.WaitForNotificationWithTimeout(absl::Seconds(30)));
  (void)holder_session->Exists(path);  // the old holder hears of it on its next request
  ASSERT_TRUE(lost.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(held->state(), LockState::kLost);
  EXPECT_GT(waiter_guard->fencing_token(), held->fencing_token());
  EXPECT_TRUE(held->Release().ok());
  ASSERT_TRUE(waiter_guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, AnAcquisitionStartedBetweenGenerationsWaitsForTheNewSession) {
  testing::ZooKeeperServer* server = testing::SharedServer();
  if (server == nullptr) GTEST_SKIP() << "needs the embedded server (ZKR_TEST_CONNECT set)";
  SessionOptions options = Options();
  options.log_sink = [](absl::string_view) {};
  auto session = NewSession(options);
  testing::StateRecorder states(*session);  // removes its listener before `session` goes
  const uint64_t generation = session->generation();
  auto lock = NewSharedLock(*session, Path("between"));
  ASSERT_TRUE(server->Pause().ok());
  // The lease runs out while the server is paused: LOST, and the next
  // generation cannot connect yet.
  const bool saw_lost =
      states.WaitFor(SessionState::kLost, generation, absl::Seconds(30)).has_value();
  absl::Notification acquired;
  absl::Status result;
  std::optional<LockGuard> guard;
  lock->AcquireWriteAsync([&](absl::StatusOr<LockGuard> g) {
    result = g.status();
    if (g.ok()) guard.emplace(std::move(*g));
    acquired.Notify();
  });
  ASSERT_TRUE(server->Resume().ok());
  ASSERT_TRUE(saw_lost);
  ASSERT_TRUE(acquired.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_TRUE(result.ok()) << result;
  EXPECT_GE(session->generation(), 2u);
  EXPECT_TRUE(guard->held());
  ASSERT_TRUE(guard->Release().ok());
  ASSERT_TRUE(admin().Delete(Path("between")).ok());
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

}  // namespace
}  // namespace zkr
