// The chaos_worker processes of a chaos run (kWorkers of them, each its own
// ZooKeeper session): starts them, kills, pauses and resumes one, notices
// those that died by themselves, and stops them all at the end. Each runs
// as a zkr::testing::ServerProcess with its output in
// <directory>/worker-<i>.log.
// Thread-safety: not thread-safe; use from one thread at a time.
#ifndef ZKRECIPES_TESTS_CHAOS_WORKERS_H_
#define ZKRECIPES_TESTS_CHAOS_WORKERS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "src/testing/server_process.h"

namespace zkr {
namespace chaos {

// What every worker is given.
struct WorkerConfig {
  std::string binary, connect, lock_path, election_path, ledger, resource,
      directory;
  // Worker i's own connect string (its proxies), if set; else `connect`.
  std::vector<std::string> worker_connect;
};

// The worker processes. Kills (SIGKILL) and reaps every live one when
// destroyed.
class Workers {
 public:
  explicit Workers(WorkerConfig config);
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  // Whether worker `i` takes the lock for reading or writing (else writing
  // only), and whether it also campaigns for leadership.
  static bool Mixed(int i) { return i % 2 == 0; }
  static bool Campaigns(int i) { return i % 4 < 2; }

  // Starts worker `i`; false (with a message on stderr) if it cannot be run.
  // REQUIRES: worker `i` is not running.
  bool Start(int i);
  // SIGKILL, then reaps worker `i`. No-op if it is not running.
  void Kill(int i);
  // SIGSTOP / SIGCONT to worker `i`. No-op if it is not running.
  void Pause(int i);
  void Resume(int i);
  // Steps worker `i`'s wall clock (its library clock) an hour forward or
  // back (a queued real-time signal: kClockForward / kClockBack, see
  // chaos_worker.cc). No-op if it is not running.
  void StepClock(int i, bool forward);

  // Workers that exited by themselves since the last call: (i, how).
  std::vector<std::pair<int, std::string>> ReapUnexpected();

  // SIGTERM to all, then waits up to `timeout` for each; returns a problem
  // per worker that did not exit cleanly (then killed).
  std::vector<std::string> StopAll(absl::Duration timeout);

  // Whether worker `i` was started and has not been killed, stopped or
  // reported dead since.
  bool running(int i) const { return started_[i]; }
  // How many times workers were started.
  int starts() const { return starts_; }

 private:
  std::vector<std::string> CommandLine(int i) const;

  const WorkerConfig config_;
  std::vector<std::unique_ptr<testing::ServerProcess>> processes_;
  std::vector<bool> started_;
  int starts_ = 0;
};

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_WORKERS_H_
