// An independent adversarial review (helper-46) of zkrecipes as a new user
// meets it: group membership, leader observers, the semaphore with weights,
// the std-mutex adapter, Inspect's FindQueuesBelow, the double barrier's
// bad input, and zkr's CMD status for barrier, group and elect. Each test
// names the promise it attacks. Waits are on observable conditions;
// durations only bound hangs.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/directory_check.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/std_lock.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace {

using testing::DirectoryCheckedTest;
using testing::Eventually;
using testing::ZkTest;

class Review46Test : public DirectoryCheckedTest<ZkTest> {};
class Review46ProxiedTest : public DirectoryCheckedTest<testing::ProxiedZkTest> {};

// ---- Inspect: FindQueuesBelow's depth ---------------------------------------------

// Promise (inspect.h): "the queues below it ... at most `depth` levels
// down". A queue four levels down; asked with depth -1 (a bad value) the
// answer must be a refusal naming it or nothing — never a search without
// any bound.
TEST_F(Review46Test, FindQueuesBelowNeverSearchesDeeperThanItsDepth) {
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  const std::string deep = Path("a/b/c/lock");  // 4 levels below root()
  auto lock = ExclusiveLock::Create(*session, deep);
  ASSERT_TRUE(lock.ok()) << lock.status();
  auto held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();

  auto found4 = FindQueuesBelow(*session, root(), 4);
  ASSERT_TRUE(found4.ok()) << found4.status();
  EXPECT_EQ(*found4, std::vector<std::string>{deep});  // the queue is there
  auto found3 = FindQueuesBelow(*session, root(), 3);
  ASSERT_TRUE(found3.ok()) << found3.status();
  EXPECT_TRUE(found3->empty()) << absl::StrJoin(*found3, ", ");  // too deep for 3
  auto found0 = FindQueuesBelow(*session, root(), 0);
  ASSERT_TRUE(found0.ok()) << found0.status();
  EXPECT_TRUE(found0->empty()) << absl::StrJoin(*found0, ", ");

  auto negative = FindQueuesBelow(*session, root(), -1);
  if (negative.ok()) {
    EXPECT_TRUE(negative->empty())
        << "depth -1 searched " << absl::StrJoin(*negative, ", ")
        << ": deeper than 3 levels, deeper than 0";
  } else {
    EXPECT_TRUE(absl::IsInvalidArgument(negative.status())) << negative.status();
    EXPECT_TRUE(absl::StrContains(negative.status().message(), "-1")) << negative.status();
  }
  ASSERT_TRUE(held->Release().ok());
  (void)testing::DeleteRecursively(admin(), Path("a"));
}

// Promise (inspect.h): FindQueuesBelow returned "the queues below it ... as
// full paths in name order" (its code: "the result comes out sorted"). Two
// queues whose full paths sort one way byte-wise ("a-x" < "a/q": '-' is
// 0x2d, '/' 0x2f) and the other way component by component: the walk gave
// the second. The header now promises that tree order (depth first, each
// directory's children by name), which a listing of a tree wants; this
// checks it.
TEST_F(Review46Test, FindQueuesBelowReturnsFullPathsInTreeOrder) {
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  std::vector<std::unique_ptr<ExclusiveLock>> locks;
  std::vector<LockGuard> guards;
  for (const char* q : {"a/q", "a-x"}) {
    auto lock = ExclusiveLock::Create(*session, Path(q));
    ASSERT_TRUE(lock.ok()) << lock.status();
    auto held = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held.ok()) << held.status();
    guards.push_back(*std::move(held));
    locks.push_back(std::move(*lock));
  }
  auto found = FindQueuesBelow(*session, root(), 3);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, (std::vector<std::string>{Path("a/q"), Path("a-x")}))
      << "not in tree order: " << absl::StrJoin(*found, ", ");
  for (LockGuard& g : guards) ASSERT_TRUE(g.Release().ok());
  (void)testing::DeleteRecursively(admin(), Path("a"));
}

// ---- barriers across a server restart ------------------------------------------------

