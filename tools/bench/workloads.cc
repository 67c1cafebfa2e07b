#include "tools/bench/workloads.h"

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "src/macros.h"
#include "tools/bench/alloc_count.h"
#include "tools/bench/raw_floor.h"
#include "tools/bench/waiting_count.h"
#include "tools/zkr/ledger.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace bench {

absl::StatusOr<std::unique_ptr<Session>> Connect(const Context& context,
                                                  std::shared_ptr<Observer> observer) {
  SessionOptions options;
  options.connect = context.connect;
  options.observer = std::move(observer);
  options.session_timeout = absl::Seconds(10);
  options.log_level = ClientLogLevel::kError;
  return Session::Connect(options);
}

// `n` sessions, each its own participant.
absl::StatusOr<std::vector<std::unique_ptr<Session>>> ConnectMany(
    const Context& context, int n,
    const std::function<std::shared_ptr<Observer>(int)>& observer_for) {
  std::vector<std::unique_ptr<Session>> sessions;
  for (int i = 0; i < n; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         Connect(context, observer_for ? observer_for(i) : nullptr));
    sessions.push_back(std::move(session));
  }
  return sessions;
}

// Deletes a lock's directory: a container, which the server may already
// have removed once it was empty (seen on the loopback ensemble).
absl::Status DeleteLockDirectory(Session& session, const std::string& path) {
  absl::Status deleted = session.Delete(path);
  return absl::IsNotFound(deleted) ? absl::OkStatus() : deleted;
}

// The figure `name` of `r`, or 0.
double FigureOf(const Result& r, absl::string_view name) {
  for (const auto& [key, value] : r.figures) {
    if (key == name) return value;
  }
  return 0;
}

// A latency row: p50/p99 of `samples` and, with a floor, p50 / floor p50.
Result LatencyRow(std::string id, std::string name, const Samples& samples,
                  double floor_p50_us) {
  Result r{std::move(id), std::move(name)};
  r.p50_us = samples.Quantile(0.5);
  r.p99_us = samples.Quantile(0.99);
  if (floor_p50_us > 0) r.ratio = r.p50_us / floor_p50_us;
  return r;
}

double CpuUsPerOp(absl::Duration cpu, int64_t ops) {
  return ops > 0 ? absl::ToDoubleMicroseconds(cpu) / ops : 0;
}

namespace {

// The bare protocol (no watch on the holder's own node), as other libraries'
// locks: exactly create + getChildren + delete per uncontended cycle.
LockOptions Bare() {
  LockOptions options;
  options.watch_own_node = false;
  return options;
}

// Requests the server received per cycle, from its packet counter.
double RequestsPerCycle(const Context& context, int64_t before, int cycles) {
  int64_t after = ServerCounter(context.connect, "zk_packets_received");
  return before < 0 || after < 0 ? -1 : double(after - before) / cycles;
}

}  // namespace

