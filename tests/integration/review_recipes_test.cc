// Adversarial review of MultiLock, the std adapters, elections, groups and
// barriers against a real server. Each test fails if a promise of the public
// headers is broken.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"
#include "zkrecipes/std_lock.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::Eventually;
using testing::ZkTest;


template <class T>
bool Ready(std::future<T>& f, absl::Duration bound = absl::Seconds(30)) {
  return f.wait_for(absl::ToChronoMilliseconds(bound)) == std::future_status::ready;
}


// Lock/group/election directories are containers the server reaps lazily:
// the leak check here is on the nodes inside them (nothing may be left in a
// directory), then the directories are removed.
void CheckAndClearDirectories(Session& admin, const std::string& root) {
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
    (void)testing::DeleteRecursively(admin, root + "/" + d);
  }
}

class ReviewTest : public ZkTest {
 protected:
  void TearDown() override {
    CheckAndClearDirectories(admin(), root());
    ZkTest::TearDown();
  }
  size_t Children(const std::string& path) {
    auto c = admin().GetChildren(path);
    return c.ok() ? c->size() : 0;
  }
  std::vector<std::string> ChildList(const std::string& path) {
    auto c = admin().GetChildren(path);
    return c.ok() ? *c : std::vector<std::string>{};
  }
};

// ---------------------------------------------------------------- MultiLock

// The session is lost while the first part is held and the second is
// awaited: Acquire fails (session lost) promptly, and nothing is left.
TEST_F(ReviewTest, MultiLockSessionExpiredWhileWaitingForLaterPart) {
  const std::string a = Path("a"), b = Path("b");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, b);
  ASSERT_TRUE(blocker.ok());
  auto held_b = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok()) << held_b.status();

  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{b, LockMode::kWrite}, {a, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 1 && Children(b) == 2; }));
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(Ready(pending, absl::Seconds(20))) << "Acquire did not end on session loss";
  auto result = pending.get();
  EXPECT_FALSE(result.ok());
  if (!result.ok()) EXPECT_TRUE(IsSessionLost(result.status()) || absl::IsAborted(result.status())) << result.status();
  EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 1; }));
  ASSERT_TRUE(held_b->Release().ok());
  multi->reset();
}

// Destroying the MultiLock races with the grant (the set is free): either
// Acquire returns a held guard, or Cancelled, and nothing is left after.
TEST_F(ReviewTest, MultiLockDestroyRacesGrant) {
  auto session = NewSession();
  std::mt19937 rng(42);
  for (int round = 0; round < 30; ++round) {
    const std::string a = Path("a" + std::to_string(round)), b = Path("b" + std::to_string(round));
    auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kRead}});
    ASSERT_TRUE(multi.ok());
    std::unique_ptr<MultiLock> owned = std::move(*multi);
    MultiLock* raw = owned.get();
    std::atomic<bool> started{false};
    auto pending = std::async(std::launch::async, [&] {
      started = true;
      return raw->Acquire(absl::Seconds(30));
    });
    while (!started) std::this_thread::yield();
    const int spins = rng() % 20000;
    for (int i = 0; i < spins; ++i) std::this_thread::yield();
    owned.reset();
    ASSERT_TRUE(Ready(pending, absl::Seconds(20))) << "round " << round;
    auto result = pending.get();
    if (result.ok()) {
      EXPECT_TRUE(result->held()) << "round " << round;
      EXPECT_EQ(Children(a), 1u);
      EXPECT_EQ(Children(b), 1u);
      EXPECT_TRUE(result->Release().ok());
    } else {
      EXPECT_TRUE(absl::IsCancelled(result.status())) << round << ": " << result.status();
    }
    EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 0; }))
        << "round " << round << " left " << Children(a) << "/" << Children(b);
  }
}

// A negative timeout with a blocked part must not wait; a huge one with
// Cancel from another thread ends promptly.
TEST_F(ReviewTest, MultiLockNegativeAndHugeTimeouts) {
  const std::string a = Path("a"), b = Path("b");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, b);
  auto held_b = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  const absl::Time start = absl::Now();
  auto neg = (*multi)->Acquire(-absl::Seconds(5));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_FALSE(neg.ok());
  for (absl::Duration huge : {absl::Hours(24 * 365 * 200), absl::Seconds(INT64_MAX / 4),
                              absl::InfiniteDuration()}) {
    auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(huge); });
    ASSERT_TRUE(Eventually([&] { return Children(b) == 2; }));
    EXPECT_EQ(pending.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
        << "huge timeout did not wait: " << huge;
    (*multi)->Cancel();
    ASSERT_TRUE(Ready(pending, absl::Seconds(10)));
    auto r = pending.get();
    EXPECT_TRUE(absl::IsCancelled(r.status())) << r.status();
    EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 1; }));
  }
  ASSERT_TRUE(held_b->Release().ok());
}

