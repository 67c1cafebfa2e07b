// zkr::MultiLock against a real server: two multi-locks over the same pair
// in opposite orders neither deadlock nor overlap; a part that cannot be
// taken gives back the others; mixed modes; loss of one part is the loss of
// the whole, also while the others are still being taken; bad input;
// cancel; destruction during Acquire; huge timeouts; the deadline on the
// session's monotonic clock. Issue 37 item 5: a free set is taken in one
// transaction (and its fallbacks); a part that must wait leaves no node of ours under a later
// part's path; overlapping sets in opposite orders over many rounds.
#include "zkrecipes/multi_lock.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/support/directory_check.h"
#include "tests/support/fake_clock.h"
#include "tests/support/zk_test.h"
#include "src/testing/faulty_client.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using testing::ZkTest;
using testing::Eventually;
using testing::Ready;

class MultiLockTest : public ZkTest {
 protected:
  bool WaitForChildren(const std::string& path, size_t count) {
    return testing::AwaitChildCount(admin(), path, count);
  }
  // How many children `path` has (none if it is missing).
  size_t Children(const std::string& path) {
    auto children = admin().GetChildren(path);
    return children.ok() ? children->size() : 0;
  }
  // `path`'s one child node, full path ("" unless exactly one).
  std::string OnlyChild(const std::string& path) {
    auto children = admin().GetChildren(path);
    if (!children.ok() || children->size() != 1) return "";
    return path + "/" + children->front();
  }
};

using Pending = std::future<absl::StatusOr<MultiLockGuard>>;
bool Ready(Pending& pending, absl::Duration bound = absl::Seconds(30)) {
  return pending.wait_for(absl::ToChronoMilliseconds(bound)) == std::future_status::ready;
}

// Issue 37 item 5: the parts are given back in one transaction — one
// multi for the whole set, no delete of its own per part — and the nodes
// are gone once Release returns.
TEST_F(MultiLockTest, ThePartsAreReleasedInOneTransaction) {
  const std::string root = Path("together");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c", root + "/d"};
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kRead},
                                            {paths[2], LockMode::kWrite},
                                            {paths[3], LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(30));
  ASSERT_TRUE(held.ok()) << held.status();
  using Call = testing::FaultRule::Call;
  const int multis = faults->Calls(Call::kMulti, root + "/");
  ASSERT_TRUE(held->Release().ok());
  for (const std::string& path : paths) EXPECT_EQ(Children(path), 0u) << path;
  EXPECT_EQ(faults->Calls(Call::kDelete, root + "/"), 0);
  EXPECT_EQ(faults->Calls(Call::kMulti, root + "/") - multis, 1);
  for (const std::string& path : paths) ASSERT_TRUE(admin().Delete(path).ok());
  ASSERT_TRUE(admin().Delete(root).ok());
}

// The joint release's transaction is not applied — its reply lost with the
// connection (it may have been applied), or refused because an operator
// deleted one part's node — and each part is then released on its own:
// nothing is left, and Release reports what a part-by-part release would.
TEST_F(MultiLockTest, AJointReleaseThatFailsFallsBackToEachPart) {
  for (const bool operator_deletes : {false, true}) {
    SCOPED_TRACE(operator_deletes ? "a part deleted by an operator" : "the reply lost");
    const std::string root = Path(operator_deletes ? "fallback-deleted" : "fallback-lost");
    const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
    auto faults = std::make_shared<testing::ClientFaults>();
    auto session = NewFaultySession(faults);
    auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                              {paths[1], LockMode::kWrite},
                                              {paths[2], LockMode::kRead}});
    ASSERT_TRUE(multi.ok()) << multi.status();
    absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(30));
    ASSERT_TRUE(held.ok()) << held.status();
    if (operator_deletes) {
      ASSERT_TRUE(admin().Delete(OnlyChild(paths[1])).ok());
      ASSERT_TRUE(Eventually([&] { return held->state() == LockState::kLost; }));
    } else {
      faults->Add({testing::FaultRule::Call::kMulti, testing::FaultRule::Effect::kDropReply,
                   root + "/", 1});
    }
    const absl::Status released = held->Release();
    EXPECT_TRUE(released.ok()) << released;
    for (const std::string& path : paths) EXPECT_TRUE(WaitForChildren(path, 0)) << path;
    if (!operator_deletes) {
      EXPECT_TRUE(faults->UsedUp());
    }
    for (const std::string& path : paths) ASSERT_TRUE(admin().Delete(path).ok());
    ASSERT_TRUE(admin().Delete(root).ok());
  }
}

