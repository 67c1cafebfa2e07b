// The kinds of fault the chaos nemesis injects; see faults.h.
#include "tests/chaos/faults.h"

namespace zkr {
namespace chaos {

const char* FaultName(Fault f) {
  switch (f) {
    case Fault::kKillWorker:
      return "kill_worker";
    case Fault::kPauseWorker:
      return "pause_worker";
    case Fault::kExpireSession:
      return "expire_session";
    case Fault::kKillMember:
      return "kill_member";
    case Fault::kPauseLeader:
      return "pause_leader";
    case Fault::kLoseQuorum:
      return "lose_quorum";
    case Fault::kPartitionWorker:
      return "partition_worker";
    case Fault::kSlowWorker:
      return "slow_worker";
    case Fault::kOneWayWorker:
      return "oneway_worker";
    case Fault::kResetWorker:
      return "reset_worker";
    case Fault::kClockStepWorker:
      return "clock_step_worker";
  }
  return "?";
}

bool TargetsWorker(const std::string& kind) {
  return kind == "kill_worker" || kind == "pause_worker" ||
         kind == "expire_session" || kind == "partition_worker" ||
         kind == "slow_worker" || kind == "oneway_worker" || kind == "reset_worker" ||
         kind == "clock_step_worker";
}

}  // namespace chaos
}  // namespace zkr
