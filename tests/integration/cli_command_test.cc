// zkr and CMD's process group, end to end: CMD and its children die with a
// killed zkr; a lost lock terminates them before exit 4; a terminated holder
// releases only once the whole group has exited; a forwarded SIGINT reaches
// the foreground child; CMD inherits only the standard descriptors; closed
// descriptors do not hang; a CMD that calls setsid is still waited for, a
// background job in its group too, a process it setsid's is not.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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
using ::testing::Not;
using ::testing::SizeIs;
using testing::Alive;
using testing::CliRunTest;
using testing::FileExists;
using testing::Lines;
using testing::Process;
using testing::ReadFile;
using testing::RunsChildNamed;
using testing::ShQuote;
using testing::WaitUntil;

// Reaps `pid` if it died as our child (this test is a subreaper, so a CMD
// orphaned by its zkr becomes ours); never blocks.
void ReapIfOurs(pid_t pid) { (void)waitpid(pid, nullptr, WNOHANG); }

class CliCommandTest : public CliRunTest {
 protected:
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

TEST_F(CliCommandTest, KilledLockHolderTakesItsCommandAndItsChildrenWithIt) {
  const std::string lock = Path("kill9");
  Process& holder = Zkr(
      testing::Concat({"lock", "--path=" + lock, "--session_timeout=2s", "--"}, TickingWithAChild()));
  ExpectCommandDiesWithKilledZkr(holder);
  EXPECT_TRUE(WaitForChildren(lock, 0)) << "the killed holder's session never expired";
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliCommandTest, KilledLeaderTakesItsCommandAndItsChildrenWithIt) {
  const std::string election = Path("kill9-elect");
  Process& leader = Zkr(testing::Concat(
      {"elect", "--path=" + election, "--id=a", "--session_timeout=2s", "--"}, TickingWithAChild()));
  ExpectCommandDiesWithKilledZkr(leader);
  EXPECT_TRUE(WaitForChildren(election, 0)) << "the killed leader's session never expired";
  ExpectEmptyAndDelete(election);
}

TEST_F(CliCommandTest, LostLockTerminatesTheCommandsChildrenBeforeExiting4) {
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

TEST_F(CliCommandTest, TerminatedHolderReleasesOnlyAfterItsWholeGroupHasExited) {
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

TEST_F(CliCommandTest, ForwardedInterruptReachesTheCommandsForegroundChildAtOnce) {
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

TEST_F(CliCommandTest, CommandInheritsNoDescriptorButTheStandardThree) {
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

// zkr started with stdin, stdout and stderr closed, and a CMD that closes
// its own: no hang, CMD's status.
TEST_F(CliCommandTest, ClosedDescriptorsDoNotHang) {
  const std::string lock = Path("closed");
  for (const char* closing : {"<&-", "<&- >&-", "<&- >&- 2>&-"}) {
    SCOPED_TRACE(closing);
    Process& p = *processes_
                      .emplace_back(std::make_unique<Process>(
                          std::vector<std::string>{
                              "sh", "-c",
                              absl::StrCat("exec ", closing, "; exec ", ShQuote(binary_),
                                           " lock --zk=", connect_, " --path=", lock,
                                           " -- sh -c 'echo out; echo err >&2; exit 7'")},
                          File("c.out"), File("c.err")));
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 7) << p.Describe();
  }
  for (const char* body : {"exec >&- 2>&- <&-; exit 6", "exec >&-; sleep 0.2; exit 6"}) {
    Result r = Run({"lock", "--path=" + lock, "--", "sh", "-c", body}, absl::Seconds(20));
    EXPECT_EQ(r.code, 6) << r.describe;
  }
  // inspect with stdout closed still exits (0), never hangs.
  Process& i = *processes_.emplace_back(std::make_unique<Process>(
      std::vector<std::string>{"sh", "-c",
                               absl::StrCat("exec >&-; exec ", ShQuote(binary_),
                                            " inspect --zk=", connect_, " --path=", lock)},
      File("i.out"), File("i.err")));
  EXPECT_TRUE(i.Wait(absl::Seconds(20)).has_value()) << i.Describe();
  ExpectEmptyAndDelete(lock);
}

// CMD itself calls setsid (setsid(1) execs in place when not a group
// leader): CMD has left its group, but it is still CMD. zkr must hold the
// lock while CMD runs and exit with its status (9), not release early.
TEST_F(CliCommandTest, CmdThatIsItselfSetsidIsStillWaitedFor) {
  const std::string lock = Path("selfsetsid");
  Process& p = Zkr({"lock", "--path=" + lock, "--", "setsid", "sh", "-c",
                    absl::StrCat("touch ", ShQuote(File("started")), "; i=0; while [ ! -e ",
                                 ShQuote(File("release")),
                                 " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; exit 9")});
  ASSERT_TRUE(WaitForFile("started", p)) << p.Describe();
  // While CMD runs, the lock is held and zkr has not exited.
  EXPECT_FALSE(p.Exited()) << p.Describe();
  EXPECT_EQ(Children(lock).size(), 1u) << "released while CMD runs";
  Touch("release");
  EXPECT_EQ(p.Wait(absl::Seconds(30)), 9) << p.Describe();
  ExpectEmptyAndDelete(lock);
}

// A background job left in CMD's group (not setsid'd) keeps the hold until
// it exits, as documented; zkr exits with CMD's status, not the job's.
TEST_F(CliCommandTest, BackgroundJobInTheGroupIsWaitedFor) {
  const std::string lock = Path("bg");
  Process& p = Zkr({"lock", "--path=" + lock, "--", "sh", "-c",
                    absl::StrCat("(while [ ! -e ", ShQuote(File("release")),
                                 " ]; do sleep 0.05; done; touch ", ShQuote(File("jobdone")),
                                 "; exit 4) & touch ", ShQuote(File("cmdexit")), "; exit 5")});
  ASSERT_TRUE(WaitForFile("cmdexit", p)) << p.Describe();
  EXPECT_EQ(Children(lock).size(), 1u);
  Touch("release");
  EXPECT_EQ(p.Wait(absl::Seconds(30)), 5) << p.Describe();
  EXPECT_TRUE(FileExists(File("jobdone")));
  ExpectEmptyAndDelete(lock);
}

// CMD starts a background job and exits 3 at once. The job waits until CMD
// is gone (so it has become the guardian's orphan while still in CMD's
// group), then leaves the group (setsid) and sleeps on. zkr must exit 3 as
// soon as its group is empty and release the lock; the setsid'd process
// runs on. Repeated: whether the orphan was reparented before it left the
// group was a race.
TEST_F(CliCommandTest, SetsidChildOfTheCommandNeitherHoldsNorIsKilled) {
  const std::string lock = Path("setsid");
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    const std::string pid_file = File(absl::StrCat("daemon", round, ".pid"));
    // $$ in the ( ) job is CMD's shell; kill -0 fails once it is reaped.
    Process& holder = Zkr(
        {"lock", "--path=" + lock, "--timeout=20s", "--", "sh", "-c",
         absl::StrCat("(while kill -0 $$ 2>/dev/null; do sleep 0.01; done; exec sh -c ",
                      ShQuote(absl::StrCat("echo $$ > ", ShQuote(pid_file),
                                           "; exec setsid sleep 300")),
                      " </dev/null >/dev/null 2>&1) & exit 3")});
    const std::optional<int> code = holder.Wait(absl::Seconds(30));  // a hang detector
    const pid_t daemon = PidIn(absl::StrCat("daemon", round, ".pid"));
    EXPECT_EQ(code, 3) << holder.Describe();
    EXPECT_TRUE(WaitForChildren(lock, 0)) << "the lock was not released";
    ASSERT_GT(daemon, 0) << "zkr exited before the job left CMD's group";
    EXPECT_EQ(kill(daemon, 0), 0) << "the setsid'd process was killed";
    EXPECT_EQ(getsid(daemon), daemon);
    kill(daemon, SIGKILL);
    // This test is a subreaper: the orphan may have become ours.
    WaitUntil([&] { return waitpid(daemon, nullptr, WNOHANG) != 0 || kill(daemon, 0) != 0; },
              absl::Seconds(5));
    if (code != 3) break;
  }
  ExpectEmptyAndDelete(lock);
}

}  // namespace
}  // namespace zkr
