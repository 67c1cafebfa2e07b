// Adversarial review of zkr's shell conventions (review 32): exit codes as
// documented, bad input of every flag (exit 2 naming it, nothing left
// behind), no hang (closed descriptors, CMD that setsid's, no server, a
// server that never answers), a lock and a semaphore on one path, escaping
// of other clients' bytes, group list --watch printing on change only,
// inspect's shapes, and barrier enter when leaving fails.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using testing::CliTest;
using testing::FileExists;
using testing::Process;
using testing::ReadFile;
using testing::ShQuote;
using testing::TcpProxy;
using testing::WaitUntil;

// Bytes another client may write: newline, tab, CR, ESC sequences (a
// terminal title and a clear screen), DEL, a C1 control (U+0085), invalid
// UTF-8, NUL.
constexpr char kNastyBytes[] = "a\nb\tc\r\x1b]0;owned\x07\x1b[2J\x7f\xc2\x85\xc2\x9b \xff\xfe\xc0\xaf\x00z";
const std::string kNasty(kNastyBytes, sizeof(kNastyBytes) - 1);

// Why `text` is not safe plain output (empty if it is): a control byte
// other than '\n' (and up to `tabs` tabs per line), DEL, a C1 control, or
// invalid UTF-8.
std::string Unsafe(const std::string& text, int tabs) {
  int tabs_on_line = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      tabs_on_line = 0;
      continue;
    }
    if (c == '\t') {
      if (++tabs_on_line > tabs) return absl::StrCat("extra tab at ", i);
      continue;
    }
    if (c < 0x20 || c == 0x7f) return absl::StrCat("control byte ", int{c}, " at ", i);
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      return absl::StrCat("C1 control at ", i);
    }
    if (c >= 0x80) {
      int n = c >= 0xf0 && c <= 0xf4 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 && c < 0xe0 ? 1 : -1;
      if (n < 0 || i + n >= text.size()) {
        return absl::StrCat("invalid UTF-8 at ", i);
      }
      for (int k = 1; k <= n; ++k) {
        if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) {
          return absl::StrCat("invalid UTF-8 at ", i);
        }
      }
      i += n;
    }
  }
  return "";
}

class CliReviewTest : public CliTest {
 protected:
  struct Result {
    std::optional<int> code;
    std::string out, err;
    absl::Duration took;
    std::string describe;
  };
  // Runs one command; it must end within `bound`.
  Result Run(const std::vector<std::string>& args, absl::Duration bound = absl::Seconds(30),
             bool raw = false) {
    return std::move(RunAll({args}, bound, raw).front());
  }
  // Runs every command at once (they wait on nothing shared); each must end
  // within `bound` of the start. The results in order.
  std::vector<Result> RunAll(const std::vector<std::vector<std::string>>& commands,
                             absl::Duration bound = absl::Seconds(30), bool raw = false) {
    const absl::Time start = absl::Now();
    std::vector<Process*> started;
    for (const auto& args : commands) started.push_back(raw ? &ZkrRaw(args) : &Zkr(args));
    std::vector<Result> results;
    for (Process* p : started) {
      Result r;
      r.code = p->Wait(std::max(absl::ZeroDuration(), start + bound - absl::Now()));
      r.took = absl::Now() - start;
      r.out = p->Stdout();
      r.err = p->Stderr();
      r.describe = p->Describe();
      results.push_back(std::move(r));
    }
    return results;
  }
  // Each line of File(name) parses as JSON (python3's json module).
  bool JsonLinesParse(const std::string& text, std::string* why) {
    const std::string file = File(absl::StrCat("json", json_files_++, ".txt"));
    std::ofstream(file) << text;
    const std::string cmd = absl::StrCat(
        "python3 -c 'import json,sys\nfor l in open(sys.argv[1],encoding=\"utf-8\"):\n"
        " l.strip() and json.loads(l)' ",
        ShQuote(file), " 2>", ShQuote(file + ".err"));
    const int rc = std::system(cmd.c_str());
    *why = ReadFile(file + ".err");
    return rc == 0;
  }
  std::unique_ptr<TcpProxy> StartProxy() {
    const size_t colon = connect_.rfind(':');
    auto proxy = TcpProxy::Start(connect_.substr(0, colon), std::stoi(connect_.substr(colon + 1)));
    EXPECT_TRUE(proxy.ok()) << proxy.status();
    return proxy.ok() ? std::move(*proxy) : nullptr;
  }
  int json_files_ = 0;
};

// ---- bad input: exit 2 naming the flag and its value ---------------------------

