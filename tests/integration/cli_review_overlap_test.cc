// Review (issue 32): attacks on zkr's first promise — never two CMDs under
// one lock, more than N under a semaphore, or two leaders' CMDs — at the
// DEFAULT --grace, with CMDs that ignore SIGTERM or take 3 s to stop.
// Checked with the ledger (tests/support/cli_ledger.h). Every wait is on an
// observable condition; the durations only bound hangs.
#include <signal.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
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
using testing::LedgerRuns;
using testing::LedgerRunsOf;
using testing::OnTerm;
using testing::Process;
using testing::ProcessState;
using testing::ReadFile;
using testing::ShQuote;
using testing::TcpProxy;
using testing::WaitUntil;

class CliReviewOverlapTest : public CliTest {
 protected:
  std::string Ledger() const { return File("ledger"); }
  std::vector<std::string> Stamping(const std::string& name, OnTerm on_term, int stamps = -1,
                                    const std::string& also_ignore = "") {
    return LedgerCommand(Ledger(), name, on_term, stamps, also_ignore);
  }
  int Runs(const std::string& name) { return LedgerRunsOf(ReadFile(Ledger()), name + "-"); }
  bool WaitForStamps(const std::string& name, Process& owner, int runs = 1) {
    WaitUntil([&] { return Runs(name) >= runs || owner.Exited(); }, absl::Seconds(30));
    return Runs(name) >= runs;
  }
  // The number of stamps of all runs of `name`.
  int Stamps(const std::string& name) {
    int n = 0;
    for (const auto& [run, stamps] : LedgerRuns(ReadFile(Ledger()))) {
      if (absl::StartsWith(run, name + "-")) n += stamps.stamps;
    }
    return n;
  }
  void ExpectNoOverlap() {
    std::string overlaps;
    EXPECT_EQ(LedgerOverlaps(ReadFile(Ledger()), &overlaps), 0)
        << overlaps << Everyone() << "ledger:\n" << ReadFile(Ledger());
  }
  // What every process printed, for failure messages.
  std::string Everyone() {
    std::string text;
    for (auto& process : processes_) absl::StrAppend(&text, process->Describe(), "\n");
    return text;
  }
  // The most runs that were running at once (their [first, last] intersect).
  int MaxConcurrent() {
    std::vector<std::pair<int64_t, int>> events;
    for (const auto& [name, run] : LedgerRuns(ReadFile(Ledger()))) {
      events.push_back({run.first, +1});
      events.push_back({run.last, -1});
    }
    // At one instant, starts before ends: touching intervals count as overlapping.
    std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    int now = 0, most = 0;
    for (const auto& [t, d] : events) most = std::max(most, now += d);
    return most;
  }
  std::unique_ptr<TcpProxy> Proxy() {
    if (testing::SharedServer() == nullptr) return nullptr;
    auto proxy = TcpProxy::Start("127.0.0.1", testing::SharedServer()->client_port());
    return proxy.ok() ? std::move(*proxy) : nullptr;
  }
  Process& Started(const std::vector<std::string>& argv) {
    const int n = static_cast<int>(processes_.size());
    processes_.push_back(std::make_unique<Process>(argv, File(absl::StrCat("p", n, ".out")),
                                                   File(absl::StrCat("p", n, ".err"))));
    return *processes_.back();
  }
  Process& ZkrIgnoringHangup(std::vector<std::string> args) {
    args.insert(args.begin() + 1, absl::StrCat("--zk=", connect_));
    return Started(Concat({"sh", "-c", "trap '' HUP; exec \"$0\" \"$@\"", binary_}, args));
  }
  void CleanUp(const std::string& path) {
    for (auto& process : processes_) process->KillGroup();
    EXPECT_TRUE(WaitForChildren(path, 0, absl::Seconds(40))) << "nodes stayed under " << path;
    ExpectEmptyAndDelete(path);
  }
  // The revocation request node under `path` ("<node>.revoke"), or "".
  std::string RequestNode(const std::string& path) {
    for (const std::string& child : Children(path)) {
      if (absl::EndsWith(child, ".revoke")) return absl::StrCat(path, "/", child);
    }
    return "";
  }
  // Whether the request under `path` was marked (forced: data version > 0).
  bool RequestMarked(const std::string& path) {
    const std::string request = RequestNode(path);
    if (request.empty()) return false;
    auto stat = admin().Exists(request);
    return stat.ok() && stat->has_value() && (*stat)->version > 0;
  }
  bool StderrHas(Process& p, const std::string& text) {
    return absl::StrContains(p.Stderr(), text);
  }
};

