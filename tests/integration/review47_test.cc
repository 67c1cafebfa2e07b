// An independent adversarial review (helper-47) of lock reentry, downgrade
// and the standard-mutex adapters around connection loss (partitions that
// heal, sessions that expire), and of Inspect's FindQueuesBelow. Each test
// names the promise it attacks. Waits are on observable conditions (session
// states, lock states told through on_state_change, server listings);
// durations only bound hangs.
#include <atomic>
#include <climits>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/directory_check.h"
#include "tests/support/lock_loss.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/std_lock.h"

namespace zkr {
namespace {

using testing::DirectoryCheckedTest;
using testing::Eventually;
using testing::ZkTest;

class Review47Test : public DirectoryCheckedTest<ZkTest> {};
class Review47ProxiedTest : public DirectoryCheckedTest<testing::ProxiedZkTest> {};

using testing::ExpireAndReconnect;
using testing::LockStateLog;
using testing::NodesOf;

// ---- StdSharedMutex: readers on two nodes after a loss ---------------------------

// Promise (std_lock.h): "StdSharedMutex's readers in this process share one
// read hold (one node) ... the node goes with the last of them"; lock_shared()
// returns only holding ("Returning from lock() without the lock would let the
// caller run unprotected, the one outcome a lock must never allow"); and
// recipes/README.md: reentry "onto a hold ... that is LOST queues a fresh node
// instead". Reader A holds; the session expires (A's node goes with it); a new
// session is opened; reader B's lock_shared() queues a fresh node and returns
// holding. A, whose hold is lost, unlocks. B still holds: its node must still
// be there, and a writer elsewhere must be kept out.
TEST_F(Review47Test, UnlockSharedOfALostReaderDoesNotReleaseTheNextReadersFreshNode) {
  auto cut = NewSession();
  ASSERT_NE(cut, nullptr);
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  const std::string path = Path("rw");
  LockStateLog log;
  auto lock = SharedLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  StdSharedMutex mutex(**lock);
  testing::StateRecorder states(*cut);

  absl::Notification a_holds, a_may_unlock;
  std::thread reader_a([&] {
    mutex.lock_shared();
    a_holds.Notify();
    a_may_unlock.WaitForNotification();
    mutex.unlock_shared();
  });
  a_holds.WaitForNotification();
  ASSERT_EQ(NodesOf(admin(), path).size(), 1u);

  ASSERT_NO_FATAL_FAILURE(ExpireAndReconnect(*cut, log, states));  // A's hold is lost

  // Reader B (this thread): the shared hold is LOST, so a fresh node.
  try {
    mutex.lock_shared();
  } catch (const LockError& e) {
    a_may_unlock.Notify();
    reader_a.join();
    FAIL() << "lock_shared after the loss: " << e.status();
  }
  const std::vector<std::string> b_nodes = NodesOf(admin(), path, cut->session_id());
  ASSERT_EQ(b_nodes.size(), 1u) << "B holds through one node of the new session";

  // A (lost) unlocks.
  a_may_unlock.Notify();
  reader_a.join();

  // B has not unlocked: its node stays, and a writer elsewhere is kept out.
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()), b_nodes)
      << "reader A's unlock_shared() released reader B's fresh read node: B runs unprotected";
  auto writer_lock = ExclusiveLock::Create(*other, path);
  ASSERT_TRUE(writer_lock.ok());
  auto writer = (*writer_lock)->TryAcquire();
  EXPECT_FALSE(writer.ok()) << "a writer on another session got the lock while reader B "
                               "is inside lock_shared()/unlock_shared()";
  if (writer.ok()) {
    ASSERT_TRUE(writer->Release().ok());
  } else {
    EXPECT_TRUE(absl::IsDeadlineExceeded(writer.status())) << writer.status();
  }
  mutex.unlock_shared();  // B
  EXPECT_TRUE(mutex.status().ok()) << mutex.status();
  EXPECT_TRUE(NodesOf(admin(), path).empty()) << absl::StrJoin(NodesOf(admin(), path), ", ");
  // Local counts back to zero: a local writer may enter.
  ASSERT_TRUE(mutex.try_lock()) << mutex.status();
  mutex.unlock();
}

// ---- ExclusiveLock / SharedLock: reentry and downgrade onto a LOST hold ------------

