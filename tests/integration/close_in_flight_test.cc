// Session::Close() with operations in flight: every pending call of every
// recipe completes exactly once, not OK, within a bound; a selector's term
// ends; what is still held is given back promptly; nothing is left.
#include <atomic>
#include <future>
#include <iostream>
#include <string>
#include <utility>
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
#include "src/session_access.h"
#include "src/session_core.h"
#include "src/zk_client.h"
#include "tests/support/recipe_runs_fixture.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using testing::Completion;
using testing::Eventually;
using testing::Ready;

class CloseInFlightTest : public testing::RecipeRunsTest {};

// Close() with an operation in flight on every recipe: each completes
// exactly once, not OK, within a bound; nothing is left on the server.
TEST_F(CloseInFlightTest, CloseWithOperationsInFlightOnEveryRecipe) {
  const std::string lockp = Path("lock"), rlockp = Path("rlock"), semp = Path("sem"),
                    ma = Path("ma"), mb = Path("mb"), elect = Path("elect"), dbar = Path("dbar"),
                    bar = Path("bar");
  // Blockers on the admin session.
  auto xl = ExclusiveLock::Create(admin(), lockp);
  auto xg = (*xl)->Acquire(absl::Seconds(10));
  auto rl = ExclusiveLock::Create(admin(), rlockp);
  auto rg = (*rl)->Acquire(absl::Seconds(10));
  auto sh = Semaphore::Create(admin(), semp, 2);
  auto sg = (*sh)->Acquire(2, absl::Seconds(10));
  auto ml = ExclusiveLock::Create(admin(), mb);
  auto mg = (*ml)->Acquire(absl::Seconds(10));
  ElectionOptions leo;
  leo.id = "leader";
  auto leader = LeaderElection::Create(admin(), elect, leo);
  ASSERT_TRUE((*leader)->Join().ok());
  ASSERT_TRUE((*leader)->AwaitLeadership(absl::Seconds(10)).ok());
  auto gate = Barrier::Create(admin(), bar);
  ASSERT_TRUE((*gate)->Set().ok());
  ASSERT_TRUE(xg.ok() && rg.ok() && sg.ok() && mg.ok());

  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, lockp);
  auto rlock = SharedLock::Create(*session, rlockp);
  auto sem = Semaphore::Create(*session, semp, 2);
  auto multi = MultiLock::Create(*session, {{ma, LockMode::kWrite}, {mb, LockMode::kWrite}});
  ElectionOptions eo;
  eo.id = "follower";
  std::atomic<int> election_changes{0};
  eo.on_change = [&](Leadership l) {
    if (l == Leadership::kLeader) ADD_FAILURE() << "follower became leader";
    election_changes++;
  };
  auto election = LeaderElection::Create(*session, elect, eo);
  auto dbarrier = DoubleBarrier::Create(*session, dbar, "in", 2);
  auto barrier = Barrier::Create(*session, bar);
  ASSERT_TRUE(lock.ok() && rlock.ok() && sem.ok() && multi.ok() && election.ok() &&
              dbarrier.ok() && barrier.ok());

  Completion c_lock, c_rlock, c_sem;
  std::vector<LockGuard> leaked;
  absl::Mutex lmu;
  auto keep = [&](absl::StatusOr<LockGuard>& g) {
    if (g.ok()) {
      absl::MutexLock l(&lmu);
      leaked.push_back(std::move(*g));
    }
  };
  (*lock)->AcquireAsync([&](absl::StatusOr<LockGuard> g) { c_lock.Record(g.status()); keep(g); });
  (*rlock)->AcquireReadAsync([&](absl::StatusOr<LockGuard> g) { c_rlock.Record(g.status()); keep(g); });
  (*sem)->AcquireAsync(1, [&](absl::StatusOr<LockGuard> g) { c_sem.Record(g.status()); keep(g); });
  auto f_multi = std::async(std::launch::async, [&] { return (*multi)->Acquire().status(); });
  auto f_dbar = std::async(std::launch::async, [&] { return (*dbarrier)->Enter(); });
  auto f_bar = std::async(std::launch::async, [&] { return (*barrier)->Wait(); });
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE(Eventually([&] {
    return Children(lockp) == 2 && Children(rlockp) == 2 && Children(semp) == 2 &&
           Children(ma) == 1 && Children(mb) == 2 && Children(elect) == 2 && Children(dbar) == 1;
  })) << "not every operation got in flight";

  session->Close();
  EXPECT_TRUE(c_lock.done.WaitForNotificationWithTimeout(absl::Seconds(20))) << "lock never completed";
  EXPECT_TRUE(c_rlock.done.WaitForNotificationWithTimeout(absl::Seconds(20))) << "rlock never completed";
  EXPECT_TRUE(c_sem.done.WaitForNotificationWithTimeout(absl::Seconds(20))) << "semaphore never completed";
  ASSERT_TRUE(Ready(f_multi)) << "multi-lock Acquire hung after Close";
  ASSERT_TRUE(Ready(f_dbar)) << "double barrier Enter hung after Close";
  ASSERT_TRUE(Ready(f_bar)) << "barrier Wait hung after Close";
  absl::Status s_multi = f_multi.get(), s_dbar = f_dbar.get(), s_bar = f_bar.get();
  for (auto* s : {&s_multi, &s_dbar, &s_bar}) EXPECT_FALSE(s->ok());
  EXPECT_FALSE(c_lock.status().ok());
  EXPECT_FALSE(c_rlock.status().ok());
  EXPECT_FALSE(c_sem.status().ok());
  std::cerr << "after Close: lock=" << c_lock.status() << " rlock=" << c_rlock.status()
            << " sem=" << c_sem.status() << " multi=" << s_multi << " dbar=" << s_dbar
            << " bar=" << s_bar << "\n";
  for (const absl::Status& s : {c_lock.status(), c_rlock.status(), c_sem.status(), s_multi, s_dbar, s_bar}) {
    EXPECT_FALSE(absl::IsUnknown(s) || absl::IsInternal(s)) << "unclear status: " << s;
  }
  // Releasing the blockers must not wake anything on the closed session.
  ASSERT_TRUE(xg->Release().ok());
  ASSERT_TRUE(rg->Release().ok());
  ASSERT_TRUE(sg->Release().ok());
  ASSERT_TRUE(mg->Release().ok());
  ASSERT_TRUE((*leader)->Leave().ok());
  ASSERT_TRUE((*gate)->Remove().ok());
  Drain(admin());
  EXPECT_TRUE(Eventually([&] {
    return Children(lockp) == 0 && Children(rlockp) == 0 && Children(semp) == 0 &&
           Children(ma) == 0 && Children(mb) == 0 && Children(elect) == 0 && Children(dbar) == 0;
  }));
  EXPECT_EQ(c_lock.calls.load(), 1);
  EXPECT_EQ(c_rlock.calls.load(), 1);
  EXPECT_EQ(c_sem.calls.load(), 1);
  // After Close, new operations fail promptly with a clear status.
  Completion after;
  (*lock)->AcquireAsync([&](absl::StatusOr<LockGuard> g) { after.Record(g.status()); keep(g); });
  EXPECT_TRUE(after.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(after.status().ok());
  {
    absl::MutexLock l(&lmu);
    EXPECT_TRUE(leaked.empty()) << "a grant was delivered on a closed session";
    leaked.clear();
  }
  lock->reset();
  rlock->reset();
  sem->reset();
  multi->reset();
  election->reset();
  dbarrier->reset();
  barrier->reset();
}

