// Workload 8's double-barrier and multi-lock rows (issue 37, item 6's
// remainder): a round of 4 sessions entering and leaving a double barrier
// (8b; Curator DistributedDoubleBarrier 8cb, Kazoo DoubleBarrier 8kb), and
// the uncontended cycle of a multi-lock over 4 locks from one session (8ml;
// Curator InterProcessMultiLock 8cml; Kazoo has no multi-lock). Each other
// library's p50 is a ratio to ours measured just before it (lower is
// better).
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/macros.h"
#include "tools/bench/compare.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/multi_lock.h"

namespace zkr {
namespace bench {
namespace {

constexpr int kMembers = 4, kParts = 4;

// Deletes `path` and its children, if there.
absl::Status DeleteTree(Session& session, const std::string& path) {
  absl::StatusOr<std::vector<std::string>> children = session.GetChildren(path);
  if (absl::IsNotFound(children.status())) return absl::OkStatus();
  ZKR_RETURN_IF_ERROR(children.status());
  for (const std::string& child : *children) {
    absl::Status deleted = session.Delete(absl::StrCat(path, "/", child));
    if (!deleted.ok() && !absl::IsNotFound(deleted)) return deleted;
  }
  return DeleteLockDirectory(session, path);
}

// One row per other library's line, its p50 as a ratio to `ours`.
absl::Status AddTheirs(const std::string& line, const char* id, const char* recipe,
                       const char* what, const Result& ours, std::vector<Result>* rows) {
  Result theirs(id, absl::StrCat(what, ", same: ", LibraryOf(line), " ", recipe));
  theirs.in_process = false;
  ZKR_ASSIGN_OR_RETURN(theirs.p50_us, Number(line, "p50_us"));
  ZKR_ASSIGN_OR_RETURN(theirs.p99_us, Number(line, "p99_us"));
  theirs.ratio = ours.p50_us > 0 ? theirs.p50_us / ours.p50_us : 0;
  rows->push_back(std::move(theirs));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Result>> Barriers(Context& context, const std::string& base,
                                             const std::string (&programs)[2]) {
  const int rounds = context.quick ? 3 : 30, warmup = context.quick ? 1 : 5;
  const std::string path = context.root + "/compare-barrier";
  ZKR_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Session>> sessions,
                       ConnectMany(context, kMembers));
  Samples samples;
  for (int round = -warmup; round < rounds; ++round) {
    const std::string round_path = absl::StrCat(path, "/r", round + warmup);
    std::vector<absl::Status> status(kMembers);
    std::vector<std::thread> threads;
    const absl::Time start = absl::Now();
    for (int i = 0; i < kMembers; ++i) {
      threads.emplace_back([&, i] {
        absl::StatusOr<std::unique_ptr<DoubleBarrier>> barrier =
            DoubleBarrier::Create(*sessions[i], round_path, absl::StrCat("m", i), kMembers);
        status[i] = barrier.status();
        if (status[i].ok()) status[i] = (*barrier)->Enter(absl::Seconds(30));
        if (status[i].ok()) status[i] = (*barrier)->Leave(absl::Seconds(30));
      });
    }
    for (auto& t : threads) t.join();
    if (round >= 0) samples.Add(absl::Now() - start);
    for (const absl::Status& s : status) ZKR_RETURN_IF_ERROR(s);
    ZKR_RETURN_IF_ERROR(DeleteTree(*sessions[0], round_path));
  }
  ZKR_RETURN_IF_ERROR(DeleteLockDirectory(*sessions[0], path));
  Result ours = LatencyRow(
      "8b", "double barrier, 4 sessions enter then leave, per round: zkrecipes", samples);
  ours.ratio = 1.0;
  std::vector<Result> rows{ours};
  const char* ids[] = {"8cb", "8kb"};
  const char* recipes[] = {"DistributedDoubleBarrier", "DoubleBarrier"};
  for (int i = 0; i < 2; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::string line,
                         RunOne(programs[i], "barrier", context, base, rounds, warmup));
    if (JsonField(line, "stalled") == "true") {
      // Kazoo 2.8.0: a round can stall for good (compare/README.md). The
      // rounds before it are reported, and the row says where it stalled.
      ZKR_ASSIGN_OR_RETURN(double done, Number(line, "count"));
      ZKR_ASSIGN_OR_RETURN(double round, Number(line, "stalled_round"));
      Result theirs(ids[i], absl::StrCat("double barrier, same: ", LibraryOf(line), " ",
                                         recipes[i], " STALLED in round ", round, " (",
                                         JsonField(line, "stalled_in"), ")"));
      theirs.in_process = false;
      theirs.figures = {{"stalled", 1}, {"rounds_done", done}};
      if (done > 0) {
        ZKR_ASSIGN_OR_RETURN(theirs.p50_us, Number(line, "p50_us"));
        ZKR_ASSIGN_OR_RETURN(theirs.p99_us, Number(line, "p99_us"));
        theirs.ratio = ours.p50_us > 0 ? theirs.p50_us / ours.p50_us : 0;
      }
      rows.push_back(std::move(theirs));
      continue;
    }
    ZKR_RETURN_IF_ERROR(AddTheirs(line, ids[i], recipes[i], "double barrier", ours, &rows));
  }
  return rows;
}

absl::StatusOr<std::vector<Result>> MultiLocks(Context& context, const std::string& base,
                                               const std::string (&programs)[2]) {
  const int cycles = context.quick ? 50 : 1000, warmup = context.quick ? 50 : 1000;
  const std::string path = context.root + "/compare-multilock";
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Connect(context));
  std::vector<LockPart> parts;
  for (int i = 0; i < kParts; ++i) parts.push_back({absl::StrCat(path, "/part-", i)});
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<MultiLock> lock, MultiLock::Create(*session, parts));
  Samples samples;
  for (int i = -warmup; i < cycles; ++i) {
    const absl::Time start = absl::Now();
    ZKR_ASSIGN_OR_RETURN(MultiLockGuard guard, lock->Acquire(absl::Seconds(30)));
    ZKR_RETURN_IF_ERROR(guard.Release());
    if (i >= 0) samples.Add(absl::Now() - start);
  }
  lock.reset();
  ZKR_RETURN_IF_ERROR(DeleteTree(*session, path));
  Result ours = LatencyRow(
      "8ml", "multi-lock of 4 write locks, uncontended acquire+release: zkrecipes (defaults)",
      samples);
  ours.ratio = 1.0;
  std::vector<Result> rows{ours};
  (void)programs[1];  // Kazoo has no multi-lock
  ZKR_ASSIGN_OR_RETURN(std::string line,
                       RunOne(programs[0], "multilock", context, base, cycles, warmup));
  ZKR_RETURN_IF_ERROR(AddTheirs(line, "8cml", "InterProcessMultiLock of 4 InterProcessMutexes",
                                "multi-lock", ours, &rows));
  return rows;
}

}  // namespace bench
}  // namespace zkr
