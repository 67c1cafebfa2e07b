// The watch budget (issue 36) attacked by an independent reviewer (review36b):
// leaks of reservations (watching reads that set no watch, watches lost with
// an expired session, observers / group watches / barrier waits that come
// and go), a user's watch re-armed from its own callback at a full budget,
// bad input at a full budget, an observer refused room reporting a stale
// leader, and over-commit when many waits are cancelled and as many started
// across connection resets.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/packet_limit_server.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/tcp_proxy.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace {

using ::testing::Contains;
using ::testing::Not;

class WatchBudgetEdgesTest : public testing::ZkTest {
 protected:
  static constexpr size_t kSmall = 4096;
  std::unique_ptr<Session> Small() {
    SessionOptions options = Options();
    options.max_request_bytes = kSmall;
    return NewSession(options);
  }
  void Recreate(const std::string& path) {
    auto c = admin().Create(path, "", CreateMode::kPersistent);
    ASSERT_TRUE(c.ok() || absl::IsAlreadyExists(c.status())) << c.status();
  }
  // Sets exists-watches on absent nodes "<dir>/<6 digits>" (paths of one
  // length) until the first refusal; returns how many were admitted. Then
  // fires them all (creates the nodes), waits for every callback, and
  // removes `dir`: the budget is as before.
  size_t CountAdmittedWatches(Session& session, const std::string& dir) {
    auto fired = std::make_shared<std::atomic<size_t>>(0);
    size_t n = 0;
    std::string refusal;
    for (; n < 5000; ++n) {
      auto r = session.ExistsAndWatch(absl::StrFormat("%s/%06d", dir, n),
                                      [fired](const WatchEvent&) { ++*fired; });
      if (!r.ok()) {
        EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
        refusal = std::string(r.status().message());
        break;
      }
    }
    std::cout << dir << ": " << n << " watches admitted; refusal: " << refusal << "\n";
    EXPECT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok());
    std::vector<Op> ops;
    for (size_t i = 0; i < n; ++i) {
      ops.push_back(Op::Create(absl::StrFormat("%s/%06d", dir, i), "", CreateMode::kPersistent));
      if (ops.size() == 100 || i + 1 == n) {
        auto made = admin().Multi(ops);
        EXPECT_TRUE(made.ok()) << made.status();
        ops.clear();
      }
    }
    EXPECT_TRUE(testing::Eventually([&] { return fired->load() == n; }))
        << fired->load() << " of " << n << " watches fired";
    EXPECT_TRUE(testing::DeleteRecursively(admin(), dir).ok());
    return n;
  }
  void CleanRoot() {
    ASSERT_TRUE(testing::DeleteRecursively(admin(), root()).ok());
    ASSERT_TRUE(admin().Create(root(), "", CreateMode::kPersistent).ok());
  }
};

