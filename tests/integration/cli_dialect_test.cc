// zkr --dialect (issue 34) end to end: the real binary against the real
// server makes the nodes Curator and Kazoo make, inspect names a peer's
// queue, and what a dialect cannot do is a usage error (exit 2). Shared
// queues with real Curator and Kazoo processes: tests/interop.
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::CliTest;
using testing::Process;
using testing::ShQuote;

using CliDialectTest = CliTest;

TEST_F(CliDialectTest, LockAndElectMakeThePeersNodes) {
  struct Case {
    std::vector<std::string> args;
    std::string pattern;
    std::string data;
  };
  const std::string uuid = "_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
  const Case cases[] = {
      {{"lock", "--dialect=curator", "--purpose=nightly"}, uuid + "-lock-[0-9]{10}", "nightly"},
      {{"lock", "--dialect=curator", "--mode=read", "--purpose=r"}, uuid + "-__READ__[0-9]{10}", "r"},
      {{"lock", "--dialect=kazoo", "--mode=write", "--purpose=w"}, "[0-9a-f]{32}__lock__[0-9]{10}", "w"},
      {{"elect", "--dialect=curator", "--id=db-1"}, uuid + "-latch-[0-9]{10}", "db-1"},
      {{"elect", "--dialect=kazoo", "--id=db-2"}, "[0-9a-f]{32}__lock__[0-9]{10}", "db-2"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string path = Path(absl::StrCat("dialect-", n++));
    SCOPED_TRACE(path);
    // CMD records the node's name as the server lists it.
    std::vector<std::string> args = c.args;
    args.push_back("--path=" + path);
    for (const std::string& word :
         {std::string("--"), std::string("sh"), std::string("-c"),
          absl::StrCat("touch ", ShQuote(File("in")), "; while [ ! -e ", ShQuote(File("out")),
                       " ]; do sleep 0.02; done")}) {
      args.push_back(word);
    }
    Process& zkr = Zkr(args);
    ASSERT_TRUE(WaitForFile("in", zkr)) << zkr.Describe();
    const std::vector<std::string> children = Children(path);
    ASSERT_THAT(children, SizeIs(1));
    EXPECT_TRUE(std::regex_match(children[0], std::regex(c.pattern))) << children[0];
    auto data = admin().Get(path + "/" + children[0]);
    ASSERT_TRUE(data.ok());
    EXPECT_EQ(*data, c.data);
    // inspect reads it without being told.
    Process& inspect = Zkr({"inspect", "--path=" + path});
    EXPECT_EQ(inspect.Wait(absl::Seconds(20)), 0) << inspect.Describe();
    EXPECT_THAT(inspect.Stdout(), HasSubstr(absl::StrCat(
                                      "1 participant(s) (", c.args[1].substr(10), "'s node names)")))
        << inspect.Describe();
    EXPECT_THAT(inspect.Stdout(), HasSubstr("HOLDS")) << inspect.Describe();
    ASSERT_TRUE(std::ofstream(File("out")).good());
    EXPECT_EQ(zkr.Wait(absl::Seconds(20)), 0) << zkr.Describe();
    std::remove(File("in").c_str());
    std::remove(File("out").c_str());
    ExpectEmptyAndDelete(path);
  }
}

TEST_F(CliDialectTest, WhatADialectCannotDoIsAUsageError) {
  const std::string path = Path("dialect-usage");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"lock", "--path=" + path, "--dialect=zookeeper", "--", "true"}, "--dialect=zookeeper"},
      {{"lock", "--path=" + path, "--dialect=curator", "--revoke_signal=USR2", "--", "true"},
       "--revoke_signal"},
      {{"lock", "--path=" + path, "--path=" + path + "2", "--dialect=kazoo", "--", "true"},
       "one --path"},
      {{"elect", "--path=" + path, "--dialect=curator", "--data=x", "--", "true"}, "data"},
      {{"semaphore", "--path=" + path, "--leases=2", "--dialect=kazoo", "--", "true"},
       "--dialect"},
  };
  for (const Case& c : cases) {
    Process& p = Zkr(c.args);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr(c.message)) << p.Describe();
  }
  EXPECT_FALSE(admin().Exists(path).value().has_value());
}

}  // namespace
}  // namespace zkr
