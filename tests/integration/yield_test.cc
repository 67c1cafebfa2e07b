// LeaderElection::Yield(): the yielder's node goes and comes back last, the
// next candidate leads, never two leaders; from two threads at once, beside
// Leave(), with its create's reply lost, with its connection cut. (Written
// by an independent review of Yield's return, kept as regression tests.)
#include <atomic>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"
#include "src/testing/faulty_client.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace {

// The election's directory, once everybody left.
void DeleteDirectory(Session& admin, const std::string& path) {
  absl::Status deleted = admin.Delete(path);
  EXPECT_TRUE(deleted.ok() || absl::IsNotFound(deleted)) << deleted;
}

class YieldTest : public testing::ZkTest {
 protected:
  // Candidates c0..c<n-1>, each on its own session, queued in that order.
  void JoinInOrder(const std::string& path, int n) {
    for (int i = 0; i < n; ++i) {
      sessions_.push_back(NewSession());
      ASSERT_NE(sessions_.back(), nullptr);
      ElectionOptions options;
      options.id = absl::StrCat("c", i);
      auto made = LeaderElection::Create(*sessions_.back(), path, options);
      ASSERT_TRUE(made.ok()) << made.status();
      elections_.push_back(*std::move(made));
      ASSERT_TRUE(elections_.back()->Join().ok());
      // Queued in order: wait for the node before the next joins.
      ASSERT_TRUE(testing::AwaitChildCount(admin(), path, i + 1));
    }
  }
  // Everybody leaves; the election's directory goes.
  void LeaveAll(const std::string& path) {
    for (auto& e : elections_) (void)e->Leave();
    elections_.clear();
    absl::Status deleted = admin().Delete(path);
    EXPECT_TRUE(deleted.ok() || absl::IsNotFound(deleted)) << deleted;
  }
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::unique_ptr<LeaderElection>> elections_;
};
class YieldProxiedTest : public testing::ProxiedZkTest {};

// Promise (leader_election.h): Yield() "queues again at the back, so the
// next candidate leads. Returns once its new node is in the queue": at its
// return the yielder's node is last, and another candidate takes over.
TEST_F(YieldTest, ReturnsWithItsNodeLastAndAnotherLeads) {
  const std::string path = Path("yield-rounds");
  constexpr int kCandidates = 3;
  JoinInOrder(path, kCandidates);
  if (HasFatalFailure()) return;
  auto& elections = elections_;
  auto leader_index = [&]() -> int {
    int found = -1;
    for (int i = 0; i < kCandidates; ++i) {
      if (elections[i]->IsLeader()) {
        EXPECT_EQ(found, -1) << "two leaders: " << found << " and " << i;
        found = i;
      }
    }
    return found;
  };
  int leader = -1;
  ASSERT_TRUE(testing::Eventually([&] { return (leader = leader_index()) >= 0; }));
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round, " leader c", leader));
    ASSERT_TRUE(elections[leader]->Yield().ok());
    auto children = admin().GetChildren(path);
    ASSERT_TRUE(children.ok());
    std::vector<internal::QueueNode> queue = internal::ParseQueue(*children, 0);
    ASSERT_EQ(queue.size(), static_cast<size_t>(kCandidates)) << absl::StrJoin(*children, ",");
    auto data = admin().Get(absl::StrCat(path, "/", queue.back().name));
    ASSERT_TRUE(data.ok());
    EXPECT_TRUE(absl::StartsWith(*data, absl::StrCat("c", leader)))
        << "the yielder's node is not last at Yield's return: last holds " << *data;
    const int before = leader;
    ASSERT_TRUE(testing::Eventually([&] {
      leader = leader_index();
      return leader >= 0 && leader != before;
    })) << "nobody took over from c" << before;
  }
  LeaveAll(path);
}

