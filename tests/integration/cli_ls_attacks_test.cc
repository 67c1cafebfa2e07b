// An independent review's attacks on zkr ls (issue 35, item 2): what the man
// page, --help and the README promise of it, tried against the real binary
// and a real server: the default ROOT, -R at any depth, one queue too large
// to inspect among others, output that cannot be written, JSON of hostile
// data, --watch through an expiry and many changes (watches kept bounded),
// and the live view in a real terminal (tmux) through Ctrl-Z.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace {

using testing::CliTest;
using testing::Eventually;

class CliLsAttacksTest : public CliTest {
 protected:
  // Runs zkr to its end; its exit code.
  int Run(const std::vector<std::string>& args, std::string* out, std::string* err = nullptr) {
    testing::Process& p = Zkr(args);
    std::optional<int> code = p.Wait(absl::Seconds(60));
    *out = p.Stdout();
    if (err != nullptr) *err = p.Stderr();
    return code.value_or(-1);
  }
  // Whether `text` is one JSON document (python3's json.loads).
  bool ParsesAsJson(const std::string& text) {
    const std::string file = File("doc.json");
    std::ofstream(file) << text;
    return system(absl::StrCat("python3 -c 'import json,sys; json.load(open(sys.argv[1]))' ",
                               testing::ShQuote(file), " 2>/dev/null")
                      .c_str()) == 0;
  }
  static bool HaveTmux() { return system("command -v tmux >/dev/null 2>&1") == 0; }
  // `tmux -L <socket> <command>`'s output (or "tmux failed: ...").
  std::string Tmux(const std::string& socket, const std::string& command) {
    const std::string file = File("tmux.out");
    const int rc = system(
        absl::StrCat("tmux -L ", socket, " ", command, " > ", file, " 2>&1").c_str());
    return rc == 0 ? testing::ReadFile(file)
                   : absl::StrCat("tmux failed: ", testing::ReadFile(file));
  }
};

// SYNOPSIS and OPTIONS: "--path=ROOT ... where to look (default /)"; README:
// "zkr ls [--path=/] ...". Observed: `zkr ls`, `zkr ls --path=/` and
// `zkr ls -R --json` all exit 2: 'zkr ls: --path: "/" cannot be a lock or
// election' (RunLs defaults to "/", then applies the lock/election path check).
TEST_F(CliLsAttacksTest, TheDefaultRootSlashIsListedNotAUsageError) {
  std::string out, err;
  // The fixture's tree lives under /zkr-test: a held lock makes "/" non-empty.
  auto lock = SharedLock::Create(admin(), Path("held"));
  ASSERT_TRUE(lock.ok());
  auto hold = (*lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(hold.ok());

  const int bare = Run({"ls"}, &out, &err);
  EXPECT_EQ(bare, 0) << "zkr ls (default --path=/): " << err;
  EXPECT_FALSE(absl::StrContains(err, "cannot be a lock")) << err;

  const int slash = Run({"ls", "--path=/"}, &out, &err);
  EXPECT_EQ(slash, 0) << "zkr ls --path=/: " << err;

  const int json = Run({"ls", "-R", "--json", "--path=/"}, &out, &err);
  EXPECT_EQ(json, 0) << "zkr ls -R --json --path=/: " << err;
  EXPECT_TRUE(ParsesAsJson(out)) << "not JSON: [" << out << "]";
  // -R from "/" reaches the fixture's lock (and copes with /zookeeper).
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("\"path\":\"", Path("held"), "\""))) << out;

  ASSERT_TRUE(hold->Release().ok());
  ASSERT_TRUE(testing::DeleteRecursively(admin(), Path("held")).ok());
}

