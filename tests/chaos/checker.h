// The chaos checker: reads a whole ledger and reports what the run did
// (operations, fence refusals, recoveries, the load's rate; all per fault kind
// too) and what it must not have done (violations of (a) lock exclusion and
// token order, (b) fence order, (c) one leader per epoch, (g) a lease changed
// by a clock step, (h) an observer reporting a leader deposed for longer
// than a session timeout, (i) more semaphore holders than permits, (j) RSS or
// descriptors growing over a long run); the run per minute (RSS, descriptors,
// critical sections); and, apart, finds (f) leaked watches in watch listings.
// See chaos_test.cc for the properties.
// Thread-safety: a Checker is not thread-safe (one thread at a time); a
// Report is a plain value.
#ifndef ZKRECIPES_TESTS_CHAOS_CHECKER_H_
#define ZKRECIPES_TESTS_CHAOS_CHECKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/chaos/ledger.h"

namespace zkr {
namespace chaos {

// One critical section or leadership term.
struct Interval {
  int worker = 0;
  bool write = true;  // leadership terms count as exclusive
  int64_t token = 0;  // fencing token / epoch
  int64_t begin = 0, end = 0;
  bool open = false;  // no EXIT/UNLEAD: ended by kill -9 (end = kill time)
  bool told = false;  // SUSPENDED/LOST/failed check during [begin, end]
  int64_t told_at = 0;  // the first such time, if told
  // Its worker was cut off from the ensemble (partition_worker,
  // oneway_worker, clock_step_worker) during it, its process running: it
  // must be told before anyone else begins.
  bool cut_off = false;
  int refused = 0;    // fenced accesses refused
  std::string begin_line, end_line;

  std::string Describe() const {
    return absl::StrCat("[", begin_line, "] .. [", open ? "killed: " : "",
                        end_line, "]", told ? " (told)" : "");
  }
};

// A property the run broke, at the ledger time it is laid to.
struct Violation {
  int64_t t = 0;
  std::string text;
};

// What the faults of one kind did, over all their occurrences. A fault's
// own span is from its beginning until the next fault begins (its recovery
// included).
struct FaultSummary {
  int count = 0;
  int violations = 0;
  // The slowest time until every worker had entered its critical section
  // again after a fault of this kind healed; -1 if never measured.
  int64_t slowest_recovery_ns = -1;
  // Fenced accesses refused to holders the library had told
  // SUSPENDED/LOST, in this kind's spans.
  int64_t stale_refused = 0;
  // The background load's critical sections (and leadership terms) per
  // second in the 3 s before each fault, while it lasted, and in the 3 s
  // after it healed; -1 without LOAD lines.
  double sections_before = -1, sections_during = -1, sections_after = -1;
  double terms_before = -1, terms_during = -1, terms_after = -1;
  // ... and the load's semaphore critical sections per second.
  double sem_before = -1, sem_during = -1, sem_after = -1;
};

// One minute of the run, from its first SAMPLE line: the processes' RSS and
// descriptors (the median over the minute's samples of each sample's sum
// over the workers, and over the load; -1 without samples), the critical
// sections completed in it (the workers', the load's locks', the load's
// semaphore's), and the load's live malloc heap (the median of its HEAP
// lines in the minute; -1 without).
struct Minute {
  int64_t worker_rss_kib = -1, worker_fds = -1, load_rss_kib = -1, load_fds = -1;
  int64_t worker_sections = 0, load_sections = 0, sem_sections = 0;
  int64_t load_heap_kib = -1;
};

// (j) RSS and descriptors are judged flat on runs of at least
// kFlatMinimumMinutes minutes of samples: the median of the last
// kFlatWindowMinutes minutes, against the median of minutes
// [kFlatWindowMinutes, 2 * kFlatWindowMinutes) (the first ones are the
// warm-up), may exceed it by at most kFlatRssGrowth of the RSS and
// kFlatFdGrowth descriptors, for the workers (summed) and the load alike;
// the load's live heap (HEAP lines) by at most kFlatRssGrowth too.
constexpr int kFlatMinimumMinutes = 30;
constexpr int kFlatWindowMinutes = 10;
constexpr double kFlatRssGrowth = 0.10;
constexpr int64_t kFlatFdGrowth = 8;

struct Report {
  std::vector<Violation> violations;
  // Per fault kind, by name.
  std::map<std::string, FaultSummary> by_fault;
  // The load's overall rates (critical sections, terms, semaphore critical
  // sections per second).
  double load_sections = -1, load_terms = -1, load_sem = -1;
  // (i) The load's semaphore: critical sections, those told SUSPENDED/LOST,
  // and the most untold holders seen at once (at most its permits).
  int64_t sem_sections = 0, sem_told = 0, sem_most_at_once = 0;
  // The run per minute, from the first SAMPLE line (empty without samples).
  std::vector<Minute> minutes;
  // (j) Whether the run was long enough to judge RSS and descriptors, and
  // the comparison made (one line per process group and measure).
  bool flatness_judged = false;
  std::vector<std::string> flatness;
  // Wall-clock steps seen (STEP lines).
  int64_t clock_steps = 0;
  int64_t reads = 0, writes = 0, accepted = 0, refused = 0, stale_refused = 0;
  int64_t terms = 0, leader_accepted = 0, leader_refused = 0;
  int64_t plain_overlaps = 0, told_holds = 0, killed_holds = 0,
          leader_plain_overlaps = 0;
  int64_t failed_acquires = 0;
  std::map<std::string, int64_t> failures_by_code;
  // Time until every worker acquired again after a fault healed.
  std::string slowest_recovery = "none";
  int64_t slowest_recovery_ns = 0;
  int slow_recoveries = 0;  // beyond 2x the session timeout + allowance
  std::vector<std::string> slow_recovery_list;
  int64_t stale_overlapping = 0;  // told holds that overlapped another hold
  int64_t stale_overlapping_refused = 0;  // ... and were refused by the fence
  // Refusals of holders whose guard still said held() with lease left.
  int64_t refused_while_vouched = 0;
  // Leader refusals while IsCurrent() still said yes.
  int64_t leader_refused_while_current = 0;
  // (h) Observer reports (OBSERVE), the leadership terms some observer
  // reported as taken over, and membership reports (MEMBERS).
  int64_t observer_reports = 0, observed_terms = 0, member_reports = 0;
};

// (f) Watched paths (path -> watching sessions), as the ensemble's watch
// listings showed them at two looks some time apart.
using WatchListing = std::map<std::string, std::set<std::string>>;
// The leaked watches among them: paths watched at both looks that did not
// exist in between (`exists` says so) — a data watch is never set on a
// missing node and a deleted node never comes back, so such a watch was
// left behind. `exists` must answer for a moment between the two looks and
// from the same server's view as the listings (a read from another member
// may lag behind, and a node deleted after the second look was watched
// legitimately). As "<path> (sessions <ids>)".
std::vector<std::string> LeakedWatches(const WatchListing& first, const WatchListing& second,
                                       const std::function<bool(const std::string&)>& exists);

class Checker {
 public:
  explicit Checker(std::vector<Entry> entries);

