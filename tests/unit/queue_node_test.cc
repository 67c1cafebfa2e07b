#include "recipes/queue_node.h"

#include <unistd.h>

#include <climits>
#include <cstdint>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace zkr {

using internal::NodeMode;
using internal::SequenceBefore;
using internal::SequenceOffset;
using internal::QueueNode;
using internal::ParseQueueNode;
using internal::ParseQueue;
using internal::NodePrefix;
using internal::NewParticipantId;
using internal::ParseSequenceSuffix;
using internal::SequenceSuffix;
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

// ZooKeeper's suffix: "%010d" of the signed 32-bit parent counter.
std::string Seq(int32_t sequence) { return absl::StrFormat("%010d", sequence); }

std::vector<std::string> Names(const std::vector<QueueNode>& nodes) {
  std::vector<std::string> names;
  for (const QueueNode& node : nodes) names.push_back(node.name);
  return names;
}

// ---- ParseQueueNode: good names ---------------------------------------------

TEST(ParseQueueNodeTest, ParsesWellFormedNames) {
  struct Case {
    std::string name;
    std::string participant;
    NodeMode mode;
    int32_t sequence;
  } cases[] = {
      {"host-W-0000000000", "host", NodeMode::kWrite, 0},
      {"host-R-0000000000", "host", NodeMode::kRead, 0},
      {"host-W-0000000001", "host", NodeMode::kWrite, 1},
      {"host-R-0000000042", "host", NodeMode::kRead, 42},
      {"h-W-7", "h", NodeMode::kWrite, 7},  // not zero-padded: still an integer
      {"x-R-0000000099", "x", NodeMode::kRead, 99},
      {"host-W-2147483647", "host", NodeMode::kWrite, INT32_MAX},
      {"host-R-2147483646", "host", NodeMode::kRead, INT32_MAX - 1},
      // After the counter wraps, %010d prints a signed value.
      {"host-W--2147483648", "host", NodeMode::kWrite, INT32_MIN},
      {"host-R--2147483647", "host", NodeMode::kRead, INT32_MIN + 1},
      {"host-W--000000001", "host", NodeMode::kWrite, -1},
      {"host-R--000000005", "host", NodeMode::kRead, -5},
      {"host-W--1", "host", NodeMode::kWrite, -1},
      {"host-W--1000000000", "host", NodeMode::kWrite, -1000000000},
      // A realistic participant id.
      {"db1.example.com_4242_9f86d081884c7d65-W-0000000012",
       "db1.example.com_4242_9f86d081884c7d65", NodeMode::kWrite, 12},
      {"db1.example.com_4242_9f86d081884c7d65-R--2147483648",
       "db1.example.com_4242_9f86d081884c7d65", NodeMode::kRead, INT32_MIN},
      // Participants containing '-' (hostnames do).
      {"zk-node-1_77_0123456789abcdef-R-0000000003", "zk-node-1_77_0123456789abcdef",
       NodeMode::kRead, 3},
      {"a-b-c-W-0000000004", "a-b-c", NodeMode::kWrite, 4},
      {"-lead-W-0000000004", "-lead", NodeMode::kWrite, 4},
      {"trail--W-0000000004", "trail-", NodeMode::kWrite, 4},
      {"--W-0000000004", "-", NodeMode::kWrite, 4},
      {"trail--W--2147483648", "trail-", NodeMode::kWrite, INT32_MIN},
      // Markers inside the participant: the last marker wins.
      {"a-R-b-W-0000000005", "a-R-b", NodeMode::kWrite, 5},
      {"a-W-b-R-0000000006", "a-W-b", NodeMode::kRead, 6},
      {"h-W-1-R-0000000007", "h-W-1", NodeMode::kRead, 7},
      {"h-R-0000000001-W-0000000008", "h-R-0000000001", NodeMode::kWrite, 8},
      {"h-R--5-W--2147483648", "h-R--5", NodeMode::kWrite, INT32_MIN},
      {"x-R-W-0000000009", "x-R", NodeMode::kWrite, 9},
      {"x-W-R-0000000010", "x-W", NodeMode::kRead, 10},
      {"x-W--R-0000000011", "x-W-", NodeMode::kRead, 11},
      {"x-W-R--0000000011", "x-W", NodeMode::kRead, -11},
      {"-W--W-0000000012", "-W-", NodeMode::kWrite, 12},
      {"R-W-0000000013", "R", NodeMode::kWrite, 13},
      {"W-R-0000000014", "W", NodeMode::kRead, 14},
      {"RW-R-0000000015", "RW", NodeMode::kRead, 15},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<QueueNode> node = ParseQueueNode(c.name);
    ASSERT_TRUE(node.has_value());
    EXPECT_EQ(node->name, c.name);
    EXPECT_EQ(node->participant, c.participant);
    EXPECT_EQ(node->mode, c.mode);
    EXPECT_EQ(node->sequence, c.sequence);
  }
}

