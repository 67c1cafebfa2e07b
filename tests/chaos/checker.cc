// The chaos checker; see checker.h.
#include "tests/chaos/checker.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_join.h"
#include "tests/chaos/faults.h"
#include "tests/chaos/parameters.h"

namespace zkr {
namespace chaos {

Checker::Checker(std::vector<Entry> entries) : entries_(std::move(entries)) {
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const Entry& a, const Entry& b) { return a.t < b.t; });
}

Report Checker::Check() {
  Report r;
  for (const Entry& e : entries_) {
    if (e.kind == "NEMESIS" && e.what == "kill_worker" && e.detail == "begin") {
      kills_[e.target].push_back(e.t);
    } else if (e.kind == "NEMESIS" &&
               (e.what == "partition_worker" || e.what == "oneway_worker" ||
                e.what == "clock_step_worker")) {
      auto& windows = cut_off_[e.target];
      if (e.detail == "begin") windows.emplace_back(e.t, INT64_MAX);
      if (e.detail == "end" && !windows.empty()) windows.back().second = e.t;
    } else if (e.kind == "SUSPECT") {
      (e.what == "leader" ? leader_told_ : lock_told_)[e.worker].push_back(e.t);
    } else if (e.kind == "AFAIL") {
      ++r.failed_acquires;
      ++r.failures_by_code[e.detail];
    }
  }
  std::vector<Interval> holds =
      Intervals("ENTER", "EXIT", "ACCEPT", "REFUSE", lock_told_, r);
  std::vector<Interval> terms =
      Intervals("LEADER", "UNLEAD", "LACCEPT", "LREFUSE", leader_told_, r);
  for (const Interval& h : holds) {
    (h.write ? r.writes : r.reads)++;
    if (h.told) ++r.told_holds;
    if (h.open) ++r.killed_holds;
    if (h.told) r.stale_refused += h.refused;
    if (h.refused > 0 && !h.told) {
      r.violations.push_back(Violation{h.begin,
          absl::StrCat("(a) a holder never told SUSPENDED/LOST was refused "
                       "by the fenced resource: ",
                       h.Describe())});
    }
  }
  r.terms = static_cast<int64_t>(terms.size());
  for (const Interval& t : terms) {
    if (t.refused > 0 && !t.told) {
      r.violations.push_back(Violation{t.begin,
          absl::StrCat("(c) a leader never told SUSPENDED/LOST was refused "
                       "by the fenced resource: ",
                       t.Describe())});
    }
  }
  std::set<const Interval*> stale;
  r.plain_overlaps = Overlaps(holds, "(a) lock", &r.violations, &stale);
  r.stale_overlapping = static_cast<int64_t>(stale.size());
  for (const Interval* h : stale)
    r.stale_overlapping_refused += h->refused > 0 ? 1 : 0;
  r.leader_plain_overlaps = Overlaps(terms, "(c) leadership", &r.violations);
  TokenOrder(holds, "(a) lock", &r.violations);
  TokenOrder(terms, "(c) leadership", &r.violations);
  FenceOrder("ACCEPT", "(b) resource", &r);
  FenceOrder("LACCEPT", "(c) leader resource", &r);
  OneLeaderPerEpoch(&r.violations);
  ClockSteps(&r);
  const std::vector<Span> spans = Spans();
  Observers(terms, spans, &r);
  Recoveries(spans, &r);
  SemaphoreBound(&r);
  Minutes(&r);
  Summarize(spans, holds, &r);
  return r;
}

bool Checker::ToldIn(const std::map<int, std::vector<int64_t>>& told,
                     int worker, int64_t begin, int64_t end) const {
  auto it = told.find(worker);
  if (it == told.end()) return false;
  auto first = std::lower_bound(it->second.begin(), it->second.end(), begin);
  return first != it->second.end() && *first <= end;
}

bool Checker::CutOffIn(int worker, int64_t begin, int64_t end) const {
  auto it = cut_off_.find(worker);
  if (it == cut_off_.end()) return false;
  for (const auto& [from, to] : it->second) {
    if (from <= end && begin <= to) return true;
  }
  return false;
}

