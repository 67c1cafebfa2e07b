// Issue 37 adversarial review: attacks on the round's changes against a real
// server. (1) MultiLock: mutual exclusion by ledger with random overlapping
// sets and single SharedLock/ExclusiveLock holders, nothing of ours left at
// the moment a failing Acquire (timeout, Cancel, destruction, TryAcquire)
// returns, no server watch left, a held part deleted => kLost. (2)
// LeaderElection: never two leaders by the library's own view during
// Yield rounds (checked inside the new leader's on_change and by a
// sampler), Yield/Leave from inside on_change, concurrent Yield+Leave,
// session loss during Yield. (3) Queue engine: kLost on operator delete with
// and without an observer; observer events complete and in order.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/support/directory_check.h"
#include "tests/support/zk_test.h"
#include "src/testing/faulty_client.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/observer.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using testing::Eventually;
using Review37Test = testing::DirectoryCheckedTest<testing::ZkTest>;
using Pending = std::future<absl::StatusOr<MultiLockGuard>>;

bool ReadyIn(Pending& p, absl::Duration bound) {
  return p.wait_for(absl::ToChronoMilliseconds(bound)) == std::future_status::ready;
}

// Per-path ledger of who is inside.
struct PathLedger {
  std::atomic<int> writers{0}, readers{0};
};
struct Ledger {
  std::map<std::string, PathLedger> paths;
  std::atomic<int> violations{0};
  absl::Mutex mu;
  std::vector<std::string> notes;
  void Enter(const std::string& p, bool write, const std::string& who) {
    PathLedger& l = paths.at(p);
    if (write) {
      int w = ++l.writers;
      int r = l.readers.load();
      if (w != 1 || r != 0) Note(absl::StrCat(who, " write-enters ", p, " w=", w, " r=", r));
    } else {
      ++l.readers;
      int w = l.writers.load();
      if (w != 0) Note(absl::StrCat(who, " read-enters ", p, " w=", w));
    }
  }
  void Exit(const std::string& p, bool write) {
    PathLedger& l = paths.at(p);
    if (write) --l.writers; else --l.readers;
  }
  void Note(std::string s) {
    ++violations;
    absl::MutexLock lock(&mu);
    if (notes.size() < 20) notes.push_back(std::move(s));
  }
};

// Attack 1a: three sessions take random overlapping subsets (random order,
// random modes) of four paths while an ExclusiveLock hammers one path and a
// SharedLock writer/reader another. Every acquisition must succeed within
// 30 s (no deadlock) and the ledger must never see a conflict.
TEST_F(Review37Test, RandomOverlappingSetsAndSingleLocksKeepMutualExclusion) {
  std::vector<std::string> paths = {Path("p0"), Path("p1"), Path("p2"), Path("p3")};
  Ledger ledger;
  for (auto& p : paths) ledger.paths[p];
  std::atomic<int> failures{0}, entries{0};
  absl::Mutex fmu;
  std::vector<std::string> fnotes;
  auto fail = [&](std::string s) {
    ++failures;
    absl::MutexLock lock(&fmu);
    if (fnotes.size() < 10) fnotes.push_back(std::move(s));
  };
  auto multi_worker = [&](int seed) {
    std::unique_ptr<Session> session = NewSession();
    std::mt19937 rng(seed);
    for (int round = 0; round < 20; ++round) {
      std::vector<std::string> shuffled = paths;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      const int n = 2 + static_cast<int>(rng() % 3);  // 2..4 parts
      std::vector<LockPart> parts;
      for (int i = 0; i < n; ++i) {
        parts.push_back({shuffled[i], (rng() % 3 == 0) ? LockMode::kRead : LockMode::kWrite});
      }
      auto multi = MultiLock::Create(*session, parts);
      if (!multi.ok()) { fail(multi.status().ToString()); return; }
      auto held = (*multi)->Acquire(absl::Seconds(30));
      if (!held.ok()) {
        fail(absl::StrCat("multi ", seed, " round ", round, ": ", held.status().ToString()));
        return;
      }
      const std::string who = absl::StrCat("multi", seed);
      for (auto& p : parts) ledger.Enter(p.path, p.mode == LockMode::kWrite, who);
      std::this_thread::yield();
      for (auto& p : parts) ledger.Exit(p.path, p.mode == LockMode::kWrite);
      ++entries;
      absl::Status r = held->Release();
      if (!r.ok()) fail(r.ToString());
    }
  };
  auto exclusive_worker = [&] {
    std::unique_ptr<Session> session = NewSession();
    auto lock = ExclusiveLock::Create(*session, paths[1]);
    for (int round = 0; round < 25; ++round) {
      auto held = (*lock)->Acquire(absl::Seconds(30));
      if (!held.ok()) { fail("exclusive: " + held.status().ToString()); return; }
      ledger.Enter(paths[1], true, "exclusive");
      std::this_thread::yield();
      ledger.Exit(paths[1], true);
      ++entries;
      (void)held->Release();
    }
  };
  auto shared_worker = [&] {
    std::unique_ptr<Session> session = NewSession();
    auto lock = SharedLock::Create(*session, paths[2]);
    for (int round = 0; round < 25; ++round) {
      const bool write = round % 2 == 0;
      auto held = write ? (*lock)->AcquireWrite(absl::Seconds(30)) : (*lock)->AcquireRead(absl::Seconds(30));
      if (!held.ok()) { fail("shared: " + held.status().ToString()); return; }
      ledger.Enter(paths[2], write, "shared");
      std::this_thread::yield();
      ledger.Exit(paths[2], write);
      ++entries;
      (void)held->Release();
    }
  };
  std::vector<std::thread> threads;
  for (int seed = 1; seed <= 3; ++seed) threads.emplace_back(multi_worker, seed * 7919 + (int)getpid());
  threads.emplace_back(exclusive_worker);
  threads.emplace_back(shared_worker);
  for (auto& t : threads) t.join();
  EXPECT_EQ(ledger.violations.load(), 0) << absl::StrJoin(ledger.notes, "\n");
  EXPECT_EQ(failures.load(), 0) << absl::StrJoin(fnotes, "\n");
  EXPECT_EQ(entries.load(), 3 * 20 + 25 + 25);
}

