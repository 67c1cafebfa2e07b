// The zkr command-line tool end to end: the real binary ($ZKR_BINARY) run as
// child processes against the real server of the ZkTest fixture. The
// commands zkr runs are small sh scripts that leave evidence in files of a
// per-test temporary directory.
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/json_reader.h"

namespace zkr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::Basename;
using testing::CliTest;
using testing::Json;
using testing::JsonReader;
using testing::Lines;
using testing::Process;
using testing::ReadFile;
using testing::ShQuote;
using testing::WaitUntil;
using testing::FileExists;

TEST(JsonReaderTest, ParsesWhatInspectPrintsAndRejectsGarbage) {
  std::optional<Json> value = JsonReader::Parse(
      " {\"a\":[1,-2.5e1,true,false,null],\"s\":\"x\\\"\\n\\u0041\",\"o\":{}} \n");
  ASSERT_TRUE(value.has_value());
  const Json* a = value->Get("a");
  ASSERT_NE(a, nullptr);
  ASSERT_THAT(a->items, SizeIs(5));
  EXPECT_EQ(a->items[1].number, -25);
  EXPECT_TRUE(a->items[2].boolean);
  EXPECT_FALSE(a->items[3].boolean);
  EXPECT_EQ(a->items[4].type, Json::Type::kNull);
  EXPECT_EQ(value->Get("s")->string, "x\"\nA");
  EXPECT_EQ(value->Get("o")->type, Json::Type::kObject);
  EXPECT_EQ(JsonReader::Parse("\"caf\xc3\xa9 \\u00e9 \\ud83d\\ude00\"")->string,
            "caf\xc3\xa9 \xc3\xa9 \xf0\x9f\x98\x80");
  for (const char* bad : {"", "{", "{\"a\":}", "[1,]", "{} {}", "\"unterminated", "{a:1}",
                          "\"caf\xe9\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\\udc00\""}) {
    EXPECT_FALSE(JsonReader::Parse(bad).has_value()) << bad;
  }
}

// ---- lock ------------------------------------------------------------------------

TEST_F(CliTest, WriteLocksSerializeTheirCommands) {
  const std::string lock = Path("locks/w");
  const std::string log = ShQuote(File("log"));
  std::vector<Process*> holders;
  // Two writers, and an exclusive holder in the same queue (exclusive = write).
  for (int n = 1; n <= 3; ++n) {
    holders.push_back(&Zkr(
        {"lock", "--path=" + lock, n == 3 ? "--mode=exclusive" : "--mode=write", "--", "sh", "-c",
         absl::StrCat("echo start ", n, " >> ", log, "; sleep 0.5; echo end ", n, " >> ", log)}));
  }
  for (Process* holder : holders) {
    EXPECT_EQ(holder->Wait(absl::Seconds(30)), 0) << holder->Describe();
  }
  std::vector<std::string> lines = Lines(ReadFile(File("log")));
  ASSERT_THAT(lines, SizeIs(6)) << ReadFile(File("log"));
  std::set<std::string> seen;
  for (size_t i = 0; i < lines.size(); i += 2) {
    ASSERT_TRUE(absl::StartsWith(lines[i], "start ")) << absl::StrJoin(lines, "\n");
    const std::string n = lines[i].substr(6);
    EXPECT_EQ(lines[i + 1], "end " + n) << "interleaved:\n" << absl::StrJoin(lines, "\n");
    seen.insert(n);
  }
  EXPECT_THAT(seen, ElementsAre("1", "2", "3"));
  ExpectEmptyAndDelete(lock);
  EXPECT_TRUE(testing::DeleteRecursively(admin(), Path("locks")).ok());
}