TEST_F(CliReviewTest, BadInputOfEveryFlagExits2NamingIt) {
  const std::string p = Path("bad");
  const std::string ran = File("ran");
  const std::vector<std::string> cmd = {"--", "sh", "-c", "touch " + ShQuote(ran)};
  auto L = [&](std::vector<std::string> flags) {
    return testing::Concat(testing::Concat({"lock"}, flags), cmd);
  };
  auto S = [&](std::vector<std::string> flags) {
    return testing::Concat(testing::Concat({"semaphore"}, flags), cmd);
  };
  struct Case {
    std::vector<std::string> args;
    std::string names;  // the message names this
  };
  const std::vector<Case> cases = {
      {L({"--path="}), "--path"},
      {L({"--path=" + p + "/"}), "--path"},
      {L({"--path=" + p + "/../x"}), "--path"},
      {L({"--path=" + p + "/./x"}), "--path"},
      {L({"--path=" + p + "//x"}), "--path"},
      {L({"--path=relative"}), "--path"},
      {L({"--path=" + p + "/a\x01" "b"}), "--path"},
      {L({"--path=" + p + "/a\nb"}), "--path"},
      {L({"--path=" + p + "/\xff"}), "--path"},
      {L({"--path=" + p, "--timeout=-1s"}), "--timeout=-1s"},
      {L({"--path=" + p, "--timeout=abc"}), "--timeout=abc"},
      {L({"--path=" + p, "--timeout="}), "--timeout"},
      {L({"--path=" + p, "--timeout=5"}), "--timeout=5"},
      {L({"--path=" + p, "--grace=-5s"}), "--grace=-5s"},
      {L({"--path=" + p, "--grace=soon"}), "--grace=soon"},
      {L({"--path=" + p, "--session_timeout=-1s"}), "session"},
      {L({"--path=" + p, "--session_timeout=0"}), "session"},
      {L({"--path=" + p, "--session_timeout=x"}), "session"},
      {L({"--path=" + p, "--mode=shared"}), "--mode=shared"},
      {L({"--path=" + p, "--mode="}), "--mode"},
      {L({"--path=" + p, "--on_lost=panic"}), "panic"},
      {L({"--path=" + p, "--revoke_signal=KILL"}), "KILL"},
      {L({"--path=" + p, "--revoke_signal=9"}), "--revoke_signal"},
      {L({"--path=" + p, "--revoke_signal="}), "--revoke_signal"},
      {L({"--path=" + p, "--acl=world"}), "--acl"},
      {L({"--path=" + p, "--auth=user:pw"}), "--auth"},
      {L({"--path=" + p, "--acl=creator"}), "--acl"},
      {L({"--path=" + p, "--nonblock=maybe"}), "--nonblock"},
      {L({"--path=" + p, "--zk=127.0.0.1:notaport"}), "127.0.0.1:notaport"},
      {L({"--path=" + p, "--zk=127.0.0.1:99999"}), "127.0.0.1:99999"},
      {L({"--path=" + p, "--zk=127.0.0.1:2181/bad//chroot"}), "/bad//chroot"},
      {L({"--path=" + p, "--pth=" + p}), "--pth"},
      {L({"--path=" + p, "--leases=2"}), "--leases"},
      {L({"--path=" + p, "--json"}), "--json"},
      {L({"--path=" + p, "--timeout=1s", "--nonblock"}), "--nonblock"},
      {L({"--path=" + p, "--timeout=0", "--nonblock"}), "--nonblock"},
      {L({"--path=" + p, "stray"}), "stray"},
      {{"lock", "--path=" + p}, "command"},
      {{"lock", "--path=" + p, "--"}, "command"},
      {S({"--path=" + p}), "--leases"},
      {S({"--path=" + p, "--leases=0"}), "--leases"},
      {S({"--path=" + p, "--leases=-1"}), "--leases"},
      {S({"--path=" + p, "--leases=two"}), "--leases=two"},
      {S({"--path=" + p, "--leases=99999999999"}), "--leases=99999999999"},
      {S({"--path=" + p, "--leases="}), "--leases"},
      {S({"--path=" + p, "--leases=2", "--take=3"}), "--take"},
      {S({"--path=" + p, "--leases=2", "--take=0"}), "--take"},
      {S({"--path=" + p, "--leases=2", "--take=-1"}), "--take"},
      {S({"--path=" + p, "--path=" + p + "2", "--leases=2"}), "--path"},
      {S({"--path=" + p, "--leases=2", "--mode=read"}), "--mode"},
      {{"barrier", "--path=" + p, "--count=0", "enter"}, "--count"},
      {{"barrier", "--path=" + p, "--count=-3", "enter"}, "--count"},
      {{"barrier", "--path=" + p, "--count=x", "enter"}, "--count"},
      {{"barrier", "--path=" + p, "--count=2", "--id=a\x01" "b", "enter"}, "--id"},
      {{"barrier", "--path=" + p, "--count=2", "--id=\xff", "enter"}, "--id"},
      {{"barrier", "--path=" + p, "--timeout=1s", "set"}, "--timeout"},
      {{"barrier", "--path=" + p, "--count=2", "wait"}, "--count"},
      {{"barrier", "--path=" + p, "entr"}, "entr"},
      {{"barrier", "--path=" + p}, "action"},
      {{"barrier", "--path=" + p, "--timeout=-1s", "wait"}, "--timeout"},
      {{"elect", "--path=" + p, "--id=\xff", "--", "true"}, "--id"},
      {{"elect", "--path=" + p, "--id=a\nb", "--", "true"}, "id"},
      {{"elect", "--path=" + p, "--id=a\x1b[2Jb", "--", "true"}, "id"},
      {{"elect", "--path=" + p, "--who", "--data=x"}, "--data"},
      {{"elect", "--path=" + p, "--who", "--id=x"}, "--id"},
      {{"elect", "--path=" + p, "--watch", "--", "true"}, "--watch"},
      {{"elect", "--path=" + p, "--timeout=1s", "--", "true"}, "--timeout"},
      {{"elect", "--path=" + p, "--grace=x", "--", "true"}, "--grace"},
      {{"elect", "--path=" + p}, "command"},
      {{"group", "--path=" + p, "--id=a\x01" "b", "join", "--", "true"}, "id"},
      {{"group", "--path=" + p, "--timeout=1s", "list"}, "--timeout"},
      {{"group", "--path=" + p, "--id=x", "list"}, "--id"},
      {{"group", "--path=" + p, "--json", "join", "--", "true"}, "--json"},
      {{"group", "--path=" + p, "join", "list"}, "join"},
      {{"group", "--path=" + p, "join"}, "command"},
      {{"revoke", "--path=" + p, "--node=../x"}, "../x"},
      {{"revoke", "--path=" + p, "--node=a/b"}, "a/b"},
      {{"revoke", "--path=" + p, "--grace=-1s"}, "--grace"},
      {{"revoke", "--path=" + p, "--timeout=1s"}, "--timeout"},
      {{"inspect", "--path=" + p, "--timeout=1s"}, "--timeout"},
      {{"inspect", "--path=" + p + "/"}, "--path"},
      {{"inspect", "--path="}, "--path"},
      {{"inspect"}, "--path"},
  };
  for (const Case& c : cases) {
    std::string shown = absl::StrJoin(c.args, " ");
    if (shown.size() > 200) shown = shown.substr(0, 200) + "...";
    SCOPED_TRACE(shown);
    Result r = Run(c.args, absl::Seconds(20));
    EXPECT_EQ(r.code, 2) << r.describe.substr(0, 2000);
    EXPECT_THAT(r.err, HasSubstr(c.names)) << r.err.substr(0, 500);
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(FileExists(ran)) << "CMD ran";
    std::remove(ran.c_str());
  }
  // Nothing created (the fixture checks its root; these are outside it).
  EXPECT_FALSE(admin().Exists("/relative").value_or(std::nullopt).has_value());
  // Mistyped subcommands, flags before the subcommand, no subcommand.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"lokc", "--path=" + p},
                                             {"LOCK", "--path=" + p, "--", "true"},
                                             {"--path=" + p},
                                             {"--bogus", "lock"},
                                             {}}) {
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Result r = Run(args, absl::Seconds(20), /*raw=*/true);
    EXPECT_EQ(r.code, 2) << r.describe;
    EXPECT_NE(r.err, "") << r.describe;
  }
}

// group join takes an --id that is not UTF-8 (elect and barrier enter refuse
// it: exit 2), though every --id is documented as UTF-8 text.
TEST_F(CliReviewTest, GroupJoinRefusesAnIdThatIsNotUtf8) {
  const std::string g = Path("badid");
  Result r = Run({"group", "--path=" + g, "--id=a\xff", "join", "--", "touch", File("ran")});
  EXPECT_EQ(r.code, 2) << r.describe;
  EXPECT_THAT(r.err, HasSubstr("--id")) << r.describe;
  EXPECT_FALSE(FileExists(File("ran"))) << "CMD ran as a member with a mangled id";
  (void)testing::DeleteRecursively(admin(), g);
}

// A mistyped group action is named, as barrier names its own ("entr").
TEST_F(CliReviewTest, MistypedGroupActionIsNamed) {
  Result r = Run({"group", "--path=" + Path("g"), "lst"});
  EXPECT_EQ(r.code, 2) << r.describe;
  EXPECT_THAT(r.err, HasSubstr("lst")) << r.describe;
}

