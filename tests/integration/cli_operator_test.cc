// zkr as operators use it (issue 35), end to end with the real binary and a
// real server: a hold without a command (lock, semaphore, elect), waiting
// for a leader, flock's and timeout's conventions (bare seconds, short flags,
// -E, 128+N on a signal, the caller's descriptors reaching CMD), global
// flags from the environment and credentials from a file, and a revocation
// that asks a CMD without a handler rather than killing it.
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_operator_fixture.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::Concat;
using testing::Process;
using testing::ReadFile;
using testing::ShQuote;
using testing::WaitUntil;

using CliOperatorTest = testing::CliOperatorFixture;

// ---- a hold without a command -----------------------------------------------------

// `zkr lock --path=P` holds until a signal: it prints CMD's environment once
// held, others find the lock busy, and SIGTERM releases it (exit 143).
TEST_F(CliOperatorTest, LockWithoutACommandHoldsUntilSigterm) {
  const std::string lock = Path("hold-lock");
  Process& holder = Zkr({"lock", "--path=" + lock});
  const std::string node = PrintedValue(holder, "ZKR_LOCK_NODE");
  ASSERT_THAT(node, HasSubstr(lock + "/")) << holder.Describe();
  EXPECT_NE(PrintedValue(holder, "ZKR_FENCING_TOKEN"), "") << holder.Describe();
  EXPECT_EQ(PrintedValue(holder, "ZKR_LOCK_PATH"), lock) << holder.Describe();
  EXPECT_TRUE(admin().Exists(node).ok()) << node;

  Process& other = Zkr({"lock", "--path=" + lock, "-n", "--", "echo", "ran"});
  EXPECT_EQ(other.Wait(absl::Seconds(20)), 3) << other.Describe();
  EXPECT_EQ(other.Stdout(), "") << "CMD ran beside a hold without one";

  holder.Signal(SIGTERM);
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 128 + SIGTERM) << holder.Describe();
  ExpectEmptyAndDelete(lock);
}

// The same for a semaphore, ended with SIGINT (130); a loss ends the hold
// as it would end CMD (exit 4): here its node is deleted by hand.
TEST_F(CliOperatorTest, SemaphoreWithoutACommandHoldsUntilSigintAndEndsOnLoss) {
  const std::string path = Path("hold-semaphore");
  Process& holder = Zkr({"semaphore", "--path=" + path, "--leases=1"});
  const std::string node = PrintedValue(holder, "ZKR_LOCK_NODE");
  ASSERT_NE(node, "") << holder.Describe();
  EXPECT_EQ(PrintedValue(holder, "ZKR_SEMAPHORE_SIZE"), "1") << holder.Describe();
  Process& other = Zkr({"semaphore", "--path=" + path, "--leases=1", "-n", "--", "true"});
  EXPECT_EQ(other.Wait(absl::Seconds(20)), 3) << other.Describe();
  holder.Signal(SIGINT);
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 128 + SIGINT) << holder.Describe();

  Process& lost = Zkr({"semaphore", "--path=" + path, "--leases=1"});
  const std::string lost_node = PrintedValue(lost, "ZKR_LOCK_NODE");
  ASSERT_NE(lost_node, "") << lost.Describe();
  ASSERT_TRUE(admin().Delete(lost_node).ok());
  EXPECT_EQ(lost.Wait(absl::Seconds(20)), 4) << lost.Describe();
  ExpectEmptyAndDelete(path);
}

// Nothing would tell a hold without CMD that it was lost under
// --on_lost=ignore: refused.
TEST_F(CliOperatorTest, IgnoringLossWithoutACommandIsRefused) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"lock", "--path=" + Path("ignored"), "--on_lost=ignore"},
        std::vector<std::string>{"elect", "--path=" + Path("ignored-e"), "--on_lost=ignore"}}) {
    Process& p = Zkr(args);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr("--on_lost=ignore without CMD")) << p.Describe();
  }
}

