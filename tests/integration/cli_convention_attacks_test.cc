// An independent review's attacks on zkr's flock/timeout conventions, its
// environment variables and credentials files, and the descriptors CMD
// inherits (issue 35), as an operator who knows flock(1), timeout(1),
// etcdctl and consul lock would try them. Real binary, real server.
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
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

class CliConventionAttacksTest : public testing::CliOperatorFixture {
 protected:
  static pid_t ParentOf(pid_t pid) {
    const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return 0;
    std::vector<absl::string_view> fields =
        absl::StrSplit(absl::string_view(stat).substr(close + 2), ' ');
    int ppid = 0;
    return fields.size() > 1 && absl::SimpleAtoi(fields[1], &ppid) ? ppid : 0;
  }
  // A lock held by a CMD until File(release) exists.
  Process& HoldLock(const std::string& lock) {
    Process& holder = Holder(lock);
    EXPECT_TRUE(WaitForFile("held", holder)) << holder.Describe();
    return holder;
  }
  void ReleaseLock(Process& holder) {
    Touch("release");
    EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
    std::remove(File("release").c_str());
    std::remove(File("held").c_str());
  }
};

// ---- credentials ---------------------------------------------------------------------

// --auth_file promises digest:USER:PASSWORD from the file's first line, and
// a bad value is a usage error. A file whose first line is blank (a
// leading empty line, spaces, a lone CRLF), and an empty --auth_file= (as
// `--auth_file="$F"` with F unset gives), are bad values: zkr must refuse
// them (exit 2), not run unauthenticated with an open ACL, which is what
// an operator who asked for credentials least expects.
TEST_F(CliConventionAttacksTest, ACredentialsFileWithABlankFirstLineIsRefused) {
  const std::string lock = Path("blank-auth");
  WriteFile("leading-newline", "\ndigest:alice:hunter2\n");
  WriteFile("spaces", "   \n");
  WriteFile("crlf", "\r\ndigest:alice:hunter2\r\n");
  for (const std::string& name : {"leading-newline", "spaces", "crlf"}) {
    SCOPED_TRACE(name);
    Process& p = Zkr({"lock", "--path=" + lock, "--auth_file=" + File(name), "--", "sh", "-c",
                      "echo ran unauthenticated"});
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    EXPECT_EQ(p.Stdout(), "") << "CMD ran without the credentials the operator named";
    EXPECT_THAT(p.Stderr(), Not(HasSubstr("hunter2"))) << p.Describe();
    Process& env = ZkrWithEnv({"ZKR_AUTH_FILE=" + File(name)},
                              {"lock", "--path=" + lock, "--", "echo", "ran unauthenticated"});
    EXPECT_EQ(env.Wait(absl::Seconds(20)), 2) << env.Describe();
  }
  Process& empty = Zkr({"lock", "--path=" + lock, "--auth_file=", "--", "echo", "ran"});
  EXPECT_EQ(empty.Wait(absl::Seconds(20)), 2) << empty.Describe();
  testing::DeleteRecursively(admin(), lock).IgnoreError();
}

