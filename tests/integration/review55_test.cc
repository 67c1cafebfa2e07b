// An independent adversarial review (helper-55): the semaphore's try-acquire
// and strict FIFO under a storm, bad durations everywhere, the group watch's
// "nothing left behind" and "only membership changes", the observer's idle
// rate. Each test names the promise it attacks.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "tests/support/directory_check.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/revocation.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using testing::ClientFaults;
using testing::Eventually;
using testing::TcpProxy;
using testing::WatchedPaths;

class Review55Test : public testing::DirectoryCheckedTest<testing::ZkTest> {
 protected:
  // Children of `path`, none if absent.
  std::vector<std::string> Kids(const std::string& path) {
    auto children = admin().GetChildren(path);
    if (absl::IsNotFound(children.status())) return {};
    EXPECT_TRUE(children.ok()) << children.status();
    return children.ok() ? *children : std::vector<std::string>{};
  }
};

class Review55ProxiedTest : public testing::DirectoryCheckedTest<testing::ProxiedZkTest> {};

// ---- Semaphore ------------------------------------------------------------------------

// Promise (semaphore.h): "never more than N leases" (ledger), TryAcquire
// "Acquires only if `count` leases are free now; DeadlineExceeded otherwise.
// Reads the queue first and creates no node when they are not", the grant's
// "guaranteed delete on release". Six sessions hammer an N=4 semaphore with
// try-acquires of 1..3 leases mixed with short blocking acquires; a ledger
// counts the leases held at once. Afterwards nothing is left: no node, no
// watch of any participant's session under the path.
TEST_F(Review55Test, TryAcquireStormNeverOverGrantsAndLeavesNothing) {
  const std::string path = Path("pool");
  constexpr int kLeases = 4;
  constexpr int kSessions = 6;
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<Semaphore>> sems;
  for (int i = 0; i < kSessions; ++i) {
    sessions.push_back(NewSession());
    ASSERT_TRUE(sessions.back());
    auto s = Semaphore::Create(*sessions.back(), path, kLeases);
    ASSERT_TRUE(s.ok()) << s.status();
    sems.push_back(std::move(*s));
  }
  std::atomic<int> in_use{0}, max_in_use{0}, grants{0}, refused{0}, timeouts{0};
  absl::Mutex errors_mu;
  std::vector<std::string> errors;
  const absl::Time end = absl::Now() + absl::Seconds(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < kSessions; ++i) {
    threads.emplace_back([&, i] {
      std::mt19937 rng(1234 + i);
      while (absl::Now() < end) {
        const int k = 1 + static_cast<int>(rng() % 3);
        absl::StatusOr<LockGuard> g = (i % 3 == 0) ? sems[i]->Acquire(k, absl::Milliseconds(150))
                                                   : sems[i]->TryAcquire(k);
        if (!g.ok()) {
          if (absl::IsDeadlineExceeded(g.status())) {
            ((i % 3 == 0) ? timeouts : refused)++;
          } else {
            absl::MutexLock l(&errors_mu);
            errors.push_back(g.status().ToString());
          }
          continue;
        }
        const int now = in_use.fetch_add(k) + k;
        int prev = max_in_use.load();
        while (now > prev && !max_in_use.compare_exchange_weak(prev, now)) {
        }
        grants++;
        std::this_thread::yield();
        in_use.fetch_sub(k);
        absl::Status released = g->Release();
        if (!released.ok()) {
          absl::MutexLock l(&errors_mu);
          errors.push_back("release: " + released.ToString());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  std::printf("grants %d, try refusals %d, timeouts %d, max in use %d\n", grants.load(),
              refused.load(), timeouts.load(), max_in_use.load());
  EXPECT_LE(max_in_use.load(), kLeases);
  EXPECT_GT(grants.load(), 0);
  EXPECT_TRUE(errors.empty()) << absl::StrJoin(errors, "\n");
  // Nothing left: no node (the directory may stay a moment as a container).
  EXPECT_TRUE(Eventually([&] { return Kids(path).empty(); }, absl::Seconds(10)))
      << absl::StrJoin(Kids(path), ", ");
  for (int i = 0; i < kSessions; ++i) {
    std::vector<std::string> watched = WatchedPaths(*sessions[i], path);
    EXPECT_TRUE(watched.empty()) << "session " << i << ": " << absl::StrJoin(watched, ", ");
  }
  sems.clear();
}

// Promise (semaphore.h): "Strict FIFO: ... a large request is never passed
// by later small ones", and TryAcquire "creates no node when they are not"
// free. One holder takes 1 of 4; a waiter asks all 4 and queues. 3 leases
// are free, but a try-acquire of 1 must not pass the big request; then a
// blocking Acquire(1) queued behind it must not either. When the holder
// releases, the big one holds all 4, and only when it releases does the
// small one get in.
TEST_F(Review55Test, TryAcquireAndSmallWaiterNeverPassAQueuedFullRequest) {
  const std::string path = Path("pool");
  auto sa = NewSession(), sb = NewSession(), sc = NewSession(), sd = NewSession();
  auto a = Semaphore::Create(*sa, path, 4);
  auto b = Semaphore::Create(*sb, path, 4);
  auto c = Semaphore::Create(*sc, path, 4);
  auto d = Semaphore::Create(*sd, path, 4);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  auto ga = (*a)->Acquire(1, absl::Seconds(10));
  ASSERT_TRUE(ga.ok()) << ga.status();
  auto fb = (*b)->AcquireFuture(4);
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  auto tc = (*c)->TryAcquire(1);
  EXPECT_TRUE(absl::IsDeadlineExceeded(tc.status())) << tc.status();
  EXPECT_EQ(Kids(path).size(), 2u) << absl::StrJoin(Kids(path), ", ");
  auto fd = (*d)->AcquireFuture(1);
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 3));
  EXPECT_EQ(fd.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout)
      << "a 1-lease request passed the queued 4-lease one";
  ASSERT_TRUE(ga->Release().ok());
  ASSERT_EQ(fb.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto gb = fb.get();
  ASSERT_TRUE(gb.ok()) << gb.status();
  EXPECT_EQ(fd.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "a 1-lease holder beside a 4-of-4 holder";
  ASSERT_TRUE(gb->Release().ok());
  ASSERT_EQ(fd.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "liveness: the small waiter is left waiting with every lease free";
  auto gd = fd.get();
  ASSERT_TRUE(gd.ok()) << gd.status();
  ASSERT_TRUE(gd->Release().ok());
  EXPECT_TRUE(Eventually([&] { return Kids(path).empty(); }, absl::Seconds(10)));
}

// Promise (semaphore.h, liveness "nobody left waiting while a lease is
// free"; the first waiter "watches the nodes before it", a release "wakes
// only the waiter it lets in, and that waiter's acquisition wakes only the
// next one"): holders of 1 and 3 (of 4); W1 asks 2, W2 asks 1, W3 asks 1.
// The 3-holder releases: W1 (2) fits beside the 1, and its acquisition must
// let W2 in (1+2+1 = 4), while W3 stays out until someone releases.
TEST_F(Review55Test, WeightedChainAfterOneReleaseLetsInExactlyWhatFits) {
  const std::string path = Path("pool");
  std::vector<std::unique_ptr<Session>> s;
  std::vector<std::unique_ptr<Semaphore>> sem;
  for (int i = 0; i < 5; ++i) {
    s.push_back(NewSession());
    auto x = Semaphore::Create(*s.back(), path, 4);
    ASSERT_TRUE(x.ok());
    sem.push_back(std::move(*x));
  }
  auto h1 = sem[0]->Acquire(1, absl::Seconds(10));
  auto h3 = sem[1]->Acquire(3, absl::Seconds(10));
  ASSERT_TRUE(h1.ok() && h3.ok());
  auto w1 = sem[2]->AcquireFuture(2);
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 3));
  auto w2 = sem[3]->AcquireFuture(1);
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 4));
  auto w3 = sem[4]->AcquireFuture(1);
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 5));
  ASSERT_TRUE(h3->Release().ok());
  ASSERT_EQ(w1.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  ASSERT_EQ(w2.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "W2 (1 lease) left waiting with 1 of 4 free";
  auto g1 = w1.get();
  auto g2 = w2.get();
  ASSERT_TRUE(g1.ok() && g2.ok()) << g1.status() << " " << g2.status();
  EXPECT_EQ(w3.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout)
      << "over-grant: 1+2+1+1 > 4";
  ASSERT_TRUE(h1->Release().ok());
  ASSERT_EQ(w3.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto g3 = w3.get();
  ASSERT_TRUE(g3.ok()) << g3.status();
  for (auto* g : {&*g1, &*g2, &*g3}) ASSERT_TRUE(g->Release().ok());
  EXPECT_TRUE(Eventually([&] { return Kids(path).empty(); }, absl::Seconds(10)));
}

// ---- Bad durations --------------------------------------------------------------------

// Promise (brief / README "Failures are absl::Status values naming the path
// or value involved"; each header's timeout): a negative timeout is either
// refused naming it or taken as "now" — never a hang, never a node left.
// Every blocking call with a timeout gets -5 s while the thing it waits for
// cannot happen; each must return within a few seconds.
TEST_F(Review55Test, NegativeTimeoutsNeitherHangNorLeaveNodes) {
  auto holder = NewSession();
  auto session = NewSession();
  ASSERT_TRUE(holder && session);
  const absl::Duration negative = absl::Seconds(-5);
  auto within = [](auto f) {
    auto fut = std::async(std::launch::async, f);
    if (fut.wait_for(std::chrono::seconds(15)) != std::future_status::ready) {
      ADD_FAILURE() << "hung past 15 s";
      fut.wait();
    }
    return fut.get();
  };
  // Semaphore full, Acquire(-5 s).
  {
    auto h = Semaphore::Create(*holder, Path("sem"), 1);
    auto w = Semaphore::Create(*session, Path("sem"), 1);
    ASSERT_TRUE(h.ok() && w.ok());
    auto hg = (*h)->Acquire(1, absl::Seconds(10));
    ASSERT_TRUE(hg.ok());
    absl::Status st = within([&] { return (*w)->Acquire(1, negative).status(); });
    std::printf("Semaphore::Acquire(-5s): %s\n", st.ToString().c_str());
    EXPECT_FALSE(st.ok());
    EXPECT_TRUE(Eventually([&] { return Kids(Path("sem")).size() == 1; }, absl::Seconds(5)))
        << absl::StrJoin(Kids(Path("sem")), ", ");
    ASSERT_TRUE(hg->Release().ok());
  }
  // Group join with a negative timeout: either refused or joined, but consistent.
  {
    auto m = GroupMember::Create(*session, Path("group"));
    ASSERT_TRUE(m.ok());
    absl::Status st = within([&] { return (*m)->Join(negative); });
    std::printf("GroupMember::Join(-5s): %s, joined %d, nodes %zu\n", st.ToString().c_str(),
                (*m)->joined(), Kids(Path("group")).size());
    if (st.ok()) {
      EXPECT_TRUE((*m)->joined());
      EXPECT_TRUE((*m)->Leave().ok());
    } else {
      EXPECT_FALSE((*m)->joined());
    }
    EXPECT_TRUE(Eventually([&] { return Kids(Path("group")).empty(); }, absl::Seconds(5)))
        << absl::StrJoin(Kids(Path("group")), ", ");
  }
  // Double barrier of 2 with one member, Enter(-5 s).
  {
    auto b = DoubleBarrier::Create(*session, Path("dbar"), "m", 2);
    ASSERT_TRUE(b.ok());
    absl::Status st = within([&] { return (*b)->Enter(negative); });
    std::printf("DoubleBarrier::Enter(-5s): %s\n", st.ToString().c_str());
    EXPECT_FALSE(st.ok());
    EXPECT_FALSE((*b)->entered());
    EXPECT_TRUE(Eventually(
        [&] {
          for (const std::string& c : Kids(Path("dbar"))) {
            if (c != "ready") return false;
          }
          return true;
        },
        absl::Seconds(5)))
        << absl::StrJoin(Kids(Path("dbar")), ", ");
  }
  // Barrier set, Wait(-5 s).
  {
    auto b = Barrier::Create(*session, Path("bar"));
    ASSERT_TRUE(b.ok());
    ASSERT_TRUE((*b)->Set().ok());
    absl::Status st = within([&] { return (*b)->Wait(negative); });
    std::printf("Barrier::Wait(-5s): %s\n", st.ToString().c_str());
    EXPECT_FALSE(st.ok());
    ASSERT_TRUE((*b)->Remove().ok());
  }
  // Election: a follower's AwaitLeadership(-5 s); the leader's LeaveAndHandOver(-5 s)
  // without a successor; an observer's AwaitChange(current, -5 s).
  {
    ElectionOptions lo;
    lo.id = "leader";
    auto le = LeaderElection::Create(*holder, Path("elect"), lo);
    ElectionOptions fo;
    fo.id = "follower";
    auto fe = LeaderElection::Create(*session, Path("elect"), fo);
    ASSERT_TRUE(le.ok() && fe.ok());
    ASSERT_TRUE((*le)->Join().ok());
    ASSERT_TRUE((*le)->AwaitLeadership(absl::Seconds(10)).ok());
    ASSERT_TRUE((*fe)->Join().ok());
    absl::Status st = within([&] { return (*fe)->AwaitLeadership(negative); });
    std::printf("AwaitLeadership(-5s): %s\n", st.ToString().c_str());
    EXPECT_FALSE(st.ok());
    auto obs = LeaderObserver::Create(*session, Path("elect"));
    ASSERT_TRUE(obs.ok());
    auto now = (*obs)->Current(absl::Seconds(10));
    ASSERT_TRUE(now.ok());
    auto change = within([&] { return (*obs)->AwaitChange(*now, negative).status(); });
    std::printf("AwaitChange(-5s): %s\n", change.ToString().c_str());
    EXPECT_FALSE(change.ok());
    ASSERT_TRUE((*fe)->Leave().ok());
    st = within([&] { return (*le)->LeaveAndHandOver(negative); });
    std::printf("LeaveAndHandOver(-5s) without a successor: %s\n", st.ToString().c_str());
    EXPECT_FALSE(st.ok());
    EXPECT_FALSE((*le)->joined());
    EXPECT_TRUE(Eventually([&] { return Kids(Path("elect")).empty(); }, absl::Seconds(5)))
        << absl::StrJoin(Kids(Path("elect")), ", ");
  }
}

// ---- Group watch ----------------------------------------------------------------------

// Promise (group_member.h): "GroupWatch keeps one child watch on the group",
// "a missing group gets an exists watch instead" (group_member.cc), and the
// destructor "Stops" — nothing left behind: the watch on an absent group,
// then the group's creation by a join, then the watch's end must leave no
// watch of its session on the server.
TEST_F(Review55Test, GroupWatchOnAnAbsentGroupLeavesNoWatchOnceDestroyed) {
  auto watcher = NewSession();
  auto member_session = NewSession();
  ASSERT_TRUE(watcher && member_session);
  const std::string path = Path("workers");
  absl::Mutex mu;
  std::vector<std::vector<std::string>> lists;
  auto watch = GroupWatch::Create(*watcher, path, [&](const std::vector<GroupMemberInfo>& m) {
    std::vector<std::string> ids;
    for (const auto& x : m) ids.push_back(x.id);
    absl::MutexLock l(&mu);
    lists.push_back(ids);
  });
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return lists.size() == 1;
  }));
  GroupOptions o;
  o.id = "w1";
  auto m = GroupMember::Create(*member_session, path, o);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE((*m)->Join().ok());
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return lists.size() == 2;
  })) << "the join was never reported";
  {
    absl::MutexLock l(&mu);
    EXPECT_EQ(lists[1], std::vector<std::string>{"w1"});
  }
  std::vector<std::string> during = WatchedPaths(*watcher, root());
  std::printf("watched while following: %s\n", absl::StrJoin(during, ", ").c_str());
  watch->reset();
  std::vector<std::string> after = WatchedPaths(*watcher, root());
  EXPECT_TRUE(after.empty()) << "left behind: " << absl::StrJoin(after, ", ");
  ASSERT_TRUE((*m)->Leave().ok());
}

