// zkr's input checks, end to end: bad input of every flag exits 2 naming the
// flag and its value and leaves nothing behind; ids, group actions, an empty
// revoke --node, the words after "--" (CMD's), extreme durations.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_run_fixture.h"
#include "tests/support/json_reader.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using testing::CliRunTest;
using testing::FileExists;
using testing::Process;
using testing::ShQuote;
using testing::WaitUntil;

using CliInputTest = CliRunTest;

TEST_F(CliInputTest, BadInputOfEveryFlagExits2NamingIt) {
  const std::string p = Path("bad");
  const std::string ran = File("ran");
  const std::vector<std::string> cmd = {"--", "sh", "-c", "touch " + ShQuote(ran)};
  auto L = [&](std::vector<std::string> flags) {
    return testing::Concat(testing::Concat({"lock"}, flags), cmd);
  };
  auto S = [&](std::vector<std::string> flags) {
    return testing::Concat(testing::Concat({"semaphore"}, flags), cmd);
  };
  struct Case {
    std::vector<std::string> args;
    std::string names;  // the message names this
  };
  const std::vector<Case> cases = {
      {L({"--path="}), "--path"},
      {L({"--path=" + p + "/"}), "--path"},
      {L({"--path=" + p + "/../x"}), "--path"},
      {L({"--path=" + p + "/./x"}), "--path"},
      {L({"--path=" + p + "//x"}), "--path"},
      {L({"--path=relative"}), "--path"},
      {L({"--path=" + p + "/a\x01" "b"}), "--path"},
      {L({"--path=" + p + "/a\nb"}), "--path"},
      {L({"--path=" + p + "/\xff"}), "--path"},
      {L({"--path=" + p, "--timeout=-1s"}), "--timeout=-1s"},
      {L({"--path=" + p, "--timeout=abc"}), "--timeout=abc"},
      {L({"--path=" + p, "--timeout="}), "--timeout"},
      {L({"--path=" + p, "--grace=-5s"}), "--grace=-5s"},
      {L({"--path=" + p, "--grace=soon"}), "--grace=soon"},
      {L({"--path=" + p, "--session_timeout=-1s"}), "session"},
      {L({"--path=" + p, "--session_timeout=0"}), "session"},
      {L({"--path=" + p, "--session_timeout=x"}), "session"},
      {L({"--path=" + p, "--mode=shared"}), "--mode=shared"},
      {L({"--path=" + p, "--mode="}), "--mode"},
      {L({"--path=" + p, "--on_lost=panic"}), "panic"},
      {L({"--path=" + p, "--revoke_signal=KILL"}), "KILL"},
      {L({"--path=" + p, "--revoke_signal=9"}), "--revoke_signal"},
      {L({"--path=" + p, "--revoke_signal="}), "--revoke_signal"},
      {L({"--path=" + p, "--acl=world"}), "--acl"},
      {L({"--path=" + p, "--auth=user:pw"}), "--auth"},
      {L({"--path=" + p, "--acl=creator"}), "--acl"},
      {L({"--path=" + p, "--nonblock=maybe"}), "--nonblock"},
      {L({"--path=" + p, "--zk=127.0.0.1:notaport"}), "127.0.0.1:notaport"},
      {L({"--path=" + p, "--zk=127.0.0.1:99999"}), "127.0.0.1:99999"},
      {L({"--path=" + p, "--zk=127.0.0.1:2181/bad//chroot"}), "/bad//chroot"},
      {L({"--path=" + p, "--pth=" + p}), "--pth"},
      {L({"--path=" + p, "--leases=2"}), "--leases"},
      {L({"--path=" + p, "--json"}), "--json"},
      {L({"--path=" + p, "--timeout=1s", "--nonblock"}), "--nonblock"},
      {L({"--path=" + p, "--timeout=0", "--nonblock"}), "--nonblock"},
      {L({"--path=" + p, "stray"}), "stray"},
      {S({"--path=" + p}), "--leases"},
      {S({"--path=" + p, "--leases=0"}), "--leases"},
      {S({"--path=" + p, "--leases=-1"}), "--leases"},
      {S({"--path=" + p, "--leases=two"}), "--leases=two"},
      {S({"--path=" + p, "--leases=99999999999"}), "--leases=99999999999"},
      {S({"--path=" + p, "--leases="}), "--leases"},
      {S({"--path=" + p, "--leases=2", "--take=3"}), "--take"},
      {S({"--path=" + p, "--leases=2", "--take=0"}), "--take"},
      {S({"--path=" + p, "--leases=2", "--take=-1"}), "--take"},
      {S({"--path=" + p, "--path=" + p + "2", "--leases=2"}), "--path"},
      {S({"--path=" + p, "--leases=2", "--mode=read"}), "--mode"},
      {{"barrier", "--path=" + p, "--count=0", "enter"}, "--count"},
      {{"barrier", "--path=" + p, "--count=-3", "enter"}, "--count"},
      {{"barrier", "--path=" + p, "--count=x", "enter"}, "--count"},
      {{"barrier", "--path=" + p, "--count=2", "--id=a\x01" "b", "enter"}, "--id"},
      {{"barrier", "--path=" + p, "--count=2", "--id=\xff", "enter"}, "--id"},
      {{"barrier", "--path=" + p, "--timeout=1s", "set"}, "--timeout"},
      {{"barrier", "--path=" + p, "--count=2", "wait"}, "--count"},
      {{"barrier", "--path=" + p, "entr"}, "entr"},
      {{"barrier", "--path=" + p}, "action"},
      {{"barrier", "--path=" + p, "--timeout=-1s", "wait"}, "--timeout"},
      {{"elect", "--path=" + p, "--id=\xff", "--", "true"}, "--id"},
      {{"elect", "--path=" + p, "--id=a\nb", "--", "true"}, "id"},
      {{"elect", "--path=" + p, "--id=a\x1b[2Jb", "--", "true"}, "id"},
      {{"elect", "--path=" + p, "--who", "--data=x"}, "--data"},
      {{"elect", "--path=" + p, "--who", "--id=x"}, "--id"},
      {{"elect", "--path=" + p, "--watch", "--", "true"}, "--watch"},
      {{"elect", "--path=" + p, "--timeout=1s", "--", "true"}, "--timeout"},
      {{"elect", "--path=" + p, "--grace=x", "--", "true"}, "--grace"},
      {{"group", "--path=" + p, "--id=a\x01" "b", "join", "--", "true"}, "id"},
      {{"group", "--path=" + p, "--timeout=1s", "list"}, "--timeout"},
      {{"group", "--path=" + p, "--id=x", "list"}, "--id"},
      {{"group", "--path=" + p, "--json", "join", "--", "true"}, "--json"},
      {{"group", "--path=" + p, "join", "list"}, "join"},
      {{"revoke", "--path=" + p, "--node=../x"}, "../x"},
      {{"revoke", "--path=" + p, "--node=a/b"}, "a/b"},
      {{"revoke", "--path=" + p, "--grace=-1s"}, "--grace"},
      {{"revoke", "--path=" + p, "--timeout=1s"}, "--timeout"},
      {{"inspect", "--path=" + p, "--timeout=1s"}, "--timeout"},
      {{"inspect", "--path=" + p + "/"}, "--path"},
      {{"inspect", "--path="}, "--path"},
      {{"inspect"}, "--path"},
  };
  for (const Case& c : cases) {
    std::string shown = absl::StrJoin(c.args, " ");
    if (shown.size() > 200) shown = shown.substr(0, 200) + "...";
    SCOPED_TRACE(shown);
    Result r = Run(c.args, absl::Seconds(20));
    EXPECT_EQ(r.code, 2) << r.describe.substr(0, 2000);
    EXPECT_THAT(r.err, HasSubstr(c.names)) << r.err.substr(0, 500);
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(FileExists(ran)) << "CMD ran";
    std::remove(ran.c_str());
  }
  // Nothing created (the fixture checks its root; these are outside it).
  EXPECT_FALSE(admin().Exists("/relative").value_or(std::nullopt).has_value());
  // Mistyped subcommands, flags before the subcommand, no subcommand.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"lokc", "--path=" + p},
                                             {"LOCK", "--path=" + p, "--", "true"},
                                             {"--path=" + p},
                                             {"--bogus", "lock"},
                                             {}}) {
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Result r = Run(args, absl::Seconds(20), /*raw=*/true);
    EXPECT_EQ(r.code, 2) << r.describe;
    EXPECT_NE(r.err, "") << r.describe;
  }
}

