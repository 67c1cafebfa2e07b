// zkr's output of what other clients wrote, end to end: control bytes, DEL,
// C1 controls and invalid UTF-8 in node data are escaped in plain output, and
// every --json line parses whatever the nodes hold.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
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
#include "tests/support/cli_run_fixture.h"
#include "tests/support/json_reader.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::CliRunTest;
using testing::Json;
using testing::JsonReader;
using testing::Lines;
using testing::Process;
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

using CliEscapingTest = CliRunTest;

TEST_F(CliEscapingTest, OtherClientsBytesAreEscapedAndJsonParses) {
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

  // A lock holder with a nasty purpose (on one line: a newline is refused)
  // and a nasty revocation reason.
  const std::string purpose = "p\rq\x1b[31m\x7f\xc2\x9b\xff";
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

  // The watches: the first print, then stop them (SIGTERM: exit 143).
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
    EXPECT_EQ(w.Wait(absl::Seconds(20)), 128 + SIGTERM) << w.Describe();
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
TEST_F(CliEscapingTest, JsonOutputEscapesC1ControlsAndDel) {
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

TEST_F(CliEscapingTest, InspectJsonParsesWhateverTheNodesHold) {
  const std::string lock = Path("json");
  // Data another client wrote: not UTF-8, control characters, quotes.
  Process& holder = Holder(lock, {std::string("--purpose=caf\xe9 \x01\x7f \"q\" \\ \xf0\x9f\x92")});
  ASSERT_TRUE(WaitForFile("held", holder)) << holder.Describe();
  Process& json = Zkr({"inspect", "--path=" + lock, "--json"});
  ASSERT_EQ(json.Wait(absl::Seconds(20)), 0) << json.Describe();
  std::optional<Json> parsed = JsonReader::Parse(json.Stdout());
  ASSERT_TRUE(parsed.has_value()) << "not JSON: " << json.Stdout();
  const Json* entries = parsed->Get("entries");
  ASSERT_NE(entries, nullptr);
  ASSERT_THAT(entries->items, SizeIs(1));
  const Json* data = entries->items[0].Get("data");
  ASSERT_NE(data, nullptr);
  EXPECT_THAT(data->string, HasSubstr("caf\xef\xbf\xbd \x01\x7f \"q\" \\ \xef\xbf\xbd"))
      << "each invalid byte sequence becomes U+FFFD; the rest is kept";
  Touch("release");
  EXPECT_EQ(holder.Wait(absl::Seconds(20)), 0) << holder.Describe();
  // An election id is printed by --who and listed by inspect: it must be text.
  Process& elect = Zkr({"elect", "--path=" + Path("json-elect"), std::string("--id=caf\xe9"),
                        "--", "true"});
  EXPECT_EQ(elect.Wait(absl::Seconds(20)), 2) << elect.Describe();
  EXPECT_THAT(elect.Stderr(), HasSubstr("--id")) << elect.Describe();
  ExpectEmptyAndDelete(lock);
}

}  // namespace
}  // namespace zkr
