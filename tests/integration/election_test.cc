// LeaderElection and LeaderSelector against a real standalone ZooKeeper
// server: one leader, herd-free queueing (proved by the server's own watch
// listing), forced session expiry of the leader round after round with a
// ledger that must never show two overlapping leaderships, hand-over, the
// selector style, operator interference and bad input.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/session_core.h"
#include "src/zk_client.h"
#include "tests/support/election_fixture.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "src/session_access.h"

namespace zkr {

using internal::OnCompletionThread;
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::ZkTest;

using testing::Candidate;
using testing::ElectionTest;
using testing::ExpectNoOverlap;
using testing::HearOfExpiry;
using testing::Hex;
using testing::Ledger;
using testing::ParseWchp;
using testing::WatchListing;

TEST_F(ElectionTest, ExactlyOneLeaderAmongFiveAndFollowersWatchOnlyTheirPredecessor) {
  if (testing::SharedServer() == nullptr) {
    GTEST_SKIP() << "needs the embedded server's four-letter words";
  }
  const std::string path = Path("one-leader");
  constexpr int kCandidates = 5;
  Ledger ledger;
  std::vector<std::unique_ptr<Candidate>> c = JoinInOrder(path, kCandidates, &ledger);
  ASSERT_EQ(c.size(), static_cast<size_t>(kCandidates));
  ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok());
  EXPECT_GT(c[0]->election->epoch(), 0);

  // The server's watch listing: every node is watched by its owner (the
  // own-node watch, set with the first blocker watch and kept while
  // leading) and by its direct successor, no one else; the last only by its
  // owner. Nobody watches the directory.
  std::vector<QueueEntryInfo> queue = *InspectQueue(admin(), path);
  ASSERT_EQ(queue.size(), static_cast<size_t>(kCandidates));
  WatchListing expected;
  for (int i = 0; i < kCandidates; ++i) {
    expected[path + "/" + queue[i].name].insert(Hex(c[i]->session->session_id()));
  }
  for (int i = 1; i < kCandidates; ++i) {
    expected[path + "/" + queue[i - 1].name].insert(Hex(c[i]->session->session_id()));
  }
  EXPECT_EQ(WaitForWatches(path, expected), expected);
  auto all = testing::SharedServer()->FourLetterWord("wchp");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(ParseWchp(*all).count(path), 0u) << "someone watches the election directory";

  // Exactly one leader, and everybody agrees who it is.
  EXPECT_EQ(LeaderCount(c), 1);
  EXPECT_TRUE(c[0]->election->IsLeader());
  for (int i = 1; i < kCandidates; ++i) {
    EXPECT_EQ(c[i]->election->leadership(), Leadership::kNotLeader) << i;
    EXPECT_EQ(c[i]->election->epoch(), 0) << i;
    EXPECT_TRUE(c[i]->election->joined());
  }
  auto observer = LeaderElection::Create(admin(), path);
  ASSERT_TRUE(observer.ok());
  auto leader = (*observer)->CurrentLeader();
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(*leader, std::optional<std::string>(c[0]->id));
  auto participants = (*observer)->Participants();
  ASSERT_TRUE(participants.ok()) << participants.status();
  EXPECT_THAT(*participants, ElementsAre("candidate-0", "candidate-1", "candidate-2",
                                         "candidate-3", "candidate-4"));
  EXPECT_EQ(queue[0].session_id, c[0]->session->session_id());
  EXPECT_EQ(queue[0].czxid, c[0]->election->epoch());
  // on_change so far: only the leader, once.
  ASSERT_TRUE(ledger.WaitFor([](const std::vector<Ledger::Event>& e) { return !e.empty(); }));
  std::vector<Ledger::Event> events = ledger.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].who, 0);
  EXPECT_EQ(events[0].leadership, Leadership::kLeader);
  EXPECT_EQ(events[0].epoch, c[0]->election->epoch());

  // Followers leave first (no leadership changes), then the leader.
  for (int i = kCandidates - 1; i >= 0; --i) {
    EXPECT_TRUE(c[i]->LeaveAndSync().ok()) << i;
    EXPECT_FALSE(c[i]->election->joined());
    EXPECT_FALSE(c[i]->election->IsLeader());
  }
  EXPECT_EQ(*(*observer)->CurrentLeader(), std::nullopt);
  ASSERT_TRUE(ledger.WaitFor([](const std::vector<Ledger::Event>& e) { return e.size() == 2; }));
  EXPECT_EQ(ledger.events()[1].leadership, Leadership::kNotLeader);
  EXPECT_EQ(LeaderCount(c), 0);
  RemoveDirectory(path);
}

