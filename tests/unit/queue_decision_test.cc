// DecideQueue and CouldAcquireNow by table: writers, readers, markers in
// participant names, semaphore and foreign children, LOST, serial order
// across the 32-bit wrap, any server order, and the count of blockers.
// (Random and garbage queues: queue_decision_random_test.cc.)
#include "recipes/queue_decision.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"
#include "tests/support/queue_decision_names.h"

namespace zkr {

using internal::NodeMode;
using internal::DecideQueue;
using internal::QueueDecision;
using internal::CouldAcquireNow;
using internal::HasOtherKind;
namespace {

using Kind = QueueDecision::Kind;
using testing::Describe;
using testing::DescribeChildren;
using testing::KindName;
using testing::R;
using testing::W;

// ---- DecideQueue: table ---------------------------------------------------------

struct DecideCase {
  const char* what;
  std::vector<std::string> children;
  std::string me;
  Kind kind;
  std::string watch;  // for kWait
};

void RunDecideCases(const std::vector<DecideCase>& cases) {
  for (const DecideCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.what, ": me=", c.me, " children=", DescribeChildren(c.children)));
    const QueueDecision decision = DecideQueue(c.children, c.me);
    EXPECT_EQ(KindName(decision.kind), std::string(KindName(c.kind)));
    if (c.kind == Kind::kWait) {
      EXPECT_EQ(decision.watch, c.watch);
    } else {
      EXPECT_EQ(decision.watch, "") << "a non-wait decision names no node";
    }
    // Server order is arbitrary: every rotation and the reverse decide alike.
    std::vector<std::string> permuted = c.children;
    for (size_t i = 0; i < permuted.size(); ++i) {
      std::rotate(permuted.begin(), permuted.begin() + 1, permuted.end());
      EXPECT_EQ(Describe(DecideQueue(permuted, c.me)), Describe(decision))
          << "rotated: " << DescribeChildren(permuted);
    }
    std::reverse(permuted.begin(), permuted.end());
    EXPECT_EQ(Describe(DecideQueue(permuted, c.me)), Describe(decision))
        << "reversed: " << DescribeChildren(permuted);
  }
}

TEST(DecideQueueTest, Writers) {
  RunDecideCases({
      {"alone", {W("me", 1)}, W("me", 1), Kind::kAcquired, ""},
      {"first of many", {W("me", 1), W("b", 2), R("c", 3), R("d", 4)}, W("me", 1), Kind::kAcquired,
       ""},
      {"behind a writer", {W("a", 1), W("me", 2)}, W("me", 2), Kind::kWait, W("a", 1)},
      {"behind a reader: watches the reader",
       {R("a", 1), W("me", 2)},
       W("me", 2),
       Kind::kWait,
       R("a", 1)},
      {"behind W R R: direct predecessor",
       {W("a", 1), R("b", 2), R("c", 3), W("me", 4)},
       W("me", 4),
       Kind::kWait,
       R("c", 3)},
      {"behind R R W: direct predecessor",
       {R("a", 1), R("b", 2), W("c", 3), W("me", 4)},
       W("me", 4),
       Kind::kWait,
       W("c", 3)},
      {"gaps in the sequence",
       {W("a", 1), R("b", 5), W("me", 9), W("z", 12)},
       W("me", 9),
       Kind::kWait,
       R("b", 5)},
      {"nodes after me never matter",
       {W("me", 10), W("a", 11), R("b", 12), W("c", 13)},
       W("me", 10),
       Kind::kAcquired,
       ""},
      {"middle: predecessor, not the nodes after",
       {R("a", 1), W("b", 2), W("me", 3), W("c", 4), R("d", 5)},
       W("me", 3),
       Kind::kWait,
       W("b", 2)},
  });
}

TEST(DecideQueueTest, Readers) {
  RunDecideCases({
      {"alone", {R("me", 1)}, R("me", 1), Kind::kAcquired, ""},
      {"behind readers only", {R("a", 1), R("b", 2), R("me", 3)}, R("me", 3), Kind::kAcquired, ""},
      {"behind one writer", {W("a", 1), R("me", 2)}, R("me", 2), Kind::kWait, W("a", 1)},
      {"behind W then readers: the writer, not a reader",
       {W("a", 1), R("b", 2), R("c", 3), R("me", 4)},
       R("me", 4),
       Kind::kWait,
       W("a", 1)},
      {"behind W W: the last writer, not the first",
       {W("a", 1), W("b", 2), R("me", 3)},
       R("me", 3),
       Kind::kWait,
       W("b", 2)},
      {"behind W R W R R: the last writer",
       {W("a", 1), R("b", 2), W("c", 3), R("d", 4), R("e", 5), R("me", 6)},
       R("me", 6),
       Kind::kWait,
       W("c", 3)},
      {"behind R W R: the writer",
       {R("a", 1), W("b", 2), R("c", 3), R("me", 4)},
       R("me", 4),
       Kind::kWait,
       W("b", 2)},
      {"writers after me never matter",
       {R("a", 1), R("me", 2), W("b", 3), R("c", 4), W("d", 5)},
       R("me", 2),
       Kind::kAcquired,
       ""},
      {"writer before and after me",
       {W("a", 1), R("me", 2), W("b", 3)},
       R("me", 2),
       Kind::kWait,
       W("a", 1)},
      {"gaps", {W("a", 3), R("b", 40), W("c", 41), R("me", 900)}, R("me", 900), Kind::kWait,
       W("c", 41)},
  });
}