// group join takes an --id that is not UTF-8 (elect and barrier enter refuse
// it: exit 2), though every --id is documented as UTF-8 text.
TEST_F(CliInputTest, GroupJoinRefusesAnIdThatIsNotUtf8) {
  const std::string g = Path("badid");
  Result r = Run({"group", "--path=" + g, "--id=a\xff", "join", "--", "touch", File("ran")});
  EXPECT_EQ(r.code, 2) << r.describe;
  EXPECT_THAT(r.err, HasSubstr("--id")) << r.describe;
  EXPECT_FALSE(FileExists(File("ran"))) << "CMD ran as a member with a mangled id";
  (void)testing::DeleteRecursively(admin(), g);
}

// A mistyped group action is named, as barrier names its own ("entr").
TEST_F(CliInputTest, MistypedGroupActionIsNamed) {
  Result r = Run({"group", "--path=" + Path("g"), "lst"});
  EXPECT_EQ(r.code, 2) << r.describe;
  EXPECT_THAT(r.err, HasSubstr("lst")) << r.describe;
}

// `zkr revoke --node=` with an empty value (say --node="$NODE" with NODE
// unset) must be a usage error, not a revocation of every holder.
TEST_F(CliInputTest, RevokeWithAnEmptyNodeIsAUsageErrorNotRevokeAll) {
  const std::string lock = Path("revoke-empty-node");
  Process& holder = Holder(lock, {"--revoke_signal=none"});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Result r = Run({"revoke", "--path=" + lock, "--node=", "--grace=2s"});
  EXPECT_EQ(r.code, 2) << r.describe;
  EXPECT_THAT(r.err, HasSubstr("--node")) << r.describe;
  EXPECT_FALSE(holder.Exited()) << "the holder was revoked: " << holder.Describe();
  Touch("release");
  holder.Wait(absl::Seconds(30));
  ExpectEmptyAndDelete(lock);
}