// The forms a credentials file takes in practice work: CRLF line ends, no
// final newline, a second line; a directory or an unreadable path is exit
// 2 naming it; --verbose (or ZKR_VERBOSE=1 / yes, gflags' spellings) shows
// the client's log but never the password.
TEST_F(CliConventionAttacksTest, CredentialsFileFormsAndVerboseNeverShowThePassword) {
  const std::string lock = Path("auth-forms");
  WriteFile("crlf", "digest:alice:hunter2\r\n");
  WriteFile("no-newline", "digest:alice:hunter2");
  WriteFile("two-lines", "digest:alice:hunter2\n# a comment\n");
  for (const std::string& name : {"crlf", "no-newline", "two-lines"}) {
    SCOPED_TRACE(name);
    Process& holder = Zkr({"lock", "--path=" + lock, "--verbose", "--auth_file=" + File(name)});
    std::string node;
    WaitUntil(
        [&] {
          for (absl::string_view line : absl::StrSplit(holder.Stdout(), '\n')) {
            if (absl::StartsWith(line, "ZKR_LOCK_NODE=")) node = std::string(line.substr(14));
          }
          return !node.empty() || holder.Exited();
        },
        absl::Seconds(20));
    ASSERT_NE(node, "") << holder.Describe();
    // alice's node: the unauthenticated admin cannot delete it.
    EXPECT_TRUE(absl::IsPermissionDenied(admin().Delete(node))) << node;
    holder.Signal(SIGTERM);
    EXPECT_EQ(holder.Wait(absl::Seconds(20)), 128 + SIGTERM) << holder.Describe();
    EXPECT_THAT(holder.Stderr(), Not(HasSubstr("hunter2"))) << holder.Describe();
  }
  for (const std::string& verbose : {"1", "yes"}) {
    Process& p = ZkrWithEnv({"ZKR_VERBOSE=" + verbose, "ZKR_AUTH_FILE=" + File("crlf")},
                            {"lock", "--path=" + lock, "--", "true"});
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 0) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr("zkr: session")) << "ZKR_VERBOSE=" << verbose;
    EXPECT_THAT(p.Stderr(), Not(HasSubstr("hunter2"))) << p.Describe();
  }
  Process& dir = Zkr({"lock", "--path=" + lock, "--auth_file=" + dir_, "--", "true"});
  EXPECT_EQ(dir.Wait(absl::Seconds(20)), 2) << dir.Describe();
  EXPECT_THAT(dir.Stderr(), HasSubstr(dir_)) << dir.Describe();
  SessionOptions as_alice = Options();
  as_alice.digest_auth = "alice:hunter2";
  std::unique_ptr<Session> alice = NewSession(as_alice);
  ASSERT_NE(alice, nullptr);
  EXPECT_TRUE(testing::DeleteRecursively(*alice, lock).ok());
}

// A long password (5000 characters) in the credentials file: "the first
// line" is the whole line. zkr must authenticate with all of it (the same
// user and password through the library can then remove what zkr made)
// or refuse the file (exit 2) — not cut it short and act as someone else.
TEST_F(CliConventionAttacksTest, ALongPasswordIsReadWhole) {
  const std::string lock = Path("long-password");
  const std::string password(5000, 'p');
  WriteFile("long", absl::StrCat("digest:alice:", password, "\n"));
  Process& p = Zkr({"lock", "--path=" + lock, "--auth_file=" + File("long"), "--", "true"});
  const std::optional<int> code = p.Wait(absl::Seconds(20));
  EXPECT_THAT(code, ::testing::AnyOf(0, 2)) << p.Describe();
  EXPECT_THAT(p.Stderr(), Not(HasSubstr("ppppp"))) << p.Describe();
  if (code == 0) {
    SessionOptions as_alice = Options();
    as_alice.digest_auth = "alice:" + password;
    std::unique_ptr<Session> alice = NewSession(as_alice);
    ASSERT_NE(alice, nullptr);
    const absl::Status removed = testing::DeleteRecursively(*alice, lock);
    EXPECT_TRUE(removed.ok()) << "alice, with the file's whole password, cannot remove the lock "
                                 "zkr made from that file: "
                              << removed;
    if (!removed.ok()) {
      // zkr's own identity can: it read a shorter password.
      for (size_t n = 4080; n <= 4096; ++n) {
        SessionOptions as_zkr = Options();
        as_zkr.digest_auth = "alice:" + password.substr(0, n);
        std::unique_ptr<Session> s = NewSession(as_zkr);
        if (s != nullptr && testing::DeleteRecursively(*s, lock).ok()) {
          ADD_FAILURE() << "zkr authenticated with the first " << n << " characters of the "
                        << password.size() << "-character password";
          break;
        }
      }
    }
  }
}

// An empty value is a bad value, as --timeout= and --path= are (exit 2) —
// also for --wait= (elect --who: `--wait="$T"` with T unset must not mean
// "do not wait"), --grace= and --zk= (`--zk="$ZK"` with ZK unset must not
// drop ZKR_CONNECT for the default 127.0.0.1:2181).
TEST_F(CliConventionAttacksTest, EmptyFlagValuesAreRefused) {
  const std::string path = Path("empty");
  Process& timeout = Zkr({"lock", "--path=" + path, "--timeout=", "--", "true"});
  EXPECT_EQ(timeout.Wait(absl::Seconds(20)), 2) << timeout.Describe();
  Process& wait = Zkr({"elect", "--path=" + path, "--who", "--wait="});
  EXPECT_EQ(wait.Wait(absl::Seconds(20)), 2) << wait.Describe();
  Process& grace = Zkr({"lock", "--path=" + path, "--grace=", "--", "true"});
  EXPECT_EQ(grace.Wait(absl::Seconds(20)), 2) << grace.Describe();
  Process& zk = ZkrWithEnv({"ZKR_CONNECT=" + connect_},
                           {"lock", "--zk=", "--path=" + path, "-n", "--", "true"},
                           /*with_zk=*/false);
  EXPECT_EQ(zk.Wait(absl::Seconds(20)), 2) << zk.Describe();
  testing::DeleteRecursively(admin(), path).IgnoreError();
}

