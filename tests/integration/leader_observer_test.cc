// Election round two against a real server: the leader observer (follows
// id, data, epoch and take-over; watches only the leader's node), leader
// data (published, changed by one write, never read as a release), Yield
// (step down to the back of the queue) and LeaveAndHandOver.
#include "zkrecipes/leader_observer.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/leader_election.h"

namespace zkr {
namespace {

using testing::ZkTest;

struct Candidate {
  std::unique_ptr<Session> session;
  std::unique_ptr<LeaderElection> election;
};

class LeaderObserverTest : public ZkTest {
 protected:
  // Joins a candidate and waits until its node is on the server (queue
  // order = call order).
  std::unique_ptr<Candidate> Join(const std::string& path, const std::string& id,
                                  const std::string& data) {
    auto c = std::make_unique<Candidate>();
    c->session = NewSession();
    ElectionOptions options;
    options.id = id;
    options.data = data;
    auto election = LeaderElection::Create(*c->session, path, options);
    EXPECT_TRUE(election.ok()) << election.status();
    c->election = std::move(*election);
    const size_t before = Children(path);
    EXPECT_TRUE(c->election->Join().ok());
    for (int i = 0; i < 2000 && Children(path) == before; ++i) absl::SleepFor(absl::Milliseconds(5));
    return c;
  }
  size_t Children(const std::string& path) {
    auto children = admin().GetChildren(path);
    return children.ok() ? children->size() : 0;
  }
  // Waits for the observer's answer to satisfy `pred`.
  std::optional<LeaderInfo> AwaitLeader(LeaderObserver& observer,
                                        const std::function<bool(const std::optional<LeaderInfo>&)>& pred) {
    absl::StatusOr<std::optional<LeaderInfo>> now = observer.Current(absl::Seconds(10));
    while (now.ok() && !pred(*now)) now = observer.AwaitChange(*now, absl::Seconds(10));
    EXPECT_TRUE(now.ok()) << now.status();
    return now.ok() ? *now : std::nullopt;
  }
};

// An observer before anyone campaigns sees nobody; then the first candidate
// with its data and epoch, taken over; a candidate joining behind changes
// nothing it reports; the leader's SetData is seen; the leader leaving hands
// the answer to the next, taken over.
TEST_F(LeaderObserverTest, FollowsTheLeaderItsDataAndItsTakeOver) {
  const std::string path = Path("election");
  absl::Mutex mu;
  std::vector<std::optional<LeaderInfo>> reported;
  // A slow listener: on_change runs on the dispatcher thread and may lag
  // the answer AwaitChange sees; it must still get every change, in order.
  auto observer = LeaderObserver::Create(admin(), path, [&](const std::optional<LeaderInfo>& l) {
    absl::SleepFor(absl::Milliseconds(20));
    absl::MutexLock lock(&mu);
    reported.push_back(l);
  });
  ASSERT_TRUE(observer.ok()) << observer.status();
  absl::StatusOr<std::optional<LeaderInfo>> first = (*observer)->Current(absl::Seconds(10));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->has_value());

  auto a = Join(path, "replica-a", "10.0.0.1:5432");
  std::optional<LeaderInfo> leader =
      AwaitLeader(**observer, [](const std::optional<LeaderInfo>& l) { return l && l->taken_over; });
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ(leader->id, "replica-a");
  EXPECT_EQ(leader->data, "10.0.0.1:5432");
  ASSERT_TRUE(a->election->AwaitLeadership(absl::Seconds(10)).ok());
  EXPECT_EQ(leader->epoch, a->election->epoch());