// `zkr elect --who --wait` blocks until there is a leader; `zkr elect`
// without CMD leads until a signal; a short --wait with nobody exits 3, or
// the -E code.
TEST_F(CliOperatorTest, WhoWaitsForALeaderThatLeadsWithoutACommand) {
  const std::string election = Path("hold-elect");
  Process& none = Zkr({"elect", "--path=" + election, "--who", "--wait=0.3"});
  EXPECT_EQ(none.Wait(absl::Seconds(20)), 3) << none.Describe();
  EXPECT_THAT(none.Stderr(), HasSubstr("no leader")) << none.Describe();
  Process& none_e = Zkr({"elect", "--path=" + election, "--who", "--wait=0.3", "-E", "9"});
  EXPECT_EQ(none_e.Wait(absl::Seconds(20)), 9) << none_e.Describe();

  Process& who = Zkr({"elect", "--path=" + election, "--who", "--wait"});
  // It waits: no leader yet (bounded look; the outcome below is the check).
  ASSERT_FALSE(WaitUntil([&] { return who.Exited(); }, absl::Milliseconds(500)))
      << who.Describe();
  Process& leader = Zkr({"elect", "--path=" + election, "--id=alpha", "--data=addr:1"});
  EXPECT_NE(PrintedValue(leader, "ZKR_LEADER_EPOCH"), "") << leader.Describe();
  EXPECT_EQ(PrintedValue(leader, "ZKR_ELECTION_PATH"), election) << leader.Describe();
  EXPECT_EQ(who.Wait(absl::Seconds(20)), 0) << who.Describe();
  EXPECT_EQ(who.Stdout(), "alpha\naddr:1\n") << who.Describe();

  leader.Signal(SIGINT);
  EXPECT_EQ(leader.Wait(absl::Seconds(20)), 128 + SIGINT) << leader.Describe();
  ExpectEmptyAndDelete(election);
}

// ---- flock's and timeout's conventions ---------------------------------------------

// -s is a reader, -x a writer; -n tries once (bundled: -xn); -w takes bare
// seconds, fractions too, and -E chooses the busy code.
TEST_F(CliOperatorTest, ShortFlagsBareSecondsAndTheConflictCode) {
  const std::string lock = Path("flock");
  Process& reader = Zkr({"lock", "-s", "--path=" + lock});
  ASSERT_NE(PrintedValue(reader, "ZKR_LOCK_NODE"), "") << reader.Describe();

  Process& shared = Zkr({"lock", "-s", "-n", "--path=" + lock, "--", "echo", "shared"});
  EXPECT_EQ(shared.Wait(absl::Seconds(20)), 0) << shared.Describe();
  EXPECT_EQ(shared.Stdout(), "shared\n");
  Process& writer = Zkr({"lock", "-xn", "--path=" + lock, "--", "echo", "ran"});
  EXPECT_EQ(writer.Wait(absl::Seconds(20)), 3) << writer.Describe();
  Process& timed = Zkr({"lock", "-w", "0.5", "-E", "75", "--path=" + lock, "--", "echo", "ran"});
  EXPECT_EQ(timed.Wait(absl::Seconds(20)), 75) << timed.Describe();
  EXPECT_THAT(timed.Stderr(), HasSubstr("not acquired within 0.5")) << timed.Describe();
  Process& attached = Zkr({"lock", "-xw0.2", "--path=" + lock, "--", "echo", "ran"});
  EXPECT_EQ(attached.Wait(absl::Seconds(20)), 3) << attached.Describe();
  Process& timeout = Zkr({"lock", "--timeout=1", "--conflict_exit_code=0", "--path=" + lock,
                          "--", "echo", "ran"});
  EXPECT_EQ(timeout.Wait(absl::Seconds(20)), 0) << timeout.Describe();
  for (Process* p : {&writer, &timed, &attached, &timeout}) EXPECT_EQ(p->Stdout(), "");

  reader.Signal(SIGTERM);
  EXPECT_EQ(reader.Wait(absl::Seconds(20)), 128 + SIGTERM) << reader.Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliOperatorTest, BadShortFlagsAndDurationsExit2NamingThem) {
  const std::string lock = Path("bad-flock");
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  const Case cases[] = {
      {{"lock", "--path=" + lock, "-q", "--", "true"}, "-q"},
      {{"lock", "--path=" + lock, "-xq", "--", "true"}, "-q"},
      {{"lock", "--path=" + lock, "-w", "--", "true"}, "-w needs a value"},
      {{"lock", "--path=" + lock, "-w", "1e3", "--", "true"}, "1e3"},
      {{"lock", "--path=" + lock, "--timeout=-1", "--", "true"}, "--timeout=-1"},
      {{"lock", "--path=" + lock, "--timeout=.", "--", "true"}, "--timeout=."},
      {{"lock", "--path=" + lock, "-E", "256", "--", "true"}, "--conflict_exit_code=256"},
      {{"lock", "--path=" + lock, "-E", "x", "--", "true"}, "-E x"},
      {{"semaphore", "--path=" + lock, "--leases=1", "-s", "--", "true"}, "--mode"},
      {{"elect", "--path=" + lock, "--who", "--wait", "--watch"}, "--wait and --watch"},
      {{"elect", "--path=" + lock, "--who", "--wait=soon"}, "--wait=soon"},
      {{"elect", "--path=" + lock, "--wait=1", "--", "true"}, "--wait"},
  };
  for (const Case& c : cases) {
    Process& p = Zkr(c.args);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr(c.named)) << p.Describe();
  }
  EXPECT_THAT(Children(lock), ::testing::IsEmpty());
}