TEST_F(ElectionTest, TwentyForcedExpiriesOfTheLeaderNeverGiveTwoLeadersAndEpochsIncrease) {
  const std::string path = Path("expiry");
  constexpr int kCandidates = 5;
  constexpr int kRounds = 20;
  Ledger ledger;
  std::vector<std::unique_ptr<Candidate>> c = JoinInOrder(path, kCandidates, &ledger);
  ASSERT_EQ(c.size(), static_cast<size_t>(kCandidates));
  ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok());
  std::vector<int> order = {0, 1, 2, 3, 4};  // expected queue order
  int64_t last_epoch = c[0]->election->epoch();
  std::vector<int64_t> epochs = {last_epoch};

  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    const int old = order[0];
    const int next = order[1];
    Candidate& deposed = *c[old];
    const size_t mark = ledger.size();
    const uint64_t generation = deposed.session->generation();
    ASSERT_TRUE(testing::ExpireSession(*deposed.session).ok());

    // The next in the queue becomes leader...
    ASSERT_TRUE(c[next]->election->AwaitLeadership(absl::Seconds(30)).ok());
    // ...the deposed one hears of the expiry on its next request and is told.
    // (Asynchronous on purpose: a synchronous request issued while the
    // expiring handle is being closed can hang forever; see HearOfExpiry.)
    HearOfExpiry(*deposed.session, path);
    ASSERT_TRUE(ledger.WaitFor([&](const std::vector<Ledger::Event>& events) {
      for (size_t i = mark; i < events.size(); ++i) {
        if (events[i].who == old && events[i].leadership == Leadership::kNotLeader) return true;
      }
      return false;
    })) << "candidate " << old << " never reported NOT_LEADER";
    EXPECT_FALSE(deposed.election->IsLeader());
    // Forced expiry first closes the deposed leader's connection (the
    // server drops it when the killer attaches), and only then its session:
    // it must have been told SUSPENDED (stop acting as leader) before
    // NOT_LEADER, not learn it only at the loss. (Not necessarily right
    // before: if it re-attached in between, it may be told LEADER again and
    // then NOT_LEADER by its own node's deletion, while connected.)
    {
      std::vector<Ledger::Event> events = ledger.events();
      std::vector<Leadership> told;
      std::string sequence;
      for (size_t i = mark; i < events.size(); ++i) {
        if (events[i].who != old) continue;
        told.push_back(events[i].leadership);
        absl::StrAppend(&sequence, " ", LeadershipName(events[i].leadership));
      }
      const auto not_leader = std::find(told.begin(), told.end(), Leadership::kNotLeader);
      EXPECT_NE(std::find(told.begin(), not_leader, Leadership::kSuspended), not_leader)
          << "candidate " << old << " was told:" << sequence;
    }

    const int64_t epoch = c[next]->election->epoch();
    EXPECT_GT(epoch, last_epoch);
    last_epoch = epoch;
    epochs.push_back(epoch);

    // rejoin_after_loss: the deposed candidate queues again, at the back, on
    // its new session.
    order.erase(order.begin());
    order.push_back(old);
    std::vector<std::string> want;
    for (int i : order) want.push_back(c[i]->id);
    std::vector<QueueEntryInfo> queue =
        WaitForQueue(path, [&](const std::vector<QueueEntryInfo>& q) {
          return Ids(q) == want && deposed.session->generation() > generation &&
                 q.back().session_id == deposed.session->session_id();
        });
    ASSERT_EQ(Ids(queue), want);
    EXPECT_GT(deposed.session->generation(), generation);
    EXPECT_EQ(queue.back().session_id, deposed.session->session_id());
    EXPECT_TRUE(queue.front().holds);
    EXPECT_EQ(queue.front().czxid, epoch);
    EXPECT_EQ(LeaderCount(c), 1);
    EXPECT_TRUE(c[next]->election->IsLeader());
  }

  // Everybody leaves; nothing is left behind.
  for (auto& candidate : c) EXPECT_TRUE(candidate->LeaveAndSync().ok()) << candidate->id;
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_THAT(*children, ::testing::IsEmpty());

  // The ledger: one leadership at a time, epochs strictly increasing from
  // leader to leader.
  std::vector<Ledger::Interval> intervals = ledger.Intervals();
  EXPECT_GE(intervals.size(), static_cast<size_t>(kRounds + 1));
  ExpectNoOverlap(intervals);
  int64_t previous = 0;
  int previous_who = -1;
  for (const Ledger::Interval& interval : intervals) {
    if (interval.epoch == 0) continue;  // lost again before its report ran
    if (interval.who == previous_who && interval.epoch == previous) continue;  // re-attached
    EXPECT_GT(interval.epoch, previous) << "candidate " << interval.who;
    previous = interval.epoch;
    previous_who = interval.who;
  }
  for (size_t i = 1; i < epochs.size(); ++i) EXPECT_GT(epochs[i], epochs[i - 1]);
  RemoveDirectory(path);
}

