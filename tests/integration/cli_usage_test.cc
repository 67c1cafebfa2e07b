// zkr's usage conventions (issue 32, items 7, 8, 9 and 16), end to end with
// the real binary: bad flag values, a mistyped subcommand, flags of another
// subcommand (or mode) and conflicting flags all exit 2 with a short message
// naming them; and `zkr <sub> --help`, the man page and what zkr accepts agree
// on every subcommand's flags, their defaults and its exit codes.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::CliTest;
using testing::FileExists;
using testing::Lines;
using testing::Process;
using testing::ReadFile;

// Nothing here needs a server to answer: a usage error comes first.
const std::string kNoServer = "--zk=127.0.0.1:1";

// ---- item 7: bad flag values ---------------------------------------------------

TEST_F(CliTest, BadFlagValuesExit2NamingTheFlagAndTheValue) {
  const std::string path = Path("values");
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  const Case cases[] = {
      {{"semaphore", "--path=" + path, "--leases=abc", "--", "true"}, "--leases=abc"},
      {{"semaphore", "--path=" + path, "--leases=99999999999", "--", "true"},
       "--leases=99999999999"},
      {{"semaphore", "--path=" + path, "--leases=2", "--take=1.5", "--", "true"}, "--take=1.5"},
      {{"barrier", "--path=" + path, "--count=abc", "enter", "--", "true"}, "--count=abc"},
      {{"lock", "--path=" + path, "--nonblock=maybe", "--", "true"}, "--nonblock=maybe"},
      {{"elect", "--path=" + path, "--who=perhaps"}, "--who=perhaps"},
      {{"semaphore", "--path=" + path, "--", "true", "--leases"}, "--leases"},  // after --: CMD's
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.begin() + 1, kNoServer);
    Process& p = ZkrRaw(args);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    EXPECT_THAT(p.Stderr(), HasSubstr(c.named)) << p.Describe();
    EXPECT_THAT(p.Stderr(), Not(HasSubstr("ERROR: "))) << "gflags' own message: " << p.Describe();
    EXPECT_LE(Lines(p.Stderr()).size(), 2u) << p.Describe();
  }
  // A flag that needs a value and has none.
  Process& bare = ZkrRaw({"semaphore", kNoServer, "--path=" + path, "--leases"});
  EXPECT_EQ(bare.Wait(absl::Seconds(20)), 2) << bare.Describe();
  EXPECT_THAT(bare.Stderr(), HasSubstr("--leases")) << bare.Describe();
}

// ---- item 8: a mistyped subcommand -----------------------------------------------

TEST_F(CliTest, AMistypedSubcommandIsNamedWithTheNearestOne) {
  const std::string ran = File("ran");
  struct Case {
    std::vector<std::string> args;
    std::string word;
    std::string suggestion;  // empty: none is near
  };
  const Case cases[] = {
      {{"lokc", "--path=/x", "--", "touch", ran}, "\"lokc\"", "lock"},
      {{"--path=/x", "semaphor", "--leases=2", "--", "touch", ran}, "\"semaphor\"", "semaphore"},
      {{"elcet", "--path=/x", "--who"}, "\"elcet\"", "elect"},
      {{"--path", "/x", "grop", "list"}, "\"grop\"", "group"},
      {{"inspcet", "--path=/x"}, "\"inspcet\"", "inspect"},
      {{"frobnicate", "--path=/x"}, "\"frobnicate\"", ""},
  };
  for (const Case& c : cases) {
    Process& p = ZkrRaw(c.args);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    const std::string err = p.Stderr();
    EXPECT_THAT(err, HasSubstr(c.word)) << p.Describe();
    EXPECT_THAT(err, Not(HasSubstr("no subcommand given"))) << p.Describe();
    if (!c.suggestion.empty()) {
      EXPECT_THAT(err, HasSubstr(absl::StrCat("did you mean \"", c.suggestion, "\"")))
          << p.Describe();
    } else {
      EXPECT_THAT(err, Not(HasSubstr("did you mean"))) << p.Describe();
    }
    EXPECT_LE(Lines(err).size(), 2u) << "a short message, not the whole usage: " << p.Describe();
    EXPECT_EQ(p.Stdout(), "") << p.Describe();
  }
  EXPECT_FALSE(FileExists(ran));
  // No subcommand at all is still said so (and the usage printed).
  Process& none = ZkrRaw({"--path=/x"});
  EXPECT_EQ(none.Wait(absl::Seconds(20)), 2) << none.Describe();
  EXPECT_THAT(none.Stderr(), HasSubstr("no subcommand given")) << none.Describe();
}

