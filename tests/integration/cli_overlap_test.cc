// zkr's first promise, end to end (issue 32): never two CMDs under one lock,
// more than N under a semaphore, or two leaders' CMDs — CMD's group is dead
// before another holder is granted after a partition, a lost session or a
// revocation, at the DEFAULT --grace (10 s) and with CMDs that ignore
// SIGTERM or take 3 s to stop. Checked with the ledger
// (tests/support/cli_ledger.h): no two CMDs stamp at once. Every wait is on
// an observable condition; the durations only bound hangs. Step-down and
// Ctrl-Z: cli_job_control_test.cc.
#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/cli_ledger.h"
#include "tests/support/cli_ledger_fixture.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::CliLedgerTest;
using testing::Concat;
using testing::LedgerOverlaps;
using testing::LedgerRuns;
using testing::LedgerRunsOf;
using testing::OnTerm;
using testing::Process;
using testing::ProcessState;
using testing::ProcessStopped;
using testing::ReadFile;
using testing::ShQuote;
using testing::TcpProxy;
using testing::WaitUntil;

// The first suite's hang bounds.
class CliOverlapTest : public CliLedgerTest {
 protected:
  CliOverlapTest() : CliLedgerTest(testing::kLedgerBounds) {}
};

// The review's (issue 32) scenarios, with their longer hang bounds.
class CliOverlapAtDefaultGraceTest : public CliLedgerTest {
 protected:
  CliOverlapAtDefaultGraceTest() : CliLedgerTest(testing::kLedgerBoundsLong) {}
};

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

