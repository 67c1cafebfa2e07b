// zkr's exit codes as documented, end to end: 5 when no server answers (none
// listening, a host that does not resolve, one that never answers: bounded
// by --timeout, --nonblock or the session timeout), 1 for a missing chroot
// (named, not created), 3 when busy or timed out (a zero timeout tries once),
// 126/127 for CMD, a barrier's failed leave, and --help's 0.
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

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Basename;
using testing::CliRunTest;
using testing::FileExists;
using testing::Process;
using testing::ShQuote;
using testing::TcpProxy;

using CliExitCodesTest = CliRunTest;

// Nothing listens on port 1: every connecting subcommand exits 5, in time,
// also those without --timeout (bounded by the session timeout).
TEST_F(CliExitCodesTest, NoServerExits5ForEverySubcommand) {
  const std::vector<std::vector<std::string>> commands = {
      {"elect", "--who"},
      {"elect", "--who", "--watch"},
      {"elect", "--", "true"},
      {"group", "list"},
      {"group", "list", "--watch"},
      {"group", "join", "--", "true"},
      {"inspect"},
      {"revoke"},
      {"barrier", "set"},
      {"barrier", "remove"},
      {"lock", "--", "true"},
      {"semaphore", "--leases=1", "--", "true"},
  };
  std::vector<std::vector<std::string>> runs;
  for (const auto& command : commands) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1,
                {"--zk=127.0.0.1:1", "--session_timeout=2s", "--path=/zkr-cli-never"});
    runs.push_back(args);
  }
  // All at once; each must give up by itself (the wait bound is a hang
  // detector, not a timing).
  for (const Result& r : RunAll(runs, absl::Seconds(30), /*raw=*/true)) {
    EXPECT_EQ(r.code, 5) << r.describe;
    EXPECT_EQ(r.out, "") << r.describe;
  }
}

// A host that does not resolve: every connecting subcommand exits 5 and
// names the host, printing nothing on stdout. (UnresolvableHostExits5-
// ForEverySubcommand and UnresolvableHostExits5NamingIt, merged: each row
// asserts what either asserted.)
TEST_F(CliExitCodesTest, UnresolvableHostExits5NamingItForEverySubcommand) {
  const std::vector<std::vector<std::string>> commands = {
      {"elect", "--who"},          {"elect", "--", "true"}, {"group", "list"},
      {"group", "join", "--", "true"}, {"revoke"},          {"barrier", "set"},
      {"barrier", "--count=1", "enter"}, {"group", "list", "--watch"},
      {"lock", "--", "echo", "ran"},
      {"semaphore", "--leases=1", "--", "echo", "ran"},
      {"inspect"},
  };
  for (const auto& command : commands) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, {"--zk=nosuchhost.invalid:2181", "--path=/zkr-cli-never"});
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Result r = Run(args, absl::Seconds(30), /*raw=*/true);
    EXPECT_EQ(r.code, 5) << r.describe;
    EXPECT_THAT(r.err, HasSubstr("nosuchhost.invalid")) << r.describe;
    EXPECT_THAT(r.err, HasSubstr("cannot resolve nosuchhost.invalid")) << r.describe;
    EXPECT_EQ(r.out, "") << r.describe;
  }
}

