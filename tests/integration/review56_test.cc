// Review 56: an independent review's attacks on zkr as an operator uses it:
// a double barrier entered at a path that holds another recipe's queue (a
// lock, a semaphore), a bad --session_timeout given while ZKR_CONNECT is set,
// a SIGINT ignored at start (a script's `zkr ... &`), a zkr started with its
// standard descriptors closed, SIGTERM swept over a run's first milliseconds
// (connecting, granted, CMD starting), a revocation of a multi-path holder,
// and a hold without CMD whose stdout pipe is gone. Real binary, real server.
#include <signal.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_ledger_fixture.h"

namespace zkr {
namespace {

using testing::Concat;
using testing::FileExists;
using testing::Lines;
using testing::Process;
using testing::ReadFile;
using testing::ShQuote;
using testing::WaitUntil;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class Review56Test : public testing::CliLedgerTest {
 protected:
  Review56Test() : CliLedgerTest(testing::kLedgerBoundsLong) {}

  // `zkr <args>` (with --zk) started through sh with `prelude` run first,
  // e.g. a trap or closed descriptors; the shell execs zkr.
  Process& ZkrVia(const std::string& prelude, std::vector<std::string> args) {
    args.insert(args.begin() + 1, absl::StrCat("--zk=", connect_));
    return Started(Concat({"sh", "-c", prelude + "; exec \"$0\" \"$@\"", binary_}, args));
  }

  // A double barrier of two entered by ONE zkr at `path`, where another
  // recipe's participant already is (its node given): the barrier must not
  // count that participant as a member, so CMD must not run, and zkr must
  // leave nothing of its own there. (Found by review 56: CMD ran, and a
  // `ready` node stayed for good.)
  void ExpectLoneBarrierMemberWaits(const std::string& path, const std::string& foreign_node) {
    const std::string ran = File("barrier-ran");
    Process& barrier = Zkr({"barrier", "--path=" + path, "--count=2", "--timeout=3s", "enter",
                            "--", "sh", "-c", "echo ran > " + ShQuote(ran)});
    const std::optional<int> status = barrier.Wait(absl::Seconds(20));
    // Man page, barrier: "enter: the double barrier of --count members ...:
    // waits until all entered, runs CMD". The path holds another recipe's
    // participant: refused at once, as a lock and a semaphore refuse each
    // other's paths (exit 1, the node named), without running CMD.
    EXPECT_FALSE(FileExists(ran))
        << "CMD ran in a double barrier of 2 that only one zkr entered: the other "
           "recipe's participant " << foreign_node << " was counted as a member\n"
        << barrier.Describe();
    EXPECT_EQ(status, 1) << barrier.Describe();
    EXPECT_THAT(barrier.Stderr(), HasSubstr(foreign_node)) << barrier.Describe();
    EXPECT_THAT(barrier.Stderr(), HasSubstr("cannot share its path")) << barrier.Describe();
    // Nothing left behind: the other recipe's node alone.
    EXPECT_THAT(Children(path), ElementsAre(foreign_node))
        << "the barrier left nodes under " << path;
  }
};

// The barrier entered at a held lock's path. Also: once the lock is
// released, its directory must empty (a zkr lock leaves nothing: the
// container goes).
TEST_F(Review56Test, BarrierEnterAtAHeldLockPathDoesNotCountTheHolder) {
  const std::string lock = Path("lock-then-barrier");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  ExpectLoneBarrierMemberWaits(lock, testing::Basename(HeldNode("held")));
  // How the operator sees the lock meanwhile: zkr ls must call it a lock.
  Process& ls = Zkr({"ls", "--path=" + lock});
  EXPECT_EQ(ls.Wait(absl::Seconds(20)), 0) << ls.Describe();
  EXPECT_THAT(ls.Stdout(), HasSubstr("lock: 1 holds")) << ls.Describe();
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  EXPECT_TRUE(WaitForChildren(lock, 0, absl::Seconds(4)))
      << "left under the released lock: " << ::testing::PrintToString(Children(lock));
  EXPECT_TRUE(testing::DeleteRecursively(admin(), lock).ok());
}

// The same at a semaphore's path (a holder of 1 of 2 leases).
TEST_F(Review56Test, BarrierEnterAtASemaphorePathDoesNotCountTheHolder) {
  const std::string semaphore = Path("semaphore-then-barrier");
  Process& holder = Zkr(Concat({"semaphore", "--path=" + semaphore, "--leases=2", "--"},
                               HoldUntilReleased("held", "release")));
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  ExpectLoneBarrierMemberWaits(semaphore, testing::Basename(HeldNode("held")));
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  EXPECT_TRUE(WaitForChildren(semaphore, 0, absl::Seconds(4)))
      << "left under the released semaphore: " << ::testing::PrintToString(Children(semaphore));
  EXPECT_TRUE(testing::DeleteRecursively(admin(), semaphore).ok());
}

// Man page, ENVIRONMENT: "the command line, then the environment, then the
// default ... A bad value is a usage error naming the variable." A bad
// --session_timeout on the command line while ZKR_CONNECT is set (as an
// operator's profile sets it): the error must name the flag's value, not
// blame the environment, in one line, exit 2, and create nothing.
TEST_F(Review56Test, BadSessionTimeoutFlagIsNotBlamedOnZkrConnect) {
  const std::string lock = Path("bad-session-timeout");
  Process& zkr = Started({"env", "ZKR_CONNECT=" + connect_, binary_, "lock", "--path=" + lock,
                          "--session_timeout=50ms", "--", "true"});
  EXPECT_EQ(zkr.Wait(absl::Seconds(20)), 2) << zkr.Describe();
  const std::string err = zkr.Stderr();
  EXPECT_EQ(Lines(err).size(), 1u) << err;
  EXPECT_THAT(err, HasSubstr("50ms")) << err;
  EXPECT_THAT(err, Not(HasSubstr("from the environment")))
      << "the bad value came from the command line, not from ZKR_CONNECT: " << err;
  auto exists = admin().Exists(lock);
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(exists->has_value()) << "created " << lock;
}

// Man page, SIGNALS: "SIGINT, SIGTERM, ...: before CMD runs they close the
// session and zkr exits 128+N"; only "A SIGHUP ignored at start (nohup)
// stays ignored". A script's `zkr ... &` starts zkr with SIGINT ignored; a
// queued zkr must still end on SIGINT with 130 and leave no node.
TEST_F(Review56Test, QueuedLockStartedWithSigintIgnoredStillExits130) {
  const std::string lock = Path("sigint-ignored");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& waiter = ZkrVia("trap '' INT", {"lock", "--path=" + lock, "--", "true"});
  ASSERT_TRUE(WaitForChildren(lock, 2)) << waiter.Describe();
  waiter.Signal(SIGINT);
  EXPECT_EQ(waiter.Wait(absl::Seconds(20)), 128 + SIGINT) << waiter.Describe();
  EXPECT_TRUE(WaitForChildren(lock, 1, absl::Seconds(4)))
      << ::testing::PrintToString(Children(lock));
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  ExpectEmptiedAndDelete(lock);
}

// Man page, CMD AND ITS PROCESSES: "CMD inherits descriptors 0-2 and those
// zkr itself was given ...; none of zkr's own (its ZooKeeper socket)." zkr
// started with 0, 1 and 2 closed (cron, a daemon's child): its own socket
// or pipes may land on 0-2; CMD must not get them.
TEST_F(Review56Test, ZkrStartedWithClosedStdioHandsCmdNoneOfItsOwnDescriptors) {
  const std::string lock = Path("closed-stdio");
  const std::string listing = File("fds");
  Process& zkr = ZkrVia("exec 0<&- 1>&- 2>&-",
                        {"lock", "--path=" + lock, "--", "sh", "-c",
                         "for f in /proc/$$/fd/*; do echo \"${f##*/} -> $(readlink $f)\"; "
                         "done > " + ShQuote(listing) + ".tmp; mv " +
                             ShQuote(listing) + ".tmp " + ShQuote(listing)});
  EXPECT_EQ(zkr.Wait(absl::Seconds(20)), 0) << zkr.Describe();
  const std::string fds = ReadFile(listing);
  ASSERT_FALSE(fds.empty()) << "CMD did not run\n" << zkr.Describe();
  EXPECT_THAT(fds, Not(HasSubstr("socket:"))) << "CMD got a socket of zkr's:\n" << fds;
  EXPECT_THAT(fds, Not(HasSubstr("anon_inode"))) << "CMD got an eventfd/epoll of zkr's:\n" << fds;
  std::cerr << "CMD's descriptors:\n" << fds;
  for (const std::string& line : Lines(fds)) {
    // Descriptor 1 is the listing itself (the shell's redirection).
    if (absl::StartsWith(line, "0 -> ") || absl::StartsWith(line, "2 -> ")) {
      EXPECT_THAT(line, HasSubstr("/dev/null")) << fds;
    }
  }
  ExpectEmptiedAndDelete(lock);
}

// Man page, SIGNALS and EXIT STATUS: SIGTERM "before CMD runs ... zkr exits
// 128+N"; "while CMD runs they go to CMD's group, and zkr exits with CMD's
// status once it has released" (a CMD killed by SIGTERM: 143); "zkr
// releases only after every process of the group has exited". So whatever
// the moment (connecting, granted, CMD forking), SIGTERM gives 143, no
// process of CMD outlives zkr and no node stays. The delays step through the
// run's first milliseconds (a sweep of the signal's moment, not a wait).
TEST_F(Review56Test, SigtermSweptOverTheFirstMillisecondsAlwaysGives143AndLeavesNothing) {
  const std::string lock = Path("term-sweep");
  int before_cmd = 0, during_cmd = 0;
  for (int i = 0; i < 30; ++i) {
    const std::string pid_file = File(absl::StrCat("cmd", i));
    Process& zkr = Zkr({"lock", "--path=" + lock, "--", "sh", "-c",
                        "echo $$ > " + ShQuote(pid_file) + "; sleep 30; sleep 30"});
    absl::SleepFor(absl::Milliseconds(2 * i));
    zkr.Signal(SIGTERM);
    EXPECT_EQ(zkr.Wait(absl::Seconds(20)), 128 + SIGTERM) << "delay " << 2 * i << "ms\n"
                                                          << zkr.Describe();
    int cmd_pid = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(pid_file)), &cmd_pid) &&
        cmd_pid > 0) {
      ++during_cmd;
      EXPECT_FALSE(testing::Alive(cmd_pid)) << "CMD outlived zkr at delay " << 2 * i << "ms";
    } else {
      ++before_cmd;
    }
    EXPECT_TRUE(WaitForChildren(lock, 0, absl::Seconds(4)))
        << "delay " << 2 * i << "ms left " << ::testing::PrintToString(Children(lock));
    zkr.KillGroup();
  }
  std::cerr << "signalled before CMD: " << before_cmd << ", while CMD ran: " << during_cmd
            << "\n";
  ExpectEmptiedAndDelete(lock);
}