// Leaks: watching reads that set no watch (Get / GetChildren of a missing
// node), watches lost with an expired session, observers and group watches
// created and destroyed, barrier waits timing out. Each kind is repeated
// more times than the budget holds watches, so one leaked reservation per
// call shows as a ResourceExhausted, and the session must admit as many
// watches at the end as at the start.
TEST_F(WatchBudgetEdgesTest, NoLeakFromWatchingReadsExpiryObserversAndBarriers) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  testing::StateRecorder states(*session);
  const size_t at_start = CountAdmittedWatches(*session, Path("c00"));
  ASSERT_GT(at_start, 5u);
  const size_t rounds = at_start * 3;

  // Get / GetChildren with a watch on a missing node: NotFound, no watch.
  for (size_t i = 0; i < rounds; ++i) {
    auto got = session->GetAndWatch(absl::StrFormat("%s/%06d", Path("m00"), i),
                                    [](const WatchEvent&) {});
    ASSERT_TRUE(absl::IsNotFound(got.status())) << "get #" << i << ": " << got.status();
    auto kids = session->GetChildrenAndWatch(absl::StrFormat("%s/%06d", Path("m00"), i),
                                             [](const WatchEvent&) {});
    ASSERT_TRUE(absl::IsNotFound(kids.status())) << "get children #" << i << ": "
                                                  << kids.status();
  }
  EXPECT_EQ(CountAdmittedWatches(*session, Path("c01")), at_start)
      << "after Get/GetChildrenAndWatch of missing nodes";

  // Observers and group watches created and destroyed; barrier waits timing out.
  const std::string election = Path("election");
  const std::string group = Path("group");
  const std::string barrier_path = Path("barrier");
  Recreate(election);
  Recreate(group);
  auto set = Barrier::Create(admin(), barrier_path);
  ASSERT_TRUE(set.ok());
  ASSERT_TRUE((*set)->Set().ok());
  for (size_t i = 0; i < rounds; ++i) {
    {
      auto observer = LeaderObserver::Create(*session, election);
      ASSERT_TRUE(observer.ok()) << "observer #" << i << ": " << observer.status();
      if (i % 4 == 0) (void)(*observer)->Current(absl::Seconds(5));
    }
    {
      auto watch = GroupWatch::Create(*session, group, [](const std::vector<GroupMemberInfo>&) {});
      ASSERT_TRUE(watch.ok()) << "group watch #" << i << ": " << watch.status();
    }
    if (i < at_start + 3) {
      auto barrier = Barrier::Create(*session, barrier_path);
      ASSERT_TRUE(barrier.ok());
      absl::Status waited = (*barrier)->Wait(absl::Milliseconds(20));
      ASSERT_TRUE(absl::IsDeadlineExceeded(waited)) << "barrier wait #" << i << ": " << waited;
    }
  }
  ASSERT_TRUE((*set)->Remove().ok());
  EXPECT_EQ(CountAdmittedWatches(*session, Path("c02")), at_start)
      << "after observers, group watches and barrier waits came and went";

  // Watches that never fire, lost with an expired session.
  for (int cycle = 0; cycle < 3; ++cycle) {
    size_t set_now = 0;
    for (size_t i = 0; i < at_start; ++i) {
      auto r = session->ExistsAndWatch(absl::StrFormat("%s/%06d", Path("x00"), i),
                                       [](const WatchEvent&) {});
      if (r.ok()) ++set_now;
    }
    EXPECT_EQ(set_now, at_start) << "cycle " << cycle;
    const uint64_t generation = session->generation();
    ASSERT_TRUE(testing::ExpireSession(*session).ok());
    (void)session->Exists(Path("x00"));
    ASSERT_TRUE(states.WaitFor(SessionState::kLost, generation).has_value());
    ASSERT_TRUE(states.WaitFor(SessionState::kConnected, generation + 1).has_value());
  }
  EXPECT_EQ(CountAdmittedWatches(*session, Path("c03")), at_start)
      << "after watches lost with 3 expired sessions (their reservations leaked?)";
  session->Close();
  CleanRoot();
}