TEST_F(CliTest, ReadLocksOverlap) {
  const std::string lock = Path("r");
  // Each reader marks that it is inside, then waits (up to 10s) for the other
  // to be inside too: they pass only if they hold the lock at the same time.
  auto reader = [&](const std::string& mine, const std::string& other) {
    const std::string m = ShQuote(File(mine)), o = ShQuote(File(other));
    return &Zkr(
        {"lock", "--path=" + lock, "--mode=read", "--timeout=20s", "--", "sh", "-c",
         absl::StrCat("touch ", m, "; i=0; while [ ! -e ", o,
                      " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; [ -e ", o, " ]")});
  };
  Process* a = reader("a.inside", "b.inside");
  Process* b = reader("b.inside", "a.inside");
  EXPECT_EQ(a->Wait(absl::Seconds(30)), 0) << a->Describe();
  EXPECT_EQ(b->Wait(absl::Seconds(30)), 0) << b->Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliTest, NonblockWhileHeldExits3AtOnceAndLeavesNoNode) {
  const std::string lock = Path("nonblock");
  Process& holder = Holder(lock, {"--mode=write"});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  const std::string held = Basename(HeldNode("held"));
  for (const char* mode : {"--mode=write", "--mode=read", "--mode=exclusive"}) {
    const absl::Time start = absl::Now();
    Process& busy =
        Zkr({"lock", "--path=" + lock, mode, "--nonblock", "--", "sh", "-c", "echo ran"});
    EXPECT_EQ(busy.Wait(absl::Seconds(20)), 3) << busy.Describe();
    EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << busy.Describe();
    EXPECT_THAT(busy.Stderr(), HasSubstr("--nonblock")) << busy.Describe();
    EXPECT_EQ(busy.Stdout(), "") << "CMD ran without the lock";
    EXPECT_THAT(Children(lock), ElementsAre(held)) << mode;
  }
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  // Free again: --nonblock gets in.
  Process& free = Zkr({"lock", "--path=" + lock, "--nonblock", "--", "sh", "-c", "echo ran"});
  EXPECT_EQ(free.Wait(absl::Seconds(20)), 0) << free.Describe();
  EXPECT_EQ(free.Stdout(), "ran\n");
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliTest, TimeoutWhileHeldExits3AndLeavesNoNode) {
  const std::string lock = Path("timeout");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  const absl::Time start = absl::Now();
  Process& late = Zkr({"lock", "--path=" + lock, "--timeout=300ms", "--", "sh", "-c", "echo ran"});
  EXPECT_EQ(late.Wait(absl::Seconds(20)), 3) << late.Describe();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_THAT(late.Stderr(), HasSubstr("not acquired within 300ms")) << late.Describe();
  EXPECT_EQ(late.Stdout(), "") << "CMD ran without the lock";
  EXPECT_THAT(Children(lock), ElementsAre(Basename(HeldNode("held"))));
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliTest, PropagatesTheCommandsStatusAndSetsItsEnvironment) {
  const std::string lock = Path("env");
  Process& seven = Zkr({"lock", "--path=" + lock, "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(seven.Wait(absl::Seconds(20)), 7) << seven.Describe();
  Process& killed = Zkr({"lock", "--path=" + lock, "--", "sh", "-c", "kill -9 $$"});
  EXPECT_EQ(killed.Wait(absl::Seconds(20)), 128 + SIGKILL) << killed.Describe();
  Process& missing = Zkr({"lock", "--path=" + lock, "--", "/nonexistent/zkr-test-command"});
  EXPECT_EQ(missing.Wait(absl::Seconds(20)), 127) << missing.Describe();
  EXPECT_THAT(missing.Stderr(), HasSubstr("cannot run")) << missing.Describe();

  // Successive holders (any mode) get increasing fencing tokens.
  int64_t previous = 0;
  for (const char* mode : {"--mode=write", "--mode=read", "--mode=exclusive", "--mode=write"}) {
    Process& p = Zkr({"lock", "--path=" + lock, mode, "--", "sh", "-c",
                      "echo \"$ZKR_FENCING_TOKEN|$ZKR_LOCK_PATH|$ZKR_LOCK_NODE\""});
    ASSERT_EQ(p.Wait(absl::Seconds(20)), 0) << p.Describe();
    std::vector<std::string> fields = absl::StrSplit(absl::StripAsciiWhitespace(p.Stdout()), '|');
    ASSERT_THAT(fields, SizeIs(3)) << p.Describe();
    int64_t token = 0;
    ASSERT_TRUE(absl::SimpleAtoi(fields[0], &token)) << p.Describe();
    EXPECT_GT(token, previous) << mode;
    previous = token;
    EXPECT_EQ(fields[1], lock);
    EXPECT_TRUE(absl::StartsWith(fields[2], lock + "/")) << fields[2];
  }
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliTest, WaiterGetsInOnceTheKilledHoldersSessionExpires) {
  const std::string lock = Path("crash");
  Process& holder = Holder(lock, {"--session_timeout=2s"});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& waiter =
      Zkr({"lock", "--path=" + lock, "--timeout=30s", "--", "sh", "-c", "echo got in"});
  ASSERT_TRUE(WaitForChildren(lock, 2)) << waiter.Describe();
  ASSERT_FALSE(waiter.Exited()) << waiter.Describe();
  const absl::Time killed = absl::Now();
  holder.Signal(SIGKILL);  // a crash: its CMD dies with it; its session lives on
  EXPECT_EQ(holder.Wait(absl::Seconds(5)), 128 + SIGKILL);
  EXPECT_EQ(waiter.Wait(absl::Seconds(20)), 0) << waiter.Describe();
  EXPECT_EQ(waiter.Stdout(), "got in\n");
  ::testing::Test::RecordProperty(
      "failover_ms", static_cast<int>(absl::ToInt64Milliseconds(absl::Now() - killed)));
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliTest, InspectShowsTheHolderAndTheWaiterWatchingIt) {
  const std::string lock = Path("inspect");
  Process& holder = Holder(lock, {"--purpose=nightly backup"});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& waiter = Zkr({"lock", "--path=" + lock, "--timeout=30s", "--", "true"});
  ASSERT_TRUE(WaitForChildren(lock, 2)) << waiter.Describe();
  const std::vector<std::string> children = Children(lock);

  Process& json = Zkr({"inspect", "--path=" + lock, "--json"});
  ASSERT_EQ(json.Wait(absl::Seconds(20)), 0) << json.Describe();
  const std::string text = json.Stdout();
  EXPECT_TRUE(absl::StartsWith(text, "{")) << text;
  std::optional<Json> parsed = JsonReader::Parse(text);
  ASSERT_TRUE(parsed.has_value()) << "not JSON: " << text;
  const Json kNull;
  auto field = [&kNull](const Json& object, absl::string_view key) -> const Json& {
    const Json* value = object.Get(key);
    return value != nullptr ? *value : kNull;
  };
  EXPECT_EQ(field(*parsed, "path").string, lock);
  const Json& entries = field(*parsed, "entries");
  ASSERT_EQ(entries.type, Json::Type::kArray) << text;
  ASSERT_THAT(entries.items, SizeIs(2)) << text;
  const Json& first = entries.items[0];
  const Json& second = entries.items[1];
  EXPECT_EQ(field(first, "holds").type, Json::Type::kBool) << text;
  EXPECT_TRUE(field(first, "holds").boolean) << text;
  EXPECT_EQ(field(second, "holds").type, Json::Type::kBool) << text;
  EXPECT_FALSE(field(second, "holds").boolean) << text;
  EXPECT_EQ(field(first, "node").string, Basename(HeldNode("held"))) << text;
  EXPECT_EQ(field(first, "watches").type, Json::Type::kNull) << text;
  EXPECT_EQ(field(second, "watches").string, field(first, "node").string) << text;
  std::vector<std::string> nodes = {field(first, "node").string, field(second, "node").string};
  std::sort(nodes.begin(), nodes.end());
  EXPECT_EQ(nodes, children) << text;
  for (const Json* entry : {&first, &second}) {
    EXPECT_EQ(field(*entry, "mode").string, "W") << text;
    EXPECT_GT(field(*entry, "fencing_token").number, 0) << text;
    EXPECT_TRUE(absl::StartsWith(field(*entry, "session_id").string, "0x")) << text;
    EXPECT_EQ(field(*entry, "sequence").type, Json::Type::kNumber) << text;
  }
  EXPECT_LT(field(first, "sequence").number, field(second, "sequence").number) << text;
  EXPECT_THAT(field(first, "data").string, HasSubstr("nightly backup")) << text;

  Process& table = Zkr({"inspect", "--path=" + lock});
  ASSERT_EQ(table.Wait(absl::Seconds(20)), 0) << table.Describe();
  const std::vector<std::string> rows = Lines(table.Stdout());
  ASSERT_THAT(rows, SizeIs(4)) << table.Describe();  // title, header, two participants
  EXPECT_THAT(rows[0], HasSubstr("2 participant(s)"));
  EXPECT_THAT(rows[2], HasSubstr("HOLDS"));
  EXPECT_THAT(rows[2], HasSubstr("nightly backup"));
  EXPECT_THAT(rows[3], HasSubstr("waits"));
  const std::string& holder_node = field(first, "node").string;
  EXPECT_THAT(rows[3], HasSubstr(holder_node.substr(holder_node.rfind("-W-") + 1)))
      << "the waiter's row names the node it waits on";

  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  EXPECT_EQ(waiter.Wait(absl::Seconds(20)), 0) << waiter.Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliTest, InterruptWhileWaitingExits128PlusTheSignalAndDeletesItsNode) {
  const std::string lock = Path("interrupt");
  Process& holder = Holder(lock);
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  const std::string held = Basename(HeldNode("held"));
  for (int signal : {SIGINT, SIGTERM}) {
    Process& waiter =
        Zkr({"lock", "--path=" + lock, "--timeout=30s", "--", "sh", "-c", "echo ran"});
    ASSERT_TRUE(WaitForChildren(lock, 2)) << waiter.Describe();
    waiter.Signal(signal);
    EXPECT_EQ(waiter.Wait(absl::Seconds(10)), 128 + signal) << strsignal(signal) << waiter.Describe();
    EXPECT_EQ(waiter.Stdout(), "") << "CMD ran without the lock";
    EXPECT_THAT(Children(lock), ElementsAre(held)) << strsignal(signal);
  }
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliTest, InterruptWhileTheCommandRunsReachesItAndReleases) {
  const std::string lock = Path("forward");
  Process& holder = Zkr({"lock", "--path=" + lock, "--", "sh", "-c",
                         absl::StrCat("touch ", ShQuote(File("held")), "; exec sleep 60")});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  ASSERT_TRUE(WaitForChildren(lock, 1));
  holder.Signal(SIGINT);  // forwarded to CMD, which dies of it; then zkr releases
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 128 + SIGINT) << holder.Describe();
  ExpectEmptyAndDelete(lock);
}

TEST_F(CliTest, LockLostWhileTheCommandRunsTerminatesItAndExits4) {
  const std::string lock = Path("lost");
  Process& holder =
      Zkr({"lock", "--path=" + lock, "--grace=5s", "--", "sh", "-c",
           absl::StrCat("echo \"$ZKR_LOCK_NODE\" > ", ShQuote(File("held.tmp")), " && mv ",
                        ShQuote(File("held.tmp")), " ", ShQuote(File("held")), "; exec sleep 60")});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  // Someone deletes the holder's node: the lock is lost; CMD gets SIGTERM.
  ASSERT_TRUE(admin().Delete(HeldNode("held")).ok());
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 4) << holder.Describe();
  EXPECT_THAT(holder.Stderr(), HasSubstr("LOST")) << holder.Describe();
  ExpectEmptyAndDelete(lock);
}

