// DecideQueue against a reference implementation on random queues (and
// herd-freedom: a departure changes only its watcher's decision), and on
// garbage child lists: never a crash, the same decision in any order. Built
// into queue_decision_test; ZKR_QUEUE_TEST_SEED picks the seed.
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
#include "gtest/gtest.h"
#include "recipes/queue_decision.h"
#include "recipes/queue_node.h"
#include "tests/support/queue_decision_names.h"

namespace zkr {

using internal::NodeMode;
using internal::SequenceBefore;
using internal::QueueNode;
using internal::ParseQueueNode;
using internal::DecideQueue;
using internal::QueueDecision;
using internal::CouldAcquireNow;
namespace {

using Kind = QueueDecision::Kind;
using testing::Describe;
using testing::DescribeChildren;
using testing::R;
using testing::SameDecision;
using testing::W;

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
