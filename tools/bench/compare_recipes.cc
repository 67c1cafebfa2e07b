// Workload 8's recipe rows (issue 37): the semaphore (workload 9's shape),
// the read/write mix (4's) and election failover (7's), each run by
// zkrecipes, Apache Curator (CuratorRecipeBench.java) and Kazoo
// (kazoo_recipe_bench.py) one after another on the same server.
//
// Throughput rows (8s, 8rw and their 8c/8k variants) are ratios to
// zkrecipes' rate measured just before them (higher is better: Curator at
// 0.5x takes half as many acquisitions per second as we do); the failover
// rows (8e, 8ce, 8ke) are p50 ratios to the raw failover floor 1f, as row 7
// is (lower is better), with the ratio to ours beside it.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "src/macros.h"
#include "tools/bench/compare.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace bench {

absl::StatusOr<std::string> RunOne(const std::string& program, const char* workload,
                                   const Context& context, const std::string& base,
                                   double amount, double warmup) {
  ZKR_ASSIGN_OR_RETURN(std::string out,
                       Output(absl::StrCat(program, " ", workload, " '", context.connect, "' '",
                                           base, "' ", amount, " ", warmup)));
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  if (lines.size() != 1) {
    return absl::InternalError(absl::StrCat(program, " ", workload, " printed ", lines.size(),
                                            " lines, not 1: ", out));
  }
  return lines[0];
}

absl::StatusOr<double> Number(absl::string_view line, absl::string_view key) {
  double value = 0;
  if (!absl::SimpleAtod(JsonField(line, key), &value)) {
    return absl::InternalError(absl::StrCat("no number \"", key, "\" in: ", line));
  }
  return value;
}

std::string LibraryOf(absl::string_view line) {
  std::string name(JsonField(line, "library"));
  if (!name.empty()) name[0] = absl::ascii_toupper(name[0]);
  return absl::StrCat(name, " ", JsonField(line, "version"));
}

