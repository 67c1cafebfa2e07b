// The multi-lock's joint release (issue 37 item 5) against real servers, as
// an independent adversarial review wrote it: waiters behind marked and plain
// parts get them promptly; a joint transaction lost, dropped, cut off with the
// connection or the session, refused because an operator deleted parts, or
// over the packet limit falls back to each part and leaves nothing; release
// from on_state_change on the dispatcher; overlapping sets under churn; a
// failed Acquire's joint give-back; a forced revocation of one part.
#include <atomic>
#include <iostream>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "tests/support/packet_limit_server.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/revocation.h"

namespace zkr {
namespace {

using testing::Eventually;
using testing::FaultRule;
using testing::ZkTest;
using testing::TcpProxy;

class MultiLockReleaseTest : public ZkTest {
 protected:
  size_t Children(const std::string& path) {
    auto children = admin().GetChildren(path);
    return children.ok() ? children->size() : 0;
  }
  bool NoChildren(const std::string& path) {
    return testing::AwaitChildCount(admin(), path, 0);
  }
  void Cleanup(const std::string& root) { ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok()); }
};

// A writer part that waited is released "marked" (setData + delete) inside
// the joint transaction. A waiter queued behind each part (write behind the
// marked part, read behind an unmarked write part) gets it promptly, and
// never while our guard reads HELD.
TEST_F(MultiLockReleaseTest, MarkedAndPlainPartsHandOffToWaitersPromptly) {
  const std::string root = Path("marked");
  const std::string a = root + "/a", b = root + "/b", c = root + "/c";
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, a);
  ASSERT_TRUE(blocker.ok());
  auto blocked = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(blocked.ok()) << blocked.status();

  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite},
                                            {c, LockMode::kRead}});
  ASSERT_TRUE(multi.ok());
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(30)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 2; }));  // queued behind the blocker
  ASSERT_TRUE(blocked->Release().ok());
  auto held = pending.get();
  ASSERT_TRUE(held.ok()) << held.status();

  auto waiter_session = NewSession();
  auto wa = ExclusiveLock::Create(*waiter_session, a);
  auto wb = SharedLock::Create(*waiter_session, b);
  auto wc = ExclusiveLock::Create(*waiter_session, c);
  ASSERT_TRUE(wa.ok() && wb.ok() && wc.ok());
  std::atomic<bool> ours_released{false};
  std::atomic<int> early{0};
  auto take = [&](auto fn) {
    return std::async(std::launch::async, [&, fn] {
      auto g = fn();
      if (g.ok() && !ours_released.load()) ++early;
      return g;
    });
  };
  auto fa = take([&] { return (*wa)->Acquire(absl::Seconds(30)); });
  auto fb = take([&] { return (*wb)->AcquireRead(absl::Seconds(30)); });
  auto fc = take([&] { return (*wc)->Acquire(absl::Seconds(30)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 2 && Children(b) == 2 && Children(c) == 2; }));
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_TRUE(held->held());
  const absl::Time start = absl::Now();
  ours_released = true;
  ASSERT_TRUE(held->Release().ok());
  auto ga = fa.get();
  auto gb = fb.get();
  auto gc = fc.get();
  const absl::Duration took = absl::Now() - start;
  EXPECT_TRUE(ga.ok()) << ga.status();
  EXPECT_TRUE(gb.ok()) << gb.status();
  EXPECT_TRUE(gc.ok()) << gc.status();
  EXPECT_EQ(early.load(), 0);
  EXPECT_LT(took, absl::Seconds(3)) << "waiters were not handed the parts promptly";
  if (ga.ok()) {
    EXPECT_TRUE(ga->held());
  }
  ga = absl::CancelledError(); gb = absl::CancelledError(); gc = absl::CancelledError();
  for (const auto& p : {a, b, c}) EXPECT_TRUE(NoChildren(p)) << p;
  Cleanup(root);
}