// on_state_change: never kReleased, never after Release() returned; a part
// deleted by an operator after the grant reports kLost.
TEST_F(ReviewTest, MultiLockStateChangeSemantics) {
  const std::string a = Path("a"), b = Path("b");
  auto session = NewSession();
  absl::Mutex mu;
  std::vector<LockState> seen;
  std::atomic<bool> released{false};
  std::atomic<int> after_release{0};
  LockOptions options;
  options.on_state_change = [&](LockState s) {
    if (released) ++after_release;
    absl::MutexLock l(&mu);
    seen.push_back(s);
  };
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}}, options);
  ASSERT_TRUE(multi.ok());
  auto held = (*multi)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(held->held());
  // Delete the b part's node.
  auto kids = ChildList(b);
  ASSERT_EQ(kids.size(), 1u);
  ASSERT_TRUE(admin().Delete(b + "/" + kids[0]).ok());
  EXPECT_TRUE(Eventually([&] { return held->state() == LockState::kLost; }));
  EXPECT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return !seen.empty() && seen.back() == LockState::kLost;
  }));
  released = true;
  (void)held->Release();
  EXPECT_EQ(after_release.load(), 0);
  absl::MutexLock l(&mu);
  for (LockState s : seen) EXPECT_NE(s, LockState::kReleased);
  EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 0; }));
}

// -------------------------------------------------------------- std adapters

TEST_F(ReviewTest, StdTryLockForNeverWaitsPastBound) {
  const std::string p = Path("m");
  auto other = NewSession();
  auto other_lock = ExclusiveLock::Create(*other, p);
  auto held = (*other_lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, p);
  StdMutex mutex(**lock);
  for (int i = 0; i < 5; ++i) {
    absl::Time start = absl::Now();
    EXPECT_FALSE(mutex.try_lock_for(std::chrono::milliseconds(150)));
    absl::Duration took = absl::Now() - start;
    EXPECT_LT(took, absl::Milliseconds(150) + absl::Seconds(1)) << took;
    EXPECT_TRUE(absl::IsDeadlineExceeded(mutex.status())) << mutex.status();
    start = absl::Now();
    EXPECT_FALSE(mutex.try_lock());
    EXPECT_LT(absl::Now() - start, absl::Seconds(1));
    // Past deadline in try_lock_until.
    EXPECT_FALSE(mutex.try_lock_until(std::chrono::steady_clock::now() - std::chrono::seconds(5)));
  }
  // Local contention: a thread holds the adapter; another's try_lock_for is bounded.
  ASSERT_TRUE(held->Release().ok());
  mutex.lock();
  auto f = std::async(std::launch::async, [&] {
    absl::Time start = absl::Now();
    bool got = mutex.try_lock_for(std::chrono::milliseconds(200));
    return std::make_pair(got, absl::Now() - start);
  });
  ASSERT_TRUE(Ready(f, absl::Seconds(10)));
  auto [got, took] = f.get();
  EXPECT_FALSE(got);
  EXPECT_LT(took, absl::Milliseconds(200) + absl::Seconds(1));
  mutex.unlock();
  EXPECT_TRUE(Eventually([&] { return Children(p) == 0; }));
}

TEST_F(ReviewTest, StdSharedTryLockSharedForBoundedBehindLocalWriter) {
  const std::string p = Path("rw");
  auto session = NewSession();
  auto lock = SharedLock::Create(*session, p);
  ASSERT_TRUE(lock.ok());
  StdSharedMutex mutex(**lock);
  mutex.lock_shared();
  // A local writer waits for the reader, blocking later readers locally.
  auto writer = std::async(std::launch::async, [&] {
    bool got = mutex.try_lock_for(std::chrono::seconds(3));
    if (got) mutex.unlock();
    return got;
  });
  absl::SleepFor(absl::Milliseconds(100));  // let the writer start waiting (not a sync point)
  auto reader = std::async(std::launch::async, [&] {
    absl::Time start = absl::Now();
    bool got = mutex.try_lock_shared_for(std::chrono::milliseconds(200));
    if (got) mutex.unlock_shared();
    return absl::Now() - start;
  });
  ASSERT_TRUE(Ready(reader, absl::Seconds(10)));
  EXPECT_LT(reader.get(), absl::Milliseconds(200) + absl::Seconds(1));
  mutex.unlock_shared();
  ASSERT_TRUE(Ready(writer, absl::Seconds(10)));
  EXPECT_TRUE(writer.get()) << mutex.status();
  EXPECT_TRUE(Eventually([&] { return Children(p) == 0; }));
}