TEST(ParseQueueNodeTest, RoundTripsEverySequenceShape) {
  for (int32_t sequence :
       {0, 1, 9, 10, 999999999, 1000000000, INT32_MAX - 1, INT32_MAX, INT32_MIN, INT32_MIN + 1,
        -1, -9, -10, -99999999, -100000000, -999999999, -1000000000}) {
    for (NodeMode mode : {NodeMode::kRead, NodeMode::kWrite}) {
      const std::string name = NodePrefix("p-R-q", mode) + Seq(sequence);
      SCOPED_TRACE(name);
      std::optional<QueueNode> node = ParseQueueNode(name);
      ASSERT_TRUE(node.has_value());
      EXPECT_EQ(node->participant, "p-R-q");
      EXPECT_EQ(node->mode, mode);
      EXPECT_EQ(node->sequence, sequence);
    }
  }
}

TEST(ParseQueueNodeTest, SequenceFormatMatchesZooKeeper) {
  // Sanity-check the helper against what the server prints.
  EXPECT_EQ(Seq(1), "0000000001");
  EXPECT_EQ(Seq(INT32_MAX), "2147483647");
  EXPECT_EQ(Seq(INT32_MIN), "-2147483648");
  EXPECT_EQ(Seq(-1), "-000000001");
}

TEST(ParseQueueNodeTest, AcceptsBinaryBytesInParticipant) {
  const std::string name = std::string("a\0b\xff", 4) + "-W-0000000001";
  std::optional<QueueNode> node = ParseQueueNode(name);
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->participant, std::string("a\0b\xff", 4));
  EXPECT_EQ(node->name, name);
}

// ---- ParseQueueNode: foreign names ------------------------------------------

TEST(ParseQueueNodeTest, RejectsForeignNames) {
  const std::string cases[] = {
      "",
      "-",
      "--",
      "-W-",
      "-R-",
      "W",
      "lock",
      "host",
      "0000000001",
      "host0000000001",
      "host-0000000001",        // no marker
      "host-X-0000000001",      // unknown marker
      "host-w-0000000001",      // lowercase marker
      "host-r-0000000001",      // lowercase marker
      "host-RW-0000000001",     // marker is one letter
      "host_W_0000000001",      // wrong separators
      "host-W0000000001",       // missing separator
      "hostW-0000000001",       // missing separator
      "-W-0000000001",          // empty participant
      "-R-0000000001",          // empty participant
      "-W--2147483648",         // empty participant, wrapped sequence
      "host-W-",                // empty suffix
      "host-R-",                // empty suffix
      "host-W--",               // sign without digits
      "host-W-abc",             // non-numeric suffix
      "host-W-12ab",            // non-numeric suffix
      "host-W-0x10",            // hex is not ZooKeeper's format
      "host-W-1.5",             // not an integer
      "host-W-1e3",             // not an integer
      "host-W-+5",              // explicit plus sign
      "host-W-+0000000005",     // explicit plus sign
      "host-W---5",             // double sign
      "host-W-2147483648",      // INT32_MAX + 1
      "host-W--2147483649",     // INT32_MIN - 1
      "host-W-4294967295",      // uint32 max
      "host-W-99999999999",     // 11 digits
      "host-W-9223372036854775807",   // int64 max
      "host-W-9223372036854775808",   // beyond int64
      "host-W-99999999999999999999",  // far beyond
      "host-W-0000000001x",     // trailing garbage
      "host-W-0000000001-",     // trailing garbage
      "host-W-0000000001-W-",   // trailing marker without digits
      "host-W-0000000001-W-x",  // the last marker must carry the sequence
      "host-R-0000000001-",     // trailing separator
      "host-W-00000-00001",     // digits split by '-'
  };
  for (const std::string& name : cases) {
    EXPECT_FALSE(ParseQueueNode(name).has_value()) << '"' << absl::CHexEscape(name) << '"';
  }
}

// ---- semaphore nodes: "<participant>-S<k>of<N>-<seq>" ---------------------