// The joint multi's reply dropped, with a marked part in it: nothing is
// left and a waiter behind the marked part still gets it.
TEST_F(MultiLockReleaseTest, DroppedJointReplyWithMarkedPartLeavesNothing) {
  const std::string root = Path("dropmarked");
  const std::string a = root + "/a", b = root + "/b";
  auto blocker_session = NewSession();
  auto blocker = ExclusiveLock::Create(*blocker_session, a);
  auto blocked = (*blocker)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(blocked.ok());
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kWrite}});
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(30)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 2; }));  // queued behind the blocker
  ASSERT_TRUE(blocked->Release().ok());
  auto held = pending.get();
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter = ExclusiveLock::Create(*blocker_session, a);
  auto fw = std::async(std::launch::async, [&] { return (*waiter)->Acquire(absl::Seconds(20)); });
  ASSERT_TRUE(Eventually([&] { return Children(a) == 2; }));
  for (const auto effect : {FaultRule::Effect::kDropReply}) {
    faults->Add({FaultRule::Call::kMulti, effect, root + "/", 1});
  }
  const absl::Status released = held->Release();
  EXPECT_TRUE(released.ok()) << released;
  EXPECT_TRUE(faults->UsedUp());
  EXPECT_EQ(Children(b), 0u);
  auto gw = fw.get();
  EXPECT_TRUE(gw.ok()) << gw.status();
  gw = absl::CancelledError();
  for (const auto& p : {a, b}) EXPECT_TRUE(NoChildren(p)) << p;
  Cleanup(root);
}

// The joint multi lost before it reached the server: Release is OK and
// nothing is left.
TEST_F(MultiLockReleaseTest, LostJointRequestLeavesNothing) {
  const std::string root = Path("lostreq");
  std::vector<LockPart> parts;
  for (int i = 0; i < 6; ++i) parts.push_back({absl::StrCat(root, "/p", i), i % 2 ? LockMode::kRead : LockMode::kWrite});
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, parts);
  auto held = (*multi)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(held.ok()) << held.status();
  faults->Add({FaultRule::Call::kMulti, FaultRule::Effect::kLoseRequest, root + "/", 1});
  const absl::Status released = held->Release();
  EXPECT_TRUE(released.ok()) << released;
  EXPECT_TRUE(faults->UsedUp());
  for (const auto& p : parts) EXPECT_EQ(Children(p.path), 0u) << p.path;
  Cleanup(root);
}

// Every part's node deleted by an operator before release: OK, nothing
// left, and the session's later requests still work.
TEST_F(MultiLockReleaseTest, AllPartsDeletedByOperatorBeforeRelease) {
  const std::string root = Path("alldeleted");
  std::vector<LockPart> parts;
  for (int i = 0; i < 4; ++i) parts.push_back({absl::StrCat(root, "/p", i), LockMode::kWrite});
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, parts);
  auto held = (*multi)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(held.ok());
  for (const auto& p : parts) {
    auto kids = admin().GetChildren(p.path);
    ASSERT_TRUE(kids.ok());
    for (const auto& k : *kids) ASSERT_TRUE(admin().Delete(p.path + "/" + k).ok());
  }
  // Released at once, before the loss is seen (within own_node_watch_delay).
  const absl::Status released = held->Release();
  EXPECT_TRUE(released.ok()) << released;
  auto again = (*multi)->Acquire(absl::Seconds(10));
  EXPECT_TRUE(again.ok()) << again.status();
  if (again.ok()) {
    EXPECT_TRUE(again->Release().ok());
  }
  Cleanup(root);
}

// Release from inside on_state_change (the dispatcher thread) when one part
// is lost: it must return (no deadlock) and leave nothing.
TEST_F(MultiLockReleaseTest, ReleaseFromOnStateChangeOnDispatcher) {
  const std::string root = Path("dispatcher");
  std::vector<LockPart> parts;
  for (int i = 0; i < 4; ++i) parts.push_back({absl::StrCat(root, "/p", i), i == 1 ? LockMode::kRead : LockMode::kWrite});
  auto session = NewSession();
  std::shared_ptr<MultiLockGuard> guard = std::make_shared<MultiLockGuard>();
  absl::Notification released;
  std::atomic<bool> once{false};
  absl::Status in_callback;
  LockOptions options;
  options.on_state_change = [&](LockState state) {
    if (state == LockState::kLost && !once.exchange(true)) {
      in_callback = guard->Release();
      released.Notify();
    }
  };
  auto multi = MultiLock::Create(*session, parts, options);
  ASSERT_TRUE(multi.ok());
  auto held = (*multi)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(held.ok());
  *guard = *std::move(held);
  auto kids = admin().GetChildren(parts[2].path);
  ASSERT_TRUE(kids.ok() && kids->size() == 1);
  ASSERT_TRUE(admin().Delete(parts[2].path + "/" + kids->front()).ok());
  ASSERT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(15)))
      << "Release from on_state_change did not return";
  EXPECT_TRUE(in_callback.ok()) << in_callback;
  for (const auto& p : parts) EXPECT_EQ(Children(p.path), 0u) << p.path;
  // The session still works.
  auto again = (*multi)->Acquire(absl::Seconds(10));
  EXPECT_TRUE(again.ok()) << again.status();
  if (again.ok()) {
    EXPECT_TRUE(again->Release().ok());
  }
  Cleanup(root);
}