// ---- item 9: flags of other subcommands, conflicting flags -------------------------

TEST_F(CliTest, FlagsOfOtherSubcommandsOrModesAndConflictsAreRefused) {
  const std::string path = Path("foreign");
  const std::string ran = File("ran");
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> named;
  };
  const Case cases[] = {
      {{"lock", "--path=" + path, "--leases=3", "--quick", "--json", "--who", "--", "touch", ran},
       {"--leases", "--quick", "--json", "--who"}},
      {{"lock", "--path=" + path, "--timeout=1s", "--nonblock", "--", "touch", ran},
       {"--timeout", "--nonblock"}},
      {{"semaphore", "--path=" + path, "--leases=2", "--nonblock", "--timeout=0", "--", "touch",
        ran},
       {"--timeout", "--nonblock"}},
      {{"group", "--path=" + path, "--data=x", "list"}, {"--data"}},
      {{"group", "--path=" + path, "--json", "join", "--", "touch", ran}, {"--json"}},
      {{"elect", "--path=" + path, "--who", "--id=me"}, {"--id"}},
      {{"elect", "--path=" + path, "--watch", "--", "touch", ran}, {"--watch"}},
      {{"barrier", "--path=" + path, "--count=2", "set"}, {"--count"}},
      {{"barrier", "--path=" + path, "--timeout=1s", "remove"}, {"--timeout"}},
      {{"revoke", "--path=" + path, "--mode=read"}, {"--mode"}},
      {{"inspect", "--path=" + path, "--stats"}, {"--stats"}},
      {{"demo", "--auth=digest:a:b"}, {"--auth"}},
      {{"bench", "--path=" + path}, {"--path"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.begin() + 1, kNoServer);
    Process& p = ZkrRaw(args);
    EXPECT_EQ(p.Wait(absl::Seconds(20)), 2) << p.Describe();
    for (const std::string& flag : c.named) {
      EXPECT_THAT(p.Stderr(), HasSubstr(flag)) << p.Describe();
    }
    EXPECT_LE(Lines(p.Stderr()).size(), 2u) << p.Describe();
  }
  EXPECT_FALSE(FileExists(ran)) << "a refused command ran CMD";
  // --nonblock=false does not conflict with --timeout; dashes are underscores.
  Process& fine = Zkr({"lock", "--path=" + path, "--timeout=5s", "--nonblock=false",
                       "--on-lost=ignore", "--", "touch", ran});
  EXPECT_EQ(fine.Wait(absl::Seconds(30)), 0) << fine.Describe();
  EXPECT_TRUE(FileExists(ran));
  ExpectEmptyAndDelete(path);
}

// ---- item 16: help, man page and behaviour agree -----------------------------------

// A subcommand and one of its modes (elect: campaign | --who; group:
// join | list; barrier: set | remove | wait | enter; the others: "").
using Taker = std::pair<std::string, std::string>;

const std::map<std::string, std::vector<std::string>>& Modes() {
  static const auto* modes = new std::map<std::string, std::vector<std::string>>{
      {"lock", {""}},
      {"semaphore", {""}},
      {"elect", {"campaign", "--who"}},
      {"group", {"join", "list"}},
      {"barrier", {"set", "remove", "wait", "enter"}},
      {"revoke", {""}},
      {"inspect", {""}},
      {"ls", {""}},
      {"demo", {""}},
      {"bench", {""}}};
  return *modes;
}