// Two sessions take {A, B} and {B, A} 25 times each, as fast as they can:
// every acquisition succeeds within its deadline (no deadlock: both take A
// first), and the ledger never sees both inside at once.
TEST_F(MultiLockTest, OppositeOrdersNeitherDeadlockNorOverlap) {
  const std::string a = Path("a"), b = Path("b");
  std::atomic<int> inside{0}, overlaps{0}, entries{0};
  auto run = [&](std::vector<LockPart> parts) {
    std::unique_ptr<Session> session = NewSession();
    auto multi = MultiLock::Create(*session, std::move(parts));
    ASSERT_TRUE(multi.ok()) << multi.status();
    for (int round = 0; round < 25; ++round) {
      absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(20));
      ASSERT_TRUE(held.ok()) << held.status();
      EXPECT_TRUE(held->held());
      if (inside.fetch_add(1) != 0) ++overlaps;
      std::this_thread::yield();
      inside.fetch_sub(1);
      ++entries;
      ASSERT_TRUE(held->Release().ok());
    }
  };
  std::thread forward(run, std::vector<LockPart>{{a, LockMode::kWrite}, {b, LockMode::kWrite}});
  std::thread backward(run, std::vector<LockPart>{{b, LockMode::kWrite}, {a, LockMode::kWrite}});
  forward.join();
  backward.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(entries.load(), 50);
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// Issue 37 item 5: a free set is taken in one transaction. The parts'
// creates go out as one multi, which also writes each part's (empty)
// directory: its Stat says how many children the directory has, so a part
// alone in its directory holds without a listing, and the Stat's zxid is the
// part's fencing token (its node's czxid). One request for the set.
TEST_F(MultiLockTest, AFreeSetIsTakenInOneTransaction) {
  const std::string root = Path("one-transaction");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c", root + "/d"};
  for (const std::string& path : paths) {
    CreateOptions options;
    options.make_parents = true;
    ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent, options).ok()) << path;
  }
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, {{paths[3], LockMode::kWrite},
                                            {paths[2], LockMode::kRead},
                                            {paths[1], LockMode::kWrite},
                                            {paths[0], LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(30));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(held->held());
  using Call = testing::FaultRule::Call;
  EXPECT_EQ(faults->Calls(Call::kMulti, root + "/"), 1);
  EXPECT_EQ(faults->Calls(Call::kCreate, root + "/"), 0);
  EXPECT_EQ(faults->Calls(Call::kGetChildren, root + "/"), 0);
  for (const std::string& path : paths) {
    const std::string node = OnlyChild(path);
    ASSERT_FALSE(node.empty()) << path;
    absl::StatusOr<std::optional<Stat>> stat = admin().Exists(node);
    ASSERT_TRUE(stat.ok() && stat->has_value()) << node;
    EXPECT_EQ(held->fencing_token(path), (*stat)->czxid) << path;
  }
  ASSERT_TRUE(held->Release().ok());
  for (const std::string& path : paths) {
    EXPECT_EQ(Children(path), 0u) << path;
    ASSERT_TRUE(admin().Delete(path).ok());
  }
  ASSERT_TRUE(admin().Delete(root).ok());
}

// Under a chroot the transaction's created paths are the session's (the
// chroot taken off), as a create's are: the parts name their nodes right,
// hold with their czxid as token, and give them back.
TEST_F(MultiLockTest, AFreeSetUnderAChroot) {
  const std::string root = Path("chrooted");
  CreateOptions parents;
  parents.make_parents = true;
  ASSERT_TRUE(admin().Create(root + "/a", "", CreateMode::kPersistent, parents).ok());
  ASSERT_TRUE(admin().Create(root + "/b", "", CreateMode::kPersistent, parents).ok());
  SessionOptions options = Options();
  options.connect += root;
  auto session = NewSession(options);
  auto multi = MultiLock::Create(*session, {{"/a", LockMode::kWrite}, {"/b", LockMode::kRead}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(30));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(held->held());
  for (const char* part : {"/a", "/b"}) {
    const std::string node = OnlyChild(root + part);
    ASSERT_FALSE(node.empty()) << part;
    absl::StatusOr<std::optional<Stat>> stat = admin().Exists(node);
    ASSERT_TRUE(stat.ok() && stat->has_value()) << node;
    EXPECT_EQ(held->fencing_token(part), (*stat)->czxid) << part;
    EXPECT_EQ(held->part(part)->node_path(), node.substr(root.size())) << part;
  }
  ASSERT_TRUE(held->Release().ok());
  for (const char* part : {"/a", "/b"}) {
    EXPECT_EQ(Children(root + part), 0u) << part;
    ASSERT_TRUE(admin().Delete(root + part).ok());
  }
  ASSERT_TRUE(admin().Delete(root).ok());
}

// The joint create falls back to each part on its own, and the set is
// still taken with one node per part and the right tokens: when its reply
// is lost (it was applied: each part finds its node by its unique id; also
// when the C client answers ZRUNTIMEINCONSISTENCY with a result per op), when
// a directory does not exist yet (first use), when the session may not
// write one directory's data (an ACL without WRITE), and when a directory
// holds more than our node (a foreign child: that part lists, and holds).
TEST_F(MultiLockTest, TheJointCreateFallsBackToEachPart) {
  enum class Case { kReplyLost, kFirstUse, kNoWrite, kForeignChild, kXidMismatch };
  for (const Case c : {Case::kReplyLost, Case::kFirstUse, Case::kNoWrite, Case::kForeignChild,
                       Case::kXidMismatch}) {
    const std::string root = Path(absl::StrCat("fallback-", static_cast<int>(c)));
    SCOPED_TRACE(root);
    const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
    if (c != Case::kFirstUse) {
      for (const std::string& path : paths) {
        CreateOptions options;
        options.make_parents = true;
        if (c == Case::kNoWrite && path == paths[1]) {
          options.acl = {{"world", "anyone", kPermAll & ~kPermWrite}};
        }
        ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent, options).ok()) << path;
      }
    }
    if (c == Case::kForeignChild) {
      ASSERT_TRUE(admin().Create(paths[1] + "/foreign", "", CreateMode::kPersistent).ok());
    }
    auto faults = std::make_shared<testing::ClientFaults>();
    if (c == Case::kReplyLost || c == Case::kXidMismatch) {
      // kXidMismatch: applied, and answered as the C client fails what is in
      // flight after a late reply: ZRUNTIMEINCONSISTENCY (-2), with a result
      // per op — a lost reply (maybe applied), not a refusal.
      faults->Add({testing::FaultRule::Call::kMulti, testing::FaultRule::Effect::kDropReply,
                   root + "/", 1, 0, c == Case::kXidMismatch ? -2 : 0});
    }
    auto session = NewFaultySession(faults);
    auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                              {paths[1], LockMode::kWrite},
                                              {paths[2], LockMode::kRead}});
    ASSERT_TRUE(multi.ok()) << multi.status();
    absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(30));
    ASSERT_TRUE(held.ok()) << held.status();
    EXPECT_TRUE(held->held());
    EXPECT_TRUE(faults->UsedUp());
    for (const std::string& path : paths) {
      absl::StatusOr<std::vector<std::string>> children = admin().GetChildren(path);
      ASSERT_TRUE(children.ok()) << children.status();
      std::vector<std::string> ours;
      for (const std::string& child : *children) {
        if (child != "foreign") ours.push_back(path + "/" + child);
      }
      ASSERT_EQ(ours.size(), 1u) << path;
      absl::StatusOr<std::optional<Stat>> stat = admin().Exists(ours[0]);
      ASSERT_TRUE(stat.ok() && stat->has_value()) << ours[0];
      EXPECT_EQ(held->fencing_token(path), (*stat)->czxid) << path;
    }
    ASSERT_TRUE(held->Release().ok());
    if (c == Case::kForeignChild) {
      ASSERT_TRUE(admin().Delete(paths[1] + "/foreign").ok());
    }
    for (const std::string& path : paths) {
      EXPECT_TRUE(WaitForChildren(path, 0)) << path;
      ASSERT_TRUE(admin().Delete(path).ok());
    }
    ASSERT_TRUE(admin().Delete(root).ok());
  }
}

