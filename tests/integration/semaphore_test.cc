// zkr::Semaphore against a real server: never more than N leases held (a
// ledger over 8 sessions), strict FIFO for multi-lease requests, the watch
// layout and the wake-ups per release as the server itself reports them
// (`wchp`, `mntr`), expiry and give-up handing leases on, and bad input.
#include "zkrecipes/semaphore.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace {

using internal::ParseQueueNode;
using testing::ZkTest;
using testing::WatchListing;

// One participant: its own session and semaphore object, acquiring
// asynchronously so that a test can hold many waiters at once.
struct Participant {
  std::unique_ptr<Session> session;
  std::unique_ptr<Semaphore> semaphore;
  absl::Notification acquired;
  std::optional<LockGuard> guard;
  absl::Notification failed;
  absl::Status failure;
};

class SemaphoreTest : public ZkTest {
 protected:
  std::unique_ptr<Participant> Join(const std::string& path, int leases) {
    auto p = std::make_unique<Participant>();
    p->session = NewSession();
    LockOptions options;
    options.watch_own_node = false;  // only the queue's watches, to count them
    auto semaphore = Semaphore::Create(*p->session, path, leases, options);
    EXPECT_TRUE(semaphore.ok()) << semaphore.status();
    p->semaphore = std::move(*semaphore);
    return p;
  }
  // Asks `count` leases for `p` and waits until its node is on the server
  // (polling without watches: the test's own would pollute the counts).
  void Queue(Participant& p, int count, const std::string& path, size_t nodes_after) {
    p.semaphore->AcquireAsync(count, [&p](absl::StatusOr<LockGuard> guard) {
      if (!guard.ok()) {
        p.failure = guard.status();
        p.failed.Notify();
        return;
      }
      p.guard.emplace(std::move(*guard));
      p.acquired.Notify();
    });
    for (int i = 0; i < 3000; ++i) {
      auto children = admin().GetChildren(path);
      if (children.ok() && children->size() >= nodes_after) return;
      absl::SleepFor(absl::Milliseconds(2));
    }
    FAIL() << "node of participant never appeared";
  }
  std::vector<std::string> NodesInOrder(const std::string& path) {
    std::vector<std::string> nodes = *admin().GetChildren(path);
    std::sort(nodes.begin(), nodes.end(), [](const std::string& a, const std::string& b) {
      return ParseQueueNode(a)->sequence < ParseQueueNode(b)->sequence;
    });
    for (std::string& node : nodes) node = path + "/" + node;
    return nodes;
  }
  static std::string Hex(const Participant& p) {
    return testing::SessionIdHex(p.session->session_id());
  }
};

