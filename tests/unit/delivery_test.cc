// Deliver and Delivering (src/delivery.h) on their own, no server: calls run
// on the dispatcher thread in the order delivered; a closed gate drops what
// is still queued; once the dispatcher stopped a call runs inline, or is
// dropped with IfStopped::kDrop; a delivering callback passes move-only values.
#include "src/delivery.h"

#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace zkr {
namespace internal {
namespace {

TEST(DeliveryTest, RunsOnTheDispatcherInOrder) {
  Dispatcher dispatcher;
  absl::Mutex mu;
  std::vector<int> order;
  bool all_on_dispatcher = true;
  for (int i = 0; i < 5; ++i) {
    Deliver(dispatcher, /*gate=*/nullptr, [&, i] {
      absl::MutexLock lock(&mu);
      all_on_dispatcher = all_on_dispatcher && dispatcher.OnDispatcherThread();
      order.push_back(i);
    });
  }
  dispatcher.Drain();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(all_on_dispatcher);
}

TEST(DeliveryTest, AClosedGateDropsWhatIsStillQueued) {
  Dispatcher dispatcher;
  auto gate = std::make_shared<CallbackGate>();
  absl::Notification release;
  Deliver(dispatcher, nullptr, [&] { release.WaitForNotification(); });  // holds the queue
  int calls = 0;
  Deliver(dispatcher, gate, [&] { ++calls; });
  gate->Close();
  release.Notify();
  dispatcher.Drain();
  EXPECT_EQ(calls, 0);
}

TEST(DeliveryTest, AfterShutdownRunsInlineOrDrops) {
  Dispatcher dispatcher;
  dispatcher.Shutdown();
  int inline_calls = 0, dropped_calls = 0;
  Deliver(dispatcher, nullptr, [&] { ++inline_calls; });
  Deliver(
      dispatcher, nullptr, [&] { ++dropped_calls; }, IfStopped::kDrop);
  EXPECT_EQ(inline_calls, 1);
  EXPECT_EQ(dropped_calls, 0);
}

TEST(DeliveryTest, DeliveringPassesMoveOnlyValues) {
  Dispatcher dispatcher;
  int got = 0;
  std::function<void(std::unique_ptr<int>)> fn = [&](std::unique_ptr<int> value) { got = *value; };
  std::function<void(std::unique_ptr<int>)> delivering =
      Delivering(dispatcher, /*gate=*/nullptr, std::move(fn));
  delivering(std::make_unique<int>(7));
  dispatcher.Drain();
  EXPECT_EQ(got, 7);
  EXPECT_FALSE(Delivering(dispatcher, nullptr, std::function<void(int)>()));
}

}  // namespace
}  // namespace internal
}  // namespace zkr