// "lock, semaphore, elect campaign, barrier wait/enter" or "every subcommand".
std::set<Taker> ParseTakers(const std::string& text) {
  std::set<Taker> takers;
  if (text == "every subcommand") {
    for (const auto& [sub, modes] : Modes()) {
      for (const std::string& mode : modes) takers.insert({sub, mode});
    }
    return takers;
  }
  for (absl::string_view item : absl::StrSplit(text, ", ")) {
    const std::vector<std::string> words = absl::StrSplit(item, absl::MaxSplits(' ', 1));
    auto known = Modes().find(words[0]);
    if (known == Modes().end()) {
      ADD_FAILURE() << "\"" << item << "\" names no subcommand (in \"" << text << "\")";
      continue;
    }
    if (words.size() == 1) {
      for (const std::string& mode : known->second) takers.insert({words[0], mode});
      continue;
    }
    for (const std::string& mode : std::vector<std::string>(absl::StrSplit(words[1], '/'))) {
      if (std::find(known->second.begin(), known->second.end(), mode) == known->second.end()) {
        ADD_FAILURE() << "\"" << item << "\" names no mode of zkr " << words[0];
      }
      takers.insert({words[0], mode});
    }
  }
  return takers;
}

// The "(default X)" in a flag's text; empty if none.
std::string DefaultIn(const std::string& text) {
  const size_t at = text.rfind("(default ");
  if (at == std::string::npos) return "";
  const size_t end = text.find(')', at);
  return text.substr(at + 9, end - at - 9);
}

std::string FlagName(absl::string_view text) {
  const size_t at = text.find("--");
  if (at == absl::string_view::npos) return "";
  size_t end = at + 2;
  while (end < text.size() && (std::islower(static_cast<unsigned char>(text[end])) ||
                               std::isdigit(static_cast<unsigned char>(text[end])) ||
                               text[end] == '_')) {
    ++end;
  }
  return std::string(text.substr(at + 2, end - at - 2));
}

// Every "--flag" in `text`.
std::set<std::string> FlagsIn(const std::string& text) {
  std::set<std::string> flags;
  for (size_t at = text.find("--"); at != std::string::npos; at = text.find("--", at + 2)) {
    const std::string name = FlagName(absl::string_view(text).substr(at));
    if (!name.empty()) flags.insert(name);
  }
  return flags;
}

std::pair<std::string, std::string> SplitTakers(const std::string& text);

struct FlagDoc {
  bool is_bool = false;
  std::set<Taker> takers;
  std::map<Taker, std::string> defaults;  // per taker: one flag may mean two things
  std::string default_value;              // in a subcommand's --help
};
// Adds an entry "TAKERS: text (default X)" to `flag`.
void AddEntry(const std::string& entry, FlagDoc* flag, const std::string& where) {
  const auto [takers, text] = SplitTakers(entry);
  EXPECT_FALSE(takers.empty()) << where << ": names no subcommand: " << entry;
  for (const Taker& t : ParseTakers(takers)) {
    EXPECT_TRUE(flag->takers.insert(t).second)
        << where << ": " << t.first << " " << t.second << " twice: " << entry;
    flag->defaults[t] = DefaultIn(text);
  }
}
// The default `flag` has in subcommand `sub`.
std::string DefaultFor(const FlagDoc& flag, const std::string& sub) {
  for (const auto& [taker, value] : flag.defaults) {
    if (taker.first == sub) return value;
  }
  return "";
}
struct Doc {
  std::map<std::string, FlagDoc> flags;
  std::map<std::string, std::set<Taker>> exit_codes;
  std::set<std::string> synopsis_flags;
};

