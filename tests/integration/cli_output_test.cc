// zkr's output and exit status (issue 32 items 11, 13-16), end to end against
// a real server: CMD's status survives a failed barrier leave, plain output
// escapes what node data holds, `group list --watch` and `elect --who
// --watch` print on change only, `inspect` says what a path is (its shapes),
// and barrier ids follow elect's rules.
#include <signal.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/barrier_member.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/cli_run_fixture.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::Basename;
using testing::CliTest;
using testing::Lines;
using testing::Process;
using testing::ShQuote;
using testing::WaitUntil;
using testing::CliRunTest;
using testing::TcpProxy;

class CliOutputTest : public CliTest {
 protected:
  // A participant node made by the admin session (so it stays while the
  // test wants): "<label>_1_0123456789abcdef-W-<seq>" under `dir`.
  std::string FakeParticipant(const std::string& dir, const std::string& data,
                              const std::string& label = "fake") {
    CreateOptions parents;
    parents.make_parents = true;
    parents.parents_as_containers = false;
    auto created = admin().Create(absl::StrCat(dir, "/", label, "_1_0123456789abcdef-W-"), data,
                                  CreateMode::kEphemeralSequential, parents);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->path : "";
  }
  // A CMD that writes File(started), then waits until File(release) exists.
  std::vector<std::string> StartedThenWait(absl::string_view started, absl::string_view release) {
    const std::string s = ShQuote(File(started)), r = ShQuote(File(release));
    return {"sh", "-c",
            absl::StrCat("touch ", s, "; i=0; while [ ! -e ", r, " ] && [ $i -lt 600 ]; do",
                         " sleep 0.05; i=$((i+1)); done")};
  }
  // A member joins `group`, which `watch` (group list --watch, the group's
  // empty list printed) then prints once; then both stop.
  void ExpectOneJoinPrintedOnce(Process& watch, const std::string& group) {
    Process& member = Zkr(testing::Concat({"group", "--path=" + group, "--id=w1", "join", "--"},
                                          StartedThenWait("joined", "release")));
    ASSERT_TRUE(WaitForFile("joined", member)) << member.Describe();
    EXPECT_TRUE(WaitUntil(
        [&] { return absl::StrContains(watch.Stdout(), "w1\t\n\n") || watch.Exited(); },
        absl::Seconds(20)))
        << watch.Describe();
    EXPECT_EQ(watch.Stdout(), "\nw1\t\n\n") << watch.Describe();
    Touch("release");
    EXPECT_EQ(member.Wait(absl::Seconds(20)), 0) << member.Describe();
    watch.Signal(SIGTERM);
    EXPECT_EQ(watch.Wait(absl::Seconds(20)), 128 + SIGTERM) << watch.Describe();
    ExpectEmptyAndDelete(group);
  }
};

bool HasByte(const std::string& text, char byte) { return text.find(byte) != std::string::npos; }

// ---- item 11: CMD's status wins once CMD has run ------------------------------

// The fake member stays: our member leaves (deletes its node) and waits for
// it. Told to stop then, zkr exits with CMD's 7, not 130.
TEST_F(CliOutputTest, BarrierCommandStatusWinsWhenLeavingIsInterrupted) {
  const std::string barrier = Path("leave-int");
  const std::string fake = FakeParticipant(barrier, internal::BarrierMemberData("fake", 2));
  Process& member = Zkr({"barrier", "--path=" + barrier, "--count=2", "--id=m", "--timeout=60s",
                         "enter", "--", "sh", "-c", "exit 7"});
  // Our node came (entered: with the fake it filled the barrier, which made
  // "ready") and went again (leaving): the fake and "ready" are left. (No
  // sample of the three at once is needed: CMD exits at once, and a poll
  // can miss that moment.)
  EXPECT_TRUE(WaitUntil(
      [&] {
        return Children(barrier) == std::vector<std::string>{Basename(fake), "ready"} ||
               member.Exited();
      },
      absl::Seconds(20)));
  ASSERT_FALSE(member.Exited()) << member.Describe();
  member.Signal(SIGTERM);
  EXPECT_EQ(member.Wait(absl::Seconds(30)), 7) << member.Describe();
  EXPECT_THAT(member.Stderr(), HasSubstr("leav")) << member.Describe();
  EXPECT_THAT(member.Stderr(), HasSubstr("interrupted")) << member.Describe();
  EXPECT_TRUE(testing::DeleteRecursively(admin(), barrier).ok());
}