// Yield from two threads at once on the same leader: one steps down, the
// other is refused (not leading) or finds it queued; never a second node of
// that candidate, another candidate leads, never two leaders.
TEST_F(YieldTest, FromTwoThreadsAtOnceQueuesOneNode) {
  const std::string path = Path("yield-twice");
  JoinInOrder(path, 2);
  if (HasFatalFailure()) return;
  auto& elections = elections_;
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    int leader = -1;
    ASSERT_TRUE(testing::Eventually([&] {
      const bool a = elections[0]->IsLeader(), b = elections[1]->IsLeader();
      EXPECT_FALSE(a && b) << "two leaders";
      leader = a ? 0 : b ? 1 : -1;
      return leader >= 0;
    }));
    absl::Status s1, s2;
    std::thread t1([&] { s1 = elections[leader]->Yield(); });
    std::thread t2([&] { s2 = elections[leader]->Yield(); });
    t1.join();
    t2.join();
    EXPECT_TRUE(s1.ok() || s2.ok()) << s1 << " / " << s2;
    EXPECT_TRUE(s1.ok() || absl::IsFailedPrecondition(s1)) << s1;
    EXPECT_TRUE(s2.ok() || absl::IsFailedPrecondition(s2)) << s2;
    auto children = admin().GetChildren(path);
    ASSERT_TRUE(children.ok());
    EXPECT_EQ(children->size(), 2u) << absl::StrJoin(*children, ",");
    const int before = leader;
    ASSERT_TRUE(testing::Eventually([&] {
      return elections[1 - before]->IsLeader() && !elections[before]->IsLeader();
    })) << "nobody took over from c" << before;
    EXPECT_EQ(admin().GetChildren(path)->size(), 2u);
  }
  LeaveAll(path);
}

// Yield with the leader's connection cut (TCP proxy, blackhole): Yield must
// return in bounded time (its delete and its one round trip each wait at
// most one session timeout), the other candidate must lead once the
// yielder's session is gone, and never two leaders in the library's view.
TEST_F(YieldProxiedTest, WithTheConnectionCutIsBoundedAndNeverTwoLeaders) {
  const std::string path = Path("yield-cut");
  SessionOptions cut_options = ProxiedOptions();
  cut_options.session_timeout = absl::Seconds(4);
  auto cut_session = NewSession(cut_options);
  ASSERT_NE(cut_session, nullptr);
  auto other_session = NewSession();
  ElectionOptions a_options;
  a_options.id = "cut";
  auto a = LeaderElection::Create(*cut_session, path, a_options);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->Join().ok());
  ASSERT_TRUE((*a)->AwaitLeadership(absl::Seconds(10)).ok());
  ElectionOptions b_options;
  b_options.id = "direct";
  auto b = LeaderElection::Create(*other_session, path, b_options);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE((*b)->Join().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  std::atomic<bool> stop{false};
  std::atomic<int> both{0};
  std::thread watcher([&] {
    while (!stop.load()) {
      if ((*a)->IsLeader() && (*b)->IsLeader()) ++both;
      absl::SleepFor(absl::Milliseconds(1));  // sampling, not deciding
    }
  });
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  const absl::Time start = absl::Now();
  absl::Status yielded = (*a)->Yield();
  const absl::Duration took = absl::Now() - start;
  EXPECT_LE(took, absl::Seconds(4) * 2 + absl::Seconds(3)) << yielded;
  EXPECT_TRUE(testing::Eventually([&] { return (*b)->IsLeader(); }, absl::Seconds(30)))
      << "the direct candidate never led; Yield: " << yielded << " after " << took;
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  // The yielder comes back (rejoins after its loss) behind the leader.
  EXPECT_TRUE(testing::Eventually([&] {
    auto c = admin().GetChildren(path);
    return c.ok() && c->size() == 2;
  }, absl::Seconds(30)));
  EXPECT_TRUE((*b)->IsLeader());
  EXPECT_FALSE((*a)->IsLeader());
  stop = true;
  watcher.join();
  EXPECT_EQ(both.load(), 0) << "samples with two leaders";
  std::cout << "[info] Yield with the connection cut returned " << yielded << " after " << took
            << std::endl;
  (void)(*a)->Leave();
  (void)(*b)->Leave();
  a->reset();
  b->reset();
  DeleteDirectory(admin(), path);
}