// Descriptors the caller passed (here 9, as `exec 9>file` leaves it) reach
// CMD; zkr's own (its ZooKeeper socket, its pipes) do not. Socket
// activation's LISTEN_PID, which named zkr, names CMD.
TEST_F(CliOperatorTest, TheCallersDescriptorsReachCommandButZkrsOwnDoNot) {
  const std::string lock = Path("descriptors");
  const std::string script = absl::StrCat(
      "exec 9>", ShQuote(File("nine")), "; exec env LISTEN_PID=$$ LISTEN_FDS=1 ",
      ShQuote(binary_), " lock --zk=", connect_, " --path=", lock,
      " -- sh -c 'echo through-nine >&9; echo \"$LISTEN_PID $$\" > ", File("pids"),
      "; ls -l /proc/$$/fd > ", File("fds"), "'");
  Process& p = Shell(script);
  EXPECT_EQ(p.Wait(absl::Seconds(30)), 0) << p.Describe();
  EXPECT_EQ(ReadFile(File("nine")), "through-nine\n");
  const std::vector<std::string> pids =
      absl::StrSplit(absl::StripTrailingAsciiWhitespace(ReadFile(File("pids"))), ' ');
  ASSERT_EQ(pids.size(), 2u) << ReadFile(File("pids"));
  EXPECT_EQ(pids[0], pids[1]) << "LISTEN_PID does not name CMD";
  const std::string fds = ReadFile(File("fds"));
  EXPECT_THAT(fds, HasSubstr(" 9 -> ")) << fds;
  EXPECT_THAT(fds, Not(HasSubstr("socket:"))) << fds;
  EXPECT_THAT(fds, Not(HasSubstr("pipe:"))) << fds;
  ExpectEmptyAndDelete(lock);
}

// ---- the environment and credentials --------------------------------------------

// Every global flag has a variable; the command line wins; a bad value is
// a usage error naming the variable.
TEST_F(CliOperatorTest, GlobalFlagsComeFromTheEnvironmentUnlessGiven) {
  const std::string lock = Path("env");
  Process& connect = ZkrWithEnv({"ZKR_CONNECT=" + connect_, "ZKR_SESSION_TIMEOUT=4"},
                                {"lock", "--path=" + lock, "--", "echo", "ran"},
                                /*with_zk=*/false);
  EXPECT_EQ(connect.Wait(absl::Seconds(20)), 0) << connect.Describe();
  EXPECT_EQ(connect.Stdout(), "ran\n");
  Process& bad = ZkrWithEnv({"ZKR_SESSION_TIMEOUT=soon"}, {"lock", "--path=" + lock, "--", "true"});
  EXPECT_EQ(bad.Wait(absl::Seconds(20)), 2) << bad.Describe();
  EXPECT_THAT(bad.Stderr(), HasSubstr("ZKR_SESSION_TIMEOUT=soon")) << bad.Describe();
  Process& wins = ZkrWithEnv({"ZKR_SESSION_TIMEOUT=soon"},
                             {"lock", "--path=" + lock, "--session_timeout=5s", "--", "true"});
  EXPECT_EQ(wins.Wait(absl::Seconds(20)), 0) << wins.Describe();
  Process& verbose = ZkrWithEnv({"ZKR_VERBOSE=maybe"}, {"lock", "--path=" + lock, "--", "true"});
  EXPECT_EQ(verbose.Wait(absl::Seconds(20)), 2) << verbose.Describe();
  EXPECT_THAT(verbose.Stderr(), HasSubstr("ZKR_VERBOSE=maybe")) << verbose.Describe();
  ExpectEmptyAndDelete(lock);
}

