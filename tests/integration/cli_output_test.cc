// zkr's output and exit status (issue 32 items 11, 13-16), end to end against
// a real server: CMD's status survives a failed barrier leave, plain output
// escapes what node data holds, `group list --watch` prints on change only,
// `inspect` says what a path is, and barrier ids follow elect's rules.
#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
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
    EXPECT_EQ(watch.Wait(absl::Seconds(20)), 130) << watch.Describe();
    ExpectEmptyAndDelete(group);
  }
};

bool HasByte(const std::string& text, char byte) { return text.find(byte) != std::string::npos; }

// ---- item 11: CMD's status wins once CMD has run ------------------------------

// The fake member stays: our member leaves (deletes its node) and waits for
// it. Told to stop then, zkr exits with CMD's 7, not 130.
TEST_F(CliOutputTest, BarrierCommandStatusWinsWhenLeavingIsInterrupted) {
  const std::string barrier = Path("leave-int");
  const std::string fake = FakeParticipant(barrier, "fake");
  Process& member = Zkr({"barrier", "--path=" + barrier, "--count=2", "--id=m", "--timeout=60s",
                         "enter", "--", "sh", "-c", "exit 7"});
  // Our node came (entered), and went again (leaving): only the fake is left.
  bool seen = false;
  EXPECT_TRUE(WaitUntil(
      [&] {
        seen = seen || Children(barrier).size() >= 3;  // fake, ours, ready
        return (seen && Children(barrier) == std::vector<std::string>{Basename(fake), "ready"}) ||
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
  FakeParticipant(barrier, "fake");
  Process& member = Zkr({"barrier", "--path=" + barrier, "--count=2", "--id=m", "--timeout=1s",
                         "enter", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(member.Wait(absl::Seconds(30)), 7) << member.Describe();
  EXPECT_THAT(member.Stderr(), HasSubstr("leav")) << member.Describe();
  EXPECT_TRUE(testing::DeleteRecursively(admin(), barrier).ok());
}

// A CMD that succeeded does not hide the failed leave: its own code.
TEST_F(CliOutputTest, BarrierLeaveTimeoutAfterSuccessfulCommandExits3) {
  const std::string barrier = Path("leave-timeout-ok");
  FakeParticipant(barrier, "fake");
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

}  // namespace
}  // namespace zkr