// Promise (group_member.h): "A member's SetData is not a membership change",
// "after every change of membership (a join or a leave) ... calls on_change
// once", "Only changes are reported". A member changes its data; then the
// watcher's connection is reset (same session). No membership changed, so
// on_change must not be called; then a real join must be reported once.
TEST_F(Review55ProxiedTest, SetDataThenReconnectIsNotReportedAsAMembershipChange) {
  auto watcher = NewSession(ProxiedOptions());
  auto member_session = NewSession();
  ASSERT_TRUE(watcher && member_session);
  const std::string path = Path("workers");
  GroupOptions o;
  o.id = "w1";
  o.data = "v1";
  auto m = GroupMember::Create(*member_session, path, o);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE((*m)->Join().ok());
  absl::Mutex mu;
  std::vector<std::string> calls;
  auto watch = GroupWatch::Create(*watcher, path, [&](const std::vector<GroupMemberInfo>& ms) {
    std::vector<std::string> s;
    for (const auto& x : ms) s.push_back(x.id + "=" + x.data);
    absl::MutexLock l(&mu);
    calls.push_back(absl::StrJoin(s, ","));
  });
  ASSERT_TRUE(watch.ok());
  auto count = [&] {
    absl::MutexLock l(&mu);
    return calls.size();
  };
  ASSERT_TRUE(Eventually([&] { return count() == 1; }));
  ASSERT_TRUE((*m)->SetData("v2").ok());
  const uint64_t generation = watcher->generation();
  testing::StateRecorder recorder(*watcher);
  proxy_->ResetConnections();
  ASSERT_TRUE(recorder.WaitFor(SessionState::kSuspended, generation, absl::Seconds(10)).has_value())
      << "the reset was not noticed";
  ASSERT_TRUE(recorder.WaitFor(SessionState::kReconnected, generation, absl::Seconds(20)).has_value())
      << "not reconnected to the same session";
  // Bounded wait for a (wrong) report after the reconnection's re-listing.
  Eventually([&] { return count() > 1; }, absl::Seconds(3));
  EXPECT_EQ(watcher->generation(), generation);
  {
    absl::MutexLock l(&mu);
    EXPECT_EQ(calls.size(), 1u) << "reports: " << absl::StrJoin(calls, " | ");
  }
  GroupOptions o2;
  o2.id = "w2";
  auto m2 = GroupMember::Create(*member_session, path, o2);
  ASSERT_TRUE(m2.ok());
  ASSERT_TRUE((*m2)->Join().ok());
  const size_t before = count();
  ASSERT_TRUE(Eventually([&] { return count() == before + 1; }));
  watch->reset();
  ASSERT_TRUE((*m2)->Leave().ok());
  ASSERT_TRUE((*m)->Leave().ok());
}