// ---- elect -------------------------------------------------------------------------

TEST_F(CliTest, ElectionFailsOverWhenTheLeaderIsKilled) {
  const std::string election = Path("election");
  auto candidate = [&](const std::string& id) -> Process& {
    return Zkr({"elect", "--path=" + election, "--id=" + id, "--session_timeout=2s", "--", "sh",
                "-c",
                absl::StrCat("echo leader ", id, "; echo epoch $ZKR_LEADER_EPOCH; exec sleep 60")});
  };
  auto printed = [](Process& p, const std::string& line) {
    return absl::StrContains(p.Stdout(), line + "\n");
  };
  auto await_line = [&](Process& p, const std::string& line) {
    WaitUntil([&] { return printed(p, line) || p.Exited(); }, absl::Seconds(20));
    return printed(p, line);
  };
  auto epoch = [](Process& p) {
    int64_t value = 0;
    for (const std::string& line : Lines(p.Stdout())) {
      if (absl::StartsWith(line, "epoch ")) {
        EXPECT_TRUE(absl::SimpleAtoi(line.substr(6), &value)) << line;
      }
    }
    return value;
  };
  auto who = [&](int want_code) {
    Process& p = Zkr({"elect", "--path=" + election, "--who"});
    EXPECT_EQ(p.Wait(absl::Seconds(20)), want_code) << p.Describe();
    return std::string(absl::StripAsciiWhitespace(p.Stdout()));
  };

  Process& a = candidate("a");
  ASSERT_TRUE(await_line(a, "leader a")) << a.Describe();
  Process& b = candidate("b");
  ASSERT_TRUE(WaitForChildren(election, 2)) << b.Describe();
  EXPECT_EQ(who(0), "a");
  EXPECT_FALSE(printed(b, "leader b")) << b.Describe();

  a.Signal(SIGKILL);  // a crash: its CMD dies with it; its session lives on
  EXPECT_EQ(a.Wait(absl::Seconds(5)), 128 + SIGKILL);
  ASSERT_TRUE(await_line(b, "leader b")) << b.Describe();
  EXPECT_EQ(who(0), "b");
  EXPECT_GT(epoch(b), epoch(a)) << a.Describe() << b.Describe();

  // SIGTERM reaches b's CMD; zkr then leaves the election with CMD's status.
  b.Signal(SIGTERM);
  EXPECT_EQ(b.Wait(absl::Seconds(20)), 128 + SIGTERM) << b.Describe();
  EXPECT_EQ(who(3), "");
  ExpectEmptyAndDelete(election);
}

