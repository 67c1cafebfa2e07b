// The chaos nemesis: driven by a seed, it injects the faults of faults.h in
// random order — into the worker processes (kill -9, SIGSTOP beyond the
// session timeout, forced session expiry, the network cut, slowed, cut one
// way or reset through its proxy, its wall clock stepped) and into the
// ensemble (kill -9 a member, SIGSTOP the leader, lose quorum) — heals each, notes each in the
// ledger, and follows the ledger live to aim at holders and leaders and to
// wait for recovery between faults. It also restarts workers that died by
// themselves and records that.
// Thread-safety: not thread-safe; use from one thread at a time (the same
// one that uses the Workers and the ensemble it is given).
#ifndef ZKRECIPES_TESTS_CHAOS_NEMESIS_H_
#define ZKRECIPES_TESTS_CHAOS_NEMESIS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/chaos/faults.h"
#include "tests/chaos/network.h"
#include "tests/chaos/ledger.h"
#include "tests/chaos/parameters.h"
#include "tests/chaos/workers.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace chaos {

// What the nemesis knows of the run from the ledger, live.
struct LiveView {
  std::map<int, std::pair<int64_t, bool>>
      holding;                        // worker -> (ENTER time, write)
  std::map<int, int64_t> leading;     // worker -> LEADER time
  std::map<int, int64_t> last_enter;  // worker -> time of its latest ENTER

  void Apply(const Entry& e);
};

class Nemesis {
 public:
  Nemesis(uint64_t seed, testing::ZooKeeperEnsemble& ensemble, Workers& workers,
          WorkerNetwork& network, std::string ledger)
      : rng_(seed),
        ensemble_(ensemble),
        workers_(workers),
        network_(network),
        ledger_(ledger),
        reader_(ledger) {}

  // Injects faults until `duration` has passed (at least one; the last one
  // is completed and healed). Returns false (with `error`) if the harness
  // itself failed.
  bool Run(absl::Duration duration, std::string* error);

  // When the last fault was healed.
  absl::Time healed() const { return healed_; }

  // Waits (bounded by 2x the session timeout plus the allowance) until every
  // worker has entered its critical section since `healed`, so that faults
  // do not pile up and each recovery can be measured.
  void AwaitRecovery(int64_t healed);

  // Follows the ledger for `ms`, restarting workers that died by themselves.
  void Calm(int ms);
  // The fault kinds a round injects (all, or $ZKR_CHAOS_FAULTS).
  static std::vector<Fault> FaultsToRun();

  // Reads the new ledger lines, and restarts workers that died by
  // themselves.
  void Refresh();

  const std::map<std::string, int>& counts() const { return counts_; }
  const std::vector<std::string>& unexpected() const { return unexpected_; }
  // Forced expiries that could not be confirmed within their timeout.
  int expire_failures() const { return expire_failures_; }
  const LiveView& view() const { return view_; }
  LedgerReader& reader() { return reader_; }

 private:
  // Session id and password from <ledger>.session.<i>, and the member the
  // worker is connected to (-1 if unknown).
  struct SessionInfo {
    int64_t id = 0;
    std::string password;
    int member = -1;
  };

  int Uniform(int lo, int hi);
  int AnyWorker() { return Uniform(0, kWorkers - 1); }

  void Note(const char* kind, const char* phase, int target,
            const std::string& detail = "");

  // Refreshes the view until `find`, given the ledger time now, names a
  // worker, for up to 2 s; else `fallback`.
  int AwaitWorker(int fallback,
                  const std::function<std::optional<int>(int64_t)>& find);

  // A worker inside its critical section right now (ENTERed within the last
  // few ms and not yet EXITed), waiting up to 2 s for one; else `fallback`.
  int CurrentHolder(int fallback);

  // A worker that has just become leader (its term lasts 100-400 ms),
  // waiting up to 2 s for one; else `fallback`.
  int CurrentLeader(int fallback);

  std::optional<SessionInfo> ReadSession(int worker);

  absl::Status Heal() { return ensemble_.WaitUntilServing(absl::Seconds(90)); }

  absl::Status Inject(Fault fault);
  // Isolates worker `w` (paused, or cut off) for longer than its session
  // timeout, noting whether it held or led, then heals it.
  void BeyondSessionTimeout(const char* kind, int w, const std::function<void()>& isolate,
                            const std::function<void()>& heal);

  std::mt19937_64 rng_;
  testing::ZooKeeperEnsemble& ensemble_;
  Workers& workers_;
  WorkerNetwork& network_;
  const std::string ledger_;
  LedgerReader reader_;
  LiveView view_;
  std::map<std::string, int> counts_;
  std::vector<std::string> unexpected_;
  absl::Time healed_ = absl::Now();
  int expire_failures_ = 0;
};

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_NEMESIS_H_