  Report Check();

 private:
  bool ToldIn(const std::map<int, std::vector<int64_t>>& told, int worker,
              int64_t begin, int64_t end) const;

  std::optional<int64_t> KillAfter(int worker, int64_t t) const;
  // Whether `worker` was partitioned at some time in [begin, end].
  bool CutOffIn(int worker, int64_t begin, int64_t end) const;

  std::vector<Interval> Intervals(
      const std::string& begin_kind, const std::string& end_kind,
      const std::string& accept_kind, const std::string& refuse_kind,
      const std::map<int, std::vector<int64_t>>& told, Report& r);

  // Counts overlapping pairs (at least one exclusive) ignoring told; reports
  // as violations those where neither side was told, and those where a
  // cut-off holder was not yet told when the other began.
  static int64_t Overlaps(const std::vector<Interval>& sorted,
                          const std::string& what,
                          std::vector<Violation>* violations,
                          std::set<const Interval*>* stale = nullptr);

  // Among untold intervals: one that begins after another ended (at least
  // one of them exclusive) carries a larger token.
  static void TokenOrder(const std::vector<Interval>& by_begin,
                         const std::string& what,
                         std::vector<Violation>* violations);

  // Accepted accesses, in acceptance (= ledger time, written under the
  // resource's flock) order: a write's token is never lower than an earlier
  // accepted write's or read's, a read's never lower than an earlier write's;
  // write sequence numbers increase.
  void FenceOrder(const std::string& kind, const std::string& what, Report* r);

  void OneLeaderPerEpoch(std::vector<Violation>* violations);

  // (g) A wall-clock step neither stretched nor shortened a lease: the lease
  // left just after a STEP is the lease left just before it, less at most
  // the time the reads took (more, if an answer renewed it in between).
  void ClockSteps(Report* r);

  // One fault, from its NEMESIS begin and end lines.
  struct Span {
    std::string kind;
    int target = -1;
    int64_t begin = 0, end = 0;
    int64_t next_begin = INT64_MAX;  // when the next fault began
  };
  std::vector<Span> Spans() const;

  // (h) An observer's report of epoch E at t: the term(s) of E have not all
  // ended more than a session timeout (plus the server's expiry tick) before
  // t — a deposed leader's node lives at most that long — counting from the
  // end of a quorum fault (lose_quorum, pause_leader) in between, during
  // which no session expires; unless a fault aimed at the observer's worker
  // (a pause, a cut-off) lay in between.
  void Observers(const std::vector<Interval>& terms, const std::vector<Span>& spans, Report* r);

  // For each fault: from its healing until every worker has entered its
  // critical section again (unless the next fault began first).
  void Recoveries(const std::vector<Span>& spans, Report* r);

  // (i) Among the load's semaphore holders not told SUSPENDED/LOST, never
  // more at once than its permits.
  void SemaphoreBound(Report* r) const;

  // r->minutes from the SAMPLE, ENTER and LOAD lines, and (j) flatness.
  void Minutes(Report* r) const;

  // Fills r->by_fault: counts, violations and stale refusals by span, and
  // the load's rates around each fault.
  void Summarize(const std::vector<Span>& spans, const std::vector<Interval>& holds,
                 Report* r) const;

  std::vector<Entry> entries_;
  std::map<int, std::vector<int64_t>> kills_, lock_told_, leader_told_;
  // Windows per worker in which it was cut off with its process running
  // (partition_worker, oneway_worker, clock_step_worker): (begin, end).
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> cut_off_;
};

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_CHECKER_H_