absl::StatusOr<std::vector<Result>> RawFloor(Context& context) {
  const int cycles = context.quick ? 50 : 2000;
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<RawClient> a, RawClient::Connect(context.connect));
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<RawClient> b, RawClient::Connect(context.connect));
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Connect(context));
  const std::string dir = context.root + "/raw";
  CreateOptions parents;
  parents.make_parents = true;
  ZKR_RETURN_IF_ERROR(session->Create(dir, "", CreateMode::kPersistent, parents).status());

  Samples warmup, cycle;
  ZKR_RETURN_IF_ERROR(RawCycles(*a, dir, cycles, &warmup));  // the server's JIT warms up
  absl::Duration cpu = ProcessCpuTime();
  absl::Time start = absl::Now();
  ZKR_RETURN_IF_ERROR(RawCycles(*a, dir, cycles, &cycle));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  cpu = ProcessCpuTime() - cpu;
  Samples async_cycle;
  absl::Duration async_cpu = ProcessCpuTime();
  ZKR_RETURN_IF_ERROR(RawAsyncCycles(*a, dir, cycles, &async_cycle));
  async_cpu = ProcessCpuTime() - async_cpu;
  // The floor is the faster of the two ways the C client offers.
  context.floor_cycle_p50_us = std::min(cycle.Quantile(0.5), async_cycle.Quantile(0.5));
  context.floor_cpu_us_per_cycle = std::min(CpuUsPerOp(cpu, cycles), CpuUsPerOp(async_cpu, cycles));
  // For reference: the same loop with the C client's default settings.
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<RawClient> defaults,
                       RawClient::Connect(context.connect, RawClient::Settings::kClientDefaults));
  Samples default_cycle;
  absl::Duration default_cpu = ProcessCpuTime();
  ZKR_RETURN_IF_ERROR(RawCycles(*defaults, dir, cycles, &default_cycle));
  default_cpu = ProcessCpuTime() - default_cpu;
  defaults->Close();

  const int pipelined_ops = context.quick ? 500 : 20000;
  absl::Duration pipelined_cpu = ProcessCpuTime();
  ZKR_ASSIGN_OR_RETURN(double ops, RawPipelined(*a, dir, pipelined_ops, 64));
  pipelined_cpu = ProcessCpuTime() - pipelined_cpu;
  context.floor_pipelined_ops_per_s = ops;

  Samples handoff;
  const int handoffs = context.quick ? 20 : 300;
  absl::Duration handoff_cpu = ProcessCpuTime();
  // On an ensemble each client talks to a member picked at random, and a
  // handoff's time depends on which (the leader's, a follower's): the rounds
  // are spread over four pairs of clients, as the contended rows spread
  // over eight sessions, so that one draw does not make the floor.
  const bool ensemble = absl::StrContains(context.connect, ',');
  const int pairs = ensemble ? 4 : 1;
  for (int pair = 0; pair < pairs; ++pair) {
    std::unique_ptr<RawClient> holder, waiter;
    if (pair > 0) {
      ZKR_ASSIGN_OR_RETURN(holder, RawClient::Connect(context.connect));
      ZKR_ASSIGN_OR_RETURN(waiter, RawClient::Connect(context.connect));
    }
    ZKR_RETURN_IF_ERROR(RawHandoff(pair > 0 ? *holder : *a, pair > 0 ? *waiter : *b, dir,
                                   handoffs / pairs, absl::ZeroDuration(), &handoff));
  }
  // The same after both sides sat idle for kFailoverSettle, as the
  // election's hand-over rows do (7y, 7l): an idle client and server wake
  // slower than ones that have just exchanged requests.
  Samples settled;
  const int settled_handoffs = context.quick ? 5 : 50;
  ZKR_RETURN_IF_ERROR(RawHandoff(*a, *b, dir, settled_handoffs, kFailoverSettle, &settled));
  context.floor_settled_handoff_p50_us = settled.Quantile(0.5);
  handoff_cpu = ProcessCpuTime() - handoff_cpu;
  context.floor_handoff_p50_us = handoff.Quantile(0.5);
  Samples failover;
  const int failovers = context.quick ? 5 : 50;
  absl::Duration failover_cpu = ProcessCpuTime();
  ZKR_RETURN_IF_ERROR(RawFailover(context.connect, *b, dir, failovers, &failover));
  failover_cpu = ProcessCpuTime() - failover_cpu;
  context.floor_failover_p50_us = failover.Quantile(0.5);
  ZKR_RETURN_IF_ERROR(session->Delete(dir));

  Result sync = LatencyRow("1", "raw create+getChildren+delete (sync C client)", cycle,
                           context.floor_cycle_p50_us);
  sync.figures = {{"cycles_per_s", cycles / seconds},
                  {"client_cpu_us_per_cycle", context.floor_cpu_us_per_cycle}};
  Result async = LatencyRow("1a", "raw create+getChildren+delete (async C client, chained)",
                            async_cycle, context.floor_cycle_p50_us);
  async.figures = {{"client_cpu_us_per_cycle", CpuUsPerOp(async_cpu, cycles)}};
  Result untuned = LatencyRow("1d", "raw sync cycle, C client default settings (DNS every poll)",
                              default_cycle, context.floor_cycle_p50_us);
  untuned.figures = {{"client_cpu_us_per_cycle", CpuUsPerOp(default_cpu, cycles)}};
  Result pipelined{"1p", "raw pipelined create+delete, 64 in flight"};
  pipelined.figures = {{"ops_per_s", ops},
                       {"client_cpu_us_per_op", CpuUsPerOp(pipelined_cpu, pipelined_ops)}};
  Result hand = LatencyRow("1h", "raw handoff: delete -> watch event -> getChildren", handoff);
  hand.figures = {{"client_cpu_us_per_handoff", CpuUsPerOp(handoff_cpu, handoffs)}};
  Result settled_hand =
      LatencyRow("1hs", "raw handoff after a 20 ms idle settle (as 7y and 7l start)", settled,
                 context.floor_handoff_p50_us);
  Result fail =
      LatencyRow("1f", "raw failover: session close -> watch event -> getChildren", failover);
  // Includes connecting each round's holder session.
  fail.figures = {{"client_cpu_us_per_failover", CpuUsPerOp(failover_cpu, failovers)}};
  return std::vector<Result>{sync, async, untuned, pipelined, hand, settled_hand, fail};
}

namespace {

// What a user's metrics adapter does at the least: count every event (on
// the session's dispatcher thread).
class CountingObserver : public Observer {
 public:
  void OnQueued(const AcquisitionQueued&) override { ++events_; }
  void OnHandoff(const zkr::Handoff&) override { ++events_; }
  void OnGranted(const AcquisitionGranted&) override { ++events_; }
  void OnAcquireFailed(const AcquisitionFailed&) override { ++events_; }
  void OnReleased(const Released&) override { ++events_; }
  void OnLost(const HoldLost&) override { ++events_; }
  void OnSessionState(const SessionStateChange&) override { ++events_; }
  void OnRetry(const Retry&) override { ++events_; }
  uint64_t events() const { return events_.load(); }

 private:
  std::atomic<uint64_t> events_{0};
};

}  // namespace