TEST_F(ElectionTest, LeaderLeaveHandsOverToTheNextAndMisuseIsRefused) {
  const std::string path = Path("handover");
  Ledger ledger;
  std::vector<std::unique_ptr<Candidate>> c = JoinInOrder(path, 3, &ledger);
  ASSERT_EQ(c.size(), 3u);
  ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok());
  const int64_t first_epoch = c[0]->election->epoch();

  // Join twice: refused, and still one node for that candidate.
  absl::Status twice = c[1]->election->Join();
  EXPECT_TRUE(absl::IsFailedPrecondition(twice)) << twice;
  EXPECT_THAT(twice.message(), HasSubstr(path));
  // A follower's AwaitLeadership times out.
  absl::Status timed_out = c[2]->election->AwaitLeadership(absl::Milliseconds(200));
  EXPECT_TRUE(absl::IsDeadlineExceeded(timed_out)) << timed_out;
  EXPECT_THAT(timed_out.message(), HasSubstr(path));

  // The leader leaves: the next takes over, the one after it does not.
  ASSERT_TRUE(c[0]->LeaveAndSync().ok());
  EXPECT_FALSE(c[0]->election->IsLeader());
  EXPECT_FALSE(c[0]->election->joined());
  EXPECT_EQ(c[0]->election->epoch(), 0);
  ASSERT_TRUE(c[1]->election->AwaitLeadership(absl::Seconds(10)).ok());
  EXPECT_GT(c[1]->election->epoch(), first_epoch);
  EXPECT_FALSE(c[2]->election->IsLeader());
  EXPECT_EQ(LeaderCount(c), 1);

  // Leave twice / AwaitLeadership when not joined: refused.
  absl::Status again = c[0]->election->Leave();
  EXPECT_TRUE(absl::IsFailedPrecondition(again)) << again;
  absl::Status not_joined = c[0]->election->AwaitLeadership(absl::Milliseconds(10));
  EXPECT_TRUE(absl::IsFailedPrecondition(not_joined)) << not_joined;

  // Joining again queues at the back.
  ASSERT_TRUE(c[0]->election->Join().ok());
  std::vector<QueueEntryInfo> queue =
      WaitForQueue(path, [](const std::vector<QueueEntryInfo>& q) { return q.size() == 3; });
  EXPECT_THAT(Ids(queue), ElementsAre("candidate-1", "candidate-2", "candidate-0"));

  ASSERT_TRUE(ledger.WaitFor([](const std::vector<Ledger::Event>& events) {
    return events.size() >= 3;
  }));
  // Each candidate's own reports, in order (two dispatchers may interleave
  // c0's NOT_LEADER and c1's LEADER either way: ExpectNoOverlap bounds that).
  std::map<int, std::vector<Leadership>> told;
  for (const Ledger::Event& e : ledger.events()) told[e.who].push_back(e.leadership);
  EXPECT_EQ(told, (std::map<int, std::vector<Leadership>>{
                      {0, {Leadership::kLeader, Leadership::kNotLeader}},
                      {1, {Leadership::kLeader}}}));
  ExpectNoOverlap(ledger.Intervals());

  for (auto& candidate : c) EXPECT_TRUE(candidate->LeaveAndSync().ok());
  EXPECT_THAT(*admin().GetChildren(path), ::testing::IsEmpty());
  RemoveDirectory(path);
}