  auto b = Join(path, "replica-b", "10.0.0.2:5432");
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      (*observer)->AwaitChange(leader, absl::Milliseconds(300)).status()))
      << "a candidate joining behind the leader changed the answer";

  ASSERT_TRUE(a->election->SetData("10.0.0.9:5432").ok());
  leader = AwaitLeader(**observer, [](const std::optional<LeaderInfo>& l) {
    return l && l->data == "10.0.0.9:5432";
  });
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ(leader->id, "replica-a");
  EXPECT_FALSE(b->election->IsLeader()) << "a data change of the leader read as its release";

  ASSERT_TRUE(a->election->LeaveAndHandOver(absl::Seconds(10)).ok());
  EXPECT_TRUE(b->election->IsLeader()) << "handed over before the successor took over";
  leader = AwaitLeader(**observer, [](const std::optional<LeaderInfo>& l) {
    return l && l->id == "replica-b" && l->taken_over;
  });
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ(leader->data, "10.0.0.2:5432");
  {
    // The listener lags: wait until it has been told of b's take-over, then
    // check it was told every change once, in order.
    absl::MutexLock lock(&mu);
    auto told_last = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return !reported.empty() && reported.back() == leader;
    };
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&told_last), absl::Seconds(10)))
        << "on_change never heard of the last answer";
    std::vector<std::string> answers;  // who led with which data, in order
    for (size_t i = 0; i < reported.size(); ++i) {
      if (i > 0) {
        EXPECT_NE(reported[i], reported[i - 1]) << "answer " << i << " repeated";
      }
      std::string answer = reported[i] ? absl::StrCat(reported[i]->id, " ", reported[i]->data) : "nobody";
      if (answers.empty() || answers.back() != answer) answers.push_back(std::move(answer));
    }
    EXPECT_EQ(answers, (std::vector<std::string>{"nobody", "replica-a 10.0.0.1:5432",
                                                 "replica-a 10.0.0.9:5432",
                                                 "replica-b 10.0.0.2:5432"}));
  }
  ASSERT_TRUE(b->election->Leave().ok());
  observer->reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Two observers and three candidates: the server lists the observers'
// sessions on the leader's node only.
TEST_F(LeaderObserverTest, ObserversWatchOnlyTheLeadersNode) {
  if (testing::SharedServer() == nullptr) GTEST_SKIP() << "needs the server's four-letter words";
  const std::string path = Path("watched");
  std::vector<std::unique_ptr<Candidate>> candidates;
  for (const char* id : {"a", "b", "c"}) candidates.push_back(Join(path, id, ""));
  auto watcher_session = NewSession();
  auto one = LeaderObserver::Create(*watcher_session, path);
  auto two = LeaderObserver::Create(*watcher_session, path);
  ASSERT_TRUE(one.ok() && two.ok());
  std::optional<LeaderInfo> leader =
      AwaitLeader(**one, [](const std::optional<LeaderInfo>& l) { return l && l->taken_over; });
  ASSERT_TRUE(leader.has_value());
  ASSERT_TRUE(AwaitLeader(**two, [](const std::optional<LeaderInfo>& l) { return l && l->taken_over; })
                  .has_value());
  std::vector<std::string> watched = testing::WatchedPaths(*watcher_session, path);
  EXPECT_EQ(watched, std::vector<std::string>{path + "/" + leader->node});
  one->reset();
  two->reset();
  EXPECT_TRUE(testing::WatchedPaths(*watcher_session, path).empty()) << "an observer left a watch";
  for (auto& c : candidates) ASSERT_TRUE(c->election->Leave().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Yield: the leader steps down to the back of the queue; the next leads.
// SetData is refused to a non-leader and to a leader whose node is gone.
TEST_F(LeaderObserverTest, YieldStepsDownToTheBackAndSetDataNeedsLeadership) {
  const std::string path = Path("yield");
  auto a = Join(path, "a", "");
  auto b = Join(path, "b", "");
  auto c = Join(path, "c", "");
  ASSERT_TRUE(a->election->AwaitLeadership(absl::Seconds(10)).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(b->election->Yield()));
  EXPECT_TRUE(absl::IsFailedPrecondition(b->election->SetData("x")));
  const int64_t first_epoch = a->election->epoch();
  ASSERT_TRUE(a->election->Yield().ok());
  EXPECT_FALSE(a->election->IsLeader());
  ASSERT_TRUE(b->election->AwaitLeadership(absl::Seconds(10)).ok());
  EXPECT_GT(b->election->epoch(), first_epoch);
  EXPECT_TRUE(a->election->joined());
  for (int i = 0; i < 1000 && Children(path) != 3; ++i) absl::SleepFor(absl::Milliseconds(5));
  auto order = a->election->Participants();
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<std::string>{"b", "c", "a"}));

  // b's node deleted by an operator: it may not publish any more.
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok());
  std::sort(children->begin(), children->end(), [](const std::string& x, const std::string& y) {
    return x.substr(x.rfind('-')) < y.substr(y.rfind('-'));
  });
  ASSERT_TRUE(admin().Delete(path + "/" + children->front()).ok());
  ASSERT_TRUE(c->election->AwaitLeadership(absl::Seconds(10)).ok());
  absl::Status late = b->election->SetData("stale");
  EXPECT_TRUE(absl::IsFailedPrecondition(late)) << late;
  for (auto* candidate : {&a, &b, &c}) (void)(*candidate)->election->Leave();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// LeaveAndHandOver with nobody to hand over to: it has left, and says no