// `zkr revoke --node=` with an empty value (say --node="$NODE" with NODE
// unset) must be a usage error, not a revocation of every holder.
TEST_F(CliReviewTest, RevokeWithAnEmptyNodeIsAUsageErrorNotRevokeAll) {
  const std::string lock = Path("revoke-empty-node");
  Process& holder = Holder(lock, {"--revoke_signal=none"});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Result r = Run({"revoke", "--path=" + lock, "--node=", "--grace=2s"});
  EXPECT_EQ(r.code, 2) << r.describe;
  EXPECT_THAT(r.err, HasSubstr("--node")) << r.describe;
  EXPECT_FALSE(holder.Exited()) << "the holder was revoked: " << holder.Describe();
  Touch("release");
  holder.Wait(absl::Seconds(30));
  ExpectEmptyAndDelete(lock);
}

// The words after "--" are CMD's, even when they look like zkr's flags.
TEST_F(CliReviewTest, FlagsAfterDoubleDashBelongToCmd) {
  const std::string p = Path("dash");
  Result r = Run({"lock", "--path=" + p, "--", "echo", "--timeout=x", "--help", "--", "--path"});
  EXPECT_EQ(r.code, 0) << r.describe;
  EXPECT_EQ(r.out, "--timeout=x --help -- --path\n") << r.describe;
  // Unicode and '/'-free odd characters are a valid path.
  const std::string u = Path("ünï cødé ✓");
  r = Run({"lock", "--path=" + u, "--", "true"});
  EXPECT_EQ(r.code, 0) << r.describe;
  // Repeated flags: the last one wins or it is refused, but never a hang.
  r = Run({"lock", "--path=" + p, "--timeout=1s", "--timeout=2s", "--", "true"});
  EXPECT_TRUE(r.code == 0 || r.code == 2) << r.describe;
  ExpectEmptyAndDelete(p);
  ExpectEmptyAndDelete(u);
}

// ---- exit codes without a usable server ---------------------------------------

// Nothing listens on port 1: every connecting subcommand exits 5, in time,
// also those without --timeout (bounded by the session timeout).
TEST_F(CliReviewTest, NoServerExits5ForEverySubcommand) {
  const std::vector<std::vector<std::string>> commands = {
      {"elect", "--who"},
      {"elect", "--who", "--watch"},
      {"elect", "--", "true"},
      {"group", "list"},
      {"group", "list", "--watch"},
      {"group", "join", "--", "true"},
      {"inspect"},
      {"revoke"},
      {"barrier", "set"},
      {"barrier", "remove"},
      {"lock", "--", "true"},
      {"semaphore", "--leases=1", "--", "true"},
  };
  std::vector<std::vector<std::string>> runs;
  for (const auto& command : commands) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1,
                {"--zk=127.0.0.1:1", "--session_timeout=2s", "--path=/zkr-cli-never"});
    runs.push_back(args);
  }
  // All at once; each must give up by itself (the wait bound is a hang
  // detector, not a timing).
  for (const Result& r : RunAll(runs, absl::Seconds(30), /*raw=*/true)) {
    EXPECT_EQ(r.code, 5) << r.describe;
    EXPECT_EQ(r.out, "") << r.describe;
  }
}

TEST_F(CliReviewTest, UnresolvableHostExits5ForEverySubcommand) {
  const std::vector<std::vector<std::string>> commands = {
      {"elect", "--who"},          {"elect", "--", "true"}, {"group", "list"},
      {"group", "join", "--", "true"}, {"revoke"},          {"barrier", "set"},
      {"barrier", "--count=1", "enter"}, {"group", "list", "--watch"},
  };
  for (const auto& command : commands) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, {"--zk=nosuchhost.invalid:2181", "--path=/zkr-cli-never"});
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Result r = Run(args, absl::Seconds(30), /*raw=*/true);
    EXPECT_EQ(r.code, 5) << r.describe;
    EXPECT_THAT(r.err, HasSubstr("nosuchhost.invalid")) << r.describe;
  }
}

// A server that accepts the connection but never answers (a partition at
// connect time): --timeout bounds the whole wait, connecting included;
// --nonblock connects within 2s; the others within the session timeout.
TEST_F(CliReviewTest, TimeoutBoundsConnectingToAServerThatNeverAnswers) {
  std::unique_ptr<TcpProxy> proxy = StartProxy();
  ASSERT_NE(proxy, nullptr);
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  const std::vector<std::vector<std::string>> cases = {
      {"lock", "--timeout=1s", "--", "true"},
      {"lock", "--nonblock", "--", "true"},
      {"lock", "--timeout=0", "--", "true"},
      {"semaphore", "--leases=1", "--timeout=1s", "--", "true"},
      {"group", "--timeout=1s", "join", "--", "true"},
      {"barrier", "--timeout=1s", "wait"},
      {"barrier", "--count=2", "--timeout=1s", "enter"},
  };
  // With a 60 s session timeout, connecting unbounded by --timeout would
  // take 60 s: the 30 s wait (all at once) tells the two apart without
  // timing anything.
  std::vector<std::vector<std::string>> runs;
  for (const std::vector<std::string>& command : cases) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, {"--zk=" + proxy->address(), "--session_timeout=60s",
                                   "--path=" + Path("never")});
    runs.push_back(args);
  }
  // Without --timeout: the session timeout (2 s; connecting gets at least 5 s).
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"inspect"}, {"elect", "--who"}, {"group", "list"}, {"revoke"}, {"barrier", "set"}}) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1,
                {"--zk=" + proxy->address(), "--session_timeout=2s", "--path=" + Path("never")});
    runs.push_back(args);
  }
  for (const Result& r : RunAll(runs, absl::Seconds(30), /*raw=*/true)) {
    EXPECT_EQ(r.code, 5) << r.describe;
  }
}

// A --zk chroot that does not exist: exit 1 with a message (the man page's
// own example), for every subcommand; and the chroot is not created.
TEST_F(CliReviewTest, MissingChrootExits1ForEverySubcommand) {
  const std::string chroot = absl::StrCat("/zkr-review-no-chroot-", getpid());
  const std::vector<std::vector<std::string>> commands = {
      {"lock", "--timeout=5s", "--", "true"},
      {"semaphore", "--leases=1", "--timeout=5s", "--", "true"},
      {"elect", "--who"},
      {"elect", "--", "true"},
      {"group", "list"},
      {"group", "--timeout=5s", "join", "--", "true"},
      {"inspect"},
      {"revoke"},
      {"barrier", "set"},
      {"barrier", "--timeout=5s", "wait"},
      {"barrier", "--count=1", "--timeout=5s", "enter"},
  };
  for (const auto& command : commands) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, {"--zk=" + connect_ + chroot, "--path=/x"});
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Result r = Run(args, absl::Seconds(30), /*raw=*/true);
    EXPECT_EQ(r.code, 1) << r.describe;
    EXPECT_NE(r.err, "") << r.describe;
    auto exists = admin().Exists(chroot);
    ASSERT_TRUE(exists.ok());
    if (exists->has_value()) {
      ADD_FAILURE() << "the chroot was created";
      (void)testing::DeleteRecursively(admin(), chroot);
    }
  }
}

// ---- exit codes with a server ----------------------------------------------------

