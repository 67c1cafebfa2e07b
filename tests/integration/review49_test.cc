// An independent adversarial review (helper-49) of zkr's promises: "never two
// CMDs at once" and "zkr ends as promised, leaving no node" when zkr's own
// stderr cannot be written (a log pipe whose reader stalls: a stuck logger,
// journald's back-pressure, `2>&1 | slow`), and elect's step-down raced by
// a SIGTERM. Real binary, real server; waits are on observable conditions
// (ledger stamps, server listings, exits); durations only bound hangs.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_ledger_fixture.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::Concat;
using testing::OnTerm;
using testing::Process;
using testing::ReadFile;
using testing::TcpProxy;
using testing::WaitUntil;

class Review49Test : public testing::CliLedgerTest {
 protected:
  Review49Test() : CliLedgerTest(testing::kLedgerBoundsLong) {}

  void TearDown() override {
    Unblock();
    CliLedgerTest::TearDown();
  }

  // A FIFO whose pipe is full and whose reader never reads: a write of a
  // line to it blocks (the test holds the only reading end, O_RDWR).
  // Returns its path.
  std::string BlockedPipe() {
    const std::string fifo = File("stderr.fifo");
    EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    blocked_fd_ = open(fifo.c_str(), O_RDWR | O_NONBLOCK);
    EXPECT_GE(blocked_fd_, 0) << std::strerror(errno);
    const std::string chunk(4096, 'x');
    while (write(blocked_fd_, chunk.data(), chunk.size()) > 0) {
    }
    while (write(blocked_fd_, "x", 1) > 0) {
    }
    EXPECT_EQ(errno, EAGAIN);
    return fifo;
  }
  // Lets a writer blocked on the FIFO go: its reader goes (EPIPE).
  void Unblock() {
    if (blocked_fd_ >= 0) close(blocked_fd_);
    blocked_fd_ = -1;
  }
  // `zkr <args>` (--zk=`zk` inserted) with its stderr on `stderr_path`.
  Process& ZkrWithStderr(const std::string& stderr_path, std::vector<std::string> args,
                         const std::string& zk) {
    args.insert(args.begin() + 1, absl::StrCat("--zk=", zk));
    return Started(Concat({"sh", "-c", "f=$1; shift; exec \"$@\" 2>\"$f\"", "sh", stderr_path,
                           binary_},
                          args));
  }

  // Where `pid`'s threads are (gdb, if installed): the diagnosis of a hang.
  std::string Backtraces(pid_t pid) {
    const std::string out = File(absl::StrCat("bt-", pid));
    const std::string command = absl::StrCat(
        "command -v gdb >/dev/null && timeout 60 gdb -batch -p ", pid,
        " -ex 'thread apply all bt 12' > ", out, " 2>&1");
    const int status = std::system(command.c_str());
    if (status != 0) return absl::StrCat("(no backtraces: gdb: ", status, ") ", ReadFile(out));
    std::string text;
    for (const std::string& line : testing::Lines(ReadFile(out))) {
      if (line.rfind("#", 0) == 0 || line.rfind("Thread", 0) == 0) absl::StrAppend(&text, line, "\n");
    }
    return text.empty() ? ReadFile(out) : text;
  }

  // `p`'s exit code if it exits within `timeout`; else nullopt, and `p`
  // is left running (Process::Wait would kill it).
  static std::optional<int> ExitWithin(Process& p, absl::Duration timeout) {
    if (!WaitUntil([&] { return p.Exited(); }, timeout)) return std::nullopt;
    return p.Wait(absl::Seconds(1));
  }
  // After a hang: what zkr's threads are doing, then whether zkr ends by
  // itself once its stderr can be written (its reader gone) and how.
  std::string HangDiagnosis(Process& p) {
    std::string text = absl::StrCat("zkr's threads while hung:\n", Backtraces(p.pid()));
    Unblock();
    const std::optional<int> code = ExitWithin(p, absl::Seconds(20));
    absl::StrAppend(&text, "once its stderr's reader was gone, zkr ",
                    code.has_value() ? absl::StrCat("exited ", *code) : "still did not exit",
                    "\n");
    return text;
  }