// Attack 1b: a failing Acquire leaves nothing of ours behind *at the moment
// it returns*. C is held elsewhere; {A, B, C, D} is asked for with short
// timeouts, or cancelled / destroyed after a random short delay from
// another thread. Right after Acquire returns, A, B and D must have no
// child and C only the holder's node; the session must watch nothing left
// under root (eventually: a removal may still be in flight... we give it
// one round trip via WatchedPaths).
TEST_F(Review37Test, AFailingAcquireLeavesNoNodeOfOursWhenItReturns) {
  const std::string a = Path("a"), b = Path("b"), c = Path("c"), d = Path("d");
  auto holder_session = NewSession();
  auto holder = ExclusiveLock::Create(*holder_session, c);
  auto held_c = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_c.ok()) << held_c.status();
  auto faults = std::make_shared<testing::ClientFaults>();  // no rules: counts requests
  auto session = NewFaultySession(faults);
  std::mt19937 rng(static_cast<unsigned>(getpid()));
  std::vector<std::string> leaks;
  int leaks_count = 0, watch_leaks = 0, wrong_status = 0;
  std::vector<std::string> statuses;
  for (int round = 0; round < 60; ++round) {
    const int how = round % 4;  // 0: timeout, 1: Cancel, 2: destroy, 3: TryAcquire
    auto multi = MultiLock::Create(*session, {{d, LockMode::kWrite},
                                              {a, LockMode::kWrite},
                                              {c, LockMode::kRead},
                                              {b, LockMode::kRead}});
    ASSERT_TRUE(multi.ok());
    std::unique_ptr<MultiLock> owned = std::move(*multi);
    MultiLock* raw = owned.get();
    const int delay_us = static_cast<int>(rng() % 20000);
    // A create goes alone or in the parts' joint transaction (a multi).
    auto creates = [&] {
      return faults->Calls(testing::FaultRule::Call::kCreate, root()) +
             faults->Calls(testing::FaultRule::Call::kMulti, root());
    };
    const int creates_before = creates();
    Pending pending = std::async(std::launch::async, [&, how, delay_us] {
      if (how == 3) return raw->TryAcquire();
      return raw->Acquire(how == 0 ? absl::Microseconds(delay_us + 1) : absl::Seconds(30));
    });
    if (how == 1 || how == 2) {
      // Cancel()/destruction end a *pending* Acquire: wait until this one
      // has sent its first create (it is then inside Take), bounded.
      ASSERT_TRUE(Eventually([&] { return creates() > creates_before; }, absl::Seconds(10)));
      absl::SleepFor(absl::Microseconds(delay_us));  // a random moment, not to hide a race
      if (how == 1) raw->Cancel();
      else owned.reset();
    }
    ASSERT_TRUE(ReadyIn(pending, absl::Seconds(20))) << "round " << round << " how " << how;
    absl::StatusOr<MultiLockGuard> result = pending.get();
    if (result.ok()) {
      ++wrong_status;
      statuses.push_back(absl::StrCat("round ", round, " how ", how, ": granted?!"));
      (void)result->Release();
      continue;
    }
    const absl::Status st = result.status();
    const bool expected = (how == 0 || how == 3) ? absl::IsDeadlineExceeded(st) : absl::IsCancelled(st);
    if (!expected) {
      ++wrong_status;
      statuses.push_back(absl::StrCat("round ", round, " how ", how, ": ", st.ToString()));
    }
    // Immediately: nothing of ours.
    for (const std::string& p : {a, b, d}) {
      auto kids = admin().GetChildren(p);
      if (kids.ok() && !kids->empty()) {
        ++leaks_count;
        if (leaks.size() < 10)
          leaks.push_back(absl::StrCat("round ", round, " how ", how, " delay_us ", delay_us, ": ", p,
                                       " has ", absl::StrJoin(*kids, ",")));
      }
    }
    auto kc = admin().GetChildren(c);
    if (kc.ok() && kc->size() != 1) {
      ++leaks_count;
      if (leaks.size() < 10)
        leaks.push_back(absl::StrCat("round ", round, " how ", how, " delay_us ", delay_us, ": ", c,
                                     " has ", absl::StrJoin(*kc, ",")));
    }
    // No server watch of our session left under root once one round trip
    // has gone by (WatchedPaths makes one).
    std::vector<std::string> watched = testing::WatchedPaths(*session, root());
    if (!watched.empty()) {
      // allow it to settle for a bounded time, and report if it does not
      if (!Eventually([&] { return testing::WatchedPaths(*session, root()).empty(); },
                      absl::Seconds(3))) {
        ++watch_leaks;
        if (leaks.size() < 10)
          leaks.push_back(absl::StrCat("round ", round, " how ", how, ": watches left ",
                                       absl::StrJoin(watched, ",")));
      }
    }
    owned.reset();
  }
  EXPECT_EQ(leaks_count, 0) << absl::StrJoin(leaks, "\n");
  EXPECT_EQ(watch_leaks, 0) << absl::StrJoin(leaks, "\n");
  EXPECT_EQ(wrong_status, 0) << absl::StrJoin(statuses, "\n");
  ASSERT_TRUE(held_c->Release().ok());
}

// Attack 1c: a granted multi-lock whose part node is deleted by an operator
// reports kLost through state() and on_state_change (exactly once, kLost),
// and the other parts are still given back by Release without error
// leaving nothing.
TEST_F(Review37Test, AHeldPartDeletedByAnOperatorMakesTheGuardLost) {
  const std::string a = Path("a"), b = Path("b"), c = Path("c");
  auto session = NewSession();
  absl::Mutex mu;
  std::vector<LockState> seen;
  LockOptions options;
  options.on_state_change = [&](LockState s) {
    absl::MutexLock lock(&mu);
    seen.push_back(s);
  };
  auto multi = MultiLock::Create(*session, {{c, LockMode::kWrite}, {a, LockMode::kRead},
                                            {b, LockMode::kWrite}}, options);
  ASSERT_TRUE(multi.ok());
  auto held = (*multi)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  auto kids = admin().GetChildren(b);
  ASSERT_TRUE(kids.ok() && kids->size() == 1);
  ASSERT_TRUE(admin().Delete(b + "/" + kids->front()).ok());
  EXPECT_TRUE(Eventually([&] { return held->state() == LockState::kLost; }, absl::Seconds(10)))
      << LockStateName(held->state());
  EXPECT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return !seen.empty();
  }, absl::Seconds(10)));
  (void)held->Release();
  {
    absl::MutexLock lock(&mu);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0], LockState::kLost);
  }
  EXPECT_EQ(Children(a) + Children(b) + Children(c), 0u);
}

// Attack 1e: faults on a later part's create or delete (the reply dropped:
// applied but unseen; the request lost) while an earlier part waits, so the
// later part is granted, given back and asked for again under faults. A
// failing Acquire must leave no node of ours at return; a later successful
// one exactly one node per part, none after Release.
TEST_F(Review37Test, FaultsOnALaterPartsCreateOrDeleteLeaveNothingBehind) {
  using Call = testing::FaultRule::Call;
  using Effect = testing::FaultRule::Effect;
  struct Case { Call call; Effect effect; int count; const char* name; };
  const Case cases[] = {
      {Call::kCreate, Effect::kDropReply, 1, "create reply dropped"},
      {Call::kCreate, Effect::kLoseRequest, 1, "create lost"},
      {Call::kDelete, Effect::kDropReply, 1, "delete reply dropped"},
      {Call::kDelete, Effect::kLoseRequest, 3, "delete lost x3"},
      {Call::kGetChildren, Effect::kLoseRequest, 2, "listing lost x2"},
      {Call::kCreate, Effect::kDropReply, 3, "create reply dropped x3"},
      // The later part's create asked for again goes alone in a joint
      // transaction (recipes/joint_create.h): the same faults on that.
      {Call::kMulti, Effect::kDropReply, 1, "joint create reply dropped"},
      {Call::kMulti, Effect::kLoseRequest, 1, "joint create lost"},
      {Call::kMulti, Effect::kDropReply, 3, "joint create reply dropped x3"},
  };
  int k = 0;
  for (const Case& cs : cases) {
    SCOPED_TRACE(cs.name);
    const std::string a = Path(absl::StrCat("a", k)), b = Path(absl::StrCat("b", k)),
                      c = Path(absl::StrCat("c", k));
    ++k;
    auto holder = ExclusiveLock::Create(admin(), b);
    auto held_b = (*holder)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held_b.ok()) << held_b.status();
    auto faults = std::make_shared<testing::ClientFaults>();
    auto session = NewFaultySession(faults);
    faults->Add({cs.call, cs.effect, c + "/", cs.count});
    auto multi = MultiLock::Create(*session, {{c, LockMode::kWrite}, {a, LockMode::kWrite},
                                              {b, LockMode::kWrite}});
    ASSERT_TRUE(multi.ok());
    auto failing = (*multi)->Acquire(absl::Milliseconds(1500));
    EXPECT_FALSE(failing.ok());
    if (failing.ok()) (void)failing->Release();
    EXPECT_TRUE(absl::IsDeadlineExceeded(failing.status()) || absl::IsUnavailable(failing.status()))
        << failing.status();
    EXPECT_EQ(Children(a), 0u) << "at return: " << absl::StrJoin(ChildList(a), ",");
    EXPECT_EQ(Children(c), 0u) << "at return: " << absl::StrJoin(ChildList(c), ",");
    EXPECT_EQ(Children(b), 1u) << "at return: " << absl::StrJoin(ChildList(b), ",");
    // Now with the faults again and B freed while the Acquire waits.
    faults->Clear();
    faults->Add({cs.call, cs.effect, c + "/", cs.count});
    Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(20)); });
    ASSERT_TRUE(Eventually([&] { return Children(b) == 2; }, absl::Seconds(10)));
    // C (after B) goes back while B waits, and is asked for again once B is
    // granted: under the faults. Freeing B before C went back could let
    // every part be granted at once, and C would never be asked again.
    ASSERT_TRUE(Eventually([&] { return Children(c) == 0; }, absl::Seconds(10)));
    ASSERT_TRUE(held_b->Release().ok());
    ASSERT_TRUE(ReadyIn(pending, absl::Seconds(25)));
    auto got = pending.get();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(got->held());
    EXPECT_EQ(Children(a), 1u) << absl::StrJoin(ChildList(a), ",");
    EXPECT_EQ(Children(b), 1u) << absl::StrJoin(ChildList(b), ",");
    EXPECT_EQ(Children(c), 1u) << absl::StrJoin(ChildList(c), ",");
    ASSERT_TRUE(got->Release().ok());
    EXPECT_TRUE(Eventually([&] { return Children(a) + Children(b) + Children(c) == 0; },
                           absl::Seconds(10)))
        << absl::StrJoin(ChildList(c), ",");
    // The joint cases did meet a joint create on C.
    if (cs.call == Call::kMulti) EXPECT_GT(faults->Calls(Call::kMulti, c + "/"), 0);
    multi->reset();
  }
}