// `zkr revoke --grace=0s`: the holder must be dead before the waiter runs,
// also with a grace of zero (the request's deadline is "now").
TEST_F(CliOverlapAtDefaultGraceTest, RevokeWithZeroGraceKillsBeforeTheWaiterRuns) {
  const std::string lock = Path("revoke-zero");
  Process& a = Zkr(Concat({"lock", "--path=" + lock, "--"},
                          Stamping("a", OnTerm::kIgnore, -1, "USR1")));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  Process& revoke = Zkr({"revoke", "--path=" + lock, "--grace=0s"});
  EXPECT_EQ(revoke.Wait(absl::Seconds(60)), 0) << revoke.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// The same with --revoke_signal=none: CMD is not told, only stopped.
TEST_F(CliOverlapAtDefaultGraceTest, RevokeWithZeroGraceAndNoSignalKillsBeforeTheWaiterRuns) {
  const std::string lock = Path("revoke-zero-none");
  Process& a = Zkr(Concat({"lock", "--path=" + lock, "--revoke_signal=none", "--"},
                          Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  Process& revoke = Zkr({"revoke", "--path=" + lock, "--grace=0s"});
  EXPECT_EQ(revoke.Wait(absl::Seconds(60)), 0) << revoke.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// --grace=3s, --revoke_signal=none, a CMD that takes 3 s to stop.
TEST_F(CliOverlapAtDefaultGraceTest, RevokeWithThreeSecondGraceAndSlowCommand) {
  const std::string lock = Path("revoke-three");
  Process& a = Zkr(Concat({"lock", "--path=" + lock, "--revoke_signal=none", "--"},
                          Stamping("a", OnTerm::kStopIn3s)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  Process& revoke = Zkr({"revoke", "--path=" + lock, "--grace=3s"});
  EXPECT_EQ(revoke.Wait(absl::Seconds(60)), 0) << revoke.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// The holder is cut off while a revocation (--grace=1s) is asked and
// forced; the connection comes back (reset, reconnect within the session)
// before the holder's lease ends. It hears request and mark at once, and
// its library deletes its node: the waiter may run at once, so CMD must
// already be dead.
TEST_F(CliOverlapAtDefaultGraceTest, RevocationForcedWhileCutOffThenReconnectedBeforeTheLeaseEnds) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string lock = Path("revoke-partition");
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + lock, "--"},
                             Stamping("a", OnTerm::kIgnore, -1, "USR1")));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  Process& revoke = Zkr({"revoke", "--path=" + lock, "--grace=1s"});
  ASSERT_TRUE(WaitUntil([&] { return RequestMarked(lock) || revoke.Exited(); },
                        absl::Seconds(20)))
      << revoke.Describe();
  // Still within a's lease (10 s session; the mark came ~1 s after the cut).
  proxy->SetMode(TcpProxy::Mode::kPass);
  proxy->ResetConnections();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  EXPECT_EQ(revoke.Wait(absl::Seconds(60)), 0) << revoke.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// A holder 300 ms away (each direction; a cross-region link), `zkr revoke
// --grace=1s` — the scenario of cli_overlap_test's revocation test, with
// latency. The holder learns the request's deadline only after the event,
// an exists and a get (five one-way trips, ~1.5 s), but hears the mark one
// trip after it is made and deletes its node at once: the waiter may run
// ~1.6 s after the request, while CMD's SIGKILL is due at ~2.25 s (or 4.7 s
// when the mark comes first). CMD ignores TERM and USR1.
TEST_F(CliOverlapAtDefaultGraceTest, RevocationOfAHolderBehindLatency) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string lock = Path("revoke-latency");
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + lock, "--"},
                             Stamping("a", OnTerm::kIgnore, -1, "USR1")));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  proxy->SetDelay(absl::Milliseconds(300));
  Process& revoke = Zkr({"revoke", "--path=" + lock, "--grace=1s"});
  EXPECT_EQ(revoke.Wait(absl::Seconds(60)), 0) << revoke.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// One of two semaphore holders (N=2) is revoked (--node, --grace=1s); a
// third participant waits. Never more than 2 CMDs at once.
TEST_F(CliOverlapAtDefaultGraceTest, RevokingOneSemaphoreHolderKeepsAtMostNRunning) {
  const std::string sem = Path("revoke-sem");
  Process& a = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=2", "--"},
                          Stamping("a", OnTerm::kIgnore, -1, "USR1")));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  ASSERT_TRUE(WaitForChildren(sem, 1));
  const std::string a_node = Children(sem).front();
  Process& c = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=2", "--"},
                          Stamping("c", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("c", c)) << c.Describe();
  Process& b = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=2", "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(sem, 3)) << b.Describe();
  Process& revoke = Zkr({"revoke", "--path=" + sem, "--node=" + a_node, "--grace=1s"});
  EXPECT_EQ(revoke.Wait(absl::Seconds(60)), 0) << revoke.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  EXPECT_FALSE(c.Exited()) << c.Describe();
  EXPECT_LE(MaxConcurrent(), 2) << ReadFile(Ledger());
  CleanUp(sem);
}

