// Herd-freedom and fairness, proved by what the ZooKeeper server itself
// reports: its watch listing (`wchp`) and its watch-trigger counters (`mntr`).
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {

using internal::ParseQueueNode;
namespace {

using testing::ZkTest;

using testing::WatchListing;

std::string Hex(int64_t session_id) { return testing::SessionIdHex(session_id); }

// One participant: its own session and lock object; acquisitions are async
// so the test can hold many waiters at once.
struct Participant {
  std::unique_ptr<Session> session;
  std::unique_ptr<SharedLock> lock;
  absl::Notification acquired;
  std::optional<LockGuard> guard;
  absl::Notification failed;
  absl::Status failure;
};

class LockHerdTest : public ZkTest {
 protected:
  void SetUp() override {
    ZkTest::SetUp();
    if (testing::SharedServer() == nullptr) GTEST_SKIP() << "needs the embedded server's four-letter words";
  }

  std::unique_ptr<Participant> Join(const std::string& path) {
    auto p = std::make_unique<Participant>();
    p->session = NewSession();
    LockOptions options;
    options.watch_own_node = false;  // the bare protocol: only queue watches
    p->lock = std::move(*SharedLock::Create(*p->session, path, options));
    return p;
  }
  // Queues `p` for `write` and waits until its node is on the server (poll
  // without watches: this test's own watches would pollute the counts).
  void Queue(Participant& p, bool write, const std::string& path, size_t nodes_after) {
    auto done = [&p](absl::StatusOr<LockGuard> guard) {
      if (!guard.ok()) {
        p.failure = guard.status();
        p.failed.Notify();
        return;
      }
      p.guard.emplace(std::move(*guard));
      p.acquired.Notify();
    };
    if (write) {
      p.lock->AcquireWriteAsync(done);
    } else {
      p.lock->AcquireReadAsync(done);
    }
    for (int i = 0; i < 3000; ++i) {
      auto children = admin().GetChildren(path);
      if (children.ok() && children->size() >= nodes_after) return;
      absl::SleepFor(absl::Milliseconds(2));
    }
    FAIL() << "node of participant never appeared";
  }
  void ExpectTriggers(int64_t deleted_before, int64_t children_before, int64_t deleted_delta) {
    EXPECT_EQ(testing::DataWatchesFired() - deleted_before, deleted_delta);
    EXPECT_EQ(testing::SharedServerCounter("zk_sum_node_children_watch_count") - children_before, 0)
        << "someone watched the lock directory's children";
  }
};

TEST_F(LockHerdTest, OneWriterReleaseWakesExactlyOneWaiter) {
  const std::string path = Path("herd");
  constexpr int kWaiters = 6;
  std::vector<std::unique_ptr<Participant>> queue;
  for (int i = 0; i <= kWaiters; ++i) {
    queue.push_back(Join(path));
    Queue(*queue.back(), /*write=*/true, path, i + 1);
  }
  ASSERT_TRUE(queue[0]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // Each waiter watches exactly its direct predecessor; nobody the directory.
  WatchListing expected;
  std::vector<std::string> nodes = *admin().GetChildren(path);
  std::sort(nodes.begin(), nodes.end(), [](const std::string& a, const std::string& b) {
    return ParseQueueNode(a)->sequence < ParseQueueNode(b)->sequence;
  });
  ASSERT_EQ(nodes.size(), static_cast<size_t>(kWaiters + 1));
  for (int i = 1; i <= kWaiters; ++i) {
    expected[path + "/" + nodes[i - 1]].insert(Hex(queue[i]->session->session_id()));
  }
  EXPECT_EQ(testing::AwaitWatchListing(expected), expected);

  // Each release triggers exactly one watch and lets exactly the next in.
  for (int i = 0; i < kWaiters; ++i) {
    const int64_t deleted = testing::DataWatchesFired();
    const int64_t children = testing::SharedServerCounter("zk_sum_node_children_watch_count");
    ASSERT_TRUE(queue[i]->guard->Release().ok());
    ASSERT_TRUE(queue[i + 1]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
    ExpectTriggers(deleted, children, 1);
    for (int later = i + 2; later <= kWaiters; ++later) {
      EXPECT_FALSE(queue[later]->acquired.HasBeenNotified()) << "participant " << later;
    }
  }
  ASSERT_TRUE(queue[kWaiters]->guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockHerdTest, ReadersWatchOnlyTheLastWriterBeforeThemAndWritersAreNotStarved) {
  // Queue: W0 (holds), R1, R2, W3, R4, R5.
  const std::string path = Path("mixed");
  const bool writes[] = {true, false, false, true, false, false};
  std::vector<std::unique_ptr<Participant>> queue;
  for (int i = 0; i < 6; ++i) {
    queue.push_back(Join(path));
    Queue(*queue.back(), writes[i], path, i + 1);
  }
  ASSERT_TRUE(queue[0]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  std::vector<std::string> nodes = *admin().GetChildren(path);
  std::sort(nodes.begin(), nodes.end(), [](const std::string& a, const std::string& b) {
    return ParseQueueNode(a)->sequence < ParseQueueNode(b)->sequence;
  });
  auto node = [&](int i) { return path + "/" + nodes[i]; };
  auto session = [&](int i) { return Hex(queue[i]->session->session_id()); };
  WatchListing expected;
  expected[node(0)] = {session(1), session(2)};  // readers -> last writer before them
  expected[node(2)] = {session(3)};              // writer -> direct predecessor
  expected[node(3)] = {session(4), session(5)};  // later readers wait behind W3
  EXPECT_EQ(testing::AwaitWatchListing(expected), expected);

  // W0 leaves: both readers in (two watches fire, both can proceed).
  int64_t deleted = testing::DataWatchesFired();
  int64_t children = testing::SharedServerCounter("zk_sum_node_children_watch_count");
  ASSERT_TRUE(queue[0]->guard->Release().ok());
  ASSERT_TRUE(queue[1]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(queue[2]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ExpectTriggers(deleted, children, 2);
  // R4/R5 arrived after W3: they must not overtake it.
  EXPECT_FALSE(queue[4]->acquired.HasBeenNotified());
  EXPECT_FALSE(queue[5]->acquired.HasBeenNotified());

  // R1 leaves: nobody watches it, nobody wakes.
  deleted = testing::DataWatchesFired();
  ASSERT_TRUE(queue[1]->guard->Release().ok());
  ExpectTriggers(deleted, children, 0);
  EXPECT_FALSE(queue[3]->acquired.HasBeenNotified());

  // R2 leaves: the writer, and only it.
  deleted = testing::DataWatchesFired();
  ASSERT_TRUE(queue[2]->guard->Release().ok());
  ASSERT_TRUE(queue[3]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ExpectTriggers(deleted, children, 1);
  EXPECT_FALSE(queue[4]->acquired.HasBeenNotified());

  // W3 leaves: the two later readers.
  deleted = testing::DataWatchesFired();
  ASSERT_TRUE(queue[3]->guard->Release().ok());
  ASSERT_TRUE(queue[4]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(queue[5]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ExpectTriggers(deleted, children, 2);
  ASSERT_TRUE(queue[4]->guard->Release().ok());
  ASSERT_TRUE(queue[5]->guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockHerdTest, AWaiterWhosePredecessorGivesUpReDecidesAndWatchesTheNextOne) {
  // W0 holds; W1 and W2 wait. W1 gives up (cancel): W2's watch fires once, it
  // re-reads the queue and now watches W0 — not acquiring.
  const std::string path = Path("giveup");
  std::vector<std::unique_ptr<Participant>> queue;
  for (int i = 0; i < 3; ++i) {
    queue.push_back(Join(path));
    Queue(*queue.back(), true, path, i + 1);
  }
  std::vector<std::string> nodes = *admin().GetChildren(path);
  std::sort(nodes.begin(), nodes.end(), [](const std::string& a, const std::string& b) {
    return ParseQueueNode(a)->sequence < ParseQueueNode(b)->sequence;
  });
  WatchListing expected;
  expected[path + "/" + nodes[0]] = {Hex(queue[1]->session->session_id())};
  expected[path + "/" + nodes[1]] = {Hex(queue[2]->session->session_id())};
  EXPECT_EQ(testing::AwaitWatchListing(expected), expected);
  queue[1]->lock->Cancel();
  ASSERT_TRUE(queue[1]->failed.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(absl::IsCancelled(queue[1]->failure)) << queue[1]->failure;
  WatchListing after;
  // W1's abandoned watch on W0 is removed when it gives up; W2 now watches W0.
  after[path + "/" + nodes[0]] = {Hex(queue[2]->session->session_id())};
  EXPECT_EQ(testing::AwaitWatchListing(after), after);
  EXPECT_FALSE(queue[2]->acquired.HasBeenNotified());
  ASSERT_TRUE(queue[0]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(queue[0]->guard->Release().ok());
  ASSERT_TRUE(queue[2]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(queue[1]->acquired.HasBeenNotified());
  ASSERT_TRUE(queue[2]->guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

}  // namespace
}  // namespace zkr
