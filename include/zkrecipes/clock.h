// zkr::Clock: where zkrecipes reads the time.
//
// The session's lease (valid_until(), the heartbeat, the LOST declaration,
// lock and leadership validity) is measured on Monotonic(): a clock that only
// moves forward and keeps counting while the machine is suspended
// (CLOCK_BOOTTIME on Linux), so stepping the wall clock (NTP, an operator)
// neither extends nor shortens a lease. Now() is the wall clock, used only to
// report a lease's end as an absl::Time at the edge of the API.
//
// Tests inject their own Clock through SessionOptions::clock to step the wall
// clock, or to move monotonic time forward as a process pause would.
//
// Thread safety: implementations must be safe to call from any thread.
//
// Example:
//   zkr::SessionOptions options;
//   options.clock = std::make_shared<MyClock>();  // default: zkr::SystemClock()
#ifndef ZKRECIPES_CLOCK_H_
#define ZKRECIPES_CLOCK_H_

#include <memory>

#include "absl/time/time.h"

namespace zkr {

class Clock {
 public:
  virtual ~Clock() = default;
  // Time since an arbitrary fixed origin; never decreases, counts suspend.
  virtual absl::Duration Monotonic() const = 0;
  // The wall clock.
  virtual absl::Time Now() const = 0;
};

// CLOCK_BOOTTIME and absl::Now(). Shared; never null.
std::shared_ptr<Clock> SystemClock();

}  // namespace zkr

#endif  // ZKRECIPES_CLOCK_H_
