// ChildList on its own (no server): names read back as they went in, in
// order, including empty and non-ASCII ones; conversions both ways; search.
#include "src/child_list.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace zkr {
namespace internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ChildListTest, EmptyList) {
  ChildList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.begin(), list.end());
  EXPECT_FALSE(list.Contains(""));
  EXPECT_THAT(list.ToVector(), IsEmpty());
}

TEST(ChildListTest, NamesComeBackInOrderWithTheirBoundaries) {
  // Adjacent names that run together in the buffer must not be confused:
  // "a" + "ab" is not "aab", and an empty name is a name.
  const std::vector<std::string> names = {"a", "ab", "", "host-W-0000000001", "\xC3\xA9t\xC3\xA9",
                                          std::string("nul\0inside", 10)};
  ChildList list(names);
  ASSERT_EQ(list.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(list[i], names[i]) << i;
  EXPECT_EQ(list.ToVector(), names);
  std::vector<std::string> iterated;
  for (absl::string_view name : list) iterated.emplace_back(name);
  EXPECT_EQ(iterated, names);
}

TEST(ChildListTest, ContainsWholeNamesOnly) {
  ChildList list = {"lock-R-0000000001", "lock-W-0000000002"};
  EXPECT_TRUE(list.Contains("lock-W-0000000002"));
  EXPECT_FALSE(list.Contains("lock-W-000000000"));   // a prefix
  EXPECT_FALSE(list.Contains("0000000001lock-W"));   // across a boundary
  EXPECT_FALSE(list.Contains("lock-R-0000000001lock-W-0000000002"));
  EXPECT_EQ(std::find(list.begin(), list.end(), std::string("lock-R-0000000001")), list.begin());
}

TEST(ChildListTest, ManyNamesAddedOneByOne) {
  ChildList list;
  list.Reserve(10000, 10000 * 17);
  std::vector<std::string> names;
  for (int i = 0; i < 10000; ++i) {
    names.push_back("host-W-" + std::to_string(1000000000 + i));
    list.Add(names.back());
  }
  EXPECT_EQ(list.size(), 10000u);
  EXPECT_EQ(list[0], names[0]);
  EXPECT_EQ(list[9999], names[9999]);
  EXPECT_EQ(list.end() - list.begin(), 10000);
  EXPECT_EQ(list.ToVector(), names);
}

TEST(ChildListTest, AsVectorKeepsTheStatus) {
  absl::StatusOr<std::vector<std::string>> failed = AsVector(absl::NotFoundError("/gone"));
  EXPECT_TRUE(absl::IsNotFound(failed.status()));
  absl::StatusOr<std::vector<std::string>> listed = AsVector(ChildList{"x", "y"});
  ASSERT_TRUE(listed.ok());
  EXPECT_THAT(*listed, ElementsAre("x", "y"));
}

}  // namespace
}  // namespace internal
}  // namespace zkr