// OPTIONS: "-R, --recursive: ls: also every directory below ROOT, at any
// depth". Observed: a lock 71 directories below ROOT is not shown, and zkr
// says "no lock, semaphore, election, group or barrier at or below ROOT"
// (exit 0): FindQueuesBelow stops at kRecursiveDepth = 64.
TEST_F(CliLsAttacksTest, RecursiveFindsAQueueAtAnyDepth) {
  std::string deep = Path("deep");
  for (int i = 0; i < 70; ++i) absl::StrAppend(&deep, "/d");
  const std::string lockp = deep + "/lk";
  auto lock = SharedLock::Create(admin(), lockp);
  ASSERT_TRUE(lock.ok()) << lock.status();
  auto hold = (*lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(hold.ok()) << hold.status();

  std::string out, err;
  EXPECT_EQ(Run({"ls", "-R", "--path=" + Path("deep")}, &out, &err), 0) << err;
  EXPECT_TRUE(absl::StrContains(out, lockp + "  lock: 1 holds, 0 wait"))
      << "stdout: [" << out << "] stderr: [" << err << "]";
  EXPECT_FALSE(absl::StrContains(err, "no lock, semaphore")) << err;

  // Guard: from a directory nearer to it, it is found.
  EXPECT_EQ(Run({"ls", "-R", "--path=" + Path("deep/d/d/d/d/d/d/d/d/d/d")}, &out, &err), 0) << err;
  EXPECT_TRUE(absl::StrContains(out, lockp + "  lock: 1 holds, 0 wait")) << out << err;

  ASSERT_TRUE(hold->Release().ok());
  ASSERT_TRUE(testing::DeleteRecursively(admin(), Path("deep")).ok());
}

// DESCRIPTION: ls "Lists every lock, semaphore, election, group and barrier
// in --path". Observed: one queue of 2001 nodes (InspectQueue's refusal)
// makes the whole listing fail, exit 1, the held lock beside it unlisted,
// and --json prints nothing at all ("zkr ls: inspect ROOT/big: 2001 nodes are
// queued there, more than the 2000 ..."). The big queue should be named as
// not inspected, the others listed.
TEST_F(CliLsAttacksTest, OneQueueTooLargeToInspectDoesNotHideTheOthers) {
  const std::string root = Path("r"), big = Path("r/big"), ok = Path("r/ok");
  CreateOptions parents;
  parents.make_parents = true;
  ASSERT_TRUE(admin().Create(big, "", CreateMode::kPersistent, parents).ok());
  for (int i = 0; i < 2001; ++i) {
    ASSERT_TRUE(admin().Create(big + "/h_1_r-W-", "", CreateMode::kPersistentSequential).ok());
  }
  auto lock = SharedLock::Create(admin(), ok);
  ASSERT_TRUE(lock.ok());
  auto hold = (*lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(hold.ok());

  std::string out, err;
  EXPECT_EQ(Run({"ls", "--path=" + root}, &out, &err), 0) << err;
  EXPECT_TRUE(absl::StrContains(out, ok + "  lock: 1 holds, 0 wait"))
      << "stdout: [" << out << "] stderr: [" << err << "]";
  EXPECT_TRUE(absl::StrContains(out + err, big)) << "the big queue is not named at all";

  Run({"ls", "--json", "--path=" + root}, &out, &err);
  EXPECT_TRUE(ParsesAsJson(out)) << "--json printed no JSON: [" << out << "] stderr: [" << err
                                 << "]";
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("\"path\":\"", ok, "\""))) << out;

  ASSERT_TRUE(hold->Release().ok());
  ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
}

