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

namespace zkr {

using internal::NodeMode;
using internal::SequenceBefore;
using internal::QueueNode;
using internal::ParseQueueNode;
using internal::DecideQueue;
using internal::QueueDecision;
using internal::CouldAcquireNow;
using internal::HasOtherKind;
namespace {

using Kind = QueueDecision::Kind;

// "<participant>-<M>-<%010d seq>", exactly as a participant's create ends up.
std::string R(absl::string_view participant, int32_t sequence) {
  return absl::StrFormat("%s-R-%010d", participant, sequence);
}
std::string W(absl::string_view participant, int32_t sequence) {
  return absl::StrFormat("%s-W-%010d", participant, sequence);
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kAcquired:
      return "kAcquired";
    case Kind::kWait:
      return "kWait";
    case Kind::kLost:
      return "kLost";
    case Kind::kOtherKind:
      return "kOtherKind";
  }
  return "?";
}

std::string Describe(const QueueDecision& decision) {
  if (decision.kind != Kind::kWait) return KindName(decision.kind);
  return absl::StrCat("kWait(", absl::CHexEscape(decision.watch), ")");
}

std::string DescribeChildren(const std::vector<std::string>& children) {
  return absl::StrCat("[", absl::StrJoin(children, ", ", [](std::string* out, const std::string& s) {
                        absl::StrAppend(out, "\"", absl::CHexEscape(s), "\"");
                      }),
                      "]");
}

bool SameDecision(const QueueDecision& a, const QueueDecision& b) {
  return a.kind == b.kind && (a.kind != Kind::kWait || a.watch == b.watch);
}

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

// ---- Randomized: against a reference implementation ---------------------------

uint64_t TestSeed() {
  if (const char* env = std::getenv("ZKR_QUEUE_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return 20240611;
}

struct Member {
  std::string name;
  NodeMode mode;
  int64_t position;  // strictly increasing along the queue; no wrap
};

struct RandomQueue {
  std::vector<Member> members;        // in queue order
  std::vector<std::string> children;  // members and foreign names, shuffled
};

class QueueGenerator {
 public:
  explicit QueueGenerator(uint64_t seed) : rng_(seed) {}

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Coin() { return Uniform(0, 1) == 1; }
  std::mt19937_64& rng() { return rng_; }

  // A participant id, possibly with '-' and marker look-alikes inside.
  std::string Participant(int index) {
    static const char* const kPieces[] = {"host", "db1.example.com", "-", "-R-", "-W-", "_",
                                          "-R",   "W-",              "7", "--",  "x-W-1"};
    std::string p;
    const int pieces = Uniform(1, 4);
    for (int i = 0; i < pieces; ++i) p += kPieces[Uniform(0, std::size(kPieces) - 1)];
    return absl::StrFormat("%s_%d_%016x", p, index, rng_());
  }

  // A name that is guaranteed not to parse as a queue node.
  std::string Foreign() {
    const std::string seq = absl::StrFormat("%010d", static_cast<int32_t>(rng_()));
    switch (Uniform(0, 10)) {
      case 0: return "lock";
      case 1: return "host-w-" + seq;
      case 2: return "host-r-" + seq;
      case 3: return "-W-" + seq;
      case 4: return "-R-" + seq;
      case 5: return "host-W-" + seq + "x";
      case 6: return "host-R-+" + std::to_string(Uniform(0, 100));
      case 7: return "host-W-" + std::to_string(static_cast<int64_t>(INT32_MAX) + 1 + Uniform(0, 100));
      case 8: return "host-X-" + seq;
      case 9: return "host-W-";
      default: return "host-R-abc";
    }
  }

  RandomQueue Queue() {
    RandomQueue q;
    const int n = Uniform(1, 12);
    // Half the time start right before the wrap so the run straddles it.
    uint32_t start = static_cast<uint32_t>(rng_());
    if (Coin()) start = static_cast<uint32_t>(INT32_MAX) - static_cast<uint32_t>(Uniform(0, 2 * n));
    int64_t position = 0;
    for (int i = 0; i < n; ++i) {
      position += Uniform(1, 3);  // gaps: deleted nodes and other creates
      const int32_t sequence = static_cast<int32_t>(start + static_cast<uint32_t>(position));
      const NodeMode mode = Coin() ? NodeMode::kRead : NodeMode::kWrite;
      const std::string participant = Participant(i);
      q.members.push_back(
          {mode == NodeMode::kRead ? R(participant, sequence) : W(participant, sequence), mode,
           position});
      q.children.push_back(q.members.back().name);
    }
    const int foreign = Uniform(0, 4);
    for (int i = 0; i < foreign; ++i) q.children.push_back(Foreign());
    std::shuffle(q.children.begin(), q.children.end(), rng_);
    return q;
  }

 private:
  std::mt19937_64 rng_;
};

// The rule, stated over plain int64 positions (no serial arithmetic).
QueueDecision Reference(const std::vector<Member>& members, const std::string& me) {
  const Member* mine = nullptr;
  for (const Member& m : members) {
    if (m.name == me) mine = &m;
  }
  if (mine == nullptr) return {Kind::kLost, ""};
  const Member* blocker = nullptr;
  for (const Member& m : members) {
    if (m.position >= mine->position) continue;
    if (mine->mode == NodeMode::kWrite) {
      if (blocker == nullptr || m.position > blocker->position) blocker = &m;
    } else if (m.mode == NodeMode::kWrite) {
      if (blocker == nullptr || m.position > blocker->position) blocker = &m;
    }
  }
  if (blocker == nullptr) return {Kind::kAcquired, ""};
  return {Kind::kWait, blocker->name};
}

std::vector<std::string> Without(const std::vector<std::string>& children,
                                  const std::string& name) {
  std::vector<std::string> out;
  for (const std::string& c : children) {
    if (c != name) out.push_back(c);
  }
  return out;
}

TEST(DecideQueueRandomTest, MatchesReferenceAndIsHerdFree) {
  const uint64_t seed = TestSeed();
  std::cout << "seed " << seed << " (override with ZKR_QUEUE_TEST_SEED)" << std::endl;
  RecordProperty("seed", std::to_string(seed));
  QueueGenerator gen(seed);
  constexpr int kIterations = 2000;
  int waits = 0, acquisitions = 0;
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    const RandomQueue q = gen.Queue();
    SCOPED_TRACE(absl::StrCat("seed ", seed, " iteration ", iteration, " children ",
                              DescribeChildren(q.children)));

    // A random member against the reference.
    const Member& pick = q.members[gen.Uniform(0, q.members.size() - 1)];
    EXPECT_EQ(Describe(DecideQueue(q.children, pick.name)), Describe(Reference(q.members, pick.name)))
        << "me=" << pick.name;

    // Every member: the reference, and the herd-freedom shape.
    std::map<std::string, QueueDecision> before;
    std::map<std::string, int> watchers;
    for (size_t i = 0; i < q.members.size(); ++i) {
      const Member& m = q.members[i];
      const QueueDecision d = DecideQueue(q.children, m.name);
      before[m.name] = d;
      ASSERT_EQ(Describe(d), Describe(Reference(q.members, m.name))) << "me=" << m.name;
      ASSERT_NE(d.kind, Kind::kLost) << "me=" << m.name;
      if (i == 0) {
        EXPECT_EQ(d.kind, Kind::kAcquired) << "the head always holds";
      }
      if (d.kind == Kind::kAcquired) {
        ++acquisitions;
        continue;
      }
      ++waits;
      ++watchers[d.watch];
      if (m.mode == NodeMode::kWrite) {
        EXPECT_EQ(d.watch, q.members[i - 1].name) << "writer watches its direct predecessor";
      } else {
        std::optional<QueueNode> watched = ParseQueueNode(d.watch);
        ASSERT_TRUE(watched.has_value());
        EXPECT_EQ(watched->mode, NodeMode::kWrite) << "reader watches a writer";
      }
    }
    // A reader node is watched by at most one member (the writer right behind it).
    for (const Member& m : q.members) {
      if (m.mode == NodeMode::kRead) {
        EXPECT_LE(watchers[m.name], 1) << m.name;
      }
    }

    // The head leaves: exactly its watchers are woken, and each of them now holds.
    {
      const std::string& head = q.members.front().name;
      const std::vector<std::string> after = Without(q.children, head);
      for (size_t i = 1; i < q.members.size(); ++i) {
        const Member& m = q.members[i];
        const QueueDecision old = before[m.name];
        const QueueDecision now = DecideQueue(after, m.name);
        if (old.kind == Kind::kWait && old.watch == head) {
          EXPECT_EQ(now.kind, Kind::kAcquired) << m.name << " woken by the head leaving";
        } else {
          EXPECT_TRUE(SameDecision(old, now))
              << m.name << ": " << Describe(old) << " -> " << Describe(now);
        }
      }
    }

    // Any member gives up: only its watchers' decisions change.
    {
      const Member& gone = q.members[gen.Uniform(0, q.members.size() - 1)];
      const std::vector<std::string> after = Without(q.children, gone.name);
      std::vector<Member> rest;
      for (const Member& m : q.members) {
        if (m.name != gone.name) rest.push_back(m);
      }
      EXPECT_EQ(DecideQueue(after, gone.name).kind, Kind::kLost);
      for (const Member& m : rest) {
        const QueueDecision old = before[m.name];
        const QueueDecision now = DecideQueue(after, m.name);
        EXPECT_EQ(Describe(now), Describe(Reference(rest, m.name))) << "me=" << m.name;
        if (old.kind == Kind::kWait && old.watch == gone.name) {
          EXPECT_FALSE(now.kind == Kind::kWait && now.watch == gone.name);
        } else {
          EXPECT_TRUE(SameDecision(old, now))
              << m.name << " not watching " << gone.name << ": " << Describe(old) << " -> "
              << Describe(now);
        }
      }
    }
    if (HasFailure()) break;  // one failing iteration is enough to read
  }
  EXPECT_GT(waits, 0);
  EXPECT_GT(acquisitions, kIterations);
}

// ---- Fuzz-ish: garbage never crashes and decides deterministically -------------

TEST(DecideQueueFuzzTest, GarbageIsHandledDeterministically) {
  const uint64_t seed = TestSeed() + 1;
  std::cout << "seed " << seed << std::endl;
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  static const char kAlphabet[] = "-RW0123456789-RW-rw+ x\0";
  auto garbage = [&]() {
    std::string s;
    const int len = uniform(0, 24);
    for (int i = 0; i < len; ++i) s += kAlphabet[uniform(0, sizeof(kAlphabet) - 2)];
    if (uniform(0, 3) == 0) {  // often shaped almost like a node name
      s += uniform(0, 1) ? "-W-" : "-R-";
      if (uniform(0, 1)) s += '-';
      const int digits = uniform(0, 12);
      for (int i = 0; i < digits; ++i) s += static_cast<char>('0' + uniform(0, 9));
    }
    return s;
  };
  for (int iteration = 0; iteration < 5000; ++iteration) {
    std::vector<std::string> children(uniform(0, 10));
    for (std::string& c : children) c = garbage();
    std::string me = (!children.empty() && uniform(0, 2) != 0)
                         ? children[uniform(0, children.size() - 1)]
                         : garbage();
    SCOPED_TRACE(absl::StrCat("seed ", seed, " iteration ", iteration, " me=\"",
                              absl::CHexEscape(me), "\" children ", DescribeChildren(children)));

    const QueueDecision first = DecideQueue(children, me);
    const QueueDecision second = DecideQueue(children, me);
    ASSERT_EQ(Describe(first), Describe(second));
    ASSERT_EQ(CouldAcquireNow(children, NodeMode::kRead),
              CouldAcquireNow(children, NodeMode::kRead));
    ASSERT_EQ(CouldAcquireNow(children, NodeMode::kWrite),
              CouldAcquireNow(children, NodeMode::kWrite));

    std::vector<std::string> shuffled = children;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    ASSERT_EQ(Describe(DecideQueue(shuffled, me)), Describe(first)) << "order-dependent";

    const std::optional<QueueNode> mine = ParseQueueNode(me);
    const bool present = std::find(children.begin(), children.end(), me) != children.end();
    if (!mine || !present) {
      ASSERT_EQ(first.kind, Kind::kLost);
      continue;
    }
    ASSERT_NE(first.kind, Kind::kLost);
    if (first.kind == Kind::kWait) {
      // The watched node is a parseable child strictly before me.
      ASSERT_NE(std::find(children.begin(), children.end(), first.watch), children.end());
      const std::optional<QueueNode> watched = ParseQueueNode(first.watch);
      ASSERT_TRUE(watched.has_value());
      ASSERT_TRUE(SequenceBefore(watched->sequence, mine->sequence));
      if (mine->mode == NodeMode::kRead) {
        ASSERT_EQ(watched->mode, NodeMode::kWrite);
      }
    } else {
      // Acquired: nothing that blocks me is before me.
      for (const std::string& c : children) {
        const std::optional<QueueNode> node = ParseQueueNode(c);
        if (!node || !SequenceBefore(node->sequence, mine->sequence)) continue;
        ASSERT_TRUE(mine->mode == NodeMode::kRead && node->mode == NodeMode::kRead)
            << "acquired although " << c << " is before me";
      }
    }
  }
}

}  // namespace
}  // namespace zkr

namespace zkr {
namespace {

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
