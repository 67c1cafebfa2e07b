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
  EXPECT_EQ(*registry.Register("/a", false, nullptr), 0u);
  EXPECT_EQ(registry.Cancel(0), std::nullopt);
  EXPECT_EQ(registry.Replied(0, true), std::nullopt);
}

TEST(WatchRegistryTest, IdsAreUniqueAcrossRegistries) {
  // One registry per client (session generation): an id kept from an
  // earlier one must never name another recipe's watch in the next.
  int calls = 0;
  WatchRegistry first, second;
  const uintptr_t a = *first.Register("/a", false, Count(&calls));
  const uintptr_t b = *second.Register("/a", false, Count(&calls));
  EXPECT_NE(a, b);
  second.Replied(b, true);
  EXPECT_EQ(second.Cancel(a), std::nullopt);  // not its watch: nothing happens
  EXPECT_TRUE(second.Armed(b));
}

TEST(WatchRegistryTest, FiringHandsBackTheFunctionOnce) {
  int calls = 0;
  WatchRegistry registry;
  const uintptr_t id = *registry.Register("/a", false, Count(&calls));
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
  const uintptr_t one = *registry.Register("/a", false, Count(&calls));
  const uintptr_t two = *registry.Register("/a", false, Count(&calls));
  const uintptr_t child = *registry.Register("/a", true, Count(&calls));
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
  const uintptr_t set = *registry.Register("/a", false, Count(&calls));
  const uintptr_t unset = *registry.Register("/b", false, Count(&calls));
  EXPECT_EQ(registry.Cancel(set), std::nullopt);
  EXPECT_EQ(registry.Cancel(unset), std::nullopt);
  EXPECT_THAT(registry.WaitedPaths(), IsEmpty());  // cancelled: not waited on
  EXPECT_FALSE(registry.Fire(set));                // never called
  // Fire forgot `set`; register again to see the reply's decision.
  const uintptr_t again = *registry.Register("/a", false, Count(&calls));
  registry.Cancel(again);
  EXPECT_EQ(registry.Replied(again, true), (Place{"/a", false}));  // the server holds it
  EXPECT_EQ(registry.Replied(unset, false), std::nullopt);          // it does not
  EXPECT_EQ(calls, 0);
}

TEST(WatchRegistryTest, WaitedPathsAreSortedAndDistinct) {
  int calls = 0;
  WatchRegistry registry;
  *registry.Register("/b", false, Count(&calls));
  *registry.Register("/a", true, Count(&calls));
  *registry.Register("/a", false, Count(&calls));
  EXPECT_THAT(registry.WaitedPaths(), ElementsAre("/a", "/b"));
}

TEST(WatchRegistryTest, LostRemovalsAreResentOnceUnlessWatchedAgain) {
  int calls = 0;
  WatchRegistry registry;
  registry.RemovalLost(Place{"/a", false});
  registry.RemovalLost(Place{"/a", false});  // one per place
  registry.RemovalLost(Place{"/b", true});
  registry.RemovalLost(Place{"/c", false});
  (void)registry.Register("/c", false, Count(&calls));  // ours again: keep the server's
  std::vector<Place> resend = registry.TakeRemovalsToResend();
  std::sort(resend.begin(), resend.end(),
            [](const Place& x, const Place& y) { return x.path < y.path; });
  EXPECT_THAT(resend, ElementsAre(Place{"/a", false}, Place{"/b", true}));
  EXPECT_THAT(registry.TakeRemovalsToResend(), IsEmpty());
}

TEST(WatchRegistryTest, CloseForgetsEverythingAndLaterLosses) {
  int calls = 0;
  WatchRegistry registry;
  const uintptr_t id = *registry.Register("/a", false, Count(&calls));
  registry.RemovalLost(Place{"/b", false});
  registry.Close();
  EXPECT_FALSE(registry.Fire(id));
  EXPECT_THAT(registry.WaitedPaths(), IsEmpty());
  registry.RemovalLost(Place{"/c", false});
  EXPECT_THAT(registry.TakeRemovalsToResend(), IsEmpty());
}

