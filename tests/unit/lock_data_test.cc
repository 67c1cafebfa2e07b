// The lock participant's node data: what the engine writes is what zkr
// reads back, and other recipes' data is not taken for a lock's.
#include "recipes/lock_data.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace zkr {
namespace internal {
namespace {

TEST(LockDataTest, WhatIsWrittenIsReadBack) {
  for (NodeMode mode : {NodeMode::kRead, NodeMode::kWrite, NodeMode::kLease}) {
    const std::string data = LockNodeData(4242, mode, "nightly backup = db1", 1790000000123);
    std::optional<LockNodeFields> fields = ParseLockNodeData(data);
    ASSERT_TRUE(fields.has_value()) << data;
    EXPECT_EQ(fields->pid, "4242");
    EXPECT_EQ(fields->mode, LockModeName(mode));
    EXPECT_EQ(fields->purpose, "nightly backup = db1");  // the first '=' ends the key
    EXPECT_EQ(fields->requested_ms, "1790000000123");
  }
}

TEST(LockDataTest, AnEmptyPurposeReadsEmpty) {
  std::optional<LockNodeFields> fields = ParseLockNodeData(LockNodeData(1, NodeMode::kWrite, "", 0));
  ASSERT_TRUE(fields.has_value());
  EXPECT_EQ(fields->purpose, "");
  EXPECT_EQ(fields->mode, "write");
}

TEST(LockDataTest, OtherRecipesDataIsNotALocks) {
  EXPECT_FALSE(ParseLockNodeData("").has_value());
  EXPECT_FALSE(ParseLockNodeData("candidate-7").has_value());           // an election's id
  EXPECT_FALSE(ParseLockNodeData("candidate-7\npid=3").has_value());    // id, then its data
  EXPECT_FALSE(ParseLockNodeData("pid=3").has_value());                 // no mode line
  EXPECT_FALSE(ParseLockNodeData("10.0.0.7:9092").has_value());         // Curator's purpose
}

}  // namespace
}  // namespace internal
}  // namespace zkr