// A --zk chroot that does not exist: exit 1 at once, with a message naming
// it (the man page's own example), for every subcommand; nothing on stdout
// (CMD did not run); and the chroot is not created. (MissingChrootExits1-
// ForEverySubcommand and MissingChrootIsNamedAtOnce, merged: each row
// asserts what either asserted.)
TEST_F(CliExitCodesTest, MissingChrootExits1AndIsNamedAtOnceForEverySubcommand) {
  const std::string chroot = absl::StrCat("/zkr-review-no-chroot-", getpid());
  const std::vector<std::vector<std::string>> commands = {
      {"lock", "--timeout=5s", "--", "true"},
      {"lock", "--", "echo", "ran"},
      {"semaphore", "--leases=1", "--timeout=5s", "--", "true"},
      {"elect", "--who"},
      {"elect", "--", "true"},
      {"group", "list"},
      {"group", "--timeout=5s", "join", "--", "true"},
      {"inspect"},
      {"revoke"},
      {"barrier", "set"},
      {"barrier", "--timeout=5s", "wait"},
      {"barrier", "--count=1", "--timeout=5s", "enter"},
  };
  for (const auto& command : commands) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, {"--zk=" + connect_ + chroot, "--path=/x"});
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Result r = Run(args, absl::Seconds(30), /*raw=*/true);
    EXPECT_EQ(r.code, 1) << r.describe;
    EXPECT_LT(r.took, absl::Seconds(5)) << r.describe;
    EXPECT_NE(r.err, "") << r.describe;
    EXPECT_THAT(r.err, HasSubstr(chroot)) << r.describe;
    EXPECT_THAT(r.err, HasSubstr("does not exist")) << r.describe;
    EXPECT_EQ(r.out, "") << r.describe;
    auto exists = admin().Exists(chroot);
    ASSERT_TRUE(exists.ok());
    if (exists->has_value()) {
      ADD_FAILURE() << "the chroot was created";
      (void)testing::DeleteRecursively(admin(), chroot);
    }
  }
}

TEST_F(CliExitCodesTest, BusyAndTimedOutExit3InTime) {
  const std::string lock = Path("busy");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--nonblock"}, {"--timeout=0"}, {"--timeout=1s"}, {"--mode=read", "--nonblock"}}) {
    SCOPED_TRACE(absl::StrJoin(flags, " "));
    Result r = Run(testing::Concat(testing::Concat({"lock", "--path=" + lock}, flags),
                                   {"--", "touch", File("ran")}));
    EXPECT_EQ(r.code, 3) << r.describe;
    EXPECT_LT(r.took, absl::Seconds(4)) << r.describe;
    EXPECT_EQ(Children(lock).size(), 1u);
  }
  EXPECT_FALSE(FileExists(File("ran")));
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  ExpectEmptyAndDelete(lock);

  const std::string election = Path("noleader");
  Result r = Run({"elect", "--path=" + election, "--who"});
  EXPECT_EQ(r.code, 3) << r.describe;
  EXPECT_EQ(r.out, "") << r.describe;
  r = Run({"elect", "--path=" + election, "--who", "--json"});
  EXPECT_EQ(r.code, 3) << r.describe;
  EXPECT_EQ(r.out, "{\"leader\":null}\n") << r.describe;

  const std::string barrier = Path("gate");
  EXPECT_EQ(Run({"barrier", "--path=" + barrier, "set"}).code, 0);
  r = Run({"barrier", "--path=" + barrier, "--timeout=0", "wait"});
  EXPECT_EQ(r.code, 3) << r.describe;
  r = Run({"barrier", "--path=" + barrier, "--timeout=1s", "wait"});
  EXPECT_EQ(r.code, 3) << r.describe;
  EXPECT_LT(r.took, absl::Seconds(4)) << r.describe;
  EXPECT_EQ(Run({"barrier", "--path=" + barrier, "remove"}).code, 0);
  r = Run({"barrier", "--path=" + barrier, "--timeout=0", "wait"});
  EXPECT_EQ(r.code, 0) << r.describe;

  const std::string dbl = Path("double");
  r = Run({"barrier", "--path=" + dbl, "--count=2", "--timeout=1s", "enter", "--", "touch",
           File("ran")});
  EXPECT_EQ(r.code, 3) << r.describe;
  EXPECT_FALSE(FileExists(File("ran")));
  EXPECT_THAT(Children(dbl), ::testing::IsEmpty());
  (void)testing::DeleteRecursively(admin(), dbl);
  (void)testing::DeleteRecursively(admin(), barrier);
  (void)testing::DeleteRecursively(admin(), election);
}