TEST_F(ReviewTest, StdScopedLockOppositeOrdersNoDeadlock) {
  const std::string pa = Path("a"), pb = Path("b");
  auto s1 = NewSession();
  auto la = ExclusiveLock::Create(*s1, pa);
  auto lb = ExclusiveLock::Create(*s1, pb);
  StdMutex ma(**la), mb(**lb);
  auto s2 = NewSession();
  auto la2 = ExclusiveLock::Create(*s2, pa);
  auto lb2 = ExclusiveLock::Create(*s2, pb);
  StdMutex ma2(**la2), mb2(**lb2);
  std::atomic<int> inside{0}, overlaps{0};
  auto body = [&](StdMutex& x, StdMutex& y) {
    for (int i = 0; i < 15; ++i) {
      std::scoped_lock both(x, y);
      if (inside.fetch_add(1) != 0) ++overlaps;
      std::this_thread::yield();
      inside.fetch_sub(1);
    }
  };
  auto t1 = std::async(std::launch::async, body, std::ref(ma), std::ref(mb));
  auto t2 = std::async(std::launch::async, body, std::ref(mb), std::ref(ma));
  auto t3 = std::async(std::launch::async, body, std::ref(mb2), std::ref(ma2));
  ASSERT_TRUE(Ready(t1, absl::Seconds(90))) << "deadlock";
  ASSERT_TRUE(Ready(t2, absl::Seconds(90))) << "deadlock";
  ASSERT_TRUE(Ready(t3, absl::Seconds(90))) << "deadlock";
  t1.get(); t2.get(); t3.get();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_TRUE(Eventually([&] { return Children(pa) == 0 && Children(pb) == 0; }));
}

TEST_F(ReviewTest, StdSharedLocalReadersShareOneNode) {
  const std::string p = Path("rw");
  auto session = NewSession();
  auto lock = SharedLock::Create(*session, p);
  StdSharedMutex mutex(**lock);
  constexpr int kReaders = 8;
  std::atomic<int> in{0};
  absl::Notification go_out;
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&] {
      std::shared_lock<StdSharedMutex> r(mutex);
      ++in;
      go_out.WaitForNotificationWithTimeout(absl::Seconds(30));
    });
  }
  ASSERT_TRUE(Eventually([&] { return in.load() == kReaders; }));
  EXPECT_EQ(Children(p), 1u);
  go_out.Notify();
  for (auto& t : threads) t.join();
  EXPECT_TRUE(Eventually([&] { return Children(p) == 0; }));
}

// ------------------------------------------------------------------ election

// Non-candidate children in the election directory: the candidate still
// leads (or waits) without a busy loop of listings.
TEST_F(ReviewTest, ElectionNonCandidateChildrenNoBusyLoop) {
  const std::string e = Path("election");
  ASSERT_TRUE(admin().CreateParents(e + "/x", false).ok());
  ASSERT_TRUE(admin().Create(e + "/aaa", "", CreateMode::kPersistent).ok());
  ASSERT_TRUE(admin().Create(e + "/zzz-lock-", "", CreateMode::kPersistent).ok());
  ASSERT_TRUE(admin().Create(e + "/n_", "", CreateMode::kPersistentSequential).ok());
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  ElectionOptions options;
  options.id = "c1";
  auto election = LeaderElection::Create(*session, e, options);
  ASSERT_TRUE(election.ok());
  ASSERT_TRUE((*election)->Join().ok());
  absl::Status led = (*election)->AwaitLeadership(absl::Seconds(5));
  const int before = faults->Calls(testing::FaultRule::Call::kGetChildren, e) +
                     faults->Calls(testing::FaultRule::Call::kExists, e) +
                     faults->Calls(testing::FaultRule::Call::kGet, e);
  absl::SleepFor(absl::Seconds(1));  // measurement window, not synchronisation
  const int after = faults->Calls(testing::FaultRule::Call::kGetChildren, e) +
                    faults->Calls(testing::FaultRule::Call::kExists, e) +
                    faults->Calls(testing::FaultRule::Call::kGet, e);
  EXPECT_LT(after - before, 5) << "busy loop: " << (after - before) << " reads in 1s; led=" << led;
  EXPECT_TRUE(led.ok()) << led;
  auto leader = (*election)->CurrentLeader();
  EXPECT_TRUE(leader.ok()) << leader.status();
  if (leader.ok()) EXPECT_EQ(leader->value_or("<none>"), "c1");
  EXPECT_TRUE((*election)->Leave().ok());
  election->reset();
  for (const auto& c : ChildList(e)) (void)admin().Delete(e + "/" + c);
}