// Row 2m: a MultiLock of 4 uncontended write parts, Acquire+Release, at
// default options, as a ratio to the single write lock's default cycle
// (2d's) measured in blocks paired with it (and with raw cycles, for the
// ratio to the textbook floor beside it). The parts' creates and listings
// go out together, and so do their deletes: about one single cycle.
absl::StatusOr<Result> MultiLockRow(Session& session, RawClient& raw, const Context& context,
                                    const std::string& raw_dir, int cycles, int block) {
  const int kParts = 4;
  const std::string base = absl::StrCat(context.root, "/uncontended-2m");
  std::vector<LockPart> parts;
  for (int i = 0; i < kParts; ++i) {
    parts.push_back({absl::StrCat(base, "-part", i), LockMode::kWrite});
  }
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<MultiLock> multi, MultiLock::Create(session, parts));
  const std::string single_path = absl::StrCat(base, "-single");
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<SharedLock> single,
                       SharedLock::Create(session, single_path, LockOptions{}));
  auto multi_cycles = [&](int n, Samples* samples) -> absl::Status {
    for (int i = 0; i < n; ++i) {
      absl::Time start = absl::Now();
      ZKR_ASSIGN_OR_RETURN(MultiLockGuard guard, multi->Acquire());
      ZKR_RETURN_IF_ERROR(guard.Release());
      samples->Add(absl::Now() - start);
    }
    return absl::OkStatus();
  };
  auto single_cycles = [&](int n, Samples* samples) -> absl::Status {
    for (int i = 0; i < n; ++i) {
      absl::Time start = absl::Now();
      ZKR_ASSIGN_OR_RETURN(LockGuard guard, single->AcquireWrite());
      ZKR_RETURN_IF_ERROR(guard.Release());
      samples->Add(absl::Now() - start);
    }
    return absl::OkStatus();
  };
  // First use creates the directories: not part of the steady state.
  Samples unused;
  ZKR_RETURN_IF_ERROR(multi_cycles(1, &unused));
  ZKR_RETURN_IF_ERROR(single_cycles(1, &unused));
  const int64_t packets = ServerCounter(context.connect, "zk_packets_received");
  ZKR_RETURN_IF_ERROR(multi_cycles(block, &unused));
  const double requests = RequestsPerCycle(context, packets, block);
  // The joint floor: the fewest requests these parts allow (raw_floor.h).
  std::vector<std::string> joint_dirs;
  for (int i = 0; i < kParts; ++i) {
    joint_dirs.push_back(absl::StrCat(raw_dir, "-part", i));
    ZKR_RETURN_IF_ERROR(
        session.Create(joint_dirs.back(), "", CreateMode::kPersistent, CreateOptions{}).status());
  }
  Samples samples, single_samples, floor, joint, counted_joint;
  absl::Duration cpu;
  for (int done = 0; done < cycles; done += block) {
    ZKR_RETURN_IF_ERROR(single_cycles(block, &single_samples));
    const absl::Duration t = ProcessCpuTime();
    ZKR_RETURN_IF_ERROR(multi_cycles(block, &samples));
    cpu += ProcessCpuTime() - t;
    ZKR_RETURN_IF_ERROR(RawCycles(raw, raw_dir, block, &floor));
    ZKR_RETURN_IF_ERROR(RawJointCycles(raw, joint_dirs, block, &joint));
    ZKR_RETURN_IF_ERROR(RawJointCycles(raw, joint_dirs, block, &counted_joint, /*counted=*/true));
  }
  for (const std::string& dir : joint_dirs) ZKR_RETURN_IF_ERROR(session.Delete(dir));
  // The row's ratio is to the single lock's paired cycle, not to a raw floor.
  Result r = LatencyRow("2m", "multi-lock of 4 write parts, default options (uncontended)",
                        samples, single_samples.Quantile(0.5));
  const double to_single = r.ratio;
  r.target = "<= 1.3x single cycle (2d, paired)";
  r.Require(to_single <= 1.3,
            absl::StrFormat("p50 %.2fx > 1.3x the single lock's cycle", to_single));
  r.figures = {{"single_cycle_p50_us", single_samples.Quantile(0.5)},
               {"ratio_to_single_cycle", to_single},
               {"paired_floor_p50_us", floor.Quantile(0.5)},
               {"ratio_to_paired_floor", samples.Quantile(0.5) / floor.Quantile(0.5)},
               {"joint_floor_p50_us", joint.Quantile(0.5)},
               {"ratio_to_joint_floor", samples.Quantile(0.5) / joint.Quantile(0.5)},
               {"counted_joint_floor_p50_us", counted_joint.Quantile(0.5)},
               {"ratio_to_counted_joint_floor",
                samples.Quantile(0.5) / counted_joint.Quantile(0.5)},
               {"counted_joint_floor_to_single_cycle",
                counted_joint.Quantile(0.5) / single_samples.Quantile(0.5)},
               {"joint_floor_to_single_cycle",
                joint.Quantile(0.5) / single_samples.Quantile(0.5)},
               {"requests_per_cycle", requests},
               {"client_cpu_us_per_cycle", CpuUsPerOp(cpu, cycles)}};
  for (const LockPart& part : parts) ZKR_RETURN_IF_ERROR(DeleteLockDirectory(session, part.path));
  ZKR_RETURN_IF_ERROR(DeleteLockDirectory(session, single_path));
  return r;
}