// ---- the environment ------------------------------------------------------------------

// "A bad value is exit 2 naming the variable": also a value that parses but
// is out of range (ZKR_SESSION_TIMEOUT=25h, or 0.01: the range is 100ms to
// 24h), and a connect string that is no connect string (ZKR_CONNECT).
TEST_F(CliConventionAttacksTest, AnOutOfRangeOrMalformedVariableIsNamed) {
  const std::string lock = Path("env-range");
  for (const std::string& value : {"25h", "0.01", "0"}) {
    Process& p = ZkrWithEnv({"ZKR_SESSION_TIMEOUT=" + value},
                            {"lock", "--path=" + lock, "--", "true"});
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr("ZKR_SESSION_TIMEOUT")) << p.Describe();
  }
  Process& connect = ZkrWithEnv({"ZKR_CONNECT=127.0.0.1:notaport"},
                                {"lock", "--path=" + lock, "--", "true"}, /*with_zk=*/false);
  EXPECT_EQ(connect.Wait(absl::Seconds(20)), 2) << connect.Describe();
  EXPECT_THAT(connect.Stderr(), HasSubstr("ZKR_CONNECT")) << connect.Describe();
  Process& acl = ZkrWithEnv({"ZKR_ACL=creator"}, {"lock", "--path=" + lock, "--", "true"});
  EXPECT_EQ(acl.Wait(absl::Seconds(20)), 2) << acl.Describe();
  EXPECT_THAT(acl.Stderr(), HasSubstr("ZKR_ACL")) << acl.Describe();
  // The command line wins over a bad variable; an empty one is unset.
  Process& wins = ZkrWithEnv({"ZKR_SESSION_TIMEOUT=25h", "ZKR_CONNECT="},
                             {"lock", "--path=" + lock, "--session_timeout=5", "--", "true"});
  EXPECT_EQ(wins.Wait(absl::Seconds(20)), 0) << wins.Describe();
  testing::DeleteRecursively(admin(), lock).IgnoreError();
}

// ---- -E never masks a real failure --------------------------------------------------

// -E N replaces exit 3 (busy, not in time, no leader) and nothing else: no
// server (exit 5) stays 5 whatever -E says, -E 0 included (else `zkr lock
// -n -E 0 ... || alert` keeps quiet about a dead ensemble), and a refusal
// (exit 1: a lock on a semaphore's path) stays 1.
TEST_F(CliConventionAttacksTest, TheConflictCodeNeverReplacesARealFailure) {
  const std::vector<std::vector<std::string>> unreachable = {
      {"lock", "--path=/x", "-w", "1", "-E", "9", "--", "true"},
      {"lock", "--path=/x", "-n", "-E", "0", "--", "true"},
      {"semaphore", "--path=/x", "--leases=1", "-w1", "-E", "9", "--", "true"},
      {"group", "--path=/x", "join", "-n", "-E", "9", "--", "true"},
      {"barrier", "--path=/x", "wait", "--timeout=1", "-E", "9"},
      {"elect", "--path=/x", "--who", "--wait=1", "-E", "9"},
  };
  for (const std::vector<std::string>& args : unreachable) {
    std::vector<std::string> line = args;
    line.insert(line.begin() + 1, {"--zk=127.0.0.1:1", "--session_timeout=2"});
    Process& p = ZkrRaw(line);
    EXPECT_EQ(p.Wait(absl::Seconds(30)), 5) << p.Describe();
  }
  const std::string path = Path("kinds");
  Process& semaphore = Zkr({"semaphore", "--path=" + path, "--leases=2"});
  ASSERT_TRUE(WaitForChildren(path, 1)) << semaphore.Describe();
  Process& lock = Zkr({"lock", "--path=" + path, "-n", "-E", "9", "--", "true"});
  EXPECT_EQ(lock.Wait(absl::Seconds(20)), 1) << lock.Describe();
  semaphore.Signal(SIGTERM);
  EXPECT_EQ(semaphore.Wait(absl::Seconds(20)), 128 + SIGTERM) << semaphore.Describe();
  ExpectEmptyAndDelete(path);
}