std::optional<int64_t> Checker::KillAfter(int worker, int64_t t) const {
  auto it = kills_.find(worker);
  if (it == kills_.end()) return std::nullopt;
  auto k = std::lower_bound(it->second.begin(), it->second.end(), t);
  if (k == it->second.end()) return std::nullopt;
  return *k;
}

std::vector<Interval> Checker::Intervals(
    const std::string& begin_kind, const std::string& end_kind,
    const std::string& accept_kind, const std::string& refuse_kind,
    const std::map<int, std::vector<int64_t>>& told, Report& r) {
  const bool leadership = begin_kind == "LEADER";
  std::vector<Interval> out;
  std::map<std::pair<int, int64_t>, size_t> open;  // (worker, token) -> index
  for (const Entry& e : entries_) {
    if (e.kind == begin_kind) {
      const auto key = std::make_pair(e.worker, e.token);
      if (open.count(key) > 0) {
        r.violations.push_back(Violation{e.t, absl::StrCat(leadership ? "(c)" : "(a)",
                                            " token ", e.token,
                                            " began twice by worker ", e.worker,
                                            " without ending: [", e.line, "]")});
      }
      Interval i;
      i.worker = e.worker;
      i.write = leadership || e.write;
      i.token = e.token;
      i.begin = e.t;
      i.begin_line = e.line;
      open[key] = out.size();
      out.push_back(i);
    } else if (e.kind == accept_kind || e.kind == refuse_kind) {
      auto it = open.find({e.worker, e.token});
      if (it == open.end()) {
        r.violations.push_back(Violation{
            e.t, absl::StrCat("fenced access outside any interval: [", e.line, "]")});
        continue;
      }
      if (e.kind == refuse_kind) {
        ++out[it->second].refused;
        ++(leadership ? r.leader_refused : r.refused);
        if (e.vouched) {
          ++(leadership ? r.leader_refused_while_current
                        : r.refused_while_vouched);
        }
      } else {
        ++(leadership ? r.leader_accepted : r.accepted);
      }
    } else if (e.kind == end_kind) {
      auto it = open.find({e.worker, e.token});
      if (it == open.end()) {
        r.violations.push_back(
            Violation{e.t, absl::StrCat("end without a beginning: [", e.line, "]")});
        continue;
      }
      out[it->second].end = e.t;
      out[it->second].end_line = e.line;
      open.erase(it);
    }
  }
  for (const auto& [key, index] : open) {
    Interval& i = out[index];
    std::optional<int64_t> killed = KillAfter(i.worker, i.begin);
    if (killed.has_value()) {
      i.open = true;
      i.end = *killed;
      i.end_line = absl::StrCat("kill -9 at ", *killed);
    } else {
      r.violations.push_back(Violation{
          i.begin, absl::StrCat(leadership ? "(c) term" : "(a) hold",
                                " never ended (worker neither exited it nor was "
                                "killed): [",
                                i.begin_line, "]")});
      i.end = INT64_MAX;
      i.end_line = "never";
    }
  }
  for (Interval& i : out) {
    i.told = ToldIn(told, i.worker, i.begin, i.end);
    if (i.told) {
      const std::vector<int64_t>& times = told.at(i.worker);
      i.told_at = *std::lower_bound(times.begin(), times.end(), i.begin);
    }
    i.cut_off = CutOffIn(i.worker, i.begin, i.end);
  }
  std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) {
    return a.begin < b.begin;
  });
  return out;
}

