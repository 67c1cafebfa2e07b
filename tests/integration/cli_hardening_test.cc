// zkr hardened (issue 16), end to end against a real server: never two CMDs
// under one lock (CMD dies with zkr, the whole process group is signalled and
// waited for, --auth protects the queue), stopping when told in every phase,
// and the shell's conventions (try-once zero timeout, 126/127, a missing
// chroot named, valid JSON, no inherited descriptors).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/json_reader.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using testing::Basename;
using testing::CliTest;
using testing::FileExists;
using testing::Json;
using testing::JsonReader;
using testing::Lines;
using testing::Process;
using testing::ReadFile;
using testing::ShQuote;
using testing::WaitUntil;

// Whether `pid` runs (a zombie does not: it is dead, only not yet reaped).
bool Alive(pid_t pid) {
  const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

// Whether a live child of `parent` runs the program `name` (its comm: so
// after its exec, not just forked).
bool RunsChildNamed(pid_t parent, absl::string_view name) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size()) continue;
    // After ")": " <state> <ppid> ...".
    std::vector<absl::string_view> fields =
        absl::StrSplit(absl::string_view(stat).substr(close + 2), ' ');
    int ppid = 0;
    if (fields.size() < 2 || fields[0] == "Z" || !absl::SimpleAtoi(fields[1], &ppid)) continue;
    if (ppid == parent && stat.substr(open + 1, close - open - 1) == name) return true;
  }
  return false;
}

// Reaps `pid` if it died as our child (this test is a subreaper, so a CMD
// orphaned by its zkr becomes ours); never blocks.
void ReapIfOurs(pid_t pid) { (void)waitpid(pid, nullptr, WNOHANG); }

class CliHardeningTest : public CliTest {
 protected:
  // The pid a CMD wrote to File(name), or 0.
  pid_t PidIn(absl::string_view name) {
    int pid = 0;
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(File(name))), &pid) ? pid : 0;
  }
  // A CMD that records its shell's pid (cmd.pid), starts a long-lived child of
  // its own (child.pid), marks `ready`, and then appends a tick to File(ticks)
  // every 50 ms forever.
  std::vector<std::string> TickingWithAChild() {
    return {"sh", "-c",
            absl::StrCat("echo $$ > ", ShQuote(File("cmd.pid")), "; sleep 311 & echo $! > ",
                         ShQuote(File("child.pid")), "; touch ", ShQuote(File("ready")),
                         "; while :; do echo tick >> ", ShQuote(File("ticks")),
                         "; sleep 0.05; done")};
  }
  // Kills `zkr` with SIGKILL once its CMD runs, and expects CMD and its child
  // to die with it, and the ticks to stop.
  void ExpectCommandDiesWithKilledZkr(Process& zkr) {
    ASSERT_TRUE(WaitForFile("ready", zkr)) << zkr.Describe();
    const pid_t cmd = PidIn("cmd.pid"), child = PidIn("child.pid");
    ASSERT_GT(cmd, 0);
    ASSERT_GT(child, 0);
    zkr.Signal(SIGKILL);
    EXPECT_EQ(zkr.Wait(absl::Seconds(5)), 128 + SIGKILL);
    EXPECT_TRUE(WaitUntil(
        [&] {
          ReapIfOurs(cmd);
          ReapIfOurs(child);
          return !Alive(cmd) && !Alive(child);
        },
        absl::Seconds(5)))
        << "CMD (" << cmd << (Alive(cmd) ? ", alive" : "") << ") or its child (" << child
        << (Alive(child) ? ", alive" : "") << ") outlived a zkr killed with SIGKILL";
    const size_t ticks = ReadFile(File("ticks")).size();
    absl::SleepFor(absl::Milliseconds(300));  // ticks come every 50 ms while CMD runs
    EXPECT_EQ(ReadFile(File("ticks")).size(), ticks) << "CMD still writes";
  }
  // A session authenticated as `credentials` ("user:password").
  std::unique_ptr<Session> SessionAs(const std::string& credentials) {
    SessionOptions options = Options();
    options.digest_auth = credentials;
    return NewSession(options);
  }
};

// ---- two holders at once ------------------------------------------------------