// ---- short flags and durations --------------------------------------------------------

// flock's short flags where an operator puts them: before the subcommand
// (`zkr -E 7 -w 0.3 lock ...`), bundled with a value (`-nE7`), and the
// forms that must be refused: `-w -5`, `-E -1`, `--wait 5` (5 is no CMD),
// -n where it means nothing (elect).
TEST_F(CliConventionAttacksTest, ShortFlagsBeforeTheSubcommandBundledAndRefused) {
  const std::string lock = Path("short");
  Process& holder = HoldLock(lock);
  Process& before = ZkrRaw({"-E", "7", "-w", "0.3", "lock", "--zk=" + connect_,
                            "--path=" + lock, "--", "echo", "ran"});
  EXPECT_EQ(before.Wait(absl::Seconds(20)), 7) << before.Describe();
  Process& bundled = Zkr({"lock", "--path=" + lock, "-nE7", "--", "echo", "ran"});
  EXPECT_EQ(bundled.Wait(absl::Seconds(20)), 7) << bundled.Describe();
  Process& wait_eq = Zkr({"lock", "--path=" + lock, "-w=0.2", "--", "echo", "ran"});
  EXPECT_EQ(wait_eq.Wait(absl::Seconds(20)), 3) << wait_eq.Describe();
  for (Process* p : {&before, &bundled, &wait_eq}) EXPECT_EQ(p->Stdout(), "");
  ReleaseLock(holder);

  const std::vector<std::vector<std::string>> refused = {
      {"lock", "--path=" + lock, "-w", "-5", "--", "true"},
      {"lock", "--path=" + lock, "-E", "-1", "--", "true"},
      {"lock", "--path=" + lock, "-xn5", "--", "true"},
      {"lock", "--path=" + lock, "-nw", "5", "--", "true"},
      {"elect", "--path=" + lock, "--who", "--wait", "5"},
      {"elect", "--path=" + lock, "-n", "--", "true"},
      {"lock", "--path=" + lock, "-E", "", "--", "true"},
  };
  for (const std::vector<std::string>& args : refused) {
    Process& p = Zkr(args);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
  }
  testing::DeleteRecursively(admin(), lock).IgnoreError();
}

// A bare number is seconds for every duration flag, in every spelling an
// operator types: 0.0001 (tries once), "1.", ".5", leading zeros; --grace,
// --session_timeout and revoke's --grace take bare numbers too.
TEST_F(CliConventionAttacksTest, BareSecondsInEverySpelling) {
  const std::string lock = Path("bare");
  for (const std::string& timeout : {"0.0001", "1.", ".5", "007", "1000000000"}) {
    Process& p = Zkr({"lock", "--path=" + lock, "--timeout=" + timeout, "--grace=5",
                      "--session_timeout=4", "--", "echo", "ran"});
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 0) << p.Describe();
    EXPECT_EQ(p.Stdout(), "ran\n") << p.Describe();
  }
  Process& revoke = Zkr({"revoke", "--path=" + lock, "--grace=2"});
  EXPECT_NE(revoke.Wait(absl::Seconds(20)), 2) << revoke.Describe();
  testing::DeleteRecursively(admin(), lock).IgnoreError();
}

// "A bare number is seconds" has no upper bound in the page; timeout(1) and
// flock -w take 10000000000 (about 317 years: "practically forever", as
// scripts write it). zkr takes 1000000000 but refuses 1000000001 as "not a
// duration" (exit 2).
TEST_F(CliConventionAttacksTest, AHugeBareNumberIsStillSeconds) {
  const std::string lock = Path("huge");
  for (const std::string& timeout : {"1000000001", "10000000000"}) {
    Process& p = Zkr({"lock", "--path=" + lock, "--timeout=" + timeout, "--", "echo", "ran"});
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 0) << p.Describe();
    EXPECT_EQ(p.Stdout(), "ran\n") << p.Describe();
  }
  testing::DeleteRecursively(admin(), lock).IgnoreError();
}

// ---- descriptors ------------------------------------------------------------------------