// The words after "--" are CMD's, even when they look like zkr's flags.
TEST_F(CliInputTest, FlagsAfterDoubleDashBelongToCmd) {
  const std::string p = Path("dash");
  Result r = Run({"lock", "--path=" + p, "--", "echo", "--timeout=x", "--help", "--", "--path"});
  EXPECT_EQ(r.code, 0) << r.describe;
  EXPECT_EQ(r.out, "--timeout=x --help -- --path\n") << r.describe;
  // Unicode and '/'-free odd characters are a valid path.
  const std::string u = Path("ünï cødé ✓");
  r = Run({"lock", "--path=" + u, "--", "true"});
  EXPECT_EQ(r.code, 0) << r.describe;
  // Repeated flags: the last one wins or it is refused, but never a hang.
  r = Run({"lock", "--path=" + p, "--timeout=1s", "--timeout=2s", "--", "true"});
  EXPECT_TRUE(r.code == 0 || r.code == 2) << r.describe;
  ExpectEmptyAndDelete(p);
  ExpectEmptyAndDelete(u);
}

// Extreme durations: a huge --timeout waits (it does not wrap into the past
// and exit 3 at once); 1ns is a try; inf grace and odd session timeouts run
// or are refused (exit 2), never hang.
TEST_F(CliInputTest, ExtremeDurations) {
  const std::string lock = Path("durations");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  for (const char* huge : {"--timeout=9999999999h", "--timeout=2562047h", "--timeout=inf"}) {
    SCOPED_TRACE(huge);
    Process& waiter = Zkr({"lock", "--path=" + lock, huge, "--", "touch", File("ran")});
    EXPECT_TRUE(WaitUntil([&] { return Children(lock).size() == 2 || waiter.Exited(); },
                          absl::Seconds(20)));
    EXPECT_FALSE(waiter.Exited()) << waiter.Describe();
    waiter.Signal(SIGTERM);
    EXPECT_EQ(waiter.Wait(absl::Seconds(20)), 128 + SIGTERM) << waiter.Describe();
    EXPECT_TRUE(WaitForChildren(lock, 1));
  }
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0);
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--grace=inf"}, {"--grace=0"}, {"--session_timeout=1000h"}, {"--session_timeout=1ms"},
           {"--session_timeout=100ms"}, {"--session_timeout=1s"}, {"--session_timeout=inf"}}) {
    SCOPED_TRACE(absl::StrJoin(flags, " "));
    Result r = Run(testing::Concat(testing::Concat({"lock", "--path=" + lock}, flags),
                                   {"--", "true"}),
                   absl::Seconds(30));
    // 5 would say no server answered: the server is up.
    EXPECT_TRUE(r.code == 0 || r.code == 2) << r.describe;
    if (r.code == 2) EXPECT_THAT(r.err, HasSubstr(flags[0].substr(2, flags[0].find('=') - 2)));
  }
  ExpectEmptyAndDelete(lock);
}

}  // namespace
}  // namespace zkr