// "like top(1)", "a full screen ... left as it was found": Ctrl-Z suspends
// zkr with the terminal still in the alternate screen and the cursor
// hidden, so the shell's prompt (and everything typed while zkr is stopped)
// lands on the view's screen without a cursor. top leaves the alternate
// screen on SIGTSTP and re-enters it on SIGCONT. Observed (tmux):
// alternate_on=1 cursor_flag=0 after Ctrl-Z, "[1]+ Stopped" drawn over the view.
TEST_F(CliLsAttacksTest, CtrlZLeavesTheShellANormalScreenAndFgRedrawsTheView) {
  if (!HaveTmux()) GTEST_SKIP() << "tmux is not installed";
  const std::string root = Path("z");
  ASSERT_TRUE(admin().Create(root, "", CreateMode::kPersistent).ok());
  const std::string socket = absl::StrCat("zkr-ls-attack-", getpid());
  Tmux(socket, "-f /dev/null new-session -d -s z -x 250 -y 30 'bash --norc --noprofile -i'");
  Tmux(socket, "send-keys -t z \"PS1='PROMPT> '\" Enter");
  const std::string command =
      absl::StrCat(binary_, " ls --zk=", connect_, " --watch --path=", root);
  Tmux(socket, absl::StrCat("send-keys -t z ", testing::ShQuote(command), " Enter"));
  auto screen = [&] { return Tmux(socket, "capture-pane -p -t z"); };
  auto state = [&] { return Tmux(socket, "display -p -t z 'alt=#{alternate_on} cursor=#{cursor_flag}'"); };
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(screen(), "(Ctrl-C quits)"); },
                         absl::Seconds(20)))
      << screen();
  EXPECT_TRUE(absl::StrContains(state(), "alt=1")) << state();

  Tmux(socket, "send-keys -t z C-z");
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(screen(), "Stopped"); }, absl::Seconds(10)))
      << screen();
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_TRUE(absl::StrContains(state(), "alt=0 cursor=1"))
      << "after Ctrl-Z: " << state() << "\n" << screen();

  Tmux(socket, "send-keys -t z fg Enter");
  EXPECT_TRUE(Eventually([&] { return absl::StrContains(state(), "alt=1"); }, absl::Seconds(10)))
      << "after fg: " << state();
  EXPECT_TRUE(Eventually([&] { return absl::StrContains(screen(), "(Ctrl-C quits)"); },
                         absl::Seconds(10)))
      << screen();
  Tmux(socket, "send-keys -t z C-c");
  EXPECT_TRUE(Eventually([&] { return absl::StrContains(state(), "alt=0 cursor=1"); },
                         absl::Seconds(10)))
      << "after Ctrl-C: " << state();
  Tmux(socket, "kill-server");
  ASSERT_TRUE(admin().Delete(root).ok());
}

// Guard (holds): data with control characters, malformed UTF-8, NUL and a
// megabyte-ish length; the table shows it escaped on one line, --json parses.
TEST_F(CliLsAttacksTest, HostileNodeDataIsEscapedInTheTableAndParsesAsJson) {
  const std::string root = Path("h"), elect = Path("h/e");
  CreateOptions parents;
  parents.make_parents = true;
  ASSERT_TRUE(admin().Create(elect, "", CreateMode::kPersistent, parents).ok());
  std::string hostile("id\x1b]0;pwned\x07\n\r\t\xff\xc0\x80\xed\xa0\x80\xc2\x9b" "2J\"\\");
  hostile.push_back('\0');
  hostile += std::string(500000, 'x');
  // A lock whose purpose is hostile, and a node of a peer-looking group.
  ASSERT_TRUE(admin()
                  .Create(Path("h/l/host_1_abc-W-"),
                          absl::StrCat("pid=1\nmode=write\npurpose=", hostile, "\n"),
                          CreateMode::kPersistentSequential, parents)
                  .ok());
  std::string out, err;
  ASSERT_EQ(Run({"ls", "--path=" + root}, &out, &err), 0) << err;
  EXPECT_FALSE(absl::StrContains(out, "\x1b")) << "raw ESC in the table";
  EXPECT_FALSE(absl::StrContains(out, "\xc2\x9b")) << "raw C1 CSI in the table";
  EXPECT_FALSE(absl::StrContains(out, std::string("\0", 1))) << "raw NUL in the table";
  ASSERT_EQ(Run({"ls", "-R", "--json", "--path=" + root}, &out, &err), 0) << err;
  EXPECT_TRUE(ParsesAsJson(out)) << out.substr(0, 400);
  EXPECT_EQ(testing::Lines(out).size(), 1u);
  ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
}

// Guard (holds): bad --path values exit 2 naming the value.
TEST_F(CliLsAttacksTest, BadRootsAreUsageErrorsNamingTheValue) {
  for (const std::string& bad : {std::string("relative"), std::string("/a/"), std::string("//a"),
                                 std::string("/a/./b"), std::string("/a\x01" "b")}) {
    std::string out, err;
    EXPECT_EQ(Run({"ls", "--path=" + bad}, &out, &err), 2) << bad << ": " << err;
    EXPECT_TRUE(absl::StrContains(err, "invalid path")) << err;
    EXPECT_EQ(out, "");
  }
}