// A directory the session may not write (an ACL without WRITE) refuses the
// joint create every time: the MultiLock remembers that and asks for each
// part on its own from then on, rather than paying a refused transaction
// and a round trip on every acquisition. A directory missing on first use
// is not remembered: the next acquisition is one transaction again.
TEST_F(MultiLockTest, AMultiLockRemembersADirectoryItMayNotWrite) {
  for (const bool no_write : {true, false}) {
    const std::string root = Path(no_write ? "remember-no-write" : "remember-first-use");
    SCOPED_TRACE(root);
    const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
    if (no_write) {
      for (const std::string& path : paths) {
        CreateOptions options;
        options.make_parents = true;
        if (path == paths[1]) options.acl = {{"world", "anyone", kPermAll & ~kPermWrite}};
        ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent, options).ok()) << path;
      }
    }
    auto faults = std::make_shared<testing::ClientFaults>();
    auto session = NewFaultySession(faults);
    auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                              {paths[1], LockMode::kWrite},
                                              {paths[2], LockMode::kRead}});
    ASSERT_TRUE(multi.ok()) << multi.status();
    using Call = testing::FaultRule::Call;
    for (int round = 0; round < 3; ++round) {
      SCOPED_TRACE(absl::StrCat("round ", round));
      const int multis = faults->Calls(Call::kMulti, root + "/");
      absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(30));
      ASSERT_TRUE(held.ok()) << held.status();
      // The first round sends the transaction (refused either way); later
      // rounds send it only where it can succeed.
      EXPECT_EQ(faults->Calls(Call::kMulti, root + "/") - multis, round == 0 || !no_write ? 1 : 0);
      for (const std::string& path : paths) EXPECT_EQ(Children(path), 1u) << path;
      ASSERT_TRUE(held->Release().ok());
    }
    for (const std::string& path : paths) {
      EXPECT_TRUE(WaitForChildren(path, 0)) << path;
      ASSERT_TRUE(admin().Delete(path).ok());
    }
    ASSERT_TRUE(admin().Delete(root).ok());
  }
}

// Issue 37 item 5: B is held elsewhere. The multi-lock over {A, B, C, D}
// queues on B and, while it waits there, keeps no node under C or D (the
// parts after the one it waits for: it gave them back) — but keeps A.
// Once B is freed it takes C and D again and the set is granted.
TEST_F(MultiLockTest, WhileAPartWaitsNoNodeStaysUnderALaterPart) {
  const std::string a = Path("a"), b = Path("b"), c = Path("c"), d = Path("d");
  auto holder = ExclusiveLock::Create(admin(), b);
  ASSERT_TRUE(holder.ok());
  auto held_b = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok()) << held_b.status();
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite},
                                            {b, LockMode::kWrite},
                                            {c, LockMode::kWrite},
                                            {d, LockMode::kRead}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(WaitForChildren(b, 2)) << "not queued on B";
  // What was created under C and D (sent with B's create) is given back.
  EXPECT_TRUE(WaitForChildren(c, 0)) << "a node of ours stays under C while B waits";
  EXPECT_TRUE(WaitForChildren(d, 0)) << "a node of ours stays under D while B waits";
  // ... and stays so while B waits: a round trip of ours later, still none.
  ASSERT_TRUE(session->Exists(root()).ok());
  EXPECT_EQ(pending.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  EXPECT_EQ(Children(c), 0u);
  EXPECT_EQ(Children(d), 0u);
  EXPECT_TRUE(WaitForChildren(a, 1)) << "A, before B, is kept while B waits";
  EXPECT_EQ(admin().GetChildren(b)->size(), 2u);
  ASSERT_TRUE(held_b->Release().ok());
  ASSERT_TRUE(Ready(pending));
  absl::StatusOr<MultiLockGuard> all = pending.get();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE(all->held());
  for (const std::string& path : {a, b, c, d}) EXPECT_EQ(Children(path), 1u) << path;
  ASSERT_TRUE(all->Release().ok());
  for (const std::string& path : {a, b, c, d}) {
    EXPECT_TRUE(WaitForChildren(path, 0)) << path;
    ASSERT_TRUE(admin().Delete(path).ok());
  }
}

