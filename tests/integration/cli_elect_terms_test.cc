// zkr elect across terms, zkr's signal
// handling and its plain output. Each test names the promise it attacks.
// Every wait is on an observable condition; durations only bound hangs.
#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/cli_ledger.h"
#include "tests/support/cli_ledger_fixture.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::CliLedgerTest;
using testing::Concat;
using testing::FileExists;
using testing::OnTerm;
using testing::Process;
using testing::ProcessState;
using testing::ReadFile;
using testing::ShQuote;
using testing::TcpProxy;
using testing::WaitUntil;

class CliElectAttackTest : public CliLedgerTest {
 protected:
  CliElectAttackTest() : CliLedgerTest(testing::kLedgerBoundsLong) {}

  // The child of `election` whose data carries `id` ("" if none).
  std::string NodeOf(const std::string& election, const std::string& id) {
    for (const std::string& child : Children(election)) {
      const std::string node = absl::StrCat(election, "/", child);
      auto data = admin().Get(node);
      if (data.ok() && absl::StrContains(*data, id)) return node;
    }
    return "";
  }
  // Waits until `p`'s stderr holds `text` (or p exits).
  bool WaitForStderr(Process& p, const std::string& text,
                     absl::Duration timeout = absl::Seconds(30)) {
    WaitUntil([&] { return StderrHas(p, text) || p.Exited(); }, timeout);
    return StderrHas(p, text);
  }
  int Count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
};

// ---- 1. elect across terms --------------------------------------------------