absl::StatusOr<std::vector<Result>> Uncontended(Context& context) {
  const int cycles = context.quick ? 50 : 2000;
  // Lock cycles alternate with raw cycles in blocks, so that both see the
  // same server (JIT, garbage collector, page cache) and the same neighbours
  // on a shared machine: the ratio is to this paired floor.
  const int kBlock = 50;
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Connect(context));
  // Row 2o: the headline's session with a counting observer (its cost).
  auto counting = std::make_shared<CountingObserver>();
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> observed, Connect(context, counting));
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<RawClient> raw, RawClient::Connect(context.connect));
  const std::string raw_dir = context.root + "/uncontended-raw";
  CreateOptions parents;
  parents.make_parents = true;
  ZKR_RETURN_IF_ERROR(session->Create(raw_dir, "", CreateMode::kPersistent, parents).status());
  std::vector<Result> results;
  struct Variant {
    const char* id;
    const char* name;
    bool read;
    bool exclusive;
    bool own_watch;
    bool observed;  // on the session with the counting observer
  } variants[] = {
      {"2w", "write lock acquire+release (uncontended)", false, false, false, false},
      {"2r", "read lock acquire+release (uncontended)", true, false, false, false},
      {"2x", "exclusive lock acquire+release (uncontended)", false, true, false, false},
      {"2d", "write lock, default options (the headline; + own-node watch)", false, false, true,
       false},
      {"2o", "write lock, default options + a counting observer (its cost)", false, false, true,
       true},
  };
  for (const Variant& v : variants) {
    const std::string path = absl::StrCat(context.root, "/uncontended-", v.id);
    LockOptions options = Bare();
    options.watch_own_node = v.own_watch;
    Session& on = v.observed ? *observed : *session;
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<SharedLock> shared,
                         SharedLock::Create(on, path, options));
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<ExclusiveLock> exclusive,
                         ExclusiveLock::Create(on, path, options));
    auto acquire = [&]() {
      if (v.exclusive) return exclusive->Acquire();
      return v.read ? shared->AcquireRead() : shared->AcquireWrite();
    };
    // Row 2o pairs each block with the same lock on the unobserved session.
    std::unique_ptr<SharedLock> unobserved;
    if (v.observed) {
      ZKR_ASSIGN_OR_RETURN(unobserved,
                           SharedLock::Create(*session, absl::StrCat(path, "-unobserved"), options));
    }
    auto cycles_of = [](absl::FunctionRef<absl::StatusOr<LockGuard>()> take, int n,
                        Samples* samples) -> absl::Status {
      for (int i = 0; i < n; ++i) {
        absl::Time start = absl::Now();
        ZKR_ASSIGN_OR_RETURN(LockGuard guard, take());
        ZKR_RETURN_IF_ERROR(guard.Release());
        samples->Add(absl::Now() - start);
      }
      return absl::OkStatus();
    };
    auto lock_cycles = [&](int n, Samples* samples) { return cycles_of(acquire, n, samples); };
    // First use creates the directory: not part of the steady state. Then
    // requests per cycle, from the server's packet counter, lock cycles only.
    Samples unused;
    ZKR_RETURN_IF_ERROR(lock_cycles(1, &unused));
    const int64_t packets = ServerCounter(context.connect, "zk_packets_received");
    const uint64_t allocations = CxxAllocations();
    ZKR_RETURN_IF_ERROR(lock_cycles(kBlock, &unused));
    const double allocations_per_cycle =
        static_cast<double>(CxxAllocations() - allocations) / kBlock;
    const double requests = RequestsPerCycle(context, packets, kBlock);

    // Two floors, each paired block by block: the textbook cycle (create,
    // then list, then delete: three waits) and the pipelined one (the
    // listing sent behind the create: two waits), which the library's
    // acquire follows.
    Samples samples, floor, pipelined_floor, returning_floor, unobserved_samples;
    absl::Duration cpu, floor_cpu, unobserved_cpu;
    const uint64_t events_before = counting->events();
    for (int done = 0; done < cycles; done += kBlock) {
      if (unobserved != nullptr) {
        const absl::Duration t = ProcessCpuTime();
        ZKR_RETURN_IF_ERROR(
            cycles_of([&] { return unobserved->AcquireWrite(); }, kBlock, &unobserved_samples));
        unobserved_cpu += ProcessCpuTime() - t;
      }
      absl::Duration t0 = ProcessCpuTime();
      ZKR_RETURN_IF_ERROR(RawCycles(*raw, raw_dir, kBlock, &floor));
      absl::Duration t1 = ProcessCpuTime();
      ZKR_RETURN_IF_ERROR(lock_cycles(kBlock, &samples));
      floor_cpu += t1 - t0;
      cpu += ProcessCpuTime() - t1;
      ZKR_RETURN_IF_ERROR(RawPipelinedCycles(*raw, raw_dir, kBlock, &pipelined_floor));
      ZKR_RETURN_IF_ERROR(RawPipelinedReturningCycles(*raw, raw_dir, kBlock, &returning_floor));
    }
    Result r = LatencyRow(v.id, v.name, samples, floor.Quantile(0.5));
    const double to_pipelined = samples.Quantile(0.5) / pipelined_floor.Quantile(0.5);
    const double cpu_ratio = absl::FDivDuration(cpu, floor_cpu);
    const double cpu_us = CpuUsPerOp(cpu, cycles);
    if (v.observed) {  // the observer's cost: against 2d's lock, block by block
      const double to_unobserved = samples.Quantile(0.5) / unobserved_samples.Quantile(0.5);
      r.target = "p50 <= 1.05x unobserved (paired)";
      r.Require(to_unobserved <= 1.05,
                absl::StrFormat("p50 %.2fx > 1.05x the unobserved lock", to_unobserved));
      r.figures = {{"unobserved_p50_us", unobserved_samples.Quantile(0.5)},
                   {"ratio_to_unobserved", to_unobserved},
                   {"client_cpu_us_per_cycle_over_unobserved",
                    cpu_us - CpuUsPerOp(unobserved_cpu, cycles)},
                   {"observer_events_per_cycle",
                    static_cast<double>(counting->events() - events_before) / cycles}};
    } else if (v.own_watch) {  // the defaults: the headline
      r.target = "<= 0.85x textbook, <= 1.05x pipelined floor";
      r.Require(r.ratio <= 0.85, absl::StrFormat("p50 %.2fx > 0.85x the textbook floor", r.ratio));
      r.Require(to_pipelined <= 1.05,
                absl::StrFormat("p50 %.2fx > 1.05x the pipelined floor", to_pipelined));
    } else {
      r.target = "<= 1.05x pipelined floor, 3 requests";
      r.Require(to_pipelined <= 1.05,
                absl::StrFormat("p50 %.2fx > 1.05x the pipelined floor", to_pipelined));
      r.Require(requests < 0 || requests < 3.05,
                absl::StrFormat("%.2f requests/cycle > 3", requests));
    }
    if (!v.observed) {
      r.Require(cpu_ratio <= 1.3, absl::StrFormat("client CPU %.2fx > 1.3x raw", cpu_ratio));
    }
    r.figures.insert(r.figures.end(), {{"requests_per_cycle", requests},
                 {"cxx_allocations_per_cycle", allocations_per_cycle},
                 {"paired_floor_p50_us", floor.Quantile(0.5)},
                 {"pipelined_floor_p50_us", pipelined_floor.Quantile(0.5)},
                 {"ratio_to_pipelined_floor", to_pipelined},
                 {"returning_floor_p50_us", returning_floor.Quantile(0.5)},
                 {"ratio_to_returning_floor",
                  samples.Quantile(0.5) / returning_floor.Quantile(0.5)},
                 {"client_cpu_us_per_cycle", cpu_us},
                 {"cpu_ratio_to_raw", cpu_ratio}});
    results.push_back(r);
    ZKR_RETURN_IF_ERROR(DeleteLockDirectory(*session, path));
    if (unobserved != nullptr) {
      ZKR_RETURN_IF_ERROR(DeleteLockDirectory(*session, absl::StrCat(path, "-unobserved")));
    }
  }
  ZKR_ASSIGN_OR_RETURN(Result multi, MultiLockRow(*session, *raw, context, raw_dir, cycles, kBlock));
  results.push_back(std::move(multi));
  ZKR_RETURN_IF_ERROR(session->Delete(raw_dir));
  return results;
}