TEST_F(CliTest, LostLeadershipTerminatesTheCommandAndCampaignsAgain) {
  const std::string election = Path("elect-lost");
  // CMD reports each run ("run <its shell's pid>") and a SIGTERM that ends
  // it. Each signal below is sent once that run's sleep has exec'd: before,
  // the shell's forked child still has the shell's trap, a SIGTERM to the
  // group is caught there and lost, the sleep outlives the shell, and zkr
  // rightly waits for CMD's whole group (loaded runs saw it hang).
  Process& a = Zkr({"elect", "--path=" + election, "--id=a", "--", "sh", "-c",
                    "trap 'echo terminated; exit 0' TERM; sleep 60 & echo run $$; wait"});
  // The shells of the runs so far, in order.
  auto runs = [&] {
    std::vector<pid_t> shells;
    for (const std::string& line : Lines(a.Stdout())) {
      int pid = 0;
      if (absl::StartsWith(line, "run ") && absl::SimpleAtoi(line.substr(4), &pid)) {
        shells.push_back(pid);
      }
    }
    return shells;
  };
  auto sleeping = [&](size_t run) {
    return WaitUntil(
        [&] {
          const std::vector<pid_t> shells = runs();
          return a.Exited() ||
                 (shells.size() >= run && testing::RunsChildNamed(shells[run - 1], "sleep"));
        },
        absl::Seconds(20)) &&
           !a.Exited();
  };
  ASSERT_TRUE(sleeping(1)) << a.Describe();
  ASSERT_THAT(runs(), SizeIs(1)) << a.Describe();
  const std::vector<std::string> leader = Children(election);
  ASSERT_THAT(leader, SizeIs(1));
  // An operator deletes the leader's node: leadership is lost.
  ASSERT_TRUE(admin().Delete(election + "/" + leader[0]).ok());
  ASSERT_TRUE(sleeping(2)) << a.Describe();
  // Lost: the next leader may already run, so CMD's group is killed at
  // once (its TERM trap may not get to say "terminated").
  EXPECT_THAT(a.Stderr(), HasSubstr("the hold is lost: SIGKILL to CMD")) << a.Describe();
  EXPECT_THAT(a.Stderr(), HasSubstr("leadership lost")) << a.Describe();
  const std::vector<std::string> again = Children(election);
  ASSERT_THAT(again, SizeIs(1)) << "campaigned again with one new node";
  EXPECT_NE(again[0], leader[0]);
  a.Signal(SIGTERM);  // forwarded to CMD, which exits 0; zkr leaves with that status
  EXPECT_EQ(a.Wait(absl::Seconds(20)), 0) << a.Describe();
  ExpectEmptyAndDelete(election);
}