// Promise (group_member.h): "after every change of membership (a join or a
// leave), reads the members and calls on_change once with the full list, in
// join order". A member leaves and joins again with the same id and data:
// a leave and a join, so the watcher must see the member gone or a list
// with its new node — never silence with a stale node name.
TEST_F(Review55Test, LeaveAndRejoinWithTheSameIdIsReportedWithTheNewNode) {
  auto watcher = NewSession();
  auto member_session = NewSession();
  const std::string path = Path("workers");
  GroupOptions o;
  o.id = "w1";
  auto other = GroupMember::Create(*member_session, path, GroupOptions{"anchor", "", {}});
  auto m = GroupMember::Create(*member_session, path, o);
  ASSERT_TRUE(other.ok() && m.ok());
  ASSERT_TRUE((*other)->Join().ok());
  ASSERT_TRUE((*m)->Join().ok());
  absl::Mutex mu;
  std::vector<std::vector<GroupMemberInfo>> calls;
  auto watch = GroupWatch::Create(*watcher, path, [&](const std::vector<GroupMemberInfo>& ms) {
    absl::MutexLock l(&mu);
    calls.push_back(ms);
  });
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return calls.size() == 1;
  }));
  const std::string old_node = (*m)->node_path();
  ASSERT_TRUE((*m)->Leave().ok());
  ASSERT_TRUE((*m)->Join().ok());
  const std::string new_node = (*m)->node_path();
  ASSERT_NE(old_node, new_node);
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return !calls.empty() && calls.back().size() == 2 &&
           path + "/" + calls.back().back().node == new_node;
  })) << "the re-join with a new node was never reported";
  {
    absl::MutexLock l(&mu);
    for (size_t i = 1; i < calls.size(); ++i) {
      std::vector<std::string> ids;
      for (const auto& x : calls[i]) ids.push_back(x.id + "@" + x.node);
      std::printf("report %zu: %s\n", i, absl::StrJoin(ids, ", ").c_str());
    }
    EXPECT_EQ(calls.back().front().id, "anchor") << "join order";
  }
  watch->reset();
  ASSERT_TRUE((*m)->Leave().ok());
  ASSERT_TRUE((*other)->Leave().ok());
}

