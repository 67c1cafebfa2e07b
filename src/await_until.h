// AwaitUntil: waits on a mutex for a condition until a deadline on a
// zkr::Clock's monotonic time (an absl::Duration since its origin), so that
// a huge or infinite wait saturates instead of overflowing and a wall-clock
// step neither stretches nor cuts the deadline as the library computes it.
// (Abseil's own timed wait in the kernel still runs on the wall clock; the
// deadline is re-checked on `clock` after every wake-up.)
#ifndef ZKRECIPES_SRC_AWAIT_UNTIL_H_
#define ZKRECIPES_SRC_AWAIT_UNTIL_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "zkrecipes/clock.h"

namespace zkr {
namespace internal {

// Waits on `mu` until `cond` holds or `end` (on clock.Monotonic()) passes;
// whether it holds. With `end` already past it only looks.
inline bool AwaitUntil(absl::Mutex& mu, const absl::Condition& cond, absl::Duration end,
                       const Clock& clock) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  for (;;) {
    if (cond.Eval()) return true;
    const absl::Duration left = end - clock.Monotonic();  // infinite stays infinite
    if (left <= absl::ZeroDuration()) return false;
    if (mu.AwaitWithTimeout(cond, left)) return true;
  }
}

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_AWAIT_UNTIL_H_
