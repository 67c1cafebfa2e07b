// Barrier defects reproduced against a real server (issue "hardening the
// library"): each test failed before its fix. Lost replies around a double
// barrier member's create and the `ready` flag, and watches left behind.
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"
#include "src/zk_client.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"

namespace zkr {

using internal::ParseQueue;
namespace {

using ::testing::IsEmpty;
using testing::ClientFaults;
using testing::FaultRule;
using testing::WatchedPaths;
using testing::ZkTest;

class BarrierHardeningTest : public ZkTest {
 protected:
  std::unique_ptr<DoubleBarrier> NewMember(Session& session, const std::string& path,
                                           const std::string& id, int count) {
    auto barrier = DoubleBarrier::Create(session, path, id, count);
    EXPECT_TRUE(barrier.ok()) << barrier.status();
    return barrier.ok() ? std::move(*barrier) : nullptr;
  }
  // Member nodes under `path` (the `ready` flag excluded), waiting up to
  // `timeout` for there to be `want` of them.
  size_t MembersEventually(const std::string& path, size_t want, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    size_t members = 0;
    do {
      auto children = admin().GetChildren(path);
      members = children.ok() ? ParseQueue(*children, 0).size() : 0;
      if (members == want) break;
      absl::SleepFor(absl::Milliseconds(20));  // polling the server, not deciding
    } while (absl::Now() < deadline);
    return members;
  }
};

// Item 2: the member's create is applied but its reply lost, and the lookup
// by unique id cannot be read: Enter must fail (never a phantom member, never
// a second node) and its node is removed once it can be found.
TEST_F(BarrierHardeningTest, ALostCreateReplyWithAFailedLookupFailsEnterAndRemovesTheNode) {
  const std::string path = Path("lost-lookup");
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  auto member = NewMember(*session, path, "a", 2);
  faults->Add({FaultRule::Call::kCreate, FaultRule::Effect::kDropReply, path + "/", 1});
  faults->Add({FaultRule::Call::kGetChildren, FaultRule::Effect::kDropReply, path, 20});
  absl::Status entered = member->Enter(absl::Seconds(3));
  EXPECT_FALSE(entered.ok()) << "a count=2 barrier let its only member through";
  EXPECT_FALSE(member->entered());
  faults->Clear();
  EXPECT_EQ(MembersEventually(path, 0, absl::Seconds(20)), 0u)
      << "the member's node was left behind (or created twice)";
  member.reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Item 3: the last member's `ready` create loses its reply: the flag exists,
// so every member passes — the last one too.
TEST_F(BarrierHardeningTest, TheLastMembersLostReadyReplyStillLetsEveryonePass) {
  const std::string path = Path("lost-ready");
  auto first_session = NewSession();
  auto faults = std::make_shared<ClientFaults>();
  auto second_session = NewFaultySession(faults);
  auto first = NewMember(*first_session, path, "first", 2);
  auto second = NewMember(*second_session, path, "second", 2);
  absl::Status first_status;
  absl::Notification first_in;
  std::thread first_thread([&] {
    first_status = first->Enter(absl::Seconds(30));
    first_in.Notify();
  });
  ASSERT_EQ(MembersEventually(path, 1, absl::Seconds(20)), 1u);
  faults->Add({FaultRule::Call::kCreate, FaultRule::Effect::kDropReply, path + "/ready", 1});
  absl::Status second_status = second->Enter(absl::Seconds(30));
  ASSERT_TRUE(first_in.WaitForNotificationWithTimeout(absl::Seconds(30)));
  first_thread.join();
  EXPECT_TRUE(first_status.ok()) << first_status;
  EXPECT_TRUE(second_status.ok()) << second_status;
  if (first->entered() && second->entered()) {
    std::thread leave([&] { EXPECT_TRUE(first->Leave(absl::Seconds(30)).ok()); });
    EXPECT_TRUE(second->Leave(absl::Seconds(30)).ok());
    leave.join();
  }
  first.reset();
  second.reset();
  (void)admin().Delete(path + "/ready");
  (void)admin().Delete(path);
}

// Issue 17, item 4: a member's node is removed with the locks' guarantee —
// its delete retried until the node is gone — not a few best-effort tries.
// Here a member's Leave fails (its deletes are lost, many times over): the
// node must still be gone when Leave returns, its session alive.
TEST_F(BarrierHardeningTest, AFailedLeaveRemovesTheNodeThroughManyLostDeletes) {
  const std::string path = Path("lost-deletes");
  auto faults = std::make_shared<ClientFaults>();
  auto a_session = NewFaultySession(faults);
  auto b_session = NewSession();
  auto a = NewMember(*a_session, path, "a", 2);
  auto b = NewMember(*b_session, path, "b", 2);
  std::thread enter_a([&] { EXPECT_TRUE(a->Enter(absl::Seconds(30)).ok()); });
  ASSERT_TRUE(b->Enter(absl::Seconds(30)).ok());
  enter_a.join();
  ASSERT_TRUE(a->entered());
  const int64_t a_session_id = a_session->session_id();
  faults->Add({FaultRule::Call::kDelete, FaultRule::Effect::kLoseRequest, path + "/", 20});
  EXPECT_FALSE(a->Leave(absl::Milliseconds(300)).ok()) << "b has not left: a cannot pass";
  EXPECT_EQ(MembersEventually(path, 1, absl::Seconds(1)), 1u)
      << "a's node stayed after its Leave failed";
  EXPECT_EQ(a_session->session_id(), a_session_id) << "removed by a new session, not a retry";
  faults->Clear();
  EXPECT_TRUE(b->Leave(absl::Seconds(30)).ok());
  a.reset();
  b.reset();
  (void)admin().Delete(path + "/ready");
  (void)admin().Delete(path);
}

// Item 12: Barrier::Wait on an absent barrier, a double barrier's Enter and
// Leave, leave no watch on the server.
TEST_F(BarrierHardeningTest, BarrierRecipesLeaveNoWatchesBehind) {
  const std::string flag = Path("flag");
  auto session = NewSession();
  auto barrier = Barrier::Create(*session, flag);
  ASSERT_TRUE(barrier.ok());
  ASSERT_TRUE((*barrier)->Wait(absl::Seconds(5)).ok());  // absent: passes at once
  EXPECT_THAT(WatchedPaths(*session, root()), IsEmpty()) << "after Wait on an absent barrier";
  ASSERT_TRUE((*barrier)->Set().ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded((*barrier)->Wait(absl::Milliseconds(100))));
  EXPECT_THAT(WatchedPaths(*session, root()), IsEmpty()) << "after a Wait that timed out";
  ASSERT_TRUE((*barrier)->Remove().ok());

  const std::string path = Path("double");
  auto other_session = NewSession();
  auto a = NewMember(*session, path, "a", 2);
  auto b = NewMember(*other_session, path, "b", 2);
  std::thread enter_a([&] { EXPECT_TRUE(a->Enter(absl::Seconds(30)).ok()); });
  EXPECT_TRUE(b->Enter(absl::Seconds(30)).ok());
  enter_a.join();
  std::thread leave_a([&] { EXPECT_TRUE(a->Leave(absl::Seconds(30)).ok()); });
  EXPECT_TRUE(b->Leave(absl::Seconds(30)).ok());
  leave_a.join();
  EXPECT_THAT(WatchedPaths(*session, root()), IsEmpty()) << "after a double barrier";
  EXPECT_THAT(WatchedPaths(*other_session, root()), IsEmpty()) << "after a double barrier";
  (void)admin().Delete(path);
}

}  // namespace
}  // namespace zkr