namespace {

// `sessions` writers on one lock; each holder releases at once and queues
// again only after the next one is in, so each sample is the handoff
// itself: release call -> the next writer's acquisition returns. With two
// sessions the waiter's listing shows one blocker (the floor's shape: one
// holder, one waiter); with eight it shows about seven.

// What one contender thread needs: a blocking acquire and a release.
struct Contender {
  std::function<absl::Status()> acquire;
  std::function<absl::Status()> release;
};

// `sessions_count` contenders made by `make(i)` on one lock; each holder
// releases at once and queues again only after the next one is in, so each
// sample is the handoff itself: release call -> the next acquisition
// returns.
absl::StatusOr<Result> ContendedRow(Context& context, const char* id, const char* name,
                                    int sessions_count,
                                    const std::function<absl::StatusOr<Contender>(int)>& make,
                                    WaitingCount& waiting,
                                    const std::function<void(int)>& caught_up = nullptr) {
  const int rounds = context.quick ? 5 : (sessions_count > 2 ? 100 : 400);
  std::vector<Contender> contenders;
  for (int i = 0; i < sessions_count; ++i) {
    ZKR_ASSIGN_OR_RETURN(Contender c, make(i));
    contenders.push_back(std::move(c));
  }
  absl::Mutex mu;
  Samples samples;
  std::vector<int> remaining(sessions_count, rounds);  // guarded by mu
  std::optional<absl::Time> released_at;  // guarded by mu
  int acquisitions = 0;                    // guarded by mu
  absl::Time last_acquired;                // guarded by mu
  std::atomic<int> errors{0};
  absl::Duration cpu = ProcessCpuTime();
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (int i = 0; i < sessions_count; ++i) {
    threads.emplace_back([&, i] {
      Contender& me = contenders[i];
      for (int round = 0; round < rounds; ++round) {
        absl::Status acquired_ok = me.acquire();
        absl::Time acquired = absl::Now();
        if (!acquired_ok.ok()) return (void)++errors;
        int seen, coming = 0;
        {
          absl::MutexLock l(&mu);
          if (released_at.has_value()) samples.Add(acquired - *released_at);
          seen = ++acquisitions;
          last_acquired = acquired;
          --remaining[i];
          for (int j = 0; j < sessions_count; ++j) coming += j != i && remaining[j] > 0;
        }
        // Everyone still to come waits behind us, its watch set (waiting_count.h).
        const int last = waiting.AwaitAtLeast(coming, absl::Seconds(5));
        if (coming > 0 && last >= 0 && caught_up) caught_up(last);
        {
          absl::MutexLock l(&mu);
          released_at = absl::Now();
        }
        if (!me.release().ok()) ++errors;
        // Wait for the next holder (bounded: the last holder has no next).
        absl::MutexLock l(&mu);
        auto next_in = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return acquisitions > seen; };
        mu.AwaitWithTimeout(absl::Condition(&next_in), absl::Seconds(5));
      }
    });
  }
  for (auto& t : threads) t.join();
  // Up to the last acquisition: the last holder's wait for a next one
  // times out.
  const absl::Duration wall = last_acquired - start;
  cpu = ProcessCpuTime() - cpu;
  if (errors > 0) return absl::InternalError(absl::StrCat("contended row ", id, ": errors"));
  Result r = LatencyRow(id, name, samples, context.floor_handoff_p50_us);
  const int64_t total = int64_t(sessions_count) * rounds;
  r.figures = {{"acquisitions_per_s", total / absl::ToDoubleSeconds(wall)},
               {"client_cpu_us_per_acquisition", CpuUsPerOp(cpu, total)}};
  return r;
}

absl::StatusOr<Result> OneHandoffRow(Context& context, const char* id, const char* name,
                                     int sessions_count, LockOptions options) {
  const std::string path = absl::StrCat(context.root, "/handoff-", id);
  WaitingCount waiting;
  ZKR_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Session>> sessions,
                       ConnectMany(context, sessions_count, [&waiting](int i) {
                         return std::make_shared<WaitingObserver>(waiting, i);
                       }));
  std::vector<std::unique_ptr<SharedLock>> locks;
  std::vector<std::optional<LockGuard>> guards(sessions_count);
  for (int i = 0; i < sessions_count; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<SharedLock> lock,
                         SharedLock::Create(*sessions[i], path, options));
    locks.push_back(std::move(lock));
  }
  auto make = [&](int i) -> absl::StatusOr<Contender> {
    Contender c;
    c.acquire = [&, i]() -> absl::Status {
      ZKR_ASSIGN_OR_RETURN(LockGuard guard, locks[i]->AcquireWrite());
      guards[i].emplace(std::move(guard));
      return absl::OkStatus();
    };
    c.release = [&, i]() {
      absl::Status s = guards[i]->Release();
      guards[i].reset();
      return s;
    };
    return c;
  };
  // A round trip on the session that queued last: its watch is set then.
  auto caught_up = [&](int who) { (void)sessions[who]->Exists(path); };
  ZKR_ASSIGN_OR_RETURN(Result r,
                       ContendedRow(context, id, name, sessions_count, make, waiting, caught_up));
  locks.clear();
  ZKR_RETURN_IF_ERROR(DeleteLockDirectory(*sessions[0], path));
  return r;
}

