// The shorter handoff (issue 20, item 2; proven in tests/model, SKIP_HANDOFF):
// a waiter whose last listing showed the watched node as its only blocker
// holds once that node is gone, after confirming its own node is still ours
// — without listing the queue again. Every case where a listing showed
// other blockers, or our own node went, must still end as before: a
// cancelled waiter ahead, an expired session ahead, a reader behind several
// writers, a downgrade, an operator deleting the waiter's node.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using testing::ClientFaults;
using testing::FaultRule;
using testing::WatchedPathsOfOthers;
using testing::ZkTest;

// How a waiter ahead goes away.
enum class Going { kCancelled, kExpired };

class HandoffTest : public ZkTest {
 protected:
  // A holder, a writer waiting on it, and a last waiter behind that one,
  // which then goes (see the definition).
  void ExpectTheLastWaitsForTheHolder(const std::string& dir, Going going, bool last_reads);
  // A holder and two writers behind it, the middle one waited (see the
  // definition).
  void ExpectTheLastHoldsAfterTheMiddle(const std::string& dir, Session& middle_session,
                                        Session& last_session,
                                        const std::function<void()>& while_last_holds);

  // The children of `dir`, once there are `count` (bounded wait).
  std::vector<std::string> AwaitChildren(const std::string& dir, size_t count) {
    for (int i = 0; i < 4000; ++i) {
      auto children = admin().GetChildren(dir);
      if (children.ok() && children->size() == count) return *children;
      absl::SleepFor(absl::Milliseconds(5));  // polling the server, not deciding
    }
    ADD_FAILURE() << dir << " never had " << count << " children";
    return {};
  }
  // Waits (bounded) until `session` watches exactly `path` under `dir`.
  bool AwaitWatching(Session& session, const std::string& dir, const std::string& path) {
    for (int i = 0; i < 4000; ++i) {
      if (WatchedPathsOfOthers(session, dir) == std::vector<std::string>{path}) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }
};

// An acquisition on another thread; `holds_alone` records whether, when it
// returned, the first holder had already let go.
struct Waiter {
  absl::StatusOr<LockGuard> guard = absl::UnknownError("not yet");
  std::atomic<bool> holds_alone{false};
  absl::Notification done;
  std::thread thread;

