// zkr, issue 32 items 4, 5, 10 and 12, end to end against a real server: a
// lock and a semaphore on one path refuse each other; a CMD that leaves a
// setsid'd process behind does not keep zkr (and the lock) waiting; the
// --timeout and --nonblock bounds cover connecting; a connect string whose
// host does not resolve is reported as such (exit 5, not a usage error).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using testing::CliTest;
using testing::FileExists;
using testing::Process;
using testing::ReadFile;
using testing::ShQuote;
using testing::WaitUntil;

class CliMiscTest : public CliTest {
 protected:
  // The pid a CMD wrote to File(name), or 0.
  pid_t PidIn(absl::string_view name) {
    int pid = 0;
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(File(name))), &pid) ? pid : 0;
  }
};

// ---- item 4: a lock and a semaphore on one path refuse each other --------------

// Whichever comes second exits 1 at once, naming the path, and leaves no
// node — with --nonblock or waiting; the holder's CMD ran alone.
TEST_F(CliMiscTest, LockAndSemaphoreOnOnePathRefuseEachOther) {
  const std::string path = Path("kinds");
  const std::vector<std::string> ran = {"sh", "-c", absl::StrCat("touch ", ShQuote(File("ran")))};
  {
    Process& holder = Holder(path);
    ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
    for (const char* wait : {"--nonblock", "--timeout=20s"}) {
      Process& semaphore =
          Zkr(testing::Concat({"semaphore", "--path=" + path, "--leases=1", wait, "--"}, ran));
      EXPECT_EQ(semaphore.Wait(absl::Seconds(30)), 1) << semaphore.Describe();
      EXPECT_THAT(semaphore.Stderr(), HasSubstr(path)) << semaphore.Describe();
      EXPECT_THAT(semaphore.Stderr(), HasSubstr("cannot share a path")) << semaphore.Describe();
      EXPECT_EQ(Children(path).size(), 1u) << semaphore.Describe();
    }
    Touch("release");
    EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  }
  std::remove(File("held").c_str());
  std::remove(File("release").c_str());
  {
    Process& holder = Zkr(testing::Concat({"semaphore", "--path=" + path, "--leases=2", "--"},
                                          HoldUntilReleased("held", "release")));
    ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
    for (const char* wait : {"--nonblock", "--timeout=20s"}) {
      Process& lock = Zkr(testing::Concat({"lock", "--path=" + path, wait, "--"}, ran));
      EXPECT_EQ(lock.Wait(absl::Seconds(30)), 1) << lock.Describe();
      EXPECT_THAT(lock.Stderr(), HasSubstr(path)) << lock.Describe();
      EXPECT_THAT(lock.Stderr(), HasSubstr("cannot share a path")) << lock.Describe();
      EXPECT_EQ(Children(path).size(), 1u) << lock.Describe();
    }
    Touch("release");
    EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  }
  EXPECT_FALSE(FileExists(File("ran"))) << "a CMD ran beside the holder of the other kind";
  ExpectEmptyAndDelete(path);
}

// ---- item 5: a setsid'd process neither signalled nor waited for --------------

// CMD starts a background job and exits 3 at once. The job waits until CMD
// is gone (so it has become the guardian's orphan while still in CMD's
// group), then leaves the group (setsid) and sleeps on. zkr must exit 3 as
// soon as its group is empty and release the lock; the setsid'd process
// runs on. Repeated: whether the orphan was reparented before it left the
// group was a race.
TEST_F(CliMiscTest, SetsidChildOfTheCommandNeitherHoldsNorIsKilled) {
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

// ---- item 10: --timeout and --nonblock bound connecting ------------------------

// Nothing listens on port 1. With --session_timeout=60s, connecting alone
// would go on for 60 s; the wait's bound (1 s, or a try's 2 s) must end it
// long before the 30 s hang detector, with exit 5 (no server answered).
TEST_F(CliMiscTest, TimeoutAndNonblockBoundConnecting) {
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

// ---- item 12: a host name that does not resolve --------------------------------

TEST_F(CliMiscTest, UnresolvableHostExits5NamingIt) {
  const std::vector<std::vector<std::string>> commands = {
      {"lock", "--path=/zkr-cli-never", "--", "echo", "ran"},
      {"semaphore", "--path=/zkr-cli-never", "--leases=1", "--", "echo", "ran"},
      {"inspect", "--path=/zkr-cli-never"},
  };
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, "--zk=nosuchhost.invalid:2181");
    Process& p = ZkrRaw(args);
    EXPECT_EQ(p.Wait(absl::Seconds(30)), 5) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr("cannot resolve nosuchhost.invalid")) << p.Describe();
    EXPECT_EQ(p.Stdout(), "") << p.Describe();
  }
}

}  // namespace
}  // namespace zkr
