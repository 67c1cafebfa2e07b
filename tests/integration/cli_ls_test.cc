// zkr ls (issue 35, item 2): every lock, semaphore, election, group and
// barrier under a path, each participant with its state, host, pid and age;
// --json; --watch as plain lines when the output is no terminal, and as a
// live full-screen view in a real terminal (tmux: send-keys, capture-pane).
#include <unistd.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace {

using testing::CliTest;
using testing::Eventually;
using testing::Lines;

class CliLsTest : public CliTest {
 protected:
  // The line of `text` that contains every one of `parts`; "" if none.
  static std::string LineWith(const std::string& text, const std::vector<std::string>& parts) {
    for (const std::string& line : Lines(text)) {
      bool all = true;
      for (const std::string& part : parts) all = all && absl::StrContains(line, part);
      if (all) return line;
    }
    return "";
  }
  static LockOptions Purpose(std::string purpose) {
    LockOptions options;
    options.purpose = std::move(purpose);
    return options;
  }
  static std::string Host() {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    return name;
  }
  // Runs zkr to its end; its exit code.
  int Run(const std::vector<std::string>& args, std::string* out, std::string* err = nullptr) {
    testing::Process& p = Zkr(args);
    std::optional<int> code = p.Wait(absl::Seconds(60));
    *out = p.Stdout();
    if (err != nullptr) *err = p.Stderr();
    return code.value_or(-1);
  }
};