// successor took over in time.
TEST_F(LeaderObserverTest, HandOverWithoutASuccessorTimesOut) {
  const std::string path = Path("alone");
  auto a = Join(path, "a", "");
  ASSERT_TRUE(a->election->AwaitLeadership(absl::Seconds(10)).ok());
  const absl::Time start = absl::Now();
  absl::Status handed = a->election->LeaveAndHandOver(absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsDeadlineExceeded(handed)) << handed;
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_FALSE(a->election->joined());
  EXPECT_EQ(Children(path), 0u);
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A directory with children but no candidate (a persistent `config` node):
// the observer waits on the directory as it does on an empty one, it does
// not list it again and again. Counted over many round trips of its own
// session, whose replies would each let a busy loop send another listing.
TEST_F(LeaderObserverTest, AnElectionWithoutACandidateIsWaitedOnNotPolled) {
  const std::string path = Path("configured");
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  ASSERT_TRUE(admin().Create(path + "/config", "x", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  auto observer = LeaderObserver::Create(*session, path);
  ASSERT_TRUE(observer.ok()) << observer.status();
  absl::StatusOr<std::optional<LeaderInfo>> first = (*observer)->Current(absl::Seconds(10));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->has_value());
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(session->Exists(path).ok());
  // One listing, one listing that sets the child watch.
  EXPECT_LE(faults->Calls(testing::FaultRule::Call::kGetChildren, path), 2)
      << "the observer listed the election again and again";

  // It still hears the first candidate.
  auto a = Join(path, "a", "");
  std::optional<LeaderInfo> leader =
      AwaitLeader(**observer, [](const std::optional<LeaderInfo>& l) { return l && l->taken_over; });
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ(leader->id, "a");
  ASSERT_TRUE(a->election->Leave().ok());
  observer->reset();
  ASSERT_TRUE(admin().Delete(path + "/config").ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// LeaveAndHandOver from an election whose directory keeps a non-candidate
// child: with nobody to hand over to it waits out its timeout on a watch,
// it does not list the directory in a loop.
TEST_F(LeaderObserverTest, HandOverWithoutASuccessorWaitsWithoutPolling) {
  const std::string path = Path("configured-alone");
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  ASSERT_TRUE(admin().Create(path + "/config", "x", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  ElectionOptions options;
  options.id = "a";
  auto election = LeaderElection::Create(*session, path, options);
  ASSERT_TRUE(election.ok()) << election.status();
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  const int before = faults->Calls(testing::FaultRule::Call::kGetChildren, path);
  absl::Status handed = (*election)->LeaveAndHandOver(absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(handed)) << handed;
  // The observer's first listing (and child watch) while we lead, one
  // after we leave, and the one that sets the child watch again.
  EXPECT_LE(faults->Calls(testing::FaultRule::Call::kGetChildren, path) - before, 4)
      << "LeaveAndHandOver listed the election again and again";
  EXPECT_FALSE((*election)->joined());
  election->reset();
  ASSERT_TRUE(admin().Delete(path + "/config").ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// A leader whose node the observer may not read (the candidate's ACL, in a
// directory anyone may list): the observer cannot follow it, and must not
// read it again and again trying.
TEST_F(LeaderObserverTest, AnUnreadableLeaderIsNotReadInALoop) {
  const std::string path = Path("private");
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  SessionOptions alice_options = Options();
  alice_options.digest_auth = "alice:secret";
  auto alice = NewSession(alice_options);
  ASSERT_NE(alice, nullptr);
  ElectionOptions options;
  options.id = "alice";
  options.acl = CreatorAllAcl();
  auto election = LeaderElection::Create(*alice, path, options);
  ASSERT_TRUE(election.ok()) << election.status();
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  auto observer = LeaderObserver::Create(*session, path);
  ASSERT_TRUE(observer.ok()) << observer.status();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(session->Exists(path).ok());
  EXPECT_LE(faults->Calls(testing::FaultRule::Call::kGet, path + "/"), 1)
      << "the observer read the leader's node again and again";
  observer->reset();
  ASSERT_TRUE((*election)->Leave().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

}  // namespace
}  // namespace zkr