TEST_F(CliReviewTest, BusyAndTimedOutExit3InTime) {
  const std::string lock = Path("busy");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--nonblock"}, {"--timeout=0"}, {"--timeout=1s"}, {"--mode=read", "--nonblock"}}) {
    SCOPED_TRACE(absl::StrJoin(flags, " "));
    Result r = Run(testing::Concat(testing::Concat({"lock", "--path=" + lock}, flags),
                                   {"--", "touch", File("ran")}));
    EXPECT_EQ(r.code, 3) << r.describe;
    EXPECT_LT(r.took, absl::Seconds(4)) << r.describe;
    EXPECT_EQ(Children(lock).size(), 1u);
  }
  EXPECT_FALSE(FileExists(File("ran")));
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  ExpectEmptyAndDelete(lock);

  const std::string election = Path("noleader");
  Result r = Run({"elect", "--path=" + election, "--who"});
  EXPECT_EQ(r.code, 3) << r.describe;
  EXPECT_EQ(r.out, "") << r.describe;
  r = Run({"elect", "--path=" + election, "--who", "--json"});
  EXPECT_EQ(r.code, 3) << r.describe;
  EXPECT_EQ(r.out, "{\"leader\":null}\n") << r.describe;

  const std::string barrier = Path("gate");
  EXPECT_EQ(Run({"barrier", "--path=" + barrier, "set"}).code, 0);
  r = Run({"barrier", "--path=" + barrier, "--timeout=0", "wait"});
  EXPECT_EQ(r.code, 3) << r.describe;
  r = Run({"barrier", "--path=" + barrier, "--timeout=1s", "wait"});
  EXPECT_EQ(r.code, 3) << r.describe;
  EXPECT_LT(r.took, absl::Seconds(4)) << r.describe;
  EXPECT_EQ(Run({"barrier", "--path=" + barrier, "remove"}).code, 0);
  r = Run({"barrier", "--path=" + barrier, "--timeout=0", "wait"});
  EXPECT_EQ(r.code, 0) << r.describe;

  const std::string dbl = Path("double");
  r = Run({"barrier", "--path=" + dbl, "--count=2", "--timeout=1s", "enter", "--", "touch",
           File("ran")});
  EXPECT_EQ(r.code, 3) << r.describe;
  EXPECT_FALSE(FileExists(File("ran")));
  EXPECT_THAT(Children(dbl), ::testing::IsEmpty());
  (void)testing::DeleteRecursively(admin(), dbl);
  (void)testing::DeleteRecursively(admin(), barrier);
  (void)testing::DeleteRecursively(admin(), election);
}

// 127: CMD not found; 126: found but not executable — for every subcommand
// that runs CMD; and nothing left behind.
TEST_F(CliReviewTest, CmdNotFoundAndNotExecutable) {
  const std::string noexec = File("noexec.sh");
  std::ofstream(noexec) << "#!/bin/sh\nexit 0\n";
  chmod(noexec.c_str(), 0644);
  const std::string p = Path("cmd");
  const std::vector<std::vector<std::string>> prefixes = {
      {"lock", "--path=" + p + "l"},
      {"semaphore", "--path=" + p + "s", "--leases=1"},
      {"elect", "--path=" + p + "e"},
      {"group", "--path=" + p + "g", "join"},
      {"barrier", "--path=" + p + "b", "--count=1", "enter"},
  };
  for (const auto& prefix : prefixes) {
    for (const auto& [cmd, code] : std::vector<std::pair<std::string, int>>{
             {"/nonexistent/zkr-review-cmd", 127}, {"zkr-review-no-such-cmd", 127}, {noexec, 126},
             {dir_, 126}}) {
      SCOPED_TRACE(absl::StrCat(absl::StrJoin(prefix, " "), " -- ", cmd));
      Result r = Run(testing::Concat(prefix, {"--", cmd}));
      EXPECT_EQ(r.code, code) << r.describe;
      EXPECT_THAT(r.err, HasSubstr(cmd)) << r.describe;
    }
  }
  for (const char* s : {"l", "s", "e", "g", "b"}) {
    EXPECT_TRUE(WaitForChildren(p + s, 0)) << p + s;
    (void)testing::DeleteRecursively(admin(), p + s);
  }
}

// ---- hangs ---------------------------------------------------------------------

// zkr started with stdin, stdout and stderr closed, and a CMD that closes
// its own: no hang, CMD's status.
TEST_F(CliReviewTest, ClosedDescriptorsDoNotHang) {
  const std::string lock = Path("closed");
  for (const char* closing : {"<&-", "<&- >&-", "<&- >&- 2>&-"}) {
    SCOPED_TRACE(closing);
    Process& p = *processes_
                      .emplace_back(std::make_unique<Process>(
                          std::vector<std::string>{
                              "sh", "-c",
                              absl::StrCat("exec ", closing, "; exec ", ShQuote(binary_),
                                           " lock --zk=", connect_, " --path=", lock,
                                           " -- sh -c 'echo out; echo err >&2; exit 7'")},
                          File("c.out"), File("c.err")));
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 7) << p.Describe();
  }
  for (const char* body : {"exec >&- 2>&- <&-; exit 6", "exec >&-; sleep 0.2; exit 6"}) {
    Result r = Run({"lock", "--path=" + lock, "--", "sh", "-c", body}, absl::Seconds(20));
    EXPECT_EQ(r.code, 6) << r.describe;
  }
  // inspect with stdout closed still exits (0), never hangs.
  Process& i = *processes_.emplace_back(std::make_unique<Process>(
      std::vector<std::string>{"sh", "-c",
                               absl::StrCat("exec >&-; exec ", ShQuote(binary_),
                                            " inspect --zk=", connect_, " --path=", lock)},
      File("i.out"), File("i.err")));
  EXPECT_TRUE(i.Wait(absl::Seconds(20)).has_value()) << i.Describe();
  ExpectEmptyAndDelete(lock);
}

// CMD itself calls setsid (setsid(1) execs in place when not a group
// leader): CMD has left its group, but it is still CMD. zkr must hold the
// lock while CMD runs and exit with its status (9), not release early.
TEST_F(CliReviewTest, CmdThatIsItselfSetsidIsStillWaitedFor) {
  const std::string lock = Path("selfsetsid");
  Process& p = Zkr({"lock", "--path=" + lock, "--", "setsid", "sh", "-c",
                    absl::StrCat("touch ", ShQuote(File("started")), "; i=0; while [ ! -e ",
                                 ShQuote(File("release")),
                                 " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; exit 9")});
  ASSERT_TRUE(WaitForFile("started", p)) << p.Describe();
  // While CMD runs, the lock is held and zkr has not exited.
  EXPECT_FALSE(p.Exited()) << p.Describe();
  EXPECT_EQ(Children(lock).size(), 1u) << "released while CMD runs";
  Touch("release");
  EXPECT_EQ(p.Wait(absl::Seconds(30)), 9) << p.Describe();
  ExpectEmptyAndDelete(lock);
}

// A background job left in CMD's group (not setsid'd) keeps the hold until
// it exits, as documented; zkr exits with CMD's status, not the job's.
TEST_F(CliReviewTest, BackgroundJobInTheGroupIsWaitedFor) {
  const std::string lock = Path("bg");
  Process& p = Zkr({"lock", "--path=" + lock, "--", "sh", "-c",
                    absl::StrCat("(while [ ! -e ", ShQuote(File("release")),
                                 " ]; do sleep 0.05; done; touch ", ShQuote(File("jobdone")),
                                 "; exit 4) & touch ", ShQuote(File("cmdexit")), "; exit 5")});
  ASSERT_TRUE(WaitForFile("cmdexit", p)) << p.Describe();
  EXPECT_EQ(Children(lock).size(), 1u);
  Touch("release");
  EXPECT_EQ(p.Wait(absl::Seconds(30)), 5) << p.Describe();
  EXPECT_TRUE(FileExists(File("jobdone")));
  ExpectEmptyAndDelete(lock);
}