// Issue 37 item 5: two multi-locks over overlapping sets — {A, B, C, D} and
// {E, D, C, B}, given in opposite orders — from two sessions, 40 rounds each
// as fast as they can, with a third session's single lock on C now and then:
// every acquisition succeeds within its deadline (no deadlock), and the
// ledger never sees two inside at once.
TEST_F(MultiLockTest, OverlappingSetsInOppositeOrdersManyRounds) {
  const std::string a = Path("a"), b = Path("b"), c = Path("c"), d = Path("d"), e = Path("e");
  std::atomic<int> inside{0}, overlaps{0}, entries{0};
  auto enter = [&] {
    if (inside.fetch_add(1) != 0) ++overlaps;
    std::this_thread::yield();
    inside.fetch_sub(1);
    ++entries;
  };
  auto run = [&](std::vector<LockPart> parts) {
    std::unique_ptr<Session> session = NewSession();
    auto multi = MultiLock::Create(*session, std::move(parts));
    ASSERT_TRUE(multi.ok()) << multi.status();
    for (int round = 0; round < 40; ++round) {
      absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(30));
      ASSERT_TRUE(held.ok()) << "round " << round << ": " << held.status();
      EXPECT_TRUE(held->held());
      enter();
      ASSERT_TRUE(held->Release().ok());
    }
  };
  auto single = [&] {
    std::unique_ptr<Session> session = NewSession();
    auto lock = ExclusiveLock::Create(*session, c);
    ASSERT_TRUE(lock.ok()) << lock.status();
    for (int round = 0; round < 20; ++round) {
      auto held = (*lock)->Acquire(absl::Seconds(30));
      ASSERT_TRUE(held.ok()) << "round " << round << ": " << held.status();
      enter();
      ASSERT_TRUE(held->Release().ok());
    }
  };
  std::thread forward(run, std::vector<LockPart>{{a, LockMode::kWrite},
                                                 {b, LockMode::kWrite},
                                                 {c, LockMode::kWrite},
                                                 {d, LockMode::kWrite}});
  std::thread backward(run, std::vector<LockPart>{{e, LockMode::kWrite},
                                                  {d, LockMode::kWrite},
                                                  {c, LockMode::kWrite},
                                                  {b, LockMode::kWrite}});
  std::thread third(single);
  forward.join();
  backward.join();
  third.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(entries.load(), 100);
  for (const std::string& path : {a, b, c, d, e}) {
    EXPECT_TRUE(WaitForChildren(path, 0)) << path;
    ASSERT_TRUE(admin().Delete(path).ok());
  }
}