// The same contention on the textbook lock over the bare C client.
absl::StatusOr<Result> RawTextbookRow(Context& context, int sessions_count) {
  const std::string path = context.root + "/handoff-raw";
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> admin, Connect(context));
  CreateOptions parents;
  parents.make_parents = true;
  ZKR_RETURN_IF_ERROR(admin->Create(path, "", CreateMode::kPersistent, parents).status());
  std::vector<std::unique_ptr<RawClient>> clients;
  std::vector<std::unique_ptr<RawTextbookLock>> locks;
  WaitingCount waiting;
  for (int i = 0; i < sessions_count; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<RawClient> client, RawClient::Connect(context.connect));
    locks.push_back(std::make_unique<RawTextbookLock>(*client, path, &waiting));
    clients.push_back(std::move(client));
  }
  auto make = [&](int i) -> absl::StatusOr<Contender> {
    RawTextbookLock* lock = locks[i].get();
    return Contender{[lock] { return lock->Acquire(); }, [lock] { return lock->Release(); }};
  };
  ZKR_ASSIGN_OR_RETURN(
      Result r, ContendedRow(context, "3t", "raw textbook lock, 8 sessions (contended floor)",
                             sessions_count, make, waiting));
  locks.clear();
  clients.clear();
  ZKR_RETURN_IF_ERROR(admin->Delete(path));
  return r;
}

}  // namespace

absl::StatusOr<std::vector<Result>> Handoff(Context& context) {
  // The contended floor and bare first, so that the headline does not get
  // the server's warm-up.
  ZKR_ASSIGN_OR_RETURN(Result raw, RawTextbookRow(context, 8));
  const double raw_rate = FigureOf(raw, "acquisitions_per_s");
  // Bare: no own-node watch, so the waiter confirms its node with one exists.
  ZKR_ASSIGN_OR_RETURN(
      Result bare, OneHandoffRow(context, "3b", "handoff, 8 sessions, bare (no own-node watch)",
                                 8, Bare()));
  // The headline: default options, eight sessions.
  ZKR_ASSIGN_OR_RETURN(
      Result deep, OneHandoffRow(context, "3", "handoff: release -> next writer (8 sessions)", 8,
                                 LockOptions{}));
  const double deep_rate = FigureOf(deep, "acquisitions_per_s");
  deep.target = "<= 1.0x, >= 1.0x raw lock's acquisitions/s";
  deep.Require(deep.ratio <= 1.0, absl::StrFormat("p50 %.2fx > 1.0x", deep.ratio));
  if (raw_rate > 0) {
    deep.figures.push_back({"acquisitions_ratio_to_raw_lock", deep_rate / raw_rate});
    deep.Require(deep_rate >= raw_rate,
                 absl::StrFormat("%.2fx the raw lock's acquisitions/s", deep_rate / raw_rate));
  }
  // One waiter, as in the raw floor: its listing shows one blocker, so it
  // holds on the blocker's deletion event without a request.
  ZKR_ASSIGN_OR_RETURN(
      Result single,
      OneHandoffRow(context, "3s", "handoff, one waiter (the floor's shape)", 2, LockOptions{}));
  single.target = "<= 1.0x";
  single.Require(single.ratio <= 1.0, absl::StrFormat("p50 %.2fx > 1.0x", single.ratio));
  return std::vector<Result>{deep, single, bare, raw};
}