// ---- Observer / group watch: idle request rate -----------------------------------------

// Promise (leader_observer.h): "Herd-free: an observer watches only what
// can change the answer ... it never lists the directory in a loop"; group
// watch: "keeps one child watch". Idle for 3 s (a leader in place, a group
// with a member), the observer's and the watch's session makes no request
// beyond its heartbeats.
TEST_F(Review55Test, IdleObserverAndGroupWatchSendNoRequests) {
  auto faults = std::make_shared<ClientFaults>();
  auto quiet = NewFaultySession(faults);
  auto other = NewSession();
  ASSERT_TRUE(quiet && other);
  ElectionOptions eo;
  eo.id = "boss";
  auto e = LeaderElection::Create(*other, Path("elect"), eo);
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE((*e)->Join().ok());
  ASSERT_TRUE((*e)->AwaitLeadership(absl::Seconds(10)).ok());
  // A config node beside the candidate, and one in the group.
  ASSERT_TRUE(admin().Create(Path("elect/config"), "x", CreateMode::kPersistent).ok());
  auto m = GroupMember::Create(*other, Path("group"), GroupOptions{"m1", "", {}});
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE((*m)->Join().ok());
  ASSERT_TRUE(admin().Create(Path("group/config"), "x", CreateMode::kPersistent).ok());
  std::atomic<int> observer_calls{0}, group_calls{0};
  auto obs = LeaderObserver::Create(*quiet, Path("elect"),
                                    [&](const std::optional<LeaderInfo>&) { observer_calls++; });
  auto gw = GroupWatch::Create(*quiet, Path("group"),
                               [&](const std::vector<GroupMemberInfo>&) { group_calls++; });
  ASSERT_TRUE(obs.ok() && gw.ok());
  ASSERT_TRUE(Eventually([&] { return observer_calls.load() >= 1 && group_calls.load() >= 1; }));
  ASSERT_TRUE(Eventually([&] { return (*obs)->known() && (*obs)->leader().has_value() &&
                                      (*obs)->leader()->taken_over; }));
  // Settle: let the first round's replies land.
  const absl::Time settle = absl::Now() + absl::Milliseconds(500);
  Eventually([&] { return absl::Now() >= settle; }, absl::Seconds(1));
  auto all_calls = [&] {
    int n = 0;
    for (auto c : {testing::FaultRule::Call::kCreate, testing::FaultRule::Call::kDelete,
                   testing::FaultRule::Call::kExists, testing::FaultRule::Call::kGet,
                   testing::FaultRule::Call::kSet, testing::FaultRule::Call::kGetChildren,
                   testing::FaultRule::Call::kMulti}) {
      n += faults->Calls(c, root());
    }
    return n;
  };
  const int64_t before = all_calls();
  const absl::Time idle_end = absl::Now() + absl::Seconds(3);
  Eventually([&] { return absl::Now() >= idle_end; }, absl::Seconds(4));
  const int64_t during = all_calls() - before;
  std::printf("requests while idle 3 s: %lld (observer calls %d, group calls %d)\n",
              static_cast<long long>(during), observer_calls.load(), group_calls.load());
  EXPECT_LE(during, 2) << "an idle observer/watch keeps asking";
  EXPECT_EQ(observer_calls.load(), 1);
  EXPECT_EQ(group_calls.load(), 1);
  obs->reset();
  gw->reset();
  ASSERT_TRUE((*m)->Leave().ok());
  ASSERT_TRUE((*e)->Leave().ok());
  ASSERT_TRUE(admin().Delete(Path("elect/config")).ok());
  ASSERT_TRUE(admin().Delete(Path("group/config")).ok());
}


