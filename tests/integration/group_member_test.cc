// Group membership (zkrecipes/group_member.h) against a real server: join,
// list, data, leave, a member whose session dies disappearing, the watch's
// one full list per change, and bad input.
#include "zkrecipes/group_member.h"

#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/support/directory_check.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using testing::ZkTest;
using testing::Eventually;
using testing::Ready;

std::vector<std::string> Ids(const std::vector<GroupMemberInfo>& members) {
  std::vector<std::string> ids;
  for (const GroupMemberInfo& m : members) ids.push_back(m.id);
  return ids;
}

// Collects what a GroupWatch reports.
class Reports {
 public:
  GroupWatch::OnChange Listener() {
    return [this](const std::vector<GroupMemberInfo>& members) {
      absl::MutexLock lock(&mu_);
      lists_.push_back(Ids(members));
      last_ = members;
    };
  }
  // Waits until the last list reported has these ids; returns it.
  std::vector<GroupMemberInfo> AwaitIds(const std::vector<std::string>& ids) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, &ids]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !lists_.empty() && lists_.back() == ids;
    };
    mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(20));
    EXPECT_TRUE(!lists_.empty() && lists_.back() == ids)
        << "last list: " << (lists_.empty() ? "none" : absl::StrJoin(lists_.back(), ","));
    return last_;
  }
  size_t count() {
    absl::MutexLock lock(&mu_);
    return lists_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<std::vector<std::string>> lists_ ABSL_GUARDED_BY(mu_);
  std::vector<GroupMemberInfo> last_ ABSL_GUARDED_BY(mu_);
};

class GroupMemberTest : public ZkTest {
 protected:
  std::unique_ptr<GroupMember> Member(Session& session, const std::string& path,
                                      const std::string& id, const std::string& data) {
    GroupOptions options;
    options.id = id;
    options.data = data;
    auto member = GroupMember::Create(session, path, options);
    EXPECT_TRUE(member.ok()) << member.status();
    return member.ok() ? std::move(*member) : nullptr;
  }
};