// --auth_file (or ZKR_AUTH_FILE) authenticates as --auth does, and the
// password shows nowhere: not in ps, not in an error about a bad file.
TEST_F(CliOperatorTest, CredentialsFromAFileNeverShowThePassword) {
  const std::string lock = Path("auth-file");
  WriteFile("auth", "digest:alice:hunter2\n");
  Process& holder = ZkrWithEnv({"ZKR_AUTH_FILE=" + File("auth")}, {"lock", "--path=" + lock});
  const std::string node = PrintedValue(holder, "ZKR_LOCK_NODE");
  ASSERT_NE(node, "") << holder.Describe();
  // The node is alice's (creator ACL): the unauthenticated admin cannot
  // delete it.
  EXPECT_TRUE(absl::IsPermissionDenied(admin().Delete(node)));
  const std::string cmdline = ReadFile(absl::StrCat("/proc/", holder.pid(), "/cmdline"));
  EXPECT_THAT(cmdline, Not(HasSubstr("hunter2")));
  holder.Signal(SIGTERM);
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 128 + SIGTERM) << holder.Describe();

  WriteFile("bad", "hunter2\n");
  Process& bad = Zkr({"lock", "--path=" + lock, "--auth_file=" + File("bad"), "--", "true"});
  EXPECT_EQ(bad.Wait(absl::Seconds(20)), 2) << bad.Describe();
  EXPECT_THAT(bad.Stderr(), HasSubstr("--auth_file=" + File("bad"))) << bad.Describe();
  EXPECT_THAT(bad.Stderr(), Not(HasSubstr("hunter2"))) << bad.Describe();
  Process& missing = Zkr({"lock", "--path=" + lock, "--auth_file=" + File("none"), "--", "true"});
  EXPECT_EQ(missing.Wait(absl::Seconds(20)), 2) << missing.Describe();
  EXPECT_THAT(missing.Stderr(), HasSubstr(File("none"))) << missing.Describe();
  Process& both = ZkrWithEnv({"ZKR_AUTH_FILE=" + File("auth"), "ZKR_AUTH=digest:bob:x"},
                             {"lock", "--path=" + lock, "--", "true"});
  EXPECT_EQ(both.Wait(absl::Seconds(20)), 2) << both.Describe();
  EXPECT_THAT(both.Stderr(), HasSubstr("ZKR_AUTH and ZKR_AUTH_FILE")) << both.Describe();
  EXPECT_THAT(both.Stderr(), Not(HasSubstr("digest:bob:x"))) << both.Describe();
  // The queue is alice's: only she can remove it.
  SessionOptions as_alice = Options();
  as_alice.digest_auth = "alice:hunter2";
  std::unique_ptr<Session> alice = NewSession(as_alice);
  ASSERT_NE(alice, nullptr);
  EXPECT_TRUE(testing::DeleteRecursively(*alice, lock).ok());
}

// ---- a polite revocation -----------------------------------------------------------

// The default --revoke_signal asks: a CMD without a handler (sleep) is not
// killed by the request (it was: sleep exited 138 on SIGUSR1); it is
// stopped before the revoker's grace ends, and zkr reports that (exit 4).
TEST_F(CliOperatorTest, APoliteRevocationDoesNotKillACommandWithoutAHandler) {
  const std::string lock = Path("polite");
  Process& holder = Zkr({"lock", "--path=" + lock, "--", "sh", "-c",
                         absl::StrCat("touch ", ShQuote(File("held")), "; exec sleep 60")});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& revoke = Zkr({"revoke", "--path=" + lock, "--grace=6s", "--reason=polite"});
  EXPECT_EQ(revoke.Wait(absl::Seconds(30)), 0) << revoke.Describe();
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 4) << holder.Describe();
  EXPECT_THAT(holder.Stderr(), HasSubstr(absl::StrCat("signal ", SIGURG, " to CMD"))) << holder.Describe();
  ExpectEmptyAndDelete(lock);
}

// ---- what a wait says -----------------------------------------------------------------

