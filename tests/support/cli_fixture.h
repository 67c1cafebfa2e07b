// The fixture of the zkr command-line tests: the real binary ($ZKR_BINARY)
// run as child processes against the real server of ZkTest, with a per-test
// temporary directory for the evidence the commands leave in files.
#ifndef ZKRECIPES_TESTS_SUPPORT_CLI_FIXTURE_H_
#define ZKRECIPES_TESTS_SUPPORT_CLI_FIXTURE_H_

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_process.h"
#include "tests/support/zk_test.h"

namespace zkr {
namespace testing {

// ---- the fixture -------------------------------------------------------------------

class CliTest : public ZkTest {
 protected:
  void SetUp() override {
    ZkTest::SetUp();
    if (HasFatalFailure()) return;
    const char* binary = std::getenv("ZKR_BINARY");
    ASSERT_TRUE(binary != nullptr && *binary != '\0')
        << "ZKR_BINARY must name the zkr binary (ctest sets it)";
    binary_ = binary;
    ASSERT_EQ(access(binary_.c_str(), X_OK), 0) << binary_ << ": " << std::strerror(errno);
    std::string dir = ::testing::TempDir() + "zkr_cli_test_XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr) << dir << ": " << std::strerror(errno);
    dir_ = dir;
  }

  void TearDown() override {
    processes_.clear();  // kills and reaps whatever a failed test left running
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
    ZkTest::TearDown();
  }

  // Starts `zkr <args>` with --zk=<the test server> after the subcommand
  // (args[0]), so before any "--".
  Process& Zkr(std::vector<std::string> args) {
    args.insert(args.begin() + (args.empty() ? 0 : 1), absl::StrCat("--zk=", connect_));
    return ZkrRaw(std::move(args));
  }
  // Starts `zkr <args>` as given.
  Process& ZkrRaw(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {binary_};
    argv.insert(argv.end(), args.begin(), args.end());
    const int n = static_cast<int>(processes_.size());
    processes_.push_back(std::make_unique<Process>(argv, File(absl::StrCat("p", n, ".out")),
                                                   File(absl::StrCat("p", n, ".err"))));
    return *processes_.back();
  }
  // A file in this test's temporary directory.
  std::string File(absl::string_view name) const { return absl::StrCat(dir_, "/", name); }

  // A CMD for `zkr lock` that writes $ZKR_LOCK_NODE to File(held) (atomically:
  // the file is complete once it exists), then holds the lock until
  // File(release) exists (exit 0) or 30s passed (exit 1).
  std::vector<std::string> HoldUntilReleased(absl::string_view held, absl::string_view release) {
    const std::string h = ShQuote(File(held)), r = ShQuote(File(release));
    return {"sh", "-c",
            absl::StrCat("echo \"$ZKR_LOCK_NODE\" > ", h, ".tmp && mv ", h, ".tmp ", h,  //
                         "; i=0; while [ ! -e ", r, " ] && [ $i -lt 600 ]; do",          //
                         " sleep 0.05; i=$((i+1)); done; [ -e ", r, " ]")};
  }
  // Starts `zkr lock --path=<lock> <flags> -- HoldUntilReleased(held, release)`.
  Process& Holder(const std::string& lock, const std::vector<std::string>& flags = {},
                  absl::string_view held = "held", absl::string_view release = "release") {
    return Zkr(Concat(Concat({"lock", "--path=" + lock}, flags),
                      Concat({"--"}, HoldUntilReleased(held, release))));
  }
  void Touch(absl::string_view name) { std::ofstream(File(name)).put('\n'); }

  // Waits (bounded) until File(name) exists; fails early if `owner` exits.
  bool WaitForFile(absl::string_view name, Process& owner,
                   absl::Duration timeout = absl::Seconds(20)) {
    const std::string path = File(name);
    WaitUntil([&] { return FileExists(path) || owner.Exited(); }, timeout);
    return FileExists(path);
  }
  // The lock node (full path) a HoldUntilReleased holder wrote to File(held).
  std::string HeldNode(absl::string_view held) {
    return std::string(absl::StripAsciiWhitespace(ReadFile(File(held))));
  }

  std::vector<std::string> Children(const std::string& path) {
    auto children = admin().GetChildren(path);
    if (!children.ok()) return {};
    std::sort(children->begin(), children->end());
    return *children;
  }
  // Waits (bounded) until `path` has `count` children.
  bool WaitForChildren(const std::string& path, size_t count,
                       absl::Duration timeout = absl::Seconds(20)) {
    return WaitUntil([&] { return Children(path).size() == count; }, timeout);
  }
  // Expects that the queue directory `path` is empty, then deletes it: zkr
  // leaves an empty container, which the server reaps only periodically.
  void ExpectEmptyAndDelete(const std::string& path) {
    EXPECT_THAT(Children(path), ::testing::SizeIs(0)) << "left under " << path;
    EXPECT_TRUE(testing::DeleteRecursively(admin(), path).ok());
  }
  // The same after a zkr that a signal ended while it waited: it closed its
  // session, and the server deletes the session's nodes as it processes the
  // close. The C client does not wait for that: zookeeper_close returns on
  // the first data it reads after sending the close, and a watch event that
  // arrives then is such data (session.h, Session::Close). So the node may
  // outlive the process by a moment; waited for, bounded well within zkr's
  // 10 s session, so that a session left open (its node stays until the
  // session expires) still fails.
  void ExpectEmptiedAndDelete(const std::string& path) {
    EXPECT_TRUE(WaitForChildren(path, 0, absl::Seconds(4)))
        << "left under " << path << ": " << ::testing::PrintToString(Children(path));
    EXPECT_TRUE(testing::DeleteRecursively(admin(), path).ok());
  }

  std::string binary_;
  std::string dir_;
  std::vector<std::unique_ptr<Process>> processes_;
};

inline std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_CLI_FIXTURE_H_
