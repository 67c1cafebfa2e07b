// An election's life cycle against a real server: a selector whose leader's
// lease lapsed, Stop() and destruction from inside the term, Leave() racing
// the win, AwaitLeadership() when the candidacy can no longer succeed, the
// take-over mark sent again, concurrent joins and leaves. (Each test failed
// before its fix in the issue "hardening the library".)
#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "tests/support/directory_check.h"
#include "tests/support/fake_clock.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/status.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace {

using ::testing::IsEmpty;
using testing::ZkTest;
using testing::Eventually;
using testing::Ready;

class ElectionLifecycleTest : public ZkTest {
 protected:
  std::unique_ptr<LeaderElection> NewElection(Session& session, const std::string& path,
                                              ElectionOptions options = {}) {
    auto election = LeaderElection::Create(session, path, std::move(options));
    EXPECT_TRUE(election.ok()) << election.status();
    return election.ok() ? std::move(*election) : nullptr;
  }
  std::vector<std::string> Children(const std::string& path) {
    auto children = admin().GetChildren(path);
    return children.ok() ? *children : std::vector<std::string>();
  }
};

// Item 7: a leader whose lease has lapsed (as after a process pause) is not
// leader until the lease is renewed; AwaitLeadership waits for that instead
// of failing, so a selector's thread never ends while its node leads.
TEST_F(ElectionLifecycleTest, ALapsedLeaseMakesAwaitLeadershipWaitForRenewalNotFail) {
  auto clock = std::make_shared<testing::FakeClock>();
  SessionOptions options = Options();
  options.clock = clock;
  auto session = NewSession(options);
  const std::string path = Path("lapsed");
  auto election = NewElection(*session, path);
  ASSERT_TRUE(election->Join().ok());
  ASSERT_TRUE(election->AwaitLeadership(absl::Seconds(10)).ok());
  // A pause: monotonic time jumps past the lease; no event says so.
  clock->AdvanceMonotonic(absl::Seconds(60));
  EXPECT_FALSE(election->IsLeader());
  // The next heartbeat (within a third of the timeout) renews the lease.
  absl::Status status = election->AwaitLeadership(absl::Seconds(20));
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(election->IsLeader());
  ASSERT_TRUE(election->Leave().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Item 8: Stop() from inside take_leadership ends the term and the
// selector, without the thread joining itself.
TEST_F(ElectionLifecycleTest, StopFromInsideTakeLeadershipDoesNotKillTheProcess) {
  const std::string path = Path("stop-inside");
  std::unique_ptr<LeaderSelector> selector;
  absl::Notification term_over;
  LeaderSelector::Options options;
  auto created = LeaderSelector::Create(
      admin(), path,
      [&](LeadershipContext&) {
        selector->Stop();
        term_over.Notify();
      },
      options);
  ASSERT_TRUE(created.ok()) << created.status();
  selector = std::move(*created);
  ASSERT_TRUE(selector->Start().ok());
  ASSERT_TRUE(term_over.WaitForNotificationWithTimeout(absl::Seconds(20)));
  selector->Stop();  // from the test thread too: joins the finished thread
  EXPECT_EQ(selector->terms(), 1);
  EXPECT_FALSE(selector->election().joined());
  EXPECT_THAT(Children(path), IsEmpty());
  selector.reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Issue 31, item 18: destroying the selector from inside take_leadership
// (its own thread) leaves the election before the destructor returns, and
// the thread then touches nothing of the destroyed selector, nor of the
// session: it finishes the term on state it owns. Under AddressSanitizer the
// old code reported a heap use after free (the std::function being run was
// freed under it, and Run() read the freed object's members).
TEST_F(ElectionLifecycleTest, DestroyingTheSelectorFromInsideTakeLeadershipIsSafe) {
  const std::string path = Path("destroy-inside");
  auto session = NewSession();
  std::unique_ptr<LeaderSelector> selector;
  absl::Notification destroyed;
  // Notified when take_leadership (and its captures) is destroyed: once the
  // selector's thread is done with it.
  struct OnRelease {
    std::shared_ptr<absl::Notification> released = std::make_shared<absl::Notification>();
    ~OnRelease() { released->Notify(); }
  };
  auto token = std::make_shared<OnRelease>();
  std::shared_ptr<absl::Notification> released = token->released;
  LeaderSelector::Options options;
  auto created = LeaderSelector::Create(
      *session, path,
      [&selector, &destroyed, token = std::move(token)](LeadershipContext&) {
        selector.reset();      // from the selector's own thread
        destroyed.Notify();    // the closure must still be alive here
      },
      options);
  ASSERT_TRUE(created.ok()) << created.status();
  selector = std::move(*created);
  ASSERT_TRUE(selector->Start().ok());
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_THAT(Children(path), IsEmpty()) << "the candidate's node outlived the destructor";
  // The session may go as soon as the selector has.
  session->Close();
  session.reset();
  EXPECT_TRUE(released->WaitForNotificationWithTimeout(absl::Seconds(20)))
      << "the selector's thread never finished the term";
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Issue 31, searched for the same class of defect: Stop() is idempotent,
// also from two threads at once while a term runs — each returns once the
// term has, and the thread is joined once (twice was a crash).
TEST_F(ElectionLifecycleTest, TwoConcurrentStopsBothReturn) {
  const std::string path = Path("two-stops");
  absl::Notification leading;
  LeaderSelector::Options options;
  auto selector = LeaderSelector::Create(
      admin(), path,
      [&](LeadershipContext& context) {
        leading.Notify();
        context.WaitWhileCurrent(absl::InfiniteDuration());
      },
      options);
  ASSERT_TRUE(selector.ok()) << selector.status();
  ASSERT_TRUE((*selector)->Start().ok());
  ASSERT_TRUE(leading.WaitForNotificationWithTimeout(absl::Seconds(20)));
  std::thread other([&] { (*selector)->Stop(); });
  (*selector)->Stop();
  other.join();
  EXPECT_EQ((*selector)->terms(), 1);
  EXPECT_THAT(Children(path), IsEmpty());
  selector->reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Item 9: Leave() racing the candidate's own win returns and deletes the
// node, whichever side wins the race.
TEST_F(ElectionLifecycleTest, LeaveRacingTheWinReturnsAndLeavesNoNode) {
  const std::string path = Path("leave-race");
  auto a_session = NewSession();
  auto b_session = NewSession();
  for (int i = 0; i < 300; ++i) {
    auto a = NewElection(*a_session, path);
    auto b = NewElection(*b_session, path);
    ASSERT_TRUE(a->Join().ok());
    ASSERT_TRUE(a->AwaitLeadership(absl::Seconds(10)).ok());
    ASSERT_TRUE(b->Join().ok());
    for (int spin = 0; spin < 2000 && Children(path).size() < 2; ++spin) {
      absl::SleepFor(absl::Microseconds(200));  // until B is queued
    }
    absl::Notification b_left;
    std::thread leaver([&] {
      (void)b->Leave();
      b_left.Notify();
    });
    ASSERT_TRUE(a->Leave().ok());
    const bool returned = b_left.WaitForNotificationWithTimeout(absl::Seconds(20));
    if (!returned) {
      ADD_FAILURE() << "B's Leave() hung in round " << i;
      leaver.detach();
      return;
    }
    leaver.join();
    ASSERT_THAT(Children(path), IsEmpty()) << "round " << i << ": B's node outlived Leave()";
  }
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Item 10: once the candidacy can never succeed, AwaitLeadership returns at
// once and joined() says false: after Close() (queued and leading alike),
// and after the session expired without rejoin_after_loss.
TEST_F(ElectionLifecycleTest, AwaitLeadershipReturnsWhenTheSessionCloses) {
  const std::string path = Path("closed");
  auto leader_session = NewSession();
  auto leader = NewElection(*leader_session, path);
  ASSERT_TRUE(leader->Join().ok());
  ASSERT_TRUE(leader->AwaitLeadership(absl::Seconds(10)).ok());
  auto queued_session = NewSession();
  auto queued = NewElection(*queued_session, path);
  ASSERT_TRUE(queued->Join().ok());

  absl::Notification returned;
  absl::Status status;
  std::thread waiter([&] {
    status = queued->AwaitLeadership();
    returned.Notify();
  });
  queued_session->Close();
  EXPECT_TRUE(returned.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "AwaitLeadership kept waiting on a closed session";
  if (!returned.HasBeenNotified()) {
    waiter.detach();
    return;
  }
  waiter.join();
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_FALSE(queued->joined());

  leader_session->Close();
  status = leader->AwaitLeadership(absl::Seconds(10));
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_FALSE(leader->joined());
  queued.reset();
  leader.reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

TEST_F(ElectionLifecycleTest, WithoutRejoinAwaitLeadershipReportsTheLostSession) {
  const std::string path = Path("expired");
  auto session = NewSession();
  ElectionOptions options;
  options.rejoin_after_loss = false;
  auto leader = NewElection(*session, path, options);
  ASSERT_TRUE(leader->Join().ok());
  ASSERT_TRUE(leader->AwaitLeadership(absl::Seconds(10)).ok());
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  (void)session->Exists(root());  // hear of it
  absl::Status status = leader->AwaitLeadership(absl::Seconds(15));
  // The expiry deletes the node: which the candidate hears of first (its
  // own-node watch, or the session's EXPIRED) decides the message; both are
  // Aborted ("start again").
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_FALSE(leader->joined());
  leader.reset();
  (void)admin().Delete(path);
}

// The chaos soak's crash: after a pause past its timeout, the session's
// handle is expired before the session has heard so, and the C client
// refuses every request on it at once ("invalid zhandle state"): a session
// loss. A candidate that rejoined at once on that loss was refused again, on
// the same thread, without end, until the stack overflowed. It must wait for
// the next session instead, and join on it.
TEST_F(ElectionLifecycleTest, ACandidateRefusedByAnExpiredHandleWaitsForTheNextSession) {
  const std::string path = Path("refused");
  auto first = NewElection(admin(), path);
  ASSERT_TRUE(first->Join().ok());
  ASSERT_TRUE(first->AwaitLeadership(absl::Seconds(10)).ok());

  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  // Every create under the election is refused as an expired handle refuses it.
  testing::FaultRule refused;
  refused.call = testing::FaultRule::Call::kCreate;
  refused.effect = testing::FaultRule::Effect::kLoseRequest;
  refused.path_prefix = path + "/";
  refused.count = 1000000;
  refused.reply_code = -9;  // ZINVALIDSTATE
  faults->Add(refused);
  auto candidate = NewElection(*session, path);
  ASSERT_TRUE(candidate->Join().ok());
  // One try on this session, then it waits for the next one.
  ASSERT_TRUE(Eventually([&] { return faults->Calls(testing::FaultRule::Call::kCreate, path + "/") >= 1; }));
  EXPECT_LE(faults->Calls(testing::FaultRule::Call::kCreate, path + "/"), 2);

  // The handle's expiry reaches the session: on the next one, it queues.
  faults->Clear();
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  (void)session->Exists(root());  // hears of it
  ASSERT_TRUE(Eventually([&] { return Children(path).size() == 2; }, absl::Seconds(20)))
      << absl::StrJoin(Children(path), ", ");
  EXPECT_TRUE(first->IsLeader());
  candidate.reset();
  first.reset();
  (void)admin().Delete(path);
}

class ElectionProxiedTest : public testing::ProxiedZkTest {};

// Issue 31, item 22: the new leader's take-over mark is applied but its reply
// is lost, so the mark is sent again; meanwhile the leader has published
// newer data with SetData. The mark sent again must not put the old data
// back. Slow round trips make SetData reach the server between the mark and
// its retry. Before, the node ended with the old data ("old").
TEST_F(ElectionProxiedTest, ATakeOverMarkSentAgainNeverOverwritesNewerData) {
  const std::string path = Path("mark-after-set");
  auto leader = LeaderElection::Create(admin(), path);
  ASSERT_TRUE(leader.ok());
  ASSERT_TRUE((*leader)->Join().ok());
  ASSERT_TRUE((*leader)->AwaitLeadership(absl::Seconds(10)).ok());
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = testing::ConnectWithFaults(ProxiedOptions(), faults);
  ASSERT_TRUE(session.ok()) << session.status();
  ElectionOptions options;
  options.id = "candidate";
  options.data = "old";
  auto candidate = LeaderElection::Create(**session, path, options);
  ASSERT_TRUE(candidate.ok());
  // The candidate's first write to its node is the mark: its reply is lost.
  faults->Add({testing::FaultRule::Call::kSet, testing::FaultRule::Effect::kDropReply,
               path + "/", 1});
  ASSERT_TRUE((*candidate)->Join().ok());
  proxy_->SetDelay(absl::Milliseconds(300));
  ASSERT_TRUE((*leader)->Leave().ok());
  ASSERT_TRUE((*candidate)->AwaitLeadership(absl::Seconds(30)).ok());
  for (int i = 0; i < 10000 && !faults->UsedUp(); ++i) {
    absl::SleepFor(absl::Milliseconds(1));  // until the mark is sent
  }
  ASSERT_TRUE(faults->UsedUp()) << "no mark was sent";
  ASSERT_TRUE((*candidate)->SetData("new").ok());
  ASSERT_TRUE((*session)->Exists(path).ok());  // every write sent before has landed
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok() && children->size() == 1);
  Stat stat;
  auto data = admin().Get(path + "/" + children->front(), &stat);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(*data, "candidate\nnew") << "a write sent again restored older data";
  proxy_->SetDelay(absl::ZeroDuration());
  ASSERT_TRUE((*candidate)->Leave().ok());
  candidate->reset();
  leader->reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Issue 31, item 22: the mark is sent outside the candidate's mutex, so a
// completion that runs inline (a request refused at once) may call back into
// the candidate. Here the mark is lost three times; it is sent again until
// it lands, and the leader's node shows it (version > 0).
TEST_F(ElectionLifecycleTest, ATakeOverMarkLostAtOnceIsSentAgainUntilItLands) {
  const std::string path = Path("mark-lost");
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  faults->Add({testing::FaultRule::Call::kSet, testing::FaultRule::Effect::kLoseRequest,
               path + "/", 3});
  auto election = NewElection(*session, path);
  ASSERT_TRUE(election->Join().ok());
  ASSERT_TRUE(election->AwaitLeadership(absl::Seconds(10)).ok());
  auto children = admin().GetChildren(path);
  ASSERT_TRUE(children.ok() && children->size() == 1);
  Stat stat;
  for (int i = 0; i < 1000 && stat.version == 0; ++i) {
    ASSERT_TRUE(admin().Get(path + "/" + children->front(), &stat).ok());
    if (stat.version == 0) absl::SleepFor(absl::Milliseconds(10));  // polling the server
  }
  EXPECT_EQ(stat.version, 1) << "the mark did not land (or landed more than once)";
  EXPECT_TRUE(faults->UsedUp());
  ASSERT_TRUE(election->Leave().ok());
  election.reset();
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Issue 31, searched for the same class of defect (a state read outside the
// lock that records it): Join() marks the candidacy queued, then queues a
// node outside the lock. A Leave() and a second Join() in between each
// queued one too; the later writer replaced the other's entry, whose node
// stayed on the server: a phantom candidate that may lead. Concurrent Join()
// and Leave() calls leave no node behind. (Failed 2 of 3 runs before.)
// It then still failed about 1 run in 20 through the queue engine:
// QueueEntry::Start/GoTo record the create step under the entry's lock and
// send the create after; an Abandon() in between (a Leave() on another
// thread) cleaned up with a listing that reached the server before the
// create, found nothing, and the create then made a node nobody owned. The
// engine now leaves that cleaning to the sender, after the create.
TEST_F(ElectionLifecycleTest, ConcurrentJoinsAndLeavesLeaveNoPhantomCandidate) {
  const std::string path = Path("join-leave");
  auto session = NewSession();
  auto election = NewElection(*session, path);
  auto churn = [&] {
    for (int i = 0; i < 300; ++i) {
      (void)election->Join();
      (void)election->Leave();
    }
  };
  std::thread a(churn);
  std::thread b(churn);
  a.join();
  b.join();
  (void)election->Leave();
  EXPECT_FALSE(election->joined());
  EXPECT_THAT(Children(path), IsEmpty()) << "a candidate node outlived Leave()";
  election.reset();
  EXPECT_THAT(Children(path), IsEmpty()) << "a candidate node outlived the election";
  session.reset();
  (void)testing::DeleteRecursively(admin(), path);
}

// Each test checks that no node is left in a directory under its root.
using ElectionEdgeTest = testing::DirectoryCheckedTest<ZkTest>;
// Each test checks that no node is left in a directory under its root.
using ElectionEdgeProxiedTest = testing::DirectoryCheckedTest<testing::ProxiedZkTest>;

// Non-candidate children in the election directory: the candidate still
// leads (or waits) without a busy loop of listings.
TEST_F(ElectionEdgeTest, NonCandidateChildrenNoBusyLoop) {
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

TEST_F(ElectionEdgeProxiedTest, NeverTwoLeadersAcrossPartition) {
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
TEST_F(ElectionEdgeTest, SetDataAfterTakeOver) {
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
TEST_F(ElectionEdgeTest, SelectorDestroyedInsideTakeLeadership) {
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

// LeaveAndHandOver with no other candidate: DeadlineExceeded, bounded, left.
TEST_F(ElectionEdgeTest, LeaveAndHandOverAlone) {
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
TEST_F(ElectionEdgeTest, DestroyedInsideOnChange) {
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

}  // namespace
}  // namespace zkr