// ---- usage -------------------------------------------------------------------------

TEST_F(CliTest, UsageErrorsExit2WithAMessageNamingTheProblem) {
  const std::string lock = Path("usage");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"lock", "--", "true"}, "--path is required"},
      {{"lock", "--path=" + lock, "--mode=sideways", "--", "true"}, "--mode=sideways"},
      {{"lock", "--path=" + lock, "--frobnicate", "--", "true"}, "unknown flag \"--frobnicate\""},
      // A flag one or two edits from one of the subcommand's: the nearest is
      // suggested (README's exit-status table).
      {{"lock", "--path=" + lock, "--timout=1s", "--", "true"}, "did you mean \"--timeout\"?"},
      {{"lock", "--pth=" + lock, "--", "true"}, "did you mean \"--path\"?"},
      {{"lock", "--path=" + lock, "--nonblok", "--", "true"}, "did you mean \"--nonblock\"?"},
      {{"ls", "--recursiv"}, "did you mean \"--recursive\"?"},
      {{"lock", "--path=a//b", "--", "true"}, "a//b"},
      {{"lock", "--path=" + lock + "//b", "--", "true"}, lock + "//b"},
      {{"lock", "--path=" + lock, "--timeout=soon", "--", "true"}, "--timeout=soon"},
      {{"lock", "--path=" + lock, "stray", "--", "true"}, "unexpected argument \"stray\""},
      {{"barrier", "--path=" + lock, "frobnicate"}, "unknown action \"frobnicate\""},
      {{"inspect"}, "--path is required"},
  };
  for (const Case& c : cases) {
    Process& p = Zkr(c.args);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr(c.message)) << p.Describe();
  }
  // Flag values are checked before connecting: exit 2 even with no server.
  const Case before_connecting[] = {
      {{"barrier", "--path=" + lock, "--count=0", "enter", "--", "true"}, "--count"},
      // An id may hold '/' (it is stored in the node: issue 32), not a control character.
      {{"barrier", "--path=" + lock, "--count=2", "--id=a\x01b", "enter", "--", "true"}, "--id"},
      {{"lock", "--path=" + lock, "--auth=bogus", "--", "true"}, "--auth"},
      {{"lock", "--path=" + lock, "--session_timeout=never", "--", "true"}, "never"},
      {{"elect", "--path=" + lock, "--on_lost=maybe", "--", "true"}, "maybe"},
      {{"elect", "--path=" + lock, "--grace=x", "--", "true"}, "--grace=x"},
  };
  for (const Case& c : before_connecting) {
    std::vector<std::string> args = c.args;
    args.insert(args.begin() + 1, "--zk=127.0.0.1:1");
    Process& p = ZkrRaw(args);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr(c.message)) << p.Describe();
  }
  Process& bad_connect = ZkrRaw({"lock", "--zk=host:notaport", "--path=" + lock, "--", "true"});
  EXPECT_EQ(bad_connect.Wait(absl::Seconds(20)), 2) << bad_connect.Describe();
  EXPECT_THAT(bad_connect.Stderr(), HasSubstr("host:notaport")) << bad_connect.Describe();
  Process& no_subcommand = ZkrRaw({"--zk=" + connect_, "--path=" + lock});
  EXPECT_EQ(no_subcommand.Wait(absl::Seconds(20)), 2) << no_subcommand.Describe();
  EXPECT_THAT(no_subcommand.Stderr(), HasSubstr("no subcommand")) << no_subcommand.Describe();
  Process& bare = ZkrRaw({});
  EXPECT_EQ(bare.Wait(absl::Seconds(20)), 2) << bare.Describe();
  EXPECT_THAT(bare.Stderr(), HasSubstr("Exit codes")) << bare.Describe();

  for (std::vector<std::string> help :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"lock", "--help"}}) {
    Process& p = ZkrRaw(help);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 0) << p.Describe();
    EXPECT_THAT(p.Stdout(), HasSubstr("Exit codes")) << p.Describe();
    EXPECT_THAT(p.Stdout(), HasSubstr("zkr lock --path=P")) << p.Describe();
  }
  EXPECT_THAT(Children(root()), SizeIs(0));
}