TEST_F(CliOutputTest, BarrierCommandStatusWinsWhenLeavingTimesOut) {
  const std::string barrier = Path("leave-timeout");
  FakeParticipant(barrier, internal::BarrierMemberData("fake", 2));
  Process& member = Zkr({"barrier", "--path=" + barrier, "--count=2", "--id=m", "--timeout=1s",
                         "enter", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(member.Wait(absl::Seconds(30)), 7) << member.Describe();
  EXPECT_THAT(member.Stderr(), HasSubstr("leav")) << member.Describe();
  EXPECT_TRUE(testing::DeleteRecursively(admin(), barrier).ok());
}

// A CMD that succeeded does not hide the failed leave: its own code.
TEST_F(CliOutputTest, BarrierLeaveTimeoutAfterSuccessfulCommandExits3) {
  const std::string barrier = Path("leave-timeout-ok");
  FakeParticipant(barrier, internal::BarrierMemberData("fake", 2));
  Process& member = Zkr({"barrier", "--path=" + barrier, "--count=2", "--id=m", "--timeout=1s",
                         "enter", "--", "true"});
  EXPECT_EQ(member.Wait(absl::Seconds(30)), 3) << member.Describe();
  EXPECT_THAT(member.Stderr(), HasSubstr("leav")) << member.Describe();
  EXPECT_TRUE(testing::DeleteRecursively(admin(), barrier).ok());
}

// ---- item 13: plain output escapes control characters -------------------------

const char kHostileData[] = "a\nb\tc\x1b[31mred\x1b]0;title\x07 caf\xc3\xa9 \xff \xc2\x9b end\\";
const char kEscaped[] = "a\\nb\\tc\\x1b[31mred\\x1b]0;title\\x07 caf\xc3\xa9 \\xff \\u009b end\\\\";

TEST_F(CliOutputTest, GroupListEscapesMemberData) {
  const std::string group = Path("group-escape");
  Process& member = Zkr(testing::Concat(
      {"group", "--path=" + group, "--id=w1", std::string("--data=") + kHostileData, "join", "--"},
      StartedThenWait("joined", "release")));
  ASSERT_TRUE(WaitForFile("joined", member)) << member.Describe();
  Process& list = Zkr({"group", "--path=" + group, "list"});
  EXPECT_EQ(list.Wait(absl::Seconds(20)), 0) << list.Describe();
  EXPECT_EQ(list.Stdout(), absl::StrCat("w1\t", kEscaped, "\n")) << list.Describe();
  Touch("release");
  EXPECT_EQ(member.Wait(absl::Seconds(20)), 0) << member.Describe();
  ExpectEmptyAndDelete(group);
}

TEST_F(CliOutputTest, ElectWhoEscapesLeaderData) {
  const std::string election = Path("elect-escape");
  Process& leader = Zkr(testing::Concat(
      {"elect", "--path=" + election, "--id=boss", std::string("--data=") + kHostileData, "--"},
      StartedThenWait("leading", "release")));
  ASSERT_TRUE(WaitForFile("leading", leader)) << leader.Describe();
  Process& who = Zkr({"elect", "--path=" + election, "--who"});
  EXPECT_EQ(who.Wait(absl::Seconds(20)), 0) << who.Describe();
  EXPECT_EQ(who.Stdout(), absl::StrCat("boss\n", kEscaped, "\n")) << who.Describe();
  Touch("release");
  EXPECT_EQ(leader.Wait(absl::Seconds(20)), 0) << leader.Describe();
  ExpectEmptyAndDelete(election);
}

TEST_F(CliOutputTest, InspectEscapesNodeData) {
  const std::string lock = Path("inspect-escape");
  FakeParticipant(lock, kHostileData);
  Process& inspect = Zkr({"inspect", "--path=" + lock});
  EXPECT_EQ(inspect.Wait(absl::Seconds(20)), 0) << inspect.Describe();
  const std::string out = inspect.Stdout();
  EXPECT_FALSE(HasByte(out, '\x1b')) << out;
  EXPECT_FALSE(HasByte(out, '\x07')) << out;
  EXPECT_FALSE(HasByte(out, '\xff')) << out;
  EXPECT_THAT(out, HasSubstr(kEscaped)) << out;
  EXPECT_EQ(Lines(out).size(), 3u) << out;  // title, header, one participant
  EXPECT_TRUE(testing::DeleteRecursively(admin(), lock).ok());
}

// ---- item 14: group list --watch prints on change only --------------------------

TEST_F(CliOutputTest, GroupWatchOnAbsentPathPrintsTheEmptyListOnce) {
  const std::string group = Path("watch-absent");
  Process& watch = Zkr({"group", "--path=" + group, "list", "--watch"});
  // Its first listing is done once its exists watch is on the server (wchp
  // shows data watches). A join is then the first change; every list before
  // it has been printed once the member's list is (in order).
  ASSERT_NE(testing::SharedServer(), nullptr) << "needs the embedded server (wchp)";
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto watches = testing::SharedServer()->FourLetterWord("wchp");
        return (watches.ok() && absl::StrContains(*watches, group + "\n")) || watch.Exited();
      },
      absl::Seconds(20)))
      << watch.Describe();
  ExpectOneJoinPrintedOnce(watch, group);
}

