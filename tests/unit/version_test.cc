// The one version (CMakeLists.txt's project VERSION) reaches the header's
// macros and zkr::Version() alike.
#include "zkrecipes/version.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace zkr {
namespace {

TEST(VersionTest, TheMacrosAndVersionAgree) {
  EXPECT_EQ(Version(), absl::StrCat(ZKRECIPES_VERSION_MAJOR, ".", ZKRECIPES_VERSION_MINOR, ".",
                                    ZKRECIPES_VERSION_PATCH));
  EXPECT_EQ(Version(), ZKRECIPES_VERSION_STRING);
  EXPECT_FALSE(ZooKeeperClientVersion().empty());
}

}  // namespace
}  // namespace zkr
