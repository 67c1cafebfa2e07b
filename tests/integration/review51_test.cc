// Review 51: an independent review's attacks on zkr (lock, semaphore, elect,
// barrier, group join) with CMD, signals and partitions, aimed where the
// earlier suites did not go: a step-down while the leader is cut off (healed
// at once, or only after its session expired), zkr itself paused (SIGSTOP)
// while CMD runs on, Ctrl-Z then a partition then fg on a semaphore, and the
// less common signals (HUP, USR1, USR2) in the waiting phase of every
// subcommand. Real binary, real server.
#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_ledger_fixture.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::CliLedgerTest;
using testing::Concat;
using testing::OnTerm;
using testing::Process;
using testing::ProcessStopped;
using testing::ReadFile;
using testing::TcpProxy;
using testing::WaitUntil;

class Review51Test : public CliLedgerTest {
 protected:
  Review51Test() : CliLedgerTest(testing::kLedgerBoundsLong) {}

  // Waits (bounded) until the first run of `name` has no live shell.
  bool WaitForRunToEnd(const std::string& name) {
    const pid_t pid = CmdPid(name);
    if (pid <= 0) return false;
    return WaitUntil([&] { return !testing::Alive(pid); }, absl::Seconds(30));
  }
  void Heal(TcpProxy& proxy) {
    proxy.SetMode(TcpProxy::Mode::kPass);
    proxy.ResetConnections();
  }
};

// Man page, elect: "SIGHUP ... or SIGUSR1 makes a leader step down: CMD's
// group is stopped first (SIGTERM, SIGKILL after the effective --grace), then
// the next candidate leads and zkr queues again at the back."
// Here the leader is cut off (blackhole) when it is told to step down; the
// partition heals right after its CMD has stopped, well within its session.
// The other candidate must lead, and the stepped-down one must queue again
// (not hang without a node, nor lead again first).
TEST_F(Review51Test, StepDownWhileCutOffThenHealedHandsOverAndQueuesAgain) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string election = Path("stepdown-cut-off");
  Process& a = ZkrRaw(Concat({"elect", "--zk=" + proxy->address(), "--path=" + election,
                              "--id=a", "--"},
                             Stamping("a", OnTerm::kObey)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  a.Signal(SIGHUP);
  ASSERT_TRUE(WaitForRunToEnd("a")) << "the step-down did not stop CMD\n" << a.Describe();
  Heal(*proxy);
  EXPECT_TRUE(WaitForRuns("b", b)) << "the next candidate never led\n" << Everyone();
  EXPECT_TRUE(WaitForChildren(election, 2, absl::Seconds(30)))
      << "the stepped-down leader did not queue again: " << ::testing::PrintToString(Children(election))
      << "\n" << Everyone();
  EXPECT_FALSE(a.Exited()) << a.Describe();
  EXPECT_EQ(Runs("a"), 1) << "a ran CMD again before b\n" << ReadFile(Ledger());
  ExpectNoOverlap();
  // b goes: a, queued again, leads again.
  b.Signal(SIGTERM);
  EXPECT_EQ(b.Wait(absl::Seconds(30)), 128 + SIGTERM) << b.Describe();
  EXPECT_TRUE(WaitForRuns("a", a, 2)) << "a never led again\n" << Everyone();
  a.Signal(SIGTERM);
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 128 + SIGTERM) << a.Describe();
  ExpectNoOverlap();
  ExpectEmptiedAndDelete(election);
}

// The same step-down, but the partition lasts until the leader's session
// has expired (the other candidate leads meanwhile). Once healed, the
// stepped-down zkr must campaign again on its new session (queue at the
// back), not hang without a node, and must not run CMD while b leads.
TEST_F(Review51Test, StepDownWhileCutOffPastExpiryQueuesAgainOnceHealed) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string election = Path("stepdown-expired");
  Process& a = ZkrRaw(Concat({"elect", "--zk=" + proxy->address(), "--path=" + election,
                              "--id=a", "--session_timeout=4s", "--"},
                             Stamping("a", OnTerm::kObey)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  a.Signal(SIGUSR1);
  ASSERT_TRUE(WaitForRunToEnd("a")) << "the step-down did not stop CMD\n" << a.Describe();
  ASSERT_TRUE(WaitForRuns("b", b)) << "b never led after a's session expired\n" << Everyone();
  Heal(*proxy);
  EXPECT_TRUE(WaitForChildren(election, 2, absl::Seconds(30)))
      << "the stepped-down leader did not queue again: "
      << ::testing::PrintToString(Children(election)) << "\n" << Everyone();
  EXPECT_FALSE(a.Exited()) << a.Describe();
  EXPECT_EQ(Runs("a"), 1) << ReadFile(Ledger());
  ExpectNoOverlap();
  b.Signal(SIGTERM);
  EXPECT_EQ(b.Wait(absl::Seconds(30)), 128 + SIGTERM) << b.Describe();
  EXPECT_TRUE(WaitForRuns("a", a, 2)) << "a never led again\n" << Everyone();
  a.Signal(SIGTERM);
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 128 + SIGTERM) << a.Describe();
  ExpectNoOverlap();
  ExpectEmptiedAndDelete(election);
}