TEST_F(CliHardeningTest, KilledLockHolderTakesItsCommandAndItsChildrenWithIt) {
  const std::string lock = Path("kill9");
  Process& holder = Zkr(
      testing::Concat({"lock", "--path=" + lock, "--session_timeout=2s", "--"}, TickingWithAChild()));
  ExpectCommandDiesWithKilledZkr(holder);
  EXPECT_TRUE(WaitForChildren(lock, 0)) << "the killed holder's session never expired";
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliHardeningTest, KilledLeaderTakesItsCommandAndItsChildrenWithIt) {
  const std::string election = Path("kill9-elect");
  Process& leader = Zkr(testing::Concat(
      {"elect", "--path=" + election, "--id=a", "--session_timeout=2s", "--"}, TickingWithAChild()));
  ExpectCommandDiesWithKilledZkr(leader);
  EXPECT_TRUE(WaitForChildren(election, 0)) << "the killed leader's session never expired";
  ExpectEmptyAndDelete(election);
}

TEST_F(CliHardeningTest, LostLockTerminatesTheCommandsChildrenBeforeExiting4) {
  const std::string lock = Path("lost-group");
  // CMD's shell dies of SIGTERM at once; its child would outlive it.
  Process& holder = Zkr(
      {"lock", "--path=" + lock, "--grace=5s", "--", "sh", "-c",
       absl::StrCat("echo \"$ZKR_LOCK_NODE\" > ", ShQuote(File("held.tmp")), " && mv ",
                    ShQuote(File("held.tmp")), " ", ShQuote(File("held")), "; sleep 311 & echo $! > ",
                    ShQuote(File("child.pid")), "; wait")});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  ASSERT_TRUE(WaitUntil([&] { return PidIn("child.pid") > 0; }, absl::Seconds(10)));
  const pid_t child = PidIn("child.pid");
  ASSERT_TRUE(admin().Delete(HeldNode("held")).ok());  // an operator: the lock is lost
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 4) << holder.Describe();
  ReapIfOurs(child);
  EXPECT_FALSE(Alive(child)) << "CMD's child " << child << " runs on after zkr exited 4";
  // So nobody who gets the lock next runs beside it.
  Process& next = Zkr({"lock", "--path=" + lock, "--nonblock", "--", "true"});
  EXPECT_EQ(next.Wait(absl::Seconds(20)), 0) << next.Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliHardeningTest, TerminatedHolderReleasesOnlyAfterItsWholeGroupHasExited) {
  const std::string lock = Path("term-group");
  // CMD's shell dies of SIGTERM; a background job of it ignores SIGTERM and
  // works on for a moment, then marks that it is done.
  Process& holder = Zkr(
      {"lock", "--path=" + lock, "--", "sh", "-c",
       absl::StrCat("(trap '' TERM INT; sleep 1.5; touch ", ShQuote(File("late.done")), ") & touch ",
                    ShQuote(File("held")), "; sleep 311")});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  // The next holder waits in the queue, then checks that the late job was
  // done before it got in.
  Process& next =
      Zkr({"lock", "--path=" + lock, "--timeout=30s", "--", "sh", "-c",
           absl::StrCat("if [ -e ", ShQuote(File("late.done")),
                        " ]; then echo after; else echo beside; fi")});
  ASSERT_TRUE(WaitForChildren(lock, 2)) << next.Describe();
  holder.Signal(SIGTERM);
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 128 + SIGTERM) << holder.Describe();
  EXPECT_TRUE(FileExists(File("late.done"))) << "zkr exited before its CMD's group did";
  EXPECT_EQ(next.Wait(absl::Seconds(20)), 0) << next.Describe();
  EXPECT_EQ(next.Stdout(), "after\n") << "two holders ran at once";
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliHardeningTest, ForwardedInterruptReachesTheCommandsForegroundChildAtOnce) {
  const std::string lock = Path("int-group");
  // CMD's shell runs `sleep` in the foreground; the interrupt is sent once
  // that sleep runs (a child of the shell whose pid CMD wrote, exec'd), not
  // before the shell forked it.
  Process& holder = Zkr({"lock", "--path=" + lock, "--", "sh", "-c",
                         absl::StrCat("echo $$ > ", ShQuote(File("sh.pid.tmp")), " && mv ",
                                      ShQuote(File("sh.pid.tmp")), " ", ShQuote(File("sh.pid")),
                                      "; sleep 20; echo finished")});
  ASSERT_TRUE(WaitForFile("sh.pid", holder)) << holder.Describe();
  const pid_t shell = PidIn("sh.pid");
  ASSERT_GT(shell, 0);
  ASSERT_TRUE(WaitUntil([&] { return RunsChildNamed(shell, "sleep"); }, absl::Seconds(20)))
      << "CMD's shell never started its sleep: " << holder.Describe();
  const absl::Time start = absl::Now();
  holder.Signal(SIGINT);
  const std::optional<int> code = holder.Wait(absl::Seconds(30));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << "SIGINT waited for CMD's sleep";
  EXPECT_EQ(code, 128 + SIGINT) << holder.Describe();
  EXPECT_EQ(holder.Stdout(), "") << holder.Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliHardeningTest, AuthMakesTheQueueTheCreatorsOwn) {
  // A parent only alice may use, created by alice.
  std::unique_ptr<Session> alice = SessionAs("alice:secret");
  ASSERT_NE(alice, nullptr);
  const std::string parent = Path("alice-only");
  ASSERT_TRUE(alice->Create(parent, "", CreateMode::kPersistent, CreateOptions{CreatorAllAcl()}).ok());
  const std::string lock = parent + "/lock";
  Process& holder = Holder(lock, {"--auth=digest:alice:secret"});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  const std::string held = HeldNode("held");

  // Without alice's password, nobody can delete the holder's node or queue.
  std::unique_ptr<Session> mallory = SessionAs("mallory:secret");
  ASSERT_NE(mallory, nullptr);
  for (Session* intruder : {&admin(), mallory.get()}) {
    const absl::Status deleted = intruder->Delete(held);
    EXPECT_TRUE(absl::IsPermissionDenied(deleted)) << "deleted the holder's node: " << deleted;
  }
  for (const std::vector<std::string>& auth :
       {std::vector<std::string>{}, std::vector<std::string>{"--auth=digest:alice:wrong"}}) {
    Process& intruder = Zkr(testing::Concat(
        testing::Concat({"lock", "--path=" + lock, "--nonblock"}, auth), {"--", "echo", "ran"}));
    EXPECT_EQ(intruder.Wait(absl::Seconds(20)), 1) << intruder.Describe();
    EXPECT_THAT(intruder.Stderr(), HasSubstr("not authenticated")) << intruder.Describe();
    EXPECT_EQ(intruder.Stdout(), "") << "CMD ran beside the holder";
  }
  EXPECT_FALSE(holder.Exited()) << holder.Describe();
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  // --acl=open opts out: the queue is anybody's.
  Process& open = Zkr({"lock", "--path=" + Path("open"), "--auth=digest:alice:secret",
                       "--acl=open", "--", "true"});
  EXPECT_EQ(open.Wait(absl::Seconds(20)), 0) << open.Describe();
  auto stat = admin().Exists(Path("open"));
  ASSERT_TRUE(stat.ok());
  if (stat->has_value()) {
    EXPECT_TRUE(admin().Delete(Path("open")).ok());
  }
  Process& bad = Zkr({"lock", "--path=" + lock, "--acl=everyone", "--", "true"});
  EXPECT_EQ(bad.Wait(absl::Seconds(20)), 2) << bad.Describe();
  EXPECT_THAT(bad.Stderr(), HasSubstr("--acl=everyone")) << bad.Describe();
  // Alice cleans up what only she may touch.
  EXPECT_TRUE(testing::DeleteRecursively(*alice, parent).ok());
}