TEST(ParseQueueNodeTest, ParsesLeaseNames) {
  std::optional<QueueNode> node = ParseQueueNode("db-1_42_ab-S2of4-0000000007");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->participant, "db-1_42_ab");
  EXPECT_EQ(node->mode, NodeMode::kLease);
  EXPECT_EQ(node->weight, 2);
  EXPECT_EQ(node->leases, 4);
  EXPECT_EQ(node->sequence, 7);
  EXPECT_EQ(NodePrefix("p", NodeMode::kLease, 3, 10), "p-S3of10-");
  node = ParseQueueNode(NodePrefix("p", NodeMode::kLease, 1000000, 1000000) + "5");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->weight, 1000000);
  // A lock node keeps weight 1 and no size.
  node = ParseQueueNode("host-W-0000000001");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->weight, 1);
  EXPECT_EQ(node->leases, 0);
}

TEST(ParseQueueNodeTest, RejectsMalformedLeaseMarkers) {
  const std::string cases[] = {
      "host-S-0000000001",         // no counts
      "host-S1-0000000001",        // no size
      "host-S1of-0000000001",      // empty size
      "host-Sof4-0000000001",      // empty count
      "host-S0of4-0000000001",     // nothing asked
      "host-S5of4-0000000001",     // more than there are
      "host-S1of0-0000000001",     // no leases
      "host-S01of4-0000000001",    // leading zero
      "host-S1of1000001-0000000001",  // beyond the largest semaphore
      "host-S-1of4-0000000001",    // a sign
      "host-s1of4-0000000001",     // lowercase
      "host-S1OF4-0000000001",     // uppercase "of"
      "host-S1of4x-0000000001",    // trailing garbage in the marker
      "-S1of4-0000000001",         // empty participant
      "host-S1of4-",               // empty suffix
  };
  for (const std::string& name : cases) {
    EXPECT_FALSE(ParseQueueNode(name).has_value()) << '"' << absl::CHexEscape(name) << '"';
  }
}

// An integer is digits only: whitespace around or inside the suffix is
// garbage, not part of the sequence. (absl::SimpleAtoi strips whitespace, so
// a parser built on it must reject these itself.)
TEST(ParseQueueNodeTest, RejectsWhitespaceAroundSequence) {
  const std::string cases[] = {
      "host-W-0000000001 ", "host-W- 0000000001", "host-W-0000000001\n", "host-W-\t5",
      "host-W- -5",         "host-W- +5",         "host-R-7\r",          "host-W- ",
  };
  for (const std::string& name : cases) {
    std::optional<QueueNode> node = ParseQueueNode(name);
    EXPECT_FALSE(node.has_value()) << '"' << absl::CHexEscape(name) << "\" parsed as sequence "
                                   << (node ? node->sequence : 0);
  }
}

// ---- Serial-number order ------------------------------------------------------

TEST(SequenceOrderTest, SequenceBeforeFollowsSerialArithmetic) {
  struct Case {
    int32_t a, b;
    bool before;
  } cases[] = {
      {0, 1, true},
      {1, 0, false},
      {0, 0, false},
      {5, 5, false},
      {-1, 0, true},
      {0, -1, false},
      {INT32_MAX, INT32_MIN, true},  // the wrap: MAX is followed by MIN
      {INT32_MIN, INT32_MAX, false},
      {INT32_MAX - 1, INT32_MAX, true},
      {INT32_MIN, INT32_MIN + 1, true},
      {INT32_MAX - 5, INT32_MIN + 5, true},
      {INT32_MIN + 5, INT32_MAX - 5, false},
      {-2, -1, true},
      {-1, -2, false},
      {0, INT32_MAX, true},          // offset 2^31 - 1: still ahead
      {INT32_MAX, 0, false},
      {1, INT32_MIN, true},          // MIN + (2^31 + 1) is past half-way: behind
      {INT32_MIN, 1, false},
      {-1000000000, 1000000000, true},  // 2e9 apart: less than 2^31, no wrap
      {1000000000, -1000000000, false},
      {1500000000, -1500000000, true},  // 3e9 apart: the short way is across the wrap
      {-1500000000, 1500000000, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SequenceBefore(c.a, c.b), c.before) << c.a << " before " << c.b;
  }
}