int64_t Checker::Overlaps(const std::vector<Interval>& sorted,
                          const std::string& what,
                          std::vector<Violation>* violations,
                          std::set<const Interval*>* stale) {
  int64_t plain = 0;
  std::vector<const Interval*> active;
  for (const Interval& b : sorted) {
    active.erase(
        std::remove_if(active.begin(), active.end(),
                       [&](const Interval* a) { return a->end <= b.begin; }),
        active.end());
    for (const Interval* a : active) {
      if (!a->write && !b.write) continue;
      if (a->worker == b.worker && !a->open) {
        // The same process cannot hold twice at once in this workload.
        violations->push_back(Violation{b.begin, absl::StrCat(what, ": worker ", b.worker,
                                           " overlaps itself: ", a->Describe(),
                                           " and ", b.Describe())});
        continue;
      }
      ++plain;
      if (stale != nullptr) {
        if (a->told) stale->insert(a);
        if (b.told) stale->insert(&b);
      }
      // `a` began first. Cut off with its process running, its lease must
      // have ended its belief before anyone else could begin.
      if (a->cut_off && a->worker != b.worker && (!a->told || a->told_at > b.begin)) {
        violations->push_back(Violation{b.begin, absl::StrCat(
            what, " overlap: a holder cut off from the ensemble was not yet told "
                  "SUSPENDED/LOST when another began: ",
            a->Describe(), " and ", b.Describe())});
        continue;
      }
      if (!a->told && !b.told) {
        violations->push_back(Violation{
            b.begin, absl::StrCat(what,
                                  " overlap between holders never told "
                                  "SUSPENDED/LOST: ",
                                  a->Describe(), " and ", b.Describe())});
      }
    }
    active.push_back(&b);
  }
  return plain;
}

void Checker::TokenOrder(const std::vector<Interval>& by_begin,
                         const std::string& what,
                         std::vector<Violation>* violations) {
  std::vector<const Interval*> by_end;
  for (const Interval& i : by_begin) {
    if (!i.told) by_end.push_back(&i);
  }
  std::sort(
      by_end.begin(), by_end.end(),
      [](const Interval* a, const Interval* b) { return a->end < b->end; });
  const Interval* max_any = nullptr;
  const Interval* max_write = nullptr;
  size_t next = 0;
  for (const Interval& b : by_begin) {
    if (b.told) continue;
    while (next < by_end.size() && by_end[next]->end < b.begin) {
      const Interval* a = by_end[next++];
      if (max_any == nullptr || a->token > max_any->token) max_any = a;
      if (a->write && (max_write == nullptr || a->token > max_write->token))
        max_write = a;
    }
    const Interval* before = b.write ? max_any : max_write;
    if (before != nullptr && before->token >= b.token) {
      violations->push_back(Violation{
          b.begin, absl::StrCat(what, ": token went backwards: ", before->Describe(),
                                " ended before ", b.Describe(), " began")});
    }
  }
}

void Checker::FenceOrder(const std::string& kind, const std::string& what,
                         Report* r) {
  const Entry* last_write = nullptr;
  const Entry* max_read = nullptr;
  for (const Entry& e : entries_) {
    if (e.kind != kind) continue;
    const bool write = kind != "ACCEPT" || e.write;
    if (last_write != nullptr && e.token < last_write->token) {
      r->violations.push_back(
          Violation{e.t, absl::StrCat(what, " accepted a lower token after a higher: [",
                                      last_write->line, "] then [", e.line, "]")});
    }
    if (!write) {
      if (max_read == nullptr || e.token > max_read->token) max_read = &e;
      continue;
    }
    if (max_read != nullptr && e.token < max_read->token) {
      r->violations.push_back(
          Violation{e.t, absl::StrCat(what, " accepted a write below a read's token: [",
                                      max_read->line, "] then [", e.line, "]")});
    }
    if (last_write != nullptr && e.seq <= last_write->seq) {
      r->violations.push_back(
          Violation{e.t, absl::StrCat(what, " sequence did not increase: [", last_write->line,
                                      "] then [", e.line, "]")});
    }
    last_write = &e;
  }
}

void Checker::OneLeaderPerEpoch(std::vector<Violation>* violations) {
  std::map<int64_t, const Entry*> first;
  for (const Entry& e : entries_) {
    if (e.kind != "LEADER") continue;
    auto [it, inserted] = first.emplace(e.token, &e);
    if (!inserted && it->second->worker != e.worker) {
      violations->push_back(Violation{e.t, absl::StrCat("(c) two leaders for epoch ", e.token,
                                                        ": [", it->second->line, "] and [",
                                                        e.line, "]")});
    }
  }
}