// A leader partitioned away: the old leader is told kSuspended before the
// other candidate becomes leader (never two leaders in the ledger).
class ReviewProxiedTest : public testing::ProxiedZkTest {
 protected:
  void TearDown() override {
    CheckAndClearDirectories(admin(), root());
    testing::ProxiedZkTest::TearDown();
  }
  size_t Children(const std::string& path) {
    auto c = admin().GetChildren(path);
    return c.ok() ? c->size() : 0;
  }
  std::vector<std::string> ChildList(const std::string& path) {
    auto c = admin().GetChildren(path);
    return c.ok() ? *c : std::vector<std::string>{};
  }
};

TEST_F(ReviewProxiedTest, ElectionNeverTwoLeadersAcrossPartition) {
  const std::string e = Path("election");
  absl::Mutex mu;
  int leaders = 0, max_leaders = 0;
  std::vector<std::string> log;
  auto make_cb = [&](std::string who) {
    auto leading = std::make_shared<bool>(false);
    return [&, who, leading](Leadership l) {
      absl::MutexLock lock(&mu);
      bool now = l == Leadership::kLeader;
      if (now && !*leading) ++leaders;
      if (!now && *leading) --leaders;
      *leading = now;
      max_leaders = std::max(max_leaders, leaders);
      log.push_back(who + ":" + std::string(LeadershipName(l)));
    };
  };
  SessionOptions po = ProxiedOptions();
  auto s1 = NewSession(po);
  ElectionOptions o1;
  o1.id = "p1";
  o1.on_change = make_cb("p1");
  auto e1 = LeaderElection::Create(*s1, e, o1);
  ASSERT_TRUE((*e1)->Join().ok());
  ASSERT_TRUE((*e1)->AwaitLeadership(absl::Seconds(10)).ok());
  auto s2 = NewSession();
  ElectionOptions o2;
  o2.id = "d2";
  o2.on_change = make_cb("d2");
  auto e2 = LeaderElection::Create(*s2, e, o2);
  ASSERT_TRUE((*e2)->Join().ok());
  ASSERT_TRUE(Eventually([&] { return Children(e) == 2; }));
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  EXPECT_TRUE((*e2)->AwaitLeadership(absl::Seconds(30)).ok());
  {
    absl::MutexLock lock(&mu);
    EXPECT_LE(max_leaders, 1) << absl::StrJoin(log, ", ");
  }
  EXPECT_FALSE((*e1)->IsLeader());
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  (void)(*e2)->Leave();
  e2->reset();
  e1->reset();
  s1.reset();
  EXPECT_TRUE(Eventually([&] { return Children(e) == 0; }));
}

// SetData from a deposed leader (node deleted by an operator) fails and
// writes nothing on the new leader.
TEST_F(ReviewTest, ElectionSetDataAfterTakeOver) {
  const std::string e = Path("election");
  auto s1 = NewSession();
  auto s2 = NewSession();
  ElectionOptions o1; o1.id = "one"; o1.rejoin_after_loss = false;
  ElectionOptions o2; o2.id = "two";
  auto e1 = LeaderElection::Create(*s1, e, o1);
  auto e2 = LeaderElection::Create(*s2, e, o2);
  ASSERT_TRUE((*e1)->Join().ok());
  ASSERT_TRUE((*e1)->AwaitLeadership(absl::Seconds(10)).ok());
  ASSERT_TRUE((*e2)->Join().ok());
  ASSERT_TRUE(Eventually([&] { return Children(e) == 2; }));
  // The leader's node: the one whose data names "one".
  std::string leader_node;
  for (const auto& k : ChildList(e)) {
    auto data = admin().Get(e + "/" + k);
    if (data.ok() && data->rfind("one", 0) == 0) leader_node = e + "/" + k;
  }
  ASSERT_FALSE(leader_node.empty());
  // Delete the leader's node behind its back; race SetData against take-over.
  ASSERT_TRUE(admin().Delete(leader_node).ok());
  absl::Status set = (*e1)->SetData("stale");
  ASSERT_TRUE((*e2)->AwaitLeadership(absl::Seconds(10)).ok());
  for (const auto& k : ChildList(e)) {
    auto data = admin().Get(e + "/" + k);
    ASSERT_TRUE(data.ok());
    EXPECT_EQ(data->find("stale"), std::string::npos) << "stale data on " << k << ": " << *data;
  }
  EXPECT_FALSE((*e1)->SetData("stale2").ok());
  (void)(*e2)->Leave();
  e1->reset();
  e2->reset();
  EXPECT_TRUE(Eventually([&] { return Children(e) == 0; }));
}