// Guard (holds): --watch into a pipe that closes (`| head -1`) ends at the
// next change with exit 1 and a message.
TEST_F(CliLsAttacksTest, WatchIntoAClosedPipeExits1WithAMessage) {
  const std::string root = Path("p");
  ASSERT_TRUE(admin().Create(root, "", CreateMode::kPersistent).ok());
  const std::string status = File("status"), err = File("err");
  processes_.push_back(std::make_unique<testing::Process>(
      std::vector<std::string>{
          "bash", "-c",
          absl::StrCat(testing::ShQuote(binary_), " ls --zk=", connect_, " --watch --path=", root,
                       " 2> ", testing::ShQuote(err), " | head -1; echo ${PIPESTATUS[0]} > ",
                       testing::ShQuote(status))},
      File("sh.out"), File("sh.err")));
  testing::Process& shell = *processes_.back();
  ASSERT_TRUE(Eventually([&] { return !shell.Stdout().empty(); }, absl::Seconds(20)));
  // Changes until zkr notices that nobody reads.
  for (int i = 0; i < 20 && !testing::FileExists(status); ++i) {
    auto node = admin().Create(root + "/h_1_r-W-", "", CreateMode::kEphemeralSequential);
    ASSERT_TRUE(node.ok());
    absl::SleepFor(absl::Milliseconds(300));
    ASSERT_TRUE(admin().Delete(node->path).ok());
    absl::SleepFor(absl::Milliseconds(300));
  }
  EXPECT_EQ(shell.Wait(absl::Seconds(20)), 0);
  EXPECT_EQ(testing::ReadFile(status), "1\n");
  EXPECT_TRUE(absl::StrContains(testing::ReadFile(err), "cannot write")) << testing::ReadFile(err);
  ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
}

// Guard (holds): --watch (plain, --json) goes on through its session's
// expiry (zkr stopped past the timeout) and shows what changed after it.
TEST_F(CliLsAttacksTest, WatchGoesOnThroughASessionExpiry) {
  const std::string root = Path("x"), lockp = Path("x/after");
  ASSERT_TRUE(admin().Create(root, "", CreateMode::kPersistent).ok());
  testing::Process& watch =
      Zkr({"ls", "--watch", "--json", "--session_timeout=1s", "--path=" + root});
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(watch.Stdout(), "\"exists\":true"); }));
  watch.Signal(SIGSTOP);
  absl::SleepFor(absl::Seconds(5));
  watch.Signal(SIGCONT);
  absl::SleepFor(absl::Seconds(2));
  auto lock = SharedLock::Create(admin(), lockp);
  auto hold = (*lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(hold.ok());
  EXPECT_TRUE(Eventually([&] { return absl::StrContains(watch.Stdout(), lockp); },
                         absl::Seconds(20)))
      << watch.Describe();
  for (const std::string& line : testing::Lines(watch.Stdout())) {
    EXPECT_TRUE(ParsesAsJson(line)) << line;
  }
  watch.Signal(SIGTERM);
  EXPECT_EQ(watch.Wait(absl::Seconds(10)), 128 + SIGTERM);
  ASSERT_TRUE(hold->Release().ok());
  ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
}

// Guard (holds): --watch re-arms one child watch per directory, never more:
// the server's watch count does not grow with the number of changes.
TEST_F(CliLsAttacksTest, WatchKeepsItsServerWatchesBoundedOverManyChanges) {
  const std::string root = Path("c");
  CreateOptions parents;
  parents.make_parents = true;
  ASSERT_TRUE(admin().Create(root + "/q", "", CreateMode::kPersistent, parents).ok());
  const int64_t before = testing::SharedServerCounter("zk_watch_count");
  if (before < 0) GTEST_SKIP() << "no mntr on this server";
  testing::Process& watch = Zkr({"ls", "--watch", "--path=" + root});
  auto churn = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto node = admin().Create(root + "/q/h_1_r-W-", "", CreateMode::kEphemeralSequential);
      ASSERT_TRUE(node.ok());
      absl::SleepFor(absl::Milliseconds(80));
      ASSERT_TRUE(admin().Delete(node->path).ok());
      absl::SleepFor(absl::Milliseconds(80));
    }
  };
  churn(5);
  absl::SleepFor(absl::Milliseconds(1500));
  const int64_t early = testing::SharedServerCounter("zk_watch_count");
  churn(40);
  absl::SleepFor(absl::Milliseconds(1500));
  const int64_t late = testing::SharedServerCounter("zk_watch_count");
  EXPECT_LE(late, early) << "watches before zkr " << before << ", after 5 changes " << early
                         << ", after 45 " << late;
  EXPECT_LE(early - before, 2) << "ROOT and the queue: at most two";
  watch.Signal(SIGTERM);
  EXPECT_EQ(watch.Wait(absl::Seconds(10)), 128 + SIGTERM);
  ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
}

