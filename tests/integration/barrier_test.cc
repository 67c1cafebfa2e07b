// Barrier and DoubleBarrier against a real standalone ZooKeeper server: many
// members in separate sessions on threads, checked by what each member saw
// and by the server's own watch listing (`wchp`), plus timeouts, a member
// dying inside, and bad input.
#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"
#include "src/zk_client.h"
#include "tests/support/barrier_fixture.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/exclusive_lock.h"

namespace zkr {

using internal::QueueNode;
using internal::ParseQueue;
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ZkTest;

using testing::BarrierTest;
using testing::Member;
using testing::WatchListing;

std::string Hex(int64_t session_id) { return testing::SessionIdHex(session_id); }

// ---- Barrier -------------------------------------------------------------------------

TEST_F(BarrierTest, NobodyPassesWaitBeforeRemove) {
  if (!HasServer()) GTEST_SKIP() << "needs the embedded server's four-letter words";
  constexpr int kWaiters = 5;
  const std::string path = Path("gate");
  auto setter = Barrier::Create(admin(), path);
  ASSERT_TRUE(setter.ok()) << setter.status();
  ASSERT_TRUE((*setter)->Set().ok());
  ASSERT_TRUE((*setter)->Set().ok());  // already set: fine
  ASSERT_TRUE(*(*setter)->IsSet());

  std::atomic<bool> removing{false};
  std::atomic<int> returned{0};
  struct Waiter {
    std::unique_ptr<Session> session;
    std::unique_ptr<Barrier> barrier;
    absl::Status status;
    bool saw_removing = false;
  };
  std::vector<Waiter> waiters(kWaiters);
  std::vector<std::thread> threads;
  WatchListing expected;
  for (Waiter& w : waiters) {
    w.session = NewSession();
    ASSERT_NE(w.session, nullptr);
    w.barrier = std::move(*Barrier::Create(*w.session, path));
    expected[path].insert(Hex(w.session->session_id()));
  }
  for (Waiter& w : waiters) {
    threads.emplace_back([&w, &removing, &returned] {
      w.status = w.barrier->Wait(absl::Seconds(30));
      w.saw_removing = removing.load();
      ++returned;
    });
  }
  // Every waiter is waiting: each of the five sessions watches the barrier
  // node (one watch each, no polling).
  EXPECT_EQ(WaitForWatches([&](const std::string& p) { return p == path; }, expected), expected);
  EXPECT_EQ(returned.load(), 0);

  removing = true;
  EXPECT_TRUE((*setter)->Remove().ok());
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_TRUE(waiters[i].status.ok()) << i << ": " << waiters[i].status;
    EXPECT_TRUE(waiters[i].saw_removing) << "waiter " << i << " passed before Remove";
  }
  EXPECT_FALSE(*(*setter)->IsSet());
  EXPECT_TRUE((*setter)->Remove().ok());  // already removed: fine
}