// B is held elsewhere: {A, B} times out naming B, and A — taken first —
// is given back before Acquire returns (no node left under A).
TEST_F(MultiLockTest, APartThatCannotBeTakenGivesBackTheOthers) {
  const std::string a = Path("a"), b = Path("b");
  auto holder = ExclusiveLock::Create(admin(), b);
  ASSERT_TRUE(holder.ok());
  auto held_b = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{b, LockMode::kWrite}, {a, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<MultiLockGuard> both = (*multi)->Acquire(absl::Milliseconds(400));
  EXPECT_TRUE(absl::IsDeadlineExceeded(both.status())) << both.status();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(400));
  EXPECT_NE(both.status().message().find(b), absl::string_view::npos) << both.status();
  EXPECT_TRUE(admin().GetChildren(a)->empty()) << "part A was left held";
  EXPECT_EQ(admin().GetChildren(b)->size(), 1u);
  // Try: the same, at once.
  absl::StatusOr<MultiLockGuard> tried = (*multi)->TryAcquire();
  EXPECT_TRUE(absl::IsDeadlineExceeded(tried.status())) << tried.status();
  EXPECT_TRUE(admin().GetChildren(a)->empty());
  ASSERT_TRUE(held_b->Release().ok());
  absl::StatusOr<MultiLockGuard> now = (*multi)->TryAcquire();
  ASSERT_TRUE(now.ok()) << now.status();
  ASSERT_TRUE(now->Release().ok());
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// {A read, B write}: another reader of A gets in beside it, a writer of B
// does not; each part has its own fencing token.
TEST_F(MultiLockTest, MixedModesAndPerPartTokens) {
  const std::string a = Path("a"), b = Path("b");
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kRead}, {b, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_GT(held->fencing_token(a), 0);
  EXPECT_GT(held->fencing_token(b), 0);
  EXPECT_NE(held->fencing_token(a), held->fencing_token(b));
  EXPECT_EQ(held->fencing_token(Path("other")), 0);
  EXPECT_FALSE(held->part(a)->is_write());
  EXPECT_TRUE(held->part(b)->is_write());
  auto other = SharedLock::Create(admin(), a);
  auto reader = (*other)->TryAcquireRead();
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto writer = ExclusiveLock::Create(admin(), b);
  EXPECT_TRUE(absl::IsDeadlineExceeded((*writer)->TryAcquire().status()));
  ASSERT_TRUE(reader->Release().ok());
  ASSERT_TRUE(held->Release().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(held->Release()));
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// One part's node deleted by an operator: the guard (and on_state_change)
// says LOST for the whole set.
TEST_F(MultiLockTest, LosingOnePartLosesTheWhole) {
  const std::string a = Path("a"), b = Path("b");
  auto session = NewSession();
  absl::Mutex mu;
  std::vector<LockState> seen;
  LockOptions options;
  options.own_node_watch_delay = absl::ZeroDuration();
  options.on_state_change = [&](LockState state) {
    absl::MutexLock lock(&mu);
    seen.push_back(state);
  };
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}}, options);
  ASSERT_TRUE(multi.ok());
  absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE(admin().Delete(held->part(b)->node_path()).ok());
  for (int i = 0; i < 400 && held->state() != LockState::kLost; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(held->state(), LockState::kLost);
  {
    // The listener runs on the dispatcher thread: wait for it.
    absl::MutexLock lock(&mu);
    auto told = [&seen]() { return !seen.empty(); };
    mu.AwaitWithTimeout(absl::Condition(&told), absl::Seconds(5));
    EXPECT_EQ(seen, std::vector<LockState>{LockState::kLost});
  }
  ASSERT_TRUE(held->Release().ok());  // A's node deleted; B's already gone
  EXPECT_TRUE(admin().GetChildren(a)->empty());
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// Cancel() from another thread ends a waiting Acquire (Cancelled), and what
// it had taken is given back. Bad input is refused, naming the problem.
TEST_F(MultiLockTest, CancelAndBadInput) {
  const std::string a = Path("a"), b = Path("b");
  auto holder = ExclusiveLock::Create(admin(), b);
  auto held_b = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  std::thread canceller([&] {
    // We wait on B now, A taken (the parts are asked for together: B's
    // node may come first, A's directory being created on first use).
    ASSERT_TRUE(WaitForChildren(b, 2));
    ASSERT_TRUE(WaitForChildren(a, 1));
    (*multi)->Cancel();
  });
  absl::StatusOr<MultiLockGuard> both = (*multi)->Acquire();
  canceller.join();
  EXPECT_TRUE(absl::IsCancelled(both.status())) << both.status();
  EXPECT_TRUE(admin().GetChildren(a)->empty());
  EXPECT_TRUE(WaitForChildren(b, 1));
  ASSERT_TRUE(held_b->Release().ok());

  EXPECT_TRUE(absl::IsInvalidArgument(MultiLock::Create(*session, {}).status()));
  absl::Status twice = MultiLock::Create(*session, {{a, LockMode::kRead}, {a, LockMode::kWrite}})
                           .status();
  EXPECT_TRUE(absl::IsInvalidArgument(twice));
  EXPECT_NE(twice.message().find(a), absl::string_view::npos) << twice;
  absl::Status bad = MultiLock::Create(*session, {{a, LockMode::kRead}, {"no-slash", LockMode::kWrite}})
                         .status();
  EXPECT_TRUE(absl::IsInvalidArgument(bad));
  EXPECT_NE(bad.message().find("no-slash"), absl::string_view::npos) << bad;
  // A mode that is neither read nor write (a cast integer) is refused, named
  // with its path, not taken as one of them (the review of issue 37).
  absl::Status mode = MultiLock::Create(*session, {{a, LockMode::kRead},
                                                   {b, static_cast<LockMode>(7)}})
                          .status();
  EXPECT_TRUE(absl::IsInvalidArgument(mode)) << mode;
  EXPECT_NE(mode.message().find(b), absl::string_view::npos) << mode;
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// Issue 31 item 1: A is taken, the multi-lock waits on B; A's node is
// deleted (an operator, a forced revocation); B is freed. Acquire must not
// return OK with A lost: it gives back everything and fails (Aborted) naming
// A, leaves no node under A or B, and never calls on_state_change (nothing
// was granted).
TEST_F(MultiLockTest, APartLostWhileWaitingGivesBackEverythingAndFails) {
  const std::string a = Path("a"), b = Path("b");
  auto holder = ExclusiveLock::Create(admin(), b);
  auto held_b = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok()) << held_b.status();
  auto session = NewSession();
  absl::Mutex mu;
  std::vector<LockState> seen;
  LockOptions options;
  options.own_node_watch_delay = absl::ZeroDuration();  // A's watch armed before B is queued
  options.on_state_change = [&](LockState state) {
    absl::MutexLock lock(&mu);
    seen.push_back(state);
  };
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}}, options);
  ASSERT_TRUE(multi.ok());
  Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(WaitForChildren(b, 2));  // waiting on B ...
  ASSERT_TRUE(WaitForChildren(a, 1));  // ... A asked for at the same time
  const std::string a_node = OnlyChild(a);
  ASSERT_FALSE(a_node.empty());
  ASSERT_TRUE(admin().Delete(a_node).ok());
  ASSERT_TRUE(held_b->Release().ok());
  ASSERT_TRUE(Ready(pending));
  absl::StatusOr<MultiLockGuard> both = pending.get();
  EXPECT_TRUE(absl::IsAborted(both.status()))
      << both.status() << (both.ok() ? " state " + std::string(LockStateName(both->state())) : "");
  EXPECT_NE(both.status().message().find(a), absl::string_view::npos) << both.status();
  if (both.ok()) (void)both->Release();
  EXPECT_TRUE(admin().GetChildren(a)->empty());
  EXPECT_TRUE(WaitForChildren(b, 0));
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(seen.empty()) << "on_state_change called " << seen.size() << " times";
  }
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// Issue 31 item 1: a part lost while waiting ends the wait for the rest at
// once (B stays held elsewhere throughout): Aborted naming A, nothing left.
TEST_F(MultiLockTest, APartLostWhileWaitingFailsWithoutWaitingForTheRest) {
  const std::string a = Path("a"), b = Path("b");
  auto holder = ExclusiveLock::Create(admin(), b);
  auto held_b = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok()) << held_b.status();
  auto session = NewSession();
  LockOptions options;
  options.own_node_watch_delay = absl::ZeroDuration();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}}, options);
  ASSERT_TRUE(multi.ok());
  Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(WaitForChildren(b, 2));
  ASSERT_TRUE(WaitForChildren(a, 1));
  const std::string a_node = OnlyChild(a);
  ASSERT_FALSE(a_node.empty());
  ASSERT_TRUE(admin().Delete(a_node).ok());
  const bool ended_while_b_held = Ready(pending);
  EXPECT_TRUE(ended_while_b_held) << "Acquire still waits for B with A lost";
  if (!ended_while_b_held) {
    ASSERT_TRUE(held_b->Release().ok());
  }
  absl::StatusOr<MultiLockGuard> both = pending.get();
  EXPECT_TRUE(absl::IsAborted(both.status())) << both.status();
  EXPECT_NE(both.status().message().find(a), absl::string_view::npos) << both.status();
  if (both.ok()) (void)both->Release();
  EXPECT_TRUE(admin().GetChildren(a)->empty());
  EXPECT_TRUE(WaitForChildren(b, ended_while_b_held ? 1 : 0));
  if (ended_while_b_held) {
    ASSERT_TRUE(held_b->Release().ok());
  }
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// Issue 31 item 14: a timeout of 300 years waits (it does not overflow
// into "already past"): the multi-lock queues on B and gets it once B is
// released.
TEST_F(MultiLockTest, AHugeTimeoutWaits) {
  const std::string a = Path("a"), b = Path("b");
  auto holder = ExclusiveLock::Create(admin(), b);
  auto held_b = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok()) << held_b.status();
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  const absl::Duration centuries = absl::Hours(24 * 365) * 300;
  Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(centuries); });
  EXPECT_TRUE(WaitForChildren(b, 2)) << "not queued on B";
  ASSERT_TRUE(held_b->Release().ok());
  ASSERT_TRUE(Ready(pending));
  absl::StatusOr<MultiLockGuard> both = pending.get();
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_TRUE(both->held());
  ASSERT_TRUE(both->Release().ok());
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// Issue 31 item 17: the MultiLock destroyed while another thread waits in
// its Acquire: that Acquire ends (Cancelled), A is given back, B's waiting
// node goes; no use after free (the multi-lock's state outlives the object
// while an acquisition runs; AddressSanitizer build: ZKR_SANITIZE).
TEST_F(MultiLockTest, DestroyedWhileAnotherThreadAcquires) {
  const std::string a = Path("a"), b = Path("b");
  auto holder = ExclusiveLock::Create(admin(), b);
  auto held_b = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok()) << held_b.status();
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kRead}});
  ASSERT_TRUE(multi.ok());
  MultiLock* raw = multi->get();
  Pending pending = std::async(std::launch::async, [raw] { return raw->Acquire(); });
  ASSERT_TRUE(WaitForChildren(b, 2));
  ASSERT_TRUE(WaitForChildren(a, 1));  // asked for with B: its directory is there
  multi->reset();
  ASSERT_TRUE(Ready(pending));
  absl::StatusOr<MultiLockGuard> both = pending.get();
  EXPECT_TRUE(absl::IsCancelled(both.status())) << both.status();
  EXPECT_TRUE(admin().GetChildren(a)->empty());
  EXPECT_TRUE(WaitForChildren(b, 1));
  ASSERT_TRUE(held_b->Release().ok());
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// Issue 31 item 21: the deadline is on the session's monotonic clock, not
// the wall clock. Monotonic time jumps two hours (a paused process) while
// the multi-lock waits on B with a one-hour timeout; B is freed, C is held
// elsewhere: DeadlineExceeded, and A and B are given back. (It names C if
// B's grant is heard before the deadline is noticed, else B: the parts are
// asked for together, and the first event after the jump may be either.)
TEST_F(MultiLockTest, TheDeadlineIsOnTheSessionsMonotonicClock) {
  const std::string a = Path("a"), b = Path("b"), c = Path("c");
  auto holder_b = ExclusiveLock::Create(admin(), b);
  auto holder_c = ExclusiveLock::Create(admin(), c);
  auto held_b = (*holder_b)->Acquire(absl::Seconds(10));
  auto held_c = (*holder_c)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok() && held_c.ok());
  auto clock = std::make_shared<testing::FakeClock>();
  SessionOptions session_options = Options();
  session_options.clock = clock;
  auto session = NewSession(session_options);
  auto multi = MultiLock::Create(
      *session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}, {c, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Hours(1)); });
  ASSERT_TRUE(WaitForChildren(b, 2));  // waiting on B, A taken, C given back
  ASSERT_TRUE(WaitForChildren(a, 1));
  ASSERT_TRUE(WaitForChildren(c, 1));
  clock->AdvanceMonotonic(absl::Hours(2));
  ASSERT_TRUE(held_b->Release().ok());
  const bool ended = Ready(pending);
  EXPECT_TRUE(ended) << "still waiting on C past the deadline on the session's clock";
  if (!ended) (*multi)->Cancel();
  absl::StatusOr<MultiLockGuard> all = pending.get();
  EXPECT_TRUE(absl::IsDeadlineExceeded(all.status())) << all.status();
  EXPECT_TRUE(all.status().message().find(c) != absl::string_view::npos ||
              all.status().message().find(b) != absl::string_view::npos)
      << all.status();
  EXPECT_TRUE(admin().GetChildren(a)->empty());
  EXPECT_TRUE(WaitForChildren(b, 0));
  EXPECT_TRUE(WaitForChildren(c, 1));
  ASSERT_TRUE(held_c->Release().ok());
  for (const std::string& path : {a, b, c}) ASSERT_TRUE(admin().Delete(path).ok());
}