// Close() while a LeaderSelector runs take_leadership and a follower's
// AwaitLeadership waits: the term ends (IsCurrent false), the waiter
// returns, and the selector stops without hanging.
TEST_F(CloseInFlightTest, CloseEndsSelectorTermAndAwaitingFollower) {
  const std::string elect = Path("elect");
  auto session = NewSession();
  absl::Notification in_term;
  std::atomic<int> terms{0};
  std::atomic<bool> ended_not_current{false};
  LeaderSelector::Options so;
  so.election.id = "sel";
  so.requeue = true;
  auto selector = LeaderSelector::Create(*session, elect, [&](LeadershipContext& ctx) {
    terms++;
    in_term.Notify();
    while (ctx.WaitWhileCurrent(absl::Seconds(30))) {}
    ended_not_current = !ctx.IsCurrent();
  }, so);
  ASSERT_TRUE(selector.ok());
  ASSERT_TRUE((*selector)->Start().ok());
  ASSERT_TRUE(in_term.WaitForNotificationWithTimeout(absl::Seconds(20)));
  ElectionOptions eo;
  eo.id = "follower";
  auto follower = LeaderElection::Create(*session, elect, eo);
  ASSERT_TRUE((*follower)->Join().ok());
  auto f = std::async(std::launch::async, [&] { return (*follower)->AwaitLeadership(absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] { return Children(elect) == 2; }));
  session->Close();
  ASSERT_TRUE(Ready(f, absl::Seconds(20))) << "AwaitLeadership hung after Close";
  absl::Status s = f.get();
  EXPECT_FALSE(s.ok());
  std::cerr << "AwaitLeadership after Close: " << s << "\n";
  EXPECT_TRUE(Eventually([&] { return ended_not_current.load(); }, absl::Seconds(20)))
      << "take_leadership still current after Close";
  auto stopper = std::async(std::launch::async, [&] { (*selector)->Stop(); });
  EXPECT_TRUE(Ready(stopper, absl::Seconds(20))) << "Stop hung after Close";
  EXPECT_EQ(terms.load(), 1) << "a term started on a closed session";
  EXPECT_TRUE(Eventually([&] { return Children(elect) == 0; }));
  follower->reset();
  selector->reset();
}