TEST_F(CliTest, UnreachableServerExits5) {
  const absl::Time start = absl::Now();
  Process& p = ZkrRaw({"lock", "--zk=127.0.0.1:1", "--session_timeout=1s",
                       "--path=/zkr-cli-test-unreachable", "--", "sh", "-c", "echo ran"});
  EXPECT_EQ(p.Wait(absl::Seconds(30)), 5) << p.Describe();
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  EXPECT_NE(p.Stderr(), "") << p.Describe();
  EXPECT_EQ(p.Stdout(), "") << p.Describe();
}

// ---- barrier -----------------------------------------------------------------------

TEST_F(CliTest, BarrierWaitReturnsOnceRemoved) {
  const std::string barrier = Path("barrier");
  Process& set = Zkr({"barrier", "--path=" + barrier, "set"});
  ASSERT_EQ(set.Wait(absl::Seconds(20)), 0) << set.Describe();
  auto exists = admin().Exists(barrier);
  ASSERT_TRUE(exists.ok() && exists->has_value()) << exists.status();

  Process& impatient = Zkr({"barrier", "--path=" + barrier, "wait", "--timeout=300ms"});
  EXPECT_EQ(impatient.Wait(absl::Seconds(20)), 3) << impatient.Describe();

  Process& waiter = Zkr({"barrier", "--path=" + barrier, "wait", "--timeout=10s"});
  // Synchronise on the waiter's watch on the barrier node (the embedded
  // server answers wchp; an external one may not: then just go on).
  if (testing::SharedServer() != nullptr) {
    EXPECT_TRUE(WaitUntil(
        [&] {
          auto watches = testing::SharedServer()->FourLetterWord("wchp");
          return (watches.ok() && absl::StrContains(*watches, barrier + "\n")) || waiter.Exited();
        },
        absl::Seconds(20)));
  }
  ASSERT_FALSE(waiter.Exited()) << "returned while the barrier was set" << waiter.Describe();
  Process& remove = Zkr({"barrier", "--path=" + barrier, "remove"});
  EXPECT_EQ(remove.Wait(absl::Seconds(20)), 0) << remove.Describe();
  EXPECT_EQ(waiter.Wait(absl::Seconds(20)), 0) << waiter.Describe();
  exists = admin().Exists(barrier);
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(exists->has_value());
}