// Man page, revoke: "a holder run by zkr lock ... stops CMD's group before
// --grace ends (exit 4)". A holder of two locks (multi-path) revoked on one
// of them must let go of both (all or none), and the revoker prints
// "NODE released".
TEST_F(Review56Test, RevokingOneLockOfAMultiPathHolderFreesBoth) {
  const std::string first = Path("multi-revoke-a"), second = Path("multi-revoke-b");
  Process& holder = Zkr(Concat({"lock", "--path=" + first, "--path=" + second, "--"},
                               HoldUntilReleased("held", "never")));
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  ASSERT_EQ(Children(first).size(), 1u);
  ASSERT_EQ(Children(second).size(), 1u);
  Process& revoke = Zkr({"revoke", "--path=" + first, "--grace=3s"});
  EXPECT_EQ(revoke.Wait(absl::Seconds(20)), 0) << revoke.Describe();
  EXPECT_THAT(revoke.Stdout(), HasSubstr("released")) << revoke.Describe();
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 4) << holder.Describe();
  EXPECT_TRUE(WaitForChildren(first, 0, absl::Seconds(4)))
      << ::testing::PrintToString(Children(first));
  EXPECT_TRUE(WaitForChildren(second, 0, absl::Seconds(4)))
      << "the other lock of the revoked holder stayed: "
      << ::testing::PrintToString(Children(second));
  Process& next = Zkr({"lock", "-n", "--path=" + second, "--", "true"});
  EXPECT_EQ(next.Wait(absl::Seconds(20)), 0) << next.Describe();
  ExpectEmptiedAndDelete(first);
  ExpectEmptiedAndDelete(second);
}

// Man page, lock: "Without CMD ... once held it prints what CMD would get
// ... on stdout". A stdout whose reader is gone (`zkr lock ... | true`):
// zkr must fail as "other failure (message on stderr)", exit 1, not hold on
// and not die by SIGPIPE, and release (no node left).
TEST_F(Review56Test, HoldWithoutCmdIntoAClosedPipeExits1AndReleases) {
  const std::string lock = Path("closed-pipe");
  Process& zkr = Started({"bash", "-c", "set -o pipefail; \"$0\" \"$@\" | true", binary_,
                          "lock", "--zk=" + connect_, "--path=" + lock});
  EXPECT_EQ(zkr.Wait(absl::Seconds(20)), 1) << zkr.Describe();
  EXPECT_THAT(zkr.Stderr(), HasSubstr("cannot write the output")) << zkr.Describe();
  // Said once, with its cause ("Broken pipe"), not again at exit.
  EXPECT_EQ(Lines(zkr.Stderr()).size(), 1u) << zkr.Describe();
  EXPECT_THAT(zkr.Stderr(), HasSubstr("Broken pipe")) << zkr.Describe();
  ExpectEmptiedAndDelete(lock);
}

}  // namespace
}  // namespace zkr
