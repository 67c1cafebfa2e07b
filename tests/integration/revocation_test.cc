// Revocation (zkrecipes/revocation.h) against a real server: a holder that
// listens releases when asked; one that does not is forced out after the
// grace period (LOST; the next holder's token is higher); semaphore holders
// are revoked each; inspect shows a pending request; bad input.
#include "zkrecipes/revocation.h"

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_clock.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/semaphore.h"

namespace zkr {
namespace {

using testing::ZkTest;

class RevocationTest : public ZkTest {};

std::string Child(const std::string& node_path) { return node_path.substr(node_path.rfind('/') + 1); }

// The holder's callback runs on its dispatcher thread with the reason; it
// releases (from another thread: Release waits for the server), and Revoke
// reports "released" before its grace period is over.
TEST_F(RevocationTest, AListeningHolderIsAskedAndReleases) {
  const std::string path = Path("coop");
  auto session = NewSession();
  absl::Notification asked;
  std::optional<RevokeRequest> request;  // written before `asked` is notified
  LockOptions options;
  options.on_revoke_request = [&](const RevokeRequest& r) {
    if (asked.HasBeenNotified()) return;
    request = r;
    asked.Notify();
  };
  auto lock = ExclusiveLock::Create(*session, path, options);
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  std::thread holder([&] {
    ASSERT_TRUE(asked.WaitForNotificationWithTimeout(absl::Seconds(20)));
    EXPECT_TRUE(held->Release().ok());
  });
  RevokeOptions ask;
  ask.reason = "the nightly job needs it";
  ask.grace = absl::Seconds(20);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = Revoke(admin(), path, ask);
  holder.join();
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_EQ(outcomes->size(), 1u);
  EXPECT_EQ((*outcomes)[0].how, RevokeOutcome::How::kReleased);
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->reason, "the nightly job needs it");
  EXPECT_EQ(request->lock_path, path);
  EXPECT_EQ(Child(request->node_path), (*outcomes)[0].node);
  EXPECT_TRUE(admin().GetChildren(path)->empty()) << "a request node was left behind";
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A holder that does not listen keeps the lock through the grace period,
// then its node is deleted: it sees LOST, the waiter gets in with a higher
// fencing token.
TEST_F(RevocationTest, AHolderThatDoesNotLetGoIsForcedOut) {
  const std::string path = Path("forced");
  auto session = NewSession();
  LockOptions options;
  options.own_node_watch_delay = absl::ZeroDuration();
  auto lock = ExclusiveLock::Create(*session, path, options);
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture();
  RevokeOptions ask;
  ask.grace = absl::Milliseconds(300);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = Revoke(*waiter_session, path, ask);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  ASSERT_EQ(outcomes->size(), 1u) << "only the holder is revoked, not the waiter";
  EXPECT_EQ((*outcomes)[0].how, RevokeOutcome::How::kForced);
  EXPECT_EQ((*outcomes)[0].node, Child(held->node_path()));
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_GT(mine->fencing_token(), held->fencing_token());
  for (int i = 0; i < 500 && held->state() != LockState::kLost; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(held->state(), LockState::kLost);
  ASSERT_TRUE(mine->Release().ok());
  EXPECT_TRUE(held->Release().ok());  // lost: nothing to delete
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A holder that hears the force is LOST at once, but its node stays until it
// lets go (or until the requester deletes it, one holder session timeout
// after the mark): whatever it was doing may still be stopping (zkr's CMD),
// and nobody may hold beside it meanwhile.
TEST_F(RevocationTest, AForcedHolderKeepsItsNodeUntilItLetsGo) {
  const std::string path = Path("forced-keeps");
  auto session = NewSession();
  LockOptions options;
  options.own_node_watch_delay = absl::ZeroDuration();
  auto lock = ExclusiveLock::Create(*session, path, options);
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture();
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  RevokeOptions ask;
  ask.grace = absl::ZeroDuration();
  auto revoked = std::async(std::launch::async, [&] { return Revoke(*waiter_session, path, ask); });
  ASSERT_TRUE(testing::Eventually([&] { return held->state() == LockState::kLost; },
                                  absl::Seconds(20)));
  EXPECT_TRUE(admin().Exists(held->node_path())->has_value())
      << "the forced holder's node went before it let go";
  EXPECT_EQ(next.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "the waiter holds beside a forced holder that has not let go";
  EXPECT_TRUE(held->Release().ok());
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = revoked.get();
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 1u);
  EXPECT_EQ((*outcomes)[0].how, RevokeOutcome::How::kForced);
  ASSERT_TRUE(mine->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Every holder of a semaphore is asked and, not listening, forced; the
// waiter is left alone. Inspect shows the request while it is pending.
TEST_F(RevocationTest, SemaphoreHoldersAreRevokedEachAndInspectShowsRequests) {
  const std::string path = Path("sem");
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<Semaphore>> semaphores;
  std::vector<LockGuard> leases;
  for (int i = 0; i < 2; ++i) {
    sessions.push_back(NewSession());
    semaphores.push_back(std::move(*Semaphore::Create(*sessions.back(), path, 2)));
    auto lease = semaphores.back()->Acquire(1, absl::Seconds(10));
    ASSERT_TRUE(lease.ok()) << lease.status();
    leases.push_back(std::move(*lease));
  }
  auto waiter_session = NewSession();
  auto waiter = Semaphore::Create(*waiter_session, path, 2);
  std::future<absl::StatusOr<LockGuard>> third = (*waiter)->AcquireFuture(2);
  for (int i = 0; i < 500 && admin().GetChildren(path)->size() < 3; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  // A request made by hand, as an operator's tool would: inspect shows it.
  const std::string first = Child(leases[0].node_path());
  ASSERT_TRUE(admin().Create(path + "/" + first + ".revoke", "ops: disk full",
                             CreateMode::kEphemeral).ok());
  auto queue = InspectQueue(admin(), path);
  ASSERT_TRUE(queue.ok()) << queue.status();
  ASSERT_EQ(queue->size(), 3u) << "the request node is not a participant";
  EXPECT_TRUE((*queue)[0].revoke_requested);
  EXPECT_EQ((*queue)[0].revoke_reason, "ops: disk full");
  EXPECT_EQ((*queue)[0].leases, 1);
  EXPECT_EQ((*queue)[0].semaphore_size, 2);
  EXPECT_FALSE((*queue)[1].revoke_requested);
  EXPECT_FALSE((*queue)[2].holds);
  EXPECT_EQ((*queue)[2].watching.size(), 2u) << "the first waiter watches both holders";
  // A request made by Revoke carries its grace on a first line: inspect
  // shows the reason alone.
  const std::string second = Child(leases[1].node_path());
  ASSERT_TRUE(admin().Create(path + "/" + second + ".revoke", "revoke_grace_ms=5000\nops: deploy",
                             CreateMode::kEphemeral).ok());
  queue = InspectQueue(admin(), path);
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_EQ((*queue)[1].revoke_reason, "ops: deploy");
  ASSERT_TRUE(admin().Delete(path + "/" + second + ".revoke").ok());
  ASSERT_TRUE(admin().Delete(path + "/" + first + ".revoke").ok());

  RevokeOptions ask;
  ask.grace = absl::Milliseconds(200);
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = Revoke(admin(), path, ask);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 2u);
  for (const RevokeOutcome& outcome : *outcomes) {
    EXPECT_EQ(outcome.how, RevokeOutcome::How::kForced) << outcome.node;
  }
  ASSERT_EQ(third.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> both = third.get();
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_TRUE(both->Release().ok());
  leases.clear();
  semaphores.clear();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A node named in RevokeOptions::node that waits (does not hold) is refused
// with FailedPrecondition naming it: a waiter's place is never touched, and
// its acquisition goes on to hold once the holder releases.
TEST_F(RevocationTest, ANamedWaiterIsRefusedAndKeepsItsPlace) {
  const std::string path = Path("named-waiter");
  auto holder_session = NewSession();
  auto holder = ExclusiveLock::Create(*holder_session, path);
  ASSERT_TRUE(holder.ok());
  absl::StatusOr<LockGuard> held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  ASSERT_TRUE(waiter.ok());
  std::future<absl::StatusOr<LockGuard>> next = (*waiter)->AcquireFuture();
  std::string waiting;
  for (int i = 0; i < 1000 && waiting.empty(); ++i) {
    auto queue = InspectQueue(admin(), path);
    ASSERT_TRUE(queue.ok()) << queue.status();
    if (queue->size() == 2) waiting = (*queue)[1].name;
    else absl::SleepFor(absl::Milliseconds(5));  // polling the server, not deciding
  }
  ASSERT_FALSE(waiting.empty()) << "the waiter never queued";

  RevokeOptions named;
  named.node = waiting;
  named.grace = absl::ZeroDuration();
  absl::Status refused = Revoke(admin(), path, named).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_NE(refused.message().find(waiting), absl::string_view::npos) << refused;
  auto queue = InspectQueue(admin(), path);
  ASSERT_TRUE(queue.ok()) << queue.status();
  ASSERT_EQ(queue->size(), 2u) << "the waiter's node was touched";
  EXPECT_EQ((*queue)[1].name, waiting);
  EXPECT_FALSE((*queue)[1].revoke_requested) << "a request was left for the waiter";

  ASSERT_TRUE(held->Release().ok());
  ASSERT_EQ(next.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  absl::StatusOr<LockGuard> mine = next.get();
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(Child(mine->node_path()), waiting);
  ASSERT_TRUE(mine->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Five cooperative revocations in a row leave the requester's session no
// watch under the lock (the server's listing): not on the released nodes,
// not on the requests.
TEST_F(RevocationTest, CooperativeRevocationsLeaveNoWatch) {
  const std::string path = Path("coop-watches");
  auto holder_session = NewSession();
  auto requester = NewSession();
  for (int round = 0; round < 5; ++round) {
    absl::Notification asked;
    LockOptions options;
    options.on_revoke_request = [&](const RevokeRequest&) {
      if (!asked.HasBeenNotified()) asked.Notify();
    };
    auto lock = ExclusiveLock::Create(*holder_session, path, options);
    ASSERT_TRUE(lock.ok());
    absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held.ok()) << held.status();
    std::thread holder([&] {
      ASSERT_TRUE(asked.WaitForNotificationWithTimeout(absl::Seconds(20)));
      EXPECT_TRUE(held->Release().ok());
    });
    RevokeOptions ask;
    ask.grace = absl::Seconds(20);
    absl::StatusOr<std::vector<RevokeOutcome>> outcomes = Revoke(*requester, path, ask);
    holder.join();
    ASSERT_TRUE(outcomes.ok()) << outcomes.status();
    ASSERT_EQ(outcomes->size(), 1u);
    EXPECT_EQ((*outcomes)[0].how, RevokeOutcome::How::kReleased);
  }
  EXPECT_THAT(testing::WatchedPaths(*requester, path), ::testing::IsEmpty())
      << "watches the requester left behind";
  ASSERT_TRUE(admin().Delete(path).ok());
}

// The grace period is measured on the requester's session clock (monotonic):
// its time moved an hour past a one-hour grace ends the grace at the next
// wake-up (here: the holder's node changes), though the wall clock did not
// move.
TEST_F(RevocationTest, TheGraceIsMeasuredOnTheSessionsMonotonicClock) {
  const std::string path = Path("grace-clock");
  auto holder_session = NewSession();
  absl::Notification asked;
  LockOptions options;
  options.own_node_watch_delay = absl::ZeroDuration();
  options.on_revoke_request = [&](const RevokeRequest&) {  // heard, not heeded
    if (!asked.HasBeenNotified()) asked.Notify();
  };
  auto lock = ExclusiveLock::Create(*holder_session, path, options);
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto clock = std::make_shared<testing::FakeClock>();
  SessionOptions requester_options = Options();
  requester_options.clock = clock;
  auto requester = NewSession(requester_options);
  RevokeOptions ask;
  ask.grace = absl::Hours(1);
  std::future<absl::StatusOr<std::vector<RevokeOutcome>>> revoked =
      std::async(std::launch::async, [&] { return Revoke(*requester, path, ask); });
  ASSERT_TRUE(asked.WaitForNotificationWithTimeout(absl::Seconds(20)));
  // The requester waits in its grace period once it watches the node.
  bool waiting = false;
  for (int i = 0; i < 1000 && !waiting; ++i) {
    waiting = !testing::WatchedPaths(*requester, held->node_path()).empty();
    if (!waiting) absl::SleepFor(absl::Milliseconds(5));  // polling the server, not deciding
  }
  ASSERT_TRUE(waiting) << "the requester never waited on the holder's node";
  clock->AdvanceMonotonic(absl::Hours(2));
  // Wakes the requester, which waits for the holder's node to go.
  ASSERT_TRUE(admin().Set(held->node_path(), *admin().Get(held->node_path())).ok());
  if (revoked.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "the grace was measured on another clock";
    ASSERT_TRUE(held->Release().ok());  // ends the wait
  }
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = revoked.get();
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 1u);
  EXPECT_EQ((*outcomes)[0].how, RevokeOutcome::How::kForced);
  (void)held->Release();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A holder that does not listen for a forced revocation (no own-node watch,
// no on_revoke_request) could not be told of one: its node is left, and the
// outcome says so, rather than let the next holder in while it believes it
// holds.
TEST_F(RevocationTest, AHolderThatCannotHearAForceIsNotForced) {
  const std::string path = Path("deaf");
  auto session = NewSession();
  LockOptions options;
  options.watch_own_node = false;
  auto lock = ExclusiveLock::Create(*session, path, options);
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  RevokeOptions ask;
  ask.grace = absl::Milliseconds(100);
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = Revoke(admin(), path, ask);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 1u);
  EXPECT_EQ((*outcomes)[0].how, RevokeOutcome::How::kNotForced);
  EXPECT_EQ(RevokeHowName((*outcomes)[0].how), "not forced");
  EXPECT_EQ(*admin().GetChildren(path), std::vector<std::string>{Child(held->node_path())})
      << "its node was deleted, or a request was left";
  EXPECT_TRUE(held->held());
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(RevocationTest, BadInputAndNothingHeld) {
  const std::string path = Path("input");
  EXPECT_TRUE(absl::IsInvalidArgument(Revoke(admin(), "no-slash").status()));
  RevokeOptions named;
  named.node = "a/b";
  EXPECT_TRUE(absl::IsInvalidArgument(Revoke(admin(), path, named).status()));
  named.node = "host-W-0000000001";
  absl::Status missing = Revoke(admin(), path, named).status();
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_NE(missing.message().find("host-W-0000000001"), absl::string_view::npos);
  absl::StatusOr<std::vector<RevokeOutcome>> none = Revoke(admin(), path);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace zkr