void Checker::Observers(const std::vector<Interval>& terms, const std::vector<Span>& spans,
                        Report* r) {
  // When each epoch's terms ended (INT64_MAX while one is open to the end).
  std::map<int64_t, int64_t> ended;
  for (const Interval& term : terms) {
    int64_t& end = ended.emplace(term.token, 0).first->second;
    end = std::max(end, term.end);
  }
  std::set<int64_t> observed;
  for (const Entry& e : entries_) {
    if (e.kind == "MEMBERS") ++r->member_reports;
    if (e.kind != "OBSERVE") continue;
    ++r->observer_reports;
    if (e.token == 0) continue;
    auto term = ended.find(e.token);
    if (term == ended.end()) continue;  // never led (killed before its LEADER line)
    if (e.detail == "1") observed.insert(e.token);
    // While the ensemble has no quorum (lose_quorum) or its quorum leader is
    // paused (pause_leader), no session expires, and a new quorum leader
    // renews every session: the deposed leader's node lives on. Count from
    // the fault's end then.
    int64_t since = term->second;
    bool excused = false;
    for (const Span& span : spans) {
      const bool overlaps = span.begin <= e.t && since <= span.end;
      if (overlaps && (span.kind == "lose_quorum" || span.kind == "pause_leader")) {
        since = std::max(since, span.end);
      }
      // A fault aimed at the observer itself (paused, cut off) delays what it hears.
      excused |= overlaps && span.target == e.worker;
    }
    const int64_t deposed_for = e.t - since;
    if (excused || deposed_for <= absl::ToInt64Nanoseconds(kSessionTimeout + kExpiryTick)) {
      continue;
    }
    r->violations.push_back(Violation{
        e.t, absl::StrCat("(h) an observer reported leader epoch ", e.token, " deposed ",
                          Ms(deposed_for), " before (more than the session timeout): [", e.line,
                          "]")});
  }
  r->observed_terms = static_cast<int64_t>(observed.size());
}

void Checker::ClockSteps(Report* r) {
  constexpr int64_t kRoundingMs = 1;  // each figure is truncated to a ms
  for (const Entry& e : entries_) {
    if (e.kind != "STEP") continue;
    ++r->clock_steps;
    if (e.lease_before_ms <= 0) continue;  // no lease to keep
    const int64_t change = e.lease_after_ms - e.lease_before_ms;
    const bool stretched = change > kRoundingMs && !e.renewed;
    const bool shortened = change < -(e.elapsed_ms + kRoundingMs);
    if (stretched || shortened) {
      r->violations.push_back(Violation{
          e.t, absl::StrCat("(g) a wall-clock step of ", e.step_s, " s ",
                            change > 0 ? "stretched" : "shortened", " the lease by ",
                            change > 0 ? change : -change, " ms: [", e.line, "]")});
    }
  }
}

std::vector<Checker::Span> Checker::Spans() const {
  std::vector<Span> spans;
  for (const Entry& e : entries_) {
    if (e.kind != "NEMESIS") continue;
    if (e.detail == "begin") {
      if (!spans.empty() && spans.back().next_begin == INT64_MAX) spans.back().next_begin = e.t;
      spans.push_back(Span{e.what, e.target, e.t, INT64_MAX});
    } else if (e.detail == "end" && !spans.empty() && spans.back().kind == e.what) {
      spans.back().end = e.t;
    }
  }
  for (Span& s : spans) {
    if (s.end == 0) s.end = s.next_begin;  // never healed (the run stopped)
  }
  return spans;
}

