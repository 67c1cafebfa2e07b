// Fuzz-style tests of the queue's node-name parser and decision function
// (issue 7, "bad input and hostile clients"): random and adversarial child
// lists — foreign names, arbitrary bytes, duplicate sequences, duplicate
// names, huge lists, '-' and markers inside the host part, wrapped sequence
// numbers. Properties: never a crash; parsing is consistent with the name it
// came from; the decision agrees with an independent reference model, is a
// pure function of its input (same answer twice, and after shuffling the
// children), and never points at a foreign node or at a node after mine.
// Seeded (printed; ZKR_FUZZ_SEED overrides) so a failure replays.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "recipes/queue_decision.h"
#include "recipes/queue_node.h"

namespace zkr {

using internal::NodeMode;
using internal::QueueNode;
using internal::ParseQueueNode;
using internal::NodePrefix;
using internal::NewParticipantId;
using internal::DecideQueue;
using internal::QueueDecision;
using internal::CouldAcquireNow;
namespace {

using Kind = QueueDecision::Kind;

uint64_t Seed() {
  static const uint64_t seed = [] {
    uint64_t value = 0x5eed2024;
    const char* env = std::getenv("ZKR_FUZZ_SEED");
    if (env != nullptr && !absl::SimpleAtoi(env, &value)) {
      ADD_FAILURE() << "ZKR_FUZZ_SEED=" << env << " is not an unsigned integer";
    }
    std::printf("queue fuzz seed: %llu (replay with ZKR_FUZZ_SEED=%llu)\n",
                static_cast<unsigned long long>(value),
                static_cast<unsigned long long>(value));
    return value;
  }();
  return seed;
}

std::string Escaped(const std::string& s) {
  return absl::StrCat("\"", absl::CHexEscape(s), "\"");
}

std::string Describe(const QueueDecision& d) {
  switch (d.kind) {
    case Kind::kAcquired:
      return "acquired";
    case Kind::kLost:
      return "lost";
    case Kind::kWait:
      return absl::StrCat("wait(", Escaped(d.watch), ")");
    case Kind::kOtherKind:
      return absl::StrCat("other kind(", Escaped(d.watch), ")");
  }
  return "?";
}

bool Same(const QueueDecision& a, const QueueDecision& b) {
  return a.kind == b.kind && a.watch == b.watch;
}

// ---- generators
// ---------------------------------------------------------------

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  std::mt19937_64& rng() { return rng_; }

