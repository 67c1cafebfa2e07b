#include "src/paths.h"

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace zkr {

using internal::ValidatePath;
using internal::ValidateNodeName;
using internal::ValidateConnectString;
using internal::AncestorsAndSelf;
using internal::ParentPath;
using internal::NodeName;
using internal::JoinPath;
namespace {

TEST(ValidatePathTest, AcceptsWellFormedPaths) {
  for (const char* path : {"/", "/a", "/a/b", "/locks/orders", "/a-b_c.d/e f", "/\xc3\xa9t\xc3\xa9",
                           "/a/.b", "/a/..b", "/zookeeper"}) {
    EXPECT_TRUE(ValidatePath(path).ok()) << path;
  }
}

TEST(ValidatePathTest, RejectsMalformedPathsNamingThem) {
  struct Case {
    std::string path;
    const char* why;
  } cases[] = {
      {"", "empty"},
      {"a", "must start with '/'"},
      {"/a/", "must not end with '/'"},
      {"//a", "empty segment"},
      {"/a//b", "empty segment"},
      {"/a/./b", "relative segment"},
      {"/a/..", "relative segment"},
      {std::string("/a\0b", 4), "forbidden"},
      {"/a\x01", "forbidden"},
      {"/a\x7f", "forbidden"},
      {"/a\xc2\x85", "forbidden"},      // U+0085
      {"/a\xef\xbf\xbf", "forbidden"},  // U+FFFF
      {"/a\xee\x80\x80", "forbidden"},  // U+E000 (private use)
      {"/a\xff", "forbidden"},          // not UTF-8
  };
  for (const Case& c : cases) {
    absl::Status status = ValidatePath(c.path);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << absl::CHexEscape(c.path);
    EXPECT_NE(status.message().find(c.why), absl::string_view::npos) << status;
    EXPECT_NE(status.message().find("invalid path"), absl::string_view::npos) << status;
  }
}

TEST(ValidateNodeNameTest, RejectsSlashesAndEmpty) {
  EXPECT_TRUE(ValidateNodeName("host-1_2").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateNodeName("")));
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateNodeName("a/b")));
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateNodeName("..")));
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateNodeName("a\n")));
}

TEST(ValidateConnectStringTest, AcceptsHostListsAndChroots) {
  for (const char* connect : {"127.0.0.1:2181", "zk1:2181,zk2.example.com:2182",
                              "zk-1:2181/app", "[::1]:2181", "a_b:1/x/y"}) {
    EXPECT_TRUE(ValidateConnectString(connect).ok()) << connect;
  }
}

TEST(ValidateConnectStringTest, RejectsMalformedOnesNamingThem) {
  for (const char* connect : {"", "localhost", "localhost:", "localhost:0", "localhost:65536",
                              "localhost:abc", ":2181", "a:1,,b:2", "a b:2181", "a:1/",
                              "a:1//x", "a:1/x/"}) {
    absl::Status status = ValidateConnectString(connect);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << connect;
    if (*connect != '\0') {
      EXPECT_NE(status.message().find(connect), absl::string_view::npos) << status;
    }
  }
}

TEST(PathPartsTest, ParentNameJoin) {
  EXPECT_EQ(ParentPath("/a/b/c"), "/a/b");
  EXPECT_EQ(ParentPath("/a"), "/");
  EXPECT_EQ(ParentPath("/"), "/");
  EXPECT_EQ(NodeName("/a/b"), "b");
  EXPECT_EQ(NodeName("/"), "");
  EXPECT_EQ(JoinPath("/", "a"), "/a");
  EXPECT_EQ(JoinPath("/a", "b"), "/a/b");
}

TEST(AncestorsAndSelfTest, ListsWhatMustExistInCreationOrder) {
  EXPECT_EQ(AncestorsAndSelf("/a"), std::vector<std::string>({"/a"}));
  EXPECT_EQ(AncestorsAndSelf("/a/b/c"), std::vector<std::string>({"/a", "/a/b", "/a/b/c"}));
}

}  // namespace
}  // namespace zkr