TEST(DecideQueueTest, ParticipantsContainingMarkers) {
  RunDecideCases({
      // "h-W-1-R-..." is a reader whose participant is "h-W-1".
      {"reader named like a writer",
       {"h-W-1-R-0000000001", R("me", 2)},
       R("me", 2),
       Kind::kAcquired,
       ""},
      {"writer named like a reader",
       {"h-R-1-W-0000000001", R("me", 2)},
       R("me", 2),
       Kind::kWait,
       "h-R-1-W-0000000001"},
      {"dashes everywhere",
       {"zk-1_7_0123456789abcdef-W-0000000001", "x-R-y-R-0000000002",
        "a-b-W-c-R--000000003", "me-W-x-R-0000000003"},
       "me-W-x-R-0000000003",
       Kind::kWait,
       "zk-1_7_0123456789abcdef-W-0000000001"},
  });
}

// A lock and a semaphore cannot share a path: a semaphore node that is the
// earliest refuses me (unless I waited already); one before me that is not
// the earliest blocks me, a reader too; one after me is ignored.
TEST(DecideQueueTest, SemaphoreNodesRefuseOrBlock) {
  const std::string s = "sem_1_00ff-S1of1-0000000002";
  QueueDecision refused = DecideQueue({s, W("a", 3)}, W("a", 3));
  EXPECT_EQ(refused.kind, Kind::kOtherKind);
  EXPECT_EQ(refused.watch, s);
  EXPECT_EQ(DecideQueue({s, R("a", 3)}, R("a", 3)).kind, Kind::kOtherKind);
  QueueDecision accepted = DecideQueue({s, W("a", 3)}, W("a", 3), /*accepted=*/true);
  EXPECT_EQ(accepted.kind, Kind::kWait);
  EXPECT_EQ(accepted.watch, s);
  QueueDecision reader = DecideQueue({R("h", 1), s, R("a", 3)}, R("a", 3));
  EXPECT_EQ(reader.kind, Kind::kWait);
  EXPECT_EQ(reader.watch, s);
  EXPECT_EQ(reader.blockers, 1);
  EXPECT_EQ(DecideQueue({W("h", 1), s, W("a", 3)}, W("a", 3)).blockers, 2);
  EXPECT_EQ(DecideQueue({R("a", 1), s}, R("a", 1)).kind, Kind::kAcquired);
  EXPECT_TRUE(HasOtherKind({R("a", 1), s}, NodeMode::kRead));
  EXPECT_FALSE(HasOtherKind({R("a", 1), W("b", 2)}, NodeMode::kWrite));
  EXPECT_TRUE(HasOtherKind({R("a", 1)}, NodeMode::kLease));
}

TEST(DecideQueueTest, ForeignChildrenIgnored) {
  const std::vector<std::string> foreign = {
      "lock",          "",
      "host-w-0000000000", "host-r-0000000000",
      "-W-0000000000",     "x-W-abc",
      "x-W-+0000000000",   "x-W-2147483648",
      "x-W-0000000000x",   "x-X-0000000000",
      "0000000000",        "x-W-",
  };
  auto with_foreign = [&foreign](std::vector<std::string> children) {
    children.insert(children.begin() + children.size() / 2, foreign.begin(), foreign.end());
    return children;
  };
  RunDecideCases({
      {"writer behind only foreign", with_foreign({W("me", 1)}), W("me", 1), Kind::kAcquired, ""},
      {"reader behind only foreign", with_foreign({R("me", 1)}), R("me", 1), Kind::kAcquired, ""},
      {"writer: predecessor skips foreign",
       with_foreign({R("a", 1), W("me", 5)}),
       W("me", 5),
       Kind::kWait,
       R("a", 1)},
      {"reader: last writer skips foreign",
       with_foreign({W("a", 1), R("b", 2), R("me", 5)}),
       R("me", 5),
       Kind::kWait,
       W("a", 1)},
  });
}