TEST_F(BarrierTest, WaitTimesOutOnASetBarrierAndReturnsAtOnceOnAnAbsentOne) {
  const std::string path = Path("parents/gate");
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  auto waiter = Barrier::Create(*other, path);
  ASSERT_TRUE(waiter.ok());
  // Absent: returns at once (one round trip), also with no timeout.
  absl::Time start = absl::Now();
  EXPECT_TRUE((*waiter)->Wait().ok());
  EXPECT_TRUE((*waiter)->Wait(absl::ZeroDuration()).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_FALSE(*(*waiter)->IsSet());

  auto setter = Barrier::Create(admin(), path);
  ASSERT_TRUE((*setter)->Set().ok());  // creates the missing parent too
  EXPECT_TRUE(*(*waiter)->IsSet());
  start = absl::Now();
  absl::Status status = (*waiter)->Wait(absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_TRUE(*(*waiter)->IsSet());  // a timed-out waiter changes nothing
  ASSERT_TRUE((*setter)->Remove().ok());
  EXPECT_TRUE((*waiter)->Wait(absl::Seconds(5)).ok());
  RemoveDirectory(Path("parents"));  // a container made by Set()

  for (const char* bad : {"", "rel", "/", "/a/", "/a//b"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(Barrier::Create(admin(), bad).status())) << bad;
  }
}

// ---- DoubleBarrier ---------------------------------------------------------------------

TEST_F(BarrierTest, DoubleBarrierReleasesEveryoneOnlyWhenAllEnteredAndAllLeft) {
  if (!HasServer()) GTEST_SKIP() << "needs the embedded server's four-letter words";
  constexpr int kMembers = 5;
  const std::string path = Path("double");
  const std::string ready = path + "/ready";
  std::vector<std::unique_ptr<Member>> m;
  for (int i = 0; i < kMembers; ++i) {
    m.push_back(NewMember(path, i, kMembers));
    ASSERT_NE(m.back(), nullptr);
  }
  // Enter one at a time: each one's node is queued and it waits on "ready"
  // (a watch, seen on the server) before the next comes; nobody gets through
  // until the fifth has entered.
  for (int i = 0; i < kMembers; ++i) {
    Run(*m[i], absl::Seconds(30));
    std::vector<std::string> nodes =
        WaitForNodes(path, [&](const std::vector<std::string>& n) { return n.size() == i + 1u; });
    ASSERT_EQ(nodes.size(), i + 1u);
    ASSERT_TRUE(absl::StartsWith(nodes.back(), m[i]->id + "_")) << nodes.back();
    if (i == kMembers - 1) break;
    WatchListing expected;
    for (int j = 0; j <= i; ++j) expected[ready].insert(Hex(m[j]->session->session_id()));
    EXPECT_EQ(WaitForWatches([&](const std::string& p) { return p == ready; }, expected),
              expected);
    for (int j = 0; j <= i; ++j) EXPECT_FALSE(m[j]->enter_returned.HasBeenNotified()) << j;
  }
  for (auto& member : m) {
    ASSERT_TRUE(member->enter_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(member->enter_status.ok()) << member->id << ": " << member->enter_status;
    EXPECT_EQ(member->entering_seen, kMembers) << member->id << " got in early";
    EXPECT_TRUE(member->barrier->entered());
  }
  EXPECT_TRUE(admin().Exists(ready)->has_value());
  std::vector<std::string> nodes = MemberNodes(path);
  ASSERT_EQ(nodes.size(), static_cast<size_t>(kMembers));

  // Leave one at a time. The lowest (member 0) goes first and waits for the
  // highest; the others delete their own node and wait for the lowest.
  // Nobody returns until the last one has started leaving.
  auto member_node = [&](const std::string& node) { return path + "/" + node; };
  auto keep = [&](const std::string& p) {
    return absl::StartsWith(p, path + "/") && p != ready;
  };
  WatchListing expected;
  expected[member_node(nodes[kMembers - 1])].insert(Hex(m[0]->session->session_id()));
  m[0]->leave_go.Notify();
  EXPECT_EQ(WaitForWatches(keep, expected), expected);
  for (int i = 1; i < kMembers; ++i) {
    m[i]->leave_go.Notify();
    if (i == kMembers - 1) break;
    const std::string gone = nodes[i];
    std::vector<std::string> now = WaitForNodes(path, [&](const std::vector<std::string>& n) {
      return std::find(n.begin(), n.end(), gone) == n.end();
    });
    EXPECT_EQ(now.size(), static_cast<size_t>(kMembers - i));
    expected[member_node(nodes[0])].insert(Hex(m[i]->session->session_id()));
    EXPECT_EQ(WaitForWatches(keep, expected), expected);
    for (int j = 0; j <= i; ++j) EXPECT_FALSE(m[j]->leave_returned.HasBeenNotified()) << j;
  }
  for (auto& member : m) {
    ASSERT_TRUE(member->leave_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(member->leave_status.ok()) << member->id << ": " << member->leave_status;
    EXPECT_EQ(member->leaving_seen, kMembers) << member->id << " left early";
    EXPECT_FALSE(member->barrier->entered());
  }
  // The last one out removed "ready"; nothing else is left.
  EXPECT_FALSE(admin().Exists(ready)->has_value());
  RemoveDirectory(path);
}

// Leave waits for everyone; one that gives up removes its own node (it has
// left, as far as the others can tell) and does not block them.
TEST_F(BarrierTest, DoubleBarrierLeaveTimeoutRemovesThatMembersNode) {
  const std::string path = Path("leave-timeout");
  auto early = NewMember(path, 0, 2);
  auto late = NewMember(path, 1, 2);
  ASSERT_NE(early, nullptr);
  ASSERT_NE(late, nullptr);
  Run(*late, absl::Seconds(30));  // enters, then leaves only when told
  ASSERT_TRUE(early->barrier->Enter(absl::Seconds(30)).ok());
  ASSERT_TRUE(late->enter_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_TRUE(late->enter_status.ok()) << late->enter_status;

  absl::Status left = early->barrier->Leave(absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsDeadlineExceeded(left)) << left;
  EXPECT_THAT(left.message(), HasSubstr(path));
  EXPECT_FALSE(early->barrier->entered());
  EXPECT_EQ(MemberNodes(path).size(), 1u) << "the member that gave up left its node";

  late->leave_go.Notify();
  ASSERT_TRUE(late->leave_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(late->leave_status.ok()) << late->leave_status;
  RemoveDirectory(path);
}

// Member nodes are named like a lock's, a semaphore's, a candidate's or a
// group member's: only their data tells them apart. Another recipe's
// participants at the path must never count as members (a lone member of
// a barrier of two passed beside a lock holder, and left its `ready` node
// for good: review 56). Where one is queued first, Enter refuses at once
// (FailedPrecondition naming it) and leaves nothing; one queued after the
// members is found by the member that would open the barrier, which is
// refused likewise: the barrier stays closed.
TEST_F(BarrierTest, AnotherRecipesParticipantIsNeverCountedAsAMember) {
  for (const bool semaphore : {false, true}) {
    const std::string path = Path(semaphore ? "semaphore-there" : "lock-there");
    SCOPED_TRACE(path);
    std::optional<LockGuard> held;
    std::unique_ptr<ExclusiveLock> lock;
    std::unique_ptr<Semaphore> leases;
    if (semaphore) {
      auto made = Semaphore::Create(admin(), path, 2);
      ASSERT_TRUE(made.ok()) << made.status();
      leases = *std::move(made);
      auto guard = leases->Acquire(1, absl::Seconds(10));
      ASSERT_TRUE(guard.ok()) << guard.status();
      held.emplace(*std::move(guard));
    } else {
      auto made = ExclusiveLock::Create(admin(), path);
      ASSERT_TRUE(made.ok()) << made.status();
      lock = *std::move(made);
      auto guard = lock->Acquire(absl::Seconds(10));
      ASSERT_TRUE(guard.ok()) << guard.status();
      held.emplace(*std::move(guard));
    }
    const std::vector<std::string> before = *admin().GetChildren(path);
    ASSERT_EQ(before.size(), 1u);
    auto member = NewMember(path, 0, /*count=*/2);
    ASSERT_NE(member, nullptr);
    absl::Status entered = member->barrier->Enter(absl::Seconds(3));
    EXPECT_TRUE(absl::IsFailedPrecondition(entered)) << entered;
    EXPECT_THAT(entered.message(), HasSubstr(before[0]));
    EXPECT_FALSE(member->barrier->entered());
    // Nothing of the member's is left: read on its own session, after its delete.
    EXPECT_EQ(*member->session->GetChildren(path), before);
    ASSERT_TRUE(held->Release().ok());
    EXPECT_TRUE(WaitForNodes(path, [](const std::vector<std::string>& n) { return n.empty(); })
                    .empty());
    absl::Status deleted = admin().Delete(path);  // the container, unless reaped already
    EXPECT_TRUE(deleted.ok() || absl::IsNotFound(deleted)) << deleted;
  }
  // A lock's waiter queued behind a lone member is not counted either.
  const std::string path = Path("lock-behind");
  auto first = NewMember(path, 0, /*count=*/2);
  ASSERT_NE(first, nullptr);
  Run(*first, absl::Seconds(4));
  ASSERT_EQ(WaitForNodes(path, [](const std::vector<std::string>& n) { return n.size() == 1; })
                .size(),
            1u);
  auto lock = ExclusiveLock::Create(admin(), path);
  ASSERT_TRUE(lock.ok());
  auto pending = std::async(std::launch::async, [&] { return (*lock)->Acquire(absl::Seconds(30)); });
  ASSERT_EQ(WaitForNodes(path, [](const std::vector<std::string>& n) { return n.size() == 2; })
                .size(),
            2u);
  auto second = NewMember(path, 1, /*count=*/2);
  ASSERT_NE(second, nullptr);
  absl::Status entered = second->barrier->Enter(absl::Seconds(10));
  EXPECT_TRUE(absl::IsFailedPrecondition(entered)) << entered;
  EXPECT_EQ(MemberNodes(path).size(), 2u) << "the refused member's node is left";
  // The first member times out too (its node goes; the lock's waiter holds).
  ASSERT_TRUE(first->enter_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(absl::IsDeadlineExceeded(first->enter_status)) << first->enter_status;
  auto guard = pending.get();
  ASSERT_TRUE(guard.ok()) << guard.status();
  ASSERT_TRUE(guard->Release().ok());
  absl::Status deleted = admin().Delete(path);
  EXPECT_TRUE(deleted.ok() || absl::IsNotFound(deleted)) << deleted;
}

TEST_F(BarrierTest, DoubleBarrierEnterTimeoutRemovesOnlyThatMembersNode) {
  constexpr int kCount = 6;
  const std::string path = Path("timeout");
  std::vector<std::unique_ptr<Member>> m;
  for (int i = 0; i < 4; ++i) {
    m.push_back(NewMember(path, i, kCount));
    ASSERT_NE(m.back(), nullptr);
    Run(*m.back(), absl::Seconds(30));
    ASSERT_EQ(WaitForNodes(path, [&](const std::vector<std::string>& n) {
                return n.size() == i + 1u;
              }).size(),
              i + 1u);
  }
  // The fifth of six gives up.
  auto late = NewMember(path, 4, kCount);
  ASSERT_NE(late, nullptr);
  const absl::Time start = absl::Now();
  absl::Status status = late->barrier->Enter(absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(500));
  EXPECT_FALSE(late->barrier->entered());
  // Its node is gone (read on its own session: ordered after its delete);
  // the four others are still queued and still waiting.
  auto children = late->session->GetChildren(path);
  ASSERT_TRUE(children.ok());
  EXPECT_EQ(children->size(), 4u);
  for (const std::string& child : *children) {
    EXPECT_FALSE(absl::StartsWith(child, late->id + "_")) << child;
  }
  for (auto& member : m) EXPECT_FALSE(member->enter_returned.HasBeenNotified());
  EXPECT_TRUE(absl::IsFailedPrecondition(late->barrier->Leave()));

  // The timed-out member does not count: two more are needed, then all six pass.
  for (int i = 5; i < 7; ++i) {
    m.push_back(NewMember(path, i, kCount));
    ASSERT_NE(m.back(), nullptr);
    Run(*m.back(), absl::Seconds(30));
  }
  for (auto& member : m) {
    ASSERT_TRUE(member->enter_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(member->enter_status.ok()) << member->id << ": " << member->enter_status;
  }
  for (auto& member : m) member->leave_go.Notify();
  for (auto& member : m) {
    ASSERT_TRUE(member->leave_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(member->leave_status.ok()) << member->id << ": " << member->leave_status;
  }
  RemoveDirectory(path);
}

// A member whose session expires while inside: the server removes its node,
// which for the others counts as having left. Observed: the others' Leave
// completes (they were blocked on the dead member, the lowest); the expired
// member, after its client hears of the expiry, gets OK from Leave too (on
// its new session it finds nobody left); "ready" is removed by whoever finds
// the barrier empty, and a straggler's Leave after the directory is gone
// (reaped as an empty container) is OK as well.
TEST_F(BarrierTest, DoubleBarrierMemberExpiredInsideDoesNotBlockTheOthers) {
  if (!HasServer()) GTEST_SKIP() << "needs the embedded server's four-letter words";
  constexpr int kMembers = 4;
  const std::string path = Path("expired");
  const std::string ready = path + "/ready";
  std::vector<std::unique_ptr<Member>> m;
  for (int i = 0; i < kMembers; ++i) {
    m.push_back(NewMember(path, i, kMembers));
    ASSERT_NE(m.back(), nullptr);
  }
  // Member 0 enters first: it is the lowest. It stays inside; the others
  // run Enter-then-Leave on their threads.
  Member& victim = *m[0];
  victim.thread = std::thread([&victim] {
    victim.enter_status = victim.barrier->Enter(absl::Seconds(30));
    victim.enter_returned.Notify();
  });
  ASSERT_EQ(WaitForNodes(path, [](const std::vector<std::string>& n) { return n.size() == 1; })
                .size(),
            1u);
  for (int i = 1; i < kMembers; ++i) Run(*m[i], absl::Seconds(30));
  ASSERT_TRUE(victim.enter_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
  victim.thread.join();
  ASSERT_TRUE(victim.enter_status.ok()) << victim.enter_status;
  for (int i = 1; i < kMembers; ++i) {
    ASSERT_TRUE(m[i]->enter_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
    ASSERT_TRUE(m[i]->enter_status.ok()) << m[i]->enter_status;
  }
  std::vector<std::string> nodes = MemberNodes(path);
  ASSERT_EQ(nodes.size(), static_cast<size_t>(kMembers));
  ASSERT_TRUE(absl::StartsWith(nodes[0], m[0]->id + "_"));

  // The others leave and block on the lowest, which stays inside.
  WatchListing expected;
  for (int i = 1; i < kMembers; ++i) {
    m[i]->leave_go.Notify();
    expected[path + "/" + nodes[0]].insert(Hex(m[i]->session->session_id()));
  }
  EXPECT_EQ(WaitForWatches([&](const std::string& p) { return p == path + "/" + nodes[0]; },
                           expected),
            expected);
  EXPECT_THAT(MemberNodes(path), ::testing::ElementsAre(nodes[0]));
  for (int i = 1; i < kMembers; ++i) EXPECT_FALSE(m[i]->leave_returned.HasBeenNotified());

  // The lowest's session expires: the others are released.
  const uint64_t generation = m[0]->session->generation();
  ASSERT_TRUE(testing::ExpireSession(*m[0]->session).ok());
  for (int i = 1; i < kMembers; ++i) {
    ASSERT_TRUE(m[i]->leave_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(m[i]->leave_status.ok()) << m[i]->id << ": " << m[i]->leave_status;
  }
  // Nobody is left, and the ready flag went with the last of them.
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_THAT(*children, IsEmpty());

  // The expired member hears of it on its next request, then leaves: OK,
  // also after the empty directory has been reaped.
  // (Asynchronous: a synchronous request handed to the expiring handle while
  // it is being closed can hang forever.)
  m[0]->session->ExistsAsync(path, [](absl::StatusOr<std::optional<Stat>>) {});
  for (int i = 0; i < 3000; ++i) {  // bounded: until its next session is up
    if (m[0]->session->generation() > generation &&
        m[0]->session->state() == SessionState::kConnected) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_GT(m[0]->session->generation(), generation);
  ASSERT_EQ(m[0]->session->state(), SessionState::kConnected);
  EXPECT_TRUE(m[0]->barrier->entered());
  RemoveDirectory(path);
  absl::Status left = m[0]->barrier->Leave(absl::Seconds(10));
  EXPECT_TRUE(left.ok()) << left;
  EXPECT_FALSE(m[0]->barrier->entered());
  EXPECT_FALSE(admin().Exists(path)->has_value());
}

TEST_F(BarrierTest, DoubleBarrierBadInputAndMisuse) {
  const std::string path = Path("misuse");
  for (int count : {0, -1}) {
    absl::Status status = DoubleBarrier::Create(admin(), path, "m", count).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << count << ": " << status;
  }
  // Ids follow the election's rule: control characters are refused; "/"
  // is fine (the id is node data; the node's name gets a safe copy).
  for (const char* id : {"a\nb", "\x1b[2J"}) {
    absl::Status status = DoubleBarrier::Create(admin(), path, id, 2).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << "\"" << id << "\": " << status;
  }
  for (const char* id : {"", "a/b", "/", ".."}) {
    absl::Status status = DoubleBarrier::Create(admin(), path, id, 2).status();
    EXPECT_TRUE(status.ok()) << "\"" << id << "\": " << status;
  }
  for (const char* bad : {"", "rel", "/", "/a/", "/a//b"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(DoubleBarrier::Create(admin(), bad, "m", 2).status()))
        << bad;
  }
  auto never = DoubleBarrier::Create(admin(), path, "never", 1);
  ASSERT_TRUE(never.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition((*never)->Leave()));

  // A barrier of one: Enter passes at once; twice is refused; so is a
  // second Leave.
  auto solo = DoubleBarrier::Create(admin(), path, "solo", 1);
  ASSERT_TRUE(solo.ok());
  ASSERT_TRUE((*solo)->Enter(absl::Seconds(10)).ok());
  EXPECT_TRUE((*solo)->entered());
  absl::Status twice = (*solo)->Enter(absl::Seconds(10));
  EXPECT_TRUE(absl::IsFailedPrecondition(twice)) << twice;
  EXPECT_THAT(twice.message(), HasSubstr(path));
  EXPECT_EQ(MemberNodes(path).size(), 1u);
  ASSERT_TRUE((*solo)->Leave(absl::Seconds(10)).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition((*solo)->Leave()));
  EXPECT_TRUE(absl::IsFailedPrecondition((*never)->Leave()));
  RemoveDirectory(path);  // empty: the last one out removed "ready" too
}

}  // namespace
}  // namespace zkr