// Man page, SIGNALS: "CMD is dead before anyone else may hold, whatever
// --grace says. While CMD runs, zkr watches the hold's lease ... SIGKILL no
// later than the lease's end". zkr itself is paused (SIGSTOP: a debugger, a
// freezer, an operator's kill -STOP; the process pause the lease exists
// for) while CMD, in its own group, runs on. The server expires the
// session; the waiter is granted. CMD must not be running then.
TEST_F(Review51Test, ZkrPausedWhileCmdRunsDoesNotLetCmdOutliveTheLease) {
  const std::string lock = Path("paused-holder");
  Process& a = Zkr(Concat({"lock", "--path=" + lock, "--session_timeout=3s", "--"},
                          Stamping("a", OnTerm::kObey)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 10)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  a.Signal(SIGSTOP);  // zkr alone, not CMD's group
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  a.Signal(SIGCONT);
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// Man page: "SIGTSTP (Ctrl-Z): zkr stops CMD's group, then itself; SIGCONT
// (fg, bg) continues CMD only if the hold is still good, else kills it (exit
// 4)". A semaphore of two leases: a (behind the proxy) is stopped with
// Ctrl-Z, then cut off; its session expires and the third participant runs.
// fg comes while a is still cut off. Never three CMDs at once; a exits 4.
TEST_F(Review51Test, SemaphoreCtrlZThenPartitionThenFgNeverThreeAtOnce) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string sem = Path("sem-tstp-partition");
  Process& a = ZkrRaw(Concat({"semaphore", "--zk=" + proxy->address(), "--path=" + sem,
                              "--leases=2", "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kObey)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=2", "--"},
                          Stamping("b", OnTerm::kObey)));
  ASSERT_TRUE(WaitForStamps("b", b)) << b.Describe();
  Process& c = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=2", "--timeout=60s", "--"},
                          Stamping("c", OnTerm::kObey, 10)));
  ASSERT_TRUE(WaitForChildren(sem, 3)) << c.Describe();
  a.Signal(SIGTSTP);
  const pid_t a_cmd = CmdPid("a");
  ASSERT_TRUE(WaitUntil([&] { return ProcessStopped(a.pid()) && ProcessStopped(a_cmd); },
                        absl::Seconds(10)))
      << a.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(c.Wait(absl::Seconds(60)), 0) << c.Describe();
  a.Signal(SIGCONT);
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  Heal(*proxy);
  EXPECT_LE(MaxConcurrent(), 2) << Everyone() << ReadFile(Ledger());
  EXPECT_EQ(Runs("a"), 1) << ReadFile(Ledger());
  b.Signal(SIGTERM);
  EXPECT_EQ(b.Wait(absl::Seconds(30)), 128 + SIGTERM) << b.Describe();
  CleanUp(sem);
}