// A waiting Acquire from a callback on the session's dispatcher thread —
// where the parts' grants are delivered — is refused at once
// (FailedPrecondition) instead of waiting for itself for ever; TryAcquire
// works there.
TEST_F(MultiLockTest, AWaitingAcquireOnTheDispatcherThreadIsRefused) {
  const std::string a = Path("a"), b = Path("b");
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  std::promise<std::pair<absl::Status, absl::Status>> outcome;
  session->ExistsAsync(root(), [&](absl::StatusOr<std::optional<Stat>>) {
    absl::StatusOr<MultiLockGuard> waited = (*multi)->Acquire(absl::Seconds(5));
    absl::StatusOr<MultiLockGuard> tried = (*multi)->TryAcquire();
    if (tried.ok()) (void)tried->Release();
    outcome.set_value({waited.status(), tried.status()});
  });
  std::future<std::pair<absl::Status, absl::Status>> done = outcome.get_future();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto [waited, tried] = done.get();
  EXPECT_TRUE(absl::IsFailedPrecondition(waited)) << waited;
  EXPECT_TRUE(tried.ok()) << tried;
  EXPECT_TRUE(WaitForChildren(a, 0));
  EXPECT_TRUE(WaitForChildren(b, 0));
  ASSERT_TRUE(admin().Delete(a).ok());
  ASSERT_TRUE(admin().Delete(b).ok());
}