// `zkr [sub] --help`: sections start with an unindented "Heading:" line.
std::map<std::string, std::vector<std::string>> HelpSections(const std::string& text) {
  std::map<std::string, std::vector<std::string>> sections;
  std::string current;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!line.empty() && line[0] != ' ' && absl::EndsWith(line, ":")) {
      current = std::string(line.substr(0, line.size() - 1));
      continue;
    }
    if (!current.empty()) sections[current].push_back(std::string(line));
  }
  return sections;
}

// Entries of a help section: an entry starts with "  <key>" (two spaces),
// continuation lines are indented further.
std::vector<std::pair<std::string, std::string>> HelpEntries(const std::vector<std::string>& lines) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const std::string& line : lines) {
    if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ') {
      const size_t key_end = line.find("  ", 2);
      entries.push_back({line.substr(2, key_end == std::string::npos ? key_end : key_end - 2),
                         key_end == std::string::npos
                             ? ""
                             : std::string(absl::StripAsciiWhitespace(line.substr(key_end)))});
    } else if (!entries.empty() && !absl::StripAsciiWhitespace(line).empty()) {
      std::string& text = entries.back().second;
      text = absl::StrCat(text, text.empty() ? "" : " ", absl::StripAsciiWhitespace(line));
    }
  }
  return entries;
}

// The takers prefix of "lock, semaphore: text" (up to the first ": ").
std::pair<std::string, std::string> SplitTakers(const std::string& text) {
  const size_t colon = text.find(": ");
  if (colon == std::string::npos) return {"", text};
  return {text.substr(0, colon), text.substr(colon + 2)};
}

// zkr.1, with roff's escapes and font changes removed, per .SH section.
std::map<std::string, std::vector<std::string>> ManSections(const std::string& page) {
  const std::string plain = absl::StrReplaceAll(
      page, {{"\\-", "-"}, {"\\fB", ""}, {"\\fI", ""}, {"\\fR", ""}, {"\\fP", ""}, {"\\(em", "-"},
             {"\\&", ""}, {"\\e", "\\"}});
  std::map<std::string, std::vector<std::string>> sections;
  std::string current;
  for (absl::string_view line : absl::StrSplit(plain, '\n')) {
    if (absl::StartsWith(line, ".SH ")) {
      current = std::string(absl::StripAsciiWhitespace(line.substr(4)));
      current = absl::StrReplaceAll(current, {{"\"", ""}});
      continue;
    }
    sections[current].push_back(std::string(line));
  }
  return sections;
}

// A man line's words without its macro (".BI --grace= T" -> "--grace= T").
std::string ManText(const std::string& line) {
  if (line.empty() || line[0] != '.') return line;
  const size_t space = line.find(' ');
  if (space == std::string::npos) return "";
  std::string text = line.substr(space + 1);
  // .B/.BI/.BR alternate fonts between words: join them.
  if (absl::StartsWith(line, ".BI ") || absl::StartsWith(line, ".BR ") ||
      absl::StartsWith(line, ".IR ") || absl::StartsWith(line, ".RB ")) {
    text = absl::StrReplaceAll(text, {{" ", ""}, {"\"", ""}});
  }
  return absl::StrReplaceAll(text, {{"\"", ""}});
}

// The .TP entries of a man section: tag line and body lines, where ".br"
// splits the body into rows.
std::vector<std::pair<std::string, std::vector<std::string>>> ManEntries(
    const std::vector<std::string>& lines) {
  std::vector<std::pair<std::string, std::vector<std::string>>> entries;
  bool tag_next = false;
  for (const std::string& line : lines) {
    if (line == ".TP") {
      tag_next = true;
      continue;
    }
    if (tag_next) {
      entries.push_back({ManText(line), {""}});
      tag_next = false;
      continue;
    }
    if (entries.empty()) continue;
    if (line == ".PP" || absl::StartsWith(line, ".RS")) {
      entries.back().second.push_back("");  // the entry's text ended
      continue;
    }
    if (line == ".br") {
      entries.back().second.push_back("");
      continue;
    }
    const std::string text = ManText(line);
    if (text.empty() || absl::StartsWith(line, ".EX") || absl::StartsWith(line, ".EE")) continue;
    std::string& row = entries.back().second.back();
    row = absl::StrCat(row, row.empty() ? "" : " ", text);
  }
  return entries;
}

