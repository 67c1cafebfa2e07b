// For tests of recipes whose directories (lock, group, election, barrier)
// are containers the server reaps lazily: the leak check is on the nodes
// inside them (nothing but a barrier's `ready` flag may be left in a
// directory), then the directories are removed before ZkTest's own check.
#ifndef ZKRECIPES_TESTS_SUPPORT_DIRECTORY_CHECK_H_
#define ZKRECIPES_TESTS_SUPPORT_DIRECTORY_CHECK_H_

#include <future>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace testing {

// Whether `f` is ready within `bound`.
template <class T>
bool Ready(std::future<T>& f, absl::Duration bound = absl::Seconds(30)) {
  return f.wait_for(absl::ToChronoMilliseconds(bound)) == std::future_status::ready;
}

// Fails the current test for every node left in a directory under `root`
// (`ready` excepted), then deletes the directories.
inline void CheckAndClearDirectories(Session& admin, const std::string& root) {
  auto dirs = admin.GetChildren(root);
  if (!dirs.ok()) return;
  for (const auto& d : *dirs) {
    auto kids = admin.GetChildren(root + "/" + d);
    if (kids.ok()) {
      for (const auto& k : *kids) {
        if (k == "ready") continue;
        ADD_FAILURE() << "node left behind: " << root << "/" << d << "/" << k;
      }
    }
    (void)DeleteRecursively(admin, root + "/" + d);
  }
}

// `Base` (ZkTest or ProxiedZkTest) whose TearDown checks and clears the
// directories under root() first; with the admin session's listings.
template <class Base>
class DirectoryCheckedTest : public Base {
 protected:
  void TearDown() override {
    CheckAndClearDirectories(this->admin(), this->root());
    Base::TearDown();
  }
  size_t Children(const std::string& path) {
    auto c = this->admin().GetChildren(path);
    return c.ok() ? c->size() : 0;
  }
  std::vector<std::string> ChildList(const std::string& path) {
    auto c = this->admin().GetChildren(path);
    return c.ok() ? *c : std::vector<std::string>{};
  }
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_DIRECTORY_CHECK_H_