  int Int(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int>(v.size()) - 1))];
  }
  int32_t AnySequence() {
    switch (Int(0, 4)) {
      case 0:  // near the wrap
        return static_cast<int32_t>(INT32_MAX - Int(0, 50));
      case 1:
        return static_cast<int32_t>(INT32_MIN + Int(0, 50));
      case 2:  // small
        return Int(0, 100);
      case 3:
        return static_cast<int32_t>(-Int(0, 100));
      default:
        return static_cast<int32_t>(rng_());
    }
  }

  // A host part as NewParticipantId makes it, or a hostile one: with '-',
  // "-R-"/"-W-" markers, digits after them, odd bytes.
  std::string Host() {
    static const std::vector<std::string> kPieces = {"db1.example.com",
                                                     "a",
                                                     "-",
                                                     "--",
                                                     "-W-",
                                                     "-R-",
                                                     "-W-12",
                                                     "-R-0000000007",
                                                     "_",
                                                     "x-y",
                                                     "W",
                                                     "R",
                                                     "0000000001",
                                                     "-2147483648",
                                                     "héllo",
                                                     "a b",
                                                     std::string(1, '\0'),
                                                     "\xff"};
    std::string host;
    const int pieces = Int(1, 4);
    for (int i = 0; i < pieces; ++i) host += Pick(kPieces);
    if (Chance(0.5))
      absl::StrAppend(&host, "_", Int(1, 99999), "_", absl::Hex(rng_()));
    return host;
  }

  // A well-formed participant node: what NodePrefix + ZooKeeper produce.
  std::string Node(NodeMode mode, int32_t sequence) {
    return absl::StrCat(NodePrefix(Host(), mode),
                        absl::StrFormat("%010d", sequence));
  }

  // A name the queue must treat as foreign.
  std::string Foreign() {
    switch (Int(0, 11)) {
      case 0:
        return "";
      case 1:
        return "lock";
      case 2:  // marker without digits
        return absl::StrCat(Host(), "-W-");
      case 3:  // digits overflow 32 bits
        return absl::StrCat(Host(), "-W-", Int(3, 9), "999999999");
      case 4:  // empty participant
        return absl::StrFormat("-W-%010d", AnySequence());
      case 5:  // lower-case / unknown mode
        return absl::StrFormat("%s-%c-%010d", Host(),
                               Pick(std::vector<char>{'w', 'r', 'X', '-'}),
                               AnySequence());
      case 6:  // sign or space in the digits
        return absl::StrCat(Host(), "-R-",
                            Pick(std::vector<std::string>{
                                "+5", " 5", "5 ", "-", "--5", "0x10", "1e3"}));
      case 7:  // the last marker is not followed by the sequence
        return absl::StrFormat("%s-W-%010d-R-x", Host(), AnySequence());
      case 8:  // 20 digits
        return absl::StrCat(Host(), "-W-", std::string(20, '1'));
      case 9:  // random bytes
      {
        std::string s(static_cast<size_t>(Int(0, 40)), '\0');
        for (char& c : s) c = static_cast<char>(Int(0, 255));
        return s;
      }
      case 10:  // random text over the alphabet of node names
      {
        static const std::string kAlphabet = "RW-0123456789_a";
        std::string s(static_cast<size_t>(Int(0, 30)), 'a');
        for (char& c : s) c = kAlphabet[static_cast<size_t>(Int(0, 14))];
        // Only foreign if it really does not parse: fall back to a sure one.
        if (ParseQueueNode(s).has_value()) return "not-a-node";
        return s;
      }
      default:
        return absl::StrCat(Host(), "-W-",
                            std::string(static_cast<size_t>(Int(1, 3)), '-'));
    }
  }

 private:
  std::mt19937_64 rng_;
};

// ---- a reference model, written independently of queue_decision.cc
// ---------------

int64_t Offset(int32_t sequence, int32_t origin) {
  return static_cast<int32_t>(static_cast<uint32_t>(sequence) -
                              static_cast<uint32_t>(origin));
}

// Checks `decision` for `me` against the rules of design.md:
//   my node absent (or not a node)  -> kLost
//   writer: nothing before me       -> kAcquired, else wait on a nearest node
//   before me reader: no W before me          -> kAcquired, else wait on a
//   nearest W before me
// ("before" in serial order relative to my sequence; foreign names ignored).
void ExpectMatchesModel(const std::vector<std::string>& children,
                        const std::string& me, const QueueDecision& decision,
                        const std::string& trace) {
  SCOPED_TRACE(trace);
  std::optional<QueueNode> mine = ParseQueueNode(me);
  const bool present =
      std::find(children.begin(), children.end(), me) != children.end();
  if (!mine.has_value() || !present) {
    EXPECT_EQ(decision.kind, Kind::kLost) << Describe(decision);
    EXPECT_EQ(decision.watch, "");
    return;
  }
  std::optional<int64_t> nearest;  // the largest negative offset of a blocker
  for (const std::string& child : children) {
    std::optional<QueueNode> node = ParseQueueNode(child);
    if (!node.has_value()) continue;
    const int64_t offset = Offset(node->sequence, mine->sequence);
    if (offset >= 0) continue;
    if (mine->mode == NodeMode::kRead && node->mode != NodeMode::kWrite)
      continue;
    if (!nearest.has_value() || offset > *nearest) nearest = offset;
  }
  if (!nearest.has_value()) {
    EXPECT_EQ(decision.kind, Kind::kAcquired) << Describe(decision);
    EXPECT_EQ(decision.watch, "");
    return;
  }
  ASSERT_EQ(decision.kind, Kind::kWait) << Describe(decision);
  EXPECT_NE(std::find(children.begin(), children.end(), decision.watch),
            children.end())
      << "watches " << Escaped(decision.watch) << ", which is not a child";
  std::optional<QueueNode> watched = ParseQueueNode(decision.watch);
  ASSERT_TRUE(watched.has_value())
      << "watches a foreign node " << Escaped(decision.watch);
  EXPECT_EQ(Offset(watched->sequence, mine->sequence), *nearest)
      << "watches " << Escaped(decision.watch) << ", not a nearest blocker";
  if (mine->mode == NodeMode::kRead) {
    EXPECT_EQ(watched->mode, NodeMode::kWrite) << "a reader waits on a reader";
  }
}