// Attack 1d: TryAcquire racing a full Acquire of an overlapping set from
// another session: at most one gets it at once, the loser leaves nothing.
TEST_F(Review37Test, TryAcquireRacingAcquireNeverBothAndLoserLeavesNothing) {
  const std::string a = Path("a"), b = Path("b"), c = Path("c");
  auto s1 = NewSession();
  auto s2 = NewSession();
  int both = 0, try_wins = 0;
  for (int round = 0; round < 30; ++round) {
    auto m1 = MultiLock::Create(*s1, {{a, LockMode::kWrite}, {b, LockMode::kWrite}});
    auto m2 = MultiLock::Create(*s2, {{c, LockMode::kWrite}, {b, LockMode::kWrite}, {a, LockMode::kRead}});
    ASSERT_TRUE(m1.ok() && m2.ok());
    Pending p1 = std::async(std::launch::async, [&] { return (*m1)->Acquire(absl::Seconds(20)); });
    auto t = (*m2)->TryAcquire();
    if (t.ok()) {
      ++try_wins;
      // while t is held (in every part), the Acquire cannot have a grant
      if (ReadyIn(p1, absl::ZeroDuration())) {
        auto early = p1.get();
        if (early.ok() && t->held() && early->held()) ++both;
        ASSERT_TRUE(early.ok()) << early.status();
        (void)early->Release();
        (void)t->Release();
        continue;
      }
      ASSERT_TRUE(t->Release().ok());
    } else {
      EXPECT_TRUE(absl::IsDeadlineExceeded(t.status())) << t.status();
      // nothing of s2 under c (c is only s2's part)
      EXPECT_EQ(Children(c), 0u) << "round " << round;
    }
    ASSERT_TRUE(ReadyIn(p1, absl::Seconds(25)));
    auto g1 = p1.get();
    ASSERT_TRUE(g1.ok()) << g1.status();
    (void)g1->Release();
  }
  EXPECT_EQ(both, 0);
  RecordProperty("try_wins", try_wins);
}

// ---------------------------------------------------------------- elections

struct Cand {
  std::unique_ptr<Session> session;
  std::unique_ptr<LeaderElection> election;
  std::atomic<LeaderElection*> ptr{nullptr};  // nulled before election is destroyed
  absl::Mutex mu;
  std::vector<Leadership> changes;
};

class Review37ElectionTest : public Review37Test {
 protected:
  // Two candidates on `path`, c0's session through `faults`, each recording
  // its changes; once it returns c0 leads and c1 is queued behind it (empty
  // on a failure, which it reports).
  std::vector<std::unique_ptr<Cand>> LeaderAndFollower(
      const std::string& path, const std::shared_ptr<testing::ClientFaults>& faults) {
    std::vector<std::unique_ptr<Cand>> c;
    for (int i = 0; i < 2; ++i) {
      c.push_back(std::make_unique<Cand>());
      c[i]->session = i == 0 ? NewFaultySession(faults) : NewSession();
      ElectionOptions o;
      o.id = absl::StrCat("c", i);
      Cand* me = c[i].get();
      o.on_change = [me](Leadership l) {
        absl::MutexLock lock(&me->mu);
        me->changes.push_back(l);
      };
      auto e = LeaderElection::Create(*c[i]->session, path, o);
      if (!e.ok()) {
        ADD_FAILURE() << e.status();
        return {};
      }
      c[i]->election = std::move(*e);
    }
    if (!c[0]->election->Join().ok() ||
        !c[0]->election->AwaitLeadership(absl::Seconds(10)).ok() ||
        !c[1]->election->Join().ok() || !testing::AwaitChildCount(admin(), path, 2)) {
      ADD_FAILURE() << "c0 leading and c1 queued behind it on " << path;
      return {};
    }
    return c;
  }
  std::atomic<int> overlap_in_callback_{0};
  absl::Mutex note_mu_;
  std::vector<std::string> notes_;
  void Note(std::string s) {
    absl::MutexLock lock(&note_mu_);
    if (notes_.size() < 20) notes_.push_back(std::move(s));
  }
  std::vector<std::unique_ptr<Cand>> MakeCands(const std::string& path, int n,
                                               std::function<void(int, Leadership)> extra = nullptr) {
    std::vector<std::unique_ptr<Cand>> c;
    for (int i = 0; i < n; ++i) c.push_back(std::make_unique<Cand>());
    auto* raw = new std::vector<Cand*>;  // leaked on purpose: callbacks may outlive
    for (auto& x : c) raw->push_back(x.get());
    for (int i = 0; i < n; ++i) {
      c[i]->session = NewSession();
      ElectionOptions options;
      options.id = absl::StrCat("c", i);
      options.on_change = [this, i, raw, extra](Leadership l) {
        Cand* me = (*raw)[i];
        // Recorded after the check below: a test that waits for this
        // report knows the check (which reads the other candidates) is done.
        auto record = [me, l] {
          absl::MutexLock lock(&me->mu);
          me->changes.push_back(l);
        };
        if (l == Leadership::kLeader) {
          for (size_t j = 0; j < raw->size(); ++j) {
            if (static_cast<int>(j) == i) continue;
            Cand* other = (*raw)[j];
            // A kLeader notice can run late (after this candidate already
            // stepped down again): count an overlap only if this candidate
            // leads by its own view before and after the other's is read.
            LeaderElection* oe = other->ptr.load();
            LeaderElection* mine = me->ptr.load();
            auto leads = [](LeaderElection* e) {
              return e->IsLeader() || e->leadership() == Leadership::kLeader;
            };
            if (oe != nullptr && mine != nullptr && leads(mine) && leads(oe) && leads(mine)) {
              ++overlap_in_callback_;
              Note(absl::StrCat("c", i, " told kLeader while c", j, " IsLeader()"));
            }
          }
        }
        record();
        if (extra) extra(i, l);
      };
      auto e = LeaderElection::Create(*c[i]->session, path, options);
      EXPECT_TRUE(e.ok()) << e.status();
      c[i]->election = std::move(*e);
      c[i]->ptr = c[i]->election.get();
    }
    return c;
  }
};

