// The promise every callback holder makes, against a real server: once its
// destructor (RemoveStateListener; a lock hold's last Release) returns, the callback is neither
// running nor will run, so what it captured may go. A call in progress on
// the dispatcher thread is waited for; only the callback itself may stop
// its holder without waiting (it would wait for itself).
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace {

using testing::ZkTest;

// A callback that, on its first call, says it has started, takes a while,
// and then records that it returned. `returned` outlives the test's holder.
struct SlowCallback {
  absl::Notification started;
  std::atomic<bool> returned{false};
  std::atomic<int> calls{0};

  void Run() {
    if (calls.fetch_add(1) > 0) return;
    started.Notify();
    absl::SleepFor(absl::Milliseconds(300));  // the window the holder goes in
    returned = true;
  }
};

class CallbackLifetimeTest : public ZkTest {};

TEST_F(CallbackLifetimeTest, LeaderObserverWaitsForOnChangeInProgress) {
  auto slow = std::make_shared<SlowCallback>();
  auto observer = LeaderObserver::Create(admin(), Path("observed"),
                                         [slow](const std::optional<LeaderInfo>&) { slow->Run(); });
  ASSERT_TRUE(observer.ok()) << observer.status();
  ASSERT_TRUE(slow->started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  observer->reset();
  EXPECT_TRUE(slow->returned) << "~LeaderObserver returned while on_change still ran";
}

TEST_F(CallbackLifetimeTest, GroupWatchWaitsForOnChangeInProgress) {
  auto slow = std::make_shared<SlowCallback>();
  auto watch = GroupWatch::Create(admin(), Path("group"),
                                  [slow](const std::vector<GroupMemberInfo>&) { slow->Run(); });
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(slow->started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  watch->reset();
  EXPECT_TRUE(slow->returned) << "~GroupWatch returned while on_change still ran";
}

TEST_F(CallbackLifetimeTest, LeaderElectionWaitsForOnChangeInProgress) {
  auto slow = std::make_shared<SlowCallback>();
  ElectionOptions options;
  options.on_change = [slow](Leadership) { slow->Run(); };
  auto session = NewSession();
  auto election = LeaderElection::Create(*session, Path("election"), options);
  ASSERT_TRUE(election.ok()) << election.status();
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE(slow->started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  election->reset();
  EXPECT_TRUE(slow->returned) << "~LeaderElection returned while on_change still ran";
  ASSERT_TRUE(admin().Delete(Path("election")).ok());
}

TEST_F(CallbackLifetimeTest, RemoveStateListenerWaitsForTheListenerInProgress) {
  SessionOptions options = Options();
  options.log_sink = [](absl::string_view) {};
  auto session = NewSession(options);
  auto slow = std::make_shared<SlowCallback>();
  const int id = session->AddStateListener([slow](SessionState, uint64_t) { slow->Run(); });
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(slow->started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  session->RemoveStateListener(id);
  EXPECT_TRUE(slow->returned) << "RemoveStateListener returned while the listener still ran";
}

TEST_F(CallbackLifetimeTest, ReleaseWaitsForOnStateChangeInProgress) {
  SessionOptions session_options = Options();
  session_options.log_sink = [](absl::string_view) {};
  auto session = NewSession(session_options);
  auto slow = std::make_shared<SlowCallback>();
  LockOptions options;
  options.on_state_change = [slow](LockState) { slow->Run(); };
  auto lock = ExclusiveLock::Create(*session, Path("lock"), options);
  ASSERT_TRUE(lock.ok()) << lock.status();
  absl::StatusOr<LockGuard> guard = (*lock)->Acquire();
  ASSERT_TRUE(guard.ok()) << guard.status();
  ASSERT_TRUE(testing::ExpireSession(*session).ok());  // the hold is lost
  ASSERT_TRUE(slow->started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(guard->Release().ok());
  EXPECT_TRUE(slow->returned) << "Release returned while on_state_change still ran";
  ASSERT_TRUE(admin().Delete(Path("lock")).ok());
}

// The exception: a callback may stop its own holder, and that returns at
// once (the rest of the callback runs after it, on the callback's stack).
TEST_F(CallbackLifetimeTest, OnChangeMayDestroyItsOwnObserver) {
  std::unique_ptr<LeaderObserver> observer;
  absl::Notification destroyed;
  absl::Notification created;
  auto made = LeaderObserver::Create(admin(), Path("self"), [&](const std::optional<LeaderInfo>&) {
    created.WaitForNotification();
    if (destroyed.HasBeenNotified()) return;
    observer.reset();
    destroyed.Notify();
  });
  ASSERT_TRUE(made.ok()) << made.status();
  observer = std::move(*made);
  created.Notify();
  EXPECT_TRUE(destroyed.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "on_change could not destroy its own observer";
}

// The usual reaction to a lost hold: release it from on_state_change.
TEST_F(CallbackLifetimeTest, OnStateChangeMayReleaseItsOwnHold) {
  SessionOptions session_options = Options();
  session_options.log_sink = [](absl::string_view) {};
  auto session = NewSession(session_options);
  std::optional<LockGuard> guard;
  absl::Notification acquired;
  absl::Notification released;
  absl::Status release;
  LockOptions options;
  options.on_state_change = [&](LockState state) {
    acquired.WaitForNotification();
    if (state != LockState::kLost || released.HasBeenNotified()) return;
    release = guard->Release();
    released.Notify();
  };
  auto lock = ExclusiveLock::Create(*session, Path("lock"), options);
  ASSERT_TRUE(lock.ok()) << lock.status();
  absl::StatusOr<LockGuard> acquire = (*lock)->Acquire();
  ASSERT_TRUE(acquire.ok()) << acquire.status();
  guard.emplace(std::move(*acquire));
  acquired.Notify();
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "on_state_change could not release its own hold";
  EXPECT_TRUE(release.ok()) << release;
  ASSERT_TRUE(admin().Delete(Path("lock")).ok());
}

}  // namespace
}  // namespace zkr