// The decision for `me`, checked for determinism (again, and on a shuffled
// copy) and against the model.
QueueDecision CheckDecision(Gen& gen, std::vector<std::string> children,
                            const std::string& me, const std::string& what) {
  const QueueDecision first = DecideQueue(children, me);
  const QueueDecision again = DecideQueue(children, me);
  EXPECT_TRUE(Same(first, again))
      << what << ": " << Describe(first) << " then " << Describe(again);
  const bool could_write = CouldAcquireNow(children, NodeMode::kWrite);
  const bool could_read = CouldAcquireNow(children, NodeMode::kRead);
  std::shuffle(children.begin(), children.end(), gen.rng());
  const QueueDecision shuffled = DecideQueue(children, me);
  EXPECT_TRUE(Same(first, shuffled))
      << what << ": " << Describe(first) << " but " << Describe(shuffled)
      << " after shuffling";
  EXPECT_EQ(could_write, CouldAcquireNow(children, NodeMode::kWrite)) << what;
  EXPECT_EQ(could_read, CouldAcquireNow(children, NodeMode::kRead)) << what;
  if (children.size() <= 64) {
    ExpectMatchesModel(
        children, me, first,
        absl::StrCat(what, ": me=", Escaped(me), " children=[",
                     absl::StrJoin(children, ", ",
                                   [](std::string* out, const std::string& s) {
                                     out->append(Escaped(s));
                                   }),
                     "]"));
  } else {
    ExpectMatchesModel(children, me, first,
                       absl::StrCat(what, ": me=", Escaped(me)));
  }
  return first;
}

// ---- ParseQueueNode
// ---------------------------------------------------------------

// Whatever the input: no crash, and a parsed node is consistent with its name.
void CheckParse(const std::string& name) {
  std::optional<QueueNode> node = ParseQueueNode(name);
  std::optional<QueueNode> again = ParseQueueNode(name);
  ASSERT_EQ(node.has_value(), again.has_value()) << Escaped(name);
  if (!node.has_value()) return;
  EXPECT_EQ(node->name, name);
  EXPECT_EQ(node->participant, again->participant);
  EXPECT_EQ(node->sequence, again->sequence);
  EXPECT_FALSE(node->participant.empty()) << Escaped(name);
  const std::string prefix = NodePrefix(node->participant, node->mode);
  ASSERT_EQ(name.compare(0, prefix.size(), prefix), 0)
      << Escaped(name) << " does not start with " << Escaped(prefix);
  const std::string digits = name.substr(prefix.size());
  int64_t value = 0;
  ASSERT_TRUE(absl::SimpleAtoi(digits, &value)) << Escaped(name);
  EXPECT_EQ(value, node->sequence) << Escaped(name);
  EXPECT_TRUE(!digits.empty() &&
              (digits[0] == '-' || (digits[0] >= '0' && digits[0] <= '9')))
      << "sequence digits " << Escaped(digits) << " of " << Escaped(name);
}