// Destroying a LeaderSelector from inside take_leadership, repeatedly.
TEST_F(ReviewTest, SelectorDestroyedInsideTakeLeadership) {
  const std::string e = Path("election");
  for (int round = 0; round < 5; ++round) {
    auto session = NewSession();
    std::unique_ptr<LeaderSelector> selector;
    absl::Mutex mu;
    std::promise<void> done;
    LeaderSelector::Options options;
    options.election.id = "sel";
    auto created = LeaderSelector::Create(
        *session, e,
        [&](LeadershipContext&) {
          std::unique_ptr<LeaderSelector> me;
          {
            absl::MutexLock l(&mu);
            me = std::move(selector);
          }
          me.reset();
          done.set_value();
        },
        options);
    ASSERT_TRUE(created.ok());
    {
      absl::MutexLock l(&mu);
      selector = std::move(*created);
      ASSERT_TRUE(selector->Start().ok());
    }
    auto f = done.get_future();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(Eventually([&] { return Children(e) == 0; })) << round;
    session.reset();
  }
}

// ------------------------------------------------------------------- groups

TEST_F(ReviewTest, GroupMemberConcurrentJoinLeaveSetData) {
  const std::string g = Path("group");
  auto session = NewSession();
  GroupOptions o; o.id = "m";
  auto member = GroupMember::Create(*session, g, o);
  ASSERT_TRUE(member.ok());
  std::atomic<int> max_nodes{0};
  std::atomic<bool> stop{false};
  std::thread observer([&] {
    while (!stop) {
      int n = static_cast<int>(Children(g));
      int m = max_nodes.load();
      while (n > m && !max_nodes.compare_exchange_weak(m, n)) {}
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 30; ++i) {
        switch ((t + i) % 3) {
          case 0: (void)(*member)->Join(absl::Seconds(5)); break;
          case 1: (void)(*member)->Leave(); break;
          default: (void)(*member)->SetData("d" + std::to_string(i)); break;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  stop = true;
  observer.join();
  EXPECT_LE(max_nodes.load(), 1);
  if ((*member)->joined()) {
    EXPECT_EQ(Children(g), 1u);
    ASSERT_TRUE((*member)->Leave().ok());
  }
  EXPECT_FALSE((*member)->joined());
  EXPECT_TRUE(Eventually([&] { return Children(g) == 0; })) << Children(g);
}

TEST_F(ReviewTest, GroupMemberSetDataAfterSessionLoss) {
  const std::string g = Path("group");
  auto session = NewSession();
  GroupOptions o; o.id = "m"; o.data = "v0";
  auto member = GroupMember::Create(*session, g, o);
  ASSERT_TRUE((*member)->Join().ok());
  testing::StateRecorder rec(*session);
  const uint64_t gen = session->generation();
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(rec.WaitFor(SessionState::kConnected, gen + 1).has_value());
  absl::Status s = (*member)->SetData("after");
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_FALSE((*member)->joined());
  EXPECT_EQ(Children(g), 0u);
  // Join again works, and the new node has the newest accepted data, never "after"?
  ASSERT_TRUE((*member)->Join().ok());
  auto list = ListGroup(admin(), g);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  // A refused SetData changes nothing (it used to be kept for the next Join).
  EXPECT_NE((*list)[0].data, "after");
  ASSERT_TRUE((*member)->Leave().ok());
  EXPECT_TRUE(Eventually([&] { return Children(g) == 0; }));
}

// GroupWatch keeps hearing across session expiries while members churn;
// its final list equals the server's. Several recipes share the session.
TEST_F(ReviewTest, GroupWatchNeverDeafAcrossExpiries) {
  const std::string g = Path("group");
  auto wsession = NewSession();
  absl::Mutex mu;
  std::vector<std::string> last;
  int calls = 0;
  auto watch = GroupWatch::Create(*wsession, g, [&](const std::vector<GroupMemberInfo>& m) {
    absl::MutexLock l(&mu);
    last.clear();
    for (const auto& x : m) last.push_back(x.node);
    ++calls;
  });
  ASSERT_TRUE(watch.ok());
  // Another recipe on the watch's session.
  GroupOptions wo; wo.id = "self";
  auto self = GroupMember::Create(*wsession, g, wo);
  ASSERT_TRUE((*self)->Join().ok());
  auto lock = ExclusiveLock::Create(*wsession, Path("lock"));
  auto held = (*lock)->Acquire(absl::Seconds(5));
  ASSERT_TRUE(held.ok());

  auto msession = NewSession();
  std::vector<std::unique_ptr<GroupMember>> members;
  for (int i = 0; i < 4; ++i) {
    GroupOptions o; o.id = "m" + std::to_string(i);
    members.push_back(std::move(*GroupMember::Create(*msession, g, o)));
  }
  testing::StateRecorder rec(*wsession);
  for (int round = 0; round < 3; ++round) {
    const uint64_t gen = wsession->generation();
    std::thread churn([&] {
      for (int i = 0; i < 12; ++i) {
        auto& m = members[i % members.size()];
        if (m->joined()) (void)m->Leave(); else (void)m->Join(absl::Seconds(5));
      }
    });
    ASSERT_TRUE(testing::ExpireSession(*wsession).ok());
    churn.join();
    ASSERT_TRUE(rec.WaitFor(SessionState::kConnected, gen + 1).has_value());
  }
  // Final change after everything settled.
  if (members[0]->joined()) (void)members[0]->Leave(); else (void)members[0]->Join();
  auto expected = [&] {
    auto kids = ChildList(g);
    std::sort(kids.begin(), kids.end());
    return kids;
  };
  bool equal = Eventually([&] {
    auto want = expected();
    absl::MutexLock l(&mu);
    auto have = last;
    std::sort(have.begin(), have.end());
    return have == want;
  }, absl::Seconds(15));
  {
    absl::MutexLock l(&mu);
    EXPECT_TRUE(equal) << "watch reports " << absl::StrJoin(last, ",") << " server has "
                       << absl::StrJoin(expected(), ",");
  }
  for (auto& m : members) if (m->joined()) (void)m->Leave();
  if ((*self)->joined()) (void)(*self)->Leave();
  held->Release().IgnoreError();
  members.clear();
  self->reset();
  watch->reset();
  EXPECT_TRUE(Eventually([&] { return Children(g) == 0; }));
}

// ----------------------------------------------------------------- barriers

// A DoubleBarrier member's session is lost while it waits in Enter: it must
// not return OK without its node; another member must not be released by a
// member that no longer has a node.
TEST_F(ReviewTest, DoubleBarrierSessionLossWhileEntering) {
  const std::string p = Path("dbar");
  auto sa = NewSession();
  auto a = DoubleBarrier::Create(*sa, p, "a", 2);
  ASSERT_TRUE(a.ok());
  auto fa = std::async(std::launch::async, [&] { return (*a)->Enter(absl::Seconds(8)); });
  ASSERT_TRUE(Eventually([&] { return Children(p) >= 1; }));
  ASSERT_TRUE(testing::ExpireSession(*sa).ok());
  ASSERT_TRUE(Ready(fa, absl::Seconds(20)));
  absl::Status sa_status = fa.get();
  if (sa_status.ok()) {
    // OK only with its node present on the server.
    auto kids = ChildList(p);
    bool has = false;
    for (auto& k : kids) if (k.find("a") != std::string::npos) has = true;
    EXPECT_TRUE(has) << "Enter OK without its node; children: " << absl::StrJoin(kids, ",");
    EXPECT_TRUE(false) << "Enter returned OK with only one of two members";
  }
  a->reset();
  sa.reset();
  EXPECT_TRUE(Eventually([&] {
    for (auto& k : ChildList(p)) if (k != "ready") return false;
    return true;
  }));
  (void)testing::DeleteRecursively(admin(), p);
}

// A connection cut while entering: Enter with a deadline returns by then
// (+ a session timeout) and leaves no node after DeadlineExceeded.
TEST_F(ReviewProxiedTest, DoubleBarrierEnterDeadlineWithConnectionCut) {
  const std::string p = Path("dbar");
  auto sa = NewSession(ProxiedOptions());
  auto a = DoubleBarrier::Create(*sa, p, "a", 2);
  ASSERT_TRUE(a.ok());
  const absl::Time start = absl::Now();
  auto fa = std::async(std::launch::async, [&] { return (*a)->Enter(absl::Seconds(3)); });
  ASSERT_TRUE(Eventually([&] { return Children(p) >= 1; }));
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(Ready(fa, absl::Seconds(20))) << "Enter did not honour its deadline";
  absl::Status s = fa.get();
  EXPECT_FALSE(s.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(3) + absl::Seconds(6)) << s;
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  a->reset();
  EXPECT_TRUE(Eventually([&] {
    for (auto& k : ChildList(p)) if (k != "ready") return false;
    return true;
  }, absl::Seconds(20))) << absl::StrJoin(ChildList(p), ",");
  sa.reset();
  (void)testing::DeleteRecursively(admin(), p);
}

// Leave with a connection cut while the other member is inside: a deadline
// is honoured; afterwards our node is gone.
TEST_F(ReviewProxiedTest, DoubleBarrierLeaveDuringConnectionCut) {
  const std::string p = Path("dbar");
  auto sa = NewSession(ProxiedOptions());
  auto sb = NewSession();
  auto a = DoubleBarrier::Create(*sa, p, "a", 2);
  auto b = DoubleBarrier::Create(*sb, p, "b", 2);
  auto fa = std::async(std::launch::async, [&] { return (*a)->Enter(absl::Seconds(10)); });
  ASSERT_TRUE((*b)->Enter(absl::Seconds(10)).ok());
  ASSERT_TRUE(Ready(fa, absl::Seconds(15)));
  ASSERT_TRUE(fa.get().ok());
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  const absl::Time start = absl::Now();
  absl::Status la = (*a)->Leave(absl::Seconds(2));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2) + absl::Seconds(6)) << la;
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  absl::Status lb = (*b)->Leave(absl::Seconds(15));
  EXPECT_TRUE(lb.ok()) << lb << " (a: " << la << ")";
  a->reset();
  b->reset();
  EXPECT_TRUE(Eventually([&] {
    for (auto& k : ChildList(p)) if (k != "ready") return false;
    return true;
  }, absl::Seconds(20))) << absl::StrJoin(ChildList(p), ",");
  sa.reset();
  (void)testing::DeleteRecursively(admin(), p);
}

// ------------------------------------------------------------ second batch

// A first part deleted by an operator while the second is awaited: Acquire
// fails (Aborted) naming it, promptly, and gives back everything.
TEST_F(ReviewTest, MultiLockFirstPartDeletedWhileWaiting) {
  const std::string a = Path("a"), b = Path("b");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, b);
  auto held_b = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{b, LockMode::kRead}, {a, LockMode::kWrite}});
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 1 && Children(b) == 2; }));
  auto kids = ChildList(a);
  ASSERT_EQ(kids.size(), 1u);
  ASSERT_TRUE(admin().Delete(a + "/" + kids[0]).ok());
  ASSERT_TRUE(Ready(pending, absl::Seconds(10))) << "Acquire kept waiting after losing a part";
  auto r = pending.get();
  EXPECT_TRUE(absl::IsAborted(r.status())) << r.status();
  EXPECT_NE(r.status().message().find(a), absl::string_view::npos) << r.status();
  EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 1; }));
  ASSERT_TRUE(held_b->Release().ok());
}