// OPTIONS: "-R ... every directory below ROOT, at any depth". Observed: a
// lock in a directory below a group's directory (ROOT/mix/sub/lk, with a
// group at ROOT/mix) is never shown: FindQueuesBelow does not descend into a
// directory that is a queue, and `ls -R --path=ROOT/mix` lists the group alone.
TEST_F(CliLsAttacksTest, RecursiveFindsAQueueNestedInsideAnotherQueuesDirectory) {
  const std::string root = Path("mp"), mix = Path("mp/mix"), lockp = Path("mp/mix/sub/lk");
  testing::Process& member = Zkr({"group", "--path=" + mix, "--id=m1", "join", "--", "sleep", "60"});
  ASSERT_TRUE(Eventually([&] { return Children(mix).size() == 1; })) << member.Describe();
  auto lock = SharedLock::Create(admin(), lockp);
  ASSERT_TRUE(lock.ok());
  auto hold = (*lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(hold.ok());

  std::string out, err;
  EXPECT_EQ(Run({"ls", "-R", "--path=" + root}, &out, &err), 0) << err;
  EXPECT_TRUE(absl::StrContains(out, mix + "  election or group")) << out;
  EXPECT_TRUE(absl::StrContains(out, lockp + "  lock: 1 holds, 0 wait"))
      << "ls -R " << root << ":\n" << out << err;
  EXPECT_EQ(Run({"ls", "-R", "--path=" + mix}, &out, &err), 0) << err;
  EXPECT_TRUE(absl::StrContains(out, lockp + "  lock: 1 holds, 0 wait"))
      << "ls -R " << mix << ":\n" << out << err;

  ASSERT_TRUE(hold->Release().ok());
  member.Signal(SIGTERM);
  member.Wait(absl::Seconds(10));
  ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
}

// DESCRIPTION: each participant's "host and pid of a zkr participant".
// Observed: a `zkr group join --id=worker-7` member is shown with HOST
// "worker-7" (its id: the node is "<id>_<pid>_<random>"), --json
// "host":"worker-7"; a `zkr elect --id=...` candidate shows the real host.
// Where the host is not known it should say "-", not the id.
TEST_F(CliLsAttacksTest, AGroupMembersHostIsItsHostNotItsId) {
  const std::string root = Path("g"), group = Path("g/workers");
  testing::Process& member =
      Zkr({"group", "--path=" + group, "--id=worker-7", "join", "--", "sleep", "60"});
  ASSERT_TRUE(Eventually([&] { return Children(group).size() == 1; })) << member.Describe();
  std::string out, err;
  ASSERT_EQ(Run({"ls", "--json", "--path=" + root}, &out, &err), 0) << err;
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  const bool real_host = absl::StrContains(out, absl::StrCat("\"host\":\"", name, "\""));
  const bool unknown = absl::StrContains(out, "\"host\":\"-\"");
  EXPECT_TRUE(real_host || unknown) << "host is neither " << name << " nor -: " << out;
  EXPECT_FALSE(absl::StrContains(out, "\"host\":\"worker-7\"")) << out;
  member.Signal(SIGTERM);
  member.Wait(absl::Seconds(10));
  ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
}

// "gone", "zombie" (exited, not yet reaped by its parent), or its state
// and where it waits (/proc/PID/stat's third field, /proc/PID/wchan).
std::string ProcessState(pid_t pid) {
  const std::string stat = testing::ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  if (stat.empty()) return "gone";
  const size_t paren = stat.rfind(')');
  const std::string state = paren == std::string::npos ? stat : stat.substr(paren + 2, 1);
  if (state == "Z") return "zombie";
  return absl::StrCat("running, state ", state, ", waiting in ",
                      testing::ReadFile(absl::StrCat("/proc/", pid, "/wchan")));
}

// EXIT STATUS: "ls ...: interrupted by signal N (SIGINT, SIGTERM, SIGHUP,
// SIGUSR1/2): stops at once." Observed: while the terminal's output is
// stopped (Ctrl-S, or a stalled ssh connection), the live view's redraw
// blocks in write() holding stdout's lock, and the signal handler's
// "leave the alternate screen" fputs waits for that lock: SIGTERM does not
// end zkr (still alive 5 s later); it exits 143 only once output resumes
// (Ctrl-Q).
TEST_F(CliLsAttacksTest, SigtermEndsTheLiveViewEvenWhileTheTerminalIsStopped) {
  if (!HaveTmux()) GTEST_SKIP() << "tmux is not installed";
  const std::string root = Path("s");
  ASSERT_TRUE(admin().Create(root, "", CreateMode::kPersistent).ok());
  const std::string socket = absl::StrCat("zkr-ls-xoff-", getpid());
  // zkr's status from the shell around it, in a file: tmux may not take a
  // pane's exit status while its output is stopped.
  const std::string status = File("xoff-status");
  const std::string command =
      absl::StrCat("bash -c ", testing::ShQuote(absl::StrCat(
                                   testing::ShQuote(binary_), " ls --zk=", connect_,
                                   " --watch --path=", root, "; echo $? > ", testing::ShQuote(status))));
  Tmux(socket, absl::StrCat("-f /dev/null new-session -d -s s -x 250 -y 20 ",
                            testing::ShQuote(command)));
  auto screen = [&] { return Tmux(socket, "capture-pane -p -t s"); };
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(screen(), "(Ctrl-C quits)"); },
                         absl::Seconds(20)))
      << screen();
  pid_t shell = 0, pid = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(Tmux(socket, "display -p -t s '#{pane_pid}'")), &shell));
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(testing::ReadFile(
                                   absl::StrCat("/proc/", shell, "/task/", shell, "/children"))),
                               &pid));
  Tmux(socket, "send-keys -t s C-s");  // XOFF: the terminal stops taking output
  absl::SleepFor(absl::Milliseconds(2500));  // a redraw (every second) now blocks
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_TRUE(Eventually([&] { return testing::ReadFile(status) == "143\n"; }, absl::Seconds(5)))
      << "5 s after SIGTERM: zkr " << ProcessState(pid) << ", status '" << testing::ReadFile(status)
      << "'";
  Tmux(socket, "send-keys -t s C-q");
  Tmux(socket, "kill-server");
  ASSERT_TRUE(admin().Delete(root).ok());
}