// Man page, EXIT STATUS 128+N: "lock, semaphore, group join, barrier:
// interrupted by signal N (SIGINT: 130, SIGTERM: 143, SIGHUP, SIGUSR1/2)
// before CMD ran, in any phase (connecting, waiting, leaving a barrier); the
// session is closed, and the server deletes the participant's node"; "elect
// campaign: ... (SIGINT, SIGTERM, SIGUSR2; SIGHUP and SIGUSR1 only until it
// has joined ...)". The less common signals, while queued (and group join
// while connecting), each subcommand: 128+N, nothing left, CMD never run.
TEST_F(Review51Test, HupUsr1Usr2WhileWaitingExit128PlusNAndLeaveNothing) {
  const std::string never = File("never-ran");
  const std::vector<std::string> mark = {"sh", "-c", "echo ran >> " + testing::ShQuote(never)};
  struct Case {
    std::string sub;
    int signal;
  };
  // lock and semaphore waiters behind a hold without CMD.
  const std::string lock = Path("sig-lock");
  Process& lock_holder = Zkr({"lock", "--path=" + lock});
  ASSERT_TRUE(WaitForChildren(lock, 1)) << lock_holder.Describe();
  const std::string sem = Path("sig-sem");
  Process& sem_holder = Zkr({"semaphore", "--path=" + sem, "--leases=1"});
  ASSERT_TRUE(WaitForChildren(sem, 1)) << sem_holder.Describe();
  const std::string election = Path("sig-elect");
  Process& leader = Zkr({"elect", "--path=" + election, "--id=leader"});
  ASSERT_TRUE(WaitForChildren(election, 1)) << leader.Describe();
  const std::string barrier = Path("sig-barrier");
  for (int signal : {SIGHUP, SIGUSR1, SIGUSR2}) {
    SCOPED_TRACE(strsignal(signal));
    Process& l = Zkr(Concat({"lock", "--path=" + lock, "--"}, mark));
    ASSERT_TRUE(WaitForChildren(lock, 2)) << l.Describe();
    l.Signal(signal);
    EXPECT_EQ(l.Wait(absl::Seconds(20)), 128 + signal) << l.Describe();
    EXPECT_TRUE(WaitForChildren(lock, 1, absl::Seconds(4))) << ::testing::PrintToString(Children(lock));

    Process& s = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=1", "--"}, mark));
    ASSERT_TRUE(WaitForChildren(sem, 2)) << s.Describe();
    s.Signal(signal);
    EXPECT_EQ(s.Wait(absl::Seconds(20)), 128 + signal) << s.Describe();
    EXPECT_TRUE(WaitForChildren(sem, 1, absl::Seconds(4))) << ::testing::PrintToString(Children(sem));

    Process& m = Zkr(Concat({"barrier", "--path=" + barrier, "--count=2", "--id=m", "enter", "--"},
                            mark));
    ASSERT_TRUE(WaitUntil([&] { return !Children(barrier).empty(); }, absl::Seconds(20)))
        << m.Describe();
    m.Signal(signal);
    EXPECT_EQ(m.Wait(absl::Seconds(20)), 128 + signal) << m.Describe();
    EXPECT_TRUE(WaitForChildren(barrier, 0, absl::Seconds(4)))
        << ::testing::PrintToString(Children(barrier));
  }
  // elect: a waiting candidate ends on SIGUSR2 (140); SIGHUP and SIGUSR1
  // step down, which a waiting candidate ignores, so SIGTERM ends it after.
  {
    Process& e = Zkr(Concat({"elect", "--path=" + election, "--id=e"}, Concat({"--"}, mark)));
    ASSERT_TRUE(WaitForChildren(election, 2)) << e.Describe();
    e.Signal(SIGUSR2);
    EXPECT_EQ(e.Wait(absl::Seconds(20)), 128 + SIGUSR2) << e.Describe();
    EXPECT_TRUE(WaitForChildren(election, 1, absl::Seconds(4)))
        << ::testing::PrintToString(Children(election));
    Process& f = Zkr(Concat({"elect", "--path=" + election, "--id=f"}, Concat({"--"}, mark)));
    ASSERT_TRUE(WaitForChildren(election, 2)) << f.Describe();
    f.Signal(SIGHUP);
    f.Signal(SIGUSR1);
    f.Signal(SIGTERM);
    EXPECT_EQ(f.Wait(absl::Seconds(20)), 128 + SIGTERM) << f.Describe();
    EXPECT_TRUE(WaitForChildren(election, 1, absl::Seconds(4)))
        << ::testing::PrintToString(Children(election));
  }
  // group join while connecting (the server behind a blackhole).
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  const std::string group = Path("sig-group");
  for (int signal : {SIGHUP, SIGUSR1, SIGUSR2}) {
    SCOPED_TRACE(strsignal(signal));
    Process& g = ZkrRaw(Concat({"group", "--zk=" + proxy->address(), "--path=" + group, "join",
                                "--"},
                               mark));
    // Connecting: give it the moment to start (the signal is handled in
    // any phase, also before zkr has set anything up).
    absl::SleepFor(absl::Milliseconds(300));
    g.Signal(signal);
    EXPECT_EQ(g.Wait(absl::Seconds(20)), 128 + signal) << g.Describe();
  }
  EXPECT_FALSE(testing::FileExists(never)) << "a CMD ran: " << ReadFile(never);
  for (Process* p : {&lock_holder, &sem_holder, &leader}) {
    p->Signal(SIGTERM);
    EXPECT_EQ(p->Wait(absl::Seconds(20)), 128 + SIGTERM) << p->Describe();
  }
  ExpectEmptiedAndDelete(lock);
  ExpectEmptiedAndDelete(sem);
  ExpectEmptiedAndDelete(election);
  auto stat = admin().Exists(barrier);
  if (stat.ok() && stat->has_value()) ExpectEmptiedAndDelete(barrier);
  auto gstat = admin().Exists(group);
  EXPECT_TRUE(gstat.ok() && !gstat->has_value()) << "group join created its group while connecting";
}

}  // namespace
}  // namespace zkr