TEST_F(CliTest, DoubleBarrierRunsTheCommandsOnceAllEntered) {
  const std::string barrier = Path("double");
  const std::string log = ShQuote(File("log"));
  auto member = [&](int n) -> Process& {
    return Zkr({"barrier", "--path=" + barrier, "--count=3", absl::StrCat("--id=m", n),
                "--timeout=30s", "enter", "--", "sh", "-c",
                absl::StrCat("echo in m", n, " >> ", log,
                             "; [ \"$ZKR_BARRIER_PATH\" = ", ShQuote(barrier), " ]")});
  };
  auto members_inside = [&] {
    size_t n = 0;
    for (const std::string& child : Children(barrier)) n += absl::StrContains(child, "-W-");
    return n;
  };
  Process& m1 = member(1);
  Process& m2 = member(2);
  ASSERT_TRUE(WaitUntil([&] { return members_inside() == 2; }, absl::Seconds(20)))
      << m1.Describe() << m2.Describe();
  EXPECT_FALSE(FileExists(File("log"))) << "a CMD ran before all 3 entered";
  EXPECT_FALSE(m1.Exited()) << m1.Describe();
  EXPECT_FALSE(m2.Exited()) << m2.Describe();
  Process& m3 = member(3);
  for (Process* m : {&m1, &m2, &m3}) EXPECT_EQ(m->Wait(absl::Seconds(30)), 0) << m->Describe();
  std::vector<std::string> lines = Lines(ReadFile(File("log")));
  std::sort(lines.begin(), lines.end());
  EXPECT_THAT(lines, ElementsAre("in m1", "in m2", "in m3"));
  ExpectEmptyAndDelete(barrier);
}