namespace {

// Our side of the mix for a fixed time: 16 readers and 2 writers (a session
// each) on one SharedLock at default options, each acquiring, working
// 100 us and releasing in a loop, as row 4 does for a fixed count.
absl::StatusOr<Result> OurMix(Context& context, absl::Duration run_for) {
  constexpr int kReaders = 16, kWriters = 2;
  const std::string path = context.root + "/compare-mix";
  ZKR_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Session>> sessions,
                       ConnectMany(context, kReaders + kWriters));
  std::vector<std::unique_ptr<SharedLock>> locks;
  for (auto& session : sessions) {
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<SharedLock> lock, SharedLock::Create(*session, path));
    locks.push_back(std::move(lock));
  }
  std::atomic<int64_t> acquisitions{0};
  std::atomic<int> readers{0}, writers{0}, max_readers{0}, violations{0}, errors{0};
  const absl::Time start = absl::Now(), end = start + run_for;
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders + kWriters; ++i) {
    threads.emplace_back([&, i] {
      const bool write = i >= kReaders;
      while (absl::Now() < end) {
        absl::StatusOr<LockGuard> guard =
            write ? locks[i]->AcquireWrite() : locks[i]->AcquireRead();
        if (!guard.ok()) return (void)++errors;
        ++acquisitions;
        if (write) {
          if (++writers != 1 || readers.load() != 0) ++violations;
        } else {
          const int inside = ++readers;
          for (int seen = max_readers.load(); inside > seen;) {
            if (max_readers.compare_exchange_weak(seen, inside)) break;
          }
          if (writers.load() != 0) ++violations;
        }
        absl::SleepFor(absl::Microseconds(100));  // the critical section's work
        --(write ? writers : readers);
        if (!guard->Release().ok()) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (errors > 0) return absl::InternalError("compare mix: errors");
  locks.clear();
  ZKR_RETURN_IF_ERROR(DeleteLockDirectory(*sessions[0], path));
  Result r("8rw", "read/write mix, 16 readers + 2 writers, 100 us held: zkrecipes (defaults)");
  r.ratio = 1.0;
  r.figures = {{"acquisitions_per_s", acquisitions / seconds},
               {"max_concurrent_readers", double(max_readers.load())},
               {"violations", double(violations.load())}};
  return r;
}

absl::StatusOr<std::vector<Result>> Semaphores(Context& context, const std::string& base,
                                               const std::string (&programs)[2]) {
  const double seconds = context.quick ? 0.3 : 5.0, warmup = context.quick ? 0.3 : 2.0;
  const absl::Duration run_for = absl::Seconds(seconds);
  ZKR_ASSIGN_OR_RETURN(Result textbook, SemaphoreForTime(context, true, run_for));
  ZKR_ASSIGN_OR_RETURN(Result ours, SemaphoreForTime(context, false, run_for));
  const double textbook_rate = FigureOf(textbook, "acquisitions_per_s");
  const double ours_rate = FigureOf(ours, "acquisitions_per_s");
  const auto to_textbook = [&](double rate) {
    return textbook_rate > 0 ? rate / textbook_rate : 0;
  };
  Result r("8s", "semaphore, 4 leases, 16 sessions, released at once: zkrecipes (defaults)");
  r.ratio = 1.0;
  r.figures = {{"acquisitions_per_s", ours_rate},
               {"ratio_to_textbook", to_textbook(ours_rate)},
               {"textbook_acquisitions_per_s", textbook_rate},
               {"watch_events_per_acquisition", FigureOf(ours, "watch_events_per_acquisition")},
               {"requests_per_acquisition", FigureOf(ours, "requests_per_acquisition")}};
  std::vector<Result> rows{r};
  const char* ids[] = {"8cs", "8ks"};
  const char* recipes[] = {"InterProcessSemaphoreV2", "Semaphore(max_leases=4)"};
  for (int i = 0; i < 2; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::string line,
                         RunOne(programs[i], "semaphore", context, base, seconds, warmup));
    ZKR_ASSIGN_OR_RETURN(double rate, Number(line, "acquisitions_per_s"));
    Result theirs(ids[i], absl::StrCat("semaphore, same: ", LibraryOf(line), " ", recipes[i]));
    theirs.in_process = false;
    theirs.ratio = ours_rate > 0 ? rate / ours_rate : 0;
    theirs.figures = {{"acquisitions_per_s", rate}, {"ratio_to_textbook", to_textbook(rate)}};
    rows.push_back(std::move(theirs));
  }
  return rows;
}

absl::StatusOr<std::vector<Result>> Mixes(Context& context, const std::string& base,
                                          const std::string (&programs)[2]) {
  const double seconds = context.quick ? 0.3 : 5.0, warmup = context.quick ? 0.3 : 2.0;
  ZKR_ASSIGN_OR_RETURN(Result ours, OurMix(context, absl::Seconds(seconds)));
  const double ours_rate = FigureOf(ours, "acquisitions_per_s");
  std::vector<Result> rows{ours};
  const char* ids[] = {"8crw", "8krw"};
  const char* recipes[] = {"InterProcessReadWriteLock", "ReadLock/WriteLock"};
  for (int i = 0; i < 2; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::string line,
                         RunOne(programs[i], "rwmix", context, base, seconds, warmup));
    Result theirs(ids[i],
                  absl::StrCat("read/write mix, same: ", LibraryOf(line), " ", recipes[i]));
    theirs.in_process = false;
    if (JsonField(line, "stalled") == "true") {
      // Kazoo 2.8.0: a reader can wait on a writer queued after it while
      // that writer waits on it (kazoo issue 649); there is no rate.
      absl::StrAppend(&theirs.name, " STALLED: a waiter waited 5 s (kazoo issue 649)");
      theirs.figures = {{"stalled", 1}};
      rows.push_back(std::move(theirs));
      continue;
    }
    ZKR_ASSIGN_OR_RETURN(double rate, Number(line, "acquisitions_per_s"));
    ZKR_ASSIGN_OR_RETURN(double readers, Number(line, "max_concurrent_readers"));
    ZKR_ASSIGN_OR_RETURN(double violations, Number(line, "violations"));
    theirs.ratio = ours_rate > 0 ? rate / ours_rate : 0;
    theirs.figures = {{"acquisitions_per_s", rate},
                      {"max_concurrent_readers", readers},
                      {"violations", violations}};
    rows.push_back(std::move(theirs));
  }
  return rows;
}

absl::StatusOr<std::vector<Result>> Failovers(Context& context, const std::string& base,
                                              const std::string (&programs)[2]) {
  const int rounds = context.quick ? 3 : 50, warmup = context.quick ? 1 : 10;
  const double floor = context.floor_failover_p50_us;
  ZKR_ASSIGN_OR_RETURN(Result ours, FailoverRow(context));
  ours.id = "8e";
  ours.name = "election failover, leader's session closed -> new leader told: zkrecipes";
  ours.target.clear();  // row 7 judges it; here it is the reference
  ours.met = true;
  ours.shortfalls.clear();
  std::vector<Result> rows{ours};
  const char* ids[] = {"8ce", "8ke"};
  const char* recipes[] = {"LeaderLatch (isLeader)", "Election (func runs)"};
  for (int i = 0; i < 2; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::string line,
                         RunOne(programs[i], "failover", context, base, rounds, warmup));
    Result theirs(ids[i],
                  absl::StrCat("election failover, same: ", LibraryOf(line), " ", recipes[i]));
    theirs.in_process = false;
    ZKR_ASSIGN_OR_RETURN(theirs.p50_us, Number(line, "p50_us"));
    ZKR_ASSIGN_OR_RETURN(theirs.p99_us, Number(line, "p99_us"));
    theirs.ratio = floor > 0 ? theirs.p50_us / floor : 0;
    ZKR_ASSIGN_OR_RETURN(double slow, Number(line, "share_over_50ms"));
    theirs.figures = {{"ratio_to_zkrecipes", ours.p50_us > 0 ? theirs.p50_us / ours.p50_us : 0},
                      {"share_over_50ms", slow}};
    rows.push_back(std::move(theirs));
  }
  return rows;
}

}  // namespace

absl::StatusOr<std::vector<Result>> OtherRecipes(Context& context, const std::string& base,
                                                 const std::string& java,
                                                 const std::string& python) {
  const std::string programs[2] = {java, python};
  std::vector<Result> rows;
  for (auto recipe : {Semaphores, Mixes, Failovers, Barriers, Groups, MultiLocks}) {
    ZKR_ASSIGN_OR_RETURN(std::vector<Result> some, recipe(context, base, programs));
    rows.insert(rows.end(), some.begin(), some.end());
  }
  return rows;
}

}  // namespace bench
}  // namespace zkr