// 50 parts, long paths, with a small packet limit: the joint transaction
// would not fit; the release must not cost the connection (no SUSPENDED),
// and leaves nothing.
TEST_F(MultiLockReleaseTest, FiftyLongPartsNearThePacketLimit) {
  const std::string root = Path("fifty");
  SessionOptions options = Options();
  options.max_request_bytes = 48 * 1024;  // the watch budget admits 50 parts
  auto session = NewSession(options);
  testing::StateRecorder states(*session);
  std::vector<LockPart> parts;
  for (int i = 0; i < 50; ++i) {
    parts.push_back({absl::StrCat(root, "/", std::string(120, 'x'), i), i % 3 ? LockMode::kWrite : LockMode::kRead});
  }
  auto multi = MultiLock::Create(*session, parts);
  ASSERT_TRUE(multi.ok()) << multi.status();
  auto held = (*multi)->Acquire(absl::Seconds(60));
  ASSERT_TRUE(held.ok()) << held.status();
  const absl::Status released = held->Release();
  EXPECT_TRUE(released.ok()) << released;
  for (const auto& p : parts) EXPECT_EQ(Children(p.path), 0u) << p.path;
  for (SessionState s : states.states()) EXPECT_NE(s, SessionState::kSuspended);
  Cleanup(root);
}