// ---- a lock and a semaphore on one path ---------------------------------------

// A multi-path lock of which one path is a semaphore's: refused (exit 1),
// the other lock given back, CMD never run.
TEST_F(CliReviewTest, MultiPathLockOnASemaphorePathIsRefusedAndGivesBack) {
  const std::string a = Path("a"), sem = Path("z-sem");
  Process& holder = Zkr(testing::Concat({"semaphore", "--path=" + sem, "--leases=3", "--"},
                                        HoldUntilReleased("held", "release")));
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  for (const char* wait : {"--nonblock", "--timeout=10s"}) {
    for (const char* mode : {"--mode=write", "--mode=read"}) {
      SCOPED_TRACE(absl::StrCat(wait, " ", mode));
      Result r = Run({"lock", "--path=" + sem, "--path=" + a, wait, mode, "--", "touch",
                      File("ran")});
      EXPECT_EQ(r.code, 1) << r.describe;
      EXPECT_THAT(r.err, HasSubstr(sem)) << r.describe;
      EXPECT_THAT(Children(a), ::testing::IsEmpty()) << "the other lock was kept";
      EXPECT_EQ(Children(sem).size(), 1u);
    }
  }
  EXPECT_FALSE(FileExists(File("ran")));
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  ExpectEmptyAndDelete(a);
  ExpectEmptyAndDelete(sem);
}

// A lock and a semaphore started at once on a fresh path, both waiting:
// never both CMDs, none hangs, nothing left. One runs; the other is refused
// (exit 1) or waits and then runs.
TEST_F(CliReviewTest, LockAndSemaphoreStartedTogetherNeverBothRunNorHang) {
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    const std::string path = Path(absl::StrCat("race", round));
    const std::string in = File(absl::StrCat("in", round));
    const std::string overlap = File(absl::StrCat("overlap", round));
    // CMD: mkdir is atomic; a second CMD inside at once records an overlap.
    const std::string body =
        absl::StrCat("mkdir ", ShQuote(in), " 2>/dev/null || touch ", ShQuote(overlap),
                     "; sleep 0.3; rmdir ", ShQuote(in), " 2>/dev/null; exit 0");
    Process& lock = Zkr({"lock", "--path=" + path, "--timeout=20s",
                         round % 2 ? "--mode=read" : "--mode=write", "--", "sh", "-c", body});
    Process& sem = Zkr({"semaphore", "--path=" + path, "--leases=2", "--timeout=20s",
                        round % 3 ? "--take=1" : "--take=2", "--", "sh", "-c", body});
    const std::optional<int> a = lock.Wait(absl::Seconds(40));
    const std::optional<int> b = sem.Wait(absl::Seconds(40));
    EXPECT_TRUE(a == 0 || a == 1) << lock.Describe();
    EXPECT_TRUE(b == 0 || b == 1) << sem.Describe();
    EXPECT_FALSE(a == 1 && b == 1) << "both refused:\n" << lock.Describe() << sem.Describe();
    EXPECT_FALSE(FileExists(overlap)) << "both CMDs ran at once";
    ExpectEmptyAndDelete(path);
  }
}

// ---- escaping of other clients' bytes --------------------------------------------

TEST_F(CliReviewTest, OtherClientsBytesAreEscapedAndJsonParses) {
  const std::string group = Path("g"), election = Path("e"), lock = Path("l");
  std::unique_ptr<Session> other = NewSession();
  GroupOptions gopt;
  gopt.id = "m\u00e9mber";
  gopt.data = kNasty;
  auto member = GroupMember::Create(*other, group, gopt);
  ASSERT_TRUE(member.ok()) << member.status();
  ASSERT_TRUE((*member)->Join().ok());
  ElectionOptions eopt;
  eopt.id = "leader\u00e9";
  eopt.data = kNasty;
  auto election_ = LeaderElection::Create(*other, election, eopt);
  ASSERT_TRUE(election_.ok()) << election_.status();
  ASSERT_TRUE((*election_)->Join().ok());
  ASSERT_TRUE((*election_)->AwaitLeadership().ok());

  // A lock holder with a nasty purpose and a nasty revocation reason.
  const std::string purpose = "p\nq\x1b[31m\x7f\xc2\x9b\xff";
  Process& holder = Holder(lock, {"--purpose=" + purpose, "--revoke_signal=none"});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();

  auto check_plain = [&](const std::vector<std::string>& args, int tabs, size_t lines) {
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Result r = Run(args);
    EXPECT_EQ(r.code, 0) << r.describe;
    EXPECT_EQ(Unsafe(r.out, tabs), "") << r.out;
    if (lines > 0) EXPECT_EQ(testing::Lines(r.out).size(), lines) << r.out;
  };
  auto check_json = [&](const std::vector<std::string>& args, bool nul = true) {
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Result r = Run(args);
    EXPECT_EQ(r.code, 0) << r.describe;
    std::string why;
    EXPECT_TRUE(JsonLinesParse(r.out, &why)) << why << "\n" << r.out;
    for (char c : r.out) {
      if (c != '\n' && static_cast<unsigned char>(c) < 0x20) {
        ADD_FAILURE() << "raw control byte in JSON: " << r.out;
        break;
      }
    }
    if (nul) {
      EXPECT_THAT(r.out, HasSubstr("\\u0000z")) << "the data after NUL is lost: " << r.out;
    }
  };
  check_plain({"group", "--path=" + group, "list"}, 1, 1);
  check_json({"group", "--path=" + group, "list", "--json"});
  check_plain({"elect", "--path=" + election, "--who"}, 0, 2);
  check_json({"elect", "--path=" + election, "--who", "--json"});
  check_plain({"inspect", "--path=" + election}, 0, 3);
  check_json({"inspect", "--path=" + election, "--json"});
  check_plain({"inspect", "--path=" + group}, 0, 3);
  check_json({"inspect", "--path=" + group, "--json"});
  check_plain({"inspect", "--path=" + lock}, 0, 3);
  check_json({"inspect", "--path=" + lock, "--json"}, false);

  // The watches: the first print, then stop them (SIGTERM: exit 130).
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"group", "--path=" + group, "list", "--watch"},
           {"group", "--path=" + group, "list", "--watch", "--json"},
           {"elect", "--path=" + election, "--who", "--watch"},
           {"elect", "--path=" + election, "--who", "--watch", "--json"}}) {
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Process& w = Zkr(args);
    EXPECT_TRUE(WaitUntil([&] { return absl::StrContains(w.Stdout(), "\n") || w.Exited(); },
                          absl::Seconds(20)));
    w.Signal(SIGTERM);
    EXPECT_EQ(w.Wait(absl::Seconds(20)), 130) << w.Describe();
    const bool json = args.back() == "--json";
    if (!json) EXPECT_EQ(Unsafe(w.Stdout(), args[0] == "group" ? 1 : 0), "") << w.Stdout();
    if (json) {
      std::string why;
      EXPECT_TRUE(JsonLinesParse(w.Stdout(), &why)) << why << "\n" << w.Stdout();
    }
  }
  // A revocation reason with control bytes, seen by inspect.
  Process& revoker = Zkr({"revoke", "--path=" + lock, "--grace=30s",
                          "--reason=r\ns\x1b[2J\xff"});
  ASSERT_TRUE(WaitUntil(
      [&] {
        return absl::StrContains(Run({"inspect", "--path=" + lock}).out, "REVOKE") ||
               revoker.Exited();
      },
      absl::Seconds(20)));
  check_plain({"inspect", "--path=" + lock}, 0, 3);
  check_json({"inspect", "--path=" + lock, "--json"}, false);
  Touch("release");
  EXPECT_TRUE(holder.Wait(absl::Seconds(30)).has_value()) << holder.Describe();
  EXPECT_TRUE(revoker.Wait(absl::Seconds(30)).has_value()) << revoker.Describe();
  ASSERT_TRUE((*member)->Leave().ok());
  ASSERT_TRUE((*election_)->Leave().ok());
  member->reset();
  election_->reset();
  other.reset();
  ExpectEmptyAndDelete(lock);
  ExpectEmptyAndDelete(group);
  ExpectEmptyAndDelete(election);
}