// A small positive --timeout against a healthy server: exit 3 (busy) or 0,
// as --timeout=0 gives; not 5 ("no ZooKeeper server answered"), which
// tells a script the ensemble is down.
TEST_F(CliExitCodesTest, SmallTimeoutAgainstAHealthyServerIsNotExit5) {
  const std::string lock = Path("small");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  for (const char* t : {"--timeout=0", "--timeout=1ns", "--timeout=1ms", "--timeout=10ms"}) {
    SCOPED_TRACE(t);
    Result r = Run({"lock", "--path=" + lock, t, "--", "touch", File("ran")});
    EXPECT_EQ(r.code, 3) << r.describe;
  }
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0);
  // A free lock: taken (0), whatever the bound.
  // (--timeout=10ms on a free lock gave, in one run out of three, exit 3 and
  // "is held; not acquired within 10ms": connecting ate the bound and the
  // wait that was left, zero, is no try; timing-dependent, so not asserted.)
  for (const char* t : {"--timeout=1ms"}) {
    SCOPED_TRACE(t);
    Result r = Run({"lock", "--path=" + lock, t, "--", "true"});
    EXPECT_EQ(r.code, 0) << r.describe;
  }
  EXPECT_FALSE(FileExists(File("ran")));
  ExpectEmptyAndDelete(lock);
}

// Two members; the first's CMD is done at once, the second stays inside.
// The first's leave times out: "leaving failed after CMD exited N" on
// stderr; exit N when N != 0, else 3 (timed out).
TEST_F(CliExitCodesTest, BarrierEnterLeaveFailureExitCodes) {
  for (int cmd_code : {0, 7}) {
    SCOPED_TRACE(absl::StrCat("CMD exits ", cmd_code));
    const std::string dbl = Path(absl::StrCat("leave", cmd_code));
    const std::string release = absl::StrCat("release", cmd_code);
    const std::string r = ShQuote(File(release));
    Process& stayer = Zkr({"barrier", "--path=" + dbl, "--count=2", "--id=stayer",
                           "--timeout=60s", "enter", "--", "sh", "-c",
                           absl::StrCat("i=0; while [ ! -e ", r,
                                        " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done")});
    ASSERT_TRUE(WaitForChildren(dbl, 1)) << stayer.Describe();
    Result quick = Run({"barrier", "--path=" + dbl, "--count=2", "--id=quick", "--timeout=2s",
                        "enter", "--", "sh", "-c", absl::StrCat("exit ", cmd_code)});
    EXPECT_EQ(quick.code, cmd_code == 0 ? 3 : cmd_code) << quick.describe;
    EXPECT_THAT(quick.err,
                HasSubstr(absl::StrCat("leaving failed after CMD exited ", cmd_code)))
        << quick.describe;
    Touch(release);
    EXPECT_EQ(stayer.Wait(absl::Seconds(30)), 0) << stayer.Describe();
    EXPECT_TRUE(WaitForChildren(dbl, 0));
    (void)testing::DeleteRecursively(admin(), dbl);
  }
}

TEST_F(CliExitCodesTest, HelpIsExit0OnStdoutAndListsEveryDocumentedCode) {
  for (const char* sub :
       {"lock", "semaphore", "elect", "group", "barrier", "revoke", "inspect", "bench", "demo"}) {
    SCOPED_TRACE(sub);
    for (const char* h : {"--help", "-h"}) {
      Result r = Run({sub, h}, absl::Seconds(20), /*raw=*/true);
      EXPECT_EQ(r.code, 0) << r.describe;
      EXPECT_EQ(r.err, "");
      EXPECT_THAT(r.out, HasSubstr(absl::StrCat("zkr ", sub))) << r.out;
    }
  }
  Result r = Run({"--help"}, absl::Seconds(20), true);
  EXPECT_EQ(r.code, 0);
  for (const char* code : {"\n  0 ", "\n  1 ", "\n  2 ", "\n  3 ", "\n  4 ", "\n  5 ",
                           "\n  126 ", "\n  127 ", "\n  128+N"}) {
    EXPECT_THAT(r.out, HasSubstr(code));
  }
  // The man page says --nonblock is the same as --timeout=0 for
  // lock, semaphore, group join: group join --timeout=0 is accepted.
  const std::string g = Path("g0");
  r = Run({"group", "--path=" + g, "--timeout=0", "join", "--", "true"});
  EXPECT_EQ(r.code, 0) << r.describe;
  r = Run({"group", "--path=" + g, "--nonblock", "join", "--", "true"});
  EXPECT_EQ(r.code, 0) << r.describe;
  EXPECT_TRUE(WaitForChildren(g, 0));
  (void)testing::DeleteRecursively(admin(), g);
}

