// Helpers of the tests that lose a lock's hold on purpose (the session
// expired on the server) and look at what the lock and its adapters do next:
// a log of the states a lock object reports, the expiry and the wait for the
// next session generation, and the children of a directory by owner.
#ifndef ZKRECIPES_TESTS_SUPPORT_LOCK_LOSS_H_
#define ZKRECIPES_TESTS_SUPPORT_LOCK_LOSS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/lock_options.h"
#include "zkrecipes/session.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace testing {

// The lock states a lock object's holds report (LockOptions::on_state_change,
// on the dispatcher thread), to wait for one without looking at a guard the
// adapters keep to themselves.
class LockStateLog {
 public:
  LockOptions Options() {
    LockOptions options;
    options.on_state_change = [this](LockState state) {
      absl::MutexLock lock(&mu_);
      seen_.push_back(state);
    };
    return options;
  }
  // Waits until `state` has been told at least `count` times.
  bool WaitFor(LockState state, int count = 1, absl::Duration bound = absl::Seconds(30)) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      int n = 0;
      for (LockState s : seen_) n += s == state ? 1 : 0;
      return n >= count;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), bound);
  }
  std::string Seen() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> names;
    for (LockState s : seen_) names.push_back(std::string(LockStateName(s)));
    return absl::StrJoin(names, ",");
  }

 private:
  absl::Mutex mu_;
  std::vector<LockState> seen_ ABSL_GUARDED_BY(mu_);
};

// Expires `session` on the server and waits until `log` has seen its
// `expiry`-th LOST and `states` the session's next generation CONNECTED.
inline void ExpireAndReconnect(Session& session, LockStateLog& log, StateRecorder& states,
                               int expiry = 1) {
  ASSERT_TRUE(ExpireSession(session).ok());
  ASSERT_TRUE(log.WaitFor(LockState::kLost, expiry)) << log.Seen();
  ASSERT_TRUE(states.WaitFor(SessionState::kConnected, expiry + 1).has_value());
}

// The children of `dir` whose ephemeral owner is `owner` (0: any).
inline std::vector<std::string> NodesOf(Session& admin, const std::string& dir,
                                        int64_t owner = 0) {
  std::vector<std::string> out;
  auto kids = admin.GetChildren(dir);
  if (!kids.ok()) return out;
  for (const std::string& k : *kids) {
    auto stat = admin.Exists(dir + "/" + k);
    if (!stat.ok() || !stat->has_value()) continue;
    if (owner == 0 || (*stat)->ephemeral_owner == owner) out.push_back(k);
  }
  return out;
}

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_LOCK_LOSS_H_