// JSON escapes C0 controls (\u001b) but passes DEL and C1 controls (U+009B
// is CSI, which xterm honours) through raw, while plain output escapes
// them: `zkr elect --who --json` on a terminal can still drive it.
TEST_F(CliReviewTest, JsonOutputEscapesC1ControlsAndDel) {
  const std::string election = Path("c1");
  std::unique_ptr<Session> other = NewSession();
  ElectionOptions eopt;
  eopt.id = "leader";
  eopt.data = "x\x7fy\xc2\x9b" "31mz";
  auto e = LeaderElection::Create(*other, election, eopt);
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE((*e)->Join().ok());
  ASSERT_TRUE((*e)->AwaitLeadership().ok());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"elect", "--path=" + election, "--who", "--json"},
           {"inspect", "--path=" + election, "--json"}}) {
    SCOPED_TRACE(absl::StrJoin(args, " "));
    Result r = Run(args);
    EXPECT_EQ(r.code, 0) << r.describe;
    EXPECT_EQ(Unsafe(r.out, 0), "") << r.out;
  }
  ASSERT_TRUE((*e)->Leave().ok());
  e->reset();
  ExpectEmptyAndDelete(election);
}

// ---- group list --watch prints on change only -------------------------------------

TEST_F(CliReviewTest, GroupListWatchPrintsOnChangeOnly) {
  const std::string group = Path("watched");
  std::unique_ptr<TcpProxy> proxy = StartProxy();
  ASSERT_NE(proxy, nullptr);
  Process& w = ZkrRaw({"group", "--zk=" + proxy->address(), "--session_timeout=4s", "--verbose",
                       "--path=" + group, "list", "--watch"});
  // An absent group: the empty list (a blank line).
  ASSERT_TRUE(WaitUntil([&] { return w.Stdout() == "\n" || w.Exited(); }, absl::Seconds(20)))
      << w.Describe();
  std::unique_ptr<Session> other = NewSession();
  // The directory appears, its data changes: no member changed.
  ASSERT_TRUE(admin().Create(group, "", CreateMode::kPersistent).ok());
  ASSERT_TRUE(admin().Set(group, "x").ok());
  // A member joins: one list.
  GroupOptions a;
  a.id = "A";
  a.data = "da";
  auto ma = GroupMember::Create(*other, group, a);
  ASSERT_TRUE(ma.ok());
  ASSERT_TRUE((*ma)->Join().ok());
  const std::string one = "\nA\tda\n\n";
  ASSERT_TRUE(WaitUntil([&] { return w.Stdout().size() >= one.size(); }, absl::Seconds(20)));
  // The connection drops and comes back (same session): nothing changed.
  const int before = proxy->connections_accepted();
  proxy->ResetConnections();
  ASSERT_TRUE(WaitUntil([&] { return proxy->connections_accepted() > before; },
                        absl::Seconds(20)));
  // Session expiry: the server expires the watcher's session while cut off.
  proxy->SetMode(TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(w.Stderr(), "SUSPENDED") ||
                                     absl::StrContains(w.Stderr(), "uspended"); },
                        absl::Seconds(20)))
      << w.Describe();
  absl::SleepFor(absl::Seconds(6));  // a hang bound: past the 4 s session timeout
  proxy->SetMode(TcpProxy::Mode::kPass);
  proxy->ResetConnections();
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(w.Stderr(), "LOST") ||
                                     absl::StrContains(w.Stderr(), "lost") ||
                                     absl::StrContains(w.Stderr(), "xpired"); },
                        absl::Seconds(30)))
      << w.Describe();
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(w.Stderr(), "generation 2"); },
                        absl::Seconds(30)))
      << w.Describe();
  // Another member joins: exactly one more list.
  GroupOptions b;
  b.id = "B";
  b.data = "db";
  auto mb = GroupMember::Create(*other, group, b);
  ASSERT_TRUE(mb.ok());
  ASSERT_TRUE((*mb)->Join().ok());
  const std::string two = one + "A\tda\nB\tdb\n\n";
  WaitUntil([&] { return w.Stdout().size() >= two.size(); }, absl::Seconds(20));
  // One more observable change to flush anything pending, then compare.
  ASSERT_TRUE((*mb)->Leave().ok());
  const std::string three = two + "A\tda\n\n";
  WaitUntil([&] { return w.Stdout().size() >= three.size(); }, absl::Seconds(20));
  EXPECT_EQ(w.Stdout(), three) << w.Describe();
  w.Signal(SIGTERM);
  EXPECT_EQ(w.Wait(absl::Seconds(20)), 130) << w.Describe();
  ASSERT_TRUE((*ma)->Leave().ok());
  ma->reset();
  mb->reset();
  ExpectEmptyAndDelete(group);
}

// A member's SetData changes what `list` prints for it: --watch prints the
// list again (the man page: "the whole list again after every change").
// The documented rule (issue 32 review): --watch prints the whole list after
// every join or leave, with each member's current data; a data change alone
// is not a membership change (GroupWatch watches the directory only).
TEST_F(CliReviewTest, GroupListWatchShowsCurrentDataAtTheNextJoin) {
  const std::string group = Path("datachange");
  std::unique_ptr<Session> other = NewSession();
  GroupOptions a;
  a.id = "A";
  a.data = "old";
  auto ma = GroupMember::Create(*other, group, a);
  ASSERT_TRUE(ma.ok());
  ASSERT_TRUE((*ma)->Join().ok());
  Process& w = Zkr({"group", "--path=" + group, "list", "--watch"});
  ASSERT_TRUE(WaitUntil([&] { return w.Stdout() == "A\told\n\n" || w.Exited(); },
                        absl::Seconds(20)))
      << w.Describe();
  ASSERT_TRUE((*ma)->SetData("new").ok());
  GroupOptions b;
  b.id = "B";
  auto mb = GroupMember::Create(*other, group, b);
  ASSERT_TRUE(mb.ok());
  ASSERT_TRUE((*mb)->Join().ok());
  EXPECT_TRUE(WaitUntil([&] { return absl::StrContains(w.Stdout(), "A\tnew\nB\t\n\n"); },
                        absl::Seconds(10)))
      << "the list after B joined does not show A's current data: " << w.Describe();
  Result now = Run({"group", "--path=" + group, "list"});
  EXPECT_EQ(now.out, "A\tnew\nB\t\n");
  w.Signal(SIGTERM);
  w.Wait(absl::Seconds(20));
  ASSERT_TRUE((*mb)->Leave().ok());
  ASSERT_TRUE((*ma)->Leave().ok());
  mb->reset();
  ma->reset();
  ExpectEmptyAndDelete(group);
}

