// The semaphore's decision (recipes/semaphore_decision.h): hand-made queues,
// then every queue of up to six participants asking 1 or 2 of 3 leases,
// checked against the properties the rule exists for.
#include "recipes/semaphore_decision.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"

namespace zkr {
namespace {

using internal::DecideSemaphore;
using internal::CouldTakeLeasesNow;
using internal::SemaphoreDecision;
using ::testing::ElementsAre;
using Kind = SemaphoreDecision::Kind;

std::string Node(const std::string& who, int weight, int leases, int32_t sequence) {
  return absl::StrFormat("%s-S%dof%d-%010d", who, weight, leases, sequence);
}

TEST(SemaphoreDecisionTest, HoldsWhileTheLeasesFit) {
  const std::vector<std::string> queue = {Node("a", 1, 2, 1), Node("b", 1, 2, 2),
                                          Node("c", 1, 2, 3)};
  SemaphoreDecision a = DecideSemaphore(queue, queue[0]);
  EXPECT_EQ(a.kind, Kind::kAcquired);
  EXPECT_TRUE(a.successor);  // b and c were listed: they may wait on a
  EXPECT_EQ(DecideSemaphore(queue, queue[1]).kind, Kind::kAcquired);
  SemaphoreDecision last = DecideSemaphore({queue[0], queue[1]}, queue[1]);
  EXPECT_EQ(last.kind, Kind::kAcquired);
  EXPECT_FALSE(last.successor);  // nobody behind: no mark
}

TEST(SemaphoreDecisionTest, TheFirstWaiterWatchesEveryNodeBeforeIt) {
  const std::vector<std::string> queue = {Node("a", 1, 2, 1), Node("b", 1, 2, 2),
                                          Node("c", 1, 2, 3), Node("d", 1, 2, 4)};
  SemaphoreDecision c = DecideSemaphore(queue, queue[2]);
  EXPECT_EQ(c.kind, Kind::kWait);
  EXPECT_TRUE(c.first_waiter);
  EXPECT_TRUE(c.any_one);
  EXPECT_THAT(c.watch, ElementsAre(queue[0], queue[1]));
  SemaphoreDecision d = DecideSemaphore(queue, queue[3]);
  EXPECT_EQ(d.kind, Kind::kWait);
  EXPECT_FALSE(d.first_waiter);
  EXPECT_THAT(d.watch, ElementsAre(queue[2]));  // its predecessor, a waiter
}

TEST(SemaphoreDecisionTest, ALargeRequestIsNotPassedAndKnowsWhichReleaseIsEnough) {
  // 3 leases: a holds 1, b holds 2; c asks 2: neither release alone (a's)
  // is enough; d asks 1 and would fit beside a, but does not pass c.
  const std::vector<std::string> queue = {Node("a", 1, 3, 1), Node("b", 2, 3, 2),
                                          Node("c", 2, 3, 3), Node("d", 1, 3, 4)};
  SemaphoreDecision c = DecideSemaphore(queue, queue[2]);
  EXPECT_EQ(c.kind, Kind::kWait);
  EXPECT_TRUE(c.first_waiter);
  EXPECT_FALSE(c.any_one);  // a's release frees 1: 2 + 2 > 3
  SemaphoreDecision d = DecideSemaphore(queue, queue[3]);
  EXPECT_EQ(d.kind, Kind::kWait);
  EXPECT_THAT(d.watch, ElementsAre(queue[2]));
}

TEST(SemaphoreDecisionTest, RefusesAnotherSizeQueuedBeforeAndIgnoresOneBehind) {
  const std::vector<std::string> queue = {Node("a", 1, 3, 1), Node("b", 1, 2, 2),
                                          Node("c", 1, 3, 3)};
  SemaphoreDecision b = DecideSemaphore(queue, queue[1]);
  EXPECT_EQ(b.kind, Kind::kMismatch);
  EXPECT_EQ(b.mismatch, queue[0]);
  EXPECT_EQ(b.mismatch_leases, 3);
  EXPECT_EQ(DecideSemaphore(queue, queue[0]).kind, Kind::kAcquired);
  // c agrees with the earliest node: b (refused itself) does not get it
  // refused, but keeps its place, and the limit is b's smaller N.
  SemaphoreDecision c = DecideSemaphore(queue, queue[2]);
  EXPECT_EQ(c.kind, Kind::kWait);
  EXPECT_TRUE(c.first_waiter);
  EXPECT_TRUE(c.any_one);
  EXPECT_THAT(c.watch, ElementsAre(queue[0], queue[1]));
  // b's node is earliest once a has gone: c, which waited, is not refused
  // now (its N was accepted); b's place counts against the limit of 2.
  const std::vector<std::string> later = {queue[1], queue[2]};
  EXPECT_EQ(DecideSemaphore(later, queue[2]).kind, Kind::kMismatch);
  SemaphoreDecision accepted = DecideSemaphore(later, queue[2], /*size_accepted=*/true);
  EXPECT_EQ(accepted.kind, Kind::kAcquired);
}

TEST(SemaphoreDecisionTest, IgnoresForeignNodesAndReportsLoss) {
  const std::vector<std::string> queue = {"notes", Node("a", 1, 1, 2)};
  EXPECT_EQ(DecideSemaphore(queue, queue[1]).kind, Kind::kAcquired);
  EXPECT_EQ(DecideSemaphore({queue[0]}, Node("a", 1, 1, 2)).kind, Kind::kLost);
  EXPECT_EQ(DecideSemaphore({"host-W-0000000001"}, "host-W-0000000001").kind,
            Kind::kLost);  // not a lease node
  EXPECT_TRUE(CouldTakeLeasesNow(queue, 0, 1));
  EXPECT_FALSE(CouldTakeLeasesNow(queue, 1, 1));
  EXPECT_TRUE(CouldTakeLeasesNow({"host-W-0000000001"}, 1, 1));
}

// A lock and a semaphore cannot share a path: a lock node that is the
// earliest refuses me (unless I waited already); one before me that is not
// the earliest makes me wait on it, free leases or not; one after me is
// ignored.
TEST(SemaphoreDecisionTest, LockNodesRefuseOrBlock) {
  const std::string lock = "host-W-0000000002";
  SemaphoreDecision refused = DecideSemaphore({lock, Node("a", 1, 2, 3)}, Node("a", 1, 2, 3));
  EXPECT_EQ(refused.kind, Kind::kOtherKind);
  EXPECT_EQ(refused.mismatch, lock);
  SemaphoreDecision accepted =
      DecideSemaphore({lock, Node("a", 1, 2, 3)}, Node("a", 1, 2, 3), /*size_accepted=*/true);
  EXPECT_EQ(accepted.kind, Kind::kWait);
  EXPECT_THAT(accepted.watch, ElementsAre(lock));
  const std::vector<std::string> between = {Node("h", 1, 2, 1), lock, Node("a", 1, 2, 3)};
  SemaphoreDecision blocked = DecideSemaphore(between, between[2]);
  EXPECT_EQ(blocked.kind, Kind::kWait);
  EXPECT_THAT(blocked.watch, ElementsAre(lock));
  EXPECT_FALSE(blocked.any_one);
  SemaphoreDecision first = DecideSemaphore({Node("a", 1, 2, 1), lock}, Node("a", 1, 2, 1));
  EXPECT_EQ(first.kind, Kind::kAcquired);
}

TEST(SemaphoreDecisionTest, OrdersAcrossTheCounterWrap) {
  const std::vector<std::string> queue = {Node("late", 1, 1, INT32_MIN),
                                          Node("early", 1, 1, INT32_MAX)};
  EXPECT_EQ(DecideSemaphore(queue, queue[1]).kind, Kind::kAcquired);
  SemaphoreDecision late = DecideSemaphore(queue, queue[0]);
  EXPECT_EQ(late.kind, Kind::kWait);
  EXPECT_THAT(late.watch, ElementsAre(queue[1]));
}

// Every queue of up to six participants, each asking 1 or 2 of 3 leases:
// the granted never exceed 3 and form a prefix (FIFO); the first waiter is
// the first one not granted and watches every node before it; each later
// waiter watches its predecessor; so each node has at most one watcher.
TEST(SemaphoreDecisionTest, EveryQueueOfUpToSixKeepsTheRule) {
  constexpr int kLeases = 3;
  int checked = 0;
  for (int size = 1; size <= 6; ++size) {
    for (int weights = 0; weights < (1 << size); ++weights) {
      std::vector<std::string> queue;
      for (int i = 0; i < size; ++i) {
        queue.push_back(Node(absl::StrCat("p", i), 1 + ((weights >> i) & 1), kLeases, 10 + i));
      }
      int granted_leases = 0;
      bool seen_waiter = false;
      std::map<std::string, int> watchers;
      for (int i = 0; i < size; ++i) {
        SemaphoreDecision d = DecideSemaphore(queue, queue[i]);
        const int weight = 1 + ((weights >> i) & 1);
        SCOPED_TRACE(absl::StrCat("queue size ", size, " weights ", weights, " node ", i));
        if (d.kind == Kind::kAcquired) {
          ASSERT_FALSE(seen_waiter) << "passed a waiter";
          granted_leases += weight;
          EXPECT_EQ(d.successor, i + 1 < size);
          continue;
        }
        ASSERT_EQ(d.kind, Kind::kWait);
        EXPECT_EQ(d.first_waiter, !seen_waiter);
        if (d.first_waiter) {
          EXPECT_EQ(d.watch.size(), static_cast<size_t>(i));
          EXPECT_GT(granted_leases + weight, kLeases);
        } else {
          EXPECT_THAT(d.watch, ElementsAre(queue[i - 1]));
        }
        for (const std::string& watched : d.watch) ++watchers[watched];
        seen_waiter = true;
      }
      EXPECT_LE(granted_leases, kLeases);
      for (const auto& [node, count] : watchers) EXPECT_EQ(count, 1) << node;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 126);
}

}  // namespace
}  // namespace zkr