// ---- told to stop -------------------------------------------------------------

TEST_F(CliHardeningTest, BarrierMemberInterruptedWhileLeavingExits130AndLeaves) {
  const std::string barrier = Path("leave-int");
  auto member = [&](const std::string& id, const std::string& script) -> Process& {
    return Zkr({"barrier", "--path=" + barrier, "--count=2", "--id=" + id, "--timeout=60s", "enter",
                "--", "sh", "-c", script});
  };
  Process& quick = member("quick", absl::StrCat("touch ", ShQuote(File("quick.done"))));
  Process& slow = member("slow", absl::StrCat("touch ", ShQuote(File("slow.in")),
                                              "; trap 'exit 0' TERM; sleep 311 & wait"));
  ASSERT_TRUE(WaitForFile("quick.done", quick)) << quick.Describe();
  ASSERT_TRUE(WaitForFile("slow.in", slow)) << slow.Describe();
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
  EXPECT_EQ(quick.Wait(absl::Seconds(30)), 130) << quick.Describe();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3)) << "waited for the other member";
  for (const std::string& child : Children(barrier)) {
    EXPECT_THAT(child, Not(HasSubstr("quick"))) << "the interrupted member's node stayed";
  }
  slow.Signal(SIGTERM);  // CMD exits 0; the only member left leaves at once
  EXPECT_EQ(slow.Wait(absl::Seconds(20)), 0) << slow.Describe();
  ExpectEmptyAndDelete(barrier);
}