void Checker::Recoveries(const std::vector<Span>& spans, Report* r) {
  std::map<int, std::vector<int64_t>> enters;
  for (const Entry& e : entries_) {
    if (e.kind == "ENTER") enters[e.worker].push_back(e.t);
  }
  const int64_t bound =
      absl::ToInt64Nanoseconds(2 * kSessionTimeout + kAllowance);
  for (const Span& s : spans) {
    if (s.end == INT64_MAX) continue;
    int64_t took = 0;
    for (int w = 0; w < kWorkers; ++w) {
      const std::vector<int64_t>& list = enters[w];
      auto next = std::upper_bound(list.begin(), list.end(), s.end);
      took = std::max(took, next == list.end() ? INT64_MAX : *next - s.end);
    }
    const std::string fault = absl::StrCat(
        s.kind, " (", TargetsWorker(s.kind) ? "worker " : "member ", s.target,
        ")");
    const bool next_came_first = s.next_begin != INT64_MAX && took > s.next_begin - s.end;
    if (took > bound || next_came_first) {
      ++r->slow_recoveries;
      r->slow_recovery_list.push_back(absl::StrCat(
          fault, took == INT64_MAX ? " never" : absl::StrCat(" ", Ms(took)),
          next_came_first ? " (the next fault came first)" : ""));
      continue;
    }
    FaultSummary& summary = r->by_fault[s.kind];
    summary.slowest_recovery_ns = std::max(summary.slowest_recovery_ns, took);
    if (took > r->slowest_recovery_ns) {
      r->slowest_recovery_ns = took;
      r->slowest_recovery = absl::StrCat(Ms(took), " after ", fault, " healed");
    }
  }
}

namespace {

// The load's counters over time, from the LOAD lines.
class LoadCurve {
 public:
  explicit LoadCurve(const std::vector<Entry>& entries) {
    for (const Entry& e : entries) {
      if (e.kind == "LOAD") points_.push_back(&e);
    }
  }
  bool empty() const { return points_.size() < 2; }
  // Critical sections, terms and semaphore critical sections per second
  // over [from, to], from the LOAD lines nearest inside it; nullopt if fewer
  // than two lie there.
  std::optional<std::array<double, 3>> Rates(int64_t from, int64_t to) const {
    auto first = std::lower_bound(points_.begin(), points_.end(), from,
                                  [](const Entry* e, int64_t t) { return e->t < t; });
    auto last = std::upper_bound(points_.begin(), points_.end(), to,
                                 [](int64_t t, const Entry* e) { return t < e->t; });
    if (first == points_.end() || last - first < 2) return std::nullopt;
    const Entry& a = **first;
    const Entry& b = **(last - 1);
    const double seconds = (b.t - a.t) / 1e9;
    return std::array<double, 3>{(b.sections - a.sections) / seconds,
                                 (b.terms - a.terms) / seconds,
                                 (b.sem_sections - a.sem_sections) / seconds};
  }

 private:
  std::vector<const Entry*> points_;  // in time order
};

// Sums of (count, seconds) for an average rate over several windows.
struct RateSum {
  std::array<double, 3> counts = {0, 0, 0};
  double seconds = 0;
  void Add(int64_t from, int64_t to, const std::optional<std::array<double, 3>>& rates) {
    if (!rates.has_value()) return;
    const double s = (to - from) / 1e9;
    for (int i = 0; i < 3; ++i) counts[i] += (*rates)[i] * s;
    seconds += s;
  }
  void Store(double* sections_rate, double* terms_rate, double* sem_rate) const {
    if (seconds <= 0) return;
    *sections_rate = counts[0] / seconds;
    *terms_rate = counts[1] / seconds;
    *sem_rate = counts[2] / seconds;
  }
};

// The median of `values` (the lower middle one); -1 if none.
int64_t Median(std::vector<int64_t> values) {
  if (values.empty()) return -1;
  std::nth_element(values.begin(), values.begin() + (values.size() - 1) / 2, values.end());
  return values[(values.size() - 1) / 2];
}

}  // namespace