// The joint multi's reply held while the session is expired: Release
// returns (bounded), nothing is left.
TEST_F(MultiLockReleaseTest, SessionExpiredDuringJointRelease) {
  const std::string root = Path("expire");
  std::vector<LockPart> parts;
  for (int i = 0; i < 3; ++i) parts.push_back({absl::StrCat(root, "/p", i), LockMode::kWrite});
  auto faults = std::make_shared<testing::ClientFaults>();
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, parts);
  auto held = (*multi)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(held.ok());
  faults->Add({FaultRule::Call::kMulti, FaultRule::Effect::kLoseRequest, root + "/", 1});
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  const absl::Time start = absl::Now();
  auto result = std::async(std::launch::async, [&] { return held->Release(); });
  ASSERT_EQ(result.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  EXPECT_TRUE(result.get().ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  for (const auto& p : parts) EXPECT_TRUE(NoChildren(p.path)) << p.path;
  Cleanup(root);
}

// Three sessions: two MultiLocks over {A(w),B(r),C(w)} in different orders
// and one ExclusiveLock on B churn; never two writers of a path inside at
// once, every acquisition within its deadline.
TEST_F(MultiLockReleaseTest, OverlappingMixedChurnNoOverlapNoDeadlock) {
  const std::string root = Path("churn");
  const std::string a = root + "/a", b = root + "/b", c = root + "/c";
  std::atomic<int> writers_b{0}, readers_b{0}, inside_ac{0}, violations{0}, failures{0};
  auto multi_run = [&](std::vector<LockPart> parts, bool reads_b) {
    auto session = NewSession();
    auto multi = MultiLock::Create(*session, parts);
    if (!multi.ok()) { ++failures; return; }
    for (int i = 0; i < 20; ++i) {
      auto held = (*multi)->Acquire(absl::Seconds(30));
      if (!held.ok()) { ++failures; ADD_FAILURE() << held.status(); return; }
      if (inside_ac.fetch_add(1) != 0) ++violations;
      if (reads_b) { ++readers_b; if (writers_b.load()) ++violations; }
      else { if (writers_b.fetch_add(1) != 0 || readers_b.load()) ++violations; }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (reads_b) --readers_b; else --writers_b;
      inside_ac.fetch_sub(1);
      if (!held->Release().ok()) ++failures;
    }
  };
  auto single_run = [&] {
    auto session = NewSession();
    auto lock = ExclusiveLock::Create(*session, b);
    for (int i = 0; i < 20; ++i) {
      auto g = (*lock)->Acquire(absl::Seconds(30));
      if (!g.ok()) { ++failures; return; }
      if (writers_b.fetch_add(1) != 0 || readers_b.load()) ++violations;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      --writers_b;
      if (!g->Release().ok()) ++failures;
    }
  };
  std::thread t1(multi_run, std::vector<LockPart>{{c, LockMode::kWrite}, {b, LockMode::kRead}, {a, LockMode::kWrite}}, true);
  std::thread t2(multi_run, std::vector<LockPart>{{a, LockMode::kWrite}, {b, LockMode::kWrite}, {c, LockMode::kWrite}}, false);
  std::thread t3(single_run);
  t1.join(); t2.join(); t3.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(failures.load(), 0);
  for (const auto& p : {a, b, c}) EXPECT_TRUE(NoChildren(p)) << p;
  Cleanup(root);
}

// Give-back when an Acquire ends unsuccessfully goes through the joint
// release: M2 {A(w), B(r), Z(w)} holds A and B and waits at Z (held by X);
// the acquisition then ends (timeout, or M2 destroyed mid-wait) and A, B are
// given back in one multi whose reply we drop. Nothing of M2's is left, and
// a third MultiLock over the whole set gets it once X releases.
TEST_F(MultiLockReleaseTest, FailedAcquireGivesBackJointlyWithDroppedReply) {
  for (const bool destroy : {false, true}) {
    SCOPED_TRACE(destroy ? "destroyed mid-wait" : "timed out");
    const std::string root = Path(destroy ? "giveback-destroy" : "giveback-timeout");
    const std::string a = root + "/a", b = root + "/b", z = root + "/z";
    auto x_session = NewSession();
    auto x = ExclusiveLock::Create(*x_session, z);
    auto xg = (*x)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(xg.ok());
    auto faults = std::make_shared<testing::ClientFaults>();
    auto session = NewFaultySession(faults);
    auto m2 = MultiLock::Create(*session, {{a, LockMode::kWrite}, {b, LockMode::kRead},
                                           {z, LockMode::kWrite}});
    ASSERT_TRUE(m2.ok());
    MultiLock* raw = m2->get();
    auto pending = std::async(std::launch::async, [raw, destroy] {
      return raw->Acquire(destroy ? absl::Seconds(30) : absl::Seconds(1));
    });
    ASSERT_TRUE(Eventually([&] { return Children(a) == 1 && Children(b) == 1 && Children(z) == 2; }));
    faults->Add({FaultRule::Call::kMulti, FaultRule::Effect::kDropReply, root + "/", 1});
    const int multis = faults->Calls(FaultRule::Call::kMulti, root + "/");
    if (destroy) m2->reset();
    ASSERT_EQ(pending.wait_for(std::chrono::seconds(15)), std::future_status::ready);
    auto r = pending.get();
    EXPECT_EQ(r.status().code(), destroy ? absl::StatusCode::kCancelled
                                         : absl::StatusCode::kDeadlineExceeded) << r.status();
    EXPECT_TRUE(faults->UsedUp()) << "no joint give-back multi was sent; multis: "
                                  << faults->Calls(FaultRule::Call::kMulti, root + "/") - multis;
    // Acquire has returned: nothing of M2's may be left by now.
    EXPECT_EQ(Children(a), 0u);
    EXPECT_EQ(Children(b), 0u);
    EXPECT_EQ(Children(z), 1u);
    auto third_session = NewSession();
    auto m3 = MultiLock::Create(*third_session, {{a, LockMode::kWrite}, {b, LockMode::kWrite},
                                                 {z, LockMode::kWrite}});
    auto f3 = std::async(std::launch::async, [&] { return (*m3)->Acquire(absl::Seconds(20)); });
    ASSERT_TRUE(Eventually([&] { return Children(z) == 2; }));  // queued behind xg
    ASSERT_TRUE(xg->Release().ok());
    auto g3 = f3.get();
    EXPECT_TRUE(g3.ok()) << g3.status();
    if (g3.ok()) {
      EXPECT_TRUE(g3->Release().ok());
    }
    for (const auto& p : {a, b, z}) EXPECT_TRUE(NoChildren(p)) << p;
    m3 = absl::CancelledError();
    Cleanup(root);
  }
}

// A forced Revoke of one part (its node deleted) just before Release: OK,
// nothing left, the revoker's next holder gets the part.
TEST_F(MultiLockReleaseTest, ForcedRevokeOfOnePartThenRelease) {
  const std::string root = Path("revoke");
  std::vector<LockPart> parts;
  for (int i = 0; i < 3; ++i) parts.push_back({absl::StrCat(root, "/p", i), LockMode::kWrite});
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, parts);
  auto held = (*multi)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(held.ok());
  RevokeOptions ask;
  ask.grace = absl::Milliseconds(100);
  auto outcomes = Revoke(admin(), parts[1].path, ask);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  const absl::Status released = held->Release();
  EXPECT_TRUE(released.ok()) << released;
  for (const auto& p : parts) EXPECT_TRUE(NoChildren(p.path)) << p.path;
  Cleanup(root);
}