  int blocked_fd_ = -1;
};

// ---- stderr that cannot be written ------------------------------------------------

// The promise (zkr(1), SIGNALS): "CMD is dead before anyone else may hold,
// whatever --grace says. While CMD runs, zkr watches the hold's lease ...:
// CMD's group gets SIGTERM as soon as the connection is lost or when the
// lease has no more than the effective grace left, and SIGKILL no later
// than the lease's end". Nothing there depends on zkr's stderr. Here the
// holder's stderr is a pipe nobody reads (full), the holder is cut off
// (blackhole), and another zkr waits on a healthy connection: the first CMD
// (which obeys SIGTERM) must be gone before the second one stamps.
// Run with the default flags and with --quiet ("nothing but errors").
TEST_F(Review49Test, PartitionedHolderWithBlockedStderrStopsCmdBeforeTheNextHolderRuns) {
  for (const bool quiet : {false, true}) {
    SCOPED_TRACE(quiet ? "--quiet" : "default flags");
    const std::string lock = Path(quiet ? "blocked-stderr-quiet" : "blocked-stderr");
    std::unique_ptr<TcpProxy> proxy = Proxy();
    ASSERT_NE(proxy, nullptr) << "needs the embedded server behind a proxy";
    std::remove(Ledger().c_str());
    const std::string fifo = BlockedPipe();
    std::vector<std::string> flags = {"lock", "--session_timeout=4", "--path=" + lock};
    if (quiet) flags.push_back("--quiet");
    Process& a = ZkrWithStderr(
        fifo, Concat(Concat(flags, {"--"}), Stamping("a", OnTerm::kObey)), proxy->address());
    ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
    Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                            Stamping("b", OnTerm::kObey, 20)));
    ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
    proxy->SetMode(TcpProxy::Mode::kBlackhole);
    EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
    ExpectNoOverlap();
    // The holder ends with 4 (CMD stopped for the hold's sake) by itself,
    // its stderr still blocked.
    const std::optional<int> a_code = ExitWithin(a, absl::Seconds(10));
    EXPECT_EQ(a_code, 4) << "the cut-off holder had not ended 10 s after the next holder "
                         << "finished; its CMD still stamping: "
                         << (WaitForStamps("a", a, Stamps("a") + 2) ? "yes" : "no") << "\n"
                         << (a_code.has_value() ? "" : HangDiagnosis(a)) << a.Describe();
    Unblock();
    a.Wait(absl::Seconds(20));
    proxy->SetMode(TcpProxy::Mode::kPass);
    proxy->ResetConnections();
    CleanUp(lock);
    std::remove(fifo.c_str());
  }
}