namespace zkr {
namespace {

// The same pause for zkr elect: the paused leader's CMD runs on while the
// next candidate, elected once the session expired, runs its own.
TEST_F(Review51Test, PausedLeaderDoesNotLetCmdOutliveTheLease) {
  const std::string election = Path("paused-leader");
  Process& a = Zkr(Concat({"elect", "--path=" + election, "--id=a", "--session_timeout=3s", "--"},
                          Stamping("a", OnTerm::kObey)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey, 10)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  a.Signal(SIGSTOP);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  a.Signal(SIGCONT);
  ASSERT_TRUE(WaitForRunToEnd("a")) << a.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

// A holder cut off, its CMD ignoring SIGTERM, in the modes and dialects the
// earlier partition tests did not use: a reader against a writer, and the
// Curator and Kazoo dialects of lock and elect. The waiter is granted once
// the holder's session expired; the holder's CMD must be dead by then.
struct DialectCase {
  std::string name;
  std::vector<std::string> holder;  // subcommand and flags (no --zk, --path)
  std::vector<std::string> waiter;
};

class Review51DialectTest : public Review51Test,
                            public ::testing::WithParamInterface<DialectCase> {};

TEST_P(Review51DialectTest, PartitionedHolderIsDeadBeforeTheWaiterRuns) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const DialectCase& c = GetParam();
  const std::string path = Path("partitioned-" + c.name);
  std::vector<std::string> holder = {c.holder[0], "--zk=" + proxy->address(), "--path=" + path,
                                     "--session_timeout=3s"};
  holder.insert(holder.end(), c.holder.begin() + 1, c.holder.end());
  Process& a = ZkrRaw(Concat(Concat(holder, {"--"}), Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  std::vector<std::string> waiter = {c.waiter[0], "--path=" + path};
  waiter.insert(waiter.end(), c.waiter.begin() + 1, c.waiter.end());
  Process& b = Zkr(Concat(Concat(waiter, {"--"}), Stamping("b", OnTerm::kObey, 10)));
  ASSERT_TRUE(WaitForChildren(path, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  ASSERT_TRUE(WaitForRunToEnd("a")) << a.Describe();
  ExpectNoOverlap();
  Heal(*proxy);
  CleanUp(path);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, Review51DialectTest,
    ::testing::Values(
        DialectCase{"reader", {"lock", "--mode=read"}, {"lock", "--mode=write"}},
        DialectCase{"curator", {"lock", "--dialect=curator"}, {"lock", "--dialect=curator"}},
        DialectCase{"kazoo-read",
                    {"lock", "--dialect=kazoo", "--mode=read"},
                    {"lock", "--dialect=kazoo", "--mode=write"}},
        DialectCase{"curator-elect",
                    {"elect", "--dialect=curator", "--id=a"},
                    {"elect", "--dialect=curator", "--id=b"}},
        DialectCase{"kazoo-elect",
                    {"elect", "--dialect=kazoo", "--id=a"},
                    {"elect", "--dialect=kazoo", "--id=b"}}),
    [](const ::testing::TestParamInfo<DialectCase>& info) {
      std::string name = info.param.name;
      for (char& ch : name) if (ch == '-') ch = '_';
      return name;
    });

}  // namespace
}  // namespace zkr

namespace zkr {
namespace {

// A lock on two paths, holding the first and queued on the second, gets
// SIGUSR2, then another one SIGHUP: 128+N, CMD never ran, and neither path
// keeps a node of theirs (the man page's 128+N row for lock: "the session is
// closed, and the server deletes the participant's node").
TEST_F(Review51Test, MultiPathLockSignalledWhileHalfAcquiredLeavesNothing) {
  const std::string first = Path("multi-a"), second = Path("multi-b");
  Process& holder = Zkr({"lock", "--path=" + second});
  ASSERT_TRUE(WaitForChildren(second, 1)) << holder.Describe();
  const std::string never = File("never-ran");
  for (int signal : {SIGUSR2, SIGHUP}) {
    SCOPED_TRACE(strsignal(signal));
    Process& m = Zkr({"lock", "--path=" + first, "--path=" + second, "--", "sh", "-c",
                      "echo ran >> " + testing::ShQuote(never)});
    ASSERT_TRUE(WaitForChildren(second, 2)) << m.Describe();
    m.Signal(signal);
    EXPECT_EQ(m.Wait(absl::Seconds(20)), 128 + signal) << m.Describe();
    EXPECT_TRUE(WaitForChildren(second, 1, absl::Seconds(4)))
        << ::testing::PrintToString(Children(second));
    EXPECT_TRUE(WaitForChildren(first, 0, absl::Seconds(4)))
        << ::testing::PrintToString(Children(first));
  }
  EXPECT_FALSE(testing::FileExists(never));
  holder.Signal(SIGTERM);
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 128 + SIGTERM) << holder.Describe();
  ExpectEmptiedAndDelete(second);
  auto stat = admin().Exists(first);
  if (stat.ok() && stat->has_value()) ExpectEmptiedAndDelete(first);
}

}  // namespace
}  // namespace zkr