// A user's watch re-armed from its own callback (the usual pattern) with
// the budget otherwise full: the fired watch's room must be free "before its
// outcome is delivered", so the re-arm always fits.
TEST_F(WatchBudgetEdgesTest, RearmFromTheCallbackAtAFullBudget) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  const std::string dir = Path("r");
  Recreate(dir);
  const std::string target = dir + "/t00000";
  ASSERT_TRUE(admin().Create(target, "0", CreateMode::kPersistent).ok());

  struct Chain {
    absl::Mutex mu;
    size_t fired = 0;
    std::vector<std::string> failures;
    std::function<void(const WatchEvent&)> fn;
  };
  auto chain = std::make_shared<Chain>();
  Session* s = session.get();
  std::weak_ptr<Chain> weak = chain;
  chain->fn = [s, target, weak](const WatchEvent&) {
    auto c = weak.lock();
    if (!c) return;
    auto again = s->ExistsAndWatch(target, c->fn);
    absl::MutexLock l(&c->mu);
    ++c->fired;
    if (!again.ok()) c->failures.push_back(absl::StrCat("re-arm #", c->fired, ": ",
                                                         again.status().ToString()));
  };
  ASSERT_TRUE(session->ExistsAndWatch(target, chain->fn).ok());
  // Fill the rest with paths of the same length.
  size_t filled = 0;
  for (; filled < 5000; ++filled) {
    auto r = session->ExistsAndWatch(absl::StrFormat("%s/a%05d", dir, filled),
                                     [](const WatchEvent&) {});
    if (!r.ok()) {
      ASSERT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
      break;
    }
  }
  std::cout << filled << " more watches fill the budget\n";
  constexpr size_t kRounds = 400;
  size_t done = 0;
  for (size_t i = 1; i <= kRounds; ++i) {
    ASSERT_TRUE(admin().Set(target, absl::StrCat(i)).ok());
    const bool fired = testing::Eventually(
        [&] {
          absl::MutexLock l(&chain->mu);
          return chain->fired >= i;
        },
        absl::Seconds(10));
    if (!fired) break;
    done = i;
    absl::MutexLock l(&chain->mu);
    if (!chain->failures.empty()) break;
  }
  {
    absl::MutexLock l(&chain->mu);
    std::cout << done << " rounds; failures: " << absl::StrJoin(chain->failures, "; ") << "\n";
    EXPECT_TRUE(chain->failures.empty()) << chain->failures.front();
  }
  EXPECT_EQ(done, kRounds) << "the chain of re-armed watches broke";
  chain->fn = nullptr;
  session->Close();
  CleanRoot();
}

// Bad input at a full budget: an invalid path is InvalidArgument (its own
// error), never ResourceExhausted, and takes nothing.
TEST_F(WatchBudgetEdgesTest, InvalidPathsAtAFullBudget) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  size_t filled = 0;
  for (; filled < 5000; ++filled) {
    auto r = session->ExistsAndWatch(absl::StrFormat("%s/%06d", Path("f"), filled),
                                     [](const WatchEvent&) {});
    if (!r.ok()) break;
  }
  const auto noop = [](const WatchEvent&) {};
  for (const std::string& bad :
       {std::string("relative"), std::string(""), Path("trailing/"), Path("a//b"),
        Path("a/./b"), Path("a/../b"), std::string("/") + std::string(1, '\0') + "x"}) {
    auto e = session->ExistsAndWatch(bad, noop);
    EXPECT_TRUE(absl::IsInvalidArgument(e.status())) << "exists '" << bad << "': " << e.status();
    auto g = session->GetAndWatch(bad, noop);
    EXPECT_TRUE(absl::IsInvalidArgument(g.status())) << "get '" << bad << "': " << g.status();
    auto c = session->GetChildrenAndWatch(bad, noop);
    EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << "children '" << bad << "': "
                                                    << c.status();
    auto o = LeaderObserver::Create(*session, bad);
    EXPECT_TRUE(absl::IsInvalidArgument(o.status())) << "observer '" << bad << "': " << o.status();
    auto w = GroupWatch::Create(*session, bad, [](const std::vector<GroupMemberInfo>&) {});
    EXPECT_TRUE(absl::IsInvalidArgument(w.status())) << "group watch '" << bad << "': "
                                                    << w.status();
  }
  // Plain (non-watching) reads still work at a full budget.
  auto plain = session->Exists(Path("f"));
  EXPECT_TRUE(plain.ok()) << plain.status();
  session->Close();
  CleanRoot();
}