// A waiting Acquire from inside on_state_change (the dispatcher thread) is
// refused, not deadlocked.
TEST_F(ReviewTest, MultiLockAcquireOnDispatcherRefused) {
  const std::string a = Path("a"), b = Path("b");
  auto session = NewSession();
  std::unique_ptr<MultiLock> other;
  std::promise<absl::Status> inner;
  std::atomic<bool> once{false};
  LockOptions options;
  options.on_state_change = [&](LockState) {
    if (once.exchange(true)) return;
    auto r = other->Acquire(absl::Seconds(5));
    inner.set_value(r.status());
  };
  auto m1 = MultiLock::Create(*session, {{a, LockMode::kWrite}}, options);
  auto m2 = MultiLock::Create(*session, {{b, LockMode::kWrite}});
  other = std::move(*m2);
  auto held = (*m1)->Acquire(absl::Seconds(5));
  ASSERT_TRUE(held.ok());
  // Suspend to trigger on_state_change: delete the node -> kLost.
  auto kids = ChildList(a);
  ASSERT_EQ(kids.size(), 1u);
  ASSERT_TRUE(admin().Delete(a + "/" + kids[0]).ok());
  auto f = inner.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(15)), std::future_status::ready) << "deadlock on dispatcher";
  EXPECT_TRUE(absl::IsFailedPrecondition(f.get()));
  (void)held->Release();
}