const std::set<std::string>& GlobalFlags() {
  static const auto* global =
      new std::set<std::string>{"zk",  "session_timeout", "auth",      "auth_file",
                                "acl", "verbose",         "quiet",     "client_log"};
  return *global;
}

class CliUsageTest : public CliTest {
 protected:
  std::string Help(const std::vector<std::string>& args) {
    Process& help = ZkrRaw(args);
    EXPECT_EQ(help.Wait(absl::Seconds(20)), 0) << help.Describe();
    EXPECT_EQ(help.Stderr(), "") << help.Describe();
    return help.Stdout();
  }

  // What `zkr SUB --help` says about SUB.
  Doc SubHelp(const std::string& sub) {
    Doc doc;
    const std::string text = Help({sub, "--help"});
    auto sections = HelpSections(text);
    EXPECT_TRUE(sections.count("Usage") && sections.count("Flags") && sections.count("Exit codes"))
        << "zkr " << sub << " --help:\n" << text;
    for (const auto& [key, entry] : HelpEntries(sections["Flags"])) {
      const std::string name = FlagName(key);
      EXPECT_FALSE(name.empty()) << "zkr " << sub << " --help: " << key;
      EXPECT_EQ(doc.flags.count(name), 0u) << "zkr " << sub << " --help lists --" << name << " twice";
      doc.flags[name].default_value = DefaultIn(entry);
    }
    for (const auto& [code, entry] : HelpEntries(sections["Exit codes"])) {
      doc.exit_codes[code].insert({sub, ""});
    }
    doc.synopsis_flags = FlagsIn(absl::StrJoin(sections["Usage"], "\n"));
    return doc;
  }

  // What the man page says: every flag's takers and default, every exit
  // code's takers, every subcommand's synopsis flags.
  Doc Man(std::map<std::string, std::set<std::string>>* synopsis) {
    const char* page = std::getenv("ZKR_MAN_PAGE");
    EXPECT_TRUE(page != nullptr && *page != '\0') << "ZKR_MAN_PAGE must name zkr.1";
    Doc doc;
    if (page == nullptr) return doc;
    auto sections = ManSections(ReadFile(page));
    for (const auto& [tag, rows] : ManEntries(sections["OPTIONS"])) {
      const std::string name = FlagName(tag);
      if (name.empty() || name == "help" || name == "version") continue;
      AddEntry(rows[0], &doc.flags[name], "zkr.1 OPTIONS --" + name);
    }
    for (const auto& [tag, rows] : ManEntries(sections["EXIT STATUS"])) {
      for (const std::string& row : rows) {
        if (row.empty()) continue;
        const auto [takers, text] = SplitTakers(row);
        EXPECT_FALSE(takers.empty()) << "zkr.1 EXIT STATUS " << tag << ": " << row;
        for (const Taker& t : ParseTakers(takers)) doc.exit_codes[tag].insert(t);
      }
    }
    // SYNOPSIS: ".B zkr SUB" starts a subcommand's line, ".br" ends it.
    std::string sub;
    for (const std::string& line : sections["SYNOPSIS"]) {
      if (absl::StartsWith(line, ".B zkr ")) sub = std::string(absl::StripAsciiWhitespace(line.substr(7)));
      if (line == ".br") sub.clear();
      if (!sub.empty()) {
        for (const std::string& flag : FlagsIn(ManText(line))) (*synopsis)[sub].insert(flag);
      }
    }
    return doc;
  }
};