// Each test checks that no node is left in a directory under its root.
using MultiLockEdgeTest = testing::DirectoryCheckedTest<ZkTest>;

// The session is lost while the first part is held and the second is
// awaited: Acquire fails (session lost) promptly, and nothing is left.
TEST_F(MultiLockEdgeTest, SessionExpiredWhileWaitingForLaterPart) {
  const std::string a = Path("a"), b = Path("b");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, b);
  ASSERT_TRUE(blocker.ok());
  auto held_b = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok()) << held_b.status();

  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{b, LockMode::kWrite}, {a, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 1 && Children(b) == 2; }));
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(Ready(pending, absl::Seconds(20))) << "Acquire did not end on session loss";
  auto result = pending.get();
  EXPECT_FALSE(result.ok());
  if (!result.ok()) {
    EXPECT_TRUE(IsSessionLost(result.status()) || absl::IsAborted(result.status()))
        << result.status();
  }
  EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 1; }));
  ASSERT_TRUE(held_b->Release().ok());
  multi->reset();
}

// Destroying the MultiLock races with the grant (the set is free): either
// Acquire returns a held guard, or Cancelled, and nothing is left after.
TEST_F(MultiLockEdgeTest, DestroyRacesGrant) {
  auto session = NewSession();
  std::mt19937 rng(42);
  for (int round = 0; round < 30; ++round) {
    const std::string a = Path("a" + std::to_string(round)), b = Path("b" + std::to_string(round));
    auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kRead}});
    ASSERT_TRUE(multi.ok());
    std::unique_ptr<MultiLock> owned = std::move(*multi);
    MultiLock* raw = owned.get();
    std::atomic<bool> started{false};
    auto pending = std::async(std::launch::async, [&] {
      started = true;
      return raw->Acquire(absl::Seconds(30));
    });
    while (!started) std::this_thread::yield();
    const int spins = rng() % 20000;
    for (int i = 0; i < spins; ++i) std::this_thread::yield();
    owned.reset();
    ASSERT_TRUE(Ready(pending, absl::Seconds(20))) << "round " << round;
    auto result = pending.get();
    if (result.ok()) {
      EXPECT_TRUE(result->held()) << "round " << round;
      EXPECT_EQ(Children(a), 1u);
      EXPECT_EQ(Children(b), 1u);
      EXPECT_TRUE(result->Release().ok());
    } else {
      EXPECT_TRUE(absl::IsCancelled(result.status())) << round << ": " << result.status();
    }
    EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 0; }))
        << "round " << round << " left " << Children(a) << "/" << Children(b);
  }
}

