// WatchBudget and WatchReservation on their own (no server): a reservation
// takes only the difference and never shrinks, a refusal changes nothing
// and names what asked, the bytes and the limit, everything comes back on
// release or destruction, and concurrent reservations never pass the limit.
#include "src/watch_budget.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace zkr {
namespace internal {
namespace {

std::shared_ptr<WatchBudget> Budget(size_t limit) {
  return std::make_shared<WatchBudget>(limit, "the test's limit");
}

TEST(WatchBudgetTest, CoverTakesTheDifferenceAndNeverShrinks) {
  auto budget = Budget(100);
  WatchReservation r(budget);
  EXPECT_EQ(r.bytes(), 0u);
  ASSERT_TRUE(r.Cover(30, "lock /a").ok());
  EXPECT_EQ(budget->reserved(), 30u);
  EXPECT_EQ(budget->holders(), 1u);
  ASSERT_TRUE(r.Cover(50, "lock /a").ok());  // a longer blocker: 20 more
  EXPECT_EQ(budget->reserved(), 50u);
  ASSERT_TRUE(r.Cover(10, "lock /a").ok());  // less than held: nothing changes
  EXPECT_EQ(r.bytes(), 50u);
  EXPECT_EQ(budget->reserved(), 50u);
  EXPECT_EQ(budget->holders(), 1u);
}

TEST(WatchBudgetTest, RefusalChangesNothingAndSaysWhy) {
  auto budget = Budget(100);
  WatchReservation a(budget), b(budget);
  ASSERT_TRUE(a.Cover(70, "lock /a").ok());
  ASSERT_TRUE(b.Cover(20, "lock /b").ok());
  absl::Status refused = b.Cover(40, "lock /b");
  ASSERT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "lock /b")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "90 of their 100")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "needs 20 more")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "the test's limit")) << refused;
  EXPECT_EQ(b.bytes(), 20u);
  EXPECT_EQ(budget->reserved(), 90u);
  EXPECT_TRUE(absl::IsResourceExhausted(WatchReservation(budget).Cover(101, "x")));
  EXPECT_TRUE(b.Cover(30, "lock /b").ok());  // exactly the limit fits
  EXPECT_EQ(budget->reserved(), 100u);
}

TEST(WatchBudgetTest, ReleaseAndDestructionGiveEverythingBack) {
  auto budget = Budget(100);
  {
    WatchReservation r(budget);
    ASSERT_TRUE(r.Cover(60, "a").ok());
    r.Release();
    EXPECT_EQ(budget->reserved(), 0u);
    EXPECT_EQ(budget->holders(), 0u);
    ASSERT_TRUE(r.Cover(80, "a").ok());  // usable again
    r.Release();
    r.Release();  // twice: nothing more
    ASSERT_TRUE(r.Cover(40, "a").ok());
  }
  EXPECT_EQ(budget->reserved(), 0u);
  EXPECT_EQ(budget->holders(), 0u);
  WatchReservation never(budget);  // nothing taken, nothing given back
}

TEST(WatchBudgetTest, ConcurrentReservationsNeverPassTheLimit) {
  constexpr size_t kLimit = 1000;
  auto budget = Budget(kLimit);
  std::atomic<bool> over{false};
  std::atomic<int> granted{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        WatchReservation r(budget);
        if (r.Cover(50 + (i + t) % 100, "x").ok()) {
          ++granted;
          if (budget->reserved() > kLimit) over = true;
          if ((i & 1) != 0 && r.Cover(300, "x").ok() && budget->reserved() > kLimit) over = true;
        } else {
          ++refused;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_FALSE(over.load());
  EXPECT_GT(granted.load(), 0);
  EXPECT_EQ(budget->reserved(), 0u);
  EXPECT_EQ(budget->holders(), 0u);
}

}  // namespace
}  // namespace internal
}  // namespace zkr