// Attack 2a: Yield rounds among three candidates. The library's own view
// must never show two leaders: checked inside every kLeader callback (no
// other candidate IsLeader()) and by a sampler thread reading IsLeader()
// twice over all candidates. Each candidate's on_change must alternate
// (never kLeader twice without a non-leader report between).
TEST_F(Review37ElectionTest, YieldRoundsNeverShowTwoLeadersInTheLibrarysOwnView) {
  const std::string path = Path("election");
  auto c = MakeCands(path, 3);
  for (auto& x : c) ASSERT_TRUE(x->election->Join().ok());
  // Join() returns at once: all three are queued before the first Yield
  // (else the first leader may queue again ahead of the others and lead).
  ASSERT_TRUE(Eventually([&] {
    absl::StatusOr<std::vector<std::string>> nodes = admin().GetChildren(path);
    return nodes.ok() && nodes->size() == 3;
  }, absl::Seconds(20)));
  std::atomic<bool> stop{false};
  std::atomic<int> sampled_overlaps{0};
  std::atomic<long> samples{0};
  std::thread sampler([&] {
    while (!stop.load()) {
      bool s1[3], s2[3];
      auto view = [&](int i) {
        return c[i]->election->IsLeader() || c[i]->election->leadership() == Leadership::kLeader;
      };
      for (int i = 0; i < 3; ++i) s1[i] = view(i);
      for (int i = 0; i < 3; ++i) s2[i] = view(i);
      int n = 0;
      for (int i = 0; i < 3; ++i) n += (s1[i] && s2[i]);
      if (n > 1) {
        ++sampled_overlaps;
        Note("sampler: two candidates IsLeader() at once");
      }
      ++samples;
    }
  });
  int yields = 0;
  for (int round = 0; round < 40; ++round) {
    int leader = -1;
    ASSERT_TRUE(Eventually([&] {
      for (int i = 0; i < 3; ++i) if (c[i]->election->IsLeader()) { leader = i; return true; }
      return false;
    }, absl::Seconds(20))) << "round " << round << ": no leader";
    absl::Status y = c[leader]->election->Yield();
    if (y.ok()) ++yields;
    else EXPECT_TRUE(absl::IsFailedPrecondition(y)) << y;
    ASSERT_TRUE(Eventually([&] {
      for (int i = 0; i < 3; ++i) if (i != leader && c[i]->election->IsLeader()) return true;
      return false;
    }, absl::Seconds(20))) << "round " << round << ": nobody took over from c" << leader;
  }
  stop = true;
  sampler.join();
  EXPECT_EQ(overlap_in_callback_.load(), 0) << absl::StrJoin(notes_, "\n");
  EXPECT_EQ(sampled_overlaps.load(), 0) << absl::StrJoin(notes_, "\n") << " samples " << samples.load();
  for (auto& x : c) ASSERT_TRUE(x->election->Leave().ok());
  for (int i = 0; i < 3; ++i) {
    // let every posted callback run: leadership() settles to kNotLeader and
    // the last report must say so
    ASSERT_TRUE(Eventually([&] {
      absl::MutexLock lock(&c[i]->mu);
      return !c[i]->changes.empty() && c[i]->changes.back() == Leadership::kNotLeader;
    }, absl::Seconds(10))) << "c" << i;
    absl::MutexLock lock(&c[i]->mu);
    Leadership prev = Leadership::kNotLeader;
    for (size_t k = 0; k < c[i]->changes.size(); ++k) {
      Leadership l = c[i]->changes[k];
      EXPECT_NE(l, prev) << "c" << i << " report " << k << " repeats " << LeadershipName(l);
      if (l == Leadership::kLeader) EXPECT_NE(prev, Leadership::kLeader);
      prev = l;
    }
  }
  for (auto& x : c) x->ptr = nullptr;
  c.clear();
}

// Attack 2b: a leader Yield()s from inside its own on_change(kLeader), and
// after 30 terms one Leave()s from inside on_change. No hang, no two
// leaders, every candidate's reports alternate.
TEST_F(Review37ElectionTest, YieldAndLeaveFromInsideOnChange) {
  const std::string path = Path("election");
  std::atomic<int> terms{0};
  std::atomic<int> yield_errors{0};
  std::vector<std::unique_ptr<Cand>>* cands = nullptr;
  absl::Notification done;
  auto extra = [&](int i, Leadership l) {
    if (l != Leadership::kLeader) return;
    const int t = ++terms;
    if (t < 30) {
      absl::Status s = (*cands)[i]->election->Yield();
      if (!s.ok()) {
        ++yield_errors;
        Note(absl::StrCat("Yield inside on_change: ", s.ToString()));
      }
    } else if (t == 30) {
      absl::Status s = (*cands)[i]->election->Leave();
      if (!s.ok()) Note(absl::StrCat("Leave inside on_change: ", s.ToString()));
      done.Notify();
    }
  };
  auto c = MakeCands(path, 2, extra);
  cands = &c;
  for (auto& x : c) ASSERT_TRUE(x->election->Join().ok());
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)))
      << "only " << terms.load() << " terms";
  EXPECT_EQ(yield_errors.load(), 0) << absl::StrJoin(notes_, "\n");
  EXPECT_EQ(overlap_in_callback_.load(), 0) << absl::StrJoin(notes_, "\n");
  for (auto& x : c) (void)x->election->Leave();
  for (auto& x : c) x->ptr = nullptr;
  for (int i = 0; i < 2; ++i) {
    absl::MutexLock lock(&c[i]->mu);
    Leadership prev = Leadership::kNotLeader;
    for (Leadership l : c[i]->changes) {
      if (l == Leadership::kLeader) EXPECT_NE(prev, Leadership::kLeader) << "c" << i;
      prev = l;
    }
  }
  c.clear();
}

