// zkr's one promise, end to end (issue 32): CMD's group is dead before
// another holder can be granted — after a partition, a revocation, a
// step-down or a Ctrl-Z, at the DEFAULT --grace (10 s), with a CMD that
// ignores SIGTERM or takes 3 s to stop. Checked with a ledger
// (tests/support/cli_ledger.h): no two CMDs stamp at once.
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/cli_ledger.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::CliTest;
using testing::Concat;
using testing::LedgerCommand;
using testing::LedgerOverlaps;
using testing::LedgerRunsOf;
using testing::OnTerm;
using testing::Process;
using testing::ProcessState;
using testing::ProcessStopped;
using testing::ReadFile;
using testing::WaitUntil;

class CliOverlapTest : public CliTest {
 protected:
  std::string Ledger() const { return File("ledger"); }
  std::vector<std::string> Stamping(const std::string& name, OnTerm on_term, int stamps = -1,
                                    const std::string& also_ignore = "") {
    return LedgerCommand(Ledger(), name, on_term, stamps, also_ignore);
  }
  // Waits (bounded) until a run of `name` has stamped; fails early if
  // `owner` exits.
  bool WaitForStamps(const std::string& name, Process& owner) {
    WaitUntil([&] { return LedgerRunsOf(ReadFile(Ledger()), name + "-") > 0 || owner.Exited(); },
              absl::Seconds(20));
    return LedgerRunsOf(ReadFile(Ledger()), name + "-") > 0;
  }
  // No two runs overlap in the ledger.
  void ExpectNoOverlap() {
    std::string overlaps;
    EXPECT_EQ(LedgerOverlaps(ReadFile(Ledger()), &overlaps), 0)
        << overlaps << "ledger:\n" << ReadFile(Ledger());
  }
  // A proxy to the embedded server, for partitions.
  std::unique_ptr<testing::TcpProxy> Proxy() {
    if (testing::SharedServer() == nullptr) return nullptr;
    auto proxy = testing::TcpProxy::Start("127.0.0.1", testing::SharedServer()->client_port());
    return proxy.ok() ? std::move(*proxy) : nullptr;
  }
  // Starts `argv` (not zkr itself: a wrapper that execs it).
  Process& Started(const std::vector<std::string>& argv) {
    const int n = static_cast<int>(processes_.size());
    processes_.push_back(std::make_unique<Process>(argv, File(absl::StrCat("p", n, ".out")),
                                                   File(absl::StrCat("p", n, ".err"))));
    return *processes_.back();
  }
  // `zkr <args>` started with SIGHUP ignored, as nohup(1) does.
  Process& ZkrIgnoringHangup(std::vector<std::string> args) {
    args.insert(args.begin() + 1, absl::StrCat("--zk=", connect_));
    return Started(Concat({"sh", "-c", "trap '' HUP; exec \"$0\" \"$@\"", binary_}, args));
  }
  // Ends every process still running, waits for their nodes to go (their
  // sessions expire) and deletes the queue directory `path`.
  void CleanUp(const std::string& path) {
    for (auto& process : processes_) process->KillGroup();
    EXPECT_TRUE(WaitForChildren(path, 0, absl::Seconds(30))) << "nodes stayed under " << path;
    ExpectEmptyAndDelete(path);
  }
};

// ---- item 1: a loss at the default --grace ------------------------------------------

// The holder is cut off; its CMD ignores SIGTERM (or obeys it slowly). The
// waiter is granted once the holder's session expired: the holder's CMD must
// be dead by then.
class PartitionedHolderTest : public CliOverlapTest,
                              public ::testing::WithParamInterface<OnTerm> {};

