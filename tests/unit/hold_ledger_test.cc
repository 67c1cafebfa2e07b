// The interop ledger's checker (tests/support/hold_ledger.h): it must find
// an overlap when there is one, or the interop tests prove nothing.
#include "tests/support/hold_ledger.h"

#include "gtest/gtest.h"

namespace zkr {
namespace testing {
namespace {

TEST(HoldLedgerTest, WritersOverlappingAnyoneAreFoundReadersSharing) {
  const std::string text =
      "a-0 W begin 100\na-0 W end 200\n"
      "b-0 R begin 150\nb-0 R end 300\n"   // inside a-0: an overlap
      "c-0 R begin 250\nc-0 R end 400\n"   // with b-0: readers share
      "d-0 W begin 401\nd-0 W end 500\n";  // after everyone
  LedgerCheck check = CheckHolds(text);
  EXPECT_EQ(check.overlaps, 1) << check.description;
  EXPECT_NE(check.description.find("a-0 (W) and b-0 (R)"), std::string::npos) << check.description;
  EXPECT_EQ(check.runs_by_participant["a"], 1);
  EXPECT_EQ(check.malformed, 0);
}

TEST(HoldLedgerTest, AnOpenRunLastsUntilTheGivenTime) {
  const std::string text = "killed-0 W begin 100\nnext-0 W begin 900\nnext-0 W end 950\n";
  EXPECT_EQ(CheckHolds(text, 800).overlaps, 0);
  LedgerCheck late = CheckHolds(text, 920);
  EXPECT_EQ(late.overlaps, 1);
  ASSERT_EQ(late.open_runs.size(), 1u);
  EXPECT_EQ(late.open_runs[0], "killed-0");
}

TEST(HoldLedgerTest, MalformedLinesAreCountedNotIgnored) {
  LedgerCheck check = CheckHolds("x-0 W begin\ny-0 Q begin 1\nz-0 W end 5\n");
  EXPECT_EQ(check.malformed, 3) << check.description;
}

TEST(HoldLedgerTest, AppendHoldWritesLinesTheCheckerReads) {
  const std::string ledger = ::testing::TempDir() + "/hold_ledger_test.ledger";
  std::remove(ledger.c_str());
  AppendHold(ledger, "cpp-0", 'W', true);
  AppendHold(ledger, "cpp-0", 'W', false);
  std::FILE* f = std::fopen(ledger.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buffer[256] = {0};
  const size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, f);
  std::fclose(f);
  LedgerCheck check = CheckHolds(std::string(buffer, n));
  EXPECT_EQ(check.malformed, 0) << check.description;
  EXPECT_EQ(check.runs_by_participant["cpp"], 1);
  EXPECT_TRUE(check.open_runs.empty());
  std::remove(ledger.c_str());
}

}  // namespace
}  // namespace testing
}  // namespace zkr