// ---- Destruction and close while recipes wait --------------------------------------------

// Promise (semaphore.h): "~Semaphore(): Cancels a pending acquisition";
// AcquireFuture returns a std::future a caller may wait on. Destroying the
// object while a future acquisition waits must complete the future (a
// broken promise would throw from get()), leave no node and no watch.
TEST_F(Review55Test, DestroyingASemaphoreCompletesItsPendingFutureAndLeavesNothing) {
  const std::string path = Path("pool");
  auto sh = NewSession(), sw = NewSession();
  auto h = Semaphore::Create(*sh, path, 2);
  auto w = Semaphore::Create(*sw, path, 2);
  ASSERT_TRUE(h.ok() && w.ok());
  auto hg = (*h)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(hg.ok());
  auto fut = (*w)->AcquireFuture(1);
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  w->reset();
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "destroying the semaphore left its future waiting";
  absl::StatusOr<LockGuard> got = absl::UnknownError("not read");
  try {
    got = fut.get();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "future.get() threw: " << e.what();
  }
  std::printf("future after destruction: %s\n", got.status().ToString().c_str());
  EXPECT_FALSE(got.ok());
  EXPECT_TRUE(Eventually([&] { return Kids(path).size() == 1; }, absl::Seconds(10)))
      << absl::StrJoin(Kids(path), ", ");
  std::vector<std::string> watched = WatchedPaths(*sw, root());
  EXPECT_TRUE(watched.empty()) << absl::StrJoin(watched, ", ");
  ASSERT_TRUE(hg->Release().ok());
}