  template <typename Acquire>
  void Start(Acquire acquire, const std::atomic<bool>& first_released) {
    thread = std::thread([this, acquire, &first_released] {
      guard = acquire();
      holds_alone = first_released.load();
      done.Notify();
    });
  }
  void Join() {
    if (thread.joinable()) thread.join();
  }
};

TEST_F(HandoffTest, TheOnlyBlockerGoneTheWaiterHoldsWithoutListingAgain) {
  const std::string dir = Path("only");
  auto first = ExclusiveLock::Create(admin(), dir);
  ASSERT_TRUE(first.ok());
  auto held = (*first)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  // The waiter's second listing, if it sent one, would be lost: the rule
  // stays unused when the handoff needs no listing.
  auto faults = std::make_shared<ClientFaults>();
  FaultRule second_listing{FaultRule::Call::kGetChildren, FaultRule::Effect::kDropReply, dir, 1};
  second_listing.skip = 1;
  faults->Add(second_listing);
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  auto lock = ExclusiveLock::Create(*session, dir);
  ASSERT_TRUE(lock.ok());
  std::atomic<bool> released{false};
  Waiter waiter;
  waiter.Start([&] { return (*lock)->Acquire(absl::Seconds(30)); }, released);
  std::vector<std::string> queue = AwaitChildren(dir, 2);
  ASSERT_TRUE(AwaitWatching(*session, dir, held->node_path()));
  released = true;
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(waiter.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  waiter.Join();
  ASSERT_TRUE(waiter.guard.ok()) << waiter.guard.status();
  EXPECT_TRUE(waiter.holds_alone);
  EXPECT_FALSE(faults->UsedUp()) << "the waiter listed the queue again";
  // Nor asked whether its own node is still there: its own-node watch,
  // armed before the holder went, would have told it first.
  EXPECT_EQ(faults->Calls(FaultRule::Call::kExists, dir + "/"), 0)
      << "the waiter confirmed its node with a request before holding";
  EXPECT_TRUE(waiter.guard->held());
  ASSERT_TRUE(waiter.guard->Release().ok());
  lock->reset();
  first->reset();
  (void)admin().Delete(dir);
}

// W1 holds `dir` (write); W2, a writer, waits on it; the last waiter (a
// writer, or with `last_reads` a reader) waits on W2 — its listing showed
// two blockers. W2 goes (`going`): the last waiter must list again and wait
// on W1, and hold only once W1 has let go.
void HandoffTest::ExpectTheLastWaitsForTheHolder(const std::string& dir, Going going,
                                                 bool last_reads) {
  auto first = SharedLock::Create(admin(), dir);
  ASSERT_TRUE(first.ok());
  auto held = (*first)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto middle_session = NewSession();
  auto middle = SharedLock::Create(*middle_session, dir);
  ASSERT_TRUE(middle.ok());
  std::atomic<bool> released{false};
  Waiter middle_waiter;
  middle_waiter.Start([&] { return (*middle)->AcquireWrite(absl::Seconds(30)); }, released);
  const std::string holder_name = held->node_path().substr(dir.size() + 1);
  std::string middle_name;
  for (const std::string& child : AwaitChildren(dir, 2)) {
    if (child != holder_name) middle_name = child;
  }
  auto last_session = NewSession();
  auto last = SharedLock::Create(*last_session, dir);
  ASSERT_TRUE(last.ok());
  Waiter last_waiter;
  last_waiter.Start(
      [&] {
        return last_reads ? (*last)->AcquireRead(absl::Seconds(30))
                          : (*last)->AcquireWrite(absl::Seconds(30));
      },
      released);
  AwaitChildren(dir, 3);
  ASSERT_TRUE(AwaitWatching(*last_session, dir, dir + "/" + middle_name));
  if (going == Going::kCancelled) {
    (*middle)->Cancel();
  } else {
    ASSERT_TRUE(testing::ExpireSession(*middle_session).ok());
  }
  ASSERT_TRUE(middle_waiter.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  middle_waiter.Join();
  if (going == Going::kCancelled) {
    EXPECT_TRUE(absl::IsCancelled(middle_waiter.guard.status())) << middle_waiter.guard.status();
  } else {
    EXPECT_FALSE(middle_waiter.guard.ok());
  }
  // The last waiter listed again and now waits on the holder.
  ASSERT_TRUE(AwaitWatching(*last_session, dir, held->node_path()));
  EXPECT_FALSE(last_waiter.done.HasBeenNotified()) << "held beside the holder";
  released = true;
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(last_waiter.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  last_waiter.Join();
  ASSERT_TRUE(last_waiter.guard.ok()) << last_waiter.guard.status();
  EXPECT_TRUE(last_waiter.holds_alone);
  ASSERT_TRUE(last_waiter.guard->Release().ok());
  last->reset();
  middle->reset();
  middle_session.reset();
  first->reset();
  (void)admin().Delete(dir);
}

TEST_F(HandoffTest, ACancelledWaiterAheadIsNotTakenForTheOnlyBlocker) {
  ExpectTheLastWaitsForTheHolder(Path("cancelled"), Going::kCancelled, /*last_reads=*/false);
}

TEST_F(HandoffTest, AnExpiredSessionAheadIsNotTakenForTheOnlyBlocker) {
  ExpectTheLastWaitsForTheHolder(Path("expired"), Going::kExpired, /*last_reads=*/false);
}

// A reader behind two writers waits on the second (the last writer before
// it); that one gives up: the reader reads only once the first has let go.
TEST_F(HandoffTest, AReaderBehindSeveralWritersWaitsForTheLast) {
  ExpectTheLastWaitsForTheHolder(Path("reader"), Going::kCancelled, /*last_reads=*/true);
}

// W1 (admin) holds `dir`; a middle writer on `middle_session` waits on it,
// then a last writer on `last_session` queues behind both (its listing
// shows two blockers). W1 releases, the middle holds (it waited, so its
// release is a marked one) and releases. The last writer must get in only
// after that, alone; `while_last_holds` then runs with its hold.
void HandoffTest::ExpectTheLastHoldsAfterTheMiddle(
    const std::string& dir, Session& middle_session, Session& last_session,
    const std::function<void()>& while_last_holds) {
  auto first = ExclusiveLock::Create(admin(), dir);
  ASSERT_TRUE(first.ok());
  auto held = (*first)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto middle = ExclusiveLock::Create(middle_session, dir);
  ASSERT_TRUE(middle.ok());
  std::atomic<bool> first_released{false};
  Waiter middle_waiter;
  middle_waiter.Start([&] { return (*middle)->Acquire(absl::Seconds(30)); }, first_released);
  const std::string holder_name = held->node_path().substr(dir.size() + 1);
  std::string middle_name;
  for (const std::string& child : AwaitChildren(dir, 2)) {
    if (child != holder_name) middle_name = child;
  }
  ASSERT_TRUE(AwaitWatching(middle_session, dir, held->node_path()));
  auto last = ExclusiveLock::Create(last_session, dir);
  ASSERT_TRUE(last.ok());
  std::atomic<bool> middle_released{false};
  Waiter last_waiter;
  last_waiter.Start([&] { return (*last)->Acquire(absl::Seconds(30)); }, middle_released);
  AwaitChildren(dir, 3);
  ASSERT_TRUE(AwaitWatching(last_session, dir, dir + "/" + middle_name));
  first_released = true;
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(middle_waiter.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  middle_waiter.Join();
  ASSERT_TRUE(middle_waiter.guard.ok()) << middle_waiter.guard.status();
  EXPECT_FALSE(last_waiter.done.HasBeenNotified()) << "the last writer got in beside the middle";
  middle_released = true;
  EXPECT_TRUE(middle_waiter.guard->Release().ok());
  ASSERT_TRUE(last_waiter.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  last_waiter.Join();
  ASSERT_TRUE(last_waiter.guard.ok()) << last_waiter.guard.status();
  EXPECT_TRUE(last_waiter.holds_alone);
  while_last_holds();
  ASSERT_TRUE(last_waiter.guard->Release().ok());
  last->reset();
  middle->reset();
  first->reset();
  (void)admin().Delete(dir);
}

// The last writer's listing showed two writers ahead of it; the middle one's
// marked release (data changed and deleted in one transaction) lets it hold
// on that event without listing the queue again (a deep queue drains with
// constant bytes per handoff).
TEST_F(HandoffTest, AMarkedReleaseLetsAWaiterFurtherBackHoldWithoutListing) {
  const std::string dir = Path("marked");
  auto middle_session = NewSession();
  auto faults = std::make_shared<ClientFaults>();  // counts the last waiter's calls
  auto last_session = NewFaultySession(faults);
  ASSERT_NE(last_session, nullptr);
  ExpectTheLastHoldsAfterTheMiddle(dir, *middle_session, *last_session, [&] {
    EXPECT_EQ(faults->Calls(FaultRule::Call::kGetChildren, dir), 1)
        << "the last writer listed the queue again after the marked release";
  });
}

// The marked release's transaction lost before it reached the server, or
// applied with its reply lost: the holder deletes its node the ordinary way
// (guaranteed delete), and the writer behind it still gets in, once, after
// it — by listing again, or by the mark.
TEST_F(HandoffTest, AMarkedReleaseLostFallsBackToAPlainDelete) {
  for (FaultRule::Effect effect : {FaultRule::Effect::kLoseRequest,
                                   FaultRule::Effect::kDropReply}) {
    const std::string dir = Path(effect == FaultRule::Effect::kLoseRequest ? "lost" : "dropped");
    auto faults = std::make_shared<ClientFaults>();
    faults->Add({FaultRule::Call::kMulti, effect, dir, 1});
    auto middle_session = NewFaultySession(faults);
    ASSERT_NE(middle_session, nullptr);
    auto last_session = NewSession();
    ExpectTheLastHoldsAfterTheMiddle(dir, *middle_session, *last_session, [&] {
      EXPECT_TRUE(faults->UsedUp()) << "the release sent no transaction";
      EXPECT_EQ(AwaitChildren(dir, 1).size(), 1u) << "the middle writer's node was left behind";
    });
  }
}

// A writer waits on a holder that downgrades (write -> read on the same
// node) and then lets go of the write hold: the node stays, nobody is
// woken; the writer holds only once the read hold is released too.
TEST_F(HandoffTest, ADowngradeKeepsTheWriterBehindItWaiting) {
  const std::string dir = Path("downgrade");
  auto first = SharedLock::Create(admin(), dir);
  ASSERT_TRUE(first.ok());
  auto write = (*first)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(write.ok());
  auto session = NewSession();
  auto writer = SharedLock::Create(*session, dir);
  ASSERT_TRUE(writer.ok());
  std::atomic<bool> released{false};
  Waiter waiter;
  waiter.Start([&] { return (*writer)->AcquireWrite(absl::Seconds(30)); }, released);
  AwaitChildren(dir, 2);
  ASSERT_TRUE(AwaitWatching(*session, dir, write->node_path()));
  auto read = (*first)->AcquireRead(absl::Seconds(10));
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(write->Release().ok());
  AwaitChildren(dir, 2);  // the node stays
  ASSERT_TRUE(AwaitWatching(*session, dir, read->node_path()));
  EXPECT_FALSE(waiter.done.HasBeenNotified()) << "the writer got in beside the reader";
  released = true;
  ASSERT_TRUE(read->Release().ok());
  ASSERT_TRUE(waiter.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  waiter.Join();
  ASSERT_TRUE(waiter.guard.ok()) << waiter.guard.status();
  EXPECT_TRUE(waiter.holds_alone);
  ASSERT_TRUE(waiter.guard->Release().ok());
  writer->reset();
  first->reset();
  (void)admin().Delete(dir);
}

// An operator deletes a waiting writer's own node, then its only blocker
// goes: it must not hold (its node is gone; the writer behind it may).
TEST_F(HandoffTest, AWaiterWhoseOwnNodeWasDeletedDoesNotHold) {
  const std::string dir = Path("own-deleted");
  auto first = ExclusiveLock::Create(admin(), dir);
  ASSERT_TRUE(first.ok());
  auto held = (*first)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, dir);
  ASSERT_TRUE(lock.ok());
  std::atomic<bool> released{false};
  Waiter waiter;
  waiter.Start([&] { return (*lock)->Acquire(absl::Seconds(30)); }, released);
  std::vector<std::string> queue = AwaitChildren(dir, 2);
  ASSERT_TRUE(AwaitWatching(*session, dir, held->node_path()));
  const std::string holder_name = held->node_path().substr(dir.size() + 1);
  for (const std::string& child : queue) {
    if (child != holder_name) {
      ASSERT_TRUE(admin().Delete(dir + "/" + child).ok());
    }
  }
  released = true;
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(waiter.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  waiter.Join();
  EXPECT_FALSE(waiter.guard.ok()) << "held without a node";
  EXPECT_TRUE(absl::IsAborted(waiter.guard.status())) << waiter.guard.status();
  lock->reset();
  first->reset();
  (void)admin().Delete(dir);
}

}  // namespace
}  // namespace zkr