// Yield whose re-create's reply is dropped (the server applies it): at
// Yield's return its node is in the queue, last; one node per candidate;
// the other leads and, yielding in turn, hands back.
TEST_F(YieldProxiedTest, WhoseCreateReplyIsDroppedQueuesOneNodeLast) {
  const std::string path = Path("yield-drop");
  auto faults = std::make_shared<testing::ClientFaults>();
  auto s0 = NewFaultySession(faults);
  auto s1 = NewSession();
  ElectionOptions o0, o1;
  o0.id = "zero";
  o1.id = "one";
  auto e0 = LeaderElection::Create(*s0, path, o0);
  ASSERT_TRUE((*e0)->Join().ok());
  ASSERT_TRUE((*e0)->AwaitLeadership(absl::Seconds(10)).ok());
  auto e1 = LeaderElection::Create(*s1, path, o1);
  ASSERT_TRUE((*e1)->Join().ok());
  ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    using testing::FaultRule;
    faults->Add({FaultRule::Call::kCreate, FaultRule::Effect::kDropReply, path + "/", 1});
    ASSERT_TRUE((*e0)->Yield().ok());
    auto children = admin().GetChildren(path);
    ASSERT_TRUE(children.ok());
    std::vector<internal::QueueNode> queue = internal::ParseQueue(*children, 0);
    ASSERT_EQ(queue.size(), 2u) << absl::StrJoin(*children, ",");
    auto data = admin().Get(path + "/" + queue.back().name);
    ASSERT_TRUE(data.ok());
    EXPECT_TRUE(absl::StartsWith(*data, "zero")) << *data;
    ASSERT_TRUE(testing::Eventually([&] { return (*e1)->IsLeader(); }));
    EXPECT_FALSE((*e0)->IsLeader());
    ASSERT_TRUE((*e1)->Yield().ok());
    ASSERT_TRUE(testing::Eventually([&] { return (*e0)->IsLeader(); })) << "no hand-back";
    EXPECT_FALSE((*e1)->IsLeader());
    EXPECT_EQ(admin().GetChildren(path)->size(), 2u);
  }
  ASSERT_TRUE((*e0)->Leave().ok());
  ASSERT_TRUE((*e1)->Leave().ok());
  e0->reset();
  e1->reset();
  DeleteDirectory(admin(), path);
}

// Yield and Leave at once from two threads on the leader: both return in
// bounded time and nothing of the candidate stays queued.
TEST_F(YieldProxiedTest, DuringLeaveLeavesNothing) {
  const std::string path = Path("yield-leave");
  auto s0 = NewSession();
  auto s1 = NewSession();
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    ElectionOptions o0, o1;
    o0.id = "zero";
    o1.id = "one";
    auto e0 = LeaderElection::Create(*s0, path, o0);
    ASSERT_TRUE(e0.ok());
    ASSERT_TRUE((*e0)->Join().ok());
    ASSERT_TRUE((*e0)->AwaitLeadership(absl::Seconds(10)).ok());
    auto e1 = LeaderElection::Create(*s1, path, o1);
    ASSERT_TRUE((*e1)->Join().ok());
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
    absl::Status yielded, left;
    const absl::Time start = absl::Now();
    std::thread t1([&] { yielded = (*e0)->Yield(); });
    std::thread t2([&] { left = (*e0)->Leave(); });
    t1.join();
    t2.join();
    EXPECT_LE(absl::Now() - start, absl::Seconds(13)) << yielded << " / " << left;
    EXPECT_TRUE(left.ok()) << left;
    EXPECT_TRUE(testing::Eventually([&] { return (*e1)->IsLeader(); }));
    EXPECT_FALSE((*e0)->IsLeader());
    auto children = admin().GetChildren(path);
    ASSERT_TRUE(children.ok());
    EXPECT_EQ(children->size(), 1u) << "yield " << yielded << ", leave " << left << ": "
                                    << absl::StrJoin(*children, ",");
    ASSERT_TRUE((*e1)->Leave().ok());
    e0->reset();
    e1->reset();
    ASSERT_TRUE(testing::Eventually([&] {
      auto c = admin().GetChildren(path);
      return !c.ok() || c->empty();
    })) << "nodes left";
  }
  DeleteDirectory(admin(), path);
}

}  // namespace
}  // namespace zkr