// Promise (semaphore.h): "Guards already handed out stay valid" after the
// object goes; AcquireAsync's `done` "runs on the dispatcher thread";
// session.h: callbacks "may call any Session method". A `done` that keeps
// its guard and destroys its own semaphore object must not deadlock (the
// dispatcher would stall every later callback of the session); the guard
// then still releases, and a second participant gets the lease.
TEST_F(Review55Test, DoneMayDestroyItsOwnSemaphoreAndTheGuardStillReleases) {
  const std::string path = Path("pool");
  auto s1 = NewSession(), s2 = NewSession();
  auto a = Semaphore::Create(*s1, path, 1);
  ASSERT_TRUE(a.ok());
  std::unique_ptr<Semaphore> owned = std::move(*a);
  std::optional<LockGuard> kept;
  absl::Notification done_returned;
  absl::Status got;
  owned->AcquireAsync(1, [&](absl::StatusOr<LockGuard> g) {
    got = g.status();
    if (g.ok()) kept.emplace(std::move(*g));
    owned.reset();  // the object goes from inside its own completion
    done_returned.Notify();
  });
  ASSERT_TRUE(done_returned.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "done never returned (deadlock in ~Semaphore on the dispatcher?)";
  ASSERT_TRUE(got.ok()) << got;
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->state(), LockState::kHeld);
  // The session's dispatcher still runs: an async read completes.
  std::promise<bool> read;
  s1->ExistsAsync(path, [&](absl::StatusOr<std::optional<Stat>> st) { read.set_value(st.ok()); });
  auto rf = read.get_future();
  ASSERT_EQ(rf.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto b = Semaphore::Create(*s2, path, 1);
  ASSERT_TRUE(b.ok());
  auto bf = (*b)->AcquireFuture(1);
  EXPECT_EQ(bf.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  ASSERT_TRUE(kept->Release().ok());
  ASSERT_EQ(bf.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto bg = bf.get();
  ASSERT_TRUE(bg.ok()) << bg.status();
  ASSERT_TRUE(bg->Release().ok());
  kept.reset();
}

// Promise (lock_options.h, on_state_change: "Called on the session's
// dispatcher thread whenever a hold ... changes state"; semaphore.h "Guards
// already handed out stay valid", "REQUIRES: the Session outlives the
// semaphore object and all its guards"): the holder's node is deleted by an
// operator; in on_state_change(kLost) the holder destroys its semaphore
// object and releases the guard. No deadlock, the session's dispatcher goes
// on, nothing is left.
TEST_F(Review55Test, OnStateChangeLostMayDestroyTheSemaphoreAndReleaseTheGuard) {
  const std::string path = Path("pool");
  auto s1 = NewSession();
  std::unique_ptr<Semaphore> owned;
  std::optional<LockGuard> kept;
  absl::Notification handled;
  std::atomic<int> lost_calls{0};
  LockOptions o;
  o.own_node_watch_delay = absl::ZeroDuration();
  o.on_state_change = [&](LockState st) {
    if (st != LockState::kLost) return;
    if (lost_calls++ != 0) return;
    owned.reset();
    if (kept.has_value()) (void)kept->Release();
    handled.Notify();
  };
  auto a = Semaphore::Create(*s1, path, 3, o);
  ASSERT_TRUE(a.ok());
  owned = std::move(*a);
  auto g = owned->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(g.ok()) << g.status();
  const std::string node = g->node_path();
  kept.emplace(std::move(*g));
  // Let the own-node watch be armed (it is what reports the deletion).
  ASSERT_TRUE(Eventually([&] {
    auto w = WatchedPaths(*s1, path);
    return std::find(w.begin(), w.end(), node) != w.end();
  }, absl::Seconds(5)));
  ASSERT_TRUE(admin().Delete(node).ok());
  ASSERT_TRUE(handled.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "kLost never reported, or the callback deadlocked";
  std::promise<bool> read;
  s1->ExistsAsync(path, [&](absl::StatusOr<std::optional<Stat>> st) { read.set_value(st.ok()); });
  auto rf = read.get_future();
  ASSERT_EQ(rf.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the dispatcher is stuck";
  EXPECT_EQ(lost_calls.load(), 1);
  kept.reset();
  EXPECT_TRUE(WatchedPaths(*s1, root()).empty());
}

// Promise (session.h, Close(): "every pending operation completes with
// Cancelled, listeners see kClosed"; barrier.h, semaphore.h, group and
// election blocking calls "wait on the calling thread"): a session closed
// by another thread while five recipes block on it with infinite timeouts
// must let every one of them return, and the objects must then be
// destroyed without hanging. A call left blocked forever on a closed
// session is a hang.
TEST_F(Review55Test, ClosingTheSessionReturnsEveryBlockedRecipeCall) {
  auto other = NewSession();
  auto victim = NewSession();
  ASSERT_TRUE(other && victim);
  // The things waited for: a full semaphore, a set barrier, a double barrier
  // short of one member, a leader that stays.
  auto oh = Semaphore::Create(*other, Path("sem"), 1);
  ASSERT_TRUE(oh.ok());
  auto og = (*oh)->Acquire(1, absl::Seconds(10));
  ASSERT_TRUE(og.ok());
  auto ob = Barrier::Create(*other, Path("bar"));
  ASSERT_TRUE(ob.ok() && (*ob)->Set().ok());
  ElectionOptions lo;
  lo.id = "leader";
  auto le = LeaderElection::Create(*other, Path("elect"), lo);
  ASSERT_TRUE(le.ok() && (*le)->Join().ok());
  ASSERT_TRUE((*le)->AwaitLeadership(absl::Seconds(10)).ok());

  auto vs = Semaphore::Create(*victim, Path("sem"), 1);
  auto vb = Barrier::Create(*victim, Path("bar"));
  auto vd = DoubleBarrier::Create(*victim, Path("dbar"), "v", 2);
  ElectionOptions fo;
  fo.id = "follower";
  auto ve = LeaderElection::Create(*victim, Path("elect"), fo);
  auto vo = LeaderObserver::Create(*victim, Path("elect"));
  ASSERT_TRUE(vs.ok() && vb.ok() && vd.ok() && ve.ok() && vo.ok());
  ASSERT_TRUE((*ve)->Join().ok());
  auto current = (*vo)->Current(absl::Seconds(10));
  ASSERT_TRUE(current.ok() && current->has_value());

  const absl::Duration inf = absl::InfiniteDuration();
  // Each call on a detached thread: one stuck forever must not hang the test.
  auto run = [](std::function<absl::Status()> f) {
    auto p = std::make_shared<std::promise<absl::Status>>();
    std::future<absl::Status> fut = p->get_future();
    std::thread([p, f = std::move(f)] { p->set_value(f()); }).detach();
    return fut;
  };
  auto f_sem = run([&, s = vs->get()] { return s->Acquire(1, inf).status(); });
  auto f_bar = run([&, b = vb->get()] { return b->Wait(inf); });
  auto f_dbar = run([&, d = vd->get()] { return d->Enter(inf); });
  auto f_lead = run([&, e = ve->get()] { return e->AwaitLeadership(inf); });
  auto f_obs = run([&, o = vo->get(), c = *current] { return o->AwaitChange(c, inf).status(); });
  // Everyone is queued / watching: 2 nodes in sem, 1 member in dbar.
  ASSERT_TRUE(testing::AwaitChildCount(admin(), Path("sem"), 2));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), Path("dbar"), 1));
  ASSERT_TRUE(testing::AwaitChildCount(admin(), Path("elect"), 2));
  auto closing = std::async(std::launch::async, [&] { victim->Close(); });
  ASSERT_EQ(closing.wait_for(std::chrono::seconds(15)), std::future_status::ready)
      << "Close() hung";
  struct Named {
    const char* name;
    std::future<absl::Status>* f;
  };
  bool stuck = false;
  for (Named n : {Named{"Semaphore::Acquire", &f_sem}, Named{"Barrier::Wait", &f_bar},
                  Named{"DoubleBarrier::Enter", &f_dbar},
                  Named{"LeaderElection::AwaitLeadership", &f_lead},
                  Named{"LeaderObserver::AwaitChange", &f_obs}}) {
    if (n.f->wait_for(std::chrono::seconds(15)) != std::future_status::ready) {
      ADD_FAILURE() << n.name << " still blocked 15 s after Close()";
      std::printf("%s: still blocked 15 s after Close()\n", n.name);
      stuck = true;
      continue;
    }
    std::printf("%s after Close(): %s\n", n.name, n.f->get().ToString().c_str());
  }
  // What was waited for goes: does a stuck call return then?
  ASSERT_TRUE(og->Release().ok());
  ASSERT_TRUE((*ob)->Remove().ok());
  ASSERT_TRUE((*le)->Leave().ok());
  if (stuck) {
    for (Named n : {Named{"Semaphore::Acquire", &f_sem}, Named{"Barrier::Wait", &f_bar},
                    Named{"DoubleBarrier::Enter", &f_dbar},
                    Named{"LeaderElection::AwaitLeadership", &f_lead},
                    Named{"LeaderObserver::AwaitChange", &f_obs}}) {
      if (!n.f->valid()) continue;
      const bool ready = n.f->wait_for(std::chrono::seconds(10)) == std::future_status::ready;
      std::printf("%s, 10 s after the leader left / lease freed / barrier removed: %s\n", n.name,
                  ready ? n.f->get().ToString().c_str() : "STILL BLOCKED");
    }
    // A call still blocked uses its object and the session: leak them.
    (void)vs->release();
    (void)vb->release();
    (void)vd->release();
    (void)ve->release();
    (void)vo->release();
    (void)victim.release();
    return;
  }
  auto destroying = std::async(std::launch::async, [&] {
    vs->reset();
    vb->reset();
    vd->reset();
    ve->reset();
    vo->reset();
  });
  ASSERT_EQ(destroying.wait_for(std::chrono::seconds(15)), std::future_status::ready)
      << "destroying the recipes of a closed session hung";
  EXPECT_TRUE(Eventually([&] { return Kids(Path("sem")).empty() && Kids(Path("dbar")).empty() &&
                                      Kids(Path("elect")).empty(); },
                         absl::Seconds(10)));
}

// Promise (revocation.h): "never lets two hold ... nobody holds beside it
// meanwhile"; RevokeOptions::grace is a duration — a negative one is bad
// input: refused naming it, or taken as zero; never a hang. A semaphore of
// 2 with two holders that ignore requests and a waiter for both leases:
// revoked with grace -1 s. When the waiter is granted, neither old holder
// may still read HELD.
TEST_F(Review55Test, RevokeWithANegativeGraceNeverLetsTheWaiterHoldBesideTheOld) {
  const std::string path = Path("pool");
  auto s1 = NewSession(), s2 = NewSession(), s3 = NewSession(), sr = NewSession();
  LockOptions ignore;
  ignore.own_node_watch_delay = absl::ZeroDuration();
  ignore.on_revoke_request = [](const RevokeRequest&) {};
  auto a = Semaphore::Create(*s1, path, 2, ignore);
  auto b = Semaphore::Create(*s2, path, 2, ignore);
  auto w = Semaphore::Create(*s3, path, 2);
  ASSERT_TRUE(a.ok() && b.ok() && w.ok());
  auto ga = (*a)->Acquire(1, absl::Seconds(10));
  auto gb = (*b)->Acquire(1, absl::Seconds(10));
  ASSERT_TRUE(ga.ok() && gb.ok());
  std::atomic<int> overlap{0};
  absl::Notification granted;
  std::optional<LockGuard> wg;
  (*w)->AcquireAsync(2, [&](absl::StatusOr<LockGuard> g) {
    if (ga->state() == LockState::kHeld) overlap++;
    if (gb->state() == LockState::kHeld) overlap++;
    if (g.ok()) wg.emplace(std::move(*g));
    granted.Notify();
  });
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 3));
  RevokeOptions ro;
  ro.grace = absl::Seconds(-1);
  ro.reason = "negative grace";
  auto fut = std::async(std::launch::async, [&] { return Revoke(*sr, path, ro); });
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "Revoke hung";
  auto outcomes = fut.get();
  std::printf("Revoke(grace -1s): %s\n", outcomes.status().ToString().c_str());
  if (outcomes.ok()) {
    for (const auto& o : *outcomes) {
      std::printf("  %s %s\n", o.node.c_str(), std::string(RevokeHowName(o.how)).c_str());
    }
    ASSERT_TRUE(granted.WaitForNotificationWithTimeout(absl::Seconds(20)));
    EXPECT_EQ(overlap.load(), 0) << "the waiter held beside a holder reading HELD";
    EXPECT_NE(ga->state(), LockState::kHeld);
    EXPECT_NE(gb->state(), LockState::kHeld);
  } else {
    EXPECT_TRUE(absl::IsInvalidArgument(outcomes.status()));
    EXPECT_TRUE(absl::StrContains(outcomes.status().message(), "-1")) << outcomes.status();
  }
  (void)ga->Release();
  (void)gb->Release();
  if (!granted.HasBeenNotified()) {
    ASSERT_TRUE(granted.WaitForNotificationWithTimeout(absl::Seconds(20)));
  }
  if (wg.has_value()) ASSERT_TRUE(wg->Release().ok());
  EXPECT_TRUE(Eventually([&] { return Kids(path).empty(); }, absl::Seconds(10)))
      << absl::StrJoin(Kids(path), ", ");
}


