// A ledger of holds shared by processes of any language (tests/interop): each
// hold is two lines, "<run> <R|W> begin <epoch µs>" once held and
// "<run> <R|W> end <epoch µs>" before it is let go, each one append of one
// write(2) (atomic among processes). <run> is "<participant>-<round>". The
// checker reports two runs at once of which one is W, and a run without its
// end (a killed holder) as lasting until a given time. Thread-safe.
#ifndef ZKRECIPES_TESTS_SUPPORT_HOLD_LEDGER_H_
#define ZKRECIPES_TESTS_SUPPORT_HOLD_LEDGER_H_

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace zkr {
namespace testing {

// Appends one line for `run` (mode 'R' or 'W'), stamped now.
inline void AppendHold(const std::string& ledger, const std::string& run, char mode, bool begin) {
  const std::string line = absl::StrCat(run, " ", std::string(1, mode), begin ? " begin " : " end ",
                                        absl::ToUnixMicros(absl::Now()), "\n");
  const int fd = open(ledger.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!write(fd, line.data(), line.size());
  close(fd);
}

struct HoldRun {
  char mode = 'W';
  int64_t begin = -1;  // µs; -1: no begin line
  int64_t end = -1;    // µs; -1: no end line (open)
};

struct LedgerCheck {
  int overlaps = 0;
  std::string description;                     // one line per overlap or bad run
  std::map<std::string, int> runs_by_participant;  // by the run's name before its last '-'
  std::vector<std::string> open_runs;          // begun, never ended
  int malformed = 0;                           // lines that are not a ledger line
};

// Checks `text`; an open run lasts until `open_until_us`.
inline LedgerCheck CheckHolds(const std::string& text,
                              int64_t open_until_us = std::numeric_limits<int64_t>::max()) {
  LedgerCheck check;
  std::map<std::string, HoldRun> runs;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    int64_t at = 0;
    if (f.size() != 4 || (f[1] != "R" && f[1] != "W") || (f[2] != "begin" && f[2] != "end") ||
        !absl::SimpleAtoi(f[3], &at)) {
      ++check.malformed;
      absl::StrAppend(&check.description, "malformed line: ", line, "\n");
      continue;
    }
    HoldRun& run = runs[f[0]];
    run.mode = f[1][0];
    (f[2] == "begin" ? run.begin : run.end) = at;
  }
  std::vector<std::pair<std::string, HoldRun>> list(runs.begin(), runs.end());
  for (auto& [name, run] : list) {
    if (run.begin < 0) {
      absl::StrAppend(&check.description, name, " ended without a begin\n");
      ++check.malformed;
      continue;
    }
    if (run.end < 0) {
      check.open_runs.push_back(name);
      run.end = open_until_us;
    }
    const size_t dash = name.rfind('-');
    ++check.runs_by_participant[dash == std::string::npos ? name : name.substr(0, dash)];
  }
  for (size_t i = 0; i < list.size(); ++i) {
    for (size_t j = i + 1; j < list.size(); ++j) {
      const HoldRun& a = list[i].second;
      const HoldRun& b = list[j].second;
      if (a.begin < 0 || b.begin < 0 || (a.mode == 'R' && b.mode == 'R')) continue;
      if (a.end < b.begin || b.end < a.begin) continue;
      ++check.overlaps;
      absl::StrAppend(&check.description, list[i].first, " (", std::string(1, a.mode), ") and ",
                      list[j].first, " (", std::string(1, b.mode), ") held at once for ",
                      std::min(a.end, b.end) - std::max(a.begin, b.begin), " us\n");
    }
  }
  return check;
}

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_HOLD_LEDGER_H_