// Attack 2c: concurrent Yield() and Leave() on the leader from two threads,
// then destruction: both return (bounded), the node is gone, the other
// candidate leads, the leader's last report is kNotLeader.
TEST_F(Review37ElectionTest, ConcurrentYieldAndLeaveThenDestroy) {
  const std::string path = Path("election");
  for (int round = 0; round < 10; ++round) {
    auto c = MakeCands(path, 2);
    ASSERT_TRUE(c[0]->election->Join().ok());
    ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok());
    ASSERT_TRUE(c[1]->election->Join().ok());
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
    auto fy = std::async(std::launch::async, [&] { return c[0]->election->Yield(); });
    auto fl = std::async(std::launch::async, [&] { return c[0]->election->Leave(); });
    ASSERT_EQ(fy.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "Yield hung";
    ASSERT_EQ(fl.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "Leave hung";
    absl::Status ys = fy.get(), ls = fl.get();
    EXPECT_TRUE(ls.ok() || absl::IsFailedPrecondition(ls)) << ls;
    EXPECT_TRUE(ys.ok() || absl::IsFailedPrecondition(ys)) << ys;
    EXPECT_TRUE(c[1]->election->AwaitLeadership(absl::Seconds(10)).ok()) << "round " << round;
    // Leave must have won in the end: c0 is not joined and has no node.
    if (c[0]->election->joined()) {
      // Leave ran first then Yield re-queued? Yield on a non-leader must be
      // refused, so joined after a successful Leave is a broken promise.
      ADD_FAILURE() << "round " << round << ": c0 still joined after Leave=" << ls
                    << " Yield=" << ys;
      (void)c[0]->election->Leave();
    }
    EXPECT_FALSE(c[0]->election->IsLeader());
    ASSERT_TRUE(Eventually([&] {
      absl::MutexLock lock(&c[1]->mu);
      return !c[1]->changes.empty() && c[1]->changes.back() == Leadership::kLeader;
    }, absl::Seconds(10)));
    // c0's own notices run on its session's dispatcher, which may lag
    // (destroying c0 drops what is not delivered yet): its last must come
    // to kNotLeader first.
    EXPECT_TRUE(Eventually([&] {
      absl::MutexLock lock(&c[0]->mu);
      return !c[0]->changes.empty() && c[0]->changes.back() == Leadership::kNotLeader;
    }, absl::Seconds(10))) << "round " << round;
    c[0]->ptr = nullptr;
    c[0]->election.reset();
    {
      absl::MutexLock lock(&c[0]->mu);
      ASSERT_FALSE(c[0]->changes.empty());
      EXPECT_EQ(c[0]->changes.back(), Leadership::kNotLeader) << "round " << round;
    }
    EXPECT_TRUE(testing::AwaitChildCount(admin(), path, 1));
    EXPECT_EQ(overlap_in_callback_.load(), 0) << absl::StrJoin(notes_, "\n");
    c[1]->ptr = nullptr;
    c[1]->election.reset();
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
  }
}

// Attack 2d: the leader's session is expired while it Yield()s: Yield
// returns (bounded), the other leads, the old one's reports end in a
// non-leader state and never two leaders in the library's view.
TEST_F(Review37ElectionTest, SessionLossDuringYield) {
  const std::string path = Path("election");
  for (int round = 0; round < 4; ++round) {
    auto c = MakeCands(path, 2);
    ASSERT_TRUE(c[0]->election->Join().ok());
    ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok());
    ASSERT_TRUE(c[1]->election->Join().ok());
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
    auto fe = std::async(std::launch::async, [&] { return testing::ExpireSession(*c[0]->session); });
    auto fy = std::async(std::launch::async, [&] { return c[0]->election->Yield(); });
    ASSERT_EQ(fy.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "Yield hung";
    ASSERT_EQ(fe.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_TRUE(fe.get().ok());
    absl::Status ys = fy.get();
    (void)ys;
    EXPECT_TRUE(c[1]->election->AwaitLeadership(absl::Seconds(20)).ok()) << "round " << round;
    EXPECT_EQ(overlap_in_callback_.load(), 0) << absl::StrJoin(notes_, "\n");
    // c0 rejoins after loss by default; it must not be leader while c1 is
    EXPECT_FALSE(c[0]->election->IsLeader() && c[1]->election->IsLeader());
    c[0]->election.reset();
    c[1]->ptr = nullptr;
    c[1]->election.reset();
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
  }
}

// Attack 2e: the leader's Yield() delete is lost (or its reply dropped):
// the leader must not be leader by its own view once Yield returns, the
// other candidate leads, and the yielder has exactly one node (the old one
// gone, a new one at the back); reports alternate and end kNotLeader.
TEST_F(Review37ElectionTest, YieldWithItsDeleteLostOrItsReplyDropped) {
  using Call = testing::FaultRule::Call;
  using Effect = testing::FaultRule::Effect;
  int k = 0;
  for (Effect effect : {Effect::kLoseRequest, Effect::kDropReply}) {
    const std::string path = Path(absl::StrCat("election", k++));
    auto faults = std::make_shared<testing::ClientFaults>();
    std::vector<std::unique_ptr<Cand>> c;
    c.push_back(std::make_unique<Cand>());
    c.push_back(std::make_unique<Cand>());
    for (int i = 0; i < 2; ++i) {
      c[i]->session = i == 0 ? NewFaultySession(faults) : NewSession();
      ElectionOptions o;
      o.id = absl::StrCat("c", i);
      Cand* me = c[i].get();
      Cand* other = c[1 - i].get();
      o.on_change = [this, me, other, i](Leadership l) {
        {
          absl::MutexLock lock(&me->mu);
          me->changes.push_back(l);
        }
        LeaderElection* oe = other->ptr.load();
        LeaderElection* mine = me->ptr.load();
        auto leads = [](LeaderElection* e) {
          return e->IsLeader() || e->leadership() == Leadership::kLeader;
        };
        if (l == Leadership::kLeader && oe != nullptr && mine != nullptr && leads(mine) &&
            leads(oe) && leads(mine)) {
          ++overlap_in_callback_;
          Note(absl::StrCat("c", i, " told kLeader while the other leads"));
        }
      };
      auto e = LeaderElection::Create(*c[i]->session, path, o);
      ASSERT_TRUE(e.ok());
      c[i]->election = std::move(*e);
      c[i]->ptr = c[i]->election.get();
    }
    ASSERT_TRUE(c[0]->election->Join().ok());
    ASSERT_TRUE(c[0]->election->AwaitLeadership(absl::Seconds(10)).ok());
    ASSERT_TRUE(c[1]->election->Join().ok());
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 2));
    faults->Add({Call::kDelete, effect, path + "/", 2});
    auto fy = std::async(std::launch::async, [&] { return c[0]->election->Yield(); });
    ASSERT_EQ(fy.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "Yield hung";
    absl::Status ys = fy.get();
    EXPECT_TRUE(ys.ok() || absl::IsUnavailable(ys)) << ys;
    EXPECT_GE(faults->Calls(Call::kDelete, path + "/"), 1);
    std::printf("yield with delete fault: Yield=%s deletes sent=%d\n", ys.ToString().c_str(),
                faults->Calls(Call::kDelete, path + "/"));
    EXPECT_FALSE(c[0]->election->IsLeader() && c[1]->election->IsLeader());
    EXPECT_TRUE(c[1]->election->AwaitLeadership(absl::Seconds(20)).ok());
    EXPECT_FALSE(c[0]->election->IsLeader());
    EXPECT_TRUE(testing::AwaitChildCount(admin(), path, 2))
        << absl::StrJoin(ChildList(path), ",");
    EXPECT_TRUE(Eventually([&] {
      absl::MutexLock lock(&c[0]->mu);
      return !c[0]->changes.empty() && c[0]->changes.back() == Leadership::kNotLeader;
    }, absl::Seconds(10)));
    EXPECT_EQ(overlap_in_callback_.load(), 0) << absl::StrJoin(notes_, "\n");
    faults->Clear();
    for (auto& x : c) (void)x->election->Leave();
    for (auto& x : c) x->ptr = nullptr;
    {
      absl::MutexLock lock(&c[0]->mu);
      Leadership prev = Leadership::kNotLeader;
      for (Leadership l : c[0]->changes) {
        if (l == Leadership::kLeader) EXPECT_NE(prev, Leadership::kLeader);
        prev = l;
      }
    }
    c.clear();
  }
}

// Attack 2f: Leave() while a Yield()'s delete is being retried (its first
// requests lost): Leave must not return OK while the candidate's old node
// is still on the server (Leave: OK means the removal is confirmed).
TEST_F(Review37ElectionTest, LeaveDuringAYieldWhoseDeleteIsRetried) {
  using Call = testing::FaultRule::Call;
  using Effect = testing::FaultRule::Effect;
  const std::string path = Path("election");
  auto faults = std::make_shared<testing::ClientFaults>();
  std::vector<std::unique_ptr<Cand>> c = LeaderAndFollower(path, faults);
  ASSERT_EQ(c.size(), 2u);
  auto before = ChildList(path);
  std::sort(before.begin(), before.end());
  faults->Add({Call::kDelete, Effect::kLoseRequest, path + "/", 4});
  auto fy = std::async(std::launch::async, [&] { return c[0]->election->Yield(); });
  ASSERT_TRUE(Eventually([&] { return faults->Calls(Call::kDelete, path + "/") >= 1; },
                         absl::Seconds(10)));
  absl::Status left = c[0]->election->Leave();
  // what is on the server right at Leave's return
  auto at_return = ChildList(path);
  std::sort(at_return.begin(), at_return.end());
  const int deletes_at_return = faults->Calls(Call::kDelete, path + "/");
  ASSERT_EQ(fy.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "Yield hung";
  absl::Status yielded = fy.get();
  std::printf("leave during retried yield: Leave=%s Yield=%s deletes sent by Leave's return=%d "
              "nodes before=[%s] at Leave's return=[%s]\n",
              left.ToString().c_str(), yielded.ToString().c_str(), deletes_at_return,
              absl::StrJoin(before, ",").c_str(), absl::StrJoin(at_return, ",").c_str());
  if (left.ok()) {
    EXPECT_EQ(at_return.size(), 1u)
        << "Leave() returned OK while the yielding leader's node was still there: "
        << absl::StrJoin(at_return, ",");
  }
  EXPECT_FALSE(c[0]->election->joined());
  EXPECT_TRUE(c[1]->election->AwaitLeadership(absl::Seconds(20)).ok());
  EXPECT_TRUE(testing::AwaitChildCount(admin(), path, 1));
  faults->Clear();
  for (auto& x : c) (void)x->election->Leave();
  c.clear();
}

// Attack 2g: the session is lost while Yield()'s delete is in flight.
// Yield promises the candidate queues again; with rejoin_after_loss (the
// default) it must be back in the queue on the next session, not stuck
// joined with no node.
TEST_F(Review37ElectionTest, AfterSessionLossDuringYieldTheCandidateQueuesAgain) {
  using Call = testing::FaultRule::Call;
  using Effect = testing::FaultRule::Effect;
  int stuck = 0;
  for (int round = 0; round < 3; ++round) {
    const std::string path = Path(absl::StrCat("election", round));
    auto faults = std::make_shared<testing::ClientFaults>();
    std::vector<std::unique_ptr<Cand>> c = LeaderAndFollower(path, faults);
    ASSERT_EQ(c.size(), 2u);
    // Yield's delete never reaches the server: it is retried until the
    // session is expired under it.
    faults->Add({Call::kDelete, Effect::kLoseRequest, path + "/", 1000});
    auto fy = std::async(std::launch::async, [&] { return c[0]->election->Yield(); });
    ASSERT_TRUE(Eventually([&] { return faults->Calls(Call::kDelete, path + "/") >= 1; },
                           absl::Seconds(10)));
    ASSERT_TRUE(testing::ExpireSession(*c[0]->session).ok());
    ASSERT_EQ(fy.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "Yield hung";
    absl::Status ys = fy.get();
    faults->Clear();
    EXPECT_TRUE(c[1]->election->AwaitLeadership(absl::Seconds(20)).ok());
    const bool requeued = testing::AwaitChildCount(admin(), path, 2, absl::Seconds(15));
    std::printf("session lost during yield: Yield=%s joined=%d requeued=%d nodes=[%s]\n",
                ys.ToString().c_str(), c[0]->election->joined(), requeued,
                absl::StrJoin(ChildList(path), ",").c_str());
    if (c[0]->election->joined()) {
      EXPECT_TRUE(requeued) << "round " << round << ": joined() but no node of c0 in the queue "
                            << "(Yield=" << ys << ")";
      if (!requeued) ++stuck;
    }
    for (auto& x : c) (void)x->election->Leave();
    c.clear();
    ASSERT_TRUE(testing::AwaitChildCount(admin(), path, 0));
  }
  EXPECT_EQ(stuck, 0);
}

// ---------------------------------------------------------------- item 3

class Recorder : public Observer {
 public:
  void OnQueued(const AcquisitionQueued& e) override { Add(e.who.node, "queued", e.who.path); }
  void OnHandoff(const Handoff& e) override { Add(e.who.node, "handoff", e.who.path); }
  void OnGranted(const AcquisitionGranted& e) override { Add(e.who.node, "granted", e.who.path); }
  void OnAcquireFailed(const AcquisitionFailed& e) override { Add(e.who.node, "failed", e.who.path); }
  void OnReleased(const Released& e) override { Add(e.who.node, "released", e.who.path); }
  void OnLost(const HoldLost& e) override {
    Add(e.who.node, e.session_lost ? "lost-session" : "lost-deleted", e.who.path);
  }
  std::map<std::string, std::vector<std::string>> Events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  int Count(const std::string& what) {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (auto& [k, v] : events_) n += std::count(v.begin(), v.end(), what);
    return n;
  }

 private:
  void Add(const std::string& node, const std::string& what, const std::string& path) {
    absl::MutexLock lock(&mu_);
    events_[node.empty() ? "<none>@" + path : node].push_back(what);
  }
  absl::Mutex mu_;
  std::map<std::string, std::vector<std::string>> events_;
};

// Per attempt node: queued? handoff* (granted (released|lost) | failed).
void ExpectCompleteAndInOrder(Recorder& recorder) {
  auto events = recorder.Events();
  int bad = 0;
  std::vector<std::string> notes;
  for (auto& [node, ev] : events) {
    if (node.rfind("<none>", 0) == 0) continue;  // try-acquires that made no node
    // state machine
    int state = 0;  // 0 start, 1 queued/waiting, 2 granted, 3 ended
    bool ok = true;
    for (const std::string& e : ev) {
      if (e == "queued") { ok &= state == 0; state = 1; }
      else if (e == "handoff") { ok &= state <= 1; state = 1; }
      else if (e == "granted") { ok &= state <= 1; state = 2; }
      else if (e == "failed") { ok &= state <= 1; state = 3; }
      else { ok &= state == 2; state = 3; }  // released / lost
    }
    ok &= state == 3 || node.rfind("<none>", 0) == 0;
    if (!ok) {
      ++bad;
      if (notes.size() < 10) notes.push_back(node + ": " + absl::StrJoin(ev, " "));
    }
  }
  EXPECT_EQ(bad, 0) << absl::StrJoin(notes, "\n");
}

// A held ExclusiveLock whose node an operator deletes reports kLost, with
// and without an observer on the session (the hold monitor's owner is now
// told through a weak interface pointer).
TEST_F(Review37Test, AHeldLockReportsLostWhenAnOperatorDeletesItsNode) {
  for (bool with_observer : {false, true}) {
    SCOPED_TRACE(with_observer ? "with observer" : "without observer");
    SessionOptions options = Options();
    auto recorder = std::make_shared<Recorder>();
    if (with_observer) options.observer = recorder;
    auto session = NewSession(options);
    const std::string p = Path(with_observer ? "obs" : "plain");
    std::atomic<int> lost_calls{0};
    LockOptions lo;
    lo.on_state_change = [&](LockState s) { if (s == LockState::kLost) ++lost_calls; };
    for (int round = 0; round < 5; ++round) {
      auto lock = ExclusiveLock::Create(*session, p, lo);
      auto held = (*lock)->Acquire(absl::Seconds(10));
      ASSERT_TRUE(held.ok()) << held.status();
      auto kids = admin().GetChildren(p);
      ASSERT_TRUE(kids.ok() && kids->size() == 1);
      ASSERT_TRUE(admin().Delete(p + "/" + kids->front()).ok());
      EXPECT_TRUE(Eventually([&] { return held->state() == LockState::kLost; }, absl::Seconds(10)))
          << "round " << round << ": " << LockStateName(held->state());
      EXPECT_TRUE(Eventually([&] { return lost_calls.load() == round + 1; }, absl::Seconds(10)))
          << "round " << round << ": kLost callbacks " << lost_calls.load();
      // the lock object goes first while the guard is alive, then the guard
      lock->reset();
      (void)held->Release();
    }
    if (with_observer) {
      EXPECT_TRUE(Eventually([&] { return recorder->Count("lost-deleted") == 5; }, absl::Seconds(10)))
          << recorder->Count("lost-deleted");
    }
  }
}

// Observer events stay complete and in order under contention, cancels,
// timeouts and an operator deleting holders' nodes: per attempt node,
// queued? handoff* (granted (released|lost) | failed), each grant ending
// in exactly one of released or lost.
TEST_F(Review37Test, ObserverEventsCompleteAndInOrderUnderChurn) {
  SessionOptions options = Options();
  auto recorder = std::make_shared<Recorder>();
  options.observer = recorder;
  const std::string p = Path("churn");
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<Session>> sessions;
  for (int i = 0; i < 3; ++i) sessions.push_back(NewSession(options));
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      std::mt19937 rng(i * 31 + 7);
      for (int round = 0; round < 25; ++round) {
        auto lock = SharedLock::Create(*sessions[i], p);
        const bool write = rng() % 2;
        const int ms = static_cast<int>(rng() % 40);
        auto held = write ? (*lock)->AcquireWrite(absl::Milliseconds(ms))
                          : (*lock)->AcquireRead(absl::Milliseconds(ms));
        if (held.ok()) {
          if (rng() % 3 == 0) lock->reset();  // destroy the lock while held
          (void)held->Release();
        }
      }
    });
  }
  // an operator deletes nodes at random while this runs
  std::thread op([&] {
    while (!stop.load()) {
      auto kids = admin().GetChildren(p);
      if (kids.ok() && !kids->empty()) (void)admin().Delete(p + "/" + kids->front());
      absl::SleepFor(absl::Milliseconds(3));  // operator pacing, not a race hider
    }
  });
  for (auto& t : threads) t.join();
  stop = true;
  op.join();
  // one round trip on each session so posted observer tasks have run
  for (auto& s : sessions) (void)s->Exists(root());
  sessions.clear();
  ExpectCompleteAndInOrder(*recorder);
  EXPECT_GT(recorder->Count("granted"), 0);
  std::printf("churn observer: granted %d failed %d released %d lost-deleted %d\n",
              recorder->Count("granted"), recorder->Count("failed"), recorder->Count("released"),
              recorder->Count("lost-deleted"));
}