// After Close(), what is still held is given back promptly: a guard's
// Release (lock, semaphore, multi-lock), a member's Leave, an election's
// Leave, a double barrier's destruction — none waits for a lease.
TEST_F(CloseInFlightTest, ReleasesAfterCloseArePrompt) {
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, Path("lock"));
  auto lg = (*lock)->Acquire(absl::Seconds(10));
  auto sem = Semaphore::Create(*session, Path("sem"), 2);
  auto sg = (*sem)->Acquire(2, absl::Seconds(10));
  auto multi = MultiLock::Create(*session, {{Path("ma"), LockMode::kWrite}, {Path("mb"), LockMode::kRead}});
  auto mg = (*multi)->Acquire(absl::Seconds(10));
  auto member = GroupMember::Create(*session, Path("group"), GroupOptions{"m", "", {}});
  ASSERT_TRUE((*member)->Join().ok());
  ElectionOptions eo;
  eo.id = "c";
  auto election = LeaderElection::Create(*session, Path("elect"), eo);
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  auto dbar = DoubleBarrier::Create(*session, Path("dbar"), "x", 1);
  ASSERT_TRUE((*dbar)->Enter(absl::Seconds(10)).ok());
  ASSERT_TRUE(lg.ok() && sg.ok() && mg.ok());
  std::atomic<int> lost{0};
  session->Close();
  auto timed = [](const char* what, auto&& f) {
    absl::Time t0 = absl::Now();
    auto r = f();
    absl::Duration d = absl::Now() - t0;
    std::cerr << what << ": " << r << " in " << d << "\n";
    EXPECT_LT(d, absl::Seconds(2)) << what << " waited after Close";
  };
  timed("lock release", [&] { return lg->Release(); });
  timed("sem release", [&] { return sg->Release(); });
  timed("multi release", [&] { return mg->Release(); });
  timed("member leave", [&] { return (*member)->Leave(); });
  timed("election leave", [&] { return (*election)->Leave(); });
  timed("dbar destroy", [&] { dbar->reset(); return absl::OkStatus(); });
  timed("member destroy", [&] { member->reset(); return absl::OkStatus(); });
  (void)lost;
  // The nodes go as the server processes the close request, which the C
  // client sends without waiting for its reply (session.h).
  EXPECT_TRUE(Eventually([&] {
    return Children(Path("lock")) + Children(Path("sem")) + Children(Path("ma")) +
               Children(Path("mb")) + Children(Path("group")) + Children(Path("elect")) ==
           0u;
  }));
}

