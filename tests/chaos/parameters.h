// The fixed sizes and time bounds of a chaos run (chaos_test.cc), shared by
// the workers, the nemesis, the checker and the test.
// Thread-safety: constants only; safe from any thread.
#ifndef ZKRECIPES_TESTS_CHAOS_PARAMETERS_H_
#define ZKRECIPES_TESTS_CHAOS_PARAMETERS_H_

#include <csignal>

#include "absl/time/time.h"

namespace zkr {
namespace chaos {

constexpr int kWorkers = 8;
constexpr absl::Duration kSessionTimeout = absl::Seconds(3);
// Slack on top of 2x the session timeout for (d), and for leftover nodes of
// dead sessions to go in (e): process start, reconnects, a loaded machine.
constexpr absl::Duration kAllowance = absl::Seconds(2);
// The server expires sessions in buckets of its tick (the fixtures' 200 ms):
// a session ends up to one tick after its timeout.
constexpr absl::Duration kExpiryTick = absl::Milliseconds(200);
// The background load (chaos_load.cc): sessions, of which
// kLoadSemaphoreSessions take the semaphore's kLoadPermits permits in turn
// and the others cycle kLoadLocks locks, and candidates taking turns as
// leader.
constexpr int kLoadSessions = 64;
constexpr int kLoadLocks = 16;
constexpr int kLoadSemaphoreSessions = 8;
constexpr int kLoadPermits = 4;
constexpr int kLoadCandidates = 4;
// The load's malloc (issue 36): with glibc's defaults its ~340 threads
// spread over 16 arenas (8 per core), each keeping the free space a burst
// of faults left in it, and over 340 per-thread caches (tcache) that
// mallinfo2 counts as allocated; its RSS then grew for the whole hour while
// what the program held did not (heaptrack). So the load runs on 2 arenas
// (chaos_load --malloc_arena_max) without the per-thread cache (a glibc
// tunable, read at process start only: set through env(1)), so that rule
// (j) judges the program, not glibc's retention.
constexpr int kLoadMallocArenas = 2;
inline constexpr char kLoadMallocTunables[] = "GLIBC_TUNABLES=glibc.malloc.tcache_count=0";
// The clock nemesis's step of a worker's wall clock, either way: far more
// than the session timeout.
constexpr absl::Duration kClockStep = absl::Hours(1);

// The real-time signals (queued, so none is lost) that step a worker's
// wall clock by kClockStep forward / back.
inline const int kClockForward = SIGRTMIN + 1;
inline const int kClockBack = SIGRTMIN + 2;

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_PARAMETERS_H_