TEST_F(CliUsageTest, HelpManPageAndBehaviourAgreeOnFlagsDefaultsAndExitCodes) {
  std::map<std::string, std::set<std::string>> man_synopsis;
  const Doc man = Man(&man_synopsis);
  ASSERT_GT(man.flags.size(), 25u);
  // `zkr --help` lists every flag with the subcommands (and modes) taking it.
  Doc top;
  {
    auto sections = HelpSections(Help({"--help"}));
    for (const auto& [key, entry] : HelpEntries(sections["Flags"])) {
      FlagDoc& flag = top.flags[FlagName(key)];
      flag.is_bool = !absl::StrContains(key, "=");
      AddEntry(entry, &flag, "zkr --help --" + FlagName(key));
    }
  }
  for (const auto& [name, flag] : man.flags) {
    ASSERT_TRUE(top.flags.count(name)) << "zkr --help does not list --" << name;
    EXPECT_EQ(top.flags.at(name).takers, flag.takers) << "--" << name << ": zkr --help and zkr.1";
    EXPECT_EQ(top.flags.at(name).defaults, flag.defaults) << "--" << name << "'s defaults";
  }
  for (const auto& [name, flag] : top.flags) {
    EXPECT_TRUE(man.flags.count(name)) << "zkr.1 OPTIONS does not list --" << name;
  }

  for (const auto& [sub, modes] : Modes()) {
    const Doc help = SubHelp(sub);
    // The flags, and their defaults.
    std::set<std::string> man_flags;
    for (const auto& [name, flag] : man.flags) {
      for (const Taker& t : flag.takers) {
        if (t.first == sub) man_flags.insert(name);
      }
    }
    std::set<std::string> help_flags;
    for (const auto& [name, flag] : help.flags) {
      help_flags.insert(name);
      if (man.flags.count(name)) {
        EXPECT_EQ(flag.default_value, DefaultFor(man.flags.at(name), sub))
            << "zkr " << sub << " --help and zkr.1 disagree on --" << name << "'s default";
      }
    }
    EXPECT_EQ(help_flags, man_flags) << "zkr " << sub << " --help and zkr.1 OPTIONS";
    // The synopses name the subcommand's own flags, all of them.
    for (const auto& [where, named] :
         {std::pair<std::string, std::set<std::string>>{"--help", help.synopsis_flags},
          {"zkr.1 SYNOPSIS", man_synopsis[sub]}}) {
      for (const std::string& name : named) {
        EXPECT_TRUE(help_flags.count(name)) << "zkr " << sub << ": " << where << " names --" << name;
      }
      for (const std::string& name : help_flags) {
        EXPECT_TRUE(GlobalFlags().count(name) || named.count(name))
            << "zkr " << sub << ": " << where << " omits --" << name;
      }
    }
    // The exit codes.
    std::set<std::string> help_codes, man_codes;
    for (const auto& [code, takers] : help.exit_codes) help_codes.insert(code);
    for (const auto& [code, takers] : man.exit_codes) {
      for (const Taker& t : takers) {
        if (t.first == sub) man_codes.insert(code);
      }
    }
    EXPECT_EQ(help_codes, man_codes) << "zkr " << sub << ": exit codes in --help and zkr.1";
    EXPECT_TRUE(help_codes.count("2")) << sub;
  }

  // Behaviour: each subcommand in each mode refuses every flag the man page
  // does not give it (exit 2, naming it), before doing anything.
  for (const auto& [sub, modes] : Modes()) {
    for (const std::string& mode : modes) {
      std::vector<std::pair<std::string, Process*>> runs;
      for (const auto& [name, flag] : man.flags) {
        if (flag.takers.count({sub, mode})) continue;
        std::vector<std::string> args = {sub};
        if (sub != "demo" && sub != "bench") args.push_back("--path=/zkr-usage-test");
        if (man.flags.at("zk").takers.count({sub, mode})) args.push_back(kNoServer);
        // A bool is "--flag" in the help's key, others "--flag=VALUE".
        args.push_back(absl::StrCat("--", name, top.flags.at(name).is_bool ? "" : "=2"));
        if (mode == "--who") args.push_back("--who");
        if (mode == "campaign" || sub == "lock" || sub == "semaphore") {
          args.insert(args.end(), {"--", "true"});
        }
        if (sub == "group" || sub == "barrier") args.push_back(mode);
        if (mode == "join" || mode == "enter") args.insert(args.end(), {"--", "true"});
        runs.push_back({name, &ZkrRaw(args)});
      }
      for (auto& [name, p] : runs) {
        EXPECT_EQ(p->Wait(absl::Seconds(20)), 2)
            << "zkr " << sub << " " << mode << " accepted --" << name << ": " << p->Describe();
        EXPECT_THAT(p->Stderr(), HasSubstr("--" + name)) << p->Describe();
      }
    }
  }
}

