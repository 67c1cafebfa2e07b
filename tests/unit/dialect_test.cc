// Dialects (recipes/queue_node.h): Curator's and Kazoo's node names parsed,
// made and classified, and the queue decision in a mixed or foreign queue.
// The names below are what Curator 5.4 and Kazoo 2.8 create (checked on a
// real server by tests/interop).
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "recipes/queue_decision.h"
#include "recipes/queue_node.h"
#include "recipes/semaphore_decision.h"

namespace zkr {
namespace {

using internal::DecideQueue;
using internal::IsForeignNode;
using internal::NewParticipantId;
using internal::NodeMode;
using internal::NodePrefix;
using internal::NodeScheme;
using internal::ParseQueueNode;
using internal::QueueDecision;
using internal::QueueKind;
using internal::SchemeFor;

const NodeScheme kOurs;
const NodeScheme kCuratorMutex = SchemeFor(Dialect::kCurator, QueueKind::kExclusiveLock);
const NodeScheme kCuratorRw = SchemeFor(Dialect::kCurator, QueueKind::kSharedLock);
const NodeScheme kCuratorLatch = SchemeFor(Dialect::kCurator, QueueKind::kElection);
const NodeScheme kKazoo = SchemeFor(Dialect::kKazoo, QueueKind::kSharedLock);

constexpr char kUuid[] = "_c_1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b";
constexpr char kHex[] = "0123456789abcdef0123456789abcdef";

std::string Curator(absl::string_view marker, int seq) {
  return absl::StrCat(kUuid, marker, absl::StrFormat("%010d", seq));
}
std::string Kazoo(absl::string_view marker, int seq) {
  return absl::StrCat(kHex, marker, absl::StrFormat("%010d", seq));
}

TEST(DialectTest, NamesAreThoseEachLibraryMakes) {
  const std::string curator = NewParticipantId(Dialect::kCurator, "ignored");
  EXPECT_TRUE(std::regex_match(
      curator, std::regex("_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << curator;
  EXPECT_EQ(NodePrefix(curator, NodeMode::kWrite, 1, 0, kCuratorMutex), curator + "-lock-");
  EXPECT_EQ(NodePrefix(curator, NodeMode::kRead, 1, 0, kCuratorRw), curator + "-__READ__");
  EXPECT_EQ(NodePrefix(curator, NodeMode::kWrite, 1, 0, kCuratorRw), curator + "-__WRIT__");
  EXPECT_EQ(NodePrefix(curator, NodeMode::kWrite, 1, 0, kCuratorLatch), curator + "-latch-");
  const std::string kazoo = NewParticipantId(Dialect::kKazoo, "ignored");
  EXPECT_TRUE(std::regex_match(kazoo, std::regex("[0-9a-f]{32}"))) << kazoo;
  EXPECT_EQ(NodePrefix(kazoo, NodeMode::kWrite, 1, 0, kKazoo), kazoo + "__lock__");
  EXPECT_EQ(NodePrefix(kazoo, NodeMode::kRead, 1, 0, kKazoo), kazoo + "__rlock__");
  EXPECT_NE(NewParticipantId(Dialect::kKazoo, ""), NewParticipantId(Dialect::kKazoo, ""));
}

TEST(DialectTest, ParsesEachDialectsNodes) {
  auto mutex = ParseQueueNode(Curator("-lock-", 7), kCuratorMutex);
  ASSERT_TRUE(mutex.has_value());
  EXPECT_EQ(mutex->participant, kUuid);
  EXPECT_EQ(mutex->mode, NodeMode::kWrite);
  EXPECT_EQ(mutex->sequence, 7);
  auto read = ParseQueueNode(Curator("-__READ__", 8), kCuratorRw);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->mode, NodeMode::kRead);
  EXPECT_EQ(read->participant, kUuid);
  auto write = ParseQueueNode(Curator("-__WRIT__", 9), kCuratorRw);
  ASSERT_TRUE(write.has_value());
  EXPECT_EQ(write->mode, NodeMode::kWrite);
  auto latch = ParseQueueNode(Curator("-latch-", 10), kCuratorLatch);
  ASSERT_TRUE(latch.has_value());
  EXPECT_EQ(latch->sequence, 10);
  auto lock = ParseQueueNode(Kazoo("__lock__", 11), kKazoo);
  ASSERT_TRUE(lock.has_value());
  EXPECT_EQ(lock->participant, kHex);
  EXPECT_EQ(lock->mode, NodeMode::kWrite);
  auto rlock = ParseQueueNode(Kazoo("__rlock__", 12), kKazoo);
  ASSERT_TRUE(rlock.has_value());
  EXPECT_EQ(rlock->mode, NodeMode::kRead);
  EXPECT_EQ(rlock->sequence, 12);
}

TEST(DialectTest, EveryOtherNameIsForeignToADialect) {
  const std::string ours = "host_12_0123456789abcdef-W-0000000001";
  for (const NodeScheme& scheme : {kCuratorMutex, kCuratorRw, kCuratorLatch, kKazoo}) {
    EXPECT_TRUE(IsForeignNode(ours, scheme)) << DialectName(scheme.dialect);
    EXPECT_TRUE(IsForeignNode("anything", scheme));
    EXPECT_TRUE(IsForeignNode(ours + ".revoke", scheme));
  }
  // Curator's recipes do not read each other's names, nor Kazoo's.
  EXPECT_TRUE(IsForeignNode(Curator("-lock-", 1), kCuratorRw));
  EXPECT_TRUE(IsForeignNode(Curator("-__WRIT__", 1), kCuratorMutex));
  EXPECT_TRUE(IsForeignNode(Curator("-latch-", 1), kCuratorMutex));
  EXPECT_TRUE(IsForeignNode(Kazoo("__lock__", 1), kCuratorMutex));
  EXPECT_TRUE(IsForeignNode(Curator("-lock-", 1), kKazoo));
  // Kazoo wants exactly ten digits (after an optional '-').
  EXPECT_TRUE(IsForeignNode(absl::StrCat(kHex, "__lock__123"), kKazoo));
  EXPECT_FALSE(IsForeignNode(absl::StrCat(kHex, "__lock__-0000000001"), kKazoo));
  EXPECT_FALSE(IsForeignNode(Curator("-__READ__", 3), kCuratorRw));
}

TEST(DialectTest, OurQueueRefusesAnotherLibrarysNodesButIgnoresUnknownNames) {
  EXPECT_TRUE(IsForeignNode(Curator("-lock-", 1), kOurs));
  EXPECT_TRUE(IsForeignNode(Curator("-latch-", 1), kOurs));
  EXPECT_TRUE(IsForeignNode(Kazoo("__lock__", 1), kOurs));
  EXPECT_TRUE(IsForeignNode(Kazoo("__rlock__", 1), kOurs));
  EXPECT_FALSE(IsForeignNode("host_12_0123456789abcdef-W-0000000001", kOurs));
  EXPECT_FALSE(IsForeignNode("host_12_0123456789abcdef-W-0000000001.revoke", kOurs));
  EXPECT_FALSE(IsForeignNode("README", kOurs));
  EXPECT_FALSE(IsForeignNode("_c_not-a-uuid-lock-0000000001", kOurs));
}

TEST(DialectTest, DecidesAMixedCuratorQueueAsItsOwnReadersAndWriters) {
  // Curator readers wait on the first writer before them, ours on the last:
  // both hold exactly when no writer precedes them.
  const std::string w1 = Curator("-__WRIT__", 1);
  const std::string r2 = absl::StrCat("_c_aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", "-__READ__",
                                      "0000000002");
  const std::string w3 = Curator("-__WRIT__", 3);
  const std::string r4 = absl::StrCat("_c_00000000-1111-4222-8333-444444444444", "-__READ__",
                                      "0000000004");
  const std::vector<std::string> children = {r4, w3, r2, w1};
  QueueDecision first = DecideQueue(children, w1, false, kCuratorRw);
  EXPECT_EQ(first.kind, QueueDecision::Kind::kAcquired);
  QueueDecision reader = DecideQueue(children, r2, false, kCuratorRw);
  EXPECT_EQ(reader.kind, QueueDecision::Kind::kWait);
  EXPECT_EQ(reader.watch, w1);
  QueueDecision writer = DecideQueue(children, w3, false, kCuratorRw);
  EXPECT_EQ(writer.watch, r2);
  QueueDecision last = DecideQueue(children, r4, false, kCuratorRw);
  EXPECT_EQ(last.watch, w3);  // the last writer before it
  QueueDecision alone = DecideQueue({r2, r4}, r4, false, kCuratorRw);
  EXPECT_EQ(alone.kind, QueueDecision::Kind::kAcquired);
}

TEST(DialectTest, AForeignChildAnywhereIsNeverGuessedAt) {
  const std::string mine = Kazoo("__lock__", 5);
  for (const std::string& foreign :
       {Curator("-lock-", 1), std::string("host_1_0123456789abcdef-W-0000000009"),
        std::string("unknown")}) {
    QueueDecision decision = DecideQueue({foreign, mine}, mine, false, kKazoo);
    EXPECT_EQ(decision.kind, QueueDecision::Kind::kForeign) << foreign;
    EXPECT_EQ(decision.watch, foreign);
  }
  const std::string ours = "host_1_0123456789abcdef-W-0000000009";
  QueueDecision decision = DecideQueue({Kazoo("__lock__", 20), ours}, ours, false, kOurs);
  EXPECT_EQ(decision.kind, QueueDecision::Kind::kForeign);
  EXPECT_TRUE(internal::HasOtherKind({Kazoo("__lock__", 20)}, NodeMode::kWrite, kOurs));
  EXPECT_TRUE(internal::HasOtherKind({"unknown"}, NodeMode::kWrite, kKazoo));
  EXPECT_FALSE(internal::HasOtherKind({"unknown"}, NodeMode::kWrite, kOurs));
}

TEST(DialectTest, OurSemaphoreRefusesAnotherLibrarysNodeToo) {
  const std::string mine = "host_1_0123456789abcdef-S1of2-0000000009";
  internal::SemaphoreDecision decision =
      internal::DecideSemaphore({Curator("-lock-", 20), mine}, mine);
  EXPECT_EQ(decision.kind, internal::SemaphoreDecision::Kind::kForeign);
  EXPECT_EQ(decision.mismatch, Curator("-lock-", 20));
  EXPECT_TRUE(internal::HasOtherKind({Kazoo("__lock__", 1)}, NodeMode::kLease, kOurs));
  EXPECT_EQ(internal::DecideSemaphore({"README", mine}, mine).kind,
            internal::SemaphoreDecision::Kind::kAcquired);
}

}  // namespace
}  // namespace zkr
