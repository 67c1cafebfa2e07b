// An independent adversarial review of commit a3d0b48 (helper-45): a lock
// object's attempts share its settings; a participant remembers its node
// by sequence number. Each test names the promise it attacks. Waits are on
// observable conditions; durations only bound hangs.
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "recipes/lock_data.h"
#include "recipes/participant.h"
#include "recipes/revoke_watch.h"
#include "src/session_access.h"
#include "tests/support/lock_fixture.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/revocation.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace {

using internal::LockNodeFields;
using internal::ParseLockNodeData;
using testing::LockTest;

class Review45Test : public LockTest {
 protected:
  // The lock directories are containers: the server removes them once
  // empty, on its own schedule. Wait for that (bounded) so the base
  // TearDown's check sees only nodes really left behind.
  // Lock directories are containers that the server removes on its own
  // schedule; delete each top-level directory of the test that holds no
  // ephemeral node (a real node left behind is left for the base check).
  void TearDown() override {
    auto tops = admin().GetChildren(root());
    if (tops.ok()) {
      for (const std::string& top : *tops) {
        const std::string dir = root() + "/" + top;
        auto below = testing::ListRecursively(admin(), dir);
        if (!below.ok()) continue;
        bool ephemeral = false;
        for (const std::string& p : *below) {
          auto stat = admin().Exists(p);
          if (stat.ok() && stat->has_value() && (*stat)->ephemeral_owner != 0) ephemeral = true;
        }
        if (!ephemeral) (void)testing::DeleteRecursively(admin(), dir);
      }
    }
    LockTest::TearDown();
  }
  std::string NodeData(const std::string& node_path) {
    auto data = admin().Get(node_path);
    EXPECT_TRUE(data.ok()) << node_path << ": " << data.status();
    return data.ok() ? *data : "";
  }
  LockNodeFields Fields(const std::string& node_path) {
    std::string data = NodeData(node_path);
    auto fields = ParseLockNodeData(data);
    EXPECT_TRUE(fields.has_value()) << "not lock data: " << data;
    return fields.value_or(LockNodeFields{});
  }
  static int64_t Ms(const std::string& text) {
    int64_t v = -1;
    EXPECT_TRUE(absl::SimpleAtoi(text, &v)) << text;
    return v;
  }
  // Lets the wall clock move on by `ms` (not a wait for the system: the
  // request time of a later attempt must be visibly later).
  static void ClockMovesOn(int ms) {
    const int64_t start = absl::ToUnixMillis(absl::Now());
    while (absl::ToUnixMillis(absl::Now()) < start + ms) absl::SleepFor(absl::Milliseconds(1));
  }
  static LockOptions NoDelay() {
    LockOptions o;
    o.own_node_watch_delay = absl::ZeroDuration();
    return o;
  }
  // The revocation `revoked` (a std::async of Revoke) ends with one outcome, `how`.
  template <class Future>
  static void ExpectOneOutcome(Future& revoked, RevokeOutcome::How how) {
    ASSERT_EQ(revoked.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    auto outcomes = revoked.get();
    ASSERT_TRUE(outcomes.ok()) << outcomes.status();
    ASSERT_EQ(outcomes->size(), 1u);
    EXPECT_EQ((*outcomes)[0].how, how);
  }
  // Revokes `node` (empty: every holder) under `path` with a short grace:
  // the holder `g` is forced out and reads kLost, and the waiter `next`
  // then holds; nothing is left once it releases.
  void ExpectForcedOutAndNextHolds(const std::string& path, const std::string& node,
                                   LockGuard& g,
                                   std::future<absl::StatusOr<LockGuard>>& next) {
    auto requester = NewSession();
    RevokeOptions ask;
    ask.grace = absl::Milliseconds(100);
    ask.node = node;
    auto revoked = std::async(std::launch::async, [&] { return Revoke(*requester, path, ask); });
    ExpectOneOutcome(revoked, RevokeOutcome::How::kForced);
    EXPECT_TRUE(testing::Eventually([&] { return g.state() == LockState::kLost; },
                                    absl::Seconds(10)));
    (void)g.Release();
    ASSERT_EQ(next.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    auto w = next.get();
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE(w->Release().ok());
    EXPECT_TRUE(WaitForChildren(path, 0));
  }
};

// Promise: the node data of each attempt shows its own mode and request
// time (lock_data.h; "made when sent"). One ExclusiveLock, two acquisitions.
TEST_F(Review45Test, SuccessiveAcquisitionsOfOneObjectEachShowTheirOwnRequestTime) {
  const std::string path = Path("two");
  LockOptions options;
  options.purpose = "first-and-second";
  auto lock = ExclusiveLock::Create(admin(), path, options);
  ASSERT_TRUE(lock.ok());
  int64_t last = 0;
  std::string last_node;
  for (int i = 0; i < 3; ++i) {
    const int64_t before = absl::ToUnixMillis(absl::Now());
    auto g = (*lock)->Acquire(absl::Seconds(10));
    const int64_t after = absl::ToUnixMillis(absl::Now());
    ASSERT_TRUE(g.ok()) << g.status();
    LockNodeFields f = Fields(g->node_path());
    EXPECT_EQ(f.mode, "write");
    EXPECT_EQ(f.purpose, "first-and-second");
    EXPECT_EQ(f.pid, absl::StrCat(getpid()));
    const int64_t requested = Ms(f.requested_ms);
    EXPECT_GE(requested, before) << "attempt " << i;
    EXPECT_LE(requested, after) << "attempt " << i;
    EXPECT_GT(requested, last) << "attempt " << i << " kept an older request time";
    EXPECT_NE(g->node_path(), last_node);
    last = requested;
    last_node = g->node_path();
    ASSERT_TRUE(g->Release().ok());
    ClockMovesOn(5);
  }
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise: a SharedLock object used for read then write shows mode=read,
// then mode=write (and a semaphore "lease"), each with its own time.
TEST_F(Review45Test, SharedLockReadThenWriteShowsEachMode) {
  const std::string path = Path("rw");
  auto lock = NewSharedLock(admin(), path);
  ASSERT_NE(lock, nullptr);
  auto r = lock->AcquireRead(absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  LockNodeFields fr = Fields(r->node_path());
  EXPECT_EQ(fr.mode, "read");
  EXPECT_TRUE(absl::StrContains(r->node_path(), "-R-")) << r->node_path();
  ASSERT_TRUE(r->Release().ok());
  ClockMovesOn(5);
  auto w = lock->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(w.ok()) << w.status();
  LockNodeFields fw = Fields(w->node_path());
  EXPECT_EQ(fw.mode, "write");
  EXPECT_TRUE(absl::StrContains(w->node_path(), "-W-")) << w->node_path();
  EXPECT_GT(Ms(fw.requested_ms), Ms(fr.requested_ms));
  // Async read after that, through the same object.
  ASSERT_TRUE(w->Release().ok());
  auto fut = lock->AcquireReadFuture();
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto r2 = fut.get();
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(Fields(r2->node_path()).mode, "read");
  ASSERT_TRUE(r2->Release().ok());
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise: semaphores of different weights through one object: each grant's
// node names its own weight ("-S<k>of<N>-") and the data says lease.
TEST_F(Review45Test, SemaphoreWeightsThroughOneObject) {
  const std::string path = Path("sem");
  auto sem = Semaphore::Create(admin(), path, 5);
  ASSERT_TRUE(sem.ok());
  for (int k : {1, 4, 5, 2}) {
    auto g = (*sem)->Acquire(k, absl::Seconds(10));
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_TRUE(absl::StrContains(g->node_path(), absl::StrCat("-S", k, "of5-")))
        << g->node_path();
    EXPECT_EQ(Fields(g->node_path()).mode, "lease");
    auto info = InspectQueue(admin(), path);
    ASSERT_TRUE(info.ok()) << info.status();
    ASSERT_EQ(info->size(), 1u);
    EXPECT_EQ((*info)[0].leases, k);
    EXPECT_EQ((*info)[0].semaphore_size, 5);
    ASSERT_TRUE(g->Release().ok());
  }
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise: purpose is free text stored as is (no newline): odd bytes
// (UTF-8, tabs, '=', NUL?) round-trip; a newline is refused with
// InvalidArgument; a purpose too large for a packet is refused before
// anything is sent, naming the create, on every attempt of the object.
TEST_F(Review45Test, PurposeWithOddBytesRoundTripsAndOversizeIsRefused) {
  const std::string path = Path("purpose");
  LockOptions odd;
  odd.purpose = "caf\xC3\xA9 \t key=value pid=1 mode=read \xF0\x9F\x94\x92";
  auto lock = ExclusiveLock::Create(admin(), path, odd);
  ASSERT_TRUE(lock.ok()) << lock.status();
  for (int i = 0; i < 2; ++i) {
    auto g = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(g.ok()) << g.status();
    LockNodeFields f = Fields(g->node_path());
    EXPECT_EQ(f.purpose, odd.purpose);
    EXPECT_EQ(f.mode, "write") << "a purpose's 'mode=' must not be read as the mode";
    ASSERT_TRUE(g->Release().ok());
  }
  LockOptions huge;
  huge.purpose = std::string(2 << 20, 'x');
  auto big = ExclusiveLock::Create(admin(), Path("huge"), huge);
  if (big.ok()) {
    for (int i = 0; i < 2; ++i) {
      auto g = (*big)->Acquire(absl::Seconds(5));
      EXPECT_TRUE(absl::IsInvalidArgument(g.status())) << g.status();
      EXPECT_TRUE(absl::StrContains(g.status().message(), "create in")) << g.status();
    }
    auto exists = admin().Exists(Path("huge"));
    ASSERT_TRUE(exists.ok());
    EXPECT_FALSE(exists->has_value()) << "the refused attempt left a directory";
  } else {
    EXPECT_TRUE(absl::IsInvalidArgument(big.status())) << big.status();
  }
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise (recipes/lock_data.h:4-5, "Purposes have no newline (the lock
// refuses one), so each field is one line"): a purpose with a newline is
// refused (InvalidArgument) — else a write lock's node reads as mode=read
// to `zkr inspect` / InspectQueue readers of the data.
TEST_F(Review45Test, PurposeWithNewlineIsRefused) {
  LockOptions newline;
  newline.purpose = "a\nmode=read";
  auto bad = ExclusiveLock::Create(admin(), Path("nl"), newline);
  if (bad.ok()) {
    auto g = (*bad)->Acquire(absl::Seconds(5));
    EXPECT_FALSE(g.ok()) << "a purpose with a newline was stored";
    if (g.ok()) {
      EXPECT_EQ(Fields(g->node_path()).mode, "write")
          << "the write lock's node data: " << NodeData(g->node_path());
      (void)g->Release();
    }
  } else {
    EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  }
}

// Promise: LockOptions::acl applies to the participant's node on every
// attempt: with digest auth and CreatorAllAcl(), another client cannot
// delete a holder's node (second attempt too).
TEST_F(Review45Test, AclHonouredByEveryAttempt) {
  const std::string path = Path("acl");
  SessionOptions alice_options = Options();
  alice_options.digest_auth = "alice:review45";
  auto alice = NewSession(alice_options);
  ASSERT_NE(alice, nullptr);
  LockOptions options;
  options.acl = CreatorAllAcl();
  auto lock = ExclusiveLock::Create(*alice, path, options);
  ASSERT_TRUE(lock.ok());
  for (int i = 0; i < 2; ++i) {
    auto g = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(g.ok()) << g.status();
    absl::Status del = admin().Delete(g->node_path());
    EXPECT_FALSE(del.ok()) << "attempt " << i << ": an unauthenticated client deleted the node";
    EXPECT_TRUE(g->held());
    ASSERT_TRUE(g->Release().ok());
  }
  EXPECT_TRUE(testing::DeleteRecursively(*alice, path).ok());
}

// Promise: watch_own_node / on_state_change on every attempt: the node of
// the object's SECOND hold deleted by an operator is reported kLost.
TEST_F(Review45Test, SecondHoldOfAnObjectStillReportsItsNodeDeleted) {
  const std::string path = Path("own");
  std::atomic<int> lost{0};
  LockOptions options = NoDelay();
  options.on_state_change = [&](LockState s) {
    if (s == LockState::kLost) ++lost;
  };
  auto holder = NewSession();
  auto lock = ExclusiveLock::Create(*holder, path, options);
  ASSERT_TRUE(lock.ok());
  auto g1 = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(g1.ok());
  ASSERT_TRUE(g1->Release().ok());
  for (int round = 0; round < 2; ++round) {
    auto g = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(g.ok()) << g.status();
    const int before = lost.load();
    // Wait until the own-node watch is set (the server lists it), then delete.
    ASSERT_TRUE(testing::Eventually([&] {
      for (const auto& p : testing::WatchedPaths(*holder, path))
        if (p == g->node_path()) return true;
      return false;
    }, absl::Seconds(10))) << "round " << round << ": no own-node watch on the later hold";
    ASSERT_TRUE(admin().Delete(g->node_path()).ok());
    EXPECT_TRUE(testing::Eventually([&] { return g->state() == LockState::kLost; },
                                    absl::Seconds(10)))
        << "round " << round << ": " << LockStateName(g->state());
    EXPECT_TRUE(testing::Eventually([&] { return lost.load() > before; }, absl::Seconds(10)));
    (void)g->Release();
  }
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise: watch_own_node=false: no own-node watch, on any attempt (and a
// long own_node_watch_delay holds on later attempts: no watch within it).
TEST_F(Review45Test, WatchOwnNodeFalseOnEveryAttempt) {
  const std::string path = Path("nowatch");
  LockOptions options;
  options.watch_own_node = false;
  options.own_node_watch_delay = absl::ZeroDuration();
  auto holder = NewSession();
  auto lock = NewSharedLock(*holder, path, options);
  for (int i = 0; i < 3; ++i) {
    auto g = i % 2 ? lock->AcquireRead(absl::Seconds(10)) : lock->AcquireWrite(absl::Seconds(10));
    ASSERT_TRUE(g.ok()) << g.status();
    // Two round trips for anything sent at the grant.
    (void)holder->Exists(path);
    std::vector<std::string> watched = testing::WatchedPaths(*holder, path);
    for (const auto& p : watched) {
      EXPECT_FALSE(absl::StartsWith(p, g->node_path())) << "attempt " << i << " watches " << p;
    }
    ASSERT_TRUE(g->Release().ok());
  }
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise: on_revoke_request is heard by every hold of the object, with the
// node path of THAT hold; the cooperative release ends Revoke kReleased.
TEST_F(Review45Test, RevokeRequestHeardByLaterHoldWithItsOwnNode) {
  const std::string path = Path("rev");
  absl::Mutex mu;
  std::vector<std::string> heard;
  LockOptions options = NoDelay();
  options.on_revoke_request = [&](const RevokeRequest& r) {
    absl::MutexLock l(&mu);
    heard.push_back(r.node_path);
  };
  auto holder = NewSession();
  auto lock = ExclusiveLock::Create(*holder, path, options);
  ASSERT_TRUE(lock.ok());
  auto requester = NewSession();
  for (int i = 0; i < 2; ++i) {
    auto g = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(g.ok()) << g.status();
    // Published timeout present from the start.
    EXPECT_TRUE(internal::PublishedSessionTimeout(NodeData(g->node_path())).has_value())
        << NodeData(g->node_path());
    RevokeOptions ask;
    ask.grace = absl::InfiniteDuration();
    ask.reason = absl::StrCat("round ", i);
    auto revoked = std::async(std::launch::async, [&] { return Revoke(*requester, path, ask); });
    const std::string node = g->node_path();
    EXPECT_TRUE(testing::Eventually([&] {
      absl::MutexLock l(&mu);
      return heard.size() == static_cast<size_t>(i + 1);
    }, absl::Seconds(10))) << "round " << i << ": request not heard";
    {
      absl::MutexLock l(&mu);
      if (heard.size() == static_cast<size_t>(i + 1)) {
        EXPECT_EQ(heard.back(), node);
      }
    }
    ASSERT_TRUE(g->Release().ok());
    ExpectOneOutcome(revoked, RevokeOutcome::How::kReleased);
  }
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise: dialect on every attempt: a kCurator ExclusiveLock's nodes are
// "_c_<uuid>-lock-<seq>" and hold the purpose alone, each time.
TEST_F(Review45Test, CuratorDialectOnEveryAttempt) {
  const std::string path = Path("curator");
  LockOptions options;
  options.dialect = Dialect::kCurator;
  options.purpose = "peer-id";
  auto lock = ExclusiveLock::Create(admin(), path, options);
  ASSERT_TRUE(lock.ok()) << lock.status();
  std::string last;
  for (int i = 0; i < 3; ++i) {
    auto g = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(g.ok()) << g.status();
    const std::string name = g->node_path().substr(path.size() + 1);
    EXPECT_TRUE(absl::StartsWith(name, "_c_")) << name;
    EXPECT_TRUE(absl::StrContains(name, "-lock-")) << name;
    EXPECT_EQ(NodeData(g->node_path()), "peer-id");
    EXPECT_NE(name, last);
    last = name;
    ASSERT_TRUE(g->Release().ok());
  }
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise (revocation.h, brief item 4): a semaphore participant with
// on_revoke_request that marks its node when acquiring keeps the published
// session timeout in its node; a force then works (kForced, holder kLost).
TEST_F(Review45Test, SemaphoreMarkKeepsPublishedTimeoutAndCanBeForced) {
  const std::string path = Path("semrev");
  auto holder_session = NewSession();
  LockOptions options = NoDelay();
  options.on_revoke_request = [](const RevokeRequest&) {};  // hears, never lets go
  // A waiter queued before the acquisition makes the acquirer mark: fill the
  // semaphore, queue our participant, release the filler.
  auto filler_session = NewSession();
  auto filler = Semaphore::Create(*filler_session, path, 2);
  ASSERT_TRUE(filler.ok());
  auto full = (*filler)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(full.ok());
  auto sem = Semaphore::Create(*holder_session, path, 2, options);
  ASSERT_TRUE(sem.ok());
  auto fut = (*sem)->AcquireFuture(1);
  ASSERT_TRUE(WaitForChildren(path, 2));
  auto other_session = NewSession();
  auto other = Semaphore::Create(*other_session, path, 2);
  auto behind = (*other)->AcquireFuture(2);
  ASSERT_TRUE(WaitForChildren(path, 3));
  ASSERT_TRUE(full->Release().ok());
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto g = fut.get();
  ASSERT_TRUE(g.ok()) << g.status();
  auto stat = admin().Exists(g->node_path());
  ASSERT_TRUE(stat.ok() && stat->has_value());
  const std::string data = NodeData(g->node_path());
  EXPECT_TRUE(internal::PublishedSessionTimeout(data).has_value())
      << "version " << (*stat)->version << " data: " << data;
  LockNodeFields f = Fields(g->node_path());
  EXPECT_EQ(f.mode, "lease");
  // Force it.
  ExpectForcedOutAndNextHolds(path, g->node_path().substr(path.size() + 1), *g, behind);
}

// Promise: a lost create reply is recovered by prefix: the hold's node is
// the one the server made, its fencing token is that node's czxid, and
// release leaves nothing (twice through the same object).
TEST_F(Review45Test, LostCreateReplyRecoveredNameTokenAndRelease) {
  const std::string path = Path("lost");
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  auto lock = NewSharedLock(*session, path);
  for (int i = 0; i < 2; ++i) {
    faults->Add({testing::FaultRule::Call::kCreate, testing::FaultRule::Effect::kDropReply,
                 path + "/", 1});
    auto g = i == 0 ? lock->AcquireWrite(absl::Seconds(20)) : lock->AcquireRead(absl::Seconds(20));
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_TRUE(faults->UsedUp());
    auto kids = Children(path);
    ASSERT_EQ(kids.size(), 1u);
    EXPECT_EQ(g->node_path(), path + "/" + kids[0]);
    auto stat = admin().Exists(g->node_path());
    ASSERT_TRUE(stat.ok() && stat->has_value());
    EXPECT_EQ(g->fencing_token(), (*stat)->czxid);
    EXPECT_EQ(Fields(g->node_path()).mode, i == 0 ? "write" : "read");
    ASSERT_TRUE(g->Release().ok());
    EXPECT_TRUE(WaitForChildren(path, 0));
  }
}

// Promise: a lost create with a revocation request for our node present
// during recovery: recovery names our node, not "<node>.revoke". The
// create's reply is lost and every listing of the directory is lost too
// (the engine retries) until the requester's request node exists; then the
// recovery listing sees both.
TEST_F(Review45Test, RecoveryWithRevokeRequestPresentNamesOurNode) {
  const std::string path = Path("recrev");
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  ASSERT_NE(session, nullptr);
  LockOptions options = NoDelay();
  std::atomic<int> heard{0};
  options.on_revoke_request = [&](const RevokeRequest&) { ++heard; };
  auto lock = ExclusiveLock::Create(*session, path, options);
  ASSERT_TRUE(lock.ok());
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kContainer).ok());
  faults->Add({testing::FaultRule::Call::kCreate, testing::FaultRule::Effect::kDropReply,
               path + "/", 1});
  faults->Add({testing::FaultRule::Call::kGetChildren, testing::FaultRule::Effect::kLoseRequest,
               path, 100000});
  auto fut = (*lock)->AcquireFuture();
  ASSERT_TRUE(WaitForChildren(path, 1)) << "create not applied";
  auto kids = Children(path);
  ASSERT_EQ(kids.size(), 1u);
  auto requester = NewSession();
  RevokeOptions ask;
  ask.grace = absl::InfiniteDuration();
  ask.node = kids[0];
  auto revoked = std::async(std::launch::async, [&] { return Revoke(*requester, path, ask); });
  ASSERT_TRUE(WaitForChildren(path, 2)) << "no request node";
  const int listings_lost = faults->Calls(testing::FaultRule::Call::kGetChildren, path);
  faults->Clear();
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto g = fut.get();
  ASSERT_TRUE(g.ok()) << g.status() << " (listings lost: " << listings_lost << ")";
  EXPECT_EQ(g->node_path(), path + "/" + kids[0]);
  auto stat = admin().Exists(path + "/" + kids[0]);
  ASSERT_TRUE(stat.ok() && stat->has_value());
  EXPECT_EQ(g->fencing_token(), (*stat)->czxid);
  EXPECT_TRUE(testing::Eventually([&] { return heard.load() >= 1; }, absl::Seconds(10)));
  ASSERT_TRUE(g->Release().ok());
  ExpectOneOutcome(revoked, RevokeOutcome::How::kReleased);
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise (participant.h, "Clean deletes what a given-up attempt may have
// created"; revocation.h "request nodes ... never block anyone"): the
// cleanup of a create whose outcome is unknown deletes OUR node by its
// unique prefix — not a revocation request "<node>.revoke" that starts
// with the same prefix. Drives Participant::DeleteChildGuaranteed directly
// with pairs (node, node.revoke) in one directory.
TEST_F(Review45Test, CleanupByPrefixDeletesOurNodeNotItsRevokeRequest) {
  const std::string dir = Path("byprefix");
  ASSERT_TRUE(admin().CreateParents(dir + "/x", false).ok());
  ASSERT_TRUE(admin().Create(dir, "", CreateMode::kPersistent).ok() ||
              admin().Exists(dir).ok());
  const auto& core = internal::CoreOf(admin());
  int wrong = 0;
  const int kPairs = 12;
  std::vector<std::string> prefixes;
  for (int i = 0; i < kPairs; ++i) {
    const std::string prefix = absl::StrCat("host_1_", 1000 + i * 7919, "abc-W-");
    auto made = admin().Create(dir + "/" + prefix, "", CreateMode::kEphemeralSequential);
    ASSERT_TRUE(made.ok()) << made.status();
    ASSERT_TRUE(admin().Create(made->path + ".revoke", "", CreateMode::kEphemeral).ok());
    prefixes.push_back(prefix);
  }
  for (const std::string& prefix : prefixes) {
    absl::Notification done;
    internal::Participant::DeleteChildGuaranteed(core, admin().generation(), dir, prefix,
                                                 [&](absl::Status) { done.Notify(); });
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  }
  for (const std::string& child : Children(dir)) {
    if (!absl::EndsWith(child, ".revoke")) {
      ++wrong;
      ADD_FAILURE() << "our node " << child << " left; its request deleted instead";
    }
  }
  EXPECT_EQ(wrong, 0) << "of " << kPairs;
  ASSERT_TRUE(testing::DeleteRecursively(admin(), dir).ok());
}

// The same end to end: an acquisition cancelled while its create's reply is
// held (outcome unknown) while a requester revokes its node: after the
// cancel, no node of ours is left and the request node is the requester's
// to delete (Revoke ends).
TEST_F(Review45Test, CancelWithUnknownCreateAndPendingRevokeLeavesNoNode) {
  const std::string path = Path("cancelrev");
  int failures = 0;
  for (int round = 0; round < 4; ++round) {
    auto faults = std::make_shared<testing::ClientFaults>();
    auto session = NewFaultySession(faults);
    ASSERT_NE(session, nullptr);
    LockOptions options = NoDelay();
    options.on_revoke_request = [](const RevokeRequest&) {};
    auto lock = ExclusiveLock::Create(*session, path, options);
    ASSERT_TRUE(lock.ok());
    (void)admin().Create(path, "", CreateMode::kContainer);
    faults->Add({testing::FaultRule::Call::kCreate, testing::FaultRule::Effect::kHoldReply,
                 path + "/", 1});
    std::atomic<int> calls{0};
    absl::Notification called;
    absl::Status result;
    (*lock)->AcquireAsync([&](absl::StatusOr<LockGuard> g) {
      result = g.status();
      if (g.ok()) (void)g->Release();
      ++calls;
      called.Notify();
    });
    ASSERT_TRUE(WaitForChildren(path, 1));
    auto kids = Children(path);
    ASSERT_EQ(kids.size(), 1u);
    auto requester = NewSession();
    RevokeOptions ask;
    ask.grace = absl::InfiniteDuration();
    ask.node = kids[0];
    auto revoked = std::async(std::launch::async, [&] { return Revoke(*requester, path, ask); });
    ASSERT_TRUE(WaitForChildren(path, 2)) << "no request node";
    (*lock)->Cancel();
    faults->ReleaseHeld();
    ASSERT_TRUE(called.WaitForNotificationWithTimeout(absl::Seconds(20)));
    // Our node must go (the cancelled attempt's cleanup).
    bool ours_gone = testing::Eventually([&] {
      for (const auto& c : Children(path))
        if (c == kids[0]) return false;
      return true;
    }, absl::Seconds(5));
    if (!ours_gone) {
      // Impact: the node is the earliest in the queue, so it blocks every
      // other participant for as long as our session lives.
      auto other_session = NewSession();
      auto other = ExclusiveLock::Create(*other_session, path);
      absl::Status blocked = (*other)->TryAcquire().status();
      ADD_FAILURE() << "round " << round << ": another session's TryAcquire while the "
                    << "cancelled attempt's node is left: " << blocked;
      ++failures;
      ADD_FAILURE() << "round " << round << ": cancelled attempt's node " << kids[0]
                    << " left (children: " << Children(path).size() << "), result "
                    << result;
    }
    // Revoke ends once the node goes (its request deleted by the requester).
    session->Close();  // frees the node in any case
    ASSERT_EQ(revoked.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    auto outcome = revoked.get();
    if (!ours_gone) {
      ADD_FAILURE() << "round " << round << ": Revoke returned "
                    << (outcome.ok() ? absl::StrCat(outcome->size(), " outcome(s), first ",
                                                    outcome->empty() ? "-" :
                                                    RevokeHowName((*outcome)[0].how))
                                     : outcome.status().ToString());
    }
    EXPECT_EQ(calls.load(), 1);
    requester->Close();
    ASSERT_TRUE(WaitForChildren(path, 0));
  }
  EXPECT_EQ(failures, 0);
}

// Promise (shared_lock.h / exclusive_lock.h): async completions run on the
// dispatcher thread, exactly once — also the refused ones ("another
// acquisition in progress") and the reentrant one.
TEST_F(Review45Test, AsyncRefusalsAndReentryRunOnDispatcherExactlyOnce) {
  const std::string path = Path("async");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, path);
  auto held = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto session = NewSession();
  auto lock = NewSharedLock(*session, path);
  const std::thread::id me = std::this_thread::get_id();
  std::atomic<int> first_calls{0}, second_calls{0};
  std::atomic<bool> second_on_caller{false};
  absl::Notification second_done, first_done;
  absl::Status second_status;
  std::optional<LockGuard> first_guard;
  absl::Mutex mu;
  lock->AcquireWriteAsync([&](absl::StatusOr<LockGuard> g) {
    ++first_calls;
    absl::MutexLock l(&mu);
    if (g.ok()) first_guard.emplace(std::move(*g));
    first_done.Notify();
  });
  ASSERT_TRUE(WaitForChildren(path, 2));
  lock->AcquireReadAsync([&](absl::StatusOr<LockGuard> g) {
    ++second_calls;
    second_on_caller = std::this_thread::get_id() == me;
    second_status = g.status();
    second_done.Notify();
  });
  ASSERT_TRUE(second_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(second_on_caller.load()) << "refusal delivered on the caller's thread";
  EXPECT_TRUE(absl::IsFailedPrecondition(second_status)) << second_status;
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(first_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // Reentrant read while holding write: downgrade, delivered on the dispatcher.
  absl::Notification re_done;
  std::atomic<bool> re_on_caller{false};
  std::optional<LockGuard> re_guard;
  lock->AcquireReadAsync([&](absl::StatusOr<LockGuard> g) {
    re_on_caller = std::this_thread::get_id() == me;
    absl::MutexLock l(&mu);
    if (g.ok()) re_guard.emplace(std::move(*g));
    re_done.Notify();
  });
  ASSERT_TRUE(re_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(re_on_caller.load());
  {
    absl::MutexLock l(&mu);
    ASSERT_TRUE(first_guard.has_value());
    ASSERT_TRUE(re_guard.has_value());
    EXPECT_EQ(re_guard->node_path(), first_guard->node_path());
    ASSERT_TRUE(first_guard->Release().ok());
    ASSERT_TRUE(re_guard->Release().ok());
  }
  EXPECT_EQ(first_calls.load(), 1);
  EXPECT_EQ(second_calls.load(), 1);
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise: AcquireAsync's done runs exactly once after Cancel, after the
// lock object is destroyed, and after the session is closed; the waiter's
// node and watches are gone (the audit at Close checks watches).
TEST_F(Review45Test, AsyncExactlyOnceAfterCancelDestroyAndClose) {
  const std::string path = Path("async2");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, path);
  auto held = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  for (int how = 0; how < 3; ++how) {
    auto session = NewSession();
    auto sem = Semaphore::Create(*session, path + "-sem", 1);
    ASSERT_TRUE(sem.ok());
    auto lock = ExclusiveLock::Create(*session, path);
    ASSERT_TRUE(lock.ok());
    std::atomic<int> calls{0};
    absl::Notification done;
    absl::Status status;
    (*lock)->AcquireAsync([&](absl::StatusOr<LockGuard> g) {
      status = g.status();
      ++calls;
      done.Notify();
    });
    ASSERT_TRUE(WaitForChildren(path, 2));
    if (how == 0) (*lock)->Cancel();
    if (how == 1) lock->reset();
    if (how == 2) session->Close();
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(15)))
        << "how " << how << ": no completion";
    EXPECT_FALSE(status.ok());
    EXPECT_TRUE(WaitForChildren(path, 1)) << "how " << how << ": waiter node left";
    // Done again? Give the dispatcher a round trip's chance.
    if (how != 2) (void)session->Exists(path);
    EXPECT_EQ(calls.load(), 1) << "how " << how;
    lock->reset();
    session.reset();
    EXPECT_EQ(calls.load(), 1) << "how " << how;
  }
  ASSERT_TRUE(held->Release().ok());
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise (semaphore.h): AcquireAsync of k leases, queued behind a full
// semaphore, then Cancel: done exactly once (Cancelled) on the dispatcher
// thread, its node gone; a refused second grant through the holding object
// is delivered on the dispatcher thread too; the object then takes another
// weight.
TEST_F(Review45Test, SemaphoreAsyncCancelRefusalAndNewWeight) {
  const std::string path = Path("semasync");
  auto filler_session = NewSession();
  auto filler = Semaphore::Create(*filler_session, path, 3);
  auto full = (*filler)->Acquire(3, absl::Seconds(10));
  ASSERT_TRUE(full.ok());
  auto session = NewSession();
  auto sem = Semaphore::Create(*session, path, 3);
  ASSERT_TRUE(sem.ok());
  const std::thread::id me = std::this_thread::get_id();
  std::atomic<int> calls{0};
  std::atomic<bool> on_caller{false};
  absl::Notification done;
  absl::Status status;
  (*sem)->AcquireAsync(2, [&](absl::StatusOr<LockGuard> g) {
    on_caller = std::this_thread::get_id() == me;
    status = g.status();
    ++calls;
    done.Notify();
  });
  ASSERT_TRUE(WaitForChildren(path, 2));
  (*sem)->Cancel();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_FALSE(on_caller.load());
  EXPECT_TRUE(WaitForChildren(path, 1));
  ASSERT_TRUE(full->Release().ok());
  auto g1 = (*sem)->Acquire(1, absl::Seconds(10));
  ASSERT_TRUE(g1.ok()) << g1.status();
  absl::Notification refused;
  absl::Status refusal;
  std::atomic<bool> refusal_on_caller{false};
  (*sem)->AcquireAsync(1, [&](absl::StatusOr<LockGuard> g) {
    refusal_on_caller = std::this_thread::get_id() == me;
    refusal = g.status();
    refused.Notify();
  });
  ASSERT_TRUE(refused.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(absl::IsFailedPrecondition(refusal)) << refusal;
  EXPECT_FALSE(refusal_on_caller.load());
  ASSERT_TRUE(g1->Release().ok());
  auto g3 = (*sem)->Acquire(3, absl::Seconds(10));
  ASSERT_TRUE(g3.ok()) << g3.status();
  EXPECT_TRUE(absl::StrContains(g3->node_path(), "-S3of3-")) << g3->node_path();
  ASSERT_TRUE(g3->Release().ok());
  EXPECT_EQ(calls.load(), 1);
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise: try-only is per attempt: TryAcquire, then a blocking Acquire
// through the same object waits (is not tried once); then TryAcquire while
// held elsewhere creates no node.
TEST_F(Review45Test, TryOnlyIsPerAttempt) {
  const std::string path = Path("tryonly");
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, path);
  ASSERT_TRUE(lock.ok());
  auto t = (*lock)->TryAcquire();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->Release().ok());
  auto other_session = NewSession();
  auto other = ExclusiveLock::Create(*other_session, path);
  auto held = (*other)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto fut = (*lock)->AcquireFuture();
  ASSERT_TRUE(WaitForChildren(path, 2)) << "the blocking attempt did not queue";
  EXPECT_EQ(fut.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "the blocking attempt ended without the lock";
  ASSERT_TRUE(held->Release().ok());
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto g = fut.get();
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(g->Release().ok());
  held = (*other)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  const int32_t cversion = ChildVersion(path);
  auto t2 = (*lock)->TryAcquire();
  EXPECT_TRUE(absl::IsDeadlineExceeded(t2.status())) << t2.status();
  EXPECT_EQ(ChildVersion(path), cversion) << "TryAcquire of a held lock created a node";
  ASSERT_TRUE(held->Release().ok());
  EXPECT_TRUE(WaitForChildren(path, 0));
}

// Promise (revocation.h + watch_own_node on every attempt): a later hold of
// an object with watch_own_node (no on_revoke_request) is forced: kForced,
// the hold reads kLost, the waiter gets in.
TEST_F(Review45Test, LaterHoldWithOwnNodeWatchIsForced) {
  const std::string path = Path("force2");
  auto holder_session = NewSession();
  auto lock = ExclusiveLock::Create(*holder_session, path, NoDelay());
  ASSERT_TRUE(lock.ok());
  auto first = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->Release().ok());
  auto g = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(internal::PublishedSessionTimeout(NodeData(g->node_path())).has_value());
  auto waiter_session = NewSession();
  auto waiter = ExclusiveLock::Create(*waiter_session, path);
  auto next = (*waiter)->AcquireFuture();
  ASSERT_TRUE(WaitForChildren(path, 2));
  ExpectForcedOutAndNextHolds(path, "", *g, next);
}

// Promise: MultiLock: an acquisition that cannot complete (one part held
// elsewhere) fails by deadline leaving no node of its own in ANY part, and
// a second acquisition through the same object then succeeds with fresh
// nodes whose data show write / read as asked.
TEST_F(Review45Test, MultiLockFailureCleansAndRetryShowsModes) {
  const std::string a = Path("ma"), b = Path("mb");
  auto other_session = NewSession();
  auto other = ExclusiveLock::Create(*other_session, b);
  auto held = (*other)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kRead}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  for (int i = 0; i < 3; ++i) {
    auto g = (*multi)->Acquire(absl::Milliseconds(300));
    EXPECT_TRUE(absl::IsDeadlineExceeded(g.status())) << g.status();
    EXPECT_TRUE(WaitForChildren(b, 1)) << "multi-lock left a node in b";
    auto ka = admin().GetChildren(a);
    EXPECT_TRUE(!ka.ok() || ka->empty()) << "multi-lock left a node in a";
  }
  ASSERT_TRUE(held->Release().ok());
  auto g = (*multi)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Fields(g->part(a)->node_path()).mode, "write");
  EXPECT_EQ(Fields(g->part(b)->node_path()).mode, "read");
  ASSERT_TRUE(g->Release().ok());
  EXPECT_TRUE(WaitForChildren(a, 0));
  EXPECT_TRUE(WaitForChildren(b, 0));
}

// Promise (election): candidate data and SetData survive a re-join after
// session loss: the new node carries the latest data.
TEST_F(Review45Test, ElectionRejoinCarriesLatestData) {
  const std::string path = Path("elect");
  auto session = NewSession();
  ElectionOptions options;
  options.id = "cand-1";
  options.data = "addr=old";
  auto election = LeaderElection::Create(*session, path, options);
  ASSERT_TRUE(election.ok()) << election.status();
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  ASSERT_TRUE((*election)->SetData("addr=new").ok());
  auto kids = Children(path);
  ASSERT_EQ(kids.size(), 1u);
  ASSERT_TRUE(testing::Eventually([&] {
    return absl::StrContains(NodeData(path + "/" + kids[0]), "addr=new");
  }, absl::Seconds(10)));
  const uint64_t generation = session->generation();
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(testing::Eventually([&] { return session->generation() > generation; },
                                  absl::Seconds(20)));
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(20)).ok());
  kids = Children(path);
  ASSERT_EQ(kids.size(), 1u);
  const std::string data = NodeData(path + "/" + kids[0]);
  EXPECT_TRUE(absl::StrContains(data, "addr=new")) << data;
  EXPECT_TRUE(absl::StrContains(data, "cand-1")) << data;
  EXPECT_FALSE(absl::StrContains(data, "pid=")) << "candidate data written as lock data: " << data;
  auto leader = (*election)->CurrentLeader();
  ASSERT_TRUE(leader.ok());
  ASSERT_TRUE((*election)->Leave().ok());
  EXPECT_TRUE(WaitForChildren(path, 0));
}

}  // namespace
}  // namespace zkr
