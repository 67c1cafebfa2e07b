// The lock queue's engine (recipes/queue_entry.h) driven directly, one fault
// at a time, through the fault-injecting client over a real server: the Nth
// listing lost with its connection is asked again, also the one sent right
// behind the create (pipelined), also with the create's; an attempt abandoned
// while its create's outcome is unknown leaves no node behind. (A lost create
// reply alone: protected_create_test.cc.)
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_entry.h"
#include "src/session_access.h"
#include "src/testing/faulty_client.h"
#include "tests/support/queue_engine_fixture.h"
#include "tests/support/zk_test.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using internal::QueueEntry;
using testing::ClientFaults;
using testing::FaultRule;
using testing::ZkTest;

using testing::QueueEngineTest;

TEST_F(QueueEngineTest, TheNthListingLostWithItsConnectionIsAskedAgain) {
  const std::string dir = Path("nth-listing");
  ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  // A try-acquire lists twice: PEEK, then LIST after its create. The second
  // listing is lost with its connection (the first passes: skip 1).
  FaultRule lost_list{FaultRule::Call::kGetChildren, FaultRule::Effect::kLoseRequest, dir, 1};
  lost_list.skip = 1;
  faults->Add(lost_list);
  QueueEntry::Settings config;
  config.dir = dir;
  config.watch_own_node = false;
  QueueEntry::Attempt attempt;
  attempt.try_only = true;
  auto entry = QueueEntry::Make(internal::CoreOf(*session),
                                std::make_shared<const QueueEntry::Settings>(config), attempt);
  ASSERT_TRUE(StartAndWait(*entry).ok()) << entry->DebugString();
  EXPECT_THAT(entry->DebugString(), HasSubstr("step=HELD"));
  EXPECT_TRUE(faults->UsedUp()) << "the second listing was not lost";
  ExpectOneNodeThenRelease(*entry, dir);
}

// The listing is sent right behind the create (pipelined). Lost with its
// connection after the create went through, it is asked again: HELD, one node.
TEST_F(QueueEngineTest, TheListingBehindTheCreateLostWithItsConnectionIsAskedAgain) {
  const std::string dir = Path("behind-create");
  ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  faults->Add({FaultRule::Call::kGetChildren, FaultRule::Effect::kDropReply, dir, 1});
  auto entry = NewEntry(*session, dir);
  ASSERT_TRUE(StartAndWait(*entry).ok()) << entry->DebugString();
  EXPECT_THAT(entry->DebugString(), HasSubstr("step=HELD"));
  EXPECT_TRUE(faults->UsedUp()) << "the listing's reply was not dropped";
  ExpectOneNodeThenRelease(*entry, dir);
}

// Both replies of the pair lost: the create's outcome is looked up by id
// (the pipelined listing's reply is stale and dropped), never created twice.
TEST_F(QueueEngineTest, BothRepliesOfThePairLostAreRecoveredIntoOneHeldNode) {
  const std::string dir = Path("pair-lost");
  ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  faults->Add({FaultRule::Call::kCreate, FaultRule::Effect::kDropReply, dir + "/", 1});
  faults->Add({FaultRule::Call::kGetChildren, FaultRule::Effect::kDropReply, dir, 1});
  auto entry = NewEntry(*session, dir);
  ASSERT_TRUE(StartAndWait(*entry).ok()) << entry->DebugString();
  EXPECT_THAT(entry->DebugString(), HasSubstr("step=HELD"));
  EXPECT_TRUE(faults->UsedUp()) << "a reply of the pair was not dropped";
  EXPECT_GT(entry->fencing_token(), 0);
  ExpectOneNodeThenRelease(*entry, dir);
}

TEST_F(QueueEngineTest, AnAttemptAbandonedWhileItsCreateIsUnknownLeavesNoNode) {
  const std::string dir = Path("abandon-unknown");
  ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  // The create is applied but its reply lost, and every lookup's reply too:
  // the engine loops in RECOVER, its node unknown to it.
  faults->Add({FaultRule::Call::kCreate, FaultRule::Effect::kDropReply, dir + "/", 1});
  faults->Add({FaultRule::Call::kGetChildren, FaultRule::Effect::kDropReply, dir, 1000000});
  auto entry = NewEntry(*session, dir);
  auto finished = std::make_shared<absl::Notification>();
  entry->Start([finished](absl::Status) { finished->Notify(); });
  // Wait (bounded) until the create's lost reply has sent it to RECOVER.
  for (int i = 0; i < 2000 && !absl::StrContains(entry->DebugString(), "step=RECOVER"); ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_THAT(entry->DebugString(), HasSubstr("step=RECOVER"));
  auto created = admin().GetChildren(dir);
  ASSERT_TRUE(created.ok());
  EXPECT_THAT(*created, SizeIs(1)) << "the create was applied";
  EXPECT_TRUE(entry->Abandon(absl::CancelledError("given up")));
  EXPECT_TRUE(finished->WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_THAT(entry->DebugString(), HasSubstr("step=CLEANING"));
  faults->Clear();  // now cleaning can list the directory and find the node
  absl::Notification cleaned;
  entry->WhenCleaned([&] { cleaned.Notify(); });
  ASSERT_TRUE(cleaned.WaitForNotificationWithTimeout(absl::Seconds(20)));
  auto children = admin().GetChildren(dir);
  ASSERT_TRUE(children.ok());
  EXPECT_THAT(*children, IsEmpty()) << "the abandoned attempt's node stayed";
  ASSERT_TRUE(admin().Delete(dir).ok());
}

}  // namespace
}  // namespace zkr