// 8 sessions, 3 leases, 12 grants each of 1 or 2 leases: the leases in use
// (a ledger kept by the holders themselves) never exceed 3, and 3 were in
// use at once at some point (so it is a semaphore, not a mutex).
TEST_F(SemaphoreTest, NeverMoreThanNLeasesAcrossEightSessions) {
  const std::string path = Path("ledger");
  constexpr int kLeases = 3, kSessions = 8, kRounds = 12;
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<Semaphore>> semaphores;
  for (int s = 0; s < kSessions; ++s) {
    sessions.push_back(NewSession());
    auto semaphore = Semaphore::Create(*sessions.back(), path, kLeases);
    ASSERT_TRUE(semaphore.ok()) << semaphore.status();
    semaphores.push_back(std::move(*semaphore));
  }
  std::atomic<int> in_use{0}, most{0}, over{0}, grants{0};
  std::atomic<int64_t> last_token{0};
  std::vector<std::thread> threads;
  for (int s = 0; s < kSessions; ++s) {
    threads.emplace_back([&, s] {
      for (int round = 0; round < kRounds; ++round) {
        const int count = (s + round) % 4 == 0 ? 2 : 1;
        absl::StatusOr<LockGuard> lease = semaphores[s]->Acquire(count, absl::Seconds(60));
        ASSERT_TRUE(lease.ok()) << lease.status();
        EXPECT_GT(lease->fencing_token(), 0);
        const int now = in_use.fetch_add(count) + count;
        if (now > kLeases) ++over;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        absl::SleepFor(absl::Milliseconds(2));
        in_use.fetch_sub(count);
        ASSERT_TRUE(lease->Release().ok());
        ++grants;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(over.load(), 0) << "more than " << kLeases << " leases in use at once";
  EXPECT_EQ(grants.load(), kSessions * kRounds);
  // How many the run had in use at once depends on scheduling (2 ms holds:
  // a loaded machine once saw 2 at most); that all N can be in use at once
  // is checked here, where it does not: N sessions take one each, the next
  // finds none free.
  RecordProperty("most_in_use_at_once", most.load());
  std::vector<LockGuard> all;
  for (int s = 0; s < kLeases; ++s) {
    absl::StatusOr<LockGuard> lease = semaphores[s]->TryAcquire(1);
    ASSERT_TRUE(lease.ok()) << s << ": " << lease.status();
    all.push_back(std::move(*lease));
  }
  absl::StatusOr<LockGuard> none = semaphores[kLeases]->TryAcquire(1);
  EXPECT_TRUE(absl::IsDeadlineExceeded(none.status())) << none.status();
  for (LockGuard& lease : all) ASSERT_TRUE(lease.Release().ok());
  semaphores.clear();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Queue A B C D E with 2 leases: A and B hold; C, the first waiter, watches
// both; D watches C, E watches D — one watcher per node. B releases (out of
// order): its delete wakes C only, which holds; C's mark wakes D only, which
// becomes the first waiter and watches A and C. Two watch events per
// release, whatever the queue's length; no child watch, ever.
TEST_F(SemaphoreTest, ReleasesWakeOnlyTheWaiterTheyLetInAndItsSuccessor) {
  if (testing::SharedServer() == nullptr) GTEST_SKIP() << "needs the server's four-letter words";
  const std::string path = Path("herd");
  std::vector<std::unique_ptr<Participant>> queue;
  for (int i = 0; i < 5; ++i) {
    queue.push_back(Join(path, 2));
    Queue(*queue.back(), 1, path, i + 1);
  }
  ASSERT_TRUE(queue[0]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(queue[1]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  const std::vector<std::string> nodes = NodesInOrder(path);
  WatchListing expected;
  expected[nodes[0]] = {Hex(*queue[2])};
  expected[nodes[1]] = {Hex(*queue[2])};
  expected[nodes[2]] = {Hex(*queue[3])};
  expected[nodes[3]] = {Hex(*queue[4])};
  EXPECT_EQ(testing::AwaitWatchListing(expected), expected);

  const int64_t fired = testing::DataWatchesFired();
  const int64_t children = testing::SharedServerCounter("zk_sum_node_children_watch_count");
  ASSERT_TRUE(queue[1]->guard->Release().ok());
  ASSERT_TRUE(queue[2]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  WatchListing after;
  after[nodes[0]] = {Hex(*queue[3])};
  after[nodes[2]] = {Hex(*queue[3])};
  after[nodes[3]] = {Hex(*queue[4])};
  EXPECT_EQ(testing::AwaitWatchListing(after), after);
  EXPECT_EQ(testing::DataWatchesFired() - fired, 2);
  EXPECT_EQ(testing::SharedServerCounter("zk_sum_node_children_watch_count") - children, 0);
  EXPECT_FALSE(queue[3]->acquired.HasBeenNotified());
  EXPECT_FALSE(queue[4]->acquired.HasBeenNotified());

  // A releases: D in, E moves up and watches C and D. Then C releases: E in.
  ASSERT_TRUE(queue[0]->guard->Release().ok());
  ASSERT_TRUE(queue[3]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  WatchListing last;
  last[nodes[2]] = {Hex(*queue[4])};
  last[nodes[3]] = {Hex(*queue[4])};
  EXPECT_EQ(testing::AwaitWatchListing(last), last);
  EXPECT_FALSE(queue[4]->acquired.HasBeenNotified());
  ASSERT_TRUE(queue[2]->guard->Release().ok());
  ASSERT_TRUE(queue[4]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(testing::DataWatchesFired() - fired, 5);  // the last release has nobody behind it
  ASSERT_TRUE(queue[3]->guard->Release().ok());
  ASSERT_TRUE(queue[4]->guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// 3 leases: A holds 2; B asks 2 and waits; C asks 1 — it would fit beside
// A, but does not pass B. A releases: B holds, and C beside it (2 + 1).
TEST_F(SemaphoreTest, ALargeRequestIsNotPassedByASmallerOne) {
  const std::string path = Path("fifo");
  std::vector<std::unique_ptr<Participant>> queue;
  const int counts[] = {2, 2, 1};
  for (int i = 0; i < 3; ++i) {
    queue.push_back(Join(path, 3));
    Queue(*queue.back(), counts[i], path, i + 1);
  }
  ASSERT_TRUE(queue[0]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::SleepFor(absl::Milliseconds(200));  // give a wrong grant time to show
  EXPECT_FALSE(queue[1]->acquired.HasBeenNotified());
  EXPECT_FALSE(queue[2]->acquired.HasBeenNotified()) << "C passed B";
  ASSERT_TRUE(queue[0]->guard->Release().ok());
  ASSERT_TRUE(queue[1]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(queue[2]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(queue[1]->guard->Release().ok());
  ASSERT_TRUE(queue[2]->guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A holder's session expires: its lease goes with its node, and the first
// waiter holds.
TEST_F(SemaphoreTest, TheExpiryOfAHolderFreesItsLease) {
  const std::string path = Path("expiry");
  std::vector<std::unique_ptr<Participant>> queue;
  for (int i = 0; i < 3; ++i) {
    queue.push_back(Join(path, 2));
    Queue(*queue.back(), 1, path, i + 1);
  }
  ASSERT_TRUE(queue[0]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(queue[1]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(queue[2]->acquired.HasBeenNotified());
  ASSERT_TRUE(testing::ExpireSession(*queue[0]->session).ok());
  ASSERT_TRUE(queue[2]->acquired.WaitForNotificationWithTimeout(absl::Seconds(20)));
  queue[0]->guard.reset();  // lost: releasing it deletes nothing
  ASSERT_TRUE(queue[1]->guard->Release().ok());
  ASSERT_TRUE(queue[2]->guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A semaphore's errors call it a semaphore and name its path: a full one
// given up at once (a timeout already past), and a waiting acquisition
// when its session is closed.
TEST_F(SemaphoreTest, ItsErrorsCallItASemaphore) {
  const std::string path = Path("named");
  auto holder = Semaphore::Create(admin(), path, 1);
  ASSERT_TRUE(holder.ok()) << holder.status();
  absl::StatusOr<LockGuard> held = (*holder)->Acquire();
  ASSERT_TRUE(held.ok()) << held.status();
  std::unique_ptr<Session> session = NewSession();
  auto waiter = Semaphore::Create(*session, path, 1);
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  const std::string named = absl::StrCat("semaphore ", path);
  absl::StatusOr<LockGuard> past = (*waiter)->Acquire(1, absl::Seconds(-5));
  EXPECT_TRUE(absl::IsDeadlineExceeded(past.status())) << past.status();
  EXPECT_TRUE(absl::StrContains(past.status().message(), named)) << past.status();
  std::future<absl::StatusOr<LockGuard>> blocked = (*waiter)->AcquireFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));  // queued behind the holder
  session->Close();
  ASSERT_EQ(blocked.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> closed = blocked.get();
  EXPECT_TRUE(absl::IsCancelled(closed.status())) << closed.status();
  EXPECT_TRUE(absl::StrContains(closed.status().message(), named)) << closed.status();
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// The first waiter gives up: the waiter behind it (woken by its delete)
// becomes the first waiter and holds on the next release; nothing is left.
TEST_F(SemaphoreTest, AFirstWaiterThatGivesUpHandsItsPlaceOn) {
  const std::string path = Path("giveup");
  std::vector<std::unique_ptr<Participant>> queue;
  for (int i = 0; i < 3; ++i) {
    queue.push_back(Join(path, 1));
    Queue(*queue.back(), 1, path, i + 1);
  }
  ASSERT_TRUE(queue[0]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  queue[1]->semaphore->Cancel();
  ASSERT_TRUE(queue[1]->failed.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(absl::IsCancelled(queue[1]->failure)) << queue[1]->failure;
  // An async give-up deletes its node in the background: wait for it.
  for (int i = 0; i < 1000 && admin().GetChildren(path)->size() != 2; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(admin().GetChildren(path)->size(), 2u);
  ASSERT_TRUE(queue[0]->guard->Release().ok());
  ASSERT_TRUE(queue[2]->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(queue[2]->guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A participant created with another N than one queued before it is
// refused, naming both sizes and the node, and leaves nothing behind.
TEST_F(SemaphoreTest, AnotherNumberOfLeasesIsRefused) {
  const std::string path = Path("mixed");
  auto three = Semaphore::Create(admin(), path, 3);
  ASSERT_TRUE(three.ok());
  auto held = (*three)->Acquire(1, absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto session = NewSession();
  auto two = Semaphore::Create(*session, path, 2);
  ASSERT_TRUE(two.ok());
  absl::StatusOr<LockGuard> refused = (*two)->Acquire(1, absl::Seconds(10));
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("has 3 leases"), absl::string_view::npos);
  EXPECT_NE(refused.status().message().find("created with 2"), absl::string_view::npos);
  EXPECT_EQ(admin().GetChildren(path)->size(), 1u) << "the refused node was left behind";
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A misconfigured participant (another N) that is in the queue only for a
// moment must not get correctly configured participants refused (issue 31
// item 16): the earliest node's N is the size; a later node with another N
// is refused itself, and meanwhile only occupies its place.
TEST_F(SemaphoreTest, AMisconfiguredNodeInTheQueueDoesNotGetValidOnesRefused) {
  const std::string path = Path("transient");
  auto a = Join(path, 2);
  Queue(*a, 1, path, 1);
  ASSERT_TRUE(a->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // A participant created with 3 leases, queued after the holder: what a
  // misconfigured process's node looks like before it refuses itself.
  absl::StatusOr<CreateResult> stray =
      admin().Create(path + "/stray_1_00ff-S1of3-", "", CreateMode::kEphemeralSequential);
  ASSERT_TRUE(stray.ok()) << stray.status();
  auto b = Join(path, 2);
  Queue(*b, 1, path, 3);
  // B has decided once it watches something or has failed.
  for (int i = 0; i < 5000 && !b->failed.HasBeenNotified(); ++i) {
    if (!testing::WatchedPaths(*b->session, path).empty()) break;
    absl::SleepFor(absl::Milliseconds(2));
  }
  ASSERT_FALSE(b->failed.HasBeenNotified()) << b->failure;
  ASSERT_TRUE(admin().Delete(stray->path).ok());
  ASSERT_TRUE(b->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(b->guard->Release().ok());
  ASSERT_TRUE(a->guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A lock and a semaphore on one path would ignore each other (issue 32 item
// 4): whichever comes second is refused, naming the path, and leaves no node.
TEST_F(SemaphoreTest, ALockAndASemaphoreOnOnePathRefuseEachOther) {
  const std::string path = Path("kinds");
  auto session = NewSession();
  auto expect_refused = [&](absl::StatusOr<LockGuard> refused, const char* who) {
    EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << who << ": " << refused.status();
    EXPECT_NE(refused.status().message().find(path), absl::string_view::npos) << refused.status();
    EXPECT_EQ(admin().GetChildren(path)->size(), 1u) << who << " left a node behind";
  };
  {
    auto lock = ExclusiveLock::Create(admin(), path);
    ASSERT_TRUE(lock.ok());
    auto held = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held.ok()) << held.status();
    auto semaphore = Semaphore::Create(*session, path, 1);
    ASSERT_TRUE(semaphore.ok());
    expect_refused((*semaphore)->TryAcquire(1), "a semaphore's try");
    expect_refused((*semaphore)->Acquire(1, absl::Seconds(10)), "a semaphore's acquire");
    ASSERT_TRUE(held->Release().ok());
  }
  {
    auto semaphore = Semaphore::Create(admin(), path, 2);
    ASSERT_TRUE(semaphore.ok());
    auto held = (*semaphore)->Acquire(1, absl::Seconds(10));
    ASSERT_TRUE(held.ok()) << held.status();
    auto lock = ExclusiveLock::Create(*session, path);
    ASSERT_TRUE(lock.ok());
    expect_refused((*lock)->TryAcquire(), "a lock's try");
    expect_refused((*lock)->Acquire(absl::Seconds(10)), "a lock's acquire");
    auto shared = SharedLock::Create(*session, path);
    ASSERT_TRUE(shared.ok());
    expect_refused((*shared)->AcquireRead(absl::Seconds(10)), "a reader");
    ASSERT_TRUE(held->Release().ok());
  }
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A node of the other kind that is not the earliest (a refused participant
// in the moment before it deletes its node, or one that came while the
// path was empty) is waited for: the participant behind it is granted only
// once it is gone, never beside it.
TEST_F(SemaphoreTest, AParticipantWaitsForANodeOfTheOtherKindBeforeIt) {
  const std::string path = Path("kinds-queued");
  auto a = Join(path, 2);
  Queue(*a, 1, path, 1);
  ASSERT_TRUE(a->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::StatusOr<CreateResult> stray =
      admin().Create(path + "/stray_1_00ff-W-", "", CreateMode::kEphemeralSequential);
  ASSERT_TRUE(stray.ok()) << stray.status();
  auto b = Join(path, 2);  // a lease is free: only the lock node is in the way
  Queue(*b, 1, path, 3);
  EXPECT_TRUE(testing::Eventually(
      [&] { return b->acquired.HasBeenNotified() || b->failed.HasBeenNotified() ||
                   !testing::WatchedPaths(*b->session, path).empty(); },
      absl::Seconds(10)));
  EXPECT_FALSE(b->acquired.HasBeenNotified()) << "granted beside a lock node";
  ASSERT_FALSE(b->failed.HasBeenNotified()) << b->failure;
  ASSERT_TRUE(admin().Delete(stray->path).ok());
  ASSERT_TRUE(b->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(b->guard->Release().ok());
  ASSERT_TRUE(a->guard->Release().ok());

  // The reverse: readers share, but not with a semaphore node between them.
  auto reader = SharedLock::Create(admin(), path);
  ASSERT_TRUE(reader.ok());
  auto read = (*reader)->AcquireRead(absl::Seconds(10));
  ASSERT_TRUE(read.ok()) << read.status();
  stray = admin().Create(path + "/stray_1_00ff-S1of1-", "", CreateMode::kEphemeralSequential);
  ASSERT_TRUE(stray.ok()) << stray.status();
  auto session = NewSession();
  auto second = SharedLock::Create(*session, path);
  ASSERT_TRUE(second.ok());
  absl::Notification second_done;
  absl::StatusOr<LockGuard> second_read = absl::UnknownError("pending");
  (*second)->AcquireReadAsync([&](absl::StatusOr<LockGuard> guard) {
    second_read = std::move(guard);
    second_done.Notify();
  });
  EXPECT_TRUE(testing::Eventually(
      [&] { return second_done.HasBeenNotified() ||
                   !testing::WatchedPaths(*session, path).empty(); },
      absl::Seconds(10)));
  EXPECT_FALSE(second_done.HasBeenNotified()) << "a reader: " << second_read.status();
  ASSERT_TRUE(admin().Delete(stray->path).ok());
  ASSERT_TRUE(second_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(second_read.ok()) << second_read.status();
  ASSERT_TRUE(second_read->Release().ok());
  ASSERT_TRUE(read->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Bad input is refused before anything is created; a full semaphore makes
// TryAcquire fail at once without a node; a second grant through one object
// is refused.
TEST_F(SemaphoreTest, BadInputAndTryAcquireAndASecondGrant) {
  const std::string path = Path("input");
  for (int leases : {0, -1, 1000001}) {
    absl::StatusOr<std::unique_ptr<Semaphore>> bad = Semaphore::Create(admin(), path, leases);
    EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << leases;
    EXPECT_NE(bad.status().message().find(absl::StrCat("leases=", leases)),
              absl::string_view::npos);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(Semaphore::Create(admin(), "no-slash", 2).status()));
  auto semaphore = Semaphore::Create(admin(), path, 2);
  ASSERT_TRUE(semaphore.ok());
  for (int count : {0, 3, -2}) {
    absl::StatusOr<LockGuard> bad = (*semaphore)->Acquire(count, absl::Seconds(1));
    EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << count;
    EXPECT_NE(bad.status().message().find(absl::StrCat("count=", count)), absl::string_view::npos);
    EXPECT_TRUE(absl::IsInvalidArgument((*semaphore)->AcquireFuture(count).get().status()));
  }
  EXPECT_FALSE(admin().Exists(path)->has_value()) << "bad input created the directory";

  absl::StatusOr<LockGuard> both = (*semaphore)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(both.ok()) << both.status();
  absl::StatusOr<LockGuard> again = (*semaphore)->Acquire(1, absl::Seconds(1));
  EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
  auto session = NewSession();
  auto other = Semaphore::Create(*session, path, 2);
  ASSERT_TRUE(other.ok());
  absl::StatusOr<LockGuard> busy = (*other)->TryAcquire(1);
  EXPECT_TRUE(absl::IsDeadlineExceeded(busy.status())) << busy.status();
  EXPECT_EQ(admin().GetChildren(path)->size(), 1u);
  ASSERT_TRUE(both->Release().ok());
  absl::StatusOr<LockGuard> free_now = (*other)->TryAcquire(2);
  ASSERT_TRUE(free_now.ok()) << free_now.status();
  ASSERT_TRUE(free_now->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

}  // namespace
}  // namespace zkr