// Promise: never two leaders' CMDs at once, whatever happens, at the default
// --grace. An operator deletes the leader's node (leadership lost); the next
// candidate leads at once. The deposed leader's CMD ignores SIGTERM.
TEST_F(CliElectAttackTest, LeaderNodeDeletedByOperatorCmdIgnoringTermNeverOverlapsNextLeader) {
  const std::string election = Path("deleted-by-hand");
  Process& a = Zkr(Concat({"elect", "--path=" + election, "--id=alpha", "--"},
                          Stamping("a", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=bravo", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  const std::string node = NodeOf(election, "alpha");
  ASSERT_NE(node, "");
  ASSERT_TRUE(admin().Delete(node).ok());
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  // a campaigns again and, b gone, runs CMD again.
  EXPECT_TRUE(WaitForRuns("a", a, 2)) << a.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

// Promise: leadership lost by session expiry (a partition) -> CMD stopped
// -> campaigns again -> CMD runs again; never two at once; the interrupt
// afterwards exits 128+15 (CMD killed by SIGTERM); nothing left behind.
TEST_F(CliElectAttackTest, ExpiredLeaderCampaignsAgainAndRunsAgainWithoutOverlap) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string election = Path("expired");
  Process& a = ZkrRaw(Concat({"elect", "--zk=" + proxy->address(), "--path=" + election,
                              "--id=alpha", "--session_timeout=3s", "--"},
                             Stamping("a", OnTerm::kStopIn3s)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=bravo", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  // b leads once a's session is gone on the server.
  ASSERT_TRUE(WaitForStamps("b", b)) << b.Describe() << a.Describe();
  proxy->SetMode(TcpProxy::Mode::kPass);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  EXPECT_TRUE(WaitForRuns("a", a, 2)) << a.Describe();
  EXPECT_TRUE(WaitForStderr(a, "campaigning again")) << a.Describe();
  ExpectNoOverlap();
  const int runs = Runs("a");
  a.Signal(SIGTERM);
  // kStopIn3s exits 0 three seconds after the TERM: zkr exits with CMD's 0.
  EXPECT_EQ(a.Wait(absl::Seconds(30)), 0) << a.Describe();
  EXPECT_EQ(Runs("a"), runs) << "a CMD started after SIGTERM\n" << a.Describe();
  EXPECT_TRUE(WaitForChildren(election, 0, absl::Seconds(20))) << "left behind: "
                                                               << Children(election).size();
  ExpectEmptyAndDelete(election);
}

// Promise (man page, 128+N): a signal N that stops zkr between terms — lost,
// campaigning again — exits 128+N, deletes the candidate's node and starts
// no CMD.
class SignalDuringReCampaignTest : public CliElectAttackTest,
                                   public ::testing::WithParamInterface<int> {};

TEST_P(SignalDuringReCampaignTest, Exits128PlusTheSignalAndLeavesNoNode) {
  const int signal = GetParam();
  const std::string election = Path(absl::StrCat("recampaign-", signal));
  Process& a = Zkr(Concat({"elect", "--path=" + election, "--id=alpha", "--"},
                          Stamping("a", OnTerm::kObey)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=bravo", "--"},
                          HoldUntilReleased("b-held", "b-release")));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  ASSERT_TRUE(admin().Delete(NodeOf(election, "alpha")).ok());
  ASSERT_TRUE(WaitForFile("b-held", b)) << b.Describe();
  ASSERT_TRUE(WaitForStderr(a, "campaigning again")) << a.Describe();
  ASSERT_TRUE(WaitForChildren(election, 2)) << a.Describe();  // a re-queued behind b
  a.Signal(signal);
  EXPECT_EQ(a.Wait(absl::Seconds(20)), 128 + signal) << a.Describe();
  EXPECT_EQ(NodeOf(election, "alpha"), "") << a.Describe();
  EXPECT_EQ(Runs("a"), 1);
  Touch("b-release");
  EXPECT_EQ(b.Wait(absl::Seconds(20)), 0) << b.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

INSTANTIATE_TEST_SUITE_P(TermIntUsr2, SignalDuringReCampaignTest,
                         ::testing::Values(SIGTERM, SIGINT, SIGUSR2));

// The review found the man page's and --help's 130 row promising exit 130
// for SIGHUP/SIGUSR1 while a candidate waits, which in fact step down (a
// waiting candidate has nothing to step down from: it stays queued, as the
// SIGNALS section says). The row now says so; behaviour and row agree.
class StepDownSignalWhileWaitingTest : public CliElectAttackTest,
                                       public ::testing::WithParamInterface<int> {};

TEST_P(StepDownSignalWhileWaitingTest, AWaitingCandidateStaysQueuedAsTheExitRowSays) {
  const int signal = GetParam();
  const std::string election = Path(absl::StrCat("waiting-", signal));
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=bravo", "--"},
                          HoldUntilReleased("b-held", "b-release")));
  ASSERT_TRUE(WaitForFile("b-held", b)) << b.Describe();
  Process& a = Zkr(Concat({"elect", "--path=" + election, "--id=alpha", "--"},
                          Stamping("a", OnTerm::kObey)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << a.Describe();
  a.Signal(signal);
  ASSERT_TRUE(WaitForStderr(a, "nothing to do")) << a.Describe();
  EXPECT_FALSE(a.Exited()) << a.Describe();
  EXPECT_EQ(Children(election).size(), 2u);
  Process& help = Zkr({"elect", "--help"});
  EXPECT_EQ(help.Wait(absl::Seconds(20)), 0);
  EXPECT_THAT(help.Stdout(), HasSubstr("only until it has joined"))
      << help.Describe();
  Touch("b-release");
  EXPECT_EQ(b.Wait(absl::Seconds(20)), 0) << b.Describe();
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();  // then it leads
  a.Signal(SIGTERM);
  EXPECT_TRUE(a.Wait(absl::Seconds(20)).has_value()) << a.Describe();
  CleanUp(election);
}

INSTANTIATE_TEST_SUITE_P(HupUsr1, StepDownSignalWhileWaitingTest,
                         ::testing::Values(SIGHUP, SIGUSR1));

// Promise: step-down signals (SIGHUP, SIGUSR1, SIGUSR1 under nohup) while
// not leading, between terms, change nothing; Ctrl-Z and fg while waiting
// again neither; the candidate leads again after the leader goes and runs
// CMD once more; never two at once.
TEST_F(CliElectAttackTest, StepDownAndJobControlSignalsBetweenTermsDoNothing) {
  const std::string election = Path("between-terms");
  Process& a = ZkrIgnoringHangup({"elect", "--path=" + election, "--id=alpha", "--", "sh", "-c",
                                  Stamping("a", OnTerm::kIgnore)[2]});
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=bravo", "--"},
                          HoldUntilReleased("b-held", "b-release")));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  ASSERT_TRUE(admin().Delete(NodeOf(election, "alpha")).ok());
  ASSERT_TRUE(WaitForFile("b-held", b)) << b.Describe();
  ASSERT_TRUE(WaitForStderr(a, "campaigning again")) << a.Describe();
  ASSERT_TRUE(WaitForChildren(election, 2)) << a.Describe();
  const int before = Count(a.Stderr(), "nothing to do");
  a.Signal(SIGHUP);  // ignored (nohup)
  a.Signal(SIGUSR1);
  ASSERT_TRUE(WaitUntil([&] { return Count(a.Stderr(), "nothing to do") > before || a.Exited(); },
                        absl::Seconds(10)))
      << a.Describe();
  a.Signal(SIGTSTP);
  ASSERT_TRUE(WaitUntil([&] { return ProcessState(a.pid()) == 'T' || a.Exited(); },
                        absl::Seconds(10)))
      << a.Describe();
  a.Signal(SIGCONT);
  ASSERT_TRUE(WaitUntil([&] { return ProcessState(a.pid()) != 'T'; }, absl::Seconds(10)));
  EXPECT_FALSE(a.Exited()) << a.Describe();
  EXPECT_EQ(Children(election).size(), 2u);
  Touch("b-release");
  EXPECT_EQ(b.Wait(absl::Seconds(20)), 0) << b.Describe();
  EXPECT_TRUE(WaitForRuns("a", a, 2)) << a.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

// Promise: step-down repeated several times between two candidates whose
// CMDs ignore SIGTERM (default --grace: KILL after ~3.1 s), one under nohup
// (SIGUSR1) and one not (SIGHUP): every handover stops the old CMD before
// the new one runs.
TEST_F(CliElectAttackTest, RepeatedStepDownsHupAndUsr1NeverOverlap) {
  const std::string election = Path("repeated");
  Process& a = ZkrIgnoringHangup({"elect", "--path=" + election, "--id=alpha", "--", "sh", "-c",
                                  Stamping("a", OnTerm::kIgnore)[2]});
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=bravo", "--"},
                          Stamping("b", OnTerm::kIgnore)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  for (int round = 1; round <= 2; ++round) {
    SCOPED_TRACE(round);
    a.Signal(SIGUSR1);  // nohup: USR1 steps down
    ASSERT_TRUE(WaitForRuns("b", b, round)) << a.Describe() << b.Describe();
    ASSERT_TRUE(WaitForChildren(election, 2)) << a.Describe();
    b.Signal(SIGHUP);
    ASSERT_TRUE(WaitForRuns("a", a, round + 1)) << a.Describe() << b.Describe();
    ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  }
  EXPECT_FALSE(a.Exited()) << a.Describe();
  EXPECT_FALSE(b.Exited()) << b.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

// Promise: a step-down is for the current term. A second SIGUSR1 that
// lands after CMD was stopped but while the first step-down still yields
// (the leader's link is slow: 200 ms each way) must not carry over to the
// leader's NEXT term (a CMD skipped, a spurious second step-down), as
// cli_job_control_test's TwoHangupsStepDownOnce says. (Yield() turns
// NOT_LEADER before its round trip, so the signal is "not leading"; the
// remaining window, between the run's end and Yield(), is microseconds.)
TEST_F(CliElectAttackTest, SecondStepDownDuringTheYieldDoesNotCarryOverToTheNextTerm) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  const std::string election = Path("stale-step-down");
  Process& a = ZkrRaw(Concat({"elect", "--zk=" + proxy->address(), "--path=" + election,
                              "--id=alpha", "--"},
                             Stamping("a", OnTerm::kObey)));
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"elect", "--path=" + election, "--id=bravo", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  proxy->SetDelay(absl::Milliseconds(200));
  const pid_t cmd = CmdPid("a");
  ASSERT_GT(cmd, 0);
  a.Signal(SIGUSR1);
  ASSERT_TRUE(WaitUntil([&] { return !testing::Alive(cmd); }, absl::Seconds(10)));
  // CMD is gone; the Yield (a delete and more, 400 ms a round trip) is in flight.
  a.Signal(SIGUSR1);
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  ASSERT_TRUE(WaitForRuns("a", a, 2)) << a.Describe();
  EXPECT_EQ(Count(a.Stderr(), "queued again at the back"), 1)
      << "one step-down stopped one CMD, but zkr stepped down again\n" << a.Describe();
  ExpectNoOverlap();
  CleanUp(election);
}

// Promise: a SIGTERM that lands right as CMD starts either stops zkr before
// CMD runs or reaches CMD (it dies); both exit 143 (128+SIGTERM); never a CMD that
// runs on, nor a node left behind. Aimed at the window by signalling as soon
// as the node appears, several times.
TEST_F(CliElectAttackTest, SigtermAsTheCommandStarts) {
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    const std::string election = Path(absl::StrCat("as-starts-", i));
    const std::string name = absl::StrCat("s", i);
    Process& a = Zkr(Concat({"elect", "--path=" + election, "--"}, Stamping(name, OnTerm::kObey)));
    ASSERT_TRUE(WaitUntil([&] { return !Children(election).empty() || a.Exited(); },
                          absl::Seconds(20)));
    absl::SleepFor(absl::Milliseconds(3 * i));  // aim around the start; not a wait for an outcome
    a.Signal(SIGTERM);
    const auto code = a.Wait(absl::Seconds(20));
    ASSERT_TRUE(code.has_value()) << a.Describe();
    EXPECT_EQ(*code, 128 + SIGTERM) << a.Describe();
    EXPECT_TRUE(WaitForChildren(election, 0, absl::Seconds(10))) << a.Describe();
    const int stamps = Stamps(name);
    absl::SleepFor(absl::Milliseconds(200));  // a CMD left running would stamp meanwhile
    EXPECT_EQ(Stamps(name), stamps) << "CMD outlived zkr\n" << a.Describe();
    ExpectEmptyAndDelete(election);
  }
}

// ---- 2. signals ------------------------------------------------------------

// Promise: a signal while connecting (no server answers: a blackholed
// proxy) ends zkr at once with 130; twice in a row too.
TEST_F(CliElectAttackTest, TwoSignalsWhileConnectingExit130AtOnce) {
  auto proxy = Proxy();
  ASSERT_NE(proxy, nullptr);
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  const std::string election = Path("connecting");
  Process& a = ZkrRaw(Concat({"elect", "--zk=" + proxy->address(), "--path=" + election, "--"},
                             Stamping("a", OnTerm::kObey)));
  ASSERT_TRUE(WaitUntil([&] { return proxy->connections_accepted() > 0 || a.Exited(); },
                        absl::Seconds(10)));
  a.Signal(SIGINT);
  a.Signal(SIGINT);
  EXPECT_EQ(a.Wait(absl::Seconds(3)), 130) << a.Describe();
  EXPECT_EQ(Runs("a"), 0);
}

// Promise: two signals in a row while waiting for a lock, a semaphore and a
// barrier: 128+N for the signal taken, the node deleted, CMD never run.
TEST_F(CliElectAttackTest, TwoSignalsWhileWaitingExitWithTheOneTakenAndLeaveNothing) {
  const std::string lock = Path("lock"), sem = Path("sem"), barrier = Path("barrier");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& semholder = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=1", "--"},
                                  HoldUntilReleased("sheld", "release")));
  ASSERT_TRUE(WaitForFile("sheld", semholder)) << semholder.Describe();
  Process& w1 = Zkr(Concat({"lock", "--path=" + lock, "--"}, Stamping("w1", OnTerm::kObey)));
  Process& w2 = Zkr(Concat({"semaphore", "--path=" + sem, "--leases=1", "--"},
                           Stamping("w2", OnTerm::kObey)));
  Process& w3 = Zkr(Concat({"barrier", "--path=" + barrier, "--count=2", "enter", "--"},
                           Stamping("w3", OnTerm::kObey)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << w1.Describe();
  ASSERT_TRUE(WaitForChildren(sem, 2)) << w2.Describe();
  ASSERT_TRUE(WaitUntil([&] { return !Children(barrier).empty() || w3.Exited(); },
                        absl::Seconds(20)))
      << w3.Describe();
  for (Process* w : {&w1, &w2, &w3}) {
    w->Signal(SIGTERM);
    w->Signal(SIGINT);
  }
  // 128+N for the one zkr acted on: two pending at once are taken lowest
  // number first (SIGINT), whatever order they were sent in.
  for (Process* w : {&w1, &w2, &w3}) {
    EXPECT_THAT(w->Wait(absl::Seconds(10)),
                ::testing::AnyOf(::testing::Optional(128 + SIGINT),
                                 ::testing::Optional(128 + SIGTERM)))
        << w->Describe();
  }
  EXPECT_EQ(Runs("w1") + Runs("w2") + Runs("w3"), 0);
  EXPECT_EQ(Children(lock).size(), 1u);
  EXPECT_EQ(Children(sem).size(), 1u);
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  EXPECT_EQ(semholder.Wait(absl::Seconds(20)), 0) << semholder.Describe();
  EXPECT_TRUE(WaitForChildren(barrier, 0, absl::Seconds(10)));
  ExpectEmptyAndDelete(lock);
  ExpectEmptyAndDelete(sem);
  auto gone = testing::DeleteRecursively(admin(), barrier);
  (void)gone;
}

// Promise: no hang. `zkr group list --watch | head -n 1`: once head has
// gone, the next change ends zkr (as `tail -f | head -n 1` does), with
// SIGPIPE at its default and — as under many service managers and CI
// runners — ignored (then the write fails with EPIPE).
class ClosedPipeTest : public CliElectAttackTest, public ::testing::WithParamInterface<bool> {};

TEST_P(ClosedPipeTest, GroupListWatchEndsOnceTheReaderHasGone) {
  const bool ignore_pipe = GetParam();
  const std::string group = Path(ignore_pipe ? "pipe-ignored" : "pipe-default");
  std::unique_ptr<Session> other = NewSession();
  GroupOptions first;
  first.id = "m1";
  auto m1 = GroupMember::Create(*other, group, first);
  ASSERT_TRUE(m1.ok()) << m1.status();
  ASSERT_TRUE((*m1)->Join().ok());
  const std::string rc = File("rc");
  const std::string script = absl::StrCat(
      ignore_pipe ? "trap '' PIPE; " : "", "{ \"$0\" group --zk=", connect_, " --path=", group,
      " list --watch; echo $? > ", ShQuote(rc), "; } | head -n 1");
  Process& sh = Started({"sh", "-c", script, binary_});
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(sh.Stdout(), "m1") || sh.Exited(); },
                        absl::Seconds(20)))
      << sh.Describe();
  // head has printed its line and exits; the next change makes zkr write.
  GroupOptions second;
  second.id = "m2";
  auto m2 = GroupMember::Create(*other, group, second);
  ASSERT_TRUE(m2.ok()) << m2.status();
  ASSERT_TRUE((*m2)->Join().ok());
  GroupOptions third;
  third.id = "m3";
  auto m3 = GroupMember::Create(*other, group, third);
  ASSERT_TRUE(m3.ok()) << m3.status();
  ASSERT_TRUE((*m3)->Join().ok());
  const auto code = sh.Wait(absl::Seconds(15));
  EXPECT_TRUE(code.has_value()) << "zkr group list --watch kept running after its reader went"
                                << (ignore_pipe ? " (SIGPIPE ignored)" : "") << "\n"
                                << sh.Describe();
  if (code.has_value()) {
    EXPECT_NE(ReadFile(rc), "0\n") << "zkr's exit code: " << ReadFile(rc);
  }
  ASSERT_TRUE((*m1)->Leave().ok());
  ASSERT_TRUE((*m2)->Leave().ok());
  ASSERT_TRUE((*m3)->Leave().ok());
  m1->reset();
  m2->reset();
  m3->reset();
  other.reset();
  ExpectEmptyAndDelete(group);
}

INSTANTIATE_TEST_SUITE_P(SigpipeDefaultOrIgnored, ClosedPipeTest, ::testing::Bool());

// Promise: exit 0 means success; "1: other failure (message on stderr)".
// Output that cannot be written (a full disk: /dev/full) is a failure.
TEST_F(CliElectAttackTest, OutputThatCannotBeWrittenIsNotSuccess) {
  const std::string group = Path("full");
  std::unique_ptr<Session> other = NewSession();
  GroupOptions options;
  options.id = "m1";
  auto m1 = GroupMember::Create(*other, group, options);
  ASSERT_TRUE(m1.ok()) << m1.status();
  ASSERT_TRUE((*m1)->Join().ok());
  for (const std::string& args :
       {absl::StrCat("group --zk=", connect_, " --path=", group, " list --json"),
        absl::StrCat("inspect --zk=", connect_, " --path=", group, " --json"),
        absl::StrCat("inspect --zk=", connect_, " --path=", group)}) {
    SCOPED_TRACE(args);
    Process& p = Started({"sh", "-c", absl::StrCat("exec \"$0\" ", args, " > /dev/full"), binary_});
    const auto code = p.Wait(absl::Seconds(20));
    ASSERT_TRUE(code.has_value());
    EXPECT_NE(*code, 0) << "a write to /dev/full failed and zkr said success\n" << p.Describe();
  }
  ASSERT_TRUE((*m1)->Leave().ok());
  m1->reset();
  other.reset();
  ExpectEmptyAndDelete(group);
}

// ---- 3. plain output escaping ----------------------------------------------

// Raw bytes another client writes: ESC sequences, newline, tab, DEL, C1 as
// a raw byte (invalid UTF-8) and encoded (U+009B), overlong UTF-8 ('/' as
// C0 AF, E0 80 AF), a surrogate, NUL.
constexpr char kRawBytes[] = "x\x1b[2J\n\t\x7f\x9b\xc2\x9b\xc0\xaf\xe0\x80\xaf\xed\xa0\x80\x00y";
const std::string kRaw(kRawBytes, sizeof(kRawBytes) - 1);

// What PlainText makes of kRaw (the man page's escaping rules).
const char kRawEscaped[] =
    "x\\x1b[2J\\n\\t\\x7f\\x9b\\u009b\\xc0\\xaf\\xe0\\x80\\xaf\\xed\\xa0\\x80\\x00y";

// Promise: `elect --who --watch` escapes what a leader publishes, at every
// change (SetData), and each leader is exactly id + data lines.
TEST_F(CliElectAttackTest, WhoWatchEscapesEveryChange) {
  const std::string election = Path("who-watch");
  std::unique_ptr<Session> other = NewSession();
  ElectionOptions options;
  options.id = "leader";
  options.data = "clean";
  auto leader = LeaderElection::Create(*other, election, options);
  ASSERT_TRUE(leader.ok()) << leader.status();
  ASSERT_TRUE((*leader)->Join().ok());
  ASSERT_TRUE((*leader)->AwaitLeadership(absl::Seconds(20)).ok());
  Process& w = Zkr({"elect", "--path=" + election, "--who", "--watch"});
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(w.Stdout(), "clean") || w.Exited(); },
                        absl::Seconds(20)))
      << w.Describe();
  ASSERT_TRUE((*leader)->SetData(kRaw).ok());
  EXPECT_TRUE(WaitUntil([&] { return absl::StrContains(w.Stdout(), kRawEscaped) || w.Exited(); },
                        absl::Seconds(20)))
      << w.Stdout();
  w.Signal(SIGTERM);
  EXPECT_EQ(w.Wait(absl::Seconds(20)), 128 + SIGTERM) << w.Describe();
  for (char c : w.Stdout()) {
    const unsigned char u = static_cast<unsigned char>(c);
    EXPECT_FALSE((u < 0x20 && c != '\n') || u == 0x7f || u >= 0x80) << "raw byte " << int{u};
  }
  ASSERT_TRUE((*leader)->Leave().ok());
  leader->reset();
  other.reset();
  ExpectEmptyAndDelete(election);
}

