// The ledger of the zkr overlap tests (issue 32): each CMD appends
// "<name> <epoch ms>" to one shared file every 50 ms while it runs; the
// checker takes, per name, the first and last stamp and counts the pairs of
// names whose intervals intersect — two CMDs running at once.
//
// Every run of a LedgerCommand stamps its own name ("<name>-<shell pid>"),
// so a candidate that leads twice is two runs.
#ifndef ZKRECIPES_TESTS_SUPPORT_CLI_LEDGER_H_
#define ZKRECIPES_TESTS_SUPPORT_CLI_LEDGER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/support/cli_process.h"

namespace zkr {
namespace testing {

// What a LedgerCommand does on SIGTERM.
enum class OnTerm {
  kObey,     // dies at once (the default action)
  kIgnore,   // trap '' TERM (inherited by its children: the whole CMD ignores it)
  kStopIn3s, // stamps on for 3 s after the first TERM, then exits 0
};

// A CMD (sh -c) that stamps "<name>-$$ <epoch ms>" into `ledger` every 50 ms:
// forever, or `stamps` times and then exits 0. `also_ignore`: more signals
// it ignores, e.g. "USR1" (the revocation request's signal).
inline std::vector<std::string> LedgerCommand(const std::string& ledger, const std::string& name,
                                              OnTerm on_term, int stamps = -1,
                                              const std::string& also_ignore = "") {
  std::string script = "end=; ";
  if (!also_ignore.empty()) absl::StrAppend(&script, "trap '' ", also_ignore, "; ");
  switch (on_term) {
    case OnTerm::kObey: break;
    case OnTerm::kIgnore: absl::StrAppend(&script, "trap '' TERM; "); break;
    case OnTerm::kStopIn3s:
      absl::StrAppend(&script, "trap '[ -n \"$end\" ] || end=$(($(date +%s%3N) + 3000))' TERM; ");
      break;
  }
  absl::StrAppend(&script, "n=0; while [ ", stamps, " -lt 0 ] || [ $n -lt ", stamps, " ]; do ",
                  "t=$(date +%s%3N); ",
                  "if [ -n \"$end\" ] && [ -n \"$t\" ] && [ \"$t\" -ge \"$end\" ]; then exit 0; fi; ",
                  "echo \"", name, "-$$ $t\" >> ", ShQuote(ledger), "; n=$((n+1)); sleep 0.05; done");
  return {"sh", "-c", script};
}

// One run in a ledger: its first and last stamp (epoch ms) and how many.
struct LedgerRun {
  int64_t first = 0;
  int64_t last = 0;
  int stamps = 0;
};

// The runs in a ledger's text, by name. Lines without a stamp (a `date`
// killed mid-way) are skipped.
inline std::map<std::string, LedgerRun> LedgerRuns(const std::string& text) {
  std::map<std::string, LedgerRun> runs;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::pair<std::string, std::string> fields = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    int64_t stamp = 0;
    if (!absl::SimpleAtoi(fields.second, &stamp)) continue;
    LedgerRun& run = runs[fields.first];
    if (run.stamps == 0 || stamp < run.first) run.first = stamp;
    if (run.stamps == 0 || stamp > run.last) run.last = stamp;
    ++run.stamps;
  }
  return runs;
}

// How many runs of the ledger whose name starts with `prefix` ("a-": the
// runs of LedgerCommand(..., "a", ...)).
inline int LedgerRunsOf(const std::string& text, const std::string& prefix) {
  int n = 0;
  for (const auto& [name, run] : LedgerRuns(text)) n += absl::StartsWith(name, prefix) ? 1 : 0;
  return n;
}

// The pairs of runs that were running at once (their [first, last]
// intervals intersect), each described in `overlaps` if given.
inline int LedgerOverlaps(const std::string& text, std::string* overlaps = nullptr) {
  const std::map<std::string, LedgerRun> runs = LedgerRuns(text);
  int count = 0;
  for (auto a = runs.begin(); a != runs.end(); ++a) {
    for (auto b = std::next(a); b != runs.end(); ++b) {
      if (a->second.first > b->second.last || b->second.first > a->second.last) continue;
      ++count;
      if (overlaps != nullptr) {
        const int64_t from = std::max(a->second.first, b->second.first);
        const int64_t to = std::min(a->second.last, b->second.last);
        absl::StrAppend(overlaps, a->first, " and ", b->first, " ran at once for ", to - from,
                        " ms\n");
      }
    }
  }
  return count;
}

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_CLI_LEDGER_H_
