// zkr told to stop (SIGINT) in every phase, end to end: while leaving a
// barrier, in `barrier wait`, while connecting, and at five moments of a
// campaign through a slow proxy: exit 130 at once, no node left.
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
using ::testing::Not;
using testing::CliRunTest;
using testing::Process;
using testing::ShQuote;
using testing::TcpProxy;
using testing::WaitUntil;

using CliInterruptTest = CliRunTest;

TEST_F(CliInterruptTest, BarrierMemberInterruptedWhileLeavingExits143AndLeaves) {
  const std::string barrier = Path("leave-int");
  auto member = [&](const std::string& id, const std::string& script) -> Process& {
    return Zkr({"barrier", "--path=" + barrier, "--count=2", "--id=" + id, "--timeout=60s", "enter",
                "--", "sh", "-c", script});
  };
  Process& quick = member("quick", absl::StrCat("touch ", ShQuote(File("quick.done"))));
  // slow's CMD writes its shell's pid; it is signalled once its sleep has
  // exec'd (before, the sleep would catch the SIGTERM in the shell's trap and
  // outlive it).
  Process& slow = member("slow", absl::StrCat("trap 'exit 0' TERM; sleep 311 & echo $$ > ",
                                              ShQuote(File("slow.tmp")), " && mv ",
                                              ShQuote(File("slow.tmp")), " ",
                                              ShQuote(File("slow.in")), "; wait"));
  ASSERT_TRUE(WaitForFile("quick.done", quick)) << quick.Describe();
  ASSERT_TRUE(WaitForFile("slow.in", slow)) << slow.Describe();
  ASSERT_TRUE(WaitUntil([&] { return testing::RunsChildNamed(PidIn("slow.in"), "sleep"); },
                        absl::Seconds(20)))
      << slow.Describe();
  // quick now waits in Leave for slow: on the server, a watch under the barrier.
  if (testing::SharedServer() != nullptr) {
    EXPECT_TRUE(WaitUntil(
        [&] {
          auto watches = testing::SharedServer()->FourLetterWord("wchp");
          return (watches.ok() && absl::StrContains(*watches, barrier + "/") &&
                  !absl::StrContains(*watches, barrier + "/ready")) ||
                 quick.Exited();
        },
        absl::Seconds(20)));
  }
  ASSERT_FALSE(quick.Exited()) << quick.Describe();
  const absl::Time start = absl::Now();
  quick.Signal(SIGTERM);
  EXPECT_EQ(quick.Wait(absl::Seconds(30)), 128 + SIGTERM) << quick.Describe();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3)) << "waited for the other member";
  for (const std::string& child : Children(barrier)) {
    EXPECT_THAT(child, Not(HasSubstr("quick"))) << "the interrupted member's node stayed";
  }
  slow.Signal(SIGTERM);  // CMD exits 0; the only member left leaves at once
  EXPECT_EQ(slow.Wait(absl::Seconds(20)), 0) << slow.Describe();
  ExpectEmptyAndDelete(barrier);
}

TEST_F(CliInterruptTest, InterruptedBarrierWaitExits130AtOnce) {
  const std::string barrier = Path("wait-int");
  ASSERT_TRUE(admin().Create(barrier, "", CreateMode::kPersistent).ok());
  Process& waiter = Zkr({"barrier", "--path=" + barrier, "wait"});
  if (testing::SharedServer() != nullptr) {  // its watch is set: it waits
    EXPECT_TRUE(WaitUntil(
        [&] {
          auto watches = testing::SharedServer()->FourLetterWord("wchp");
          return (watches.ok() && absl::StrContains(*watches, barrier + "\n")) || waiter.Exited();
        },
        absl::Seconds(20)));
  }
  const absl::Time start = absl::Now();
  waiter.Signal(SIGINT);
  EXPECT_EQ(waiter.Wait(absl::Seconds(30)), 130) << waiter.Describe();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2)) << waiter.Describe();
  EXPECT_TRUE(admin().Delete(barrier).ok());
}

TEST_F(CliInterruptTest, InterruptWhileConnectingExits130AtOnce) {
  // Nothing listens on port 1: the connect would go on for --session_timeout.
  const std::vector<std::vector<std::string>> commands = {
      {"lock", "--path=/zkr-cli-never", "--", "echo", "ran"},
      {"elect", "--path=/zkr-cli-never", "--", "echo", "ran"},
      {"barrier", "--path=/zkr-cli-never", "--count=2", "enter", "--", "echo", "ran"},
  };
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, {"--zk=127.0.0.1:1", "--session_timeout=30s"});
    Process& p = ZkrRaw(args);
    absl::SleepFor(absl::Milliseconds(300));  // any phase will do: here, connecting
    const absl::Time start = absl::Now();
    p.Signal(SIGINT);
    EXPECT_EQ(p.Wait(absl::Seconds(40)), 130) << p.Describe();
    EXPECT_LT(absl::Now() - start, absl::Seconds(2)) << p.Describe();
    EXPECT_EQ(p.Stdout(), "") << p.Describe();
  }
}

TEST_F(CliInterruptTest, InterruptInAnyPhaseOfASlowCampaignExits130AndLeavesNoNode) {
  ASSERT_NE(testing::SharedServer(), nullptr) << "needs the embedded server behind a proxy";
  auto proxy = testing::TcpProxy::Start("127.0.0.1", testing::SharedServer()->client_port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  (*proxy)->SetDelay(absl::Milliseconds(250));  // each way: a round trip takes 500 ms
  const std::string election = Path("slow-elect");
  // Signals at 0.2 s (connecting) to 2.4 s (campaigning or leading).
  for (absl::Duration after : {absl::Milliseconds(200), absl::Milliseconds(700),
                               absl::Milliseconds(1200), absl::Milliseconds(1700),
                               absl::Milliseconds(2400)}) {
    SCOPED_TRACE(absl::FormatDuration(after));
    Process& p = ZkrRaw({"elect", "--zk=" + (*proxy)->address(), "--path=" + election,
                         "--id=slow", "--", "sh", "-c", "echo leading; sleep 311"});
    absl::SleepFor(after);
    const absl::Time start = absl::Now();
    p.Signal(SIGINT);
    const std::optional<int> code = p.Wait(absl::Seconds(20));
    EXPECT_TRUE(code == 130 || (code == 128 + SIGINT && absl::StrContains(p.Stdout(), "leading")))
        << p.Describe();
    EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << p.Describe();
    EXPECT_TRUE(WaitForChildren(election, 0)) << "a node stayed: " << p.Describe();
  }
  auto stat = admin().Exists(election);
  ASSERT_TRUE(stat.ok());
  if (stat->has_value()) {
    ExpectEmptyAndDelete(election);
  }
}

}  // namespace
}  // namespace zkr
