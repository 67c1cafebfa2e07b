// The mutual-exclusion check of the revocation partition tests
// (revocation_partition_test.cc): a thread samples the old holders' state()
// every 200 us; any kHeld read after the next holder was granted is a
// violation. Granted() may be called from any thread; violations() after
// Stop().
#ifndef ZKRECIPES_TESTS_SUPPORT_OLD_HOLDER_LEDGER_H_
#define ZKRECIPES_TESTS_SUPPORT_OLD_HOLDER_LEDGER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "zkrecipes/lock_guard.h"

namespace zkr {
namespace testing {

inline int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Samples the old holders' state(); any kHeld read after the next holder's
// Acquire returned (and before it releases) is a violation.
class OldHolderLedger {
 public:
  explicit OldHolderLedger(std::vector<const LockGuard*> old_holders) : old_(std::move(old_holders)) {
    sampler_ = std::thread([this] {
      while (!stop_.load()) {
        for (size_t i = 0; i < old_.size(); ++i) {
          const int64_t g = granted_.load();
          const LockState s = old_[i]->state();
          if (g != 0 && s == LockState::kHeld) {
            absl::MutexLock lock(&mu_);
            violations_.push_back(absl::StrCat("old holder ", i, " read HELD ",
                                               (SteadyNowNs() - g) / 1000, "us after the next was granted"));
          }
        }
        absl::SleepFor(absl::Microseconds(200));  // pacing only
      }
    });
  }
  ~OldHolderLedger() { Stop(); }
  void Granted() { granted_.store(SteadyNowNs()); }
  void Stop() {
    stop_.store(true);
    if (sampler_.joinable()) sampler_.join();
  }
  std::vector<std::string> violations() {
    absl::MutexLock lock(&mu_);
    return violations_;
  }

 private:
  std::vector<const LockGuard*> old_;
  std::atomic<int64_t> granted_{0};
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  std::vector<std::string> violations_;
  std::thread sampler_;
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_OLD_HOLDER_LEDGER_H_