TEST_F(ElectionTest, BadInputAndMisuseAreRefusedAndLeaveNothingBehind) {
  for (const char* bad : {"", "rel", "/", "/a/", "/a//b"}) {
    absl::Status status = LeaderElection::Create(admin(), bad).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << "\"" << bad << "\": " << status;
    LeaderSelector::Options options;
    status = LeaderSelector::Create(admin(), bad, [](LeadershipContext&) {}, options).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << "\"" << bad << "\": " << status;
  }
  for (const char* bad_id : {"a\nb", "tab\there", "del\x7f", "\x01"}) {
    ElectionOptions options;
    options.id = bad_id;
    absl::Status status = LeaderElection::Create(admin(), Path("e"), options).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  }
  {
    LeaderSelector::Options options;
    EXPECT_TRUE(absl::IsInvalidArgument(
        LeaderSelector::Create(admin(), Path("e"), nullptr, options).status()));
  }

  // Never joined.
  auto idle = LeaderElection::Create(admin(), Path("idle"));
  ASSERT_TRUE(idle.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition((*idle)->Leave()));
  EXPECT_TRUE(absl::IsFailedPrecondition((*idle)->AwaitLeadership(absl::Milliseconds(10))));
  EXPECT_FALSE((*idle)->IsLeader());
  EXPECT_FALSE((*idle)->joined());
  EXPECT_EQ((*idle)->epoch(), 0);
  EXPECT_FALSE((*idle)->id().empty());  // defaults to "<host>_<pid>"
  // Observers on a queue that does not exist.
  auto nobody = (*idle)->CurrentLeader();
  ASSERT_TRUE(nobody.ok()) << nobody.status();
  EXPECT_EQ(*nobody, std::nullopt);
  auto none = (*idle)->Participants();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  // Join on a closed session.
  auto closed = NewSession();
  ASSERT_NE(closed, nullptr);
  auto on_closed = LeaderElection::Create(*closed, Path("closed"));
  ASSERT_TRUE(on_closed.ok());
  closed->Close();
  absl::Status status = (*on_closed)->Join();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("closed"));
  EXPECT_FALSE((*on_closed)->joined());
  on_closed->reset();

  auto left = admin().GetChildren(root());
  ASSERT_TRUE(left.ok());
  EXPECT_THAT(*left, ::testing::IsEmpty());
}