// An observer following leader A; the budget then fills; A leaves and B,
// whose node path is longer than reserved, leads. The observer must never
// report A again (stale), must say ResourceExhausted rather than go silent,
// and must report B once room frees; on_change exactly once per change.
TEST_F(WatchBudgetEdgesTest, ObserverRefusedRoomNeverReportsAStaleLeader) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  const std::string path = Path("election");
  Recreate(path);
  auto a = LeaderElection::Create(admin(), path);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE((*a)->Join().ok());

  absl::Mutex mu;
  std::vector<std::string> seen;  // node names reported ("-" for none)
  const std::thread::id test_thread = std::this_thread::get_id();
  bool on_test_thread = false;
  auto observer = LeaderObserver::Create(*session, path, [&](const std::optional<LeaderInfo>& l) {
    absl::MutexLock lock(&mu);
    if (std::this_thread::get_id() == test_thread) on_test_thread = true;
    // The node and whether it took over: LeaderInfo changes when A marks its node.
    seen.push_back(l.has_value() ? l->node + (l->taken_over ? "+" : "") : "-");
  });
  ASSERT_TRUE(observer.ok()) << observer.status();
  // Join() may return before the observer has read A: wait for it.
  absl::StatusOr<std::optional<LeaderInfo>> first = (*observer)->Current(absl::Seconds(10));
  ASSERT_TRUE(first.ok()) << first.status();
  if (!first->has_value()) first = (*observer)->AwaitChange(*first, absl::Seconds(10));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  const std::string a_node = (*first)->node;
  std::cout << "leader A: " << a_node << "\n";

  // B: a second session's raw candidate node with a long participant name.
  auto b_session = NewSession();
  ASSERT_NE(b_session, nullptr);
  auto b = b_session->Create(path + "/" + std::string(300, 'b') + "_1_0-W-", "",
                             CreateMode::kEphemeralSequential);
  ASSERT_TRUE(b.ok()) << b.status();

  const std::string absent = Path("absent");
  size_t filled = 0;
  for (; filled < 5000; ++filled) {
    auto r = session->ExistsAndWatch(absl::StrFormat("%s/w%06d", absent, filled),
                                     [](const WatchEvent&) {});
    if (!r.ok()) break;
  }
  std::cout << filled << " plain watches fill the budget\n";

  ASSERT_TRUE((*a)->Leave().ok());
  // Give the observer time to hear of it.
  absl::SleepFor(absl::Seconds(1));
  auto change = (*observer)->AwaitChange(*first, absl::Seconds(10));
  std::cout << "AwaitChange(A) after A left, B long, budget full: "
            << (change.ok() ? (change->has_value() ? (*change)->node : std::string("none"))
                            : change.status().ToString())
            << "\n";
  if (change.ok()) {
    ASSERT_TRUE(change->has_value());
    EXPECT_NE((*change)->node, a_node);
  } else {
    EXPECT_TRUE(absl::IsResourceExhausted(change.status())) << change.status();
  }
  auto now = (*observer)->Current(absl::Seconds(2));
  if (now.ok() && now->has_value()) {
    EXPECT_NE((*now)->node, a_node) << "Current() reports the leader that left (stale)";
  } else if (!now.ok()) {
    EXPECT_TRUE(absl::IsResourceExhausted(now.status())) << now.status();
  }
  std::optional<LeaderInfo> last = (*observer)->leader();
  std::cout << "leader() now: " << (last.has_value() ? last->node : std::string("none")) << "\n";
  // leader() is documented as "the last answer seen"; still, while the
  // observer is refused room it returns the leader that left (stale).
  EXPECT_FALSE(last.has_value() && last->node == a_node)
      << "leader() still reports A after it left, while refused room";

  // Free room: fire the plain watches.
  ASSERT_TRUE(admin().Create(absent, "", CreateMode::kPersistent).ok());
  for (size_t i = 0; i < filled; ++i) {
    ASSERT_TRUE(admin().Create(absl::StrFormat("%s/w%06d", absent, i), "",
                               CreateMode::kPersistent).ok());
  }
  std::string b_node;
  EXPECT_TRUE(testing::Eventually(
      [&] {
        auto got = (*observer)->Current(absl::Seconds(1));
        if (got.ok() && got->has_value()) b_node = (*got)->node;
        return absl::StartsWith(b_node, std::string(300, 'b'));
      },
      absl::Seconds(20)))
      << "the observer did not report B once room was free; last: " << b_node;
  absl::SleepFor(absl::Milliseconds(500));
  {
    absl::MutexLock lock(&mu);
    std::cout << "on_change: ";
    for (const std::string& n : seen) std::cout << n.substr(0, 24) << "(" << n.size() << ") ";
    std::cout << "\n";
    EXPECT_FALSE(on_test_thread) << "on_change ran on the caller's thread";
    for (size_t i = 1; i < seen.size(); ++i) {
      EXPECT_NE(seen[i], seen[i - 1]) << "on_change twice for one answer at #" << i;
    }
    // A (in either form) only at the start, before any other answer.
    size_t first_other = 0;
    while (first_other < seen.size() && seen[first_other] == "-") ++first_other;  // before A
    const size_t a_first = first_other;
    while (first_other < seen.size() && absl::StartsWith(seen[first_other], a_node)) ++first_other;
    EXPECT_GT(first_other, a_first) << "A never reported";
    for (size_t i = first_other; i < seen.size(); ++i) {
      EXPECT_FALSE(absl::StartsWith(seen[i], a_node)) << "A reported again at #" << i;
    }
    ASSERT_FALSE(seen.empty());
    EXPECT_TRUE(absl::StartsWith(seen.back(), std::string(300, 'b')));
  }
  observer->reset();
  a->reset();
  b_session->Close();
  session->Close();
  CleanRoot();
}