// The same with multi-locks whose parts are granted, given back and asked
// for again, cancelled and timed out: every part attempt's events complete
// and in order.
TEST_F(Review37Test, ObserverEventsCompleteForMultiLockPartsGivenBackAndCancelled) {
  SessionOptions options = Options();
  auto recorder = std::make_shared<Recorder>();
  options.observer = recorder;
  const std::vector<std::string> paths = {Path("m0"), Path("m1"), Path("m2")};
  std::vector<std::unique_ptr<Session>> sessions;
  for (int i = 0; i < 3; ++i) sessions.push_back(NewSession(options));
  std::vector<std::thread> threads;
  std::atomic<int> grants{0};
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      std::mt19937 rng(i * 17 + 3);
      for (int round = 0; round < 15; ++round) {
        std::vector<LockPart> parts;
        for (const auto& p : paths) {
          if (rng() % 3 != 0) parts.push_back({p, rng() % 2 ? LockMode::kWrite : LockMode::kRead});
        }
        if (parts.empty()) parts.push_back({paths[0], LockMode::kWrite});
        auto multi = MultiLock::Create(*sessions[i], parts);
        if (!multi.ok()) continue;
        const int ms = static_cast<int>(rng() % 60);
        auto held = (*multi)->Acquire(absl::Milliseconds(ms));
        if (held.ok()) {
          ++grants;
          (void)held->Release();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& s : sessions) (void)s->Exists(root());
  sessions.clear();
  ExpectCompleteAndInOrder(*recorder);
  EXPECT_GT(recorder->Count("granted"), 0);
  EXPECT_GT(recorder->Count("failed"), 0);  // timeouts did happen
  std::printf("multi observer: granted %d failed %d released %d\n", recorder->Count("granted"),
              recorder->Count("failed"), recorder->Count("released"));
}

// Attack 3b: the lock object is destroyed while its guard is held, then an
// operator deletes the node: the guard must still learn it is lost (the
// hold monitor's owner is now reached through a weak pointer: a dead owner
// must not swallow the loss). Single lock and multi-lock, with and without
// an observer.
TEST_F(Review37Test, AGuardOutlivingItsLockStillReportsLost) {
  for (bool with_observer : {false, true}) {
    SCOPED_TRACE(with_observer ? "with observer" : "without observer");
    SessionOptions options = Options();
    auto recorder = std::make_shared<Recorder>();
    if (with_observer) options.observer = recorder;
    auto session = NewSession(options);
    const std::string p = Path(with_observer ? "obs" : "plain");
    const std::string q = Path(with_observer ? "obsq" : "plainq");
    std::atomic<int> lost_single{0}, lost_multi{0};
    {
      LockOptions lo;
      lo.on_state_change = [&](LockState s) { if (s == LockState::kLost) ++lost_single; };
      auto lock = ExclusiveLock::Create(*session, p, lo);
      auto held = (*lock)->Acquire(absl::Seconds(10));
      ASSERT_TRUE(held.ok()) << held.status();
      lock->reset();  // the lock goes; the guard stays
      auto kids = admin().GetChildren(p);
      ASSERT_TRUE(kids.ok() && kids->size() == 1);
      ASSERT_TRUE(admin().Delete(p + "/" + kids->front()).ok());
      const absl::Time deleted_at = absl::Now();
      EXPECT_TRUE(Eventually([&] { return held->state() == LockState::kLost; }, absl::Seconds(10)))
          << "single: " << LockStateName(held->state());
      std::printf("single%s: loss seen after %s\n", with_observer ? " (observer)" : "",
                  absl::FormatDuration(absl::Now() - deleted_at).c_str());
      EXPECT_TRUE(Eventually([&] { return lost_single.load() == 1; }, absl::Seconds(10)))
          << "single kLost callbacks " << lost_single.load();
      (void)held->Release();
    }
    {
      LockOptions lo;
      lo.on_state_change = [&](LockState s) { if (s == LockState::kLost) ++lost_multi; };
      auto multi = MultiLock::Create(*session, {{q, LockMode::kWrite}, {p, LockMode::kRead}}, lo);
      ASSERT_TRUE(multi.ok());
      auto held = (*multi)->Acquire(absl::Seconds(10));
      ASSERT_TRUE(held.ok()) << held.status();
      multi->reset();
      auto kids = admin().GetChildren(q);
      ASSERT_TRUE(kids.ok() && kids->size() == 1);
      ASSERT_TRUE(admin().Delete(q + "/" + kids->front()).ok());
      const absl::Time deleted_at = absl::Now();
      EXPECT_TRUE(Eventually([&] { return held->state() == LockState::kLost; }, absl::Seconds(10)))
          << "multi: " << LockStateName(held->state());
      std::printf("multi%s: loss seen after %s\n", with_observer ? " (observer)" : "",
                  absl::FormatDuration(absl::Now() - deleted_at).c_str());
      EXPECT_TRUE(Eventually([&] { return lost_multi.load() == 1; }, absl::Seconds(10)))
          << "multi kLost callbacks " << lost_multi.load();
      (void)held->Release();
    }
    if (with_observer) {
      EXPECT_TRUE(Eventually([&] { return recorder->Count("lost-deleted") == 2; }, absl::Seconds(10)))
          << "observer lost-deleted " << recorder->Count("lost-deleted");
    }
  }
}

// Attack 3c: Release and destruction from another thread while the
// guard's on_state_change(kLost) is running (it blocks, bounded, until the
// release has been started). Release must return (bounded), nothing is
// called after it returns, no crash.
TEST_F(Review37Test, ReleaseAndDestroyWhileOnStateChangeRuns) {
  auto session = NewSession();
  for (int round = 0; round < 5; ++round) {
    const std::string p = Path(absl::StrCat("cb", round));
    absl::Notification entered, proceed;
    std::atomic<bool> released{false};
    std::atomic<int> after_release{0};
    LockOptions lo;
    lo.on_state_change = [&](LockState s) {
      if (released.load()) ++after_release;
      if (s != LockState::kLost) return;
      entered.Notify();
      (void)proceed.WaitForNotificationWithTimeout(absl::Seconds(2));
    };
    auto lock = ExclusiveLock::Create(*session, p, lo);
    auto held = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held.ok()) << held.status();
    auto kids = admin().GetChildren(p);
    ASSERT_TRUE(kids.ok() && kids->size() == 1);
    ASSERT_TRUE(admin().Delete(p + "/" + kids->front()).ok());
    ASSERT_TRUE(entered.WaitForNotificationWithTimeout(absl::Seconds(10)));
    auto done = std::async(std::launch::async, [&] {
      absl::Status st = held->Release();
      released = true;
      lock->reset();
      return st;
    });
    proceed.Notify();
    ASSERT_EQ(done.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "Release hung";
    (void)done.get();
    // one round trip: any late callback would have been posted by now
    (void)session->Exists(root());
    EXPECT_EQ(after_release.load(), 0);
  }
}

// Attack 1f: the first part's node is deleted by an operator at a random
// moment around the grant of the last part (the holder of B lets go just
// before). Either Acquire fails Aborted naming A with nothing of ours left
// at return, or it succeeds and the guard reports kLost (bounded): never a
// guard that stays HELD with a part's node gone.
TEST_F(Review37Test, APartDeletedAroundTheGrantIsNeverSilentlyHeld) {
  std::mt19937 rng(static_cast<unsigned>(getpid()) ^ 0x5eed);
  auto session = NewSession();
  int aborted = 0, lost_after_grant = 0;
  for (int round = 0; round < 20; ++round) {
    const std::string a = Path(absl::StrCat("a", round)), b = Path(absl::StrCat("b", round)),
                      c = Path(absl::StrCat("c", round));
    auto holder = ExclusiveLock::Create(admin(), b);
    auto held_b = (*holder)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held_b.ok());
    auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite},
                                              {c, LockMode::kWrite}});
    ASSERT_TRUE(multi.ok());
    Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(20)); });
    ASSERT_TRUE(Eventually([&] { return Children(a) == 1 && Children(b) == 2; }, absl::Seconds(10)));
    const std::string a_node = a + "/" + ChildList(a).front();
    ASSERT_TRUE(held_b->Release().ok());
    absl::SleepFor(absl::Microseconds(rng() % 15000));  // a random moment around the grant
    ASSERT_TRUE(admin().Delete(a_node).ok());
    ASSERT_TRUE(ReadyIn(pending, absl::Seconds(25)));
    auto got = pending.get();
    if (got.ok()) {
      EXPECT_TRUE(Eventually([&] { return got->state() == LockState::kLost; }, absl::Seconds(10)))
          << "round " << round << ": granted, A's node gone, guard still "
          << LockStateName(got->state());
      ++lost_after_grant;
      (void)got->Release();
    } else {
      ++aborted;
      EXPECT_TRUE(absl::IsAborted(got.status())) << got.status();
      EXPECT_NE(got.status().message().find(a), absl::string_view::npos) << got.status();
      EXPECT_EQ(Children(a) + Children(b) + Children(c), 0u)
          << "round " << round << " at return: a " << absl::StrJoin(ChildList(a), ",") << " b "
          << absl::StrJoin(ChildList(b), ",") << " c " << absl::StrJoin(ChildList(c), ",");
    }
    EXPECT_TRUE(Eventually([&] { return Children(a) + Children(b) + Children(c) == 0; },
                           absl::Seconds(10)));
    multi->reset();
  }
  std::printf("part deleted around grant: aborted %d, lost after grant %d\n", aborted,
              lost_after_grant);
}