TEST_P(PartitionedHolderTest, IsDeadBeforeTheWaiterRuns) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string lock = Path("partitioned");
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + lock,
                              "--session_timeout=3s", "--"},
                             Stamping("a", GetParam())));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  proxy->SetMode(testing::TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

INSTANTIATE_TEST_SUITE_P(CommandIgnoringTermOrStoppingIn3s, PartitionedHolderTest,
                         ::testing::Values(OnTerm::kIgnore, OnTerm::kStopIn3s));

// A leader cut off; its CMD ignores SIGTERM; the next candidate leads once
// the leader's session expired.
TEST_F(CliOverlapTest, PartitionedLeaderWhoseCommandIgnoresTermIsDeadBeforeTheNextLeaderRuns) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string election = Path("partitioned-elect");
  Process& a = ZkrRaw(Concat({"elect", "--zk=" + proxy->address(), "--path=" + election,
                              "--id=a", "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  proxy->SetMode(testing::TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

// `zkr revoke --grace=1s` with a waiter: the holder's CMD ignores both the
// request's signal (USR1) and SIGTERM. It must be dead before the requester
// forces the hold, which lets the waiter in.
TEST_F(CliOverlapTest, RevocationWithAShortGraceKillsTheCommandBeforeTheWaiterRuns) {
  const std::string lock = Path("revoked");
  Process& a = Zkr(Concat({"lock", "--path=" + lock, "--"},
                          Stamping("a", OnTerm::kIgnore, -1, "USR1")));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  Process& revoke = Zkr({"revoke", "--path=" + lock, "--grace=1s"});
  EXPECT_EQ(revoke.Wait(absl::Seconds(60)), 0) << revoke.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  // Stopped for the request's deadline, not only once forced (LOST).
  EXPECT_THAT(a.Stderr(), ::testing::HasSubstr("the hold is revoked: SIGTERM")) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// ---- item 2: step-down -----------------------------------------------------------

// SIGHUP: the leader stops its CMD (TERM, then KILL: it ignores TERM) before
// it gives up its node; the next leader runs after; the first queues again.
TEST_F(CliOverlapTest, SteppingDownStopsTheCommandBeforeHandingOver) {
  const std::string election = Path("step-down");
  Process& a = Zkr(Concat({"elect", "--path=" + election, "--id=a", "--session_timeout=3s", "--"},
                          Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  a.Signal(SIGHUP);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  // Then a leads again: a second run of its CMD.
  EXPECT_TRUE(WaitUntil([&] { return LedgerRunsOf(ReadFile(Ledger()), "a-") == 2; },
                        absl::Seconds(20)))
      << a.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

// ---- item 3: Ctrl-Z -----------------------------------------------------------------

// Ctrl-Z stops CMD with zkr; the session expires meanwhile and the waiter
// runs; on `fg` the lease is over: CMD is killed, not continued (exit 4).
TEST_F(CliOverlapTest, CtrlZStopsTheCommandAndAContinueAfterTheLeaseKillsIt) {
  const std::string lock = Path("ctrl-z");
  Process& a = Zkr(Concat({"lock", "--path=" + lock, "--session_timeout=2s", "--"},
                          Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  a.Signal(SIGTSTP);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  a.Signal(SIGCONT);
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// Ctrl-Z while waiting stops zkr as the shell expects; `fg` continues it.
// (A guard: job control must keep working with SIGTSTP handled.)
TEST_F(CliOverlapTest, CtrlZWhileWaitingStopsZkrUntilContinued) {
  const std::string lock = Path("ctrl-z-waiting");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& waiter = Zkr({"lock", "--path=" + lock, "--timeout=60s", "--", "true"});
  ASSERT_TRUE(WaitForChildren(lock, 2)) << waiter.Describe();
  waiter.Signal(SIGTSTP);
  EXPECT_TRUE(WaitUntil([&] { return ProcessState(waiter.pid()) == 'T'; }, absl::Seconds(20)))
      << waiter.Describe();
  waiter.Signal(SIGCONT);
  EXPECT_TRUE(WaitUntil([&] { return ProcessState(waiter.pid()) != 'T'; }, absl::Seconds(20)));
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(30)), 0) << holder.Describe();
  EXPECT_EQ(waiter.Wait(absl::Seconds(30)), 0) << waiter.Describe();
  ExpectEmptyAndDelete(lock);
}

// Ctrl-Z during `barrier enter -- CMD` stops CMD's group with zkr, and `fg`
// continues both (no hold to lose: CMD goes on).
TEST_F(CliOverlapTest, CtrlZStopsABarriersCommandToo) {
  const std::string barrier = Path("ctrl-z-barrier");
  Process& member = Zkr(
      {"barrier", "--path=" + barrier, "--count=1", "enter", "--", "sh", "-c",
       absl::StrCat("echo $$ > ", testing::ShQuote(File("cmd.pid")), "; touch ", testing::ShQuote(File("ready")),
                    "; while [ ! -e ", testing::ShQuote(File("release")), " ]; do sleep 0.05; done")});
  ASSERT_TRUE(WaitForFile("ready", member)) << member.Describe();
  const pid_t cmd = std::stoi(ReadFile(File("cmd.pid")));
  member.Signal(SIGTSTP);
  EXPECT_TRUE(WaitUntil([&] { return ProcessState(member.pid()) == 'T'; }, absl::Seconds(20)))
      << member.Describe();
  EXPECT_TRUE(WaitUntil([&] { return ProcessStopped(cmd); }, absl::Seconds(20)))
      << "CMD runs on while zkr is stopped";
  member.Signal(SIGCONT);
  EXPECT_TRUE(WaitUntil([&] { return !ProcessStopped(cmd); }, absl::Seconds(20)))
      << "CMD stays stopped after fg";
  Touch("release");
  EXPECT_EQ(member.Wait(absl::Seconds(30)), 0) << member.Describe();
  ExpectEmptyAndDelete(barrier);
}

// ---- item 6: nohup --------------------------------------------------------------------

// Started with SIGHUP ignored (nohup), a waiting `zkr lock` ignores it.
TEST_F(CliOverlapTest, HangupIgnoredAtStartStaysIgnored) {
  const std::string lock = Path("nohup");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& waiter = ZkrIgnoringHangup({"lock", "--path=" + lock, "--timeout=60s", "--", "true"});
  ASSERT_TRUE(WaitForChildren(lock, 2)) << waiter.Describe();
  waiter.Signal(SIGHUP);
  // Pending signals are taken lowest number first: once zkr stopped at the
  // SIGTSTP sent after it, the SIGHUP was handled or discarded.
  waiter.Signal(SIGTSTP);
  ASSERT_TRUE(WaitUntil([&] { return ProcessState(waiter.pid()) == 'T' || waiter.Exited(); },
                        absl::Seconds(20)));
  waiter.Signal(SIGCONT);
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(30)), 0) << holder.Describe();
  EXPECT_EQ(waiter.Wait(absl::Seconds(30)), 0) << waiter.Describe();
  ExpectEmptyAndDelete(lock);
}

// Under nohup, SIGUSR1 steps a leader down: CMD stopped first, then the next
// leader runs, and the first queues again.
TEST_F(CliOverlapTest, Usr1StepsDownALeaderStartedUnderNohup) {
  const std::string election = Path("nohup-elect");
  Process& a = ZkrIgnoringHangup(Concat(
      {"elect", "--path=" + election, "--id=a", "--session_timeout=3s", "--"},
      Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  a.Signal(SIGUSR1);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_TRUE(WaitUntil([&] { return LedgerRunsOf(ReadFile(Ledger()), "a-") == 2; },
                        absl::Seconds(20)))
      << a.Describe();
  EXPECT_FALSE(a.Exited()) << a.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

}  // namespace
}  // namespace zkr