// The same, alone and at its simplest (the election's own test,
// election_lifecycle_test.cc AwaitLeadershipReturnsWhenTheSessionCloses,
// holds the latch to it): an observer's AwaitChange(current, infinite)
// blocked while its session is closed must return.
TEST_F(Review55Test, ObserverAwaitChangeReturnsWhenItsSessionCloses) {
  auto other = NewSession();
  auto victim = NewSession();
  ElectionOptions lo;
  lo.id = "leader";
  auto le = LeaderElection::Create(*other, Path("elect"), lo);
  ASSERT_TRUE(le.ok() && (*le)->Join().ok());
  ASSERT_TRUE((*le)->AwaitLeadership(absl::Seconds(10)).ok());
  auto vo = LeaderObserver::Create(*victim, Path("elect"));
  ASSERT_TRUE(vo.ok());
  auto current = (*vo)->Current(absl::Seconds(10));
  ASSERT_TRUE(current.ok() && current->has_value());
  auto p = std::make_shared<std::promise<absl::Status>>();
  auto fut = p->get_future();
  std::thread([p, o = vo->get(), c = *current] {
    p->set_value(o->AwaitChange(c, absl::InfiniteDuration()).status());
  }).detach();
  // Let it block (a bounded wait that must time out: nothing changes).
  ASSERT_EQ(fut.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  victim->Close();
  EXPECT_EQ(victim->state(), SessionState::kClosed);
  const bool returned = fut.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(returned) << "LeaderObserver::AwaitChange still blocked 10 s after Session::Close()";
  if (returned) std::printf("AwaitChange after Close(): %s\n", fut.get().ToString().c_str());
  ASSERT_TRUE((*le)->Leave().ok());
  if (!returned) {
    const bool later = fut.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
    std::printf("5 s after the leader left: %s\n", later ? "returned" : "STILL BLOCKED");
    if (!later) {
      (void)vo->release();  // still used by the blocked thread
      (void)victim.release();
    }
  }
}


// Same root as above, for Current(): an observer whose server is silent has
// no answer; Current(infinite) waits. The session is then closed: Current
// must return (as a group member's Join(infinite), blocked on the same
// silent server, does).
TEST_F(Review55ProxiedTest, ObserverCurrentAndMemberJoinOnASilentServerReturnWhenClosed) {
  auto victim = NewSession(ProxiedOptions());
  ASSERT_TRUE(victim);
  proxy_->SetMode(TcpProxy::Mode::kBlackhole);
  auto vo = LeaderObserver::Create(*victim, Path("elect"));
  ASSERT_TRUE(vo.ok()) << vo.status();
  auto m = GroupMember::Create(*victim, Path("group"), GroupOptions{"m", "", {}});
  ASSERT_TRUE(m.ok());
  auto run = [](std::function<absl::Status()> f) {
    auto p = std::make_shared<std::promise<absl::Status>>();
    std::future<absl::Status> fut = p->get_future();
    std::thread([p, f = std::move(f)] { p->set_value(f()); }).detach();
    return fut;
  };
  auto f_cur = run([o = vo->get()] { return o->Current(absl::InfiniteDuration()).status(); });
  auto f_join = run([g = m->get()] { return g->Join(absl::InfiniteDuration()); });
  ASSERT_EQ(f_cur.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  auto closing = std::async(std::launch::async, [&] { victim->Close(); });
  ASSERT_EQ(closing.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  const bool join_returned = f_join.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  const bool cur_returned = f_cur.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  const absl::Status joined = join_returned ? f_join.get() : absl::UnknownError("STILL BLOCKED");
  std::printf("GroupMember::Join after Close(): %s\n", joined.ToString().c_str());
  // Its error names the group (as every other recipe's names its path).
  EXPECT_TRUE(absl::IsCancelled(joined)) << joined;
  EXPECT_TRUE(absl::StrContains(joined.message(), "join group " + Path("group"))) << joined;
  std::printf("LeaderObserver::Current after Close(): %s\n",
              cur_returned ? f_cur.get().ToString().c_str() : "STILL BLOCKED");
  EXPECT_TRUE(join_returned);
  EXPECT_TRUE(cur_returned) << "LeaderObserver::Current still blocked 10 s after Close()";
  proxy_->SetMode(TcpProxy::Mode::kPass);
  if (!cur_returned || !join_returned) {
    (void)vo->release();
    (void)m->release();
    (void)victim.release();
  }
}

}  // namespace
}  // namespace zkr