// ---- demo --------------------------------------------------------------------------

TEST_F(CliTest, DemoRunsToCompletion) {
  const absl::Time start = absl::Now();
  Process& demo = Zkr({"demo"});
  const std::optional<int> code = demo.Wait(absl::Seconds(60));
  const std::string demo_root = absl::StrCat("/zkr-demo-", demo.pid());
  EXPECT_EQ(code, 0) << demo.Describe();
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  EXPECT_THAT(demo.Stdout(), HasSubstr("Summary")) << demo.Describe();
  EXPECT_THAT(demo.Stdout(), HasSubstr("writer exclusivity held")) << demo.Describe();
  // The demo works outside root(): remove its (empty container) directories.
  auto left = testing::ListRecursively(admin(), demo_root);
  ASSERT_TRUE(left.ok()) << left.status();
  for (const std::string& path : *left) {
    auto stat = admin().Exists(path);
    if (stat.ok() && stat->has_value()) {
      EXPECT_EQ((*stat)->ephemeral_owner, 0) << "the demo left a participant's node: " << path;
    }
  }
  EXPECT_TRUE(testing::DeleteRecursively(admin(), demo_root).ok());
}

TEST_F(CliTest, InterruptedDemoExits130AtOnceAndItsEmbeddedServerStops) {
  Process& demo = ZkrRaw({"demo"});  // no --zk: it starts a server of its own
  int port = 0;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const std::string out = demo.Stdout();
        const size_t at = out.find("serving on 127.0.0.1:");
        if (at == std::string::npos) return false;
        const size_t begin = at + std::strlen("serving on 127.0.0.1:");
        return absl::SimpleAtoi(out.substr(begin, out.find('\n', begin) - begin), &port);
      },
      absl::Seconds(60)))
      << demo.Describe();
  demo.Signal(SIGINT);
  EXPECT_EQ(demo.Wait(absl::Seconds(10)), 130) << demo.Describe();
  EXPECT_THAT(demo.Stderr(), HasSubstr("interrupted")) << demo.Describe();
  // The server died with zkr: its port stops answering.
  EXPECT_TRUE(WaitUntil([&] { return !testing::FourLetterWord("127.0.0.1", port, "ruok",
                                                              absl::Milliseconds(500)).ok(); },
                        absl::Seconds(10)))
      << "the embedded server on port " << port << " outlived an interrupted demo";
}

}  // namespace
}  // namespace zkr