// The group does not exist: the watcher keeps an exists watch on its path,
// which the server lists (wchp shows data watches only).
TEST_F(CliOutputTest, GroupWatchDoesNotPrintTheSameListAfterSessionLoss) {
  ASSERT_NE(testing::SharedServer(), nullptr) << "needs the embedded server behind a proxy";
  auto proxy = testing::TcpProxy::Start("127.0.0.1", testing::SharedServer()->client_port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const std::string group = Path("watch-loss");
  auto watched = [&] {
    auto watches = testing::SharedServer()->FourLetterWord("wchp");
    return watches.ok() && absl::StrContains(*watches, group + "\n");
  };
  Process& watch = ZkrRaw({"group", "--zk=" + (*proxy)->address(), "--path=" + group,
                           "--session_timeout=2s", "--verbose", "list", "--watch"});
  ASSERT_TRUE(WaitUntil([&] { return watched() || watch.Exited(); }, absl::Seconds(20)))
      << watch.Describe();
  // Cut off until the server expires the session (its watch goes); then a
  // new session lists the same (empty) group again.
  (*proxy)->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(WaitUntil([&] { return !watched(); }, absl::Seconds(30))) << watch.Describe();
  (*proxy)->SetMode(testing::TcpProxy::Mode::kPass);
  ASSERT_TRUE(WaitUntil(
      [&] { return absl::StrContains(watch.Stderr(), "CONNECTED (generation 2)") || watch.Exited(); },
      absl::Seconds(30)))
      << watch.Describe();
  // The new session has listed (and then set its watch): a join now is the
  // next change.
  ASSERT_TRUE(WaitUntil([&] { return watched() || watch.Exited(); }, absl::Seconds(20)))
      << watch.Describe();
  ExpectOneJoinPrintedOnce(watch, group);
}

// ---- item 15: inspect says what a path is ---------------------------------------

TEST_F(CliOutputTest, InspectOnAParentOfLocksSaysSoAndListsThem) {
  const std::string parent = Path("locks");
  FakeParticipant(parent + "/a", "");
  FakeParticipant(parent + "/b/c", "");
  Process& inspect = Zkr({"inspect", "--path=" + parent});
  EXPECT_EQ(inspect.Wait(absl::Seconds(20)), 1) << inspect.Describe();
  EXPECT_THAT(inspect.Stderr(), HasSubstr("not a lock")) << inspect.Describe();
  EXPECT_THAT(inspect.Stderr(), HasSubstr(parent + "/a\n")) << inspect.Describe();
  EXPECT_THAT(inspect.Stderr(), HasSubstr(parent + "/b/c\n")) << inspect.Describe();
  EXPECT_THAT(inspect.Stdout(), Not(HasSubstr("participant"))) << inspect.Describe();
  // An absent path is still an empty queue (nobody holds it).
  Process& absent = Zkr({"inspect", "--path=" + Path("no-such-lock")});
  EXPECT_EQ(absent.Wait(absl::Seconds(20)), 0) << absent.Describe();
  EXPECT_THAT(absent.Stdout(), HasSubstr("0 participant(s)")) << absent.Describe();
  EXPECT_TRUE(testing::DeleteRecursively(admin(), parent).ok());
}

TEST_F(CliOutputTest, InspectShowsDoubleBarrierMembersAsMembers) {
  const std::string barrier = Path("inspect-barrier");
  auto member = [&](const std::string& id) -> Process& {
    return Zkr(testing::Concat({"barrier", "--path=" + barrier, "--count=2", "--id=" + id,
                                "--timeout=60s", "enter", "--"},
                               StartedThenWait(id + ".in", "release")));
  };
  Process& a = member("alpha");
  Process& b = member("beta");
  ASSERT_TRUE(WaitForFile("alpha.in", a)) << a.Describe();
  ASSERT_TRUE(WaitForFile("beta.in", b)) << b.Describe();
  Process& inspect = Zkr({"inspect", "--path=" + barrier});
  EXPECT_EQ(inspect.Wait(absl::Seconds(20)), 0) << inspect.Describe();
  const std::string out = inspect.Stdout();
  EXPECT_THAT(out, HasSubstr("double barrier")) << out;
  EXPECT_THAT(out, Not(HasSubstr("HOLDS"))) << out;
  EXPECT_THAT(out, Not(HasSubstr("W-"))) << out;
  EXPECT_THAT(out, HasSubstr("alpha")) << out;
  EXPECT_THAT(out, HasSubstr("beta")) << out;
  Process& json = Zkr({"inspect", "--json", "--path=" + barrier});
  EXPECT_EQ(json.Wait(absl::Seconds(20)), 0) << json.Describe();
  EXPECT_THAT(json.Stdout(), HasSubstr("\"holds\":false")) << json.Describe();
  EXPECT_THAT(json.Stdout(), Not(HasSubstr("\"holds\":true"))) << json.Describe();
  Touch("release");
  EXPECT_EQ(a.Wait(absl::Seconds(20)), 0) << a.Describe();
  EXPECT_EQ(b.Wait(absl::Seconds(20)), 0) << b.Describe();
  ExpectEmptyAndDelete(barrier);
}

// ---- item 16 (barrier): ids as elect and group take them --------------------------

TEST_F(CliOutputTest, BarrierIdMayHoldASlashAndDefaultsToHostnamePid) {
  const std::string barrier = Path("barrier-id");
  Process& slash = Zkr({"barrier", "--path=" + barrier, "--count=1", "--id=a/b", "enter", "--",
                        "true"});
  EXPECT_EQ(slash.Wait(absl::Seconds(20)), 0) << slash.Describe();
  // The default id: <hostname>_<pid>, as elect's and group's. The member's
  // node holds it while CMD runs.
  Process& plain = Zkr(testing::Concat(
      {"barrier", "--path=" + barrier, "--count=1", "enter", "--"}, StartedThenWait("in", "release")));
  ASSERT_TRUE(WaitForFile("in", plain)) << plain.Describe();
  char host[256] = {0};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  std::string data;
  for (const std::string& child : Children(barrier)) {
    if (child == "ready") continue;
    auto read = admin().Get(barrier + "/" + child);
    if (read.ok()) data = *read;
  }
  EXPECT_TRUE(absl::StartsWith(data, absl::StrCat(host, "_", plain.pid())))
      << "member data: " << data;
  Touch("release");
  EXPECT_EQ(plain.Wait(absl::Seconds(20)), 0) << plain.Describe();
  ExpectEmptyAndDelete(barrier);
}

using CliWatchOutputTest = CliRunTest;

TEST_F(CliWatchOutputTest, GroupListWatchPrintsOnChangeOnly) {
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
  EXPECT_EQ(w.Wait(absl::Seconds(20)), 128 + SIGTERM) << w.Describe();
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
TEST_F(CliWatchOutputTest, GroupListWatchShowsCurrentDataAtTheNextJoin) {
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

// elect --who --watch prints at every change of leader only: not the same
// leader twice when only what plain output does not show changed (the
// leader's takeover mark), nor after the connection drops and comes back.
// The candidate's session goes through a proxy that delays each chunk by
// 300 ms, so the watcher sees the candidate's node before its takeover
// write, every time.
TEST_F(CliWatchOutputTest, ElectWhoWatchPrintsOnChangeOnly) {
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
  EXPECT_EQ(w.Wait(absl::Seconds(20)), 128 + SIGTERM) << w.Describe();
  ea->reset();
  other.reset();
  ExpectEmptyAndDelete(election);
}

TEST_F(CliWatchOutputTest, InspectShapes) {
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
  EXPECT_EQ(m.Wait(absl::Seconds(20)), 128 + SIGTERM) << m.Describe();
  Touch("release");
  EXPECT_EQ(h1.Wait(absl::Seconds(20)), 0);
  EXPECT_EQ(h2.Wait(absl::Seconds(20)), 0);
  EXPECT_TRUE(WaitForChildren(dbl, 0));
  (void)testing::DeleteRecursively(admin(), dbl);
  (void)testing::DeleteRecursively(admin(), parent);
  (void)testing::DeleteRecursively(admin(), empty);
}

}  // namespace
}  // namespace zkr