// LeaveAndHandOver with no other candidate: DeadlineExceeded, bounded, left.
TEST_F(ReviewTest, LeaveAndHandOverAlone) {
  const std::string e = Path("election");
  auto session = NewSession();
  ElectionOptions o; o.id = "solo";
  auto el = LeaderElection::Create(*session, e, o);
  ASSERT_TRUE((*el)->Join().ok());
  ASSERT_TRUE((*el)->AwaitLeadership(absl::Seconds(10)).ok());
  const absl::Time start = absl::Now();
  absl::Status s = (*el)->LeaveAndHandOver(absl::Milliseconds(500));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_FALSE((*el)->IsLeader());
  EXPECT_EQ(Children(e), 0u);
  // Hand over to a real successor.
  auto s2 = NewSession();
  ElectionOptions o2; o2.id = "next";
  auto el2 = LeaderElection::Create(*s2, e, o2);
  ASSERT_TRUE((*el)->Join().ok());
  ASSERT_TRUE((*el)->AwaitLeadership(absl::Seconds(10)).ok());
  ASSERT_TRUE((*el2)->Join().ok());
  ASSERT_TRUE(Eventually([&] { return Children(e) == 2; }));
  s = (*el)->LeaveAndHandOver(absl::Seconds(10));
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*el2)->IsLeader());
  (void)(*el2)->Leave();
}