TEST(QueueFuzzTest, ParsingArbitraryNamesNeverCrashesAndIsSelfConsistent) {
  Gen gen(Seed());
  for (int i = 0; i < 20000; ++i) {
    CheckParse(gen.Foreign());
    CheckParse(gen.Host());
    // Mutations of a well-formed name: truncation, one byte changed.
    std::string node =
        gen.Node(gen.Chance(0.5) ? NodeMode::kRead : NodeMode::kWrite,
                 gen.AnySequence());
    CheckParse(node.substr(
        0, static_cast<size_t>(gen.Int(0, static_cast<int>(node.size())))));
    node[static_cast<size_t>(gen.Int(0, static_cast<int>(node.size()) - 1))] =
        static_cast<char>(gen.Int(0, 255));
    CheckParse(node);
  }
}

TEST(QueueFuzzTest, WellFormedNamesRoundTripWhateverTheHost) {
  Gen gen(Seed() + 1);
  for (int i = 0; i < 20000; ++i) {
    const std::string host = gen.Host();
    const NodeMode mode = gen.Chance(0.5) ? NodeMode::kRead : NodeMode::kWrite;
    const int32_t sequence = gen.AnySequence();
    const std::string name =
        NodePrefix(host, mode) + absl::StrFormat("%010d", sequence);
    std::optional<QueueNode> node = ParseQueueNode(name);
    ASSERT_TRUE(node.has_value()) << Escaped(name);
    EXPECT_EQ(node->participant, host) << Escaped(name);
    EXPECT_EQ(node->mode, mode) << Escaped(name);
    EXPECT_EQ(node->sequence, sequence) << Escaped(name);
  }
}

TEST(QueueFuzzTest, AdversarialNamesAreForeign) {
  Gen gen(Seed() + 2);
  for (int i = 0; i < 20000; ++i) {
    const std::string name = gen.Foreign();
    EXPECT_FALSE(ParseQueueNode(name).has_value())
        << Escaped(name) << " parsed";
  }
}

// ---- DecideQueue
// ------------------------------------------------------------------

// A random queue: participant nodes around `base` (maybe across the wrap),
// foreign names, duplicate sequences, duplicate names.
std::vector<std::string> RandomChildren(Gen& gen, int size, int32_t base) {
  std::vector<std::string> children;
  for (int i = 0; i < size; ++i) {
    const int what = gen.Int(0, 9);
    if (what == 0) {
      children.push_back(gen.Foreign());
    } else if (what == 1 && !children.empty()) {
      children.push_back(gen.Pick(children));  // the same name twice
    } else if (what == 2 && !children.empty()) {
      // A different participant with a sequence already taken.
      std::optional<QueueNode> other = ParseQueueNode(gen.Pick(children));
      children.push_back(
          gen.Node(gen.Chance(0.5) ? NodeMode::kRead : NodeMode::kWrite,
                   other.has_value() ? other->sequence : base));
    } else {
      const int32_t sequence =
          static_cast<int32_t>(static_cast<uint32_t>(base) +
                               static_cast<uint32_t>(gen.Int(0, 3 * size)));
      children.push_back(gen.Node(
          gen.Chance(0.4) ? NodeMode::kRead : NodeMode::kWrite, sequence));
    }
  }
  return children;
}

int32_t RandomBase(Gen& gen) {
  switch (gen.Int(0, 3)) {
    case 0:
      return static_cast<int32_t>(INT32_MAX -
                                  gen.Int(0, 40));  // straddles the wrap
    case 1:
      return -gen.Int(0, 40);  // straddles zero
    case 2:
      return 0;
    default:
      return static_cast<int32_t>(gen.rng()());
  }
}

TEST(QueueFuzzTest, RandomQueuesDecideLikeTheModelAndDeterministically) {
  Gen gen(Seed() + 3);
  int waits = 0, acquired = 0, lost = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::string> children =
        RandomChildren(gen, gen.Int(0, 40), RandomBase(gen));
    // Ask for every child (participants, foreigners and duplicates alike),
    // and for names that are not children at all.
    std::vector<std::string> asks = children;
    asks.push_back(gen.Foreign());
    asks.push_back(gen.Node(NodeMode::kWrite, gen.AnySequence()));
    for (const std::string& me : asks) {
      const QueueDecision d =
          CheckDecision(gen, children, me, absl::StrCat("round ", round));
      (d.kind == Kind::kWait       ? waits
       : d.kind == Kind::kAcquired ? acquired
                                   : lost)++;
      if (::testing::Test::HasFailure())
        return;  // one counterexample is enough
    }
  }
  // The generator reached every outcome.
  EXPECT_GT(waits, 0);
  EXPECT_GT(acquired, 0);
  EXPECT_GT(lost, 0);
}