TEST_F(ElectionTest, SelectorsTakeTurnsOnTheirOwnThreadsAndATermEndsWhenItReturns) {
  const std::string path = Path("selectors");
  constexpr int kSelectors = 3;
  constexpr int kCheckedTerms = 3 * kSelectors;
  struct Term {
    int who;
    int64_t epoch;
    bool current;
    bool on_dispatcher;
    bool on_completion;
    bool on_test_thread;
    int other_leaders;
  };
  absl::Mutex mu;
  std::vector<Term> terms;  // guarded by mu
  std::atomic<int> inside{0};
  std::atomic<int> max_inside{0};
  absl::Notification go;
  const std::thread::id test_thread = std::this_thread::get_id();
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<LeaderSelector>> selectors(kSelectors);
  for (int i = 0; i < kSelectors; ++i) {
    sessions.push_back(NewSession());
    ASSERT_NE(sessions.back(), nullptr);
  }
  for (int i = 0; i < kSelectors; ++i) {
    LeaderSelector::Options options;
    options.election.id = absl::StrCat("selector-", i);
    auto take = [&, i](LeadershipContext& context) {
      const int now_inside = ++inside;
      int seen = max_inside.load();
      while (now_inside > seen && !max_inside.compare_exchange_weak(seen, now_inside)) {
      }
      Term term{i,
                context.epoch(),
                context.IsCurrent(),
                internal::CoreOf(*sessions[i])->dispatcher().OnDispatcherThread(),
                OnCompletionThread(),
                std::this_thread::get_id() == test_thread,
                0};
      for (int j = 0; j < kSelectors; ++j) {
        if (j != i && selectors[j]->election().IsLeader()) ++term.other_leaders;
      }
      go.WaitForNotificationWithTimeout(absl::Seconds(20));
      // Before ending the term, let the previous leader finish re-queueing
      // (it does so on its own thread after its term, racing with this one):
      // then the order of terms is fixed by the queue alone.
      bool checking;
      {
        absl::MutexLock lock(&mu);
        checking = terms.size() < static_cast<size_t>(kCheckedTerms);
      }
      for (int poll = 0; checking && poll < 2000; ++poll) {
        auto participants = selectors[i]->election().Participants();
        if (participants.ok() && participants->size() == static_cast<size_t>(kSelectors)) break;
        absl::SleepFor(absl::Milliseconds(2));
      }
      size_t index;
      {
        absl::MutexLock lock(&mu);
        index = terms.size();
        terms.push_back(term);
      }
      --inside;
      // Once enough terms were seen, hold on until stopped.
      if (index >= static_cast<size_t>(kCheckedTerms)) context.WaitWhileCurrent(absl::Seconds(30));
    };
    auto selector = LeaderSelector::Create(*sessions[i], path, take, options);
    ASSERT_TRUE(selector.ok()) << selector.status();
    selectors[i] = std::move(*selector);
  }
  // Start them one after the other so the queue order is 0, 1, 2; the first
  // term waits until all three are queued.
  for (int i = 0; i < kSelectors; ++i) {
    ASSERT_TRUE(selectors[i]->Start().ok());
    ASSERT_TRUE(WaitForQueueSize(path, i + 1));
  }
  EXPECT_TRUE(absl::IsFailedPrecondition(selectors[0]->Start()));
  go.Notify();
  {
    absl::MutexLock lock(&mu);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return terms.size() > static_cast<size_t>(kCheckedTerms);
    };
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(30)));
  }
  for (auto& selector : selectors) selector->Stop();

  absl::MutexLock lock(&mu);
  ASSERT_GT(terms.size(), static_cast<size_t>(kCheckedTerms));
  for (size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    SCOPED_TRACE(absl::StrCat("term ", k, " of selector ", t.who));
    EXPECT_FALSE(t.on_dispatcher);
    EXPECT_FALSE(t.on_completion);
    EXPECT_FALSE(t.on_test_thread);
    EXPECT_EQ(t.other_leaders, 0);
    if (k > 0) {
      EXPECT_GT(t.epoch, terms[k - 1].epoch);
    }
    // (A term that starts while the test is stopping may already be over.)
    if (k < static_cast<size_t>(kCheckedTerms)) {
      EXPECT_TRUE(t.current);
      // Round robin: 0, 1, 2, 0, 1, 2, ... (a finished leader re-queues at the back).
      EXPECT_EQ(t.who, static_cast<int>(k % kSelectors));
    }
  }
  EXPECT_EQ(max_inside.load(), 1);
  for (int i = 0; i < kSelectors; ++i) {
    EXPECT_GE(selectors[i]->terms(), 3) << i;
    EXPECT_FALSE(selectors[i]->election().joined()) << i;
  }
  // Stop() of a selector that was still queued returns before its node is
  // deleted (the deletion runs in the background), so wait for it, bounded.
  EXPECT_TRUE(WaitForQueueSize(path, 0)) << "a stopped selector left its node behind";
  RemoveDirectory(path);
}