// The directory fallback for a semaphore: three long-named holders (another
// process, 300-byte names) hold every lease; six waiters of a small session
// join, then plain watches fill the budget, so the waits cannot top up
// their reservation to watch their real blockers. As the holders go (and
// then our own holds, one at a time) the leases in use must never exceed 3,
// and every admitted waiter must be granted, none hang.
TEST_F(WatchBudgetEdgesTest, SemaphoreFallbackWithLongHoldersAtAFullBudget) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  const std::string path = Path("sem");
  Recreate(path);
  std::vector<std::string> raw;
  for (int i = 0; i < 3; ++i) {
    auto h = admin().Create(path + "/" + std::string(300, 'h') + "_1_00ff-S1of3-", "",
                            CreateMode::kEphemeralSequential);
    ASSERT_TRUE(h.ok()) << h.status();
    raw.push_back(h->path);
  }
  struct Out {
    absl::Mutex mu;
    int raw_left = 3;
    int ours = 0;
    int max_in_use = 0;
    std::vector<std::string> violations;
    std::vector<std::optional<absl::Status>> status;
    std::vector<LockGuard> guards;
  };
  constexpr int kWaiters = 6;
  auto out = std::make_shared<Out>();
  out->status.resize(kWaiters);
  out->guards.resize(kWaiters);
  std::vector<std::unique_ptr<Semaphore>> sems;
  for (int i = 0; i < kWaiters; ++i) {
    auto sem = Semaphore::Create(*session, path, 3);
    ASSERT_TRUE(sem.ok()) << sem.status();
    (*sem)->AcquireAsync(1, [out, i](absl::StatusOr<LockGuard> g) {
      absl::MutexLock l(&out->mu);
      out->status[i] = g.status();
      if (!g.ok()) return;
      out->guards[i] = std::move(*g);
      ++out->ours;
      const int in_use = out->ours + out->raw_left;
      out->max_in_use = std::max(out->max_in_use, in_use);
      if (in_use > 3) {
        out->violations.push_back(absl::StrCat("waiter ", i, " granted with ", out->ours,
                                               " of ours and ", out->raw_left,
                                               " long holders in: ", in_use, " of 3 leases"));
      }
    });
    sems.push_back(std::move(*sem));
    absl::SleepFor(absl::Milliseconds(300));
  }
  absl::SleepFor(absl::Seconds(1));
  std::vector<int> admitted;
  {
    absl::MutexLock l(&out->mu);
    for (int i = 0; i < kWaiters; ++i) {
      if (!out->status[i].has_value()) {
        admitted.push_back(i);
      } else {
        std::cout << "waiter " << i << " ended at once: " << *out->status[i] << "\n";
        EXPECT_TRUE(absl::IsResourceExhausted(*out->status[i])) << *out->status[i];
      }
    }
  }
  std::cout << admitted.size() << " of " << kWaiters << " waiters admitted\n";
  ASSERT_GT(admitted.size(), 0u);
  size_t filled = 0;
  for (; filled < 5000; ++filled) {
    auto r = session->ExistsAndWatch(absl::StrFormat("%s/w%06d", Path("absent"), filled),
                                     [](const WatchEvent&) {});
    if (!r.ok()) break;
  }
  std::cout << filled << " plain watches fill the budget\n";
  for (const std::string& h : raw) {
    {
      absl::MutexLock l(&out->mu);
      --out->raw_left;
    }
    ASSERT_TRUE(admin().Delete(h).ok());
    absl::SleepFor(absl::Milliseconds(700));
  }
  // Release our holds one at a time until every admitted waiter was granted.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    size_t granted = 0;
    std::optional<int> to_release;
    {
      absl::MutexLock l(&out->mu);
      for (int i : admitted) {
        if (out->status[i].has_value()) ++granted;
        if (out->guards[i].held() && !to_release.has_value()) to_release = i;
      }
      if (granted == admitted.size()) break;
      if (to_release.has_value() && out->ours >= 3) --out->ours;
      else to_release.reset();
    }
    if (to_release.has_value()) {
      LockGuard g;
      {
        absl::MutexLock l(&out->mu);
        g = std::move(out->guards[*to_release]);
      }
      (void)g.Release();
    }
    absl::SleepFor(absl::Milliseconds(300));
  }
  {
    absl::MutexLock l(&out->mu);
    size_t granted = 0;
    for (int i : admitted) {
      if (!out->status[i].has_value()) {
        ADD_FAILURE() << "admitted waiter " << i << " never answered (hang)";
      } else if (out->status[i]->ok()) {
        ++granted;
      } else {
        ADD_FAILURE() << "admitted waiter " << i << " failed: " << *out->status[i];
      }
    }
    std::cout << granted << " granted; at most " << out->max_in_use << " leases in use\n";
    for (const auto& v : out->violations) ADD_FAILURE() << v;
    for (auto& g : out->guards) {
      if (g.held()) (void)g.Release();
    }
  }
  sems.clear();
  session->Close();
  CleanRoot();
}