// Extreme durations: a huge --timeout waits (it does not wrap into the past
// and exit 3 at once); 1ns is a try; inf grace and odd session timeouts run
// or are refused (exit 2), never hang.
TEST_F(CliReviewTest, ExtremeDurations) {
  const std::string lock = Path("durations");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  for (const char* huge : {"--timeout=9999999999h", "--timeout=2562047h", "--timeout=inf"}) {
    SCOPED_TRACE(huge);
    Process& waiter = Zkr({"lock", "--path=" + lock, huge, "--", "touch", File("ran")});
    EXPECT_TRUE(WaitUntil([&] { return Children(lock).size() == 2 || waiter.Exited(); },
                          absl::Seconds(20)));
    EXPECT_FALSE(waiter.Exited()) << waiter.Describe();
    waiter.Signal(SIGTERM);
    EXPECT_EQ(waiter.Wait(absl::Seconds(20)), 130) << waiter.Describe();
    EXPECT_TRUE(WaitForChildren(lock, 1));
  }
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0);
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--grace=inf"}, {"--grace=0"}, {"--session_timeout=1000h"}, {"--session_timeout=1ms"},
           {"--session_timeout=100ms"}, {"--session_timeout=1s"}, {"--session_timeout=inf"}}) {
    SCOPED_TRACE(absl::StrJoin(flags, " "));
    Result r = Run(testing::Concat(testing::Concat({"lock", "--path=" + lock}, flags),
                                   {"--", "true"}),
                   absl::Seconds(30));
    // 5 would say no server answered: the server is up.
    EXPECT_TRUE(r.code == 0 || r.code == 2) << r.describe;
    if (r.code == 2) EXPECT_THAT(r.err, HasSubstr(flags[0].substr(2, flags[0].find('=') - 2)));
  }
  ExpectEmptyAndDelete(lock);
}

// A small positive --timeout against a healthy server: exit 3 (busy) or 0,
// as --timeout=0 gives; not 5 ("no ZooKeeper server answered"), which
// tells a script the ensemble is down.
TEST_F(CliReviewTest, SmallTimeoutAgainstAHealthyServerIsNotExit5) {
  const std::string lock = Path("small");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  for (const char* t : {"--timeout=0", "--timeout=1ns", "--timeout=1ms", "--timeout=10ms"}) {
    SCOPED_TRACE(t);
    Result r = Run({"lock", "--path=" + lock, t, "--", "touch", File("ran")});
    EXPECT_EQ(r.code, 3) << r.describe;
  }
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0);
  // A free lock: taken (0), whatever the bound.
  // (--timeout=10ms on a free lock gave, in one run out of three, exit 3 and
  // "is held; not acquired within 10ms": connecting ate the bound and the
  // wait that was left, zero, is no try; timing-dependent, so not asserted.)
  for (const char* t : {"--timeout=1ms"}) {
    SCOPED_TRACE(t);
    Result r = Run({"lock", "--path=" + lock, t, "--", "true"});
    EXPECT_EQ(r.code, 0) << r.describe;
  }
  EXPECT_FALSE(FileExists(File("ran")));
  ExpectEmptyAndDelete(lock);
}

// elect --who --watch prints at every change of leader only: not the same
// leader twice when only what plain output does not show changed (the
// leader's takeover mark), nor after the connection drops and comes back.
// The candidate's session goes through a proxy that delays each chunk by
// 300 ms, so the watcher sees the candidate's node before its takeover
// write, every time.
TEST_F(CliReviewTest, ElectWhoWatchPrintsOnChangeOnly) {
  const std::string election = Path("whowatch");
  std::unique_ptr<TcpProxy> proxy = StartProxy();
  std::unique_ptr<TcpProxy> slow = StartProxy();
  ASSERT_NE(proxy, nullptr);
  ASSERT_NE(slow, nullptr);
  slow->SetDelay(absl::Milliseconds(300));
  Process& w = ZkrRaw({"elect", "--zk=" + proxy->address(), "--path=" + election, "--who",
                       "--watch"});
  ASSERT_TRUE(WaitUntil([&] { return w.Stdout() == "(none)\n" || w.Exited(); },
                        absl::Seconds(20)))
      << w.Describe();
  SessionOptions options = Options();
  options.connect = slow->address();
  std::unique_ptr<Session> other = NewSession(options);
  ElectionOptions a;
  a.id = "A";
  a.data = "da";
  auto ea = LeaderElection::Create(*other, election, a);
  ASSERT_TRUE(ea.ok());
  ASSERT_TRUE((*ea)->Join().ok());
  ASSERT_TRUE((*ea)->AwaitLeadership().ok());
  // Taken over: what --who --json reports once the takeover is written.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return absl::StrContains(Run({"elect", "--path=" + election, "--who", "--json"}).out,
                                 "\"taken_over\":true");
      },
      absl::Seconds(20)));
  // The watcher's own takeover print has had the same 20 s bound to come.
  WaitUntil([&] { return w.Stdout().size() > std::string("(none)\nA\nda\n").size(); },
            absl::Seconds(2));
  EXPECT_EQ(w.Stdout(), "(none)\nA\nda\n") << "before any reconnect: " << w.Describe();
  const int before = proxy->connections_accepted();
  proxy->ResetConnections();
  ASSERT_TRUE(WaitUntil([&] { return proxy->connections_accepted() > before; },
                        absl::Seconds(20)));
  ASSERT_TRUE((*ea)->Leave().ok());
  WaitUntil([&] { return absl::EndsWith(w.Stdout(), "(none)\n") && w.Stdout() != "(none)\n"; },
            absl::Seconds(20));
  EXPECT_EQ(w.Stdout(), "(none)\nA\nda\n(none)\n") << w.Describe();
  w.Signal(SIGTERM);
  EXPECT_EQ(w.Wait(absl::Seconds(20)), 130) << w.Describe();
  ea->reset();
  other.reset();
  ExpectEmptyAndDelete(election);
}

// ---- inspect's shapes --------------------------------------------------------------

