// The library's forced revocation (zkrecipes/revocation.h; issue 32 review
// round 2): a holder that hears the force is LOST at once but keeps its node
// until it lets go (or until the requester deletes it one holder session
// timeout after the mark) — for exclusive, read, semaphore and multi-lock
// holders, a holder whose session expires, and a release racing the mark.
// Every wait is on an observable condition; durations only bound hangs.
#include <signal.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/revocation.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace {

using testing::ZkTest;

class ForcedRevocationTest : public ZkTest {
 protected:
  std::vector<std::string> Kids(const std::string& path) {
    auto children = admin().GetChildren(path);
    return children.ok() ? *children : std::vector<std::string>{};
  }
  bool NoRequestNodes(const std::string& path) {
    for (const std::string& child : Kids(path)) {
      if (absl::EndsWith(child, ".revoke")) return false;
    }
    return true;
  }
  static LockOptions Listening() {
    LockOptions options;
    options.own_node_watch_delay = absl::ZeroDuration();
    return options;
  }
};

// A forced holder that never lets go: Revoke ends (bounded: about one
// holder session timeout, 4 s here), reports "forced", the node is gone, the
// waiter holds, the holder reads LOST, nothing is left (no request node, no
// watch of the requester's).
TEST_F(ForcedRevocationTest, AForcedHolderThatNeverLetsGoLosesItsNodeInBoundedTime) {
  const std::string path = Path("never");
  auto holder_session = NewSession();
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening());
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  auto requester = NewSession();
  RevokeOptions ask;
  ask.grace = absl::Milliseconds(100);
  auto revoked = std::async(std::launch::async, [&] { return Revoke(*requester, path, ask); });
  ASSERT_EQ(revoked.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "Revoke did not end";
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = revoked.get();
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 1u);
  EXPECT_EQ((*outcomes)[0].how, RevokeOutcome::How::kForced);
  EXPECT_FALSE(admin().Exists(held->node_path())->has_value()) << "forced node still there";
  EXPECT_EQ(held->state(), LockState::kLost);
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_TRUE(NoRequestNodes(path)) << absl::StrJoin(Kids(path), ",");
  EXPECT_THAT(testing::WatchedPaths(*requester, path), ::testing::IsEmpty());
  // The forced holder lets go late: no error that matters, nothing deleted of the next's.
  (void)held->Release();
  EXPECT_TRUE(admin().Exists(mine->node_path())->has_value()) << "the late release deleted the next holder's node";
  EXPECT_THAT(testing::WatchedPaths(*holder_session, path), ::testing::IsEmpty());
  ASSERT_TRUE(mine->Release().ok());
  EXPECT_TRUE(testing::AwaitChildCount(admin(), path, 0));
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A guard destroyed after the force (without Release) deletes its node at
// once: Revoke ends well before the holder's session timeout, the waiter
// holds, nothing is left.
TEST_F(ForcedRevocationTest, AGuardDestroyedAfterTheForceDeletesItsNode) {
  const std::string path = Path("destroyed");
  auto holder_session = NewSession();
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening());
  auto held = std::make_unique<absl::StatusOr<LockGuard>>((*lock)->Acquire(absl::Seconds(10)));
  ASSERT_TRUE(held->ok()) << held->status();
  const std::string node = (*held)->node_path();
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  const absl::Time start = absl::Now();
  auto revoked = std::async(std::launch::async, [&] { return Revoke(admin(), path, ask); });
  ASSERT_TRUE(testing::Eventually([&] { return (*held)->state() == LockState::kLost; }));
  EXPECT_EQ(next.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "the waiter holds beside a forced holder that has not let go";
  held.reset();  // the guard goes
  ASSERT_EQ(next.wait_for(std::chrono::seconds(3)), std::future_status::ready)
      << "the destroyed guard's node stayed";
  ASSERT_EQ(revoked.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3)) << "Revoke waited out the timeout";
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = revoked.get();
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  absl::StatusOr<LockGuard> mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_TRUE(NoRequestNodes(path));
  EXPECT_THAT(testing::WatchedPaths(*holder_session, path), ::testing::IsEmpty());
  ASSERT_TRUE(mine->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Two read holders forced at once: a writer waits until BOTH have let go.
TEST_F(ForcedRevocationTest, ForcedReadHoldersKeepTheWriterOutUntilBothLetGo) {
  const std::string path = Path("readers");
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<SharedLock>> locks;
  std::vector<LockGuard> reads;
  for (int i = 0; i < 2; ++i) {
    sessions.push_back(NewSession());
    locks.push_back(std::move(*SharedLock::Create(*sessions.back(), path, Listening())));
    auto read = locks.back()->AcquireRead(absl::Seconds(10));
    ASSERT_TRUE(read.ok()) << read.status();
    reads.push_back(std::move(*read));
  }
  auto writer_session = NewSession();
  auto writer = SharedLock::Create(*writer_session, path);
  std::future<absl::StatusOr<LockGuard>> write = (*writer)->AcquireWriteFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 3));
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto revoked = std::async(std::launch::async, [&] { return Revoke(admin(), path, ask); });
  for (LockGuard& read : reads) {
    ASSERT_TRUE(testing::Eventually([&] { return read.state() == LockState::kLost; }));
  }
  EXPECT_EQ(write.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "the writer holds beside forced readers";
  ASSERT_TRUE(reads[0].Release().ok());
  EXPECT_EQ(write.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the writer holds beside a forced reader that has not let go";
  ASSERT_TRUE(reads[1].Release().ok());
  ASSERT_EQ(write.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> w = write.get();
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(revoked.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = revoked.get();
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  EXPECT_EQ(outcomes->size(), 2u);
  EXPECT_TRUE(NoRequestNodes(path));
  ASSERT_TRUE(w->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A semaphore of 3, three holders, a waiter for 1: all three forced; the
// waiter gets in only once one has let go; the one that never lets go is
// deleted by the requester in bounded time; nothing is left.
TEST_F(ForcedRevocationTest, ForcedSemaphoreHoldersOneNeverLetsGo) {
  const std::string path = Path("sem");
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<Semaphore>> sems;
  std::vector<LockGuard> leases;
  for (int i = 0; i < 3; ++i) {
    sessions.push_back(NewSession());
    sems.push_back(std::move(*Semaphore::Create(*sessions.back(), path, 3, Listening())));
    auto lease = sems.back()->Acquire(1, absl::Seconds(10));
    ASSERT_TRUE(lease.ok()) << lease.status();
    leases.push_back(std::move(*lease));
  }
  auto waiter_session = NewSession();
  auto waiter = Semaphore::Create(*waiter_session, path, 3);
  std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture(3);
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 4));
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto revoked = std::async(std::launch::async, [&] { return Revoke(admin(), path, ask); });
  for (LockGuard& lease : leases) {
    ASSERT_TRUE(testing::Eventually([&] { return lease.state() == LockState::kLost; }));
  }
  ASSERT_TRUE(leases[0].Release().ok());
  ASSERT_TRUE(leases[1].Release().ok());
  EXPECT_EQ(next.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "3 leases granted while a forced holder still holds 1";
  // leases[2] never lets go: the requester deletes its node.
  ASSERT_EQ(revoked.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = revoked.get();
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  EXPECT_EQ(outcomes->size(), 3u);
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> all = next.get();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE(NoRequestNodes(path));
  (void)leases[2].Release();
  EXPECT_TRUE(admin().Exists(all->node_path())->has_value());
  ASSERT_TRUE(all->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A MultiLock part forced: the whole guard reads LOST; the part's node
// stays until the guard lets go; a waiter on that part gets in only then.
TEST_F(ForcedRevocationTest, AForcedMultiLockPartKeepsItsNodeUntilTheGuardLetsGo) {
  const std::string a = Path("multi-a"), b = Path("multi-b");
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}},
                                 Listening());
  ASSERT_TRUE(multi.ok()) << multi.status();
  absl::StatusOr<MultiLockGuard> both = (*multi)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(both.ok()) << both.status();
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, b);
  std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), b, 2));
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto revoked = std::async(std::launch::async, [&] { return Revoke(admin(), b, ask); });
  ASSERT_TRUE(testing::Eventually([&] { return both->state() == LockState::kLost; }));
  EXPECT_EQ(next.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "the waiter holds beside the forced part";
  (void)both->Release();
  ASSERT_EQ(next.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  absl::StatusOr<LockGuard> mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ASSERT_EQ(revoked.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_TRUE(revoked.get().ok());
  EXPECT_TRUE(testing::AwaitChildCount(admin(), a, 0)) << "part a left";
  EXPECT_TRUE(NoRequestNodes(b));
  ASSERT_TRUE(mine->Release().ok());
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// A forced holder whose session then expires: its node goes with it;
// Revoke ends at once (not after the timeout); the waiter holds; Release
// afterwards does not hang.
TEST_F(ForcedRevocationTest, AForcedHolderWhoseSessionExpires) {
  const std::string path = Path("expires");
  auto holder_session = NewSession();
  auto lock = ExclusiveLock::Create(*holder_session, path, Listening());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto revoked = std::async(std::launch::async, [&] { return Revoke(admin(), path, ask); });
  ASSERT_TRUE(testing::Eventually([&] { return held->state() == LockState::kLost; }));
  ASSERT_TRUE(testing::ExpireSession(*holder_session).ok());
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  ASSERT_EQ(revoked.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_TRUE(revoked.get().ok());
  EXPECT_EQ(held->state(), LockState::kLost);
  auto released = std::async(std::launch::async, [&] { return held->Release(); });
  EXPECT_EQ(released.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "Release of a forced hold whose session expired hangs";
  EXPECT_TRUE(admin().Exists(mine->node_path())->has_value());
  ASSERT_TRUE(mine->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// The holder releases as soon as it is asked while the requester's grace is
// zero: the release races the mark. Ten rounds: Revoke always ends quickly,
// the waiter holds, no request node or watch is left.
TEST_F(ForcedRevocationTest, ReleaseRacingTheMark) {
  const std::string path = Path("race");
  auto holder_session = NewSession();
  auto waiter_session = NewSession();
  auto requester = NewSession();
  for (int round = 0; round < 10; ++round) {
    std::promise<void> asked;
    std::atomic<bool> once{false};
    LockOptions options = Listening();
    options.on_revoke_request = [&](const RevokeRequest&) {
      if (!once.exchange(true)) asked.set_value();
    };
    auto lock = ExclusiveLock::Create(*holder_session, path, options);
    absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held.ok()) << held.status();
    auto waiter = ExclusiveLock::Create(*waiter_session, path);
    std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture();
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
    // Told (asked, or forced before the request was heard): let go.
    std::thread releaser([&, f = asked.get_future()]() mutable {
      testing::Eventually([&] {
        return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready ||
               held->state() == LockState::kLost;
      });
      absl::SleepFor(absl::Microseconds(round * 300));  // spread over the mark's window
      (void)held->Release();
    });
    RevokeOptions ask;
    ask.grace = absl::ZeroDuration();
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<RevokeOutcome>> outcomes = Revoke(*requester, path, ask);
    const absl::Duration took = absl::Now() - start;
    releaser.join();
    ASSERT_TRUE(outcomes.ok()) << outcomes.status();
    EXPECT_LT(took, absl::Seconds(3)) << "round " << round;
    ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    absl::StatusOr<LockGuard> mine = next.get();
    ASSERT_TRUE(mine.ok()) << mine.status();
    EXPECT_TRUE(NoRequestNodes(path)) << "round " << round << ": " << absl::StrJoin(Kids(path), ",");
    ASSERT_TRUE(mine->Release().ok());
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
    EXPECT_THAT(testing::WatchedPaths(*requester, path), ::testing::IsEmpty()) << "round " << round;
    EXPECT_THAT(testing::WatchedPaths(*holder_session, path), ::testing::IsEmpty()) << "round " << round;
  }
  ASSERT_TRUE(admin().Delete(path).ok());
}
}  // namespace
}  // namespace zkr