TEST(SequenceOrderTest, SequenceBeforeIsIrreflexiveAndAntisymmetric) {
  const int32_t values[] = {0, 1, -1, 2, -2, 100, INT32_MAX, INT32_MIN, INT32_MAX - 1,
                            INT32_MIN + 1, 1 << 30, -(1 << 30)};
  for (int32_t a : values) {
    EXPECT_FALSE(SequenceBefore(a, a)) << a;
    for (int32_t b : values) {
      if (a == b) continue;
      // Exactly 2^31 apart is the single ambiguous distance.
      if (static_cast<uint32_t>(a) - static_cast<uint32_t>(b) == 0x80000000u) continue;
      EXPECT_NE(SequenceBefore(a, b), SequenceBefore(b, a)) << a << " vs " << b;
    }
  }
}

TEST(SequenceOrderTest, SequenceOffset) {
  struct Case {
    int32_t sequence, origin;
    int64_t offset;
  } cases[] = {
      {0, 0, 0},
      {5, 5, 0},
      {INT32_MIN, INT32_MIN, 0},
      {1, 0, 1},
      {0, 1, -1},
      {10, 3, 7},
      {3, 10, -7},
      {INT32_MIN, INT32_MAX, 1},  // one step past the wrap
      {INT32_MAX, INT32_MIN, -1},
      {INT32_MIN + 9, INT32_MAX - 9, 19},
      {INT32_MAX - 9, INT32_MIN + 9, -19},
      {0, -1, 1},
      {-1, 0, -1},
      {INT32_MAX, 0, INT32_MAX},
      {0, INT32_MAX, -static_cast<int64_t>(INT32_MAX)},
      {INT32_MIN, 0, INT32_MIN},  // the ambiguous half-way point is "before"
      {0, INT32_MIN, INT32_MIN},
      {-1000000000, 1000000000, 2294967296LL - 4294967296LL},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SequenceOffset(c.sequence, c.origin), c.offset)
        << "sequence " << c.sequence << " origin " << c.origin;
  }
}

TEST(SequenceOrderTest, OffsetIsConsistentWithBeforeAndATotalOrderAroundTheWrap) {
  // A run of consecutive sequences straddling the wrap, relative to every
  // origin inside it: offsets must equal the distance along the run.
  std::vector<int32_t> run;
  for (int64_t i = -20; i <= 20; ++i) {
    run.push_back(static_cast<int32_t>(static_cast<uint32_t>(INT32_MAX) + static_cast<uint32_t>(i)));
  }
  for (size_t o = 0; o < run.size(); ++o) {
    for (size_t s = 0; s < run.size(); ++s) {
      EXPECT_EQ(SequenceOffset(run[s], run[o]), static_cast<int64_t>(s) - static_cast<int64_t>(o))
          << run[s] << " from " << run[o];
      EXPECT_EQ(SequenceBefore(run[s], run[o]), s < o) << run[s] << " before " << run[o];
    }
  }
}

// ---- NodePrefix ---------------------------------------------------------------

TEST(NodePrefixTest, AppendsModeMarker) {
  EXPECT_EQ(NodePrefix("host", NodeMode::kRead), "host-R-");
  EXPECT_EQ(NodePrefix("host", NodeMode::kWrite), "host-W-");
  EXPECT_EQ(NodePrefix("a-b_1_ff", NodeMode::kWrite), "a-b_1_ff-W-");
  EXPECT_EQ(NodePrefix("a-R-b", NodeMode::kRead), "a-R-b-R-");
  EXPECT_EQ(NodePrefix("", NodeMode::kRead), "-R-");
}

TEST(NodePrefixTest, PrefixPlusServerSuffixParsesBack) {
  for (const char* participant : {"host", "a-b-c", "x-W-1", "db1.example.com_4242_9f86d081884c7d65"}) {
    for (NodeMode mode : {NodeMode::kRead, NodeMode::kWrite}) {
      for (int32_t sequence : {0, 17, INT32_MAX, INT32_MIN, -1}) {
        const std::string name = NodePrefix(participant, mode) + Seq(sequence);
        SCOPED_TRACE(name);
        std::optional<QueueNode> node = ParseQueueNode(name);
        ASSERT_TRUE(node.has_value());
        EXPECT_EQ(node->participant, participant);
        EXPECT_EQ(node->mode, mode);
        EXPECT_EQ(node->sequence, sequence);
      }
    }
  }
}

// ---- NewParticipantId ---------------------------------------------------------