TEST(DecideQueueTest, Lost) {
  RunDecideCases({
      {"no children", {}, W("me", 1), Kind::kLost, ""},
      {"my node absent", {W("a", 1), R("b", 2)}, W("me", 3), Kind::kLost, ""},
      {"my node absent, reader", {R("a", 1)}, R("me", 0), Kind::kLost, ""},
      {"same sequence, other mode", {W("me", 3)}, R("me", 3), Kind::kLost, ""},
      {"same sequence, other participant", {W("mf", 3)}, W("me", 3), Kind::kLost, ""},
      {"my name differs by padding", {"me-W-3"}, W("me", 3), Kind::kLost, ""},
      {"my name unparseable but present", {"lock", W("a", 1)}, "lock", Kind::kLost, ""},
      {"my name empty", {"", W("a", 1)}, "", Kind::kLost, ""},
      {"my name empty participant", {"-W-0000000002", W("a", 1)}, "-W-0000000002", Kind::kLost,
       ""},
      {"my name lowercase marker", {"me-w-0000000002"}, "me-w-0000000002", Kind::kLost, ""},
      {"my name out of range", {"me-W-2147483648"}, "me-W-2147483648", Kind::kLost, ""},
      {"my name with trailing garbage", {"me-W-0000000002x"}, "me-W-0000000002x", Kind::kLost, ""},
  });
}

TEST(DecideQueueTest, SerialOrderAcrossTheWrap) {
  RunDecideCases({
      {"writer: MAX precedes MIN",
       {W("a", INT32_MAX), W("me", INT32_MIN)},
       W("me", INT32_MIN),
       Kind::kWait,
       W("a", INT32_MAX)},
      {"writer at MAX: MIN comes after me",
       {W("me", INT32_MAX), W("a", INT32_MIN)},
       W("me", INT32_MAX),
       Kind::kAcquired,
       ""},
      {"reader at MAX: writer at MIN comes after me",
       {R("me", INT32_MAX), W("a", INT32_MIN), W("b", INT32_MIN + 1)},
       R("me", INT32_MAX),
       Kind::kAcquired,
       ""},
      {"reader past the wrap: the last writer is before the wrap",
       {W("a", INT32_MAX - 2), W("b", INT32_MAX - 1), R("c", INT32_MAX), R("d", INT32_MIN),
        R("me", INT32_MIN + 1), W("e", INT32_MIN + 2)},
       R("me", INT32_MIN + 1),
       Kind::kWait,
       W("b", INT32_MAX - 1)},
      {"reader past the wrap: the last writer is after the wrap",
       {W("a", INT32_MAX - 1), R("b", INT32_MAX), W("c", INT32_MIN), R("me", INT32_MIN + 1)},
       R("me", INT32_MIN + 1),
       Kind::kWait,
       W("c", INT32_MIN)},
      {"reader past the wrap, readers only before",
       {R("a", INT32_MAX - 1), R("b", INT32_MAX), R("me", INT32_MIN), W("c", INT32_MIN + 1)},
       R("me", INT32_MIN),
       Kind::kAcquired,
       ""},
      {"writer past the wrap with a gap",
       {R("a", INT32_MAX - 3), R("me", INT32_MIN + 4), W("x", INT32_MIN + 2)},
       R("me", INT32_MIN + 4),
       Kind::kWait,
       W("x", INT32_MIN + 2)},
      {"writer: -1 precedes 0", {W("a", -1), W("me", 0)}, W("me", 0), Kind::kWait, W("a", -1)},
      {"writer at -1: 0 comes after", {W("me", -1), W("a", 0)}, W("me", -1), Kind::kAcquired, ""},
      {"writer: -2 precedes -1 (string order would not)",
       {W("a", -2), R("b", 5), W("me", -1)},
       W("me", -1),
       Kind::kWait,
       W("a", -2)},
      // String order: "-000000010" < "-000000009"; numerically -10 < -9 too,
      // but a name-sorted queue of "a-W--..." vs "b-W-..." would get it wrong.
      {"string order of names is irrelevant",
       {W("zzz", 5), W("aaa", 6), W("me", 7)},
       W("me", 7),
       Kind::kWait,
       W("aaa", 6)},
      {"numeric order is wrong across the wrap",
       {W("a", INT32_MIN), R("b", INT32_MAX - 10), R("me", INT32_MAX)},
       R("me", INT32_MAX),
       Kind::kAcquired,
       ""},
  });
}