void Checker::Summarize(const std::vector<Span>& spans, const std::vector<Interval>& holds,
                        Report* r) const {
  auto span_at = [&](int64_t t) -> const Span* {
    for (const Span& s : spans) {
      if (s.begin <= t && t < s.next_begin) return &s;
    }
    return nullptr;
  };
  for (const Span& s : spans) ++r->by_fault[s.kind].count;
  for (const Violation& v : r->violations) {
    if (const Span* s = span_at(v.t)) ++r->by_fault[s->kind].violations;
  }
  for (const Interval& h : holds) {
    if (!h.told || h.refused == 0) continue;
    if (const Span* s = span_at(h.begin)) r->by_fault[s->kind].stale_refused += h.refused;
  }
  const LoadCurve load(entries_);
  if (load.empty()) return;
  const int64_t around = absl::ToInt64Nanoseconds(absl::Seconds(3));
  std::map<std::string, std::array<RateSum, 3>> sums;  // before, during, after
  for (const Span& s : spans) {
    if (s.end == INT64_MAX) continue;
    std::array<RateSum, 3>& sum = sums[s.kind];
    sum[0].Add(s.begin - around, s.begin, load.Rates(s.begin - around, s.begin));
    sum[1].Add(s.begin, s.end, load.Rates(s.begin, s.end));
    sum[2].Add(s.end, s.end + around, load.Rates(s.end, s.end + around));
  }
  for (const auto& [kind, sum] : sums) {
    FaultSummary& f = r->by_fault[kind];
    sum[0].Store(&f.sections_before, &f.terms_before, &f.sem_before);
    sum[1].Store(&f.sections_during, &f.terms_during, &f.sem_during);
    sum[2].Store(&f.sections_after, &f.terms_after, &f.sem_after);
  }
  if (auto rates = load.Rates(INT64_MIN, INT64_MAX)) {
    r->load_sections = (*rates)[0];
    r->load_terms = (*rates)[1];
    r->load_sem = (*rates)[2];
  }
}

void Checker::SemaphoreBound(Report* r) const {
  // Untold holds as (time, +1 enter / -1 exit), exits first at a tie; an
  // enter without its exit (the load killed) is not counted.
  std::map<int, const Entry*> entered;  // holder -> its SENTER
  std::vector<std::pair<int64_t, int>> events;
  std::map<int64_t, const Entry*> enter_at;
  int64_t permits = 0;
  for (const Entry& e : entries_) {
    if (e.kind == "SENTER") {
      entered[e.worker] = &e;
      permits = e.permits;
    } else if (e.kind == "SEXIT") {
      auto it = entered.find(e.worker);
      if (it == entered.end()) continue;
      ++r->sem_sections;
      if (e.told) {
        ++r->sem_told;
      } else {
        events.emplace_back(it->second->t, +1);
        events.emplace_back(e.t, -1);
        enter_at[it->second->t] = it->second;
      }
      entered.erase(it);
    }
  }
  std::sort(events.begin(), events.end());
  int64_t holding = 0;
  for (const auto& [t, delta] : events) {
    holding += delta;
    r->sem_most_at_once = std::max(r->sem_most_at_once, holding);
    if (delta > 0 && holding == permits + 1) {
      r->violations.push_back(Violation{t,
          absl::StrCat("(i) semaphore: ", holding, " holders not told SUSPENDED/LOST at once, ",
                       "over its ", permits, " permits, the last [", enter_at[t]->line, "]")});
    }
  }
}

