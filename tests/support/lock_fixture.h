// The fixture of the lock tests: a SharedLock made or failing the test, the
// children of a path as the admin session lists them (and their cversion),
// and a bounded, watch-driven wait for a number of children. LockHelpers adds
// them to any ZkTest (protected_create_test.cc stacks them on the barrier's).
#ifndef ZKRECIPES_TESTS_SUPPORT_LOCK_FIXTURE_H_
#define ZKRECIPES_TESTS_SUPPORT_LOCK_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace testing {

template <class Base>
class LockHelpers : public Base {
 protected:
  std::unique_ptr<SharedLock> NewSharedLock(Session& session, const std::string& path,
                                            LockOptions options = {}) {
    auto lock = SharedLock::Create(session, path, std::move(options));
    EXPECT_TRUE(lock.ok()) << lock.status();
    return lock.ok() ? std::move(*lock) : nullptr;
  }
  std::vector<std::string> Children(const std::string& path) {
    auto children = this->admin().GetChildren(path);
    return children.ok() ? *children : std::vector<std::string>();
  }
  // Waits (bounded, event-driven via a child watch) until `path` has `count`
  // children.
  bool WaitForChildren(const std::string& path, size_t count) {
    absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      auto changed = std::make_shared<absl::Notification>();
      auto children = this->admin().GetChildrenAndWatch(
          path, [changed](const WatchEvent&) { changed->Notify(); });
      if (children.ok() && children->size() == count) return true;
      if (!children.ok()) {  // no directory yet: wait for it via an exists watch
        auto exists = this->admin().ExistsAndWatch(
            path, [changed](const WatchEvent&) { changed->Notify(); });
        if (exists.ok() && exists->has_value()) continue;
      }
      changed->WaitForNotificationWithDeadline(deadline);
    }
    return false;
  }
  int32_t ChildVersion(const std::string& path) {
    auto stat = this->admin().Exists(path);
    return stat.ok() && stat->has_value() ? (*stat)->cversion : -1;
  }
};

using LockTest = LockHelpers<ZkTest>;

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_LOCK_FIXTURE_H_