TEST(QueueFuzzTest, SequencesAcrossTheWrapOrderSerially) {
  Gen gen(Seed() + 4);
  // A queue created as the counter wraps: creation order is
  // INT32_MAX-k ... INT32_MAX, INT32_MIN ... INT32_MIN+k.
  std::vector<std::string> in_order;
  for (int64_t s = static_cast<int64_t>(INT32_MAX) - 20;
       s <= static_cast<int64_t>(INT32_MAX) + 21; ++s) {
    const int32_t sequence = static_cast<int32_t>(static_cast<uint32_t>(s));
    in_order.push_back(gen.Node(
        gen.Chance(0.3) ? NodeMode::kRead : NodeMode::kWrite, sequence));
  }
  for (size_t i = 0; i < in_order.size(); ++i) {
    const QueueDecision d = CheckDecision(gen, in_order, in_order[i], "wrap");
    if (i == 0) {
      EXPECT_EQ(d.kind, Kind::kAcquired) << "the oldest node, before the wrap";
    } else if (ParseQueueNode(in_order[i])->mode == NodeMode::kWrite) {
      EXPECT_EQ(d.watch, in_order[i - 1])
          << "a writer watches its direct predecessor";
    }
  }
}

TEST(QueueFuzzTest, HugeListsDecideDeterministically) {
  Gen gen(Seed() + 5);
  constexpr int kSize = 100000;
  // 100k participants spanning the wrap, a sprinkling of foreign names,
  // duplicated sequences, and hosts with '-'.
  std::vector<std::string> children;
  children.reserve(kSize + kSize / 50);
  const int32_t base = INT32_MAX - kSize / 2;
  for (int i = 0; i < kSize; ++i) {
    const int32_t sequence = static_cast<int32_t>(static_cast<uint32_t>(base) +
                                                  static_cast<uint32_t>(i));
    children.push_back(
        absl::StrFormat("host-%d.example-com_%d_%016x%s%010d", i % 97, i,
                        static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ULL,
                        i % 3 == 0 ? "-R-" : "-W-", sequence));
    if (i % 50 == 0) children.push_back(gen.Foreign());
    if (i % 1000 == 7) children.push_back(gen.Node(NodeMode::kWrite, sequence));
  }
  std::shuffle(children.begin(), children.end(), gen.rng());
  std::vector<std::string> asks = {children.front(), children.back()};
  for (int i = 0; i < 6; ++i) asks.push_back(gen.Pick(children));
  // The very first and the very last participant by creation.
  asks.push_back(
      absl::StrFormat("host-0.example-com_0_%016x-R-%010d", 0, base));
  for (const std::string& me : asks) {
    CheckDecision(gen, children, me, "huge");
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(DecideQueue(children, asks.back()).kind, Kind::kAcquired)
      << "the first reader of 100k nodes";
}

TEST(QueueFuzzTest, DuplicateSequencesAndNamesAreDecidedTheSameWayEveryTime) {
  Gen gen(Seed() + 6);
  for (int round = 0; round < 2000; ++round) {
    const int32_t sequence = gen.AnySequence();
    std::vector<std::string> children;
    const int n = gen.Int(2, 8);
    for (int i = 0; i < n; ++i) {
      children.push_back(
          gen.Node(gen.Chance(0.5) ? NodeMode::kRead : NodeMode::kWrite,
                   gen.Chance(0.7) ? sequence
                                   : static_cast<int32_t>(static_cast<uint32_t>(sequence) - 1u)));
    }
    children.push_back(children.front());  // a duplicate name too
    for (const std::string& me : children) {
      CheckDecision(gen, children, me, absl::StrCat("dups round ", round));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace zkr