TEST_F(ElectionTest, StopWhileInsideTakeLeadershipEndsTheTermAndReturns) {
  const std::string path = Path("stop");
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  absl::Notification inside, returned;
  bool still_current = true, current_after = true;
  absl::Duration waited;
  LeaderSelector::Options options;
  options.election.id = "stoppable";
  auto selector = LeaderSelector::Create(
      *session, path,
      [&](LeadershipContext& context) {
        inside.Notify();
        const absl::Time start = absl::Now();
        still_current = context.WaitWhileCurrent(absl::Seconds(60));
        waited = absl::Now() - start;
        current_after = context.IsCurrent();
        returned.Notify();
      },
      options);
  ASSERT_TRUE(selector.ok()) << selector.status();
  ASSERT_TRUE((*selector)->Start().ok());
  ASSERT_TRUE(inside.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE((*selector)->election().IsLeader());
  EXPECT_FALSE(returned.HasBeenNotified());
  ASSERT_EQ(*(*selector)->election().CurrentLeader(), std::optional<std::string>("stoppable"));

  absl::Notification stopped;
  std::thread stopper([&] {
    (*selector)->Stop();
    stopped.Notify();
  });
  EXPECT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(20))) << "Stop() hangs";
  stopper.join();
  EXPECT_TRUE(returned.HasBeenNotified());
  EXPECT_FALSE(still_current);
  EXPECT_FALSE(current_after);
  EXPECT_LT(waited, absl::Seconds(20));
  EXPECT_EQ((*selector)->terms(), 1);
  EXPECT_FALSE((*selector)->election().IsLeader());
  EXPECT_FALSE((*selector)->election().joined());
  (*selector)->Stop();  // idempotent
  EXPECT_TRUE(absl::IsFailedPrecondition((*selector)->Start()));
  EXPECT_THAT(*admin().GetChildren(path), ::testing::IsEmpty());
  selector->reset();
  RemoveDirectory(path);
}

TEST_F(ElectionTest, OperatorDeletingNodesDeposesTheLeaderAndBothVictimsQueueAgain) {
  const std::string path = Path("operator");
  Ledger ledger;
  std::vector<std::unique_ptr<Candidate>> c = JoinInOrder(path, 2, &ledger);
  ASSERT_EQ(c.size(), 2u);
  ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok());
  const int64_t first_epoch = c[0]->election->epoch();

  // The operator deletes the leader's node.
  std::vector<QueueEntryInfo> queue = *InspectQueue(admin(), path);
  ASSERT_EQ(queue.size(), 2u);
  ASSERT_TRUE(admin().Delete(path + "/" + queue[0].name).ok());
  ASSERT_TRUE(ledger.WaitFor([](const std::vector<Ledger::Event>& events) {
    for (const auto& e : events) {
      if (e.who == 0 && e.leadership == Leadership::kNotLeader) return true;
    }
    return false;
  })) << "the deposed leader was not told";
  ASSERT_TRUE(c[1]->election->AwaitLeadership(absl::Seconds(10)).ok());
  EXPECT_GT(c[1]->election->epoch(), first_epoch);
  // It queues again (rejoin_after_loss) behind the new leader, on the same session.
  queue = WaitForQueue(path, [](const std::vector<QueueEntryInfo>& q) {
    return Ids(q) == std::vector<std::string>{"candidate-1", "candidate-0"};
  });
  ASSERT_THAT(Ids(queue), ElementsAre("candidate-1", "candidate-0"));
  EXPECT_EQ(queue[1].session_id, c[0]->session->session_id());
  EXPECT_TRUE(c[0]->election->joined());
  EXPECT_FALSE(c[0]->election->IsLeader());
  EXPECT_EQ(LeaderCount(c), 1);

  // A follower's node deleted while it waits: it notices when its
  // predecessor goes, and (rejoin_after_loss) queues again instead of failing.
  c.push_back(NewCandidate(path, 2, &ledger));
  ASSERT_NE(c[2], nullptr);
  ASSERT_TRUE(c[2]->election->Join().ok());
  queue = WaitForQueue(path, [](const std::vector<QueueEntryInfo>& q) { return q.size() == 3; });
  ASSERT_THAT(Ids(queue), ElementsAre("candidate-1", "candidate-0", "candidate-2"));
  ASSERT_TRUE(admin().Delete(path + "/" + queue[1].name).ok());  // candidate-0, waiting
  const int64_t second_epoch = c[1]->election->epoch();
  ASSERT_TRUE(c[1]->LeaveAndSync().ok());
  ASSERT_TRUE(c[2]->election->AwaitLeadership(absl::Seconds(10)).ok());
  EXPECT_GT(c[2]->election->epoch(), second_epoch);
  queue = WaitForQueue(path, [](const std::vector<QueueEntryInfo>& q) {
    return Ids(q) == std::vector<std::string>{"candidate-2", "candidate-0"};
  });
  EXPECT_THAT(Ids(queue), ElementsAre("candidate-2", "candidate-0"));
  absl::Status waiting = c[0]->election->AwaitLeadership(absl::Milliseconds(100));
  EXPECT_TRUE(absl::IsDeadlineExceeded(waiting)) << waiting;
  EXPECT_TRUE(c[0]->election->joined());

  ExpectNoOverlap(ledger.Intervals());
  EXPECT_FALSE(c[1]->election->joined());
  EXPECT_TRUE(c[0]->LeaveAndSync().ok());
  EXPECT_TRUE(c[2]->LeaveAndSync().ok());
  EXPECT_THAT(*admin().GetChildren(path), ::testing::IsEmpty());
  RemoveDirectory(path);
}

}  // namespace
}  // namespace zkr