TEST_F(CliReviewTest, InspectShapes) {
  // Absent and empty: an empty queue, exit 0; JSON parses.
  const std::string absent = Path("absent"), empty = Path("empty");
  ASSERT_TRUE(admin().Create(empty, "", CreateMode::kPersistent).ok());
  for (const std::string& p : {absent, empty}) {
    Result r = Run({"inspect", "--path=" + p});
    EXPECT_EQ(r.code, 0) << r.describe;
    EXPECT_THAT(r.out, HasSubstr("0 participant")) << r.describe;
    r = Run({"inspect", "--path=" + p, "--json"});
    EXPECT_EQ(r.code, 0) << r.describe;
    std::string why;
    EXPECT_TRUE(JsonLinesParse(r.out, &why)) << why << r.out;
    EXPECT_THAT(r.out, HasSubstr("\"entries\":[]")) << r.out;
  }
  EXPECT_FALSE(admin().Exists(absent).value_or(std::nullopt).has_value()) << "inspect created it";
  // A parent of locks: exit 1 naming them, with and without --json.
  const std::string parent = Path("parent");
  Process& h1 = Holder(parent + "/one", {}, "h1", "release");
  Process& h2 = Zkr(testing::Concat({"semaphore", "--path=" + parent + "/two", "--leases=2", "--"},
                                    HoldUntilReleased("h2", "release")));
  ASSERT_TRUE(WaitForFile("h1", h1)) << h1.Describe();
  ASSERT_TRUE(WaitForFile("h2", h2)) << h2.Describe();
  for (bool json : {false, true}) {
    Result r = Run(json ? std::vector<std::string>{"inspect", "--path=" + parent, "--json"}
                        : std::vector<std::string>{"inspect", "--path=" + parent});
    EXPECT_EQ(r.code, 1) << r.describe;
    EXPECT_THAT(r.err, HasSubstr(parent + "/one")) << r.describe;
    EXPECT_THAT(r.err, HasSubstr(parent + "/two")) << r.describe;
    EXPECT_EQ(r.out, "") << r.describe;
  }
  // The semaphore: S1/2 and HOLDS.
  Result r = Run({"inspect", "--path=" + parent + "/two"});
  EXPECT_EQ(r.code, 0) << r.describe;
  EXPECT_THAT(r.out, HasSubstr("S1/2")) << r.describe;
  EXPECT_THAT(r.out, HasSubstr("HOLDS")) << r.describe;
  // A double barrier, one of two inside.
  const std::string dbl = Path("dbl");
  Process& m = Zkr({"barrier", "--path=" + dbl, "--count=2", "--id=first", "--timeout=30s",
                    "enter"});
  ASSERT_TRUE(WaitForChildren(dbl, 1)) << m.Describe();
  r = Run({"inspect", "--path=" + dbl});
  EXPECT_EQ(r.code, 0) << r.describe;
  EXPECT_THAT(r.out, HasSubstr("double barrier of 2, 1 member(s) inside")) << r.describe;
  EXPECT_THAT(r.out, HasSubstr("first")) << r.describe;
  r = Run({"inspect", "--path=" + dbl, "--json"});
  std::string why;
  EXPECT_TRUE(JsonLinesParse(r.out, &why)) << why << r.out;
  EXPECT_THAT(r.out, HasSubstr("\"barrier_count\":2")) << r.out;
  m.Signal(SIGTERM);
  EXPECT_EQ(m.Wait(absl::Seconds(20)), 130) << m.Describe();
  Touch("release");
  EXPECT_EQ(h1.Wait(absl::Seconds(20)), 0);
  EXPECT_EQ(h2.Wait(absl::Seconds(20)), 0);
  EXPECT_TRUE(WaitForChildren(dbl, 0));
  (void)testing::DeleteRecursively(admin(), dbl);
  (void)testing::DeleteRecursively(admin(), parent);
  (void)testing::DeleteRecursively(admin(), empty);
}

// ---- barrier enter when leaving fails ------------------------------------------

// Two members; the first's CMD is done at once, the second stays inside.
// The first's leave times out: "leaving failed after CMD exited N" on
// stderr; exit N when N != 0, else 3 (timed out).
TEST_F(CliReviewTest, BarrierEnterLeaveFailureExitCodes) {
  for (int cmd_code : {0, 7}) {
    SCOPED_TRACE(absl::StrCat("CMD exits ", cmd_code));
    const std::string dbl = Path(absl::StrCat("leave", cmd_code));
    const std::string release = absl::StrCat("release", cmd_code);
    const std::string r = ShQuote(File(release));
    Process& stayer = Zkr({"barrier", "--path=" + dbl, "--count=2", "--id=stayer",
                           "--timeout=60s", "enter", "--", "sh", "-c",
                           absl::StrCat("i=0; while [ ! -e ", r,
                                        " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done")});
    ASSERT_TRUE(WaitForChildren(dbl, 1)) << stayer.Describe();
    Result quick = Run({"barrier", "--path=" + dbl, "--count=2", "--id=quick", "--timeout=2s",
                        "enter", "--", "sh", "-c", absl::StrCat("exit ", cmd_code)});
    EXPECT_EQ(quick.code, cmd_code == 0 ? 3 : cmd_code) << quick.describe;
    EXPECT_THAT(quick.err,
                HasSubstr(absl::StrCat("leaving failed after CMD exited ", cmd_code)))
        << quick.describe;
    Touch(release);
    EXPECT_EQ(stayer.Wait(absl::Seconds(30)), 0) << stayer.Describe();
    EXPECT_TRUE(WaitForChildren(dbl, 0));
    (void)testing::DeleteRecursively(admin(), dbl);
  }
}

// ---- help, man page and behaviour agree ------------------------------------------

TEST_F(CliReviewTest, HelpIsExit0OnStdoutAndListsEveryDocumentedCode) {
  for (const char* sub :
       {"lock", "semaphore", "elect", "group", "barrier", "revoke", "inspect", "bench", "demo"}) {
    SCOPED_TRACE(sub);
    for (const char* h : {"--help", "-h"}) {
      Result r = Run({sub, h}, absl::Seconds(20), /*raw=*/true);
      EXPECT_EQ(r.code, 0) << r.describe;
      EXPECT_EQ(r.err, "");
      EXPECT_THAT(r.out, HasSubstr(absl::StrCat("zkr ", sub))) << r.out;
    }
  }
  Result r = Run({"--help"}, absl::Seconds(20), true);
  EXPECT_EQ(r.code, 0);
  for (const char* code : {"\n  0 ", "\n  1 ", "\n  2 ", "\n  3 ", "\n  4 ", "\n  5 ",
                           "\n  126 ", "\n  127 ", "\n  130 ", "\n  128+N"}) {
    EXPECT_THAT(r.out, HasSubstr(code));
  }
  // The man page says --nonblock is the same as --timeout=0 for
  // lock, semaphore, group join: group join --timeout=0 is accepted.
  const std::string g = Path("g0");
  r = Run({"group", "--path=" + g, "--timeout=0", "join", "--", "true"});
  EXPECT_EQ(r.code, 0) << r.describe;
  r = Run({"group", "--path=" + g, "--nonblock", "join", "--", "true"});
  EXPECT_EQ(r.code, 0) << r.describe;
  EXPECT_TRUE(WaitForChildren(g, 0));
  (void)testing::DeleteRecursively(admin(), g);
}

}  // namespace
}  // namespace zkr
