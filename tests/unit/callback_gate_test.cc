// CallbackGate on its own: a closed gate runs nothing; Close() waits for a
// call in progress on another thread; Close() from inside the call returns
// at once. (The recipes that use it: integration/callback_lifetime_test.)
#include "src/callback_gate.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace zkr {
namespace internal {
namespace {

TEST(CallbackGateTest, RunsUntilClosed) {
  CallbackGate gate;
  int calls = 0;
  gate.Run([&] { ++calls; });
  gate.Close();
  gate.Run([&] { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(CallbackGateTest, CloseWaitsForACallInProgress) {
  CallbackGate gate;
  absl::Notification started;
  std::atomic<bool> returned{false};
  std::thread dispatcher([&] {
    gate.Run([&] {
      started.Notify();
      absl::SleepFor(absl::Milliseconds(100));
      returned = true;
    });
  });
  started.WaitForNotification();
  gate.Close();
  EXPECT_TRUE(returned) << "Close() returned while the call still ran";
  dispatcher.join();
}

TEST(CallbackGateTest, CloseFromInsideTheCallReturnsAtOnce) {
  CallbackGate gate;
  bool after_close = false;
  gate.Run([&] {
    gate.Close();
    after_close = true;
  });
  EXPECT_TRUE(after_close);
  int calls = 0;
  gate.Run([&] { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace internal
}  // namespace zkr
