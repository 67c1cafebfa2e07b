// zkr's flags: one table says, for each flag, which subcommands (and which
// of their modes) take it and what `--help` says about it; gflags holds its
// type and default. `zkr [SUB] --help` is generated from it, the command line
// is checked against it, and tests/integration/cli_usage_test.cc checks the
// man page (tools/zkr/zkr.1) against `--help`. Likewise the exit codes.
#ifndef ZKRECIPES_TOOLS_ZKR_FLAGS_H_
#define ZKRECIPES_TOOLS_ZKR_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace zkr {
namespace cli {

// A subcommand's modes; a flag or an exit code may belong to some of them.
// elect: "campaign" (-- CMD) | "--who"; group: join | list; barrier: set |
// remove | wait | enter; the others have one mode, "". A mode "--F" is
// chosen by the bool flag F (then the other mode is the default); the
// others by an action word. To add one: here, in ModesOf(), in the rows'
// takers, and in cli_usage_test's Modes().
const std::vector<std::string>& ModesOf(absl::string_view sub);
// Every subcommand, in --help's order.
const std::vector<std::string>& SubcommandNames();

// "Takers" name subcommands and modes: "lock semaphore elect:campaign
// barrier:wait,enter" (a bare name: all of its modes); "*": every subcommand.
struct FlagRow {
  const char* name;    // gflags' name
  const char* value;   // what --help shows after '=' ("T"); "" for a bool
  const char* takers;
  const char* text;
  // Shown as "(default X)": nullptr = gflags' default (none if empty or
  // false); "" = none; else this text (a default zkr computes).
  const char* default_text = nullptr;
  // The environment variable that sets it when the command line does not
  // (command line, then environment, then default); nullptr: none.
  const char* env = nullptr;
  // The value of the flag given bare ("--wait"), for a flag that is not a
  // bool; nullptr: it needs one ("--timeout=5s" or "--timeout 5s").
  const char* bare = nullptr;
};
const std::vector<FlagRow>& FlagRows();

// flock's short flags: "-x" sets --mode=exclusive; one without a value
// ("-w 5", "-w5") takes the next word or the rest of its own. Bool ones can
// be bundled ("-xn").
struct ShortFlag {
  char letter;
  const char* name;   // the long flag it sets
  const char* value;  // what it sets it to; nullptr: takes a value
};
const std::vector<ShortFlag>& ShortFlags();

struct ExitRow {
  const char* code;  // "3", "128+N"
  const char* takers;
  const char* text;
};
const std::vector<ExitRow>& ExitRows();

// Whether `takers` includes `sub` in `mode` ("": in any of its modes).
bool Takes(absl::string_view takers, absl::string_view sub, absl::string_view mode);

// The command line after the subcommand's name was taken out.
struct CommandLine {
  std::vector<std::string> given;    // flags set, by gflags name, in order
  std::vector<std::string> args;     // words that are not flags (barrier/group actions)
  std::vector<std::string> command;  // after "--"
  std::vector<std::string> paths;    // every --path, in order (gflags keeps the last)
};
// Sets each flag with gflags; InvalidArgument naming an unknown flag, or a
// flag and a value gflags refuses. `sub` only names it in messages. Short
// flags are given by their long names in `given`.
absl::StatusOr<CommandLine> ParseCommandLine(absl::string_view sub,
                                             const std::vector<std::string>& argv);
// The mode `args` and the flags select ("" when the action is unknown:
// the subcommand says so).
std::string ModeOf(absl::string_view sub, const std::vector<std::string>& args);
// InvalidArgument naming every flag given that `sub` in `mode` does not
// take, or two flags given that exclude each other.
absl::Status CheckFlagsTaken(absl::string_view sub, absl::string_view mode,
                             const std::vector<std::string>& given);
// Sets each flag `sub` in `mode` takes that has an environment variable
// (FlagRow::env), is set there (not empty) and was not given on the command
// line; InvalidArgument naming the variable and its value if refused.
absl::Status ApplyEnvironment(absl::string_view sub, absl::string_view mode,
                              const CommandLine& line);
// Where flag `name`'s value came from, for messages: "ZKR_SESSION_TIMEOUT"
// if from the environment, else "--session_timeout".
std::string FlagSource(absl::string_view name);
// " (from the environment: ZKR_SESSION_TIMEOUT=...)" naming the flag values
// the environment set that `message` (about a value checked later: the
// session's) is about — by the flag's name or its value; "" if none is, so
// a bad value given on the command line is not blamed on the environment.
std::string EnvironmentNote(absl::string_view message);

// The first word that is not a flag (nor a flag's value) before "--": the
// subcommand's place; -1 if none.
int SubcommandIndex(const std::vector<std::string>& argv);
// The subcommand nearest to `word` (edit distance), "" if none is near.
std::string NearestSubcommand(absl::string_view word);

// --help's "Flags:" and "Exit codes:" entries of `sub` ("" = all, each
// with its takers).
std::string FlagsHelp(absl::string_view sub);
std::string ExitCodesHelp(absl::string_view sub);

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_FLAGS_H_