// The same for the other holds that promise "never two CMDs at once":
// `zkr elect` (zkr(1), elect: "If leadership is lost CMD's group is
// terminated"; SIGNALS as above) and `zkr semaphore --leases=1` ("runs CMD
// as lock does"), each with --quiet, cut off while a second participant
// waits on a healthy connection.
TEST_F(Review49Test, PartitionedLeaderAndSemaphoreHolderWithBlockedStderrStopCmdInTime) {
  for (const std::string sub : {"elect", "semaphore"}) {
    SCOPED_TRACE(sub);
    const std::string path = Path(absl::StrCat(sub, "-blocked-stderr"));
    std::unique_ptr<TcpProxy> proxy = Proxy();
    ASSERT_NE(proxy, nullptr) << "needs the embedded server behind a proxy";
    std::remove(Ledger().c_str());
    const std::string fifo = BlockedPipe();
    std::vector<std::string> common = {sub, "--path=" + path};
    if (sub == "elect") common.push_back("--id=first");
    if (sub == "semaphore") common.push_back("--leases=1");
    Process& a = ZkrWithStderr(
        fifo,
        Concat(Concat(common, {"--session_timeout=4", "--quiet", "--"}),
               Stamping("a", OnTerm::kObey)),
        proxy->address());
    ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
    std::vector<std::string> second = {sub, "--path=" + path};
    if (sub == "elect") second.push_back("--id=second");
    if (sub == "semaphore") second = Concat(second, {"--leases=1", "--timeout=60s"});
    Process& b = Zkr(Concat(Concat(second, {"--"}), Stamping("b", OnTerm::kObey, 20)));
    ASSERT_TRUE(WaitForChildren(path, 2)) << b.Describe();
    proxy->SetMode(TcpProxy::Mode::kBlackhole);
    EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
    ExpectNoOverlap();
    const std::optional<int> a_code = ExitWithin(a, absl::Seconds(10));
    if (sub == "semaphore") {
      EXPECT_EQ(a_code, 4) << (a_code.has_value() ? "" : HangDiagnosis(a)) << a.Describe();
    }
    // (elect campaigns again after a loss: it need not exit.)
    Unblock();
    proxy->SetMode(TcpProxy::Mode::kPass);
    proxy->ResetConnections();
    CleanUp(path);
    std::remove(fifo.c_str());
  }
}

// The same without a partition: `zkr revoke --grace=1s` of a holder whose
// stderr is blocked. zkr(1), revoke: a holder "stops CMD's group before
// --grace ends (exit 4)"; --revoke_signal: "a CMD still running is stopped
// before the revoker's --grace ends all the same". The waiter must not run
// while the revoked holder's CMD still stamps.
TEST_F(Review49Test, RevokedHolderWithBlockedStderrStopsCmdBeforeTheWaiterRuns) {
  const std::string lock = Path("revoke-blocked-stderr");
  const std::string fifo = BlockedPipe();
  Process& a = ZkrWithStderr(fifo,
                             Concat({"lock", "--quiet", "--revoke_signal=none", "--path=" + lock,
                                     "--"},
                                    Stamping("a", OnTerm::kObey)),
                             connect_);
  ASSERT_TRUE(WaitForStamps("a", a)) << a.Describe();
  Process& b = Zkr(Concat({"lock", "--path=" + lock, "--timeout=60s", "--"},
                          Stamping("b", OnTerm::kObey, 20)));
  ASSERT_TRUE(WaitForChildren(lock, 2)) << b.Describe();
  Process& revoke = Zkr({"revoke", "--path=" + lock, "--grace=1s"});
  EXPECT_EQ(revoke.Wait(absl::Seconds(60)), 0) << revoke.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(60)), 0) << b.Describe();
  ExpectNoOverlap();
  const std::optional<int> a_code = ExitWithin(a, absl::Seconds(10));
  EXPECT_EQ(a_code, 4) << (a_code.has_value() ? "" : HangDiagnosis(a)) << a.Describe();
  Unblock();
  CleanUp(lock);
}

// zkr(1), EXIT STATUS: "128+N lock ...: interrupted by signal N ... before
// CMD ran, in any phase (connecting, waiting ...); the participant's node is
// deleted." A queued zkr lock whose stderr is blocked gets SIGTERM: its node
// must go, and zkr must exit 143 (its "interrupted" line cannot be written;
// that is no reason to never exit).
TEST_F(Review49Test, QueuedLockWithBlockedStderrExits143OnSigterm) {
  const std::string lock = Path("queued-blocked-stderr");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  const std::string fifo = BlockedPipe();
  Process& waiter =
      ZkrWithStderr(fifo, {"lock", "--quiet", "--path=" + lock, "--", "true"}, connect_);
  ASSERT_TRUE(WaitForChildren(lock, 2)) << waiter.Describe();
  waiter.Signal(SIGTERM);
  EXPECT_TRUE(WaitForChildren(lock, 1)) << "the waiter's node stayed";
  const std::optional<int> code = ExitWithin(waiter, absl::Seconds(20));
  EXPECT_EQ(code, 128 + SIGTERM) << "zkr did not exit after SIGTERM (the queue now: "
                                 << ::testing::PrintToString(Children(lock)) << ")\n"
                                 << (code.has_value() ? "" : HangDiagnosis(waiter))
                                 << waiter.Describe();
  Unblock();
  waiter.Wait(absl::Seconds(10));
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  CleanUp(lock);
}