TEST_F(CliHardeningTest, InterruptedBarrierWaitExits130AtOnce) {
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

TEST_F(CliHardeningTest, InterruptWhileConnectingExits130AtOnce) {
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

TEST_F(CliHardeningTest, InterruptInAnyPhaseOfASlowCampaignExits130AndLeavesNoNode) {
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

// ---- conventions --------------------------------------------------------------

TEST_F(CliHardeningTest, ZeroTimeoutTriesOnce) {
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

TEST_F(CliHardeningTest, CommandNotFoundExits127AndNotExecutable126) {
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

TEST_F(CliHardeningTest, MissingChrootIsNamedAtOnce) {
  const std::string chroot = "/zkr-cli-no-such-chroot";
  const absl::Time start = absl::Now();
  Process& p = ZkrRaw({"lock", "--zk=" + connect_ + chroot, "--path=/lock", "--", "echo", "ran"});
  EXPECT_EQ(p.Wait(absl::Seconds(30)), 1) << p.Describe();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << p.Describe();
  EXPECT_THAT(p.Stderr(), HasSubstr(chroot)) << p.Describe();
  EXPECT_THAT(p.Stderr(), HasSubstr("does not exist")) << p.Describe();
  EXPECT_EQ(p.Stdout(), "") << p.Describe();
}

TEST_F(CliHardeningTest, InspectJsonParsesWhateverTheNodesHold) {
  const std::string lock = Path("json");
  // Data another client wrote: not UTF-8, control characters, quotes.
  Process& holder = Holder(lock, {std::string("--purpose=caf\xe9 \x01\x7f \"q\" \\ \xf0\x9f\x92")});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& json = Zkr({"inspect", "--path=" + lock, "--json"});
  ASSERT_EQ(json.Wait(absl::Seconds(20)), 0) << json.Describe();
  std::optional<Json> parsed = JsonReader::Parse(json.Stdout());
  ASSERT_TRUE(parsed.has_value()) << "not JSON: " << json.Stdout();
  const Json* entries = parsed->Get("entries");
  ASSERT_NE(entries, nullptr);
  ASSERT_THAT(entries->items, SizeIs(1));
  const Json* data = entries->items[0].Get("data");
  ASSERT_NE(data, nullptr);
  EXPECT_THAT(data->string, HasSubstr("caf\xef\xbf\xbd \x01\x7f \"q\" \\ \xef\xbf\xbd"))
      << "each invalid byte sequence becomes U+FFFD; the rest is kept";
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  // An election id is printed by --who and listed by inspect: it must be text.
  Process& elect = Zkr({"elect", "--path=" + Path("json-elect"), std::string("--id=caf\xe9"),
                        "--", "true"});
  EXPECT_EQ(elect.Wait(absl::Seconds(20)), 2) << elect.Describe();
  EXPECT_THAT(elect.Stderr(), HasSubstr("--id")) << elect.Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliHardeningTest, CommandInheritsNoDescriptorButTheStandardThree) {
  const std::string lock = Path("fds");
  // CMD lists its own descriptors; the listing's own directory is the only
  // one it may add to 0-2.
  Process& own = Zkr({"lock", "--path=" + lock, "--", "ls", "-l", "/proc/self/fd"});
  ASSERT_EQ(own.Wait(absl::Seconds(20)), 0) << own.Describe();
  std::set<std::string> inherited;
  for (const std::string& line : Lines(own.Stdout())) {
    const size_t arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;  // "total 0"
    const std::string target = line.substr(arrow + 4);
    const std::string fd = line.substr(line.rfind(' ', arrow - 1) + 1, arrow - line.rfind(' ', arrow - 1) - 1);
    if (!absl::StartsWith(target, "/proc/")) inherited.insert(fd);
  }
  EXPECT_THAT(inherited, ElementsAre("0", "1", "2")) << own.Stdout();
  // Nor does the process that waits for CMD hold the session's socket.
  Process& parent = Zkr({"lock", "--path=" + lock, "--", "sh", "-c",
                         "for f in /proc/$PPID/fd/*; do readlink $f; done"});
  ASSERT_EQ(parent.Wait(absl::Seconds(20)), 0) << parent.Describe();
  EXPECT_THAT(parent.Stdout(), Not(HasSubstr("socket:"))) << parent.Describe();
  EXPECT_THAT(Lines(parent.Stdout()), SizeIs(::testing::Ge(3))) << parent.Describe();
  ExpectEmptyAndDelete(lock);
}

}  // namespace
}  // namespace zkr