class MultiLockReleaseProxiedTest : public testing::ProxiedZkTest {
 protected:
  size_t Children(const std::string& path) {
    auto children = admin().GetChildren(path);
    return children.ok() ? children->size() : 0;
  }
};

// The connection cut while the joint multi is in flight: applied with its
// reply lost (server-to-client dropped) or never applied (client-to-server
// dropped). Release returns OK once the connection is back, nothing is
// left, and a waiter in another session gets the part.
TEST_F(MultiLockReleaseProxiedTest, ConnectionCutDuringJointRelease) {
  for (const auto mode : {TcpProxy::Mode::kDropServerToClient, TcpProxy::Mode::kDropClientToServer}) {
    const bool applied = mode == TcpProxy::Mode::kDropServerToClient;
    SCOPED_TRACE(applied ? "reply lost" : "request lost");
    const std::string root = Path(applied ? "cut-applied" : "cut-lost");
    std::vector<LockPart> parts;
    for (int i = 0; i < 4; ++i) parts.push_back({absl::StrCat(root, "/p", i), i == 2 ? LockMode::kRead : LockMode::kWrite});
    auto session = NewSession(ProxiedOptions());
    auto multi = MultiLock::Create(*session, parts);
    auto held = (*multi)->Acquire(absl::Seconds(20));
    ASSERT_TRUE(held.ok()) << held.status();
    auto other = NewSession();
    auto waiter = ExclusiveLock::Create(*other, parts[0].path);
    auto fw = std::async(std::launch::async, [&] { return (*waiter)->Acquire(absl::Seconds(30)); });
    ASSERT_TRUE(Eventually([&] { return Children(parts[0].path) == 2; }));
    proxy_->SetMode(mode);
    auto result = std::async(std::launch::async, [&] { return held->Release(); });
    absl::SleepFor(absl::Milliseconds(500));
    proxy_->ResetConnections();
    proxy_->SetMode(TcpProxy::Mode::kPass);
    ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    const absl::Status released = result.get();
    EXPECT_TRUE(released.ok()) << released;
    auto gw = fw.get();
    EXPECT_TRUE(gw.ok()) << gw.status();
    gw = absl::CancelledError();
    for (const auto& p : parts) EXPECT_TRUE(testing::AwaitChildCount(admin(), p.path, 0)) << p.path;
    ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
  }
}

// Release from on_state_change(kSuspended) — on the dispatcher thread —
// while the connection is cut: the joint multi cannot go; once the
// connection is back, Release must return OK and leave nothing.
TEST_F(MultiLockReleaseProxiedTest, ReleaseOnSuspendedFromDispatcher) {
  const std::string root = Path("suspended");
  std::vector<LockPart> parts;
  for (int i = 0; i < 3; ++i) parts.push_back({absl::StrCat(root, "/p", i), LockMode::kWrite});
  auto session = NewSession(ProxiedOptions());
  auto guard = std::make_shared<MultiLockGuard>();
  absl::Notification released;
  std::atomic<bool> once{false};
  absl::Status in_callback;
  LockOptions options;
  options.on_state_change = [&](LockState state) {
    if (state == LockState::kSuspended && !once.exchange(true)) {
      in_callback = guard->Release();
      released.Notify();
    }
  };
  auto multi = MultiLock::Create(*session, parts, options);
  auto held = (*multi)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(held.ok());
  *guard = *std::move(held);
  proxy_->SetMode(TcpProxy::Mode::kBlackhole);
  proxy_->ResetConnections();
  absl::SleepFor(absl::Milliseconds(1500));
  proxy_->SetMode(TcpProxy::Mode::kPass);
  ASSERT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(20)))
      << "Release from on_state_change(kSuspended) did not return";
  EXPECT_TRUE(in_callback.ok()) << in_callback;
  for (const auto& p : parts) EXPECT_TRUE(testing::AwaitChildCount(admin(), p.path, 0)) << p.path;
  ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok());
}

