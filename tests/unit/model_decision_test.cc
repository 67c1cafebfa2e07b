// The C++ queue decision (recipes/queue_decision.h) against the model's
// (tests/model/decide.pml): every queue of up to six sequence numbers — each
// a gap, a reader or a writer — and every position of my node, from the
// table tests/model/decision_table.pml prints. ctest generates the table
// (the model_decision_table test, a fixture) and passes its path in
// ZKR_MODEL_TABLE.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "recipes/queue_decision.h"

namespace zkr {
namespace {

using internal::DecideQueue;
using internal::QueueDecision;

// One line of the table: "TABLE <slots> <me> <result> <blocker>".
struct Row {
  std::string slots;  // per sequence number: 0 gap, 1 reader, 2 writer
  int me = 0;
  int result = 0;     // 0 ACQUIRED, 1 WAIT, 2 LOST
  int blocker = 0;    // a slot, or 255
};

std::vector<Row> ReadTable(const std::string& path) {
  std::vector<Row> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() != 5 || f[0] != "TABLE") continue;
    Row row;
    row.slots = f[1];
    if (!absl::SimpleAtoi(f[2], &row.me) || !absl::SimpleAtoi(f[3], &row.result) ||
        !absl::SimpleAtoi(f[4], &row.blocker)) {
      ADD_FAILURE() << "malformed table line: " << line;
      continue;
    }
    rows.push_back(row);
  }
  return rows;
}

// Slot k's node name: a participant of its own, sequence 40 + 7k (gaps in
// the numbers too, as the server's counter leaves them).
std::string NameOf(const Row& row, int k) {
  const char mode = row.slots[k] == '2' ? 'W' : 'R';
  return absl::StrFormat("host%d_%d_9f86d0818-%c-%010d", k, 4242 + k, mode, 40 + 7 * k);
}

TEST(ModelDecisionTest, TheLibraryDecidesEveryQueueAsTheModelDoes) {
  const char* path = std::getenv("ZKR_MODEL_TABLE");
  ASSERT_TRUE(path != nullptr) << "set ZKR_MODEL_TABLE to the model's decision table (ctest does)";
  const std::vector<Row> rows = ReadTable(path);
  ASSERT_EQ(rows.size(), 729u * 6u) << "3^6 queues x 6 positions expected in " << path;
  int compared = 0;
  for (const Row& row : rows) {
    std::vector<std::string> children;
    for (int k = 0; k < static_cast<int>(row.slots.size()); ++k) {
      if (row.slots[k] != '0') children.push_back(NameOf(row, k));
    }
    // An absent `me` is lost whatever its mode.
    const std::string me = NameOf(row, row.me);
    const QueueDecision decision = DecideQueue(children, me);
    const std::string what = absl::StrFormat("queue %s, me at %d", row.slots, row.me);
    switch (row.result) {
      case 0:
        EXPECT_EQ(decision.kind, QueueDecision::Kind::kAcquired) << what;
        break;
      case 1:
        EXPECT_EQ(decision.kind, QueueDecision::Kind::kWait) << what;
        EXPECT_EQ(decision.watch, NameOf(row, row.blocker)) << what;
        break;
      default:
        EXPECT_EQ(decision.kind, QueueDecision::Kind::kLost) << what;
        break;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 729 * 6);
}

}  // namespace
}  // namespace zkr