// ---- elect: a step-down raced by SIGTERM ---------------------------------------

// zkr(1), elect: SIGUSR1 makes a leader step down; SIGTERM while CMD runs
// goes to CMD's group and zkr exits with CMD's status (143 for a CMD killed
// by it), or 143 itself once CMD is gone; either way "the candidate's node
// is deleted" and nothing is left on the server. SIGUSR1 and SIGTERM are
// sent back to back, 30 times, with and without a CMD; a second candidate
// waits all along and must never run while the first one's CMD does.
TEST_F(Review49Test, StepDownThenSigtermAtOnceLeavesNoNodeAndNoOverlap) {
  const std::string election = Path("usr1-term");
  Process& other = Zkr(Concat({"elect", "--path=" + election, "--id=other", "--"},
                              Stamping("other", OnTerm::kObey)));
  // `other` leads first; each round it steps down (SIGUSR1) to the new
  // candidate and leads again once that one has gone.
  ASSERT_TRUE(WaitForStamps("other", other)) << other.Describe();
  int codes_143 = 0;
  std::string odd;
  for (int attempt = 0; attempt < 30; ++attempt) {
    SCOPED_TRACE(absl::StrCat("attempt ", attempt));
    const bool with_cmd = attempt % 2 == 0;
    const std::string name = absl::StrCat("l", attempt);
    std::vector<std::string> args = {"elect", "--path=" + election, "--id=" + name};
    if (with_cmd) args = Concat(Concat(args, {"--"}), Stamping(name, OnTerm::kObey));
    Process& leader = Zkr(args);
    ASSERT_TRUE(WaitForChildren(election, 2)) << leader.Describe();
    other.Signal(SIGUSR1);  // `other` steps down: `leader` leads
    if (with_cmd) {
      ASSERT_TRUE(WaitForStamps(name, leader)) << leader.Describe() << other.Describe();
    } else {
      WaitUntil([&] { return absl::StrContains(leader.Stdout(), "ZKR_LEADER_EPOCH=") ||
                             leader.Exited(); },
                absl::Seconds(30));
      ASSERT_TRUE(absl::StrContains(leader.Stdout(), "ZKR_LEADER_EPOCH=")) << leader.Describe();
    }
    leader.Signal(SIGUSR1);
    leader.Signal(SIGTERM);
    const std::optional<int> code = leader.Wait(absl::Seconds(30));
    ASSERT_TRUE(code.has_value()) << "zkr elect did not exit after SIGUSR1+SIGTERM\n"
                                  << leader.Describe();
    if (*code == 128 + SIGTERM) {
      ++codes_143;
    } else {
      absl::StrAppend(&odd, "attempt ", attempt, " exited ", *code, "\n");
    }
    // Nothing of `leader` left: only `other`'s node.
    EXPECT_TRUE(WaitForChildren(election, 1, absl::Seconds(5)))
        << "left: " << ::testing::PrintToString(Children(election)) << "\n"
        << leader.Describe();
    // `other` leads again before the next round.
    ASSERT_TRUE(WaitForStamps("other", other, Stamps("other") + 2)) << other.Describe();
  }
  EXPECT_EQ(codes_143, 30) << odd;
  ExpectNoOverlap();
  CleanUp(election);
}

}  // namespace
}  // namespace zkr