// Observers and group watches destroyed from inside their own callbacks
// (allowed by the header) with the budget nearly full: each must give its
// room back; afterwards the session admits as many watches as before.
TEST_F(WatchBudgetEdgesTest, DestroyedInsideTheirCallbacksGiveTheirRoomBack) {
  auto session = Small();
  ASSERT_NE(session, nullptr);
  const size_t at_start = CountAdmittedWatches(*session, Path("c00"));
  ASSERT_GT(at_start, 5u);
  const std::string election = Path("election");
  const std::string group = Path("group");
  Recreate(election);
  Recreate(group);
  auto a = LeaderElection::Create(admin(), election);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->Join().ok());
  size_t destroyed = 0;
  for (size_t i = 0; i < at_start * 3; ++i) {
    struct Slot {
      absl::Mutex mu;
      std::unique_ptr<LeaderObserver> observer;
      std::unique_ptr<GroupWatch> watch;
      int calls = 0;
    };
    auto slot = std::make_shared<Slot>();
    absl::Notification gone_o, gone_w;
    {
      absl::MutexLock l(&slot->mu);
      auto o = LeaderObserver::Create(*session, election,
                                      [slot, &gone_o](const std::optional<LeaderInfo>&) {
                                        std::unique_ptr<LeaderObserver> mine;
                                        {
                                          absl::MutexLock l(&slot->mu);
                                          ++slot->calls;
                                          mine = std::move(slot->observer);
                                        }
                                        if (mine) {
                                          mine.reset();
                                          gone_o.Notify();
                                        }
                                      });
      ASSERT_TRUE(o.ok()) << "observer #" << i << ": " << o.status();
      slot->observer = std::move(*o);
      auto w = GroupWatch::Create(*session, group,
                                  [slot, &gone_w](const std::vector<GroupMemberInfo>&) {
                                    std::unique_ptr<GroupWatch> mine;
                                    {
                                      absl::MutexLock l(&slot->mu);
                                      mine = std::move(slot->watch);
                                    }
                                    if (mine) {
                                      mine.reset();
                                      gone_w.Notify();
                                    }
                                  });
      ASSERT_TRUE(w.ok()) << "group watch #" << i << ": " << w.status();
      slot->watch = std::move(*w);
    }
    ASSERT_TRUE(gone_o.WaitForNotificationWithTimeout(absl::Seconds(10))) << "observer #" << i;
    ASSERT_TRUE(gone_w.WaitForNotificationWithTimeout(absl::Seconds(10))) << "group watch #" << i;
    ++destroyed;
  }
  std::cout << destroyed << " observers and group watches destroyed in their callbacks\n";
  EXPECT_EQ(CountAdmittedWatches(*session, Path("c01")), at_start);
  a->reset();
  session->Close();
  CleanRoot();
}

