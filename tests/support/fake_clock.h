// A Clock for tests: the system's clocks plus offsets a test can move, to
// step the wall clock (NTP, an operator) or to jump monotonic time forward
// as a paused process would see it.
#ifndef ZKRECIPES_TESTS_SUPPORT_FAKE_CLOCK_H_
#define ZKRECIPES_TESTS_SUPPORT_FAKE_CLOCK_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "zkrecipes/clock.h"

namespace zkr {
namespace testing {

// Thread-safe.
class FakeClock : public Clock {
 public:
  absl::Duration Monotonic() const override {
    return SystemClock()->Monotonic() + absl::Nanoseconds(monotonic_offset_ns_.load());
  }
  absl::Time Now() const override {
    return SystemClock()->Now() + absl::Nanoseconds(wall_offset_ns_.load());
  }
  // Steps the wall clock by `step` (either sign).
  void StepWall(absl::Duration step) { wall_offset_ns_ += absl::ToInt64Nanoseconds(step); }
  // Moves monotonic time forward by `step` (REQUIRES: step >= 0).
  void AdvanceMonotonic(absl::Duration step) {
    monotonic_offset_ns_ += absl::ToInt64Nanoseconds(step);
  }

 private:
  std::atomic<int64_t> wall_offset_ns_{0};
  std::atomic<int64_t> monotonic_offset_ns_{0};
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_FAKE_CLOCK_H_