// `out=$(zkr lock ... -- CMD)`: once CMD (and its group) has exited, nobody
// of zkr's (the guardian, a hold process) keeps the caller's pipe open: the
// command substitution ends at once, 20 times in a row.
TEST_F(CliConventionAttacksTest, CommandSubstitutionEndsOnceCommandExits) {
  const std::string lock = Path("substitution");
  Process& script = Shell(
      absl::StrCat("i=0; while [ $i -lt 20 ]; do out=$(", ShQuote(binary_), " lock --zk=",
                         connect_, " --path=", lock, " -- echo hi) || exit 1; [ \"$out\" = hi ] ",
                         "|| exit 2; i=$((i+1)); done; echo done"), "sh");
  EXPECT_EQ(script.Wait(absl::Seconds(60)), 0) << script.Describe();
  EXPECT_EQ(script.Stdout(), "done\n") << script.Describe();
  ExpectEmptyAndDelete(lock);
}

// CMD gets exactly descriptors 0-2 and those the caller gave zkr: many of
// them (200), one numbered above 1024; none else (no socket, pipe, eventfd
// or file of zkr's). The hold process of a hold without CMD holds none of
// zkr's either. A closed stdin given to zkr is a closed (or /dev/null)
// stdin for CMD, never one of zkr's own descriptors.
TEST_F(CliConventionAttacksTest, CommandGetsExactlyTheCallersDescriptors) {
  const std::string lock = Path("fds");
  const std::string script = absl::StrCat(
      "ulimit -n 4096 || exit 99; i=10; while [ $i -lt 210 ]; do eval \"exec $i</dev/null\"; "
      "i=$((i+1)); done; exec 1500>", ShQuote(File("high")), "; exec <&-; exec ",
      ShQuote(binary_), " lock --zk=", connect_, " --path=", lock,
      " -- bash -c 'ls -l /proc/$$/fd > ", File("fds"), "; echo high >&1500'");
  Process& p = Shell(script, "bash");
  EXPECT_EQ(p.Wait(absl::Seconds(30)), 0) << p.Describe();
  EXPECT_EQ(ReadFile(File("high")), "high\n");
  std::set<int> expected = {1, 2, 1500};
  for (int fd = 10; fd < 210; ++fd) expected.insert(fd);
  std::set<int> seen;
  std::vector<std::string> extra;
  for (absl::string_view line : absl::StrSplit(ReadFile(File("fds")), '\n')) {
    const size_t arrow = line.find(" -> ");
    if (arrow == absl::string_view::npos) continue;
    const size_t space = line.rfind(' ', arrow - 1);
    int fd = -1;
    if (!absl::SimpleAtoi(line.substr(space + 1, arrow - space - 1), &fd)) continue;
    seen.insert(fd);
    if (expected.count(fd) == 0 && !(fd == 0 && absl::EndsWith(line, "/dev/null"))) {
      extra.emplace_back(line);
    }
  }
  for (int fd : expected) EXPECT_EQ(seen.count(fd), 1u) << "descriptor " << fd << " did not reach CMD";
  EXPECT_THAT(extra, ::testing::IsEmpty()) << "descriptors CMD was not given";

  Process& hold = Zkr({"lock", "--path=" + lock});
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(hold.Stdout(), "ZKR_LOCK_NODE="); },
                        absl::Seconds(20)))
      << hold.Describe();
  // The hold process: a child of the guardian, a child of zkr.
  std::string leaked;
  WaitUntil(
      [&] {
        leaked.clear();
        bool found = false;
        std::error_code error;
        for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
          const std::string pid = entry.path().filename().string();
          if (ReadFile(absl::StrCat("/proc/", pid, "/cmdline")).find("--hold-until-signal") ==
                  std::string::npos ||
              ParentOf(ParentOf(std::atoi(pid.c_str()))) != hold.pid()) {
            continue;
          }
          std::error_code ignored;
          for (const auto& fd : std::filesystem::directory_iterator(
                   absl::StrCat("/proc/", pid, "/fd"), ignored)) {
            const std::string target = std::filesystem::read_symlink(fd.path(), ignored).string();
            const int number = std::atoi(fd.path().filename().c_str());
            if (number > 2) absl::StrAppend(&leaked, number, " -> ", target, "\n");
          }
          found = true;
        }
        // While it starts (the dynamic loader opens its libraries) it may
        // show a descriptor for a moment: only one that stays counts.
        return found && leaked.empty();
      },
      absl::Seconds(10));
  EXPECT_EQ(leaked, "") << "the hold process holds descriptors of zkr's";
  hold.Signal(SIGTERM);
  EXPECT_EQ(hold.Wait(absl::Seconds(20)), 128 + SIGTERM) << hold.Describe();
  ExpectEmptyAndDelete(lock);
}

}  // namespace
}  // namespace zkr
