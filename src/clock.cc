#include "zkrecipes/clock.h"

#include <time.h>

#include "absl/time/clock.h"

namespace zkr {
namespace {

class BootClock : public Clock {
 public:
  absl::Duration Monotonic() const override {
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    return absl::DurationFromTimespec(now);
  }
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

std::shared_ptr<Clock> SystemClock() {
  static const std::shared_ptr<Clock> clock = std::make_shared<BootClock>();
  return clock;
}

}  // namespace zkr
