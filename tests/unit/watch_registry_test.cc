// WatchRegistry on its own (no server): ids unique across registries, when
// the server's watch on a place may be removed (last of ours there, armed or
// cancelled before its reply), what a firing hands back, and which lost
// removals are sent again on the next connection.
#include "src/watch_registry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace zkr {
namespace internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Place = WatchRegistry::Place;

ZkClient::WatchFn Count(int* calls) {
  return [calls](const WatchEvent&) { ++*calls; };
}

TEST(WatchRegistryTest, NoFunctionNoWatch) {
  WatchRegistry registry;
  EXPECT_EQ(registry.Register("/a", false, nullptr), 0u);
  EXPECT_EQ(registry.Cancel(0), std::nullopt);
  EXPECT_EQ(registry.Replied(0, true), std::nullopt);
}

TEST(WatchRegistryTest, IdsAreUniqueAcrossRegistries) {
  // One registry per client (session generation): an id kept from an
  // earlier one must never name another recipe's watch in the next.
  int calls = 0;
  WatchRegistry first, second;
  const uintptr_t a = first.Register("/a", false, Count(&calls));
  const uintptr_t b = second.Register("/a", false, Count(&calls));
  EXPECT_NE(a, b);
  second.Replied(b, true);
  EXPECT_EQ(second.Cancel(a), std::nullopt);  // not its watch: nothing happens
  EXPECT_TRUE(second.Armed(b));
}

TEST(WatchRegistryTest, FiringHandsBackTheFunctionOnce) {
  int calls = 0;
  WatchRegistry registry;
  const uintptr_t id = registry.Register("/a", false, Count(&calls));
  registry.Replied(id, true);
  ZkClient::WatchFn fn = registry.Fire(id);
  ASSERT_TRUE(fn);
  fn(WatchEvent{});
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(registry.Fire(id));
  EXPECT_FALSE(registry.Armed(id));
  EXPECT_THAT(registry.WaitedPaths(), IsEmpty());
}

TEST(WatchRegistryTest, CancellingTheLastArmedWatchOfAPlaceRemovesTheServersWatch) {
  int calls = 0;
  WatchRegistry registry;
  const uintptr_t one = registry.Register("/a", false, Count(&calls));
  const uintptr_t two = registry.Register("/a", false, Count(&calls));
  const uintptr_t child = registry.Register("/a", true, Count(&calls));
  for (uintptr_t id : {one, two, child}) registry.Replied(id, true);
  EXPECT_EQ(registry.Cancel(one), std::nullopt);  // another data watch is there
  EXPECT_EQ(registry.Cancel(two), (Place{"/a", false}));
  EXPECT_EQ(registry.Cancel(child), (Place{"/a", true}));
  EXPECT_EQ(registry.Cancel(child), std::nullopt);  // once
  EXPECT_EQ(calls, 0);
}

TEST(WatchRegistryTest, CancelledBeforeItsReplyTheReplyDecides) {
  int calls = 0;
  WatchRegistry registry;
  const uintptr_t set = registry.Register("/a", false, Count(&calls));
  const uintptr_t unset = registry.Register("/b", false, Count(&calls));
  EXPECT_EQ(registry.Cancel(set), std::nullopt);
  EXPECT_EQ(registry.Cancel(unset), std::nullopt);
  EXPECT_THAT(registry.WaitedPaths(), IsEmpty());  // cancelled: not waited on
  EXPECT_FALSE(registry.Fire(set));                // never called
  // Fire forgot `set`; register again to see the reply's decision.
  const uintptr_t again = registry.Register("/a", false, Count(&calls));
  registry.Cancel(again);
  EXPECT_EQ(registry.Replied(again, true), (Place{"/a", false}));  // the server holds it
  EXPECT_EQ(registry.Replied(unset, false), std::nullopt);          // it does not
  EXPECT_EQ(calls, 0);
}

TEST(WatchRegistryTest, WaitedPathsAreSortedAndDistinct) {
  int calls = 0;
  WatchRegistry registry;
  registry.Register("/b", false, Count(&calls));
  registry.Register("/a", true, Count(&calls));
  registry.Register("/a", false, Count(&calls));
  EXPECT_THAT(registry.WaitedPaths(), ElementsAre("/a", "/b"));
}

TEST(WatchRegistryTest, LostRemovalsAreResentOnceUnlessWatchedAgain) {
  int calls = 0;
  WatchRegistry registry;
  registry.RemovalLost(Place{"/a", false});
  registry.RemovalLost(Place{"/a", false});  // one per place
  registry.RemovalLost(Place{"/b", true});
  registry.RemovalLost(Place{"/c", false});
  registry.Register("/c", false, Count(&calls));  // ours again: keep the server's
  std::vector<Place> resend = registry.TakeRemovalsToResend();
  std::sort(resend.begin(), resend.end(),
            [](const Place& x, const Place& y) { return x.path < y.path; });
  EXPECT_THAT(resend, ElementsAre(Place{"/a", false}, Place{"/b", true}));
  EXPECT_THAT(registry.TakeRemovalsToResend(), IsEmpty());
}

TEST(WatchRegistryTest, CloseForgetsEverythingAndLaterLosses) {
  int calls = 0;
  WatchRegistry registry;
  const uintptr_t id = registry.Register("/a", false, Count(&calls));
  registry.RemovalLost(Place{"/b", false});
  registry.Close();
  EXPECT_FALSE(registry.Fire(id));
  EXPECT_THAT(registry.WaitedPaths(), IsEmpty());
  registry.RemovalLost(Place{"/c", false});
  EXPECT_THAT(registry.TakeRemovalsToResend(), IsEmpty());
}

}  // namespace
}  // namespace internal
}  // namespace zkr