TEST(NewParticipantIdTest, HasHostPidRandomFormat) {
  const std::string id = NewParticipantId();
  const std::regex format(R"(^([A-Za-z0-9._-]+)_([0-9]+)_([0-9a-f]{16})$)");
  std::smatch match;
  ASSERT_TRUE(std::regex_match(id, match, format)) << id;
  EXPECT_EQ(match[2].str(), std::to_string(getpid())) << id;

  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') {
    std::string safe(host);
    for (char& c : safe) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_';
      if (!ok) c = '_';
    }
    EXPECT_EQ(match[1].str(), safe) << id;
  }
}

TEST(NewParticipantIdTest, UsesOnlySafeCharacters) {
  for (int i = 0; i < 100; ++i) {
    const std::string id = NewParticipantId();
    ASSERT_FALSE(id.empty());
    for (char c : id) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_';
      ASSERT_TRUE(ok) << "bad character 0x" << absl::StrFormat("%02x", c) << " in " << id;
    }
  }
}

TEST(NewParticipantIdTest, DistinctAcrossCalls) {
  std::set<std::string> ids;
  for (int i = 0; i < 10000; ++i) ids.insert(NewParticipantId());
  EXPECT_EQ(ids.size(), 10000u);
}

TEST(NewParticipantIdTest, DistinctAcrossThreads) {
  constexpr int kThreads = 4, kPerThread = 1000;
  std::vector<std::vector<std::string>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&results, t] {
      for (int i = 0; i < kPerThread; ++i) results[t].push_back(NewParticipantId());
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<std::string> ids;
  for (const auto& r : results) ids.insert(r.begin(), r.end());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST(NewParticipantIdTest, NodeNameParsesBackToTheId) {
  const std::string id = NewParticipantId();
  for (NodeMode mode : {NodeMode::kRead, NodeMode::kWrite}) {
    for (int32_t sequence : {0, 123, INT32_MIN}) {
      std::optional<QueueNode> node = ParseQueueNode(NodePrefix(id, mode) + Seq(sequence));
      ASSERT_TRUE(node.has_value()) << id;
      EXPECT_EQ(node->participant, id);
      EXPECT_EQ(node->mode, mode);
      EXPECT_EQ(node->sequence, sequence);
    }
  }
}

// ---- ParseQueue ---------------------------------------------------------------

TEST(ParseQueueTest, EmptyAndAllForeign) {
  EXPECT_THAT(ParseQueue({}, 0), IsEmpty());
  EXPECT_THAT(ParseQueue({"lock", "", "host-w-0000000001", "-W-0000000001", "h-W-x"}, 0),
              IsEmpty());
}

TEST(ParseQueueTest, SortsBySequenceNotByNameAndDropsForeign) {
  // String order would put "z" first and "-..." sequences in the wrong place.
  const std::vector<std::string> children = {
      "zzz-W-0000000003", "foreign", "aaa-R-0000000010", "mmm-R-0000000001",
      "host-w-0000000002", "bbb-W-0000000002", "-W-0000000004",
  };
  EXPECT_THAT(Names(ParseQueue(children, 1)),
              ElementsAre("mmm-R-0000000001", "bbb-W-0000000002", "zzz-W-0000000003",
                          "aaa-R-0000000010"));
}

TEST(ParseQueueTest, OrdersAcrossTheWrap) {
  const std::vector<std::string> children = {
      "d-W-" + Seq(INT32_MIN + 1), "a-R-" + Seq(INT32_MAX - 1), "c-W-" + Seq(INT32_MIN),
      "b-R-" + Seq(INT32_MAX),     "e-R-" + Seq(INT32_MIN + 2),
  };
  const std::vector<std::string> expected = {
      "a-R-" + Seq(INT32_MAX - 1), "b-R-" + Seq(INT32_MAX), "c-W-" + Seq(INT32_MIN),
      "d-W-" + Seq(INT32_MIN + 1), "e-R-" + Seq(INT32_MIN + 2),
  };
  // Any origin inside the run gives the same order.
  for (int32_t origin : {INT32_MAX - 1, INT32_MAX, INT32_MIN, INT32_MIN + 1, INT32_MIN + 2}) {
    EXPECT_THAT(Names(ParseQueue(children, origin)), ElementsAreArray(expected))
        << "origin " << origin;
  }
}

TEST(ParseQueueTest, OrdersMinusOneBeforeZero) {
  const std::vector<std::string> children = {"b-W-" + Seq(1), "a-W-" + Seq(0), "z-W-" + Seq(-1),
                                             "y-W-" + Seq(-2)};
  EXPECT_THAT(Names(ParseQueue(children, 0)),
              ElementsAre("y-W-" + Seq(-2), "z-W-" + Seq(-1), "a-W-" + Seq(0), "b-W-" + Seq(1)));
}

TEST(ParseQueueTest, OrderIsRelativeToOrigin) {
  // Far-apart sequences: the origin decides which half-circle counts as
  // "before". Nodes before the origin come first, nearest last.
  const std::vector<std::string> children = {"a-W-" + Seq(INT32_MIN), "b-W-" + Seq(-1000),
                                             "c-W-" + Seq(0), "d-W-" + Seq(1000),
                                             "e-W-" + Seq(INT32_MAX)};
  EXPECT_THAT(Names(ParseQueue(children, 0)),
              ElementsAre("a-W-" + Seq(INT32_MIN), "b-W-" + Seq(-1000), "c-W-" + Seq(0),
                          "d-W-" + Seq(1000), "e-W-" + Seq(INT32_MAX)));
  // From INT32_MAX, INT32_MIN is one step ahead and 0 is 2^31-1 behind.
  EXPECT_THAT(Names(ParseQueue(children, INT32_MAX)),
              ElementsAre("c-W-" + Seq(0), "d-W-" + Seq(1000), "e-W-" + Seq(INT32_MAX),
                          "a-W-" + Seq(INT32_MIN), "b-W-" + Seq(-1000)));
}

TEST(ParseQueueTest, EqualSequencesTieBreakByName) {
  const std::vector<std::string> children = {"b-W-0000000005", "a-R-0000000005", "c-W-0000000004"};
  EXPECT_THAT(Names(ParseQueue(children, 5)),
              ElementsAre("c-W-0000000004", "a-R-0000000005", "b-W-0000000005"));
}

TEST(ParseQueueTest, KeepsParsedFields) {
  std::vector<QueueNode> nodes = ParseQueue({"h-1-R--2147483648", "junk", "x-W-2147483647"}, 0);
  ASSERT_EQ(nodes.size(), 2u);
  // Relative to 0: INT32_MIN is at offset -2^31, INT32_MAX at +2^31-1.
  EXPECT_EQ(nodes[0].name, "h-1-R--2147483648");
  EXPECT_EQ(nodes[0].participant, "h-1");
  EXPECT_EQ(nodes[0].mode, NodeMode::kRead);
  EXPECT_EQ(nodes[0].sequence, INT32_MIN);
  EXPECT_EQ(nodes[1].name, "x-W-2147483647");
  EXPECT_EQ(nodes[1].participant, "x");
  EXPECT_EQ(nodes[1].mode, NodeMode::kWrite);
  EXPECT_EQ(nodes[1].sequence, INT32_MAX);
}

TEST(SequenceSuffixTest, IsTheServersFormat) {
  EXPECT_EQ(SequenceSuffix(0), "0000000000");
  EXPECT_EQ(SequenceSuffix(42), "0000000042");
  EXPECT_EQ(SequenceSuffix(INT32_MAX), "2147483647");
  // Past INT32_MAX the server's counter wraps; Java's %010d pads after the sign.
  EXPECT_EQ(SequenceSuffix(-1), "-000000001");
  EXPECT_EQ(SequenceSuffix(INT32_MIN), "-2147483648");
}

TEST(SequenceSuffixTest, IsPrintfsZeroPaddedTenWide) {
  std::vector<int32_t> values = {0, 9, 10, 99, 100, 999999999, 1000000000, INT32_MAX,
                                 -9, -10, -99999999, -100000000, -999999999, -1000000000,
                                 INT32_MIN, INT32_MIN + 1};
  absl::BitGen random;
  for (int i = 0; i < 10000; ++i) values.push_back(static_cast<int32_t>(absl::Uniform<uint32_t>(random)));
  for (int32_t value : values) {
    EXPECT_EQ(SequenceSuffix(value), absl::StrFormat("%010d", value)) << value;
  }
}

TEST(SequenceSuffixTest, ParsesOnlyWhatItWrites) {
  for (int32_t sequence : {0, 1, 42, 999999999, INT32_MAX, -1, -42, INT32_MIN}) {
    EXPECT_EQ(ParseSequenceSuffix(SequenceSuffix(sequence)), sequence) << sequence;
  }
  for (absl::string_view odd : {"", "42", "00000000042", "+000000042", " 000000042", "000000004x",
                                "0000000001.revoke", "-1", "2147483648", "-2147483649"}) {
    EXPECT_EQ(ParseSequenceSuffix(odd), std::nullopt) << odd;
  }
}

}  // namespace
}  // namespace zkr