// Promise (recipes/README.md): reentry "onto a hold ... that is LOST queues a
// fresh node instead" and "An OK acquisition is HELD when it returns";
// lock_guard.h: "Releasing a lost hold returns OK (nothing is left to
// delete)". The lost guard's release must not touch the fresh hold.
TEST_F(Review47Test, ReentryOntoALostHoldQueuesAFreshNodeThatTheLostReleaseLeavesAlone) {
  auto cut = NewSession();
  ASSERT_NE(cut, nullptr);
  const std::string path = Path("ex");
  LockStateLog log;
  auto lock = ExclusiveLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  testing::StateRecorder states(*cut);
  auto first = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_NO_FATAL_FAILURE(ExpireAndReconnect(*cut, log, states));
  ASSERT_EQ(first->state(), LockState::kLost);

  auto second = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->state(), LockState::kHeld);
  EXPECT_NE(second->node_path(), first->node_path());
  EXPECT_GT(second->fencing_token(), first->fencing_token());
  // A third reentry counts on the fresh hold.
  auto third = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->node_path(), second->node_path());

  EXPECT_TRUE(first->Release().ok());
  EXPECT_EQ(second->state(), LockState::kHeld) << "the lost guard's release touched the fresh hold";
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()).size(), 1u);
  EXPECT_TRUE(third->Release().ok());
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()).size(), 1u);
  EXPECT_TRUE(second->Release().ok());
  EXPECT_TRUE(NodesOf(admin(), path).empty());
}

// Promise (shared_lock.h): "Holding write, AcquireRead() downgrades" and
// recipes/README.md: onto a LOST hold "a fresh node is queued"; an OK
// acquisition is HELD. A downgrade onto a lost write hold is a fresh read
// node; an upgrade from a lost read hold (the upgrade deadlock cannot occur:
// the read node is gone) is a fresh write node or a clear refusal.
TEST_F(Review47Test, DowngradeAndUpgradeOntoLostHolds) {
  auto cut = NewSession();
  ASSERT_NE(cut, nullptr);
  const std::string path = Path("rw");
  LockStateLog log;
  auto lock = SharedLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  testing::StateRecorder states(*cut);
  auto write = (*lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(write.ok()) << write.status();
  ASSERT_NO_FATAL_FAILURE(ExpireAndReconnect(*cut, log, states));

  auto read = (*lock)->AcquireRead(absl::Seconds(10));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->state(), LockState::kHeld);
  EXPECT_FALSE(read->is_write());
  EXPECT_NE(read->node_path(), write->node_path());
  EXPECT_TRUE(write->Release().ok());
  EXPECT_EQ(read->state(), LockState::kHeld);
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()).size(), 1u);

  // Now lose the read hold and upgrade.
  ASSERT_NO_FATAL_FAILURE(ExpireAndReconnect(*cut, log, states, /*expiry=*/2));
  auto upgraded = (*lock)->AcquireWrite(absl::Seconds(10));
  if (upgraded.ok()) {
    EXPECT_EQ(upgraded->state(), LockState::kHeld);
    EXPECT_TRUE(upgraded->is_write());
    EXPECT_NE(upgraded->node_path(), read->node_path());
    EXPECT_TRUE(read->Release().ok());
    EXPECT_EQ(upgraded->state(), LockState::kHeld);
    EXPECT_EQ(NodesOf(admin(), path, cut->session_id()).size(), 1u);
    EXPECT_TRUE(upgraded->Release().ok());
  } else {
    EXPECT_TRUE(absl::IsFailedPrecondition(upgraded.status())) << upgraded.status();
    EXPECT_TRUE(read->Release().ok());
  }
  EXPECT_TRUE(NodesOf(admin(), path).empty());
}

// ---- across a partition that heals ---------------------------------------------------

// Session timeout 20 s: SUSPENDED at about 2/3 of it; the server expires the
// session only 20 s after the cut, and the partition is healed right after
// the checks, long before.
SessionOptions Patient(SessionOptions options) {
  options.session_timeout = absl::Seconds(20);
  return options;
}