// Attack 1g: bad input to MultiLock::Create: each refused with
// InvalidArgument (nothing created), never a crash or a lock on a
// different path than asked.
TEST_F(Review37Test, BadMultiLockInputIsRefused) {
  auto session = NewSession();
  const std::string a = Path("a");
  const std::vector<std::vector<LockPart>> bad = {
      {},
      {{"", LockMode::kWrite}},
      {{"relative/path", LockMode::kWrite}},
      {{a + "/", LockMode::kWrite}},
      {{a, LockMode::kWrite}, {a, LockMode::kRead}},
      {{a, LockMode::kWrite}, {a + "/", LockMode::kWrite}},
      {{a + "//b", LockMode::kWrite}},
      {{a + "/./b", LockMode::kWrite}},
      {{a + "/../b", LockMode::kWrite}},
      {{a + "/x" + std::string(1, '\0') + "y", LockMode::kWrite}},
      {{"/", LockMode::kWrite}},
  };
  // Not promised either way (printed, not failed): the reserved /zookeeper
  // tree, and a LockMode value outside the enumerators.
  const std::vector<std::vector<LockPart>> doubtful = {
      {{"/zookeeper", LockMode::kWrite}},
      {{Path("m"), static_cast<LockMode>(7)}},
  };
  for (size_t i = 0; i < doubtful.size(); ++i) {
    auto multi = MultiLock::Create(*session, doubtful[i]);
    std::string what = multi.ok() ? "accepted" : multi.status().ToString();
    if (multi.ok()) {
      auto t = (*multi)->TryAcquire();
      what += t.ok() ? ", TryAcquire granted" : ", TryAcquire " + t.status().ToString();
      if (t.ok()) {
        what += absl::StrCat(", parts[0] mode ", static_cast<int>(t->parts()[0].mode));
        (void)t->Release();
      }
    }
    std::printf("doubtful case %zu: %s\n", i, what.c_str());
  }
  for (size_t i = 0; i < bad.size(); ++i) {
    auto multi = MultiLock::Create(*session, bad[i]);
    if (multi.ok()) {
      // If accepted, it must at least not lock something unexpected:
      // try once and give back.
      auto t = (*multi)->TryAcquire();
      ADD_FAILURE() << "case " << i << " accepted; TryAcquire: "
                    << (t.ok() ? "granted" : t.status().ToString());
      if (t.ok()) (void)t->Release();
    } else {
      EXPECT_TRUE(absl::IsInvalidArgument(multi.status())) << "case " << i << ": " << multi.status();
    }
  }
  auto kids = admin().GetChildren(root());
  if (kids.ok()) {  // only the doubtful case's directory may be there
    for (const auto& k : *kids) EXPECT_EQ(k, "m") << "created by a refused case";
  }
}

}  // namespace
}  // namespace zkr