// The reconnect packet's paths: each place the C client holds counts once,
// its path and 4 bytes beside it, from the registration until the server no
// longer holds it (fired, never set, or its removal answered).
TEST(WatchRegistryTest, CountsWhatTheReconnectPacketWouldCarry) {
  int calls = 0;
  WatchRegistry registry;
  registry.Limit(1000, 4);
  const uintptr_t a = *registry.Register("/aa", false, Count(&calls));     // 4 + 3
  const uintptr_t a2 = *registry.Register("/aa", false, Count(&calls));    // the same place
  const uintptr_t child = *registry.Register("/aa", true, Count(&calls));  // another kind
  const uintptr_t b = *registry.Register("/bbbb", false, Count(&calls));   // 4 + 5
  EXPECT_EQ(registry.watched_bytes(), 7u + 7u + 9u);
  EXPECT_EQ(registry.watched_places(), 3u);
  registry.Replied(a, true);
  registry.Replied(a2, true);
  registry.Replied(child, false);  // not set (say, NotFound): the server has none
  EXPECT_EQ(registry.watched_bytes(), 7u + 9u);
  // A firing: the C client forgets it.
  EXPECT_TRUE(registry.Fire(a));
  EXPECT_TRUE(registry.Fire(a2));
  EXPECT_EQ(registry.watched_bytes(), 9u);
  // A cancel of an armed watch: held until its removal is answered, also
  // across a lost removal sent again.
  registry.Replied(b, true);
  ASSERT_EQ(registry.Cancel(b), (Place{"/bbbb", false}));
  EXPECT_EQ(registry.watched_bytes(), 9u);
  registry.RemovalLost(Place{"/bbbb", false});
  EXPECT_THAT(registry.TakeRemovalsToResend(), ElementsAre(Place{"/bbbb", false}));
  EXPECT_EQ(registry.watched_bytes(), 9u);
  registry.RemovalDone(Place{"/bbbb", false});
  EXPECT_EQ(registry.watched_bytes(), 0u);
  EXPECT_EQ(registry.watched_places(), 0u);
}

TEST(WatchRegistryTest, AWatchPastTheLimitIsRefusedAndSetsNothing) {
  int calls = 0;
  WatchRegistry registry;
  registry.Limit(20, 4);
  const uintptr_t a = *registry.Register("/aaaaaaa", false, Count(&calls));  // 12
  absl::StatusOr<uintptr_t> b = registry.Register("/bbbbbbb", false, Count(&calls));
  ASSERT_TRUE(absl::IsResourceExhausted(b.status())) << b.status();
  EXPECT_THAT(std::string(b.status().message()),
              ::testing::AllOf(::testing::HasSubstr("/bbbbbbb"), ::testing::HasSubstr("24"),
                               ::testing::HasSubstr("20"),
                               ::testing::HasSubstr("max_request_bytes")));
  EXPECT_EQ(registry.watched_bytes(), 12u);
  EXPECT_THAT(registry.WaitedPaths(), ElementsAre("/aaaaaaa"));
  // The same place again costs nothing; a place freed makes room.
  EXPECT_TRUE(registry.Register("/aaaaaaa", false, Count(&calls)).ok());
  registry.Replied(a, false);
  EXPECT_TRUE(registry.Register("/bbbbbbb", true, Count(&calls)).status().code() ==
              absl::StatusCode::kResourceExhausted);  // the other /aaaaaaa still holds it
}

// A removal still unanswered when the place is watched again: counted once.
TEST(WatchRegistryTest, APlaceWatchedAgainDuringItsRemovalCountsOnce) {
  int calls = 0;
  WatchRegistry registry;
  registry.Limit(1000, 4);
  const uintptr_t a = *registry.Register("/aa", false, Count(&calls));
  registry.Replied(a, true);
  ASSERT_TRUE(registry.Cancel(a).has_value());
  const uintptr_t again = *registry.Register("/aa", false, Count(&calls));
  EXPECT_EQ(registry.watched_bytes(), 7u);
  registry.RemovalDone(Place{"/aa", false});
  EXPECT_EQ(registry.watched_bytes(), 7u);  // ours again
  EXPECT_TRUE(registry.Fire(again));
  EXPECT_EQ(registry.watched_bytes(), 0u);
}

}  // namespace
}  // namespace internal
}  // namespace zkr
