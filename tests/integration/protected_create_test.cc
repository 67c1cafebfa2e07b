// Protected create, for every recipe that creates a node of its own: when
// the server applies the create but its reply is lost (the client is told
// the connection was lost), the participant finds its node again by its
// unique id and never makes a second one; when the attempt then ends without
// the node (a timeout, a failed lookup, a revocation request answered), the
// node is deleted. Lock, queue engine, double barrier member, revocation
// request; the fault is injected at the client seam (testing::ClientFaults)
// over a real server. The bodies differ in what each recipe must do after
// the recovery, so each is a case of its own; they share the fault and the
// fixtures (tests/support/lock_fixture.h, queue_engine_fixture.h,
// barrier_fixture.h). Built into lock_test (one server start).
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_entry.h"
#include "recipes/queue_node.h"
#include "src/testing/faulty_client.h"
#include "tests/support/barrier_fixture.h"
#include "tests/support/lock_fixture.h"
#include "tests/support/queue_engine_fixture.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/revocation.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using internal::ParseQueue;
using testing::ClientFaults;
using testing::FaultRule;
using testing::Member;

class ProtectedCreateTest
    : public testing::QueueEngineHelpers<testing::LockHelpers<testing::BarrierTest>> {
 protected:
  // The server applies the next create of a child of `dir`; its reply is
  // dropped.
  static FaultRule LostCreateReply(const std::string& dir) {
    return {FaultRule::Call::kCreate, FaultRule::Effect::kDropReply, dir + "/", 1};
  }
};

// A lock's create is applied but its reply lost: the attempt finds its node
// by its unique id and holds it (one create reached the server, the token is
// read back from that node); while queued, a timeout deletes it.
TEST_F(ProtectedCreateTest, ALocksLostCreateReplyIsRecoveredByIdWithoutASecondNode) {
  const std::string path = Path("protected");
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  auto lock = NewSharedLock(*session, path);
  const FaultRule lost_create_reply = LostCreateReply(path);
  // The server creates the node, the client is told the connection was lost.
  faults->Add(lost_create_reply);
  auto guard = lock->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(guard.ok()) << guard.status();
  EXPECT_THAT(Children(path), SizeIs(1));
  EXPECT_EQ(ChildVersion(path), 1) << "more than one create reached the server";
  EXPECT_GT(guard->fencing_token(), 0);  // read back from the recovered node
  ASSERT_TRUE(guard->Release().ok());

  // Same while queued behind a holder, then timing out: the recovered node
  // is deleted, nothing is left to block the queue.
  auto other = NewSession();
  auto holder = NewSharedLock(*other, path);
  auto held = holder->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  faults->Add(lost_create_reply);
  EXPECT_TRUE(absl::IsDeadlineExceeded(lock->AcquireWrite(absl::Milliseconds(300)).status()));
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok());
  EXPECT_THAT(*children, SizeIs(1));
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// The queue engine alone: CREATE -> RECOVER -> READ_TOKEN -> LIST -> HELD.
TEST_F(ProtectedCreateTest, TheEnginesLostCreateReplyIsRecoveredByIdIntoOneHeldNode) {
  const std::string dir = Path("recover");
  ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  faults->Add(LostCreateReply(dir));
  auto entry = NewEntry(*session, dir);
  ASSERT_TRUE(StartAndWait(*entry).ok()) << entry->DebugString();
  EXPECT_THAT(entry->DebugString(), HasSubstr("step=HELD"));
  EXPECT_TRUE(faults->UsedUp()) << "the create's reply was not dropped";
  EXPECT_GT(entry->fencing_token(), 0) << "READ_TOKEN read the recovered node's czxid";
  ExpectOneNodeThenRelease(*entry, dir);
}

// The server applies a member's create but the client is told the
// connection was lost: Enter finds its node again by its random name instead
// of failing with a phantom member left behind that would count toward
// `count` and let the others through early.
TEST_F(ProtectedCreateTest, ADoubleBarrierMembersLostCreateReplyIsRecoveredWithoutAPhantomMember) {
  const std::string path = Path("protected");
  auto faults = std::make_shared<ClientFaults>();
  auto first = NewMember(path, 0, 2, faults);
  auto second = NewMember(path, 1, 2);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  // The directory exists, so the dropped reply is that of the member's node.
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  faults->Add(LostCreateReply(path));
  Run(*first, absl::Seconds(30));
  // The first member's node is there and it is still waiting: nobody passed.
  ASSERT_EQ(WaitForNodes(path, [](const std::vector<std::string>& n) { return n.size() == 1; })
                .size(),
            1u);
  EXPECT_FALSE(first->enter_returned.WaitForNotificationWithTimeout(absl::Milliseconds(200)))
      << first->enter_status;
  Run(*second, absl::Seconds(30));
  for (Member* member : {first.get(), second.get()}) {
    ASSERT_TRUE(member->enter_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(member->enter_status.ok()) << member->id << ": " << member->enter_status;
  }
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok());
  EXPECT_EQ(ParseQueue(*children, 0).size(), 2u) << "one node per member";
  for (Member* member : {first.get(), second.get()}) member->leave_go.Notify();
  for (Member* member : {first.get(), second.get()}) {
    ASSERT_TRUE(member->leave_returned.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(member->leave_status.ok()) << member->id << ": " << member->leave_status;
  }
  RemoveDirectory(path);
}

// Item 2: the member's create is applied but its reply lost, and the lookup
// by unique id cannot be read: Enter must fail (never a phantom member, never
// a second node) and its node is removed once it can be found.
TEST_F(ProtectedCreateTest, ADoubleBarrierMembersLostCreateReplyWithAFailedLookupFailsEnterAndRemovesTheNode) {
  const std::string path = Path("lost-lookup");
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  auto member = NewMember(*session, path, "a", 2);
  faults->Add(LostCreateReply(path));
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

// The request's create is applied but its reply is lost: Revoke finds its
// request by its session (a protected create) and deletes it before it
// returns, as for any request.
TEST_F(ProtectedCreateTest, ARevocationRequestWhoseCreateReplyWasLostIsDeleted) {
  const std::string path = Path("lost-request");
  auto holder_session = NewSession();
  absl::Notification asked;
  LockOptions options;
  options.on_revoke_request = [&](const RevokeRequest&) {
    if (!asked.HasBeenNotified()) asked.Notify();
  };
  auto lock = ExclusiveLock::Create(*holder_session, path, options);
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto faults = std::make_shared<ClientFaults>();
  auto requester = NewFaultySession(faults);
  faults->Add(LostCreateReply(path));
  std::thread holder([&] {
    ASSERT_TRUE(asked.WaitForNotificationWithTimeout(absl::Seconds(20)));
    EXPECT_TRUE(held->Release().ok());
  });
  RevokeOptions ask;
  ask.grace = absl::Seconds(20);
  absl::StatusOr<std::vector<RevokeOutcome>> outcomes = Revoke(*requester, path, ask);
  holder.join();
  EXPECT_TRUE(faults->UsedUp()) << "the create's reply was not lost";
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 1u);
  EXPECT_EQ((*outcomes)[0].how, RevokeOutcome::How::kReleased);
  EXPECT_THAT(*admin().GetChildren(path), ::testing::IsEmpty()) << "the request was left";
  ASSERT_TRUE(admin().Delete(path).ok());
}

}  // namespace
}  // namespace zkr