void Checker::Minutes(Report* r) const {
  int64_t start = -1;
  for (const Entry& e : entries_) {
    if (e.kind == "SAMPLE") {
      start = e.t;
      break;
    }
  }
  if (start < 0) return;
  const int64_t minute_ns = absl::ToInt64Nanoseconds(absl::Minutes(1));
  // Each sample's sums (by its time) per minute, per group.
  struct Tick {
    int64_t worker_rss = 0, worker_fds = 0, load_rss = 0, load_fds = 0;
    bool worker = false, load = false;
  };
  std::map<int64_t, std::map<int64_t, Tick>> ticks;  // minute -> t -> sums
  std::map<int64_t, std::vector<int64_t>> heaps;      // minute -> the load's HEAP lines
  std::map<int64_t, Minute> minutes;
  int64_t last_load_sections = 0, last_sem_sections = 0;
  bool load_seen = false;
  for (const Entry& e : entries_) {
    if (e.t < start) {
      if (e.kind == "LOAD") {
        last_load_sections = e.sections;
        last_sem_sections = e.sem_sections;
        load_seen = true;
      }
      continue;
    }
    const int64_t m = (e.t - start) / minute_ns;
    if (e.kind == "SAMPLE") {
      Tick& tick = ticks[m][e.t];
      if (e.what == "load") {
        tick.load_rss += e.rss_kib;
        tick.load_fds += e.fds;
        tick.load = true;
      } else {
        tick.worker_rss += e.rss_kib;
        tick.worker_fds += e.fds;
        tick.worker = true;
      }
      minutes[m];
    } else if (e.kind == "HEAP") {
      heaps[m].push_back(e.heap_kib);
      minutes[m];
    } else if (e.kind == "ENTER") {
      ++minutes[m].worker_sections;
    } else if (e.kind == "LOAD") {
      if (load_seen) {
        minutes[m].load_sections += e.sections - last_load_sections;
        minutes[m].sem_sections += e.sem_sections - last_sem_sections;
      }
      last_load_sections = e.sections;
      last_sem_sections = e.sem_sections;
      load_seen = true;
    }
  }
  if (minutes.empty()) return;
  r->minutes.assign(minutes.rbegin()->first + 1, Minute{});
  for (const auto& [m, minute] : minutes) r->minutes[m] = minute;
  for (const auto& [m, by_t] : ticks) {
    std::vector<int64_t> worker_rss, worker_fds, load_rss, load_fds;
    for (const auto& [t, tick] : by_t) {
      if (tick.worker) {
        worker_rss.push_back(tick.worker_rss);
        worker_fds.push_back(tick.worker_fds);
      }
      if (tick.load) {
        load_rss.push_back(tick.load_rss);
        load_fds.push_back(tick.load_fds);
      }
    }
    Minute& minute = r->minutes[m];
    minute.worker_rss_kib = Median(worker_rss);
    minute.worker_fds = Median(worker_fds);
    minute.load_rss_kib = Median(load_rss);
    minute.load_fds = Median(load_fds);
  }
  for (const auto& [m, heap] : heaps) r->minutes[m].load_heap_kib = Median(heap);
  // (j) flat: the last window's median against the second window's.
  const int n = static_cast<int>(r->minutes.size());
  if (n < kFlatMinimumMinutes) return;
  r->flatness_judged = true;
  auto median_of = [&](int from, int to, int64_t Minute::*field) {
    std::vector<int64_t> values;
    for (int m = from; m < to; ++m) {
      if (r->minutes[m].*field >= 0) values.push_back(r->minutes[m].*field);
    }
    return Median(values);
  };
  const int64_t t_end = start + static_cast<int64_t>(n) * minute_ns;
  auto judge = [&](const std::string& whose, const char* measure, int64_t Minute::*field,
                   bool rss) {
    const int64_t reference = median_of(kFlatWindowMinutes, 2 * kFlatWindowMinutes, field);
    const int64_t last = median_of(n - kFlatWindowMinutes, n, field);
    if (reference < 0 || last < 0) return;
    const int64_t allowed = rss ? reference + static_cast<int64_t>(reference * kFlatRssGrowth)
                                : reference + kFlatFdGrowth;
    const std::string text =
        absl::StrCat(whose, " ", measure, ": median ", last, rss ? " KiB" : "",
                     " in the last ", kFlatWindowMinutes, " minutes, ", reference,
                     " in minutes ", kFlatWindowMinutes, "-", 2 * kFlatWindowMinutes - 1,
                     " (at most ", allowed, " allowed)");
    r->flatness.push_back(text);
    if (last > allowed) {
      r->violations.push_back(Violation{t_end, absl::StrCat("(j) ", text, ": not flat")});
    }
  };
  judge("the workers'", "RSS", &Minute::worker_rss_kib, true);
  judge("the workers'", "descriptors", &Minute::worker_fds, false);
  judge("the load's", "RSS", &Minute::load_rss_kib, true);
  judge("the load's", "descriptors", &Minute::load_fds, false);
  judge("the load's", "live heap", &Minute::load_heap_kib, true);
}

std::vector<std::string> LeakedWatches(const WatchListing& first, const WatchListing& second,
                                       const std::function<bool(const std::string&)>& exists) {
  std::vector<std::string> leaks;
  for (const auto& [path, sessions] : first) {
    auto again = second.find(path);
    if (again == second.end() || exists(path)) continue;
    leaks.push_back(absl::StrCat(path, " (sessions ", absl::StrJoin(again->second, ","), ")"));
  }
  return leaks;
}

}  // namespace chaos
}  // namespace zkr