// A negative timeout with a blocked part must not wait; a huge one with
// Cancel from another thread ends promptly.
TEST_F(MultiLockEdgeTest, NegativeAndHugeTimeouts) {
  const std::string a = Path("a"), b = Path("b");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, b);
  auto held_b = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok());
  const absl::Time start = absl::Now();
  auto neg = (*multi)->Acquire(-absl::Seconds(5));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_FALSE(neg.ok());
  for (absl::Duration huge : {absl::Hours(24 * 365 * 200), absl::Seconds(INT64_MAX / 4),
                              absl::InfiniteDuration()}) {
    auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(huge); });
    ASSERT_TRUE(Eventually([&] { return Children(b) == 2; }));
    EXPECT_EQ(pending.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
        << "huge timeout did not wait: " << huge;
    (*multi)->Cancel();
    ASSERT_TRUE(Ready(pending, absl::Seconds(10)));
    auto r = pending.get();
    EXPECT_TRUE(absl::IsCancelled(r.status())) << r.status();
    EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 1; }));
  }
  ASSERT_TRUE(held_b->Release().ok());
}

// on_state_change: never kReleased, never after Release() returned; a part
// deleted by an operator after the grant reports kLost.
TEST_F(MultiLockEdgeTest, StateChangeSemantics) {
  const std::string a = Path("a"), b = Path("b");
  auto session = NewSession();
  absl::Mutex mu;
  std::vector<LockState> seen;
  std::atomic<bool> released{false};
  std::atomic<int> after_release{0};
  LockOptions options;
  options.on_state_change = [&](LockState s) {
    if (released) ++after_release;
    absl::MutexLock l(&mu);
    seen.push_back(s);
  };
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}}, options);
  ASSERT_TRUE(multi.ok());
  auto held = (*multi)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(held->held());
  // Delete the b part's node.
  auto kids = ChildList(b);
  ASSERT_EQ(kids.size(), 1u);
  ASSERT_TRUE(admin().Delete(b + "/" + kids[0]).ok());
  EXPECT_TRUE(Eventually([&] { return held->state() == LockState::kLost; }));
  EXPECT_TRUE(Eventually([&] {
    absl::MutexLock l(&mu);
    return !seen.empty() && seen.back() == LockState::kLost;
  }));
  released = true;
  (void)held->Release();
  EXPECT_EQ(after_release.load(), 0);
  absl::MutexLock l(&mu);
  for (LockState s : seen) EXPECT_NE(s, LockState::kReleased);
  EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 0; }));
}

// A first part deleted by an operator while the second is awaited: Acquire
// fails (Aborted) naming it, promptly, and gives back everything.
TEST_F(MultiLockEdgeTest, FirstPartDeletedWhileWaiting) {
  const std::string a = Path("a"), b = Path("b");
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, b);
  auto held_b = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held_b.ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{b, LockMode::kRead}, {a, LockMode::kWrite}});
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 1 && Children(b) == 2; }));
  auto kids = ChildList(a);
  ASSERT_EQ(kids.size(), 1u);
  ASSERT_TRUE(admin().Delete(a + "/" + kids[0]).ok());
  ASSERT_TRUE(Ready(pending, absl::Seconds(10))) << "Acquire kept waiting after losing a part";
  auto r = pending.get();
  EXPECT_TRUE(absl::IsAborted(r.status())) << r.status();
  EXPECT_NE(r.status().message().find(a), absl::string_view::npos) << r.status();
  EXPECT_TRUE(Eventually([&] { return Children(a) == 0 && Children(b) == 1; }));
  ASSERT_TRUE(held_b->Release().ok());
}

// A waiting Acquire from inside on_state_change (the dispatcher thread) is
// refused, not deadlocked.
TEST_F(MultiLockEdgeTest, AcquireOnDispatcherRefused) {
  const std::string a = Path("a"), b = Path("b");
  auto session = NewSession();
  std::unique_ptr<MultiLock> other;
  std::promise<absl::Status> inner;
  std::atomic<bool> once{false};
  LockOptions options;
  options.on_state_change = [&](LockState) {
    if (once.exchange(true)) return;
    auto r = other->Acquire(absl::Seconds(5));
    inner.set_value(r.status());
  };
  auto m1 = MultiLock::Create(*session, {{a, LockMode::kWrite}}, options);
  auto m2 = MultiLock::Create(*session, {{b, LockMode::kWrite}});
  other = std::move(*m2);
  auto held = (*m1)->Acquire(absl::Seconds(5));
  ASSERT_TRUE(held.ok());
  // Suspend to trigger on_state_change: delete the node -> kLost.
  auto kids = ChildList(a);
  ASSERT_EQ(kids.size(), 1u);
  ASSERT_TRUE(admin().Delete(a + "/" + kids[0]).ok());
  auto f = inner.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(15)), std::future_status::ready) << "deadlock on dispatcher";
  EXPECT_TRUE(absl::IsFailedPrecondition(f.get()));
  (void)held->Release();
}

}  // namespace
}  // namespace zkr