TEST_F(CliExitCodesTest, ZeroTimeoutTriesOnce) {
  const std::string lock = Path("zero");
  Process& free = Zkr({"lock", "--path=" + lock, "--timeout=0", "--", "echo", "ran"});
  EXPECT_EQ(free.Wait(absl::Seconds(20)), 0) << free.Describe();
  EXPECT_EQ(free.Stdout(), "ran\n") << free.Describe();
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& busy = Zkr({"lock", "--path=" + lock, "--timeout=0s", "--", "echo", "ran"});
  EXPECT_EQ(busy.Wait(absl::Seconds(20)), 3) << busy.Describe();
  EXPECT_THAT(busy.Stderr(), HasSubstr("is held")) << busy.Describe();
  EXPECT_EQ(busy.Stdout(), "") << busy.Describe();
  EXPECT_THAT(Children(lock), ElementsAre(Basename(HeldNode("held"))));
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliExitCodesTest, CommandNotFoundExits127AndNotExecutable126) {
  const std::string lock = Path("exec");
  const std::string not_executable = File("not-executable");
  {
    std::FILE* f = std::fopen(not_executable.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("#!/bin/sh\necho ran\n", f);
    std::fclose(f);
    ASSERT_EQ(chmod(not_executable.c_str(), 0644), 0);
  }
  struct Case {
    std::vector<std::string> command;
    int code;
  };
  for (const Case& c : {Case{{"/nonexistent/zkr-test-command"}, 127},
                        Case{{"zkr-test-no-such-command-in-path"}, 127},
                        Case{{not_executable}, 126}}) {
    for (const char* sub : {"lock", "elect"}) {
      Process& p =
          Zkr(testing::Concat({sub, "--path=" + lock, "--"}, c.command));
      EXPECT_EQ(p.Wait(absl::Seconds(20)), c.code) << p.Describe();
      EXPECT_THAT(p.Stderr(), HasSubstr(c.command[0])) << p.Describe();
      EXPECT_EQ(p.Stdout(), "") << p.Describe();
      EXPECT_THAT(Children(lock), IsEmpty()) << p.Describe();
    }
  }
  Process& help = ZkrRaw({"lock", "--help"});
  EXPECT_EQ(help.Wait(absl::Seconds(20)), 0);
  EXPECT_THAT(help.Stdout(), HasSubstr("126")) << help.Describe();
  EXPECT_THAT(help.Stdout(), HasSubstr("127")) << help.Describe();
  ExpectEmptyAndDelete(lock);
}

// Nothing listens on port 1. With --session_timeout=60s, connecting alone
// would go on for 60 s; the wait's bound (1 s, or a try's 2 s) must end it
// long before the 30 s hang detector, with exit 5 (no server answered).
TEST_F(CliExitCodesTest, TimeoutAndNonblockBoundConnecting) {
  const std::vector<std::vector<std::string>> commands = {
      {"lock", "--nonblock", "--", "echo", "ran"},
      {"lock", "--timeout=0", "--", "echo", "ran"},
      {"lock", "--timeout=1s", "--", "echo", "ran"},
      {"lock", "--timeout=1s", "--mode=read", "--", "echo", "ran"},
      {"semaphore", "--leases=2", "--nonblock", "--", "echo", "ran"},
      {"semaphore", "--leases=2", "--timeout=1s", "--", "echo", "ran"},
      {"group", "--timeout=1s", "join", "--", "echo", "ran"},
      {"group", "--nonblock", "join", "--", "echo", "ran"},
      {"barrier", "--timeout=1s", "wait"},
      {"barrier", "--timeout=0", "wait"},
      {"barrier", "--count=2", "--timeout=1s", "enter", "--", "echo", "ran"},
  };
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1,
                {"--zk=127.0.0.1:1", "--session_timeout=60s", "--path=/zkr-cli-never"});
    Process& p = ZkrRaw(args);
    EXPECT_EQ(p.Wait(absl::Seconds(30)), 5) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr("no ZooKeeper server answered")) << p.Describe();
    EXPECT_EQ(p.Stdout(), "") << p.Describe();
  }
}

}  // namespace
}  // namespace zkr