// A semaphore of one lease: its holder cut off (CMD ignores TERM).
TEST_F(CliOverlapAtDefaultGraceTest, PartitionedSemaphoreHolderOfOneLease) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string sem = Path("sem1-partition");
  Process& a = ZkrRaw(Concat({"semaphore", "--zk=" + proxy->address(), "--path=" + sem,
                              "--leases=1", "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=1", "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(sem, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(sem);
}

// A semaphore of two leases: one holder cut off (CMD takes 3 s to stop),
// the other healthy, a third waits. Never 3 at once.
TEST_F(CliOverlapAtDefaultGraceTest, PartitionedSemaphoreHolderOfTwoLeases) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string sem = Path("sem2-partition");
  Process& a = ZkrRaw(Concat({"semaphore", "--zk=" + proxy->address(), "--path=" + sem,
                              "--leases=2", "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kStopIn3s)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& c = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=2", "--"},
                          Stamping("c", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("c", c)) << c.Describe();
  Process& b = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=2", "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(sem, 3)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  EXPECT_LE(MaxConcurrent(), 2) << ReadFile(Ledger());
  CleanUp(sem);
}

// `zkr lock --path=A --path=B` holder cut off; one waiter on each path.
TEST_F(CliOverlapAtDefaultGraceTest, PartitionedMultiLockHolder) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string x = Path("multi-x"), y = Path("multi-y");
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + x, "--path=" + y,
                              "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + y, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(y, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  for (auto& process : processes_) process->KillGroup();
  CleanUp(x);
  CleanUp(y);
}

// One-way partitions: requests lost, or answers lost.
TEST_F(CliOverlapAtDefaultGraceTest, HolderWhoseRequestsAreDropped) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string lock = Path("drop-c2s");
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + lock,
                              "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kDropClientToServer);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// Answers dropped: the server keeps hearing the holder (its session lives),
// the holder hears nothing. CMD must be stopped by the lease's end, and zkr
// must not hang.
TEST_F(CliOverlapAtDefaultGraceTest, HolderWhoseAnswersAreDropped) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string lock = Path("drop-s2c");
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + lock,
                              "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kDropServerToClient);
  EXPECT_EQ(a.Wait(absl::Seconds(60)), 4) << a.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// The partition heals (reset, reconnect) after zkr sent SIGTERM but before
// the lease ended: the hold is kept until CMD (3 s to stop) exits; exit 4;
// the waiter after.
TEST_F(CliOverlapAtDefaultGraceTest, PartitionHealsJustBeforeTheLeaseEnds) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string lock = Path("heal-before");
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + lock,
                              "--session_timeout=4s", "--"},
                             Stamping("a", OnTerm::kStopIn3s)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(WaitUntil([&] { return StderrHas(a, "SIGTERM to CMD") || a.Exited(); },
                        absl::Seconds(20)))
      << a.Describe();
  proxy->SetMode(TcpProxy::Mode::kPass);
  proxy->ResetConnections();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// The partition heals just after zkr killed CMD at the lease's end (the
// server may not have expired the session yet).
TEST_F(CliOverlapAtDefaultGraceTest, PartitionHealsJustAfterTheLeaseEnds) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string lock = Path("heal-after");
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + lock,
                              "--session_timeout=4s", "--"},
                             Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(WaitUntil([&] { return StderrHas(a, "SIGKILL to CMD") || a.Exited(); },
                        absl::Seconds(20)))
      << a.Describe();
  proxy->SetMode(TcpProxy::Mode::kPass);
  proxy->ResetConnections();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// Session expiry (the server expires the holder's session; the client is
// connected again at once): CMD must be dead before the waiter runs.
TEST_F(CliOverlapAtDefaultGraceTest, HolderSessionExpiredByTheServer) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string lock = Path("expired");
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + lock,
                              "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  // Wait until the server dropped a's node (its session expired), then let
  // a reconnect and learn of the expiry.
  ASSERT_TRUE(WaitUntil([&] { return Runs("b") > 0 || b.Exited(); }, absl::Seconds(30)));
  proxy->SetMode(TcpProxy::Mode::kPass);
  proxy->ResetConnections();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// A CMD that forks a background child ignoring TERM (same group): the
// child too is dead before the waiter runs.
TEST_F(CliOverlapAtDefaultGraceTest, PartitionedHolderWithBackgroundChildIgnoringTerm) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string lock = Path("bg-child");
  const std::vector<std::string> inner = Stamping("a", OnTerm::kIgnore);
  // sh -c '(sh -c INNER) & wait' : the parent obeys TERM, its child does not.
  Process& a = ZkrRaw(Concat({"lock", "--zk=" + proxy->address(), "--path=" + lock,
                              "--session_timeout=3s", "--"},
                             {"sh", "-c",
                              absl::StrCat("sh -c ", ShQuote(inner[2]), " & wait")}));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 4) << a.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// A leader cut off whose CMD takes 3 s to stop; the next leader after.
TEST_F(CliOverlapAtDefaultGraceTest, PartitionedLeaderWhoseCommandStopsIn3s) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string election = Path("elect-slow");
  Process& a = ZkrRaw(Concat({"elect", "--zk=" + proxy->address(), "--path=" + election,
                              "--id=a", "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kStopIn3s)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

}  // namespace
}  // namespace zkr