// A server with a 64 KiB packet limit. Ten writer parts, each of which
// waited (so each is released marked: setData of its data + delete) and
// each with a 7000-byte purpose: one joint transaction would be ~70 KB,
// over the server's limit. Release must not cost the connection (no
// SUSPENDED), must return OK and leave nothing.
class MultiLockReleasePacketLimitTest : public testing::PacketLimitServerTest {};

TEST_F(MultiLockReleasePacketLimitTest, MarkedPartsOverThePacketLimitDoNotCostTheConnection) {
  const std::string connect = server().connect_string();
  auto admin = Connect(connect);
  auto blocker_session = Connect(connect);
  auto faults = std::make_shared<testing::ClientFaults>();
  SessionOptions so;
  so.connect = connect;
  so.session_timeout = absl::Seconds(4);
  so.max_request_bytes = limit();
  so.log_sink = [](absl::string_view) {};
  auto connected = testing::ConnectWithFaults(so, faults);
  ASSERT_TRUE(connected.ok()) << connected.status();
  std::unique_ptr<Session> session = *std::move(connected);
  ASSERT_TRUE(admin && blocker_session && session);
  const std::string root = "/multi-lock-release-limit";
  std::vector<LockPart> parts;
  std::vector<std::unique_ptr<ExclusiveLock>> blockers;
  std::vector<LockGuard> blocked;
  for (int i = 0; i < 10; ++i) {
    parts.push_back({absl::StrCat(root, "/p", i), LockMode::kWrite});
    auto lock = ExclusiveLock::Create(*blocker_session, parts.back().path);
    ASSERT_TRUE(lock.ok());
    auto g = (*lock)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(g.ok()) << g.status();
    blockers.push_back(*std::move(lock));
    blocked.push_back(*std::move(g));
  }
  LockOptions options;
  options.purpose = std::string(7000, 'p');
  auto multi = MultiLock::Create(*session, parts, options);
  ASSERT_TRUE(multi.ok()) << multi.status();
  auto pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(60)); });
  auto count = [&](const std::string& path) {
    auto c = admin->GetChildren(path);
    return c.ok() ? c->size() : 0;
  };
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(Eventually([&] { return count(parts[i].path) == 2; })) << i;
    ASSERT_TRUE(blocked[i].Release().ok());
  }
  auto held = pending.get();
  ASSERT_TRUE(held.ok()) << held.status();
  testing::StateRecorder states(*session);
  const int multis = faults->Calls(FaultRule::Call::kMulti, root + "/");
  const absl::Status released = held->Release();
  EXPECT_TRUE(released.ok()) << released;
  for (const auto& p : parts) EXPECT_EQ(count(p.path), 0u) << p.path;
  // A request after the release, answered: had the server dropped the
  // connection for an oversized packet, the client would have seen it
  // (SUSPENDED) before this reply came on a new one.
  EXPECT_TRUE(session->Exists("/").ok());
  for (SessionState st : states.states()) EXPECT_NE(st, SessionState::kSuspended);
  // Each part on its own: ten marked two-op transactions.
  // (Diagnostic only: 10 when every part waited and so is marked — the joint
  // transaction would not fit and each part goes alone; 1 when fewer parts
  // waited, so that the joint transaction fits.)
  std::cerr << "release multis: " << faults->Calls(FaultRule::Call::kMulti, root + "/") - multis
            << "\n";
  ASSERT_TRUE(testing::DeleteRecursively(*admin, root).ok());
}

}  // namespace
}  // namespace zkr
