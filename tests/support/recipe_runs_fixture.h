// The fixtures of the files that run every recipe through a fault (lost
// replies, destruction, Close, expiry, retry pacing): a ZkTest (and a
// proxied one) whose TearDown fails the test on any node left inside the
// test's directories (directory_check.h), with helpers to count and list
// children; Completion,
// which counts a callback's calls and keeps its first status (Record runs
// on whichever thread delivers, usually the session's dispatcher); and
// Recipes(), each recipe taken on a session and given back by the returned
// releaser.
#ifndef ZKRECIPES_TESTS_SUPPORT_RECIPE_RUNS_FIXTURE_H_
#define ZKRECIPES_TESTS_SUPPORT_RECIPE_RUNS_FIXTURE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/directory_check.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace testing {

// Counts completions of one callback and keeps the first status.
struct Completion {
  std::atomic<int> calls{0};
  absl::Mutex mu;
  absl::Status first ABSL_GUARDED_BY(mu);
  absl::Notification done;
  void Record(const absl::Status& s) {
    if (calls.fetch_add(1) == 0) {
      absl::MutexLock l(&mu);
      first = s;
      done.Notify();
    }
  }
  absl::Status status() {
    absl::MutexLock l(&mu);
    return first;
  }
};

// The directory-checked ZkTest, with its children listed as one string.
class RecipeRunsTest : public DirectoryCheckedTest<ZkTest> {
 protected:
  std::string ChildList(const std::string& path) {
    auto c = admin().GetChildren(path);
    return c.ok() ? absl::StrJoin(*c, ",") : std::string("<none>");
  }
  // One round trip on `s`, so that every completion already queued on its
  // dispatcher has run (they run in order).
  void Drain(Session& s) { (void)s.Exists("/"); }
};

// The directory-checked ProxiedZkTest.
class ProxiedRecipeRunsTest : public DirectoryCheckedTest<ProxiedZkTest> {
 protected:
  // Children other than a double barrier's persistent "ready" node.
  size_t Children(const std::string& path) {
    auto c = admin().GetChildren(path);
    if (!c.ok()) return 0;
    size_t n = 0;
    for (const auto& k : *c) n += k != "ready";
    return n;
  }
  void Drain(Session& s) { (void)s.Exists("/"); }
};

struct RecipeRun {
  std::string name;
  std::string dir;
  // Takes the recipe (its node exists after), returns a releaser.
  std::function<absl::StatusOr<std::function<absl::Status()>>(Session&)> take;
};

// Each recipe waits at most `timeout` to take (and the double barrier to
// leave).
inline std::vector<RecipeRun> Recipes(const std::function<std::string(const std::string&)>& path,
                                      absl::Duration timeout = absl::Seconds(20)) {
  std::vector<RecipeRun> runs;
  runs.push_back({"lock", path("lock"), [timeout, p = path("lock")](Session& s)
                      -> absl::StatusOr<std::function<absl::Status()>> {
                    auto lock = ExclusiveLock::Create(s, p);
                    if (!lock.ok()) return lock.status();
                    auto g = (*lock)->Acquire(timeout);
                    if (!g.ok()) return g.status();
                    auto lk = std::shared_ptr<ExclusiveLock>(std::move(*lock));
                    auto gg = std::make_shared<LockGuard>(std::move(*g));
                    return std::function<absl::Status()>([lk, gg] { return gg->Release(); });
                  }});
  runs.push_back({"sem", path("sem"), [timeout, p = path("sem")](Session& s)
                      -> absl::StatusOr<std::function<absl::Status()>> {
                    auto sem = Semaphore::Create(s, p, 3);
                    if (!sem.ok()) return sem.status();
                    auto g = (*sem)->Acquire(2, timeout);
                    if (!g.ok()) return g.status();
                    auto lk = std::shared_ptr<Semaphore>(std::move(*sem));
                    auto gg = std::make_shared<LockGuard>(std::move(*g));
                    return std::function<absl::Status()>([lk, gg] { return gg->Release(); });
                  }});
  runs.push_back({"rlock", path("rlock"), [timeout, p = path("rlock")](Session& s)
                      -> absl::StatusOr<std::function<absl::Status()>> {
                    auto lock = SharedLock::Create(s, p);
                    if (!lock.ok()) return lock.status();
                    auto g = (*lock)->AcquireRead(timeout);
                    if (!g.ok()) return g.status();
                    auto lk = std::shared_ptr<SharedLock>(std::move(*lock));
                    auto gg = std::make_shared<LockGuard>(std::move(*g));
                    return std::function<absl::Status()>([lk, gg] { return gg->Release(); });
                  }});
  runs.push_back({"multi", path("multi"), [timeout, p = path("multi")](Session& s)
                      -> absl::StatusOr<std::function<absl::Status()>> {
                    // One part only, under the run's directory, so that the
                    // fault rule's prefix catches it.
                    auto m = MultiLock::Create(s, {{p, LockMode::kWrite}});
                    if (!m.ok()) return m.status();
                    auto g = (*m)->Acquire(timeout);
                    if (!g.ok()) return g.status();
                    auto mm = std::shared_ptr<MultiLock>(std::move(*m));
                    auto gg = std::make_shared<MultiLockGuard>(std::move(*g));
                    return std::function<absl::Status()>([mm, gg] { return gg->Release(); });
                  }});
  runs.push_back({"elect", path("elect"), [timeout, p = path("elect")](Session& s)
                      -> absl::StatusOr<std::function<absl::Status()>> {
                    ElectionOptions eo;
                    eo.id = "cand";
                    auto e = LeaderElection::Create(s, p, eo);
                    if (!e.ok()) return e.status();
                    if (auto j = (*e)->Join(); !j.ok()) return j;
                    if (auto a = (*e)->AwaitLeadership(timeout); !a.ok()) return a;
                    auto ee = std::shared_ptr<LeaderElection>(std::move(*e));
                    return std::function<absl::Status()>([ee] { return ee->Leave(); });
                  }});
  runs.push_back({"group", path("group"), [timeout, p = path("group")](Session& s)
                      -> absl::StatusOr<std::function<absl::Status()>> {
                    auto m = GroupMember::Create(s, p, GroupOptions{"gm", "", {}});
                    if (!m.ok()) return m.status();
                    if (auto j = (*m)->Join(timeout); !j.ok()) return j;
                    auto mm = std::shared_ptr<GroupMember>(std::move(*m));
                    return std::function<absl::Status()>([mm] { return mm->Leave(); });
                  }});
  runs.push_back({"dbar", path("dbar"), [timeout, p = path("dbar")](Session& s)
                      -> absl::StatusOr<std::function<absl::Status()>> {
                    auto b = DoubleBarrier::Create(s, p, "one", 1);
                    if (!b.ok()) return b.status();
                    if (auto e = (*b)->Enter(timeout); !e.ok()) return e;
                    auto bb = std::shared_ptr<DoubleBarrier>(std::move(*b));
                    return std::function<absl::Status()>([bb, timeout] { return bb->Leave(timeout); });
                  }});
  return runs;
}

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_RECIPE_RUNS_FIXTURE_H_