// Guard: more than 1000 queues: the first 1000 are shown and zkr says so
// (exit 0); --json says "truncated":true and parses.
TEST_F(CliLsAttacksTest, MoreThanAThousandQueuesAreCutAndSaidSo) {
  const std::string root = Path("m");
  CreateOptions parents;
  parents.make_parents = true;
  for (int i = 0; i < 1001; ++i) {
    ASSERT_TRUE(admin()
                    .Create(absl::StrCat(root, "/q", 10000 + i, "/h_1_r-W-"), "",
                            CreateMode::kPersistentSequential, parents)
                    .ok());
  }
  std::string out, err;
  ASSERT_EQ(Run({"ls", "--path=" + root}, &out, &err), 0) << err;
  EXPECT_TRUE(absl::StrContains(out, "(only the first 1000 queues are shown)")) << err;
  EXPECT_TRUE(absl::StrContains(out, root + "/q10999  ")) << err;
  EXPECT_FALSE(absl::StrContains(out, root + "/q11000  ")) << err;
  ASSERT_EQ(Run({"ls", "-R", "--json", "--path=" + root}, &out, &err), 0) << err;
  EXPECT_TRUE(ParsesAsJson(out));
  EXPECT_TRUE(absl::StrContains(out, "\"truncated\":true"));
  ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
}

}  // namespace
}  // namespace zkr