// On a terminal (script(1) gives zkr one), a wait of more than a second
// shows one status line, redrawn in place: how many are ahead (here the
// holder and the --verbose waiter), who holds.
// --quiet shows none; --verbose (no terminal) a line per change.
TEST_F(CliOperatorTest, AWaitOnATerminalShowsAStatusLineQuietNoneVerboseLines) {
  const std::string lock = Path("status");
  Process& holder = Zkr({"lock", "--path=" + lock});
  ASSERT_NE(PrintedValue(holder, "ZKR_LOCK_NODE"), "") << holder.Describe();
  auto on_terminal = [&](const std::string& flags) -> Process& {
    const std::string command = absl::StrCat(ShQuote(binary_), " lock --zk=", connect_,
                                             " --path=", lock, " ", flags, " -- true");
    return Shell(absl::StrCat("exec script -qec ", ShQuote(command), " /dev/null"));
  };
  Process& quiet = on_terminal("--quiet -w 3");
  EXPECT_EQ(quiet.Wait(absl::Seconds(30)), 3) << quiet.Describe();
  EXPECT_THAT(quiet.Stdout(), Not(HasSubstr("waiting"))) << quiet.Describe();
  EXPECT_THAT(quiet.Stdout(), HasSubstr("not acquired within 3")) << quiet.Describe();

  Process& verbose = Zkr({"lock", "--path=" + lock, "--verbose", "--", "true"});
  ASSERT_TRUE(WaitUntil(
      [&] { return absl::StrContains(verbose.Stderr(), "1 ahead; held by") || verbose.Exited(); },
      absl::Seconds(20)))
      << verbose.Describe();
  Process& shown = on_terminal("");
  ASSERT_TRUE(WaitUntil(
      [&] { return absl::StrContains(shown.Stdout(), "2 ahead; held by") || shown.Exited(); },
      absl::Seconds(20)))
      << shown.Describe();
  holder.Signal(SIGTERM);
  EXPECT_EQ(shown.Wait(absl::Seconds(20)), 0) << shown.Describe();
  EXPECT_EQ(verbose.Wait(absl::Seconds(20)), 0) << verbose.Describe();
  EXPECT_THAT(shown.Stdout(), HasSubstr("\r\033[Kzkr lock: waiting ")) << shown.Describe();
  EXPECT_TRUE(absl::EndsWith(shown.Stdout(), "\r\033[K")) << "the line was not cleared";
  EXPECT_THAT(shown.Stdout(), HasSubstr(" (W) for ")) << shown.Describe();
  EXPECT_THAT(verbose.Stderr(), HasSubstr(absl::StrCat("zkr lock: ", lock, ": ")))
      << verbose.Describe();
  EXPECT_THAT(verbose.Stderr(), Not(HasSubstr("waiting "))) << verbose.Describe();
  ExpectEmptyAndDelete(lock);
}

// ---- shell completion ---------------------------------------------------------------

// `zkr --bash-completion`, sourced by a real bash, completes what zkr takes.
TEST_F(CliOperatorTest, BashCompletionCompletesSubcommandsFlagsAndValues) {
  Process& script = ZkrRaw({"--bash-completion"});
  ASSERT_EQ(script.Wait(absl::Seconds(20)), 0) << script.Describe();
  WriteFile("completion.bash", script.Stdout(), 0644);
  // COMP_WORDS as bash splits a line (at '=' too), the cursor on the last.
  auto complete = [&](const std::string& words) {
    const std::string line = absl::StrCat(
        "source ", ShQuote(File("completion.bash")), "; COMP_WORDS=(", words,
        "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _zkr; echo \"${COMPREPLY[*]}\"");
    Process& bash = Shell(line, "bash");
    EXPECT_EQ(bash.Wait(absl::Seconds(20)), 0) << bash.Describe();
    return std::string(absl::StripTrailingAsciiWhitespace(bash.Stdout()));
  };
  EXPECT_EQ(complete("zkr lo"), "lock");
  EXPECT_EQ(complete("zkr lock --mo"), "--mode=");
  EXPECT_EQ(complete("zkr lock --mode = "), "read write exclusive");
  EXPECT_EQ(complete("zkr lock --mode = wr"), "write");
  EXPECT_EQ(complete("zkr group --path = /g j"), "join");
  EXPECT_EQ(complete("zkr elect --wh"), "--who");
  EXPECT_EQ(complete("zkr semaphore --mo"), "") << "--mode is lock's alone";
  EXPECT_EQ(complete("zkr lock --path = /l -- ech"), "echo");
}

}  // namespace
}  // namespace zkr