TEST(DecideQueueTest, ServerOrderDoesNotMatter) {
  // A queue around the wrap, listed in a scrambled order.
  const std::vector<std::string> children = {
      R("f", INT32_MIN + 1), "lock",       W("b", INT32_MAX - 3), R("a", INT32_MAX - 4),
      W("e", INT32_MIN),     R("c", INT32_MAX - 2), "x-w-0000000001", R("d", INT32_MAX),
      W("g", INT32_MIN + 5), R("h", INT32_MIN + 6),
  };
  RunDecideCases({
      {"a", children, R("a", INT32_MAX - 4), Kind::kAcquired, ""},
      {"b", children, W("b", INT32_MAX - 3), Kind::kWait, R("a", INT32_MAX - 4)},
      {"c", children, R("c", INT32_MAX - 2), Kind::kWait, W("b", INT32_MAX - 3)},
      {"d", children, R("d", INT32_MAX), Kind::kWait, W("b", INT32_MAX - 3)},
      {"e", children, W("e", INT32_MIN), Kind::kWait, R("d", INT32_MAX)},
      {"f", children, R("f", INT32_MIN + 1), Kind::kWait, W("e", INT32_MIN)},
      {"g", children, W("g", INT32_MIN + 5), Kind::kWait, R("f", INT32_MIN + 1)},
      {"h", children, R("h", INT32_MIN + 6), Kind::kWait, W("g", INT32_MIN + 5)},
  });
}

// ---- CouldAcquireNow ----------------------------------------------------------

TEST(CouldAcquireNowTest, Table) {
  struct Case {
    const char* what;
    std::vector<std::string> children;
    bool read, write;
  } cases[] = {
      {"empty", {}, true, true},
      {"only foreign", {"lock", "", "h-w-0000000001", "-W-0000000001", "h-W-abc", "h-W-+1"}, true,
       true},
      {"one reader", {R("a", 1)}, true, false},
      {"readers only", {R("a", 1), R("b", 2), "junk"}, true, false},
      {"one writer", {W("a", 1)}, false, false},
      {"writer after readers", {R("a", 1), R("b", 2), W("c", 3)}, false, false},
      {"writer across the wrap", {R("a", INT32_MAX), W("b", INT32_MIN)}, false, false},
      {"reader named like a writer", {"h-W-1-R-0000000002"}, true, false},
      {"writer named like a reader", {"h-R-1-W-0000000002"}, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.what, ": ", DescribeChildren(c.children)));
    EXPECT_EQ(CouldAcquireNow(c.children, NodeMode::kRead), c.read);
    EXPECT_EQ(CouldAcquireNow(c.children, NodeMode::kWrite), c.write);
  }
}

// CouldAcquireNow must agree with DecideQueue for a node that would be created
// at the end of the queue.
TEST(CouldAcquireNowTest, AgreesWithDecisionForANewLastNode) {
  const std::vector<std::vector<std::string>> queues = {
      {},
      {R("a", 1)},
      {W("a", 1)},
      {R("a", 1), R("b", 2), "junk"},
      {R("a", 1), W("b", 2), R("c", 3)},
      {R("a", INT32_MAX - 1), R("b", INT32_MAX)},
  };
  for (const auto& queue : queues) {
    for (NodeMode mode : {NodeMode::kRead, NodeMode::kWrite}) {
      std::vector<std::string> children = queue;
      const std::string me = mode == NodeMode::kRead ? R("me", INT32_MIN) : W("me", INT32_MIN);
      children.push_back(me);
      EXPECT_EQ(CouldAcquireNow(queue, mode), DecideQueue(children, me).kind == Kind::kAcquired)
          << DescribeChildren(children) << " me=" << me;
    }
  }
}

// The handoff holds at once only when the watched node was the only one
// blocking: the decision counts the blockers (any node for a writer,
// writers for a reader).
TEST(QueueDecisionTest, AWaitCountsTheNodesThatBlock) {
  const std::vector<std::string> queue = {W("a", 1), R("b", 2), W("c", 3), R("d", 4)};
  std::vector<std::string> with_me = queue;
  with_me.push_back(W("me", 5));
  QueueDecision writer = DecideQueue(with_me, W("me", 5));
  EXPECT_EQ(writer.watch, R("d", 4));
  EXPECT_EQ(writer.blockers, 4);
  with_me.back() = R("me", 5);
  QueueDecision reader = DecideQueue(with_me, R("me", 5));
  EXPECT_EQ(reader.watch, W("c", 3));
  EXPECT_EQ(reader.blockers, 2);
  QueueDecision only = DecideQueue({R("a", 1), W("b", 2), R("c", 3), R("me", 4)}, R("me", 4));
  EXPECT_EQ(only.watch, W("b", 2));
  EXPECT_EQ(only.blockers, 1) << "readers ahead do not block a reader";
  EXPECT_EQ(DecideQueue({W("me", 1)}, W("me", 1)).blockers, 0);
}

}  // namespace
}  // namespace zkr