namespace zkr {
namespace {

TEST_F(ElectionTest, LeaveOfAQueuedCandidateReturnsOnlyOnceItsNodeIsGone) {
  const std::string path = Path("leave-queued");
  std::vector<std::unique_ptr<Candidate>> c = JoinInOrder(path, 2, nullptr);
  ASSERT_EQ(c.size(), 2u);
  ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok());
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(c[1]->election->Leave().ok());
    // Read from another session, right away: no ordering help from Leave's
    // own session; the node must already be gone.
    auto children = admin().GetChildren(path);
    ASSERT_TRUE(children.ok());
    ASSERT_EQ(children->size(), 1u) << "round " << round;
    ASSERT_TRUE(c[1]->election->Join().ok());
    ASSERT_TRUE(WaitForQueueSize(path, 2));
  }
  ASSERT_TRUE(c[1]->election->Leave().ok());
  ASSERT_TRUE(c[0]->election->Leave().ok());
  (void)admin().Delete(path);
}

// A leader stepping down posts its on_change(kNotLeader) only once its
// node's delete is on its way (ElectionCore::MoveTo's defer_notice): the
// notices must still come in order, none lost — a sole candidate that
// yields (it leads again at once) or leaves and joins again hears kLeader
// and kNotLeader strictly alternating. (The ledger's epochs are read when a
// callback runs, by then maybe a term later: not compared here.)
TEST_F(ElectionTest, ASoleCandidateSteppingDownHearsEveryChangeInOrder) {
  const std::string path = Path("sole-step-down");
  Ledger ledger;
  std::vector<std::unique_ptr<Candidate>> c = JoinInOrder(path, 1, &ledger);
  ASSERT_EQ(c.size(), 1u);
  ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok());
  constexpr int kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    if (round % 2 == 0) {
      ASSERT_TRUE(c[0]->election->Yield().ok()) << round;
    } else {
      ASSERT_TRUE(c[0]->election->Leave().ok()) << round;
      ASSERT_TRUE(c[0]->election->Join().ok()) << round;
    }
    ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok()) << round;
  }
  const size_t expected = 1 + 2 * kRounds;
  ASSERT_TRUE(ledger.WaitFor(
      [&](const std::vector<Ledger::Event>& e) { return e.size() >= expected; }));
  std::vector<Ledger::Event> events = ledger.events();
  ASSERT_EQ(events.size(), expected);
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].leadership, i % 2 == 0 ? Leadership::kLeader : Leadership::kNotLeader)
        << i;
  }
  ASSERT_TRUE(c[0]->election->Leave().ok());
  RemoveDirectory(path);
}

}  // namespace
}  // namespace zkr