// Promise: plain output escapes the raw bytes another client writes to a
// member node (not through the library) in `group list` and `inspect`.
TEST_F(CliElectAttackTest, RawNodeDataIsEscapedInGroupListAndInspect) {
  const std::string group = Path("raw-group");
  std::unique_ptr<Session> other = NewSession();
  GroupOptions options;
  options.id = "m1";
  options.data = kRaw;
  auto m1 = GroupMember::Create(*other, group, options);
  ASSERT_TRUE(m1.ok()) << m1.status();
  ASSERT_TRUE((*m1)->Join().ok());
  Process& list = Zkr({"group", "--path=" + group, "list"});
  EXPECT_EQ(list.Wait(absl::Seconds(20)), 0) << list.Describe();
  EXPECT_EQ(list.Stdout(), absl::StrCat("m1\t", kRawEscaped, "\n"));
  Process& inspect = Zkr({"inspect", "--path=" + group});
  EXPECT_EQ(inspect.Wait(absl::Seconds(20)), 0) << inspect.Describe();
  EXPECT_THAT(inspect.Stdout(), HasSubstr(kRawEscaped));
  ASSERT_TRUE((*m1)->Leave().ok());
  m1->reset();
  other.reset();
  ExpectEmptyAndDelete(group);
}

// Promise (tools/zkr/README.md, Output): what other clients wrote is
// escaped so that node data "cannot drive the terminal". A revocation
// reason is written by another client (zkr revoke --reason); the holder
// prints it on its stderr — a terminal.
TEST_F(CliElectAttackTest, RevocationReasonIsEscapedOnTheHoldersTerminal) {
  const std::string lock = Path("reason");
  Process& holder = Holder(lock, {"--revoke_signal=none"});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& revoker = Zkr({"revoke", "--path=" + lock, "--grace=30s",
                          "--reason=r\x1b]0;owned\x07\x1b[2J\nfake: line\x9b"});
  ASSERT_TRUE(WaitForStderr(holder, "revocation of")) << holder.Describe();
  const std::string err = holder.Stderr();
  EXPECT_THAT(err, Not(HasSubstr("\x1b"))) << err;
  EXPECT_THAT(err, Not(HasSubstr("\nfake: line"))) << err;
  EXPECT_THAT(err, Not(HasSubstr("\x9b"))) << err;
  Touch("release");
  EXPECT_TRUE(holder.Wait(absl::Seconds(30)).has_value()) << holder.Describe();
  EXPECT_TRUE(revoker.Wait(absl::Seconds(30)).has_value()) << revoker.Describe();
  ExpectEmptyAndDelete(lock);
}

}  // namespace
}  // namespace zkr