// Promise (barrier.h): "Waiters watch the barrier node"; Wait returns once
// the node is removed; DoubleBarrier "all are released together once
// `count` have entered". The server stops and starts again (its sessions
// survive: they reconnect within their timeout) between the Set and the
// Remove, and between the two members' Enter.
// A server of the test's own (restarted, or reaping containers quickly),
// started with `server_options` and reached with `session_timeout` (none:
// the fixture's default).
class Review46OwnServerTest : public ZkTest {
 protected:
  Review46OwnServerTest(testing::ServerOptions server_options,
                        std::optional<absl::Duration> session_timeout)
      : server_options_(server_options), session_timeout_(session_timeout) {}
  void SetUp() override {
    ZkTest::SetUp();
    auto server = testing::ZooKeeperServer::Start(server_options_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  void TearDown() override {
    server_.reset();
    ZkTest::TearDown();
  }
  std::unique_ptr<Session> Connect() {
    SessionOptions options = Options();
    options.connect = server_->connect_string();
    if (session_timeout_.has_value()) options.session_timeout = *session_timeout_;
    options.log_sink = [](absl::string_view) {};
    auto session = Session::Connect(options);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }
  const testing::ServerOptions server_options_;
  const std::optional<absl::Duration> session_timeout_;
  std::unique_ptr<testing::ZooKeeperServer> server_;
};

class Review46RestartTest : public Review46OwnServerTest {
 protected:
  Review46RestartTest() : Review46OwnServerTest(testing::ServerOptions(), absl::Seconds(20)) {}
};

TEST_F(Review46RestartTest, BarrierWaitersAndDoubleBarrierMembersPassAcrossARestart) {
  auto setter = Connect();
  auto waiter = Connect();
  auto m1 = Connect();
  auto m2 = Connect();
  ASSERT_TRUE(setter && waiter && m1 && m2);
  auto gate = Barrier::Create(*setter, "/r46/gate");
  ASSERT_TRUE(gate.ok());
  ASSERT_TRUE((*gate)->Set().ok());
  auto wait_gate = Barrier::Create(*waiter, "/r46/gate");
  ASSERT_TRUE(wait_gate.ok());
  auto waited = std::async(std::launch::async, [&] { return (*wait_gate)->Wait(absl::Seconds(60)); });

  auto b1 = DoubleBarrier::Create(*m1, "/r46/round", "one", 2);
  auto b2 = DoubleBarrier::Create(*m2, "/r46/round", "two", 2);
  ASSERT_TRUE(b1.ok() && b2.ok());
  auto entered1 = std::async(std::launch::async, [&] { return (*b1)->Enter(absl::Seconds(60)); });
  ASSERT_TRUE(testing::AwaitChildCount(*setter, "/r46/round", 1));
  // Both wait now (nobody passes early).
  EXPECT_EQ(waited.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  EXPECT_EQ(entered1.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);

  ASSERT_TRUE(server_->Stop().ok());
  ASSERT_TRUE(server_->Restart().ok());
  const int64_t id = m1->session_id();
  for (Session* s : {setter.get(), waiter.get(), m1.get()}) {
    ASSERT_TRUE(Eventually([&] { return s->state() == SessionState::kReconnected; },
                           absl::Seconds(30)))
        << SessionStateName(s->state());
  }
  EXPECT_EQ(waited.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "the barrier wait returned though nobody removed the barrier";
  EXPECT_EQ(entered1.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "a double barrier member passed with 1 of 2 entered";

  ASSERT_TRUE((*gate)->Remove().ok());
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the barrier waiter never heard the removal after the restart";
  EXPECT_TRUE(waited.get().ok());
  auto entered2 = std::async(std::launch::async, [&] { return (*b2)->Enter(absl::Seconds(60)); });
  ASSERT_EQ(entered2.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  ASSERT_EQ(entered1.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the first member never passed after the second entered";
  EXPECT_TRUE(entered1.get().ok());
  EXPECT_TRUE(entered2.get().ok());
  EXPECT_EQ(m1->session_id(), id);
  auto left1 = std::async(std::launch::async, [&] { return (*b1)->Leave(absl::Seconds(30)); });
  EXPECT_TRUE((*b2)->Leave(absl::Seconds(30)).ok());
  EXPECT_TRUE(left1.get().ok());
  auto kids = setter->GetChildren("/r46/round");
  EXPECT_TRUE(!kids.ok() || kids->empty()) << (kids.ok() ? absl::StrJoin(*kids, ", ") : "");
}

// ---- group membership and observers on a server that reaps containers ----------

// A private server that deletes empty container nodes every 100 ms (as a
// production server does every minute): group and election directories
// vanish once their last member leaves.
class Review46ReapingTest : public Review46OwnServerTest {
 protected:
  Review46ReapingTest() : Review46OwnServerTest(Reaping(), std::nullopt) {}
  static testing::ServerOptions Reaping() {
    testing::ServerOptions options;
    options.container_check_interval = absl::Milliseconds(100);
    return options;
  }
  bool Gone(Session& session, const std::string& path) {
    return Eventually([&] {
      auto stat = session.Exists(path);
      return stat.ok() && !stat->has_value();
    }, absl::Seconds(15));
  }
};

// Promise (group_member.h): GroupWatch "after every change of membership (a
// join or a leave), reads the members and calls on_change once with the
// full list". The group's directory is a container: after the last member
// leaves, the server deletes it; a later join makes it again. The watch
// must hear that join.
TEST_F(Review46ReapingTest, GroupWatchHearsAJoinAfterItsDirectoryWasReaped) {
  auto watcher = Connect();
  auto a_session = Connect();
  auto b_session = Connect();
  ASSERT_TRUE(watcher && a_session && b_session);
  const std::string group = "/services/r46-workers";
  absl::Mutex mu;
  std::vector<std::vector<std::string>> lists;
  auto watch = GroupWatch::Create(*watcher, group, [&](const std::vector<GroupMemberInfo>& m) {
    std::vector<std::string> ids;
    for (const auto& member : m) ids.push_back(member.id);
    absl::MutexLock lock(&mu);
    lists.push_back(ids);
  });
  ASSERT_TRUE(watch.ok()) << watch.status();
  auto last_is = [&](std::vector<std::string> want) {
    return Eventually([&] {
      absl::MutexLock lock(&mu);
      return !lists.empty() && lists.back() == want;
    }, absl::Seconds(15));
  };
  GroupOptions a_options;
  a_options.id = "a";
  auto a = GroupMember::Create(*a_session, group, a_options);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE((*a)->Join().ok());
  ASSERT_TRUE(last_is({"a"}));
  ASSERT_TRUE((*a)->Leave().ok());
  ASSERT_TRUE(last_is({}));
  ASSERT_TRUE(Gone(*watcher, group)) << "the server never reaped " << group;

  GroupOptions b_options;
  b_options.id = "b";
  auto b = GroupMember::Create(*b_session, group, b_options);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE((*b)->Join().ok());
  auto direct = ListGroup(*watcher, group);
  ASSERT_TRUE(direct.ok() && direct->size() == 1u);
  EXPECT_TRUE(last_is({"b"})) << "the watch never reported b's join after the directory was "
                                 "reaped and made again";
  ASSERT_TRUE((*b)->Leave().ok());
  EXPECT_TRUE(last_is({}));
  watch->reset();
}

// Promise (leader_observer.h): "while nobody campaigns, the election
// directory's children (the next candidate to join leads)" are watched;
// the observer follows the leader. The directory is a container reaped once
// the last candidate leaves; the next candidate makes it again and leads.
TEST_F(Review46ReapingTest, LeaderObserverFollowsTheNextLeaderAfterTheDirectoryWasReaped) {
  auto observer_session = Connect();
  auto a_session = Connect();
  auto b_session = Connect();
  ASSERT_TRUE(observer_session && a_session && b_session);
  const std::string path = "/services/r46-leader";
  auto observer = LeaderObserver::Create(*observer_session, path);
  ASSERT_TRUE(observer.ok()) << observer.status();
  auto first = (*observer)->Current(absl::Seconds(10));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->has_value());

  ElectionOptions a_options;
  a_options.id = "a";
  auto a = LeaderElection::Create(*a_session, path, a_options);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE((*a)->Join().ok());
  ASSERT_TRUE((*a)->AwaitLeadership(absl::Seconds(10)).ok());
  ASSERT_TRUE(Eventually([&] {
    auto l = (*observer)->leader();
    return l.has_value() && l->id == "a" && l->taken_over;
  }, absl::Seconds(15)));
  ASSERT_TRUE((*a)->Leave().ok());
  ASSERT_TRUE(Eventually([&] { return !(*observer)->leader().has_value(); }, absl::Seconds(15)));
  ASSERT_TRUE(Gone(*observer_session, path)) << "the server never reaped " << path;

  ElectionOptions b_options;
  b_options.id = "b";
  auto b = LeaderElection::Create(*b_session, path, b_options);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE((*b)->Join().ok());
  ASSERT_TRUE((*b)->AwaitLeadership(absl::Seconds(10)).ok());
  EXPECT_TRUE(Eventually([&] {
    auto l = (*observer)->leader();
    return l.has_value() && l->id == "b";
  }, absl::Seconds(15))) << "the observer never saw b lead after the directory was reaped";
  ASSERT_TRUE((*b)->Leave().ok());
}

// ---- the semaphore with weights -------------------------------------------------

// Promise (semaphore.h): "a participant holds when the leases asked by
// everyone queued before it, plus its own k, fit in N"; "a release wakes
// only the waiter it lets in, and that waiter's acquisition wakes only the
// next one"; README: "every waiter is woken when it may". N = 4: a holder
// of 3; waiters of 2, 2, 1 in that order. The middle waiter gives up; then
// the holder releases: the first waiter (2) gets in, and so must the last
// (1): 2 + 1 fit in 4.
TEST_F(Review46Test, WeightedWaitersAfterAMiddleWaiterGivesUpAreAllLetIn) {
  const std::string path = Path("pool");
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<Semaphore>> sems;
  for (int i = 0; i < 4; ++i) {
    sessions.push_back(NewSession());
    ASSERT_NE(sessions.back(), nullptr);
    auto s = Semaphore::Create(*sessions.back(), path, 4);
    ASSERT_TRUE(s.ok()) << s.status();
    sems.push_back(std::move(*s));
  }
  auto holder = sems[0]->Acquire(3, absl::Seconds(10));
  ASSERT_TRUE(holder.ok()) << holder.status();
  auto children = [&] {
    auto c = admin().GetChildren(path);
    return c.ok() ? c->size() : 0u;
  };
  auto w1 = sems[1]->AcquireFuture(2);
  ASSERT_TRUE(Eventually([&] { return children() == 2; }));
  auto w2 = sems[2]->AcquireFuture(2);
  ASSERT_TRUE(Eventually([&] { return children() == 3; }));
  auto w3 = sems[3]->AcquireFuture(1);
  ASSERT_TRUE(Eventually([&] { return children() == 4; }));
  EXPECT_EQ(w1.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  EXPECT_EQ(w3.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);

  sems[2]->Cancel();
  ASSERT_EQ(w2.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto cancelled = w2.get();
  EXPECT_TRUE(absl::IsCancelled(cancelled.status())) << cancelled.status();
  ASSERT_TRUE(Eventually([&] { return children() == 3; }));
  // Still 3 in use: 3 + 2 > 4 for the first waiter, and the last may not
  // pass it.
  EXPECT_EQ(w1.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  EXPECT_EQ(w3.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);

  ASSERT_TRUE(holder->Release().ok());
  ASSERT_EQ(w1.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "the first waiter (2 of 4) was never let in after the holder of 3 released";
  auto g1 = w1.get();
  ASSERT_TRUE(g1.ok()) << g1.status();
  ASSERT_EQ(w3.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "the last waiter (1 of 4) was never let in though 2 + 1 fit in 4";
  auto g3 = w3.get();
  ASSERT_TRUE(g3.ok()) << g3.status();
  EXPECT_EQ(g1->state(), LockState::kHeld);
  EXPECT_EQ(g3->state(), LockState::kHeld);
  ASSERT_TRUE(g1->Release().ok());
  ASSERT_TRUE(g3->Release().ok());
}

// ---- the std-mutex adapter ----------------------------------------------------------

// Promise (std_lock.h): lock_shared() returns only holding — "Returning from
// lock() without the lock would let the caller run unprotected, the one
// outcome a lock must never allow" — and a hold that is SUSPENDED "may
// already be lost" (lock_guard.h). A second local reader joins the read
// hold while the connection is down; the partition lasts until the server
// expires the session and a writer elsewhere takes the lock. The reader that
// lock_shared() let in while cut off then sits beside that writer, and
// nothing told it (the adapter has no guard for readers).
TEST_F(Review46ProxiedTest, SharedAdapterDoesNotLetAReaderJoinASuspendedReadHold) {
  auto cut = NewSession(ProxiedOptions());
  ASSERT_NE(cut, nullptr);
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  const std::string path = Path("rw");
  auto lock = SharedLock::Create(*cut, path);
  ASSERT_TRUE(lock.ok()) << lock.status();
  StdSharedMutex mutex(**lock);
  mutex.lock_shared();  // reader 1, connected: a real read hold
  testing::StateRecorder states(*cut);
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(states.WaitFor(SessionState::kSuspended, 1).has_value());

  std::atomic<bool> returned{false};
  std::atomic<bool> returned_while_cut_off{false};
  std::thread reader2([&] {
    try {
      mutex.lock_shared();
      returned_while_cut_off = cut->state() != SessionState::kConnected;
      returned = true;
    } catch (const LockError& e) {
      // Refused: fine (the lock could not be had).
    }
  });
  // The session is LOST at the lease's end; the server expires it and the
  // read node goes.
  ASSERT_TRUE(states.WaitFor(SessionState::kLost, 1, absl::Seconds(30)).has_value());
  auto writer_lock = ExclusiveLock::Create(*other, path);
  ASSERT_TRUE(writer_lock.ok());
  auto writer = (*writer_lock)->Acquire(absl::Seconds(30));
  ASSERT_TRUE(writer.ok()) << writer.status();
  const bool beside = returned.load() && returned_while_cut_off.load();
  EXPECT_FALSE(beside) << "lock_shared() returned to a second reader while the session was "
                          "disconnected; a writer on another session now holds beside it";
  ASSERT_TRUE(writer->Release().ok());
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  reader2.join();
  if (returned) mutex.unlock_shared();
  mutex.unlock_shared();
}

// Promise (recipes/README.md, the guarantees): "An OK acquisition is HELD
// when it returns." Reentry through the same ExclusiveLock object while the
// session is SUSPENDED (the first hold reads kSuspended: "it may already be
// lost — stop acting on it", lock_guard.h).
TEST_F(Review46ProxiedTest, ReentryWhileSuspendedIsHeldWhenItReturnsOk) {
  SessionOptions options = ProxiedOptions();
  options.session_timeout = absl::Seconds(20);  // SUSPENDED at ~2/3 of it, expiry far after
  auto cut = NewSession(options);
  ASSERT_NE(cut, nullptr);
  auto lock = ExclusiveLock::Create(*cut, Path("re"));
  ASSERT_TRUE(lock.ok()) << lock.status();
  auto first = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(first.ok()) << first.status();
  testing::StateRecorder states(*cut);
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(states.WaitFor(SessionState::kSuspended, 1).has_value());
  ASSERT_TRUE(Eventually([&] { return first->state() == LockState::kSuspended; }));
  auto second = (*lock)->Acquire(absl::Seconds(1));
  if (second.ok()) {
    EXPECT_EQ(second->state(), LockState::kHeld)
        << "Acquire returned OK with a hold reading "
        << (second->state() == LockState::kSuspended ? "kSuspended" : "not kHeld")
        << " while the session is " << SessionStateName(cut->state());
  } else {
    // Refused, saying why (recipes/README.md).
    EXPECT_TRUE(absl::IsUnavailable(second.status())) << second.status();
    EXPECT_TRUE(absl::StrContains(second.status().message(), "SUSPENDED")) << second.status();
  }
  // Heal the partition; the reconnection begun inside it is wedged (its
  // handshake was swallowed): reset it so the client tries again at once,
  // well within the session's timeout.
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();
  ASSERT_TRUE(states.WaitFor(SessionState::kReconnected, 1, absl::Seconds(15)).has_value());
  // HELD again (ownership re-checked): reentry counts on the hold again.
  ASSERT_TRUE(Eventually([&] { return first->state() == LockState::kHeld; }));
  auto third = (*lock)->Acquire(absl::Seconds(1));
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->state(), LockState::kHeld);
  EXPECT_EQ(third->node_path(), first->node_path());  // the same hold, counted
  ASSERT_TRUE(third->Release().ok());
  if (second.ok()) (void)second->Release();
  ASSERT_TRUE(first->Release().ok());
}

// ---- bad input: a double barrier member id that cannot fit ----------------------------

// Promise (brief, and session.h's request-size checks that groups and
// elections apply): a value that cannot be sent is refused with a clear
// status naming it, not sent to cost the connection. A member id of 2 MB
// (its node name carries a copy).
TEST_F(Review46Test, AHugeDoubleBarrierMemberIdIsRefusedWithoutCostingTheConnection) {
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  testing::StateRecorder states(*session);
  const std::string id(2 << 20, 'm');
  auto barrier = DoubleBarrier::Create(*session, Path("b"), id, 2);
  absl::Status status = barrier.status();
  if (barrier.ok()) status = (*barrier)->Enter(absl::Seconds(5));
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(absl::IsDeadlineExceeded(status)) << "a timeout is not a refusal: " << status;
  EXPECT_LT(status.message().size(), 4096u) << "the message holds the whole id";
  const auto seen = states.states();
  EXPECT_TRUE(std::find(seen.begin(), seen.end(), SessionState::kSuspended) == seen.end())
      << "the oversized request cost the session its connection";
  EXPECT_EQ(session->state(), SessionState::kConnected);
}

// ---- zkr: CMD's status through barrier, group and elect -----------------------------

class Review46CliTest : public testing::CliTest {};

// Promise (zkr.1, EXIT STATUS 0): "a subcommand that runs CMD exits with
// CMD's own status"; 128+N: "CMD was killed by signal N"; 127: "CMD was not
// found". For barrier enter, group join and elect campaign.
TEST_F(Review46CliTest, CmdStatusPassesThroughBarrierGroupAndElect) {
  struct Case {
    std::vector<std::string> args;
    int want;
  };
  const std::vector<Case> cases = {
      {{"barrier", "--path=" + Path("bar1"), "--count=1", "enter", "--", "sh", "-c", "exit 7"}, 7},
      {{"barrier", "--path=" + Path("bar2"), "--count=1", "enter", "--", "sh", "-c",
        "kill -TERM $$"}, 143},
      {{"barrier", "--path=" + Path("bar3"), "--count=1", "enter", "--", "/nonexistent/r46"}, 127},
      {{"group", "--path=" + Path("grp"), "join", "--", "sh", "-c", "exit 9"}, 9},
      {{"group", "--path=" + Path("grp2"), "join", "--", "sh", "-c", "kill -KILL $$"}, 137},
      {{"elect", "--path=" + Path("el"), "--", "sh", "-c", "exit 5"}, 5},
      {{"elect", "--path=" + Path("el2"), "--", "sh", "-c", "kill -INT $$"}, 130},
      {{"elect", "--path=" + Path("el3"), "--", "/nonexistent/r46"}, 127},
  };
  for (const Case& c : cases) {
    testing::Process& p = Zkr(c.args);
    std::optional<int> code = p.Wait(absl::Seconds(30));
    EXPECT_EQ(code, std::optional<int>(c.want)) << p.Describe();
  }
  for (const char* d : {"bar1", "bar2", "bar3", "grp", "grp2", "el", "el2", "el3"}) {
    auto kids = admin().GetChildren(Path(d));
    if (kids.ok()) {
      for (const auto& k : *kids) {
        if (k != "ready") ADD_FAILURE() << "left behind: " << Path(d) << "/" << k;
      }
    }
    (void)testing::DeleteRecursively(admin(), Path(d));
  }
}

}  // namespace
}  // namespace zkr