// Promise (shared_lock.h): "Holding write, AcquireRead() downgrades ... While
// the hold reads SUSPENDED ... re-acquiring is refused with Unavailable"; an
// OK acquisition is HELD. Downgrade while SUSPENDED (blocking and async, the
// async completion on the dispatcher thread), then after the heal: the
// refusals left the hold intact (it downgrades, releases, leaves nothing).
TEST_F(Review47ProxiedTest, DowngradeWhileSuspendedIsRefusedAndTheHoldStillWorksAfter) {
  auto cut = NewSession(Patient(ProxiedOptions()));
  ASSERT_NE(cut, nullptr);
  const std::string path = Path("rw");
  LockStateLog log;
  auto lock = SharedLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  auto write = (*lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(write.ok()) << write.status();
  const std::string node = write->node_path();
  testing::StateRecorder states(*cut);
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(states.WaitFor(SessionState::kSuspended, 1).has_value());
  ASSERT_TRUE(log.WaitFor(LockState::kSuspended)) << log.Seen();

  auto read = (*lock)->AcquireRead(absl::Seconds(1));
  if (read.ok()) {
    EXPECT_EQ(read->state(), LockState::kHeld) << "a downgrade returned OK on a SUSPENDED hold";
  } else {
    EXPECT_TRUE(absl::IsUnavailable(read.status())) << read.status();
  }
  std::promise<std::pair<absl::StatusOr<LockGuard>, LockState>> told;
  (*lock)->AcquireReadAsync([&](absl::StatusOr<LockGuard> g) {
    const LockState at = g.ok() ? g->state() : LockState::kReleased;
    told.set_value({std::move(g), at});
  });
  auto told_future = told.get_future();
  ASSERT_EQ(told_future.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto [async_read, state_when_told] = told_future.get();
  if (async_read.ok()) {
    EXPECT_EQ(state_when_told, LockState::kHeld)
        << "an async downgrade told OK with a hold reading " << LockStateName(state_when_told);
  } else {
    EXPECT_TRUE(absl::IsUnavailable(async_read.status())) << async_read.status();
  }
  // A try-acquire while cut off: a refusal, not a new node.
  auto try_read = (*lock)->TryAcquireRead();
  EXPECT_FALSE(try_read.ok() && try_read->state() != LockState::kHeld);

  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();
  ASSERT_TRUE(states.WaitFor(SessionState::kReconnected, 1, absl::Seconds(15)).has_value());
  ASSERT_TRUE(Eventually([&] { return write->state() == LockState::kHeld; }));
  auto after = (*lock)->AcquireRead(absl::Seconds(1));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->node_path(), node);  // the downgrade keeps the write node
  EXPECT_TRUE(write->Release().ok());
  EXPECT_EQ(after->state(), LockState::kHeld);
  EXPECT_EQ(NodesOf(admin(), path), std::vector<std::string>{node.substr(path.size() + 1)});
  if (try_read.ok()) EXPECT_TRUE(try_read->Release().ok());
  if (async_read.ok()) EXPECT_TRUE(async_read->Release().ok());
  if (read.ok()) EXPECT_TRUE(read->Release().ok());
  EXPECT_TRUE(after->Release().ok());
  EXPECT_TRUE(NodesOf(admin(), path).empty());
}

// Promise (std_lock.h): lock_shared() "throw[s] zkr::LockError ... (lock_shared()
// while other threads of this process hold the read lock) that shared hold
// reads SUSPENDED ... (Unavailable)"; try_lock_shared_for "return[s] false, and
// status() says why"; and the local counts stay right: after the refusals and
// the heal, a reader joins, the first reader's unlock leaves the second's
// hold in place, and once both unlock a local writer may enter and nothing
// is left on the server.
TEST_F(Review47ProxiedTest, SharedAdapterRefusalsWhileSuspendedLeaveItsCountsRight) {
  auto cut = NewSession(Patient(ProxiedOptions()));
  ASSERT_NE(cut, nullptr);
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  const std::string path = Path("rw");
  LockStateLog log;
  auto lock = SharedLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  StdSharedMutex mutex(**lock);
  mutex.lock_shared();  // reader A (this thread)
  const std::vector<std::string> nodes = NodesOf(admin(), path);
  ASSERT_EQ(nodes.size(), 1u);
  testing::StateRecorder states(*cut);
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(states.WaitFor(SessionState::kSuspended, 1).has_value());
  ASSERT_TRUE(log.WaitFor(LockState::kSuspended)) << log.Seen();

  auto b = std::async(std::launch::async, [&]() -> absl::Status {
    if (mutex.try_lock_shared_for(std::chrono::seconds(2))) {
      return absl::InternalError("try_lock_shared_for joined a SUSPENDED read hold");
    }
    absl::Status why = mutex.status();
    if (why.ok()) return absl::InternalError("false with status() OK");
    if (mutex.try_lock_shared()) return absl::InternalError("try_lock_shared joined it");
    try {
      mutex.lock_shared();
      return absl::InternalError("lock_shared() joined a SUSPENDED read hold");
    } catch (const LockError& e) {
      return e.status();
    }
  });
  ASSERT_EQ(b.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  absl::Status refused = b.get();
  EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;
  // A local writer, while a reader holds, does not get in (try: no wait).
  EXPECT_FALSE(mutex.try_lock());

  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();
  ASSERT_TRUE(states.WaitFor(SessionState::kReconnected, 1, absl::Seconds(15)).has_value());
  ASSERT_TRUE(log.WaitFor(LockState::kHeld)) << log.Seen();  // re-checked: HELD again

  absl::Notification c_holds, c_may_unlock;
  std::thread reader_c([&] {
    mutex.lock_shared();  // joins A's hold
    c_holds.Notify();
    c_may_unlock.WaitForNotification();
    mutex.unlock_shared();
  });
  c_holds.WaitForNotification();
  EXPECT_EQ(NodesOf(admin(), path), nodes);  // one node, shared
  mutex.unlock_shared();                     // A
  EXPECT_EQ(NodesOf(admin(), path), nodes) << "A's unlock took the node C still holds by";
  auto writer_lock = ExclusiveLock::Create(*other, path);
  ASSERT_TRUE(writer_lock.ok());
  auto writer = (*writer_lock)->TryAcquire();
  EXPECT_FALSE(writer.ok()) << "a writer elsewhere got in beside reader C";
  if (writer.ok()) (void)writer->Release();
  c_may_unlock.Notify();
  reader_c.join();
  EXPECT_TRUE(NodesOf(admin(), path).empty());
  ASSERT_TRUE(mutex.try_lock()) << mutex.status();  // counts back to zero
  mutex.unlock();
  EXPECT_TRUE(NodesOf(admin(), path).empty());
}

// Promise (std_lock.h): lock() "return[s] only holding" (the README: an OK
// acquisition is HELD when it returns). A thread calls StdMutex::lock() while
// the session is cut off; it may return only once the lock is HELD, and its
// guard() must read HELD when it does.
TEST_F(Review47ProxiedTest, StdMutexLockBegunWhileCutOffReturnsHolding) {
  auto cut = NewSession(Patient(ProxiedOptions()));
  ASSERT_NE(cut, nullptr);
  const std::string path = Path("ex");
  auto lock = ExclusiveLock::Create(*cut, path);
  ASSERT_TRUE(lock.ok()) << lock.status();
  StdMutex mutex(**lock);
  testing::StateRecorder states(*cut);
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(states.WaitFor(SessionState::kSuspended, 1).has_value());
  std::atomic<bool> returned{false};
  auto locker = std::async(std::launch::async, [&]() -> std::pair<LockState, SessionState> {
    mutex.lock();
    returned = true;
    return {mutex.guard().state(), cut->state()};
  });
  // While cut off it does not return (the wait ends at the heal below).
  EXPECT_EQ(locker.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout);
  EXPECT_FALSE(returned.load());
  EXPECT_FALSE(mutex.try_lock());  // another thread is acquiring
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();
  ASSERT_EQ(locker.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto [lock_state, session_state] = locker.get();
  EXPECT_EQ(lock_state, LockState::kHeld)
      << "lock() returned with the hold reading " << LockStateName(lock_state)
      << " (session " << SessionStateName(session_state) << ")";
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()).size(), 1u);
  mutex.unlock();
  EXPECT_TRUE(mutex.status().ok()) << mutex.status();
  EXPECT_TRUE(NodesOf(admin(), path).empty());
}

// ---- reentry racing the last guard's release -----------------------------------------

// Promise (recipes/README.md): reentry "onto a hold whose last guard is being
// released ... queues a fresh node"; an OK acquisition is HELD when it
// returns. Repeatedly: one thread releases the only guard while this thread
// re-enters. Whichever wins, the new guard reads HELD and its node is on the
// server after the release has finished; nothing is left at the end.
TEST_F(Review47Test, ReentryRacingTheLastReleaseIsHeldAndItsNodeSurvives) {
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  const std::string path = Path("ex");
  auto lock = ExclusiveLock::Create(*session, path);
  ASSERT_TRUE(lock.ok()) << lock.status();
  int counted = 0, fresh = 0;
  for (int i = 0; i < 40; ++i) {
    auto first = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(first.ok()) << first.status();
    const std::string first_node = first->node_path();
    absl::Notification go;
    auto releaser = std::async(std::launch::async, [&] {
      go.WaitForNotification();
      return first->Release();
    });
    go.Notify();
    auto second = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_EQ(releaser.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_TRUE(releaser.get().ok());
    ASSERT_TRUE(second.ok()) << "round " << i << ": " << second.status();
    EXPECT_EQ(second->state(), LockState::kHeld) << "round " << i;
    ++(second->node_path() == first_node ? counted : fresh);
    auto stat = admin().Exists(second->node_path());
    ASSERT_TRUE(stat.ok());
    EXPECT_TRUE(stat->has_value()) << "round " << i << ": the reentrant guard's node "
                                   << second->node_path() << " was deleted by the release";
    ASSERT_TRUE(second->Release().ok());
    ASSERT_TRUE(NodesOf(admin(), path).empty()) << "round " << i;
  }
  RecordProperty("counted", counted);
  RecordProperty("fresh", fresh);
}

// ---- FindQueuesBelow ----------------------------------------------------------------

// Promise (inspect.h): "at most `depth` levels down ... in tree order ... the
// first `limit` of them". Odd names (spaces, non-ASCII, a leading dash,
// names that sort before '/'), a huge depth, limit 0 and 1.
TEST_F(Review47Test, FindQueuesBelowLimitsDepthAndOddNames) {
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  const std::vector<std::string> rel = {"a b/q", "a!/q", "a/x y/q", "\xc3\xbc/q", "-/q",
                                        "z/1/2/3/4/5/6/7/q"};
  std::vector<std::unique_ptr<ExclusiveLock>> locks;
  std::vector<LockGuard> guards;
  for (const std::string& r : rel) {
    auto lock = ExclusiveLock::Create(*session, Path(r));
    ASSERT_TRUE(lock.ok()) << r << ": " << lock.status();
    auto held = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held.ok()) << r << ": " << held.status();
    guards.push_back(*std::move(held));
    locks.push_back(std::move(*lock));
  }
  // Tree order: the root's children by name ("-" < "a" < "a b" < "a!" <
  // "z" < "\xc3\xbc"), depth first.
  const std::vector<std::string> all = {Path("-/q"),    Path("a/x y/q"), Path("a b/q"),
                                        Path("a!/q"),   Path("z/1/2/3/4/5/6/7/q"),
                                        Path("\xc3\xbc/q")};
  auto huge = FindQueuesBelow(*session, root(), INT_MAX);
  ASSERT_TRUE(huge.ok()) << huge.status();
  EXPECT_EQ(*huge, all) << absl::StrJoin(*huge, " | ");
  auto two = FindQueuesBelow(*session, root(), 2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*two, (std::vector<std::string>{Path("-/q"), Path("a b/q"), Path("a!/q"),
                                            Path("\xc3\xbc/q")}))
      << absl::StrJoin(*two, " | ");
  auto none = FindQueuesBelow(*session, root(), INT_MAX, 0);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty()) << absl::StrJoin(*none, " | ");
  auto one = FindQueuesBelow(*session, root(), INT_MAX, 1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, std::vector<std::string>{all.front()});
  auto four = FindQueuesBelow(*session, root(), INT_MAX, 4);
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(*four, std::vector<std::string>(all.begin(), all.begin() + 4));
  // Below a queue's own directory: nothing (its participants are not searched).
  auto below_queue = FindQueuesBelow(*session, Path("-/q"), INT_MAX);
  ASSERT_TRUE(below_queue.ok()) << below_queue.status();
  EXPECT_TRUE(below_queue->empty()) << absl::StrJoin(*below_queue, " | ");
  // An absent path: nothing, not an error.
  auto absent = FindQueuesBelow(*session, Path("nope"), 3);
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_TRUE(absent->empty());
  for (LockGuard& g : guards) ASSERT_TRUE(g.Release().ok());
  for (const char* top : {"a b", "a!", "a", "\xc3\xbc", "-", "z"}) {
    (void)testing::DeleteRecursively(admin(), Path(top));
  }
}

}  // namespace
}  // namespace zkr