absl::StatusOr<std::vector<Result>> MixedReadWrite(Context& context) {
  const int kReaders = 16, kWriters = 2;
  const int reader_rounds = context.quick ? 5 : 100, writer_rounds = context.quick ? 3 : 50;
  const std::string path = context.root + "/mixed";
  ZKR_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Session>> sessions,
                       ConnectMany(context, kReaders + kWriters));
  Ledger ledger;
  absl::Mutex mu;
  Samples writer_wait;
  std::atomic<int> errors{0};
  absl::Duration cpu = ProcessCpuTime();
  absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders + kWriters; ++i) {
    threads.emplace_back([&, i] {
      const bool write = i >= kReaders;
      auto lock = SharedLock::Create(*sessions[i], path, Bare());
      if (!lock.ok()) return (void)++errors;
      for (int round = 0; round < (write ? writer_rounds : reader_rounds); ++round) {
        absl::Time asked = absl::Now();
        auto guard = write ? (*lock)->AcquireWrite() : (*lock)->AcquireRead();
        if (!guard.ok()) return (void)++errors;
        if (write) {
          absl::MutexLock l(&mu);
          writer_wait.Add(absl::Now() - asked);
        }
        ledger.Enter(write);
        absl::SleepFor(absl::Microseconds(100));  // the critical section's work
        ledger.Leave(write);
        if (!guard->Release().ok()) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  cpu = ProcessCpuTime() - cpu;
  if (errors > 0) return absl::InternalError("mixed workload: errors");
  ZKR_RETURN_IF_ERROR(DeleteLockDirectory(*sessions[0], path));
  Ledger::Summary summary = ledger.summary();
  Result r = LatencyRow("4", "mixed: 16 readers + 2 writers on one lock", writer_wait);
  r.target = "0 violations";
  r.Require(summary.violations == 0, absl::StrCat(summary.violations, " violations"));
  r.figures = {{"acquisitions_per_s", summary.entries / seconds},
               {"max_concurrent_readers", double(summary.max_readers)},
               {"violations", double(summary.violations)},
               {"writer_wait_p99_us", r.p99_us},
               {"client_cpu_us_per_acquisition", CpuUsPerOp(cpu, summary.entries)}};
  return std::vector<Result>{r};
}

absl::StatusOr<std::vector<Result>> ManyLocks(Context& context) {
  const int locks = context.quick ? 16 : 256;
  const int cycles_per_lock = context.quick ? 2 : 20;
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Connect(context));
  std::vector<std::unique_ptr<SharedLock>> all;
  for (int i = 0; i < locks; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<SharedLock> lock,
                         SharedLock::Create(*session, absl::StrCat(context.root, "/many/l", i),
                                            Bare()));
    all.push_back(std::move(lock));
  }
  // Each lock cycles acquire -> release -> acquire ... asynchronously.
  absl::Mutex mu;
  int remaining = locks;  // guarded by mu
  std::atomic<int> errors{0};
  std::vector<std::function<void(int)>> loops(locks);
  for (int i = 0; i < locks; ++i) {
    loops[i] = [&, i](int left) {
      if (left == 0) {
        absl::MutexLock l(&mu);
        --remaining;
        return;
      }
      all[i]->AcquireWriteAsync([&, i, left](absl::StatusOr<LockGuard> guard) {
        if (!guard.ok()) {
          ++errors;
          return loops[i](0);
        }
        guard->ReleaseAsync([&, i, left](absl::Status s) {
          if (!s.ok()) ++errors;
          loops[i](left - 1);
        });
      });
    };
  }
  auto run_all = [&](int cycles) {
    {
      absl::MutexLock l(&mu);
      remaining = locks;
    }
    for (int i = 0; i < locks; ++i) loops[i](cycles);
    absl::MutexLock l(&mu);
    mu.Await(absl::Condition(+[](int* r) { return *r == 0; }, &remaining));
  };
  // Directories are created on first use: one untimed cycle each first.
  run_all(1);
  absl::Duration cpu = ProcessCpuTime();
  absl::Time start = absl::Now();
  run_all(cycles_per_lock);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  cpu = ProcessCpuTime() - cpu;
  if (errors > 0) return absl::InternalError("many-locks workload: errors");
  for (int i = 0; i < locks; ++i) (void)session->Delete(absl::StrCat(context.root, "/many/l", i));
  (void)session->Delete(context.root + "/many");
  const int total = locks * cycles_per_lock;
  Result r{"5", absl::StrCat(locks, " locks cycled concurrently, one session (async)")};
  const double rate = total / seconds;
  r.ratio = rate / (context.floor_pipelined_ops_per_s / 3);
  r.target = ">= 0.80x pipelined floor/3";
  r.Require(r.ratio >= 0.80, absl::StrFormat("%.2fx < 0.80x", r.ratio));
  r.figures = {{"cycles_per_s", rate}, {"client_cpu_us_per_cycle", CpuUsPerOp(cpu, total)}};
  return std::vector<Result>{r};
}

namespace {

struct DeepQueueFigures {
  double watch_events_per_release = -1;  // -1: the server's counter is unavailable
  double response_bytes_per_handoff = -1;  // what the server sent in replies, per handoff
  absl::Duration drain;
  absl::Duration drain_cpu;  // client CPU while draining
  double rss_kib_per_waiter = 0;
  double heap_bytes_per_waiter = 0;
  // Each waiter has a lock object of its own (one acquisition at a time per
  // object), made before the fill and not in heap_bytes_per_waiter: its
  // heap, so that nothing can move between the two unseen.
  double heap_bytes_per_lock_object = 0;
};

// `waiters` writers queue on one lock over `sessions`; once all are queued
// (and watching) the first releases, and each then releases as soon as it is
// granted, so the queue drains one handoff at a time.
absl::StatusOr<DeepQueueFigures> FillAndDrain(Context& context,
                                              std::vector<std::unique_ptr<Session>>& sessions,
                                              const std::string& path, int waiters) {
  struct Waiter {
    std::unique_ptr<SharedLock> lock;
    std::optional<LockGuard> guard;
  };
  std::vector<Waiter> queue(waiters);
  absl::Mutex mu;
  int acquired = 0;          // guarded by mu
  absl::Time last_acquired;  // guarded by mu
  std::atomic<int> errors{0};
  const int64_t heap_before_locks = HeapInUseBytes();
  for (int i = 0; i < waiters; ++i) {
    ZKR_ASSIGN_OR_RETURN(queue[i].lock,
                         SharedLock::Create(*sessions[i % sessions.size()], path, Bare()));
  }
  const double heap_per_lock_object = double(HeapInUseBytes() - heap_before_locks) / waiters;
  const int64_t watches_before = ServerCounter(context.connect, "zk_watch_count");
  const int64_t rss_before = CurrentRssKib();
  const int64_t heap_before = HeapInUseBytes();
  absl::Notification all_queued;
  std::atomic<bool> draining{false};
  for (int i = 0; i < waiters; ++i) {
    queue[i].lock->AcquireWriteAsync([&](absl::StatusOr<LockGuard> guard) {
      if (!guard.ok()) return (void)++errors;
      if (!draining) all_queued.WaitForNotification();  // the first holder waits for the rest
      {
        absl::MutexLock l(&mu);
        ++acquired;
        last_acquired = absl::Now();
      }
      guard->ReleaseAsync([&](absl::Status s) {
        if (!s.ok()) ++errors;
      });
    });
  }
  // Queued means, in the server's view: every node exists and every waiter
  // but the first has its watch set.
  for (int i = 0; i < 20000; ++i) {
    auto children = sessions[0]->GetChildren(path);
    const int64_t watches = ServerCounter(context.connect, "zk_watch_count");
    if (children.ok() && static_cast<int>(children->size()) == waiters &&
        (watches < 0 || watches - watches_before >= waiters - 1)) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  DeepQueueFigures figures;
  figures.rss_kib_per_waiter = double(CurrentRssKib() - rss_before) / waiters;
  figures.heap_bytes_per_waiter = double(HeapInUseBytes() - heap_before) / waiters;
  figures.heap_bytes_per_lock_object = heap_per_lock_object;
  // A release fires its watcher's watch: a delete's, or the data change of
  // a writer's marked release.
  auto fired = [&]() {
    const int64_t deleted = ServerCounter(context.connect, "zk_sum_node_deleted_watch_count");
    const int64_t changed = ServerCounter(context.connect, "zk_sum_node_changed_watch_count");
    return deleted < 0 || changed < 0 ? -1 : deleted + changed;
  };
  const int64_t triggers = fired();
  const int64_t response_bytes = ServerCounter(context.connect, "zk_response_bytes");
  const absl::Time start = absl::Now();
  const absl::Duration cpu_before = ProcessCpuTime();
  draining = true;
  all_queued.Notify();
  {
    absl::MutexLock l(&mu);
    auto all = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return acquired == waiters || errors > 0; };
    mu.AwaitWithTimeout(absl::Condition(&all), absl::Minutes(5));
    if (acquired != waiters) return absl::InternalError("deep queue did not drain");
    figures.drain = last_acquired - start;
  }
  figures.drain_cpu = ProcessCpuTime() - cpu_before;
  const int64_t triggers_after = fired();
  const int64_t response_bytes_after = ServerCounter(context.connect, "zk_response_bytes");
  if (response_bytes >= 0 && response_bytes_after >= 0) {
    figures.response_bytes_per_handoff = double(response_bytes_after - response_bytes) / waiters;
  }
  for (int i = 0; i < 2000; ++i) {  // the last release
    auto children = sessions[0]->GetChildren(path);
    if (children.ok() && children->empty()) break;
    absl::SleepFor(absl::Milliseconds(5));
  }
  if (triggers >= 0 && triggers_after >= 0) {
    figures.watch_events_per_release = double(triggers_after - triggers) / std::max(1, waiters - 1);
  }
  return figures;
}

}  // namespace

absl::StatusOr<std::vector<Result>> DeepQueue(Context& context) {
  const int kSessions = context.quick ? 5 : 10;
  const int waiters = context.quick ? 50 : 10000;
  const std::string path = context.root + "/deep";
  ZKR_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Session>> sessions,
                       ConnectMany(context, kSessions));
  // A tenth of the queue first: drain time per waiter should not grow with N.
  ZKR_ASSIGN_OR_RETURN(DeepQueueFigures small,
                       FillAndDrain(context, sessions, path, waiters / 10));
  ZKR_ASSIGN_OR_RETURN(DeepQueueFigures full, FillAndDrain(context, sessions, path, waiters));
  (void)sessions[0]->Delete(path);
  Result r{"6", absl::StrCat("deep queue: ", waiters, " writers over ", kSessions, " sessions")};
  const double per_release = full.watch_events_per_release;
  const double drain_us_per_waiter = absl::ToDoubleMicroseconds(full.drain) / waiters;
  const double small_us_per_waiter = absl::ToDoubleMicroseconds(small.drain) / (waiters / 10);
  // Memory a waiting participant holds is what malloc counts as in use; the
  // RSS growth also keeps the transient child-list replies (each waiter reads
  // an N-name list once) that malloc has freed but not returned. Both are
  // held to the target. Linear drain: the time per waiter at N stays within
  // 1.2x of that at N/10, and so do the bytes the server sends per handoff
  // (a handoff that listed the queue would send O(N)).
  const double growth = drain_us_per_waiter / small_us_per_waiter;
  const double bytes_growth =
      small.response_bytes_per_handoff > 0
          ? full.response_bytes_per_handoff / small.response_bytes_per_handoff
          : -1;
  r.target = "1.0 events/release, heap < 1.5 KiB and RSS < 4 KiB per waiter, linear drain";
  r.Require(per_release < 0 || (per_release > 0.99 && per_release < 1.01),
            absl::StrFormat("%.2f watch events/release", per_release));
  r.Require(full.heap_bytes_per_waiter < 1536,
            absl::StrFormat("heap %.0f B/waiter >= 1.5 KiB", full.heap_bytes_per_waiter));
  r.Require(full.rss_kib_per_waiter < 4,
            absl::StrFormat("RSS %.1f KiB/waiter >= 4 KiB", full.rss_kib_per_waiter));
  r.Require(growth <= 1.2,
            absl::StrFormat("drain per waiter %.2fx at N vs N/10 > 1.2x", growth));
  r.Require(bytes_growth < 0 || bytes_growth <= 1.2,
            absl::StrFormat("reply bytes per handoff %.2fx at N vs N/10 > 1.2x", bytes_growth));
  r.figures = {{"watch_events_per_release", per_release},
               {"drain_ms", absl::ToDoubleMilliseconds(full.drain)},
               {"drain_us_per_waiter", drain_us_per_waiter},
               {"drain_us_per_waiter_at_tenth_n", small_us_per_waiter},
               {"drain_growth_n_vs_tenth_n", growth},
               {"reply_bytes_per_handoff", full.response_bytes_per_handoff},
               {"reply_bytes_per_handoff_at_tenth_n", small.response_bytes_per_handoff},
               {"client_cpu_us_per_handoff", CpuUsPerOp(full.drain_cpu, waiters)},
               {"heap_bytes_per_waiter", full.heap_bytes_per_waiter},
               {"heap_bytes_per_lock_object", full.heap_bytes_per_lock_object},
               {"rss_kib_per_waiter", full.rss_kib_per_waiter}};
  return std::vector<Result>{r};
}

}  // namespace bench
}  // namespace zkr