// ---------------------------------------------------------------------------
// Own server (64 KiB jute.maxbuffer) behind a proxy: over-commit.
class OverCommitTest : public testing::PacketLimitServerTest {};

struct Waits {
  explicit Waits(size_t n) : status(n), at(n), guards(n) {}
  absl::Mutex mu;
  std::vector<absl::Status> status;
  std::vector<absl::Time> at;
  std::vector<LockGuard> guards;
  size_t done = 0;
  size_t Done() {
    absl::MutexLock l(&mu);
    return done;
  }
};

void StartWaits(Session& session, const std::vector<std::string>& dirs, Waits& out,
                std::vector<std::unique_ptr<ExclusiveLock>>& locks) {
  for (size_t i = 0; i < dirs.size(); ++i) {
    auto lock = ExclusiveLock::Create(session, dirs[i]);
    ASSERT_TRUE(lock.ok());
    (*lock)->AcquireAsync([&out, i](absl::StatusOr<LockGuard> r) {
      absl::MutexLock l(&out.mu);
      out.status[i] = r.status();
      out.at[i] = absl::Now();
      if (r.ok()) out.guards[i] = std::move(*r);
      ++out.done;
    });
    locks.push_back(std::move(*lock));
  }
}

// All waits of a full budget cancelled, as many started at once on other
// directories, and the connection reset twice meanwhile (the first time
// right away, the second right after reconnecting, while removals may be in
// flight): no admitted wait may fail (hard cap "watch on", LOST, anything),
// the session must survive (every SetWatches within jute.maxbuffer), and
// every admitted wait is granted once its holder goes.
TEST_F(OverCommitTest, CancelAllAndRestartAcrossResets) {
  auto admin = Connect(server_->connect_string());
  ASSERT_NE(admin, nullptr);
  auto proxy = testing::TcpProxy::Start("127.0.0.1", server_->client_port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const std::string root = "/overcommit";
  const std::string holder = "holder_1_0-W-";
  constexpr size_t kDirs = 900;
  ASSERT_TRUE(admin->Create(root, "", CreateMode::kPersistent).ok());
  std::vector<std::string> first, second;
  std::vector<Op> ops;
  for (size_t i = 0; i < 2 * kDirs; ++i) {
    const std::string dir = absl::StrFormat("%s/%c%04d", root, i < kDirs ? 'a' : 'b', i % kDirs);
    (i < kDirs ? first : second).push_back(dir);
    ops.push_back(Op::Create(dir, "", CreateMode::kPersistent));
    ops.push_back(Op::Create(dir + "/" + holder, "", CreateMode::kEphemeralSequential));
    if (ops.size() >= 100) {
      auto made = admin->Multi(ops);
      ASSERT_TRUE(made.ok()) << made.status();
      ops.clear();
    }
  }
  auto session = Connect((*proxy)->address());
  ASSERT_NE(session, nullptr);
  testing::StateRecorder states(*session);
  const int64_t id = session->session_id();

  for (int round = 0; round < 3; ++round) {
    Waits a(kDirs), b(kDirs);
    std::vector<std::unique_ptr<ExclusiveLock>> a_locks, b_locks;
    StartWaits(*session, round % 2 == 0 ? first : second, a, a_locks);
    // Let them settle: refusals come at once, admitted ones wait.
    absl::SleepFor(absl::Seconds(4));
    const size_t a_refused = a.Done();
    std::cout << "round " << round << ": " << kDirs - a_refused << " admitted, " << a_refused
              << " refused\n";
    for (auto& lock : a_locks) lock->Cancel();
    StartWaits(*session, round % 2 == 0 ? second : first, b, b_locks);
    auto reconnects = [&] {
      auto all = states.states();
      return std::count(all.begin(), all.end(), SessionState::kReconnected);
    };
    const auto before = reconnects();
    (*proxy)->ResetConnections();
    EXPECT_TRUE(testing::Eventually([&] { return reconnects() > before; }, absl::Seconds(30)))
        << "not reconnected after the first reset";
    (*proxy)->ResetConnections();
    absl::SleepFor(absl::Milliseconds(300));
    (*proxy)->ResetConnections();
    EXPECT_TRUE(testing::Eventually([&] { return a.Done() == kDirs; }, absl::Seconds(60)))
        << "cancelled waits not all completed: " << a.Done();
    absl::SleepFor(absl::Seconds(6));
    // The admitted b waits: still waiting, none failed late.
    size_t b_failed_late = 0, b_refused = 0, hard_cap = 0;
    std::vector<size_t> pending;
    {
      absl::MutexLock l(&b.mu);
      for (size_t i = 0; i < kDirs; ++i) {
        if (b.at[i] == absl::Time()) {
          pending.push_back(i);
        } else if (absl::IsResourceExhausted(b.status[i]) &&
                   !absl::StartsWith(b.status[i].message(), "watch on")) {
          ++b_refused;
        } else {
          if (absl::StartsWith(b.status[i].message(), "watch on")) ++hard_cap;
          if (++b_failed_late <= 3) std::cout << "b wait " << i << ": " << b.status[i] << "\n";
        }
      }
    }
    std::cout << "round " << round << ": b " << pending.size() << " waiting, " << b_refused
              << " refused up front, " << b_failed_late << " failed otherwise (" << hard_cap
              << " by the hard cap)\n";
    EXPECT_EQ(b_failed_late, 0u) << "round " << round;
    EXPECT_GT(pending.size(), 0u);
    // Free the b holders: every pending b wait is granted.
    const std::vector<std::string>& bdirs = round % 2 == 0 ? second : first;
    for (size_t i : pending) {
      auto kids = admin->GetChildren(bdirs[i]);
      ASSERT_TRUE(kids.ok());
      for (const std::string& k : *kids) {
        if (absl::StartsWith(k, "holder_")) {
          ASSERT_TRUE(admin->Delete(bdirs[i] + "/" + k).ok());
        }
      }
    }
    EXPECT_TRUE(testing::Eventually([&] { return b.Done() == kDirs; }, absl::Seconds(60)))
        << "round " << round << ": " << kDirs - b.Done()
        << " admitted waits not granted 60 s after their holders went";
    size_t granted = 0;
    {
      absl::MutexLock l(&b.mu);
      for (size_t i : pending) {
        if (b.status[i].ok()) {
          ++granted;
        } else {
          std::cout << "b wait " << i << " after its holder went: " << b.status[i] << "\n";
        }
      }
      for (auto& g : b.guards) {
        if (g.held()) (void)g.Release();
      }
    }
    EXPECT_EQ(granted, pending.size()) << "round " << round;
    // Restore the holders for the next round.
    for (size_t i : pending) {
      ASSERT_TRUE(admin->Create(bdirs[i] + "/" + holder, "", CreateMode::kEphemeralSequential).ok());
    }
    a_locks.clear();
    b_locks.clear();
    {
      absl::MutexLock l(&a.mu);
      for (auto& g : a.guards) {
        if (g.held()) (void)g.Release();
      }
    }
  }
  EXPECT_EQ(session->session_id(), id) << "the session was lost";
  EXPECT_THAT(states.states(), Not(Contains(SessionState::kLost)));
  session->Close();
  (void)testing::DeleteRecursively(*admin, root);
  admin->Close();
}

}  // namespace
}  // namespace zkr