TEST_F(CliLsTest, ListsEveryKindWithItsHoldersWaitersHostAndPid) {
  const std::string rw = Path("app/orders"), sem = Path("app/pool"), elect = Path("app/leader"),
                    group = Path("app/workers"), deep = Path("app/deep/er/lock");
  // An rwlock: a reader holds, a writer waits (on another session).
  auto lock = SharedLock::Create(admin(), rw, Purpose("nightly report"));
  ASSERT_TRUE(lock.ok());
  auto read = (*lock)->AcquireRead(absl::Seconds(10));
  ASSERT_TRUE(read.ok()) << read.status();
  auto other = NewSession();
  auto writer_lock = SharedLock::Create(*other, rw);
  ASSERT_TRUE(writer_lock.ok());
  std::future<absl::StatusOr<LockGuard>> write = (*writer_lock)->AcquireWriteFuture();
  // A semaphore of 3 leases, 2 taken.
  auto pool = Semaphore::Create(admin(), sem, 3);
  ASSERT_TRUE(pool.ok());
  auto leases = (*pool)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(leases.ok()) << leases.status();
  // An election and a group.
  ElectionOptions election_options;
  election_options.id = "primary-a";
  auto election = LeaderElection::Create(admin(), elect, election_options);
  ASSERT_TRUE(election.ok() && (*election)->Join().ok());
  GroupOptions member_options;
  member_options.id = "worker-1";
  auto member = GroupMember::Create(admin(), group, member_options);
  ASSERT_TRUE(member.ok() && (*member)->Join().ok());
  // A lock two directories deeper.
  auto deep_lock = SharedLock::Create(admin(), deep);
  auto deep_hold = (*deep_lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(deep_hold.ok());
  // The writer is queued behind the reader.
  ASSERT_TRUE(Eventually([&] {
    auto children = admin().GetChildren(rw);
    return children.ok() && children->size() == 2;
  }));

  std::string out, err;
  ASSERT_EQ(Run({"ls", "--path=" + Path("app")}, &out, &err), 0) << err;
  const std::string pid = absl::StrCat(getpid());
  EXPECT_NE(LineWith(out, {rw, "lock: 1 holds, 1 waits"}), "") << out;
  EXPECT_NE(LineWith(out, {"holds", "R", Host(), pid, "nightly report"}), "") << out;
  EXPECT_NE(LineWith(out, {"waits", "W", Host(), pid, "waits on R-"}), "") << out;
  EXPECT_NE(LineWith(out, {sem, "semaphore of 3 leases: 2 in use by 1, 0 wait"}), "") << out;
  EXPECT_NE(LineWith(out, {"holds", "S2/3"}), "") << out;
  EXPECT_NE(LineWith(out, {elect, "election or group: 1 participant"}), "") << out;
  EXPECT_NE(LineWith(out, {"leads", "primary-a"}), "") << out;
  EXPECT_NE(LineWith(out, {group, "election or group"}), "") << out;
  EXPECT_NE(LineWith(out, {"worker-1"}), "") << out;
  // Without -R, only ROOT's own children.
  EXPECT_FALSE(absl::StrContains(out, deep)) << out;

  ASSERT_EQ(Run({"ls", "-R", "--path=" + Path("app")}, &out), 0);
  EXPECT_NE(LineWith(out, {deep, "lock: 1 holds, 0 wait"}), "") << out;

  // ROOT a queue itself: it alone.
  ASSERT_EQ(Run({"ls", "--path=" + rw}, &out), 0);
  EXPECT_NE(LineWith(out, {rw, "lock: 1 holds, 1 waits"}), "") << out;
  EXPECT_FALSE(absl::StrContains(out, sem)) << out;

  // --json: one object, every queue and participant.
  ASSERT_EQ(Run({"ls", "-R", "--json", "--path=" + Path("app")}, &out), 0);
  ASSERT_EQ(Lines(out).size(), 1u) << out;
  for (const std::string& part :
       {absl::StrCat("\"path\":\"", sem, "\",\"kind\":\"semaphore\""),
        absl::StrCat("\"path\":\"", elect, "\",\"kind\":\"election or group\""),
        std::string("\"state\":\"waits\",\"mode\":\"W\""),
        absl::StrCat("\"host\":\"", Host(), "\",\"pid\":\"", pid, "\""),
        std::string("\"exists\":true"), std::string("\"truncated\":false")}) {
    EXPECT_TRUE(absl::StrContains(out, part)) << part << " in " << out;
  }

  ASSERT_TRUE(read->Release().ok());
  auto granted = write.get();
  ASSERT_TRUE(granted.ok());
  ASSERT_TRUE(granted->Release().ok());
  ASSERT_TRUE(leases->Release().ok());
  ASSERT_TRUE(deep_hold->Release().ok());
  ASSERT_TRUE((*election)->Leave().ok());
  ASSERT_TRUE((*member)->Leave().ok());
  // Their directories are containers: the server removes them in its own time.
  ASSERT_TRUE(testing::DeleteRecursively(admin(), Path("app")).ok());
}

TEST_F(CliLsTest, AMissingRootExits1AndAnEmptyOneSaysSo) {
  std::string out, err;
  EXPECT_EQ(Run({"ls", "--path=" + Path("nothing")}, &out, &err), 1);
  EXPECT_TRUE(absl::StrContains(err, Path("nothing") + " does not exist")) << err;
  EXPECT_EQ(Run({"ls", "--json", "--path=" + Path("nothing")}, &out, &err), 1);
  EXPECT_TRUE(absl::StrContains(out, "\"exists\":false")) << out;

  ASSERT_TRUE(admin().Create(Path("empty"), "", CreateMode::kPersistent).ok());
  EXPECT_EQ(Run({"ls", "--path=" + Path("empty")}, &out, &err), 0) << err;
  EXPECT_EQ(out, "");
  EXPECT_TRUE(absl::StrContains(err, "no lock, semaphore, election, group or barrier in")) << err;
  ASSERT_TRUE(admin().Delete(Path("empty")).ok());
}

// Not a terminal: the listing again at every change, and only then (the
// ages tick every second; they alone print nothing).
TEST_F(CliLsTest, WatchWithoutATerminalPrintsAListingAtEveryChangeOnly) {
  const std::string root = Path("w"), lockp = Path("w/lock");
  ASSERT_TRUE(admin().Create(root, "", CreateMode::kPersistent).ok());
  testing::Process& watch = Zkr({"ls", "--watch", "--path=" + root});
  auto listings = [&] {
    return std::vector<std::string>(absl::StrSplit(watch.Stdout(), "\n\n", absl::SkipEmpty()));
  };
  ASSERT_TRUE(Eventually([&] { return listings().size() == 1; }, absl::Seconds(20)))
      << watch.Describe();
  EXPECT_TRUE(absl::StrContains(listings()[0], "no lock, semaphore")) << listings()[0];

  auto lock = SharedLock::Create(admin(), lockp);
  auto hold = (*lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(hold.ok());
  ASSERT_TRUE(Eventually([&] { return listings().size() == 2; }, absl::Seconds(20)));
  EXPECT_TRUE(absl::StrContains(listings()[1], lockp + "  lock: 1 holds, 0 wait")) << listings()[1];
  ASSERT_TRUE(hold->Release().ok());
  ASSERT_TRUE(Eventually([&] { return listings().size() >= 3; }, absl::Seconds(20)));
  // The lock's directory is still there, empty (a container goes later): no
  // queue.
  EXPECT_FALSE(absl::StrContains(listings().back(), "holds")) << listings().back();
  // Three changes, three listings: none printed for the ages alone, though
  // seconds passed while the lock was held.
  EXPECT_EQ(listings().size(), 3u) << watch.Stdout();
  watch.Signal(SIGTERM);
  EXPECT_EQ(watch.Wait(absl::Seconds(10)), 128 + SIGTERM);
  (void)admin().Delete(lockp);
  ASSERT_TRUE(admin().Delete(root).ok());
}

// A real terminal (tmux): the full-screen view shows what changes as it
// changes, and Ctrl-C leaves the screen as it was, exit 130.
TEST_F(CliLsTest, WatchOnATerminalIsALiveFullScreenViewInTmux) {
  if (system("command -v tmux >/dev/null 2>&1") != 0) GTEST_SKIP() << "tmux is not installed";
  const std::string root = Path("t"), lockp = Path("t/orders");
  ASSERT_TRUE(admin().Create(root, "", CreateMode::kPersistent).ok());
  const std::string socket = absl::StrCat("zkr-ls-test-", getpid());
  auto sh = [&](const std::string& command) -> std::string {
    const std::string file = File("tmux.out");
    const int rc = system(absl::StrCat("tmux -L ", socket, " ", command, " > ", file,
                                       " 2>&1").c_str());
    return rc == 0 ? testing::ReadFile(file) : absl::StrCat("tmux failed: ", testing::ReadFile(file));
  };
  // zkr's status from the shell around it, in a file: tmux may leave a
  // pane's exit status untold (seen on a busy machine).
  const std::string status = File("tmux-status");
  const std::string command = absl::StrCat(
      "bash -c ", testing::ShQuote(absl::StrCat(testing::ShQuote(binary_), " ls --zk=", connect_,
                                                " --watch --path=", root, "; echo $? > ",
                                                testing::ShQuote(status))));
  sh(absl::StrCat("-f /dev/null new-session -d -s ls -x 150 -y 30 ", testing::ShQuote(command)));
  sh("set-option -t ls remain-on-exit on");
  auto screen = [&] { return sh("capture-pane -p -t ls"); };
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(screen(), "no lock, semaphore"); },
                         absl::Seconds(20)))
      << screen();
  EXPECT_TRUE(absl::StrContains(screen(), "zkr ls " + root)) << screen();
  EXPECT_TRUE(absl::StrContains(screen(), "(Ctrl-C quits)")) << screen();

  auto lock = SharedLock::Create(admin(), lockp, Purpose("in tmux"));
  auto hold = (*lock)->AcquireRead(absl::Seconds(10));
  ASSERT_TRUE(hold.ok());
  ASSERT_TRUE(Eventually([&] {
    const std::string s = screen();
    return absl::StrContains(s, lockp + "  lock: 1 holds, 0 wait") && absl::StrContains(s, "in tmux");
  }, absl::Seconds(20))) << screen();
  ASSERT_TRUE(hold->Release().ok());
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(screen(), "no lock, semaphore"); },
                         absl::Seconds(20)))
      << screen();

  sh("send-keys -t ls C-c");
  ASSERT_TRUE(Eventually([&] { return testing::ReadFile(status) == "130\n"; }, absl::Seconds(20)))
      << "status '" << testing::ReadFile(status) << "'";
  // The normal screen is back: the view is gone from it.
  EXPECT_FALSE(absl::StrContains(screen(), "(Ctrl-C quits)")) << screen();
  sh("kill-server");
  (void)admin().Delete(lockp);
  ASSERT_TRUE(admin().Delete(root).ok());
}

}  // namespace
}  // namespace zkr
