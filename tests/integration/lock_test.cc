// SharedLock and ExclusiveLock against a real standalone ZooKeeper server:
// the protocol, the API and the bad inputs.
#include <zookeeper/zookeeper.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"
#include "src/paths.h"
#include "src/testing/faulty_client.h"
#include "src/zk_client.h"
#include "tests/support/lock_fixture.h"
#include "tests/support/zk_test.h"
#include "tools/zkr/ledger.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"

namespace zkr {

using internal::NodeName;
using internal::OnCompletionThread;
using internal::SetClientLog;
using internal::NodeMode;
using internal::QueueNode;
using internal::ParseQueueNode;
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::LockTest;
using testing::ZkTest;

// An async acquisition whose callback is empty has nobody to tell its
// outcome: it starts nothing (no node, no hold). It used to be granted and
// its guard dropped on the ZooKeeper completion thread, whose release then
// waited there for its own reply: the session never answered again.
TEST_F(ZkTest, AnEmptyAsyncCallbackStartsNothing) {
  auto session = NewSession();
  auto other = NewSession();
  const std::string exclusive = Path("exclusive"), shared = Path("shared"), leases = Path("sem");
  auto lock = ExclusiveLock::Create(*session, exclusive);
  auto reader = SharedLock::Create(*session, shared);
  auto semaphore = Semaphore::Create(*session, leases, 2);
  ASSERT_TRUE(lock.ok() && reader.ok() && semaphore.ok());
  (*lock)->AcquireAsync(nullptr);
  (*reader)->AcquireReadAsync({});
  (*reader)->AcquireWriteAsync({});
  (*semaphore)->AcquireAsync(1, nullptr);
  (*semaphore)->AcquireAsync(0, nullptr);  // a bad count: its error has nobody to go to
  // The session still answers (asked from a thread of its own: a stuck
  // session must fail this test, not hang it), and after this round trip
  // any create sent before it has been applied.
  auto answered = std::make_shared<absl::Notification>();
  std::thread probe([&session, answered] {
    if (session->Exists("/").ok()) answered->Notify();
  });
  const bool answers = answered->WaitForNotificationWithTimeout(absl::Seconds(10));
  if (!answers) {
    probe.detach();
    std::fprintf(stderr, "the session no longer answers: exiting\n");
    std::_Exit(1);  // its threads are stuck: no clean teardown is possible
  }
  probe.join();
  for (const std::string& path : {exclusive, shared, leases}) {
    auto children = admin().GetChildren(path);
    EXPECT_TRUE(!children.ok() || children->empty()) << path;
  }
  auto taken = ExclusiveLock::Create(*other, exclusive);
  ASSERT_TRUE(taken.ok());
  absl::StatusOr<LockGuard> guard = (*taken)->TryAcquire();
  ASSERT_TRUE(guard.ok()) << guard.status();
  ASSERT_TRUE(guard->Release().ok());
  for (const std::string& path : {exclusive, shared, leases}) (void)admin().Delete(path);
}

TEST_F(LockTest, WriteLockCreatesOneParsableNodeAndReleaseRemovesIt) {
  const std::string path = Path("locks/orders");
  auto lock = NewSharedLock(admin(), path);
  auto guard = lock->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(guard.ok()) << guard.status();
  EXPECT_TRUE(guard->held());
  EXPECT_TRUE(guard->is_write());
  EXPECT_GT(guard->fencing_token(), 0);
  EXPECT_GT(guard->valid_until(), absl::Now());
  EXPECT_EQ(guard->lock_path(), path);

  std::vector<std::string> children = Children(path);
  ASSERT_THAT(children, SizeIs(1));
  std::optional<QueueNode> node = ParseQueueNode(children[0]);
  ASSERT_TRUE(node.has_value()) << children[0];
  EXPECT_EQ(node->mode, NodeMode::kWrite);
  EXPECT_EQ(guard->node_path(), path + "/" + children[0]);
  auto data = admin().Get(guard->node_path());
  ASSERT_TRUE(data.ok());
  EXPECT_THAT(*data, HasSubstr("mode=write"));
  // The directory is a container (no owner), the node is ephemeral.
  auto node_stat = admin().Exists(guard->node_path());
  ASSERT_TRUE(node_stat.ok() && node_stat->has_value());
  EXPECT_EQ((*node_stat)->ephemeral_owner, admin().session_id());

  EXPECT_TRUE(guard->Release().ok());
  EXPECT_EQ(guard->state(), LockState::kReleased);
  EXPECT_THAT(Children(path), SizeIs(0));
  EXPECT_TRUE(absl::IsFailedPrecondition(guard->Release()));  // double release
  ASSERT_TRUE(testing::DeleteRecursively(admin(), Path("locks")).ok());
}

TEST_F(LockTest, ReadersShareWritersExclude) {
  const std::string path = Path("rw");
  auto s1 = NewSession(), s2 = NewSession(), s3 = NewSession();
  auto r1 = NewSharedLock(*s1, path), r2 = NewSharedLock(*s2, path);
  auto w = NewSharedLock(*s3, path);
  auto read1 = r1->AcquireRead(absl::Seconds(10));
  auto read2 = r2->AcquireRead(absl::Seconds(10));
  ASSERT_TRUE(read1.ok() && read2.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(w->TryAcquireWrite().status()));
  EXPECT_TRUE(absl::IsDeadlineExceeded(w->AcquireWrite(absl::Milliseconds(100)).status()));
  ASSERT_TRUE(read1->Release().ok());
  ASSERT_TRUE(read2->Release().ok());
  auto write = w->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(write.ok()) << write.status();
  EXPECT_TRUE(absl::IsDeadlineExceeded(r1->TryAcquireRead().status()));
  ASSERT_TRUE(write->Release().ok());
  EXPECT_THAT(Children(path), SizeIs(0));
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, ExclusiveAndWriteLocksOnOnePathExcludeEachOther) {
  const std::string path = Path("mixed");
  auto other = NewSession();
  auto exclusive = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(exclusive.ok());
  auto shared = NewSharedLock(*other, path);
  auto held = (*exclusive)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(shared->TryAcquireWrite().status()));
  EXPECT_TRUE(absl::IsDeadlineExceeded(shared->TryAcquireRead().status()));
  ASSERT_TRUE(held->Release().ok());
  auto write = shared->TryAcquireWrite();
  ASSERT_TRUE(write.ok()) << write.status();
  EXPECT_TRUE(absl::IsDeadlineExceeded((*exclusive)->TryAcquire().status()));
  ASSERT_TRUE(write->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, MutualExclusionUnderStress) {
  constexpr int kParticipants = 8;
  constexpr int kRounds = 100;
  const std::string path = Path("stress");
  Ledger ledger;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  std::vector<std::unique_ptr<Session>> sessions;
  for (int i = 0; i < kParticipants; ++i) sessions.push_back(NewSession());
  for (int i = 0; i < kParticipants; ++i) {
    threads.emplace_back([&, i] {
      auto lock = SharedLock::Create(*sessions[i], path);
      if (!lock.ok()) return (void)++failures;
      for (int round = 0; round < kRounds; ++round) {
        // Two writers, six readers, but everyone writes now and then.
        const bool write = i < 2 || round % 10 == i;
        auto guard = write ? (*lock)->AcquireWrite(absl::Seconds(60))
                           : (*lock)->AcquireRead(absl::Seconds(60));
        if (!guard.ok()) {
          ADD_FAILURE() << guard.status();
          ++failures;
          continue;
        }
        ledger.Enter(write);
        if (!write) std::this_thread::yield();  // give readers a chance to overlap
        ledger.Leave(write);
        if (!guard->Release().ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  Ledger::Summary summary = ledger.summary();
  EXPECT_EQ(summary.entries, kParticipants * kRounds);
  EXPECT_EQ(summary.violations, 0);
  EXPECT_GT(summary.max_readers, 1) << "readers never overlapped";
  EXPECT_THAT(Children(path), SizeIs(0));
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, TimedOutAttemptDeletesItsNode) {
  const std::string path = Path("timeout");
  auto other = NewSession();
  auto holder = NewSharedLock(admin(), path);
  auto waiter = NewSharedLock(*other, path);
  auto held = holder->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  absl::Status timed_out = waiter->AcquireWrite(absl::Milliseconds(200)).status();
  EXPECT_TRUE(absl::IsDeadlineExceeded(timed_out)) << timed_out;
  EXPECT_THAT(timed_out.message(), HasSubstr(path));
  // Our own session's delete is ordered before this read.
  auto children = other->GetChildren(path);
  ASSERT_TRUE(children.ok());
  EXPECT_THAT(*children, SizeIs(1));
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, TryAcquireCreatesNoNodeWhenItCannotWin) {
  const std::string path = Path("try");
  auto other = NewSession();
  auto holder = NewSharedLock(admin(), path);
  auto trier = NewSharedLock(*other, path);
  auto held = holder->AcquireRead(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  const int32_t before = ChildVersion(path);
  EXPECT_TRUE(absl::IsDeadlineExceeded(trier->TryAcquireWrite().status()));
  EXPECT_TRUE(absl::IsDeadlineExceeded(trier->TryAcquireWrite().status()));
  EXPECT_EQ(ChildVersion(path), before) << "a failed try-lock created a node";
  auto shared_read = trier->TryAcquireRead();  // readers can share
  ASSERT_TRUE(shared_read.ok()) << shared_read.status();
  ASSERT_TRUE(shared_read->Release().ok());
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, CancelFromAnotherThreadEndsTheWaitAndDeletesTheNode) {
  const std::string path = Path("cancel");
  auto other = NewSession();
  auto holder = NewSharedLock(admin(), path);
  auto waiter = NewSharedLock(*other, path);
  auto held = holder->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  absl::Status result;
  absl::Notification finished;
  std::thread blocked([&] {
    result = waiter->AcquireWrite().status();  // no timeout
    finished.Notify();
  });
  // Wait until the waiter's node is queued (observed on the server).
  ASSERT_TRUE(WaitForChildren(path, 2));
  waiter->Cancel();
  EXPECT_TRUE(finished.WaitForNotificationWithTimeout(absl::Seconds(10)));
  blocked.join();
  EXPECT_TRUE(absl::IsCancelled(result)) << result;
  auto children = other->GetChildren(path);
  ASSERT_TRUE(children.ok());
  EXPECT_THAT(*children, SizeIs(1));
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, AsyncAcquireCompletesOnTheDispatcherWhenTheHolderLeaves) {
  const std::string path = Path("async");
  auto other = NewSession();
  auto holder = NewSharedLock(admin(), path);
  auto waiter = NewSharedLock(*other, path);
  auto held = holder->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  absl::Notification acquired;
  std::optional<LockGuard> async_guard;
  bool on_client_thread = true;
  waiter->AcquireReadAsync([&](absl::StatusOr<LockGuard> guard) {
    on_client_thread = OnCompletionThread();
    ASSERT_TRUE(guard.ok()) << guard.status();
    async_guard.emplace(std::move(*guard));
    acquired.Notify();
  });
  ASSERT_TRUE(WaitForChildren(path, 2));
  EXPECT_FALSE(acquired.HasBeenNotified());
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(on_client_thread);
  EXPECT_TRUE(async_guard->held());
  EXPECT_FALSE(async_guard->is_write());
  ASSERT_TRUE(async_guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, ReleaseAsyncCompletesOnTheDispatcherOnceTheNodeIsGone) {
  const std::string path = Path("release-async");
  auto lock = NewSharedLock(admin(), path);
  auto guard = lock->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(guard.ok());
  const std::string node = guard->node_path();
  absl::Notification released;
  bool on_client_thread = true;
  guard->ReleaseAsync([&](absl::Status status) {
    EXPECT_TRUE(status.ok()) << status;
    on_client_thread = OnCompletionThread();
    released.Notify();
  });
  EXPECT_EQ(guard->state(), LockState::kReleased);  // the guard is empty at once
  ASSERT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(on_client_thread);
  auto gone = admin().Exists(node);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
  absl::Notification refused;
  guard->ReleaseAsync([&](absl::Status status) {
    EXPECT_TRUE(absl::IsFailedPrecondition(status));
    refused.Notify();
  });
  EXPECT_TRUE(refused.HasBeenNotified());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, ReentrancyCountsOnOneNodeAndGuardsMoveAcrossThreads) {
  const std::string path = Path("reentrant");
  auto lock = NewSharedLock(admin(), path);
  auto first = lock->AcquireWrite(absl::Seconds(10));
  auto second = lock->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->node_path(), second->node_path());
  EXPECT_THAT(Children(path), SizeIs(1));
  ASSERT_TRUE(first->Release().ok());
  EXPECT_TRUE(second->held());
  EXPECT_THAT(Children(path), SizeIs(1));
  // Ownership is the guard's: release it from another thread.
  LockGuard moved = std::move(*second);
  absl::Status released;
  std::thread([&] { released = moved.Release(); }).join();
  EXPECT_TRUE(released.ok()) << released;
  EXPECT_THAT(Children(path), SizeIs(0));
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, DowngradeKeepsTheWriteNodesPlaceAndUpgradeIsRefused) {
  const std::string path = Path("downgrade");
  auto other = NewSession();
  auto lock = NewSharedLock(admin(), path);
  auto waiting_writer = NewSharedLock(*other, path);
  auto write = lock->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(write.ok());
  absl::Notification writer_in;
  std::optional<LockGuard> writer_guard;
  waiting_writer->AcquireWriteAsync([&](absl::StatusOr<LockGuard> guard) {
    ASSERT_TRUE(guard.ok()) << guard.status();
    writer_guard.emplace(std::move(*guard));
    writer_in.Notify();
  });
  ASSERT_TRUE(WaitForChildren(path, 2));

  auto read = lock->AcquireRead(absl::Seconds(10));  // downgrade step 1
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->node_path(), write->node_path());
  const std::string node = write->node_path();
  ASSERT_TRUE(write->Release().ok());  // downgrade step 2
  // The write node keeps its place: the waiting writer (which watches it)
  // cannot have been let in while it exists.
  auto still = admin().Exists(node);
  ASSERT_TRUE(still.ok());
  EXPECT_TRUE(still->has_value());
  EXPECT_FALSE(writer_in.HasBeenNotified());
  EXPECT_TRUE(read->held());

  absl::Status upgrade = lock->AcquireWrite(absl::Seconds(1)).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(upgrade)) << upgrade;
  EXPECT_THAT(upgrade.message(), HasSubstr("upgrade"));

  ASSERT_TRUE(read->Release().ok());
  ASSERT_TRUE(writer_in.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(writer_guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, FencingTokensIncreaseAcrossHoldersAndDirectoryRecreation) {
  const std::string path = Path("fence");
  auto other = NewSession();
  auto a = NewSharedLock(admin(), path), b = NewSharedLock(*other, path);
  int64_t last = 0;
  for (int round = 0; round < 6; ++round) {
    SharedLock& lock = round % 2 == 0 ? *a : *b;
    auto guard = lock.AcquireWrite(absl::Seconds(10));
    ASSERT_TRUE(guard.ok()) << guard.status();
    EXPECT_GT(guard->fencing_token(), last);
    last = guard->fencing_token();
    ASSERT_TRUE(guard->Release().ok());
    if (round == 2) {
      ASSERT_TRUE(admin().Delete(path).ok());  // directory re-created next
    }
  }
  ASSERT_TRUE(admin().Delete(path).ok());
}

// The own-node watch is armed only once a hold has lasted
// own_node_watch_delay: a hold released sooner sends no request for it
// (issue 20, item 1), one that lasts gets its watch.
TEST_F(LockTest, AHoldReleasedBeforeTheWatchDelaySendsNoOwnNodeWatch) {
  const std::string path = Path("short-hold");
  auto faults = std::make_shared<testing::ClientFaults>();  // counts the calls
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  LockOptions options;
  options.own_node_watch_delay = absl::Seconds(1);
  auto lock = ExclusiveLock::Create(*session, path, options);
  ASSERT_TRUE(lock.ok());
  auto brief = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(brief.ok()) << brief.status();
  ASSERT_TRUE(brief->Release().ok());
  // A second hold that lasts: its watch is armed after the delay, and a
  // watch the first hold still had pending would have come first (both are
  // due in order, on one thread).
  auto lasting = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(lasting.ok()) << lasting.status();
  bool armed = false;
  for (int i = 0; i < 1000 && !armed; ++i) {
    // Its own node, and its revocation request (recipes/revoke_watch.h).
    armed = testing::WatchedPaths(*session, path) ==
            std::vector<std::string>{lasting->node_path(), lasting->node_path() + ".revoke"};
    if (!armed) absl::SleepFor(absl::Milliseconds(10));  // polling the server
  }
  EXPECT_TRUE(armed) << "the lasting hold's own node is not watched";
  EXPECT_EQ(faults->Calls(testing::FaultRule::Call::kGet, path + "/"), 1)
      << "own-node reads: the brief hold's must not have been sent";
  ASSERT_TRUE(lasting->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A node deleted before its hold's watch is armed is still reported: the
// read that arms the watch finds it gone.
TEST_F(LockTest, ADeletionBeforeTheWatchIsArmedIsReportedAsLost) {
  const std::string path = Path("deleted-early");
  absl::Notification lost;
  LockOptions options;
  options.own_node_watch_delay = absl::Milliseconds(500);
  options.on_state_change = [&](LockState state) {
    if (state == LockState::kLost) lost.Notify();
  };
  auto lock = ExclusiveLock::Create(admin(), path, options);
  ASSERT_TRUE(lock.ok());
  auto guard = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(guard.ok()) << guard.status();
  ASSERT_TRUE(admin().Delete(guard->node_path()).ok());
  ASSERT_TRUE(lost.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(guard->state(), LockState::kLost);
  EXPECT_TRUE(guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, OperatorDeletingTheNodeIsReportedAsLost) {
  const std::string path = Path("deleted");
  absl::Notification lost;
  LockOptions options;
  options.on_state_change = [&](LockState state) {
    if (state == LockState::kLost) lost.Notify();
  };
  auto lock = NewSharedLock(admin(), path, options);
  auto guard = lock->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(guard.ok());
  auto other = NewSession();
  ASSERT_TRUE(other->Delete(guard->node_path()).ok());
  ASSERT_TRUE(lost.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(guard->state(), LockState::kLost);
  EXPECT_FALSE(guard->held());
  EXPECT_EQ(guard->valid_until(), absl::InfinitePast());
  EXPECT_TRUE(guard->Release().ok());  // nothing left to delete
  // A new acquisition through the same object queues a new node.
  auto again = lock->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NE(again->node_path(), guard->node_path());
  ASSERT_TRUE(again->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, GuardedMultiWritesOnlyWhileHeld) {
  const std::string path = Path("guarded");
  ASSERT_TRUE(admin().Create(Path("resource"), "0", CreateMode::kPersistent).ok());
  auto lock = NewSharedLock(admin(), path);
  auto guard = lock->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(guard.ok());
  auto written = guard->GuardedMulti({Op::SetData(Path("resource"), "1")});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_THAT(*written, SizeIs(1));
  // Someone removes our node: the server refuses the next guarded write.
  auto other = NewSession();
  ASSERT_TRUE(other->Delete(guard->node_path()).ok());
  // Use the raw check path (the state may not have turned kLost yet).
  absl::Status refused;
  for (int i = 0; i < 2; ++i) {
    refused = guard->GuardedMulti({Op::SetData(Path("resource"), "2")}).status();
  }
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  auto value = admin().Get(Path("resource"));
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, "1");
  EXPECT_TRUE(guard->Release().ok());
  ASSERT_TRUE(admin().Delete(Path("resource")).ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(LockTest, BadInputIsRefusedAndLeavesNothingBehind) {
  for (const char* bad : {"", "relative", "/", "/a/", "/a//b"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(SharedLock::Create(admin(), bad).status())) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(ExclusiveLock::Create(admin(), bad).status())) << bad;
  }
  // A lock path under an ephemeral node.
  ASSERT_TRUE(admin().Create(Path("eph"), "", CreateMode::kEphemeral).ok());
  auto under_ephemeral = NewSharedLock(admin(), Path("eph/lock"));
  absl::Status status = under_ephemeral->AcquireWrite(absl::Seconds(5)).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(Path("eph/lock")));
  ASSERT_TRUE(admin().Delete(Path("eph")).ok());

  // Release of an empty guard.
  LockGuard empty;
  EXPECT_TRUE(absl::IsFailedPrecondition(empty.Release()));
  EXPECT_TRUE(absl::IsFailedPrecondition(empty.GuardedMulti({}).status()));

  // An ACL that forbids creating children.
  CreateOptions read_only;
  read_only.acl = {Acl{"world", "anyone", kPermRead}};
  ASSERT_TRUE(admin().Create(Path("ro"), "", CreateMode::kPersistent, read_only).ok());
  auto forbidden = NewSharedLock(admin(), Path("ro"));
  status = forbidden->AcquireRead(absl::Seconds(5)).status();
  EXPECT_TRUE(absl::IsPermissionDenied(status)) << status;
  EXPECT_THAT(Children(Path("ro")), SizeIs(0));
  ASSERT_TRUE(admin().Delete(Path("ro")).ok());

  // Acquire on a closed session.
  auto closed = NewSession();
  auto lock = NewSharedLock(*closed, Path("closed"));
  closed->Close();
  status = lock->AcquireWrite(absl::Seconds(5)).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("closed"));
}

}  // namespace
}  // namespace zkr