// An election destroyed from inside its own on_change, while another
// candidate churns.
TEST_F(ReviewTest, ElectionDestroyedInsideOnChange) {
  const std::string e = Path("election");
  for (int round = 0; round < 5; ++round) {
    auto session = NewSession();
    absl::Mutex mu;
    std::unique_ptr<LeaderElection> el;
    std::promise<void> done;
    std::atomic<bool> fired{false};
    ElectionOptions o; o.id = "self";
    o.on_change = [&](Leadership l) {
      if (l != Leadership::kLeader || fired.exchange(true)) return;
      std::unique_ptr<LeaderElection> me;
      {
        absl::MutexLock lock(&mu);
        me = std::move(el);
      }
      me.reset();
      done.set_value();
    };
    auto created = LeaderElection::Create(*session, e, o);
    {
      absl::MutexLock lock(&mu);
      el = std::move(*created);
      ASSERT_TRUE(el->Join().ok());
    }
    auto f = done.get_future();
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(Eventually([&] { return Children(e) == 0; })) << round;
  }
}

// GroupWatch across connection resets with churn: the final list equals
// the server's.
TEST_F(ReviewProxiedTest, GroupWatchNeverDeafAcrossConnectionResets) {
  const std::string g = Path("group");
  auto wsession = NewSession(ProxiedOptions());
  absl::Mutex mu;
  std::vector<std::string> last;
  auto watch = GroupWatch::Create(*wsession, g, [&](const std::vector<GroupMemberInfo>& m) {
    absl::MutexLock l(&mu);
    last.clear();
    for (const auto& x : m) last.push_back(x.node);
  });
  ASSERT_TRUE(watch.ok());
  auto msession = NewSession();
  std::vector<std::unique_ptr<GroupMember>> members;
  for (int i = 0; i < 4; ++i) {
    GroupOptions o; o.id = "m" + std::to_string(i);
    members.push_back(std::move(*GroupMember::Create(*msession, g, o)));
  }
  for (int round = 0; round < 5; ++round) {
    std::thread churn([&] {
      for (int i = 0; i < 8; ++i) {
        auto& m = members[(i + round) % members.size()];
        if (m->joined()) (void)m->Leave(); else (void)m->Join(absl::Seconds(5));
      }
    });
    proxy_->ResetConnections();
    churn.join();
  }
  auto expected = [&] {
    auto kids = ChildList(g);
    std::sort(kids.begin(), kids.end());
    return kids;
  };
  bool equal = Eventually([&] {
    auto want = expected();
    absl::MutexLock l(&mu);
    auto have = last;
    std::sort(have.begin(), have.end());
    return have == want;
  }, absl::Seconds(15));
  {
    absl::MutexLock l(&mu);
    EXPECT_TRUE(equal) << "watch reports " << absl::StrJoin(last, ",") << " server has "
                       << absl::StrJoin(expected(), ",");
  }
  for (auto& m : members) if (m->joined()) (void)m->Leave();
  members.clear();
  watch->reset();
}

// Readers and writers over three sessions, two threads each: a writer is
// never inside with anyone else.
TEST_F(ReviewTest, StdSharedMutexExclusionAcrossSessions) {
  const std::string p = Path("rw");
  std::atomic<int> writers{0}, readers{0}, violations{0};
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<SharedLock>> locks;
  std::vector<std::unique_ptr<StdSharedMutex>> mutexes;
  for (int i = 0; i < 3; ++i) {
    sessions.push_back(NewSession());
    locks.push_back(std::move(*SharedLock::Create(*sessions.back(), p)));
    mutexes.push_back(std::make_unique<StdSharedMutex>(*locks.back()));
  }
  std::vector<std::future<void>> runs;
  for (int i = 0; i < 6; ++i) {
    runs.push_back(std::async(std::launch::async, [&, i] {
      StdSharedMutex& m = *mutexes[i % 3];
      for (int k = 0; k < 10; ++k) {
        if ((i + k) % 3 == 0) {
          std::unique_lock<StdSharedMutex> w(m);
          if (writers.fetch_add(1) != 0 || readers.load() != 0) ++violations;
          std::this_thread::yield();
          writers.fetch_sub(1);
        } else {
          std::shared_lock<StdSharedMutex> r(m);
          readers.fetch_add(1);
          if (writers.load() != 0) ++violations;
          std::this_thread::yield();
          readers.fetch_sub(1);
        }
      }
    }));
  }
  for (auto& r : runs) {
    ASSERT_TRUE(Ready(r, absl::Seconds(120))) << "stuck";
    r.get();
  }
  EXPECT_EQ(violations.load(), 0);
  EXPECT_TRUE(Eventually([&] { return Children(p) == 0; }));
  mutexes.clear();
  locks.clear();
}

}  // namespace
}  // namespace zkr
