// Workload 9: a semaphore of 4 leases shared by 16 sessions, each taking a
// lease and giving it back at once in a loop: acquisitions per second of
// zkr::Semaphore at the defaults, as a ratio to the textbook semaphore on
// the bare C client in the same run (its waiters watch the directory's
// children: every change wakes them all), and the watch events each
// acquisition costs the server.
#include <atomic>
#include <climits>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/macros.h"
#include "tools/bench/raw_floor.h"
#include "tools/bench/workloads.h"
#include "zkrecipes/semaphore.h"

namespace zkr {
namespace bench {
namespace {

constexpr int kLeases = 4;
constexpr int kSessions = 16;

struct Taker {
  std::function<absl::Status()> acquire;
  std::function<absl::Status()> release;
};

int64_t WatchEventsFired(const Context& context) {
  return ServerCounter(context.connect, "zk_sum_node_deleted_watch_count") +
         ServerCounter(context.connect, "zk_sum_node_changed_watch_count") +
         ServerCounter(context.connect, "zk_sum_node_children_watch_count");
}

// Every taker loops acquire -> release at once: `rounds` times, or with
// `run_for` set, until that much time has passed.
absl::StatusOr<Result> ThroughputRow(Context& context, const char* id, const char* name,
                                     std::vector<Taker>& takers, absl::Duration hold,
                                     absl::Duration run_for) {
  const int rounds = run_for > absl::ZeroDuration() ? INT_MAX : context.quick ? 5 : 50;
  std::atomic<int> errors{0};
  std::atomic<int64_t> acquisitions{0};
  const int64_t events = WatchEventsFired(context);
  const int64_t requests = ServerCounter(context.connect, "zk_packets_received");
  const absl::Duration cpu = ProcessCpuTime();
  const absl::Time start = absl::Now();
  const absl::Time end = run_for > absl::ZeroDuration() ? start + run_for : absl::InfiniteFuture();
  std::vector<std::thread> threads;
  for (Taker& taker : takers) {
    threads.emplace_back([&taker, &errors, &acquisitions, rounds, hold, end] {
      for (int round = 0; round < rounds && absl::Now() < end; ++round) {
        if (!taker.acquire().ok()) return (void)++errors;
        ++acquisitions;
        if (hold > absl::ZeroDuration()) absl::SleepFor(hold);
        if (!taker.release().ok()) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  const absl::Duration wall = absl::Now() - start;
  if (errors > 0) return absl::InternalError(absl::StrCat("semaphore row ", id, ": errors"));
  const double total = double(acquisitions.load());
  Result r{id, name};
  r.figures = {{"acquisitions_per_s", total / absl::ToDoubleSeconds(wall)},
               {"watch_events_per_acquisition", (WatchEventsFired(context) - events) / total},
               {"requests_per_acquisition",
                (ServerCounter(context.connect, "zk_packets_received") - requests) / total},
               {"client_cpu_us_per_acquisition",
                absl::ToDoubleMicroseconds(ProcessCpuTime() - cpu) / total}};
  return r;
}

absl::StatusOr<Result> RawRow(Context& context, const char* id, const char* name,
                              absl::Duration hold, absl::Duration run_for = {},
                              RawTextbookSemaphore::Rule rule = {}) {
  const std::string path = absl::StrCat(context.root, "/semaphore-", id);
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> admin, Connect(context));
  CreateOptions parents;
  parents.make_parents = true;
  ZKR_RETURN_IF_ERROR(admin->Create(path, "", CreateMode::kPersistent, parents).status());
  std::vector<std::unique_ptr<RawClient>> clients;
  std::vector<std::unique_ptr<RawTextbookSemaphore>> semaphores;
  std::vector<Taker> takers;
  for (int i = 0; i < kSessions; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<RawClient> client, RawClient::Connect(context.connect));
    semaphores.push_back(std::make_unique<RawTextbookSemaphore>(*client, path, kLeases, rule));
    clients.push_back(std::move(client));
    RawTextbookSemaphore* semaphore = semaphores.back().get();
    takers.push_back({[semaphore] { return semaphore->Acquire(); },
                      [semaphore] { return semaphore->Release(); }});
  }
  ZKR_ASSIGN_OR_RETURN(Result r, ThroughputRow(context, id, name, takers, hold, run_for));
  semaphores.clear();
  clients.clear();
  ZKR_RETURN_IF_ERROR(admin->Delete(path));
  return r;
}

absl::StatusOr<Result> LibraryRow(Context& context, const char* id, const char* name,
                                  absl::Duration hold, absl::Duration run_for = {}) {
  const std::string path = absl::StrCat(context.root, "/semaphore-", id);
  ZKR_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Session>> sessions,
                       ConnectMany(context, kSessions));
  std::vector<std::unique_ptr<Semaphore>> semaphores;
  std::vector<std::optional<LockGuard>> leases(kSessions);
  std::vector<Taker> takers;
  for (int i = 0; i < kSessions; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Semaphore> semaphore,
                         Semaphore::Create(*sessions[i], path, kLeases));
    semaphores.push_back(std::move(semaphore));
    Semaphore* mine = semaphores.back().get();
    std::optional<LockGuard>* lease = &leases[i];
    takers.push_back({[mine, lease]() -> absl::Status {
                        ZKR_ASSIGN_OR_RETURN(LockGuard guard, mine->Acquire());
                        lease->emplace(std::move(guard));
                        return absl::OkStatus();
                      },
                      [lease] {
                        absl::Status released = (*lease)->Release();
                        lease->reset();
                        return released;
                      }});
  }
  ZKR_ASSIGN_OR_RETURN(Result r, ThroughputRow(context, id, name, takers, hold, run_for));
  semaphores.clear();
  ZKR_RETURN_IF_ERROR(DeleteLockDirectory(*sessions[0], path));
  return r;
}

// Ours against the raw one with the same hold; the ratio of their rates.
absl::StatusOr<std::vector<Result>> Pair(Context& context, const char* id, const char* name,
                                         const char* raw_id, const char* raw_name,
                                         absl::Duration hold) {
  ZKR_ASSIGN_OR_RETURN(Result raw, RawRow(context, raw_id, raw_name, hold));
  ZKR_ASSIGN_OR_RETURN(Result ours, LibraryRow(context, id, name, hold));
  const double raw_rate = FigureOf(raw, "acquisitions_per_s");
  if (raw_rate > 0) ours.ratio = FigureOf(ours, "acquisitions_per_s") / raw_rate;
  ours.target = ">= 1.0x the raw semaphore's acquisitions/s";
  ours.Require(ours.ratio >= 1.0, absl::StrFormat("%.2fx the raw semaphore's rate", ours.ratio));
  return std::vector<Result>{ours, raw};
}

}  // namespace

absl::StatusOr<std::vector<Result>> SemaphoreContention(Context& context) {
  // Released at once: the handoff itself. Then held 5 ms, as a lease on a
  // connection or a job slot is, where the wake-ups cost more than the wait.
  ZKR_ASSIGN_OR_RETURN(
      std::vector<Result> at_once,
      Pair(context, "9", "semaphore, 4 leases, 16 sessions (defaults)", "9t",
           "raw textbook semaphore, same (floor)", absl::ZeroDuration()));
  // The bound of a herd-free rule with parallel wake-ups (raw_floor.h,
  // kAhead), beside the released-at-once pair: row 9's rate against it too.
  ZKR_ASSIGN_OR_RETURN(Result ahead,
                       RawRow(context, "9n", "raw N-places-ahead semaphore, same (herd-free bound)",
                              absl::ZeroDuration(), {}, RawTextbookSemaphore::Rule::kAhead));
  const double ahead_rate = FigureOf(ahead, "acquisitions_per_s");
  if (ahead_rate > 0) {
    at_once[0].figures.push_back(
        {"ratio_to_9n", FigureOf(at_once[0], "acquisitions_per_s") / ahead_rate});
  }
  at_once.push_back(ahead);
  ZKR_ASSIGN_OR_RETURN(
      std::vector<Result> held,
      Pair(context, "9h", "semaphore, each lease held 5 ms", "9ht",
           "raw textbook semaphore, held 5 ms (floor)", absl::Milliseconds(5)));
  at_once.insert(at_once.end(), held.begin(), held.end());
  return at_once;
}

absl::StatusOr<Result> SemaphoreForTime(Context& context, bool textbook, absl::Duration run_for) {
  return textbook ? RawRow(context, "9t", "raw textbook semaphore", absl::ZeroDuration(), run_for)
                  : LibraryRow(context, "9", "semaphore (defaults)", absl::ZeroDuration(), run_for);
}

}  // namespace bench
}  // namespace zkr