// ---- revocation ---------------------------------------------------------------------

// `zkr revoke --grace=0s`: the holder must be dead before the waiter runs,
// also with a grace of zero (the request's deadline is "now").
TEST_F(CliReviewOverlapTest, RevokeWithZeroGraceKillsBeforeTheWaiterRuns) {
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
TEST_F(CliReviewOverlapTest, RevokeWithZeroGraceAndNoSignalKillsBeforeTheWaiterRuns) {
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
TEST_F(CliReviewOverlapTest, RevokeWithThreeSecondGraceAndSlowCommand) {
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
TEST_F(CliReviewOverlapTest, RevocationForcedWhileCutOffThenReconnectedBeforeTheLeaseEnds) {
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
TEST_F(CliReviewOverlapTest, RevocationOfAHolderBehindLatency) {
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
TEST_F(CliReviewOverlapTest, RevokingOneSemaphoreHolderKeepsAtMostNRunning) {
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

// ---- partitions -----------------------------------------------------------------

// A semaphore of one lease: its holder cut off (CMD ignores TERM).
TEST_F(CliReviewOverlapTest, PartitionedSemaphoreHolderOfOneLease) {
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
TEST_F(CliReviewOverlapTest, PartitionedSemaphoreHolderOfTwoLeases) {
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
TEST_F(CliReviewOverlapTest, PartitionedMultiLockHolder) {
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
TEST_F(CliReviewOverlapTest, HolderWhoseRequestsAreDropped) {
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
TEST_F(CliReviewOverlapTest, HolderWhoseAnswersAreDropped) {
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
TEST_F(CliReviewOverlapTest, PartitionHealsJustBeforeTheLeaseEnds) {
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
TEST_F(CliReviewOverlapTest, PartitionHealsJustAfterTheLeaseEnds) {
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
TEST_F(CliReviewOverlapTest, HolderSessionExpiredByTheServer) {
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
TEST_F(CliReviewOverlapTest, PartitionedHolderWithBackgroundChildIgnoringTerm) {
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

// ---- elect: step-down -----------------------------------------------------------

// SIGHUP twice in a row: one step-down, CMD stopped before the next leader.
TEST_F(CliReviewOverlapTest, StepDownSignalledTwiceQuickly) {
  const std::string election = Path("twice");
  Process& a = Zkr(Concat({"elect", "--path=" + election, "--id=a", "--"},
                          Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  a.Signal(SIGHUP);
  a.Signal(SIGUSR1);
  a.Signal(SIGHUP);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_TRUE(WaitForStamps("a", a, 2)) << a.Describe();
  EXPECT_FALSE(a.Exited()) << a.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

// A step-down signal while not leading (queued): harmless; the candidate
// leads later, after the leader.
TEST_F(CliReviewOverlapTest, StepDownWhileNotLeading) {
  const std::string election = Path("not-leading");
  Process& a = Zkr(Concat({"elect", "--path=" + election, "--id=a", "--"},
                          Stamping("a", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  b.Signal(SIGHUP);
  b.Signal(SIGUSR1);
  EXPECT_EQ(a.Wait(absl::Seconds(60)), 0) << a.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_EQ(Runs("b"), 1);
  ExpectNoOverlap();
  CleanUp(election);
}

// Under nohup, SIGHUP to a leader does nothing; SIGUSR1 steps it down.
TEST_F(CliReviewOverlapTest, NohupLeaderIgnoresHupButStepsDownOnUsr1) {
  const std::string election = Path("nohup-hup");
  Process& a = ZkrIgnoringHangup(Concat({"elect", "--path=" + election, "--id=a", "--"},
                                        Stamping("a", OnTerm::kStopIn3s)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=b", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  a.Signal(SIGHUP);
  // Pending signals are taken lowest first: SIGUSR1 (10) after SIGHUP (1).
  a.Signal(SIGUSR1);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_TRUE(WaitForStamps("a", a, 2)) << a.Describe();
  EXPECT_THAT(a.Stderr(), ::testing::Not(::testing::HasSubstr("Hangup"))) << a.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

// A leader cut off whose CMD takes 3 s to stop; the next leader after.
TEST_F(CliReviewOverlapTest, PartitionedLeaderWhoseCommandStopsIn3s) {
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

// ---- job control ------------------------------------------------------------------

// Ctrl-Z then fg well within the lease: CMD is continued and finishes; exit 0.
TEST_F(CliReviewOverlapTest, CtrlZThenContinueWithinTheLease) {
  const std::string lock = Path("tstp-cont");
  Process& a = Zkr(Concat({"lock", "--path=" + lock, "--"}, Stamping("a", OnTerm::kObey, 30)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  a.Signal(SIGTSTP);
  ASSERT_TRUE(WaitUntil([&] { return ProcessState(a.pid()) == 'T' || a.Exited(); }, absl::Seconds(20)));
  a.Signal(SIGCONT);
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 0) << a.Describe();
  EXPECT_EQ(Stamps("a"), 30);
  ExpectEmptyAndDelete(lock);
}

// SIGCONT without a stop: nothing happens.
TEST_F(CliReviewOverlapTest, ContinueWithoutStop) {
  const std::string lock = Path("cont-only");
  Process& a = Zkr(Concat({"lock", "--path=" + lock, "--"}, Stamping("a", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  a.Signal(SIGCONT);
  a.Signal(SIGCONT);
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 0) << a.Describe();
  EXPECT_EQ(Stamps("a"), 20);
  ExpectEmptyAndDelete(lock);
}

// Ctrl-Z while waiting for the lock, held stopped past the session's end;
// meanwhile the holder releases. On fg the waiter must not run in parallel
// with anyone, must not hang, and leave nothing behind.
TEST_F(CliReviewOverlapTest, CtrlZWhileWaitingPastTheSession) {
  const std::string lock = Path("tstp-waiting");
  Process& a = Zkr(Concat({"lock", "--path=" + lock, "--"}, Stamping("a", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--session_timeout=2s", "--timeout=60s",
                           "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  b.Signal(SIGTSTP);
  ASSERT_TRUE(WaitUntil([&] { return ProcessState(b.pid()) == 'T' || b.Exited(); }, absl::Seconds(20)));
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 0) << a.Describe();
  // b's session expires while it is stopped: its node goes.
  ASSERT_TRUE(WaitForChildren(lock, 0, absl::Seconds(30)));
  Process& c = Zkr(Concat({"lock", "--path=" + lock, "--"}, Stamping("c", OnTerm::kObey, 40)));
  ASSERT_TRUE(WaitForStamps("c", c)) << c.Describe();
  b.Signal(SIGCONT);
  const auto code = b.Wait(absl::Seconds(60));
  EXPECT_TRUE(code.has_value()) << b.Describe();
  EXPECT_EQ(c.Wait(absl::Seconds(30)), 0) << c.Describe();
  ExpectNoOverlap();
  CleanUp(lock);
}

// Ctrl-Z just as CMD starts (after the lock is granted, while zkr is still
// starting CMD). zkr's PATH is made long (40000 missing directories before
// /usr/bin) so that finding CMD takes ~100 ms: the SIGTSTP, sent ~20 ms
// after the previous holder's node went, lands while CMD is being started.
// Promise: Ctrl-Z stops CMD's group, then zkr — CMD must not run on while
// zkr is stopped (its session expires and the next holder runs).
TEST_F(CliReviewOverlapTest, CtrlZJustAsTheCommandStarts) {
  const std::string lock = Path("tstp-starting");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  std::string path;
  for (int i = 0; i < 40000; ++i) path += "/n:";
  path += "/usr/bin:/bin";
  const std::string stamping = Stamping("b", OnTerm::kObey)[2];
  Process& b = Started({"env", "PATH=" + path, binary_, "lock", "--zk=" + connect_,
                        "--path=" + lock, "--session_timeout=2s", "--timeout=60s", "--", "sh",
                        "-c", "PATH=/usr/bin:/bin; " + stamping});
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  Touch("release");
  ASSERT_TRUE(WaitForChildren(lock, 1)) << holder.Describe();
  absl::SleepFor(absl::Milliseconds(20));  // aim into the window; not a wait for an outcome
  b.Signal(SIGTSTP);
  ASSERT_TRUE(WaitUntil([&] { return ProcessState(b.pid()) == 'T' || b.Exited(); }, absl::Seconds(20)))
      << b.Describe();
  // zkr b is stopped: its session expires and c is granted.
  Process& c = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("c", OnTerm::kObey, 20)));
  EXPECT_EQ(c.Wait(absl::Seconds(60)), 0) << c.Describe();
  const int b_stamps_while_stopped = Stamps("b");
  b.Signal(SIGCONT);
  const auto code = b.Wait(absl::Seconds(30));
  EXPECT_TRUE(code.has_value()) << b.Describe();
  EXPECT_NE(code, 0) << b.Describe();
  ExpectNoOverlap();
  RecordProperty("b_stamps_while_stopped", b_stamps_while_stopped);
  CleanUp(lock);
}

}  // namespace
}  // namespace zkr
