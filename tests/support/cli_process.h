// Test support for the zkr command-line tests: small file helpers and a
// child process (the real zkr binary) in a process group of its own, whose
// output is captured in files. The helpers are safe from any thread; a
// Process is used from one thread at a time.
#ifndef ZKRECIPES_TESTS_SUPPORT_CLI_PROCESS_H_
#define ZKRECIPES_TESTS_SUPPORT_CLI_PROCESS_H_

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/testing/server_process.h"

namespace zkr {
namespace testing {

// ---- files -------------------------------------------------------------------

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

inline std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

inline std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// `text` as a single-quoted sh word.
inline std::string ShQuote(absl::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// ---- process states ----------------------------------------------------------

// The state letter of process `pid` in /proc (R, S, D, T, Z...), or '?'.
inline char ProcessState(pid_t pid) {
  const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

// Whether `pid` is stopped or stops before it runs again: state T, or a
// SIGSTOP pending. A shell waiting in vfork(2) for a child that the same
// group stop caught before its exec shows D with the SIGSTOP pending for as
// long as the group stays stopped: it runs no command meanwhile.
inline bool ProcessStopped(pid_t pid) {
  if (ProcessState(pid) == 'T') return true;
  const uint64_t stop_bit = uint64_t{1} << (SIGSTOP - 1);
  for (absl::string_view line : absl::StrSplit(ReadFile(absl::StrCat("/proc/", pid, "/status")), '\n')) {
    if (!absl::StartsWith(line, "SigPnd:") && !absl::StartsWith(line, "ShdPnd:")) continue;
    uint64_t pending = 0;
    if (absl::SimpleHexAtoi(absl::StripAsciiWhitespace(line.substr(7)), &pending) &&
        (pending & stop_bit) != 0) {
      return true;
    }
  }
  return false;
}

// Whether `pid` runs (a zombie does not: it is dead, only not yet reaped).
inline bool Alive(pid_t pid) {
  const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

// Whether a live child of `parent` runs the program `name` (its comm: so
// after its exec, not just forked). Before its exec a shell's child still has
// the shell's trap handlers: a SIGTERM meant for it is caught there and lost,
// and the child lives on. Signal a CMD's group once this holds.
inline bool RunsChildNamed(pid_t parent, absl::string_view name) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size()) continue;
    // After ")": " <state> <ppid> ...".
    std::vector<absl::string_view> fields =
        absl::StrSplit(absl::string_view(stat).substr(close + 2), ' ');
    int ppid = 0;
    if (fields.size() < 2 || fields[0] == "Z" || !absl::SimpleAtoi(fields[1], &ppid)) continue;
    if (ppid == parent && stat.substr(open + 1, close - open - 1) == name) return true;
  }
  return false;
}

// Polls `done` every 10ms until it returns true (true) or `timeout` passes
// (false). Polling only bounds the wait; the condition decides.
inline bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    if (done()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

// ---- a child process -----------------------------------------------------------

// A child process in a process group of its own, with stdin from /dev/null
// and stdout/stderr captured in two files (emptied first), run by a
// ServerProcess. The destructor SIGKILLs the whole group — so also whatever
// zkr started, even after zkr itself died — and reaps it. The first Process
// makes this test process a child subreaper (PR_SET_CHILD_SUBREAPER), so
// that such orphans become its children and can be reaped.
// Not thread-safe; use from one thread at a time.
class Process {
 public:
  Process(const std::vector<std::string>& argv, std::string out_path, std::string err_path);
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Waits up to `timeout` for the process to exit and returns its exit code
  // (128 + N if killed by signal N). On timeout kills its group and returns
  // nullopt.
  std::optional<int> Wait(absl::Duration timeout);

  // Whether it has exited (reaping it if so); never blocks.
  bool Exited();

  // Sends `signal` to the process itself (not its group) unless reaped.
  void Signal(int signal);

  // SIGKILLs the whole group and reaps the process and every member of the
  // group that became our child. Idempotent.
  void KillGroup();

  pid_t pid() const { return pid_; }
  std::string Stdout() const { return ReadFile(out_path_); }
  std::string Stderr() const { return ReadFile(err_path_); }
  // For failure messages: the command line and what it printed.
  std::string Describe() const;

 private:
  const std::string command_;
  const std::string out_path_;
  const std::string err_path_;
  ServerProcess process_;
  pid_t pid_ = -1;  // Kept once the process has been reaped.
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_CLI_PROCESS_H_