// The documented default ids (HOSTNAME_PID) are what zkr uses.
TEST_F(CliUsageTest, DefaultIdsAreHostnameAndPid) {
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  const std::string election = Path("election");
  const std::string group = Path("group");
  Process& leader = Zkr({"elect", "--path=" + election, "--", "sh", "-c",
                         "touch " + File("led") + "; while [ ! -e " + File("stop") +
                             " ]; do sleep 0.05; done"});
  Process& member = Zkr({"group", "--path=" + group, "join", "--", "sh", "-c",
                         "touch " + File("joined") + "; while [ ! -e " + File("stop") +
                             " ]; do sleep 0.05; done"});
  ASSERT_TRUE(WaitForFile("led", leader)) << leader.Describe();
  ASSERT_TRUE(WaitForFile("joined", member)) << member.Describe();
  Process& who = Zkr({"elect", "--path=" + election, "--who"});
  EXPECT_EQ(who.Wait(absl::Seconds(20)), 0) << who.Describe();
  EXPECT_EQ(Lines(who.Stdout()).at(0), absl::StrCat(host, "_", leader.pid())) << who.Describe();
  Process& list = Zkr({"group", "--path=" + group, "list"});
  EXPECT_EQ(list.Wait(absl::Seconds(20)), 0) << list.Describe();
  EXPECT_THAT(list.Stdout(), HasSubstr(absl::StrCat(host, "_", member.pid(), "\t")))
      << list.Describe();
  Touch("stop");
  EXPECT_EQ(leader.Wait(absl::Seconds(20)), 0) << leader.Describe();
  EXPECT_EQ(member.Wait(absl::Seconds(20)), 0) << member.Describe();
  ExpectEmptyAndDelete(election);
  ExpectEmptyAndDelete(group);
}

// The man page renders cleanly: no "[--CMD" (a lost space), no " ," (a
// lost font pair), and demo's help and page name what the tour shows.
TEST_F(CliUsageTest, TheManPageRendersAndDemoNamesItsTour) {
  const char* page = std::getenv("ZKR_MAN_PAGE");
  ASSERT_TRUE(page != nullptr && *page != '\0');
  processes_.push_back(std::make_unique<Process>(
      std::vector<std::string>{"sh", "-c",
                               absl::StrCat("MANPAGER=cat MANWIDTH=200 man -l ",
                                            testing::ShQuote(page), " | col -b")},
      File("man.out"), File("man.err")));
  Process& rendered = *processes_.back();
  ASSERT_EQ(rendered.Wait(absl::Seconds(30)), 0) << rendered.Describe();
  const std::string text = rendered.Stdout();
  EXPECT_THAT(text, HasSubstr("EXIT STATUS"));
  EXPECT_THAT(text, Not(HasSubstr("--CMD")));
  EXPECT_THAT(text, Not(HasSubstr(" ,")));
  EXPECT_THAT(text, HasSubstr("[-- CMD ARGS...]"));
  const std::string demo = Help({"demo", "--help"});
  for (const char* shown : {"session", "read/write", "ledger", "semaphore", "leader"}) {
    EXPECT_THAT(demo, HasSubstr(shown)) << "zkr demo --help omits the tour's " << shown;
  }
}

}  // namespace
}  // namespace zkr