// Close() while a multi-lock holds its first part (its own-node and
// revocation watches armed) and waits for the second: Acquire ends once,
// with Cancelled (the session was closed, not lost), and the session's
// watch audit at Close finds no watch the client no longer waits for.
TEST_F(CloseInFlightTest, CloseWhileMultiLockHoldsFirstPartWithWatchesArmed) {
  // A race (which the engine hears first: the held part's loss or the
  // waiting part's Cancelled): about one round in three shows it, so 10.
  const std::string ma = Path("ma"), mb = Path("mb");
  auto ml = ExclusiveLock::Create(admin(), mb);
  auto mg = (*ml)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(mg.ok());
  int wrong = 0;
  for (int round = 0; round < 10; ++round) {
    auto session = NewSession();
    auto multi = MultiLock::Create(*session, {{ma, LockMode::kWrite}, {mb, LockMode::kWrite}});
    auto f = std::async(std::launch::async, [&] { return (*multi)->Acquire().status(); });
    ASSERT_TRUE(Eventually([&] { return Children(ma) == 1 && Children(mb) == 2; }));
    // The held part's revocation watch is armed.
    ASSERT_TRUE(Eventually([&] {
      for (const auto& p : testing::WatchedPaths(*session, ma)) {
        if (absl::EndsWith(p, ".revoke")) return true;
      }
      return false;
    })) << absl::StrJoin(testing::WatchedPaths(*session, root()), ",");
    session->Close();
    ASSERT_TRUE(Ready(f)) << "Acquire hung after Close";
    absl::Status s = f.get();
    if (!absl::IsCancelled(s) || IsSessionLost(s)) {
      ++wrong;
      ADD_FAILURE() << "round " << round << ": Close() reported as: " << s
                    << (IsSessionLost(s) ? " (IsSessionLost: a closed session reported as lost)" : "");
    }
    ASSERT_TRUE(Eventually([&] { return Children(ma) == 0 && Children(mb) == 1; }));
    multi->reset();
  }
  std::cerr << wrong << " of 10 rounds misreported Close()\n";
  ASSERT_TRUE(mg->Release().ok());
}

// Close() while the server is still answering: the server must read our
// closeSession, not a reset connection, so our ephemeral nodes go at once
// (not a session timeout later). The C client closes its socket right after
// sending closeSession; a reply that reaches a closed socket resets the
// connection, and the server then drops the request unread. Each round sends
// replies on their way and closes at once, on a session that would take 30 s
// to expire: its node must be gone long before that.
TEST_F(CloseInFlightTest, CloseWithRepliesOnTheWayClosesTheSessionOnTheServer) {
  SessionOptions options = Options();
  options.session_timeout = absl::Seconds(30);
  for (int round = 0; round < 30; ++round) {
    SCOPED_TRACE(round);
    // Not watch-audited: the audit's round trips before the close would
    // let every reply arrive first.
    auto session = Session::Connect(options);
    ASSERT_TRUE(session.ok()) << session.status();
    const std::string mine = Path(absl::StrCat("mine-", round));
    ASSERT_TRUE((*session)->Create(mine, "", CreateMode::kEphemeral).ok());
    std::shared_ptr<internal::ZkClient> client = internal::CoreOf(**session)->current().client;
    for (int i = 0; i < 40; ++i) client->Get(mine, nullptr, [](absl::StatusOr<internal::NodeData>) {});
    (*session)->Close();
    EXPECT_TRUE(Eventually([&] { return !admin().Exists(mine).value_or(Stat{}).has_value(); },
                           absl::Seconds(8)))
        << mine << " outlived its closed session";
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace zkr
