// The kinds of fault the chaos nemesis injects, and their names in the
// ledger's NEMESIS lines (which the checker reads back).
// Thread-safety: constants and pure functions; safe from any thread.
#ifndef ZKRECIPES_TESTS_CHAOS_FAULTS_H_
#define ZKRECIPES_TESTS_CHAOS_FAULTS_H_

#include <string>

namespace zkr {
namespace chaos {

enum class Fault {
  kKillWorker,
  kPauseWorker,
  kExpireSession,
  kKillMember,
  kPauseLeader,
  kLoseQuorum,
  kPartitionWorker,  // a worker cut off (blackhole) beyond its session timeout
  kSlowWorker,       // a worker's traffic delayed, with jitter, for a while
  kOneWayWorker,     // one direction of a worker's traffic dropped, beyond the timeout
  kResetWorker,      // a worker's connections reset (RST)
  kClockStepWorker,  // a worker's wall clock stepped an hour either way, then cut off
};
constexpr Fault kAllFaults[] = {Fault::kKillWorker,    Fault::kPauseWorker,
                                Fault::kExpireSession, Fault::kKillMember,
                                Fault::kPauseLeader,   Fault::kLoseQuorum,
                                Fault::kPartitionWorker, Fault::kSlowWorker,
                                Fault::kOneWayWorker,  Fault::kResetWorker,
                                Fault::kClockStepWorker};

// The fault's name in the ledger, e.g. "kill_worker".
const char* FaultName(Fault f);
// Whether a NEMESIS line of fault `kind` names a worker as its target (else
// an ensemble member).
bool TargetsWorker(const std::string& kind);

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_FAULTS_H_
