// The chaos_worker processes of a chaos run; see workers.h.
#include "tests/chaos/workers.h"

#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/chaos/parameters.h"

namespace zkr {
namespace chaos {

Workers::Workers(WorkerConfig config)
    : config_(std::move(config)), started_(kWorkers, false) {
  for (int i = 0; i < kWorkers; ++i) {
    processes_.push_back(std::make_unique<testing::ServerProcess>(
        CommandLine(i),
        absl::StrCat(config_.directory, "/worker-", i, ".log")));
  }
}

std::vector<std::string> Workers::CommandLine(int i) const {
  std::vector<std::string> args = {
      config_.binary,
      absl::StrCat("--zk=", i < static_cast<int>(config_.worker_connect.size())
                                ? config_.worker_connect[i]
                                : config_.connect),
      absl::StrCat("--path=", config_.lock_path),
      absl::StrCat("--ledger=", config_.ledger),
      absl::StrCat("--resource=", config_.resource),
      absl::StrCat("--id=", i),
      absl::StrCat("--mode=", Mixed(i) ? "mixed" : "write"),
      absl::StrCat("--session_timeout=",
                   absl::FormatDuration(kSessionTimeout))};
  if (Campaigns(i))
    args.push_back(absl::StrCat("--election=", config_.election_path));
  return args;
}

bool Workers::Start(int i) {
  absl::Status started = processes_[i]->Start();
  if (!started.ok()) {
    std::fprintf(stderr, "chaos: cannot start worker %d: %s\n", i,
                 started.ToString().c_str());
    return false;
  }
  started_[i] = true;
  ++starts_;
  return true;
}

void Workers::Kill(int i) {
  if (!started_[i]) return;
  processes_[i]->Kill().IgnoreError();
  started_[i] = false;
}

// A worker that has died by itself stays started_ until ReapUnexpected()
// reports it, even if Pause() or Resume() reaped it.
void Workers::Pause(int i) {
  if (started_[i]) processes_[i]->Pause().IgnoreError();
}

void Workers::Resume(int i) {
  if (started_[i]) processes_[i]->Resume().IgnoreError();
}

void Workers::StepClock(int i, bool forward) {
  if (started_[i]) processes_[i]->Signal(forward ? kClockForward : kClockBack).IgnoreError();
}

std::vector<std::pair<int, std::string>> Workers::ReapUnexpected() {
  std::vector<std::pair<int, std::string>> dead;
  for (int i = 0; i < kWorkers; ++i) {
    if (!started_[i] || processes_[i]->Running()) continue;
    dead.emplace_back(i, processes_[i]->exit_description());
    started_[i] = false;
  }
  return dead;
}

std::vector<std::string> Workers::StopAll(absl::Duration timeout) {
  std::vector<std::string> problems;
  for (int i = 0; i < kWorkers; ++i) {
    if (started_[i]) processes_[i]->Terminate();
  }
  const absl::Time deadline = absl::Now() + timeout;
  for (int i = 0; i < kWorkers; ++i) {
    if (!started_[i]) {
      problems.push_back(
          absl::StrCat("worker ", i, " was not running at shutdown"));
      continue;
    }
    started_[i] = false;
    testing::ServerProcess& process = *processes_[i];
    bool running = process.Running();
    while (running && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
      running = process.Running();
    }
    if (!running) {
      if (process.exit_code() != 0) {
        problems.push_back(
            absl::StrCat("worker ", i, " ", process.exit_description()));
      }
    } else {
      problems.push_back(absl::StrCat("worker ", i, " did not exit within ",
                                      absl::FormatDuration(timeout),
                                      " of SIGTERM"));
      process.Kill().IgnoreError();
    }
  }
  return problems;
}

}  // namespace chaos
}  // namespace zkr