TEST_F(GroupMemberTest, MembersJoinPublishLeaveAndDisappearWithTheirSession) {
  const std::string path = Path("workers");
  Reports reports;
  auto watch = GroupWatch::Create(admin(), path, reports.Listener());
  ASSERT_TRUE(watch.ok()) << watch.status();
  reports.AwaitIds({});  // no group yet

  auto a_session = NewSession();
  auto b_session = NewSession();
  auto a = Member(*a_session, path, "worker-a", "10.0.0.1:8080");
  auto b = Member(*b_session, path, "worker-b", "10.0.0.2:8080");
  ASSERT_TRUE(a->Join().ok());
  reports.AwaitIds({"worker-a"});
  ASSERT_TRUE(b->Join().ok());
  std::vector<GroupMemberInfo> both = reports.AwaitIds({"worker-a", "worker-b"});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].data, "10.0.0.1:8080");
  EXPECT_EQ(both[1].session_id, b_session->session_id());
  EXPECT_TRUE(a->joined());
  EXPECT_TRUE(absl::IsFailedPrecondition(a->Join()));

  ASSERT_TRUE(b->SetData("10.0.0.22:8080").ok());
  auto listed = ListGroup(admin(), path);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(Ids(*listed), (std::vector<std::string>{"worker-a", "worker-b"}));
  EXPECT_EQ((*listed)[1].data, "10.0.0.22:8080");

  ASSERT_TRUE(a->Leave().ok());
  reports.AwaitIds({"worker-b"});
  EXPECT_FALSE(a->joined());
  EXPECT_TRUE(absl::IsFailedPrecondition(a->Leave()));
  EXPECT_TRUE(absl::IsFailedPrecondition(a->SetData("x")));

  // b's session dies: b disappears, and knows it is no longer a member.
  ASSERT_TRUE(testing::ExpireSession(*b_session).ok());
  reports.AwaitIds({});
  for (int i = 0; i < 500 && b->joined(); ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_FALSE(b->joined());
  watch->reset();
  b.reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Five joins and leaves in a row: the last list reported is right each
// time. The watch sets no data watch on the members (the server's `wchp`
// lists data watches; its one child watch on the group is not listed there).
TEST_F(GroupMemberTest, TheWatchFollowsJoinsAndLeavesWithoutWatchingMembers) {
  const std::string path = Path("full");
  Reports reports;
  auto watch_session = NewSession();
  auto watch = GroupWatch::Create(*watch_session, path, reports.Listener());
  ASSERT_TRUE(watch.ok());
  reports.AwaitIds({});
  auto session = NewSession();
  std::vector<std::unique_ptr<GroupMember>> members;
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(absl::StrCat("m", i));
    members.push_back(Member(*session, path, ids.back(), ""));
    ASSERT_TRUE(members.back()->Join().ok());
  }
  reports.AwaitIds(ids);
  if (testing::SharedServer() != nullptr) {
    EXPECT_TRUE(testing::WatchedPaths(*watch_session, path).empty());
  }
  for (auto& m : members) ASSERT_TRUE(m->Leave().ok());
  reports.AwaitIds({});
  EXPECT_GE(reports.count(), 3u);
  watch->reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Two follow loops on one session, a leader observer and a group watch,
// across a session loss: on the new session the observer replaces the watch
// id it kept from the old one. Watch ids must not repeat across sessions,
// or it cancels the group watch's new watch (same number, other owner) and
// the group watch never hears another change.
TEST_F(GroupMemberTest, TheWatchKeepsHearingAfterASessionLossBesideAnObserver) {
  const std::string election = Path("election");
  const std::string group = Path("group");
  auto candidate_session = NewSession();
  ElectionOptions candidate_options;
  candidate_options.id = "leader";
  auto candidate = LeaderElection::Create(*candidate_session, election, candidate_options);
  ASSERT_TRUE(candidate.ok()) << candidate.status();
  ASSERT_TRUE((*candidate)->Join().ok());
  // Taken over before the observer reads it: the observer sets one watch.
  auto admin_observer = LeaderObserver::Create(admin(), election);
  ASSERT_TRUE(admin_observer.ok());
  absl::StatusOr<std::optional<LeaderInfo>> led = (*admin_observer)->Current(absl::Seconds(10));
  while (led.ok() && !(led->has_value() && (*led)->taken_over)) {
    led = (*admin_observer)->AwaitChange(*led, absl::Seconds(10));
  }
  ASSERT_TRUE(led.ok() && led->has_value()) << led.status();
  const std::string leader_node = election + "/" + (*led)->node;
  admin_observer->reset();

  auto members_session = NewSession();
  auto m1 = Member(*members_session, group, "m1", "");
  ASSERT_TRUE(m1->Join().ok());

  auto session = NewSession();
  testing::StateRecorder states(*session);
  auto observer = LeaderObserver::Create(*session, election);
  ASSERT_TRUE(observer.ok());
  led = (*observer)->Current(absl::Seconds(10));
  ASSERT_TRUE(led.ok() && led->has_value()) << led.status();
  Reports reports;
  auto watch = GroupWatch::Create(*session, group, reports.Listener());
  ASSERT_TRUE(watch.ok());
  reports.AwaitIds({"m1"});

  const uint64_t generation = session->generation();
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(states.WaitFor(SessionState::kConnected, generation + 1).has_value());
  // The observer has watched the leader's node again on the new session
  // (its listing's reply: after the group watch set its new watch).
  if (testing::SharedServer() != nullptr) {
    std::vector<std::string> watched;
    for (int i = 0; i < 500; ++i) {
      watched = testing::WatchedPaths(*session, election);
      if (watched == std::vector<std::string>{leader_node}) break;
    }
    ASSERT_EQ(watched, std::vector<std::string>{leader_node});
  }
  const size_t before = reports.count();
  auto m2 = Member(*members_session, group, "m2", "");
  ASSERT_TRUE(m2->Join().ok());
  reports.AwaitIds({"m1", "m2"});
  EXPECT_GT(reports.count(), before);

  watch->reset();
  observer->reset();
  ASSERT_TRUE(m1->Leave().ok());
  ASSERT_TRUE(m2->Leave().ok());
  ASSERT_TRUE((*candidate)->Leave().ok());
  (void)admin().Delete(group);
  (void)admin().Delete(election);
}

// The connection drops while the watch reads the members (a member's read
// lost with it): that member has not left. The watch reads them again once
// connected and reports everyone, rather than a list without a live member
// that nothing would ever correct.
TEST_F(GroupMemberTest, AReadLostWithTheConnectionIsReadAgainNotTakenAsALeave) {
  const std::string path = Path("flaky");
  auto members_session = NewSession();
  auto m1 = Member(*members_session, path, "m1", "");
  auto m2 = Member(*members_session, path, "m2", "");
  ASSERT_TRUE(m1->Join().ok());
  ASSERT_TRUE(m2->Join().ok());
  auto faults = std::make_shared<testing::ClientFaults>();
  faults->Add({testing::FaultRule::Call::kGet, testing::FaultRule::Effect::kLoseRequest,
               path + "/", 1});
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  Reports reports;
  auto watch = GroupWatch::Create(*session, path, reports.Listener());
  ASSERT_TRUE(watch.ok());
  reports.AwaitIds({"m1", "m2"});
  EXPECT_TRUE(faults->UsedUp());
  EXPECT_EQ(reports.count(), 1u) << "a list without a live member was reported";
  watch->reset();
  ASSERT_TRUE(m1->Leave().ok());
  ASSERT_TRUE(m2->Leave().ok());
  (void)admin().Delete(path);
}

TEST_F(GroupMemberTest, BadInputIsRefused) {
  GroupOptions bad_id;
  bad_id.id = "a\nb";
  EXPECT_TRUE(absl::IsInvalidArgument(GroupMember::Create(admin(), Path("g"), bad_id).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(GroupMember::Create(admin(), "relative").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(GroupMember::Create(admin(), "/").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      GroupWatch::Create(admin(), Path("g"), nullptr).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ListGroup(admin(), "x/y").status()));
  auto listed = ListGroup(admin(), Path("missing"));
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

class GroupMemberPartitionTest : public testing::ProxiedZkTest {};

// The library declares the member's session LOST (its lease ran out while
// cut off) before the server expires it, and opens a new session: the old
// node is still there for a while, but SetData must not write it — the
// member is no longer joined.
TEST_F(GroupMemberPartitionTest, SetDataIsRefusedOnceTheSessionIsDeclaredLost) {
  const std::string path = Path("cut-off");
  auto session = NewSession(ProxiedOptions());
  ASSERT_NE(session, nullptr);
  testing::StateRecorder states(*session);
  GroupOptions options;
  options.id = "m";
  options.data = "before";
  auto member = GroupMember::Create(*session, path, options);
  ASSERT_TRUE(member.ok());
  ASSERT_TRUE((*member)->Join().ok());
  const std::string node = (*member)->node_path();
  const uint64_t generation = session->generation();
  // Requests reach the server (its session stays alive), answers do not.
  proxy_->SetMode(testing::TcpProxy::Mode::kDropServerToClient);
  ASSERT_TRUE(states.WaitFor(SessionState::kLost, generation).has_value());
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();  // the new session connects at once
  ASSERT_TRUE(states.WaitFor(SessionState::kConnected, generation + 1).has_value());
  const bool node_still_there = admin().Exists(node).value_or(std::nullopt).has_value();
  absl::Status late = (*member)->SetData("after");
  EXPECT_TRUE(absl::IsFailedPrecondition(late))
      << late << (node_still_there ? " (the old session's node was still there)" : "");
  EXPECT_FALSE((*member)->joined());
  absl::StatusOr<std::string> data = admin().Get(node);
  if (data.ok()) EXPECT_NE(*data, "m\nafter") << "the old session's node was written";
  member->reset();
  // The old session's node goes when the server expires it.
  for (int i = 0; i < 1000 && admin().Exists(node).value_or(std::nullopt).has_value(); ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  (void)admin().Delete(path);
}

// Join() from two threads at once: one joins, the other is told the member
// is already joined (or joining) — never two nodes for one member, one of
// them a phantom that Leave() does not remove. Each round trip is slowed
// down so that the second call certainly comes while the first waits for
// its create.
TEST_F(GroupMemberPartitionTest, ConcurrentJoinsMakeOneMember) {
  const std::string path = Path("twice");
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = testing::ConnectWithWatchAudit(ProxiedOptions(), faults);
  ASSERT_TRUE(session.ok()) << session.status();
  auto member = GroupMember::Create(**session, path);
  ASSERT_TRUE(member.ok());
  proxy_->SetDelay(absl::Milliseconds(500));
  absl::Status first = absl::UnknownError("not run");
  std::thread joiner([&] { first = (*member)->Join(); });
  // The first Join() has sent its create; its answer is a second away.
  for (int i = 0; i < 10000 && faults->Calls(testing::FaultRule::Call::kCreate, path) == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_GT(faults->Calls(testing::FaultRule::Call::kCreate, path), 0);
  absl::Status second = (*member)->Join();
  joiner.join();
  proxy_->SetDelay(absl::ZeroDuration());
  EXPECT_TRUE(first.ok()) << first;
  EXPECT_TRUE(absl::IsFailedPrecondition(second)) << second;
  EXPECT_TRUE((*member)->joined());
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_EQ(children->size(), 1u) << absl::StrJoin(*children, ", ");
  ASSERT_TRUE((*member)->Leave().ok());
  children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_TRUE(children->empty()) << "left a phantom member: " << absl::StrJoin(*children, ", ");
  member->reset();
  session->reset();
  (void)admin().Delete(path);
}

// Join() while the member's session is suspended: its node may still be
// there (it is, once reconnected), so it is refused, not made twice.
TEST_F(GroupMemberPartitionTest, JoinWhileSuspendedIsRefused) {
  const std::string path = Path("suspended");
  auto session = NewSession(ProxiedOptions());
  ASSERT_NE(session, nullptr);
  testing::StateRecorder states(*session);
  auto member = GroupMember::Create(*session, path);
  ASSERT_TRUE(member.ok());
  ASSERT_TRUE((*member)->Join().ok());
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(states.WaitFor(SessionState::kSuspended, session->generation()).has_value());
  absl::Status again = absl::UnknownError("not run");
  std::thread joiner([&] { again = (*member)->Join(absl::Seconds(10)); });
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();
  joiner.join();
  EXPECT_TRUE(absl::IsFailedPrecondition(again)) << again;
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_EQ(children->size(), 1u) << absl::StrJoin(*children, ", ");
  (void)(*member)->Leave();
  member->reset();
  (void)admin().Delete(path);
}

// Each test checks that no node is left in a directory under its root.
using GroupMemberEdgeTest = testing::DirectoryCheckedTest<ZkTest>;
// Each test checks that no node is left in a directory under its root.
using GroupMemberEdgeProxiedTest = testing::DirectoryCheckedTest<testing::ProxiedZkTest>;

TEST_F(GroupMemberEdgeTest, ConcurrentJoinLeaveSetData) {
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

TEST_F(GroupMemberEdgeTest, SetDataAfterSessionLoss) {
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
TEST_F(GroupMemberEdgeTest, GroupWatchNeverDeafAcrossExpiries) {
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

// GroupWatch across connection resets with churn: the final list equals
// the server's.
TEST_F(GroupMemberEdgeProxiedTest, GroupWatchNeverDeafAcrossConnectionResets) {
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

}  // namespace
}  // namespace zkr
