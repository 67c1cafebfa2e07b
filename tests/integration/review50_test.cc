// Review 50, an independent adversarial review on a 3-node ensemble: frozen
// members (SIGSTOP: silence, not a closed socket), the quorum leader paused
// or restarted, while locks, semaphores, elections, observers and barriers
// are held or awaited. Each test names the promise it attacks. Waits are on
// observable conditions; durations only bound hangs (and the promised
// deadlines). (Its tests that froze two members — the quorum lost — were
// not kept: once, the ensemble did not re-form after them within 5 min.)
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
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
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/session_access.h"
#include "src/session_core.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace {

using testing::Eventually;
using testing::ZooKeeperEnsemble;

class Review50Test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto ensemble = ZooKeeperEnsemble::Start(3);
    ASSERT_TRUE(ensemble.ok()) << ensemble.status();
    ensemble_ = std::move(*ensemble).release();
  }
  static void TearDownTestSuite() {
    delete ensemble_;
    ensemble_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(ensemble_, nullptr);
    ASSERT_TRUE(ensemble_->WaitUntilServing(absl::Seconds(90)).ok());
    root_ = absl::StrCat(
        "/review50-",
        absl::StrReplaceAll(::testing::UnitTest::GetInstance()->current_test_info()->name(),
                            {{"/", "_"}}),
        "-", getpid());
    auto admin = Session::Connect(Options());
    ASSERT_TRUE(admin.ok()) << admin.status();
    admin_ = std::move(*admin);
  }
  void TearDown() override {
    // Every member back, whatever the test did.
    for (int i = 0; i < ensemble_->size(); ++i) (void)ensemble_->Resume(i);
    (void)ensemble_->WaitUntilServing(absl::Seconds(90));
    if (admin_ != nullptr) {
      // Nothing of ours left below the root (bounded: an expiring session's
      // nodes go with it).
      std::vector<std::string> left;
      Eventually(
          [&] {
            auto below = testing::ListRecursively(*admin_, root_);
            left = below.ok() ? *below : std::vector<std::string>{"<unreadable>"};
            // Directories (containers) may stay: only leaves with an owner count.
            std::vector<std::string> owned;
            for (const std::string& p : left) {
              auto stat = admin_->Exists(p);
              if (stat.ok() && stat->has_value() && (*stat)->ephemeral_owner != 0) {
                owned.push_back(p);
              }
            }
            left = owned;
            return left.empty();
          },
          absl::Seconds(40));
      EXPECT_TRUE(left.empty()) << "left on the servers: " << absl::StrJoin(left, ", ");
      (void)testing::DeleteRecursively(*admin_, root_);
      admin_->Close();
      admin_.reset();
    }
  }

  static SessionOptions Options() {
    SessionOptions options;
    options.connect = ensemble_->connect_string();
    options.session_timeout = absl::Seconds(8);
    options.log_sink = [](absl::string_view) {};
    return options;
  }

  // A session (on the whole ensemble) that happens to be connected to
  // `member`; null if none landed there.
  static std::unique_ptr<Session> SessionOn(int member, SessionOptions options = Options()) {
    for (int attempt = 0; attempt < 60; ++attempt) {
      auto session = Session::Connect(options);
      if (!session.ok()) continue;
      if (ConnectedMember(**session) == member) return std::move(*session);
      (*session)->Close();
    }
    return nullptr;
  }

  static int ConnectedMember(Session& session) {
    std::string server = internal::CoreOf(session)->current().client->current_server();
    std::vector<std::string> parts = absl::StrSplit(server, ':');
    int port = 0;
    if (parts.size() < 2 || !absl::SimpleAtoi(parts.back(), &port)) return -1;
    return ensemble_->MemberByClientPort(port);
  }

  // The paths the running members list as watched by `session_id` (wchc).
  static std::vector<std::string> WatchesOf(int64_t session_id, absl::string_view under) {
    std::vector<std::string> out;
    const std::string id = testing::SessionIdHex(session_id);
    for (int i = 0; i < ensemble_->size(); ++i) {
      auto wchc = ensemble_->FourLetterWord(i, "wchc");
      if (!wchc.ok()) continue;
      bool mine = false;
      for (absl::string_view line : absl::StrSplit(*wchc, '\n')) {
        if (line.empty()) continue;
        if (line[0] == '0' && absl::StartsWith(line, "0x")) {
          mine = line == id;
          continue;
        }
        absl::string_view path = absl::StripAsciiWhitespace(line);
        if (mine && absl::StartsWith(path, under)) {
          out.push_back(absl::StrCat("member ", i, ": ", path));
        }
      }
    }
    return out;
  }

  int OtherThan(int a, int b = -1) const {
    for (int i = 0; i < ensemble_->size(); ++i) {
      if (i != a && i != b) return i;
    }
    return -1;
  }

  std::string root_;
  std::unique_ptr<Session> admin_;
  static ZooKeeperEnsemble* ensemble_;
};
ZooKeeperEnsemble* Review50Test::ensemble_ = nullptr;

// Samples, every millisecond, whether each participant reports a hold, and
// records every moment two or more do.
class OverlapMonitor {
 public:
  explicit OverlapMonitor(std::vector<std::function<bool()>> held) : held_(std::move(held)) {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        int n = 0;
        std::vector<int> who;
        {
          absl::MutexLock lock(&mu_);
          for (size_t i = 0; i < held_.size(); ++i) {
            if (held_[i]()) {
              ++n;
              who.push_back(static_cast<int>(i));
            }
          }
          if (n > 1) violations_.push_back(absl::StrJoin(who, "+"));
        }
        absl::SleepFor(absl::Milliseconds(1));
      }
    });
  }
  ~OverlapMonitor() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  absl::Mutex& mu() { return mu_; }
  std::vector<std::string> violations() {
    absl::MutexLock lock(&mu_);
    return violations_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::function<bool()>> held_;
  std::vector<std::string> violations_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct StateLog {
  absl::Mutex mu;
  std::vector<LockState> seen;
  std::function<void(LockState)> Callback() {
    return [this](LockState s) {
      absl::MutexLock lock(&mu);
      seen.push_back(s);
    };
  }
  std::string Text() {
    absl::MutexLock lock(&mu);
    std::vector<std::string> names;
    for (LockState s : seen) names.emplace_back(LockStateName(s));
    return absl::StrJoin(names, ",");
  }
  bool Saw(LockState s) {
    absl::MutexLock lock(&mu);
    for (LockState x : seen) {
      if (x == s) return true;
    }
    return false;
  }
  std::optional<LockState> Last() {
    absl::MutexLock lock(&mu);
    if (seen.empty()) return std::nullopt;
    return seen.back();
  }
};

// A waiter whose grant arrives on its dispatcher; the slot is read under
// the monitor's mutex.
struct AsyncWaiter {
  absl::Mutex* mu = nullptr;
  std::optional<absl::StatusOr<LockGuard>> result;  // guarded by *mu
  bool Held() {  // REQUIRES *mu held
    return result.has_value() && result->ok() && (*result)->state() == LockState::kHeld;
  }
};

// Promise (lock_guard.h, README "Guarantees"): "If the session is SUSPENDED
// the hold is kSuspended ... On RECONNECTED the lock re-checks that its node
// still exists and belongs to the current session before it reports kHeld
// again"; mutual exclusion among HELD holders. The member the holder is
// connected to is frozen (not killed): the holder's client hears silence.
// A waiter on another member must not get in while the holder reads HELD;
// once the member is back and the holder releases, the waiter gets in.
TEST_F(Review50Test, FreezingTheHoldersFollowerKeepsMutualExclusionAndTheHandOff) {
  absl::StatusOr<int> leader = ensemble_->Leader();
  ASSERT_TRUE(leader.ok()) << leader.status();
  const int frozen = OtherThan(*leader);
  const int waiter_member = OtherThan(*leader, frozen);
  std::unique_ptr<Session> a_session = SessionOn(frozen);
  std::unique_ptr<Session> b_session = SessionOn(waiter_member);
  ASSERT_NE(a_session, nullptr);
  ASSERT_NE(b_session, nullptr);
  const std::string path = root_ + "/lock";
  StateLog a_log;
  LockOptions a_options;
  a_options.on_state_change = a_log.Callback();
  auto a_lock = ExclusiveLock::Create(*a_session, path, a_options);
  auto b_lock = ExclusiveLock::Create(*b_session, path);
  ASSERT_TRUE(a_lock.ok() && b_lock.ok());
  auto a = (*a_lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(a.ok()) << a.status();

  AsyncWaiter b;
  OverlapMonitor monitor({[&] { return a->state() == LockState::kHeld; },
                          [&] { return b.Held(); }});
  b.mu = &monitor.mu();
  std::atomic<bool> b_done{false};
  std::atomic<bool> b_granted_beside_a{false};
  (*b_lock)->AcquireAsync([&](absl::StatusOr<LockGuard> guard) {
    absl::MutexLock lock(b.mu);
    if (guard.ok() && a->state() == LockState::kHeld) b_granted_beside_a = true;
    b.result = std::move(guard);
    b_done = true;
  });
  ASSERT_TRUE(testing::AwaitChildCount(*admin_, path, 2));

  ASSERT_TRUE(ensemble_->Pause(frozen).ok());
  EXPECT_TRUE(Eventually([&] { return a_log.Saw(LockState::kSuspended); }, absl::Seconds(30)))
      << a_log.Text();
  // Back to HELD on another member within the session, or LOST: either is
  // the truth; two HELD never.
  EXPECT_TRUE(Eventually(
      [&] {
        auto last = a_log.Last();
        return last && (*last == LockState::kHeld || *last == LockState::kLost);
      },
      absl::Seconds(40)))
      << a_log.Text();
  const std::string a_states = a_log.Text();
  ASSERT_TRUE(ensemble_->Resume(frozen).ok());
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  const bool a_lost = a->state() == LockState::kLost;
  ASSERT_TRUE(a->Release().ok());
  EXPECT_TRUE(Eventually([&] { return b_done.load(); }, absl::Seconds(30)))
      << "the waiter was not let in after the holder released (A: " << a_states << ")";
  monitor.Stop();
  EXPECT_TRUE(monitor.violations().empty())
      << "two HELD at once " << monitor.violations().size() << " times; A: " << a_states;
  EXPECT_FALSE(b_granted_beside_a.load()) << "B granted while A read HELD; A: " << a_states;
  {
    absl::MutexLock lock(b.mu);
    ASSERT_TRUE(b.result.has_value());
    ASSERT_TRUE(b.result->ok()) << b.result->status();
    EXPECT_TRUE((*b.result)->Release().ok());
  }
  std::printf("A's states: %s%s\n", a_states.c_str(), a_lost ? " (lost)" : "");
  EXPECT_TRUE(WatchesOf(b_session->session_id(), path).empty());
  EXPECT_TRUE(WatchesOf(a_session->session_id(), path).empty());
  a_lock->reset();
  b_lock->reset();
}

// The same with the quorum leader frozen: the holder is connected to it,
// the waiter to a follower. The followers elect a new leader; the frozen
// one comes back as a stale leader for a moment.
TEST_F(Review50Test, FreezingTheQuorumLeaderUnderTheHolderKeepsMutualExclusion) {
  absl::StatusOr<int> leader = ensemble_->Leader();
  ASSERT_TRUE(leader.ok()) << leader.status();
  const int frozen = *leader;
  const int waiter_member = OtherThan(frozen);
  std::unique_ptr<Session> a_session = SessionOn(frozen);
  std::unique_ptr<Session> b_session = SessionOn(waiter_member);
  ASSERT_NE(a_session, nullptr);
  ASSERT_NE(b_session, nullptr);
  const std::string path = root_ + "/lock";
  StateLog a_log;
  LockOptions a_options;
  a_options.on_state_change = a_log.Callback();
  auto a_lock = ExclusiveLock::Create(*a_session, path, a_options);
  auto b_lock = ExclusiveLock::Create(*b_session, path);
  ASSERT_TRUE(a_lock.ok() && b_lock.ok());
  auto a = (*a_lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(a.ok()) << a.status();

  AsyncWaiter b;
  OverlapMonitor monitor({[&] { return a->state() == LockState::kHeld; },
                          [&] { return b.Held(); }});
  b.mu = &monitor.mu();
  std::atomic<bool> b_done{false};
  std::atomic<bool> b_granted_beside_a{false};
  (*b_lock)->AcquireAsync([&](absl::StatusOr<LockGuard> guard) {
    absl::MutexLock lock(b.mu);
    if (guard.ok() && a->state() == LockState::kHeld) b_granted_beside_a = true;
    b.result = std::move(guard);
    b_done = true;
  });
  ASSERT_TRUE(testing::AwaitChildCount(*admin_, path, 2));

  ASSERT_TRUE(ensemble_->Pause(frozen).ok());
  // Until the two others serve under a new leader.
  EXPECT_TRUE(Eventually(
      [&] {
        auto now = ensemble_->Leader();
        return now.ok() && *now != frozen;
      },
      absl::Seconds(60)));
  EXPECT_TRUE(Eventually(
      [&] {
        auto last = a_log.Last();
        return last && (*last == LockState::kHeld || *last == LockState::kLost);
      },
      absl::Seconds(40)))
      << a_log.Text();
  ASSERT_TRUE(ensemble_->Resume(frozen).ok());
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  EXPECT_TRUE(Eventually(
      [&] {
        auto last = a_log.Last();
        return last && (*last == LockState::kHeld || *last == LockState::kLost);
      },
      absl::Seconds(40)))
      << a_log.Text();
  const std::string a_states = a_log.Text();
  ASSERT_TRUE(a->Release().ok());
  EXPECT_TRUE(Eventually([&] { return b_done.load(); }, absl::Seconds(30)))
      << "the waiter was not let in after the holder released (A: " << a_states << ")";
  monitor.Stop();
  EXPECT_TRUE(monitor.violations().empty())
      << "two HELD at once " << monitor.violations().size() << " times; A: " << a_states;
  EXPECT_FALSE(b_granted_beside_a.load()) << "B granted while A read HELD; A: " << a_states;
  {
    absl::MutexLock lock(b.mu);
    ASSERT_TRUE(b.result.has_value());
    ASSERT_TRUE(b.result->ok()) << b.result->status();
    EXPECT_TRUE((*b.result)->Release().ok());
  }
  std::printf("A's states: %s\n", a_states.c_str());
  EXPECT_TRUE(WatchesOf(b_session->session_id(), path).empty());
  a_lock->reset();
  b_lock->reset();
}

// Promise (leader_election.h, README "Election"): "at most one candidate
// reads kLeader among those that honour kSuspended"; "Between a leader's end
// and its successor's callback there is no leader"; the observer follows the
// leader (leader_observer.h: "A new session (after LOST) is followed by
// itself"). The quorum leader is killed and restarted under two candidates
// and an observer, each on another member; then the leader leaves and the
// observer must report the successor.
TEST_F(Review50Test, ElectionAndObserverThroughTheQuorumLeadersRestart) {
  absl::StatusOr<int> zk_leader = ensemble_->Leader();
  ASSERT_TRUE(zk_leader.ok()) << zk_leader.status();
  const int q = *zk_leader;
  std::vector<std::unique_ptr<Session>> sessions;
  for (int member : {q, OtherThan(q), OtherThan(q, OtherThan(q))}) {
    std::unique_ptr<Session> s = SessionOn(member);
    ASSERT_NE(s, nullptr);
    sessions.push_back(std::move(s));
  }
  const std::string path = root_ + "/elect";
  absl::Mutex mu;
  Leadership last[2] = {Leadership::kNotLeader, Leadership::kNotLeader};
  std::vector<std::string> history;  // guarded by mu
  int overlaps = 0;                   // guarded by mu
  std::vector<std::unique_ptr<LeaderElection>> candidates;
  for (int i = 0; i < 2; ++i) {
    ElectionOptions options;
    options.id = absl::StrCat("c", i);
    options.data = absl::StrCat("addr-", i);
    options.on_change = [&, i](Leadership l) {
      absl::MutexLock lock(&mu);
      last[i] = l;
      history.push_back(absl::StrCat("c", i, ":", LeadershipName(l)));
      if (last[0] == Leadership::kLeader && last[1] == Leadership::kLeader) ++overlaps;
    };
    auto c = LeaderElection::Create(*sessions[i], path, options);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Join().ok());
    if (i == 0) {
      ASSERT_TRUE((*c)->AwaitLeadership(absl::Seconds(10)).ok());
    }
    candidates.push_back(std::move(*c));
  }
  auto observer = LeaderObserver::Create(*sessions[2], path);
  ASSERT_TRUE(observer.ok());
  OverlapMonitor monitor({[&] { return candidates[0]->IsLeader(); },
                          [&] { return candidates[1]->IsLeader(); }});
  auto first = (*observer)->Current(absl::Seconds(10));
  ASSERT_TRUE(first.ok() && first->has_value());

  ASSERT_TRUE(ensemble_->Kill(q).ok());
  ASSERT_TRUE(ensemble_->Restart(q).ok());
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  // Someone leads again.
  EXPECT_TRUE(Eventually([&] { return candidates[0]->IsLeader() || candidates[1]->IsLeader(); },
                         absl::Seconds(60)));
  const int leading = candidates[0]->IsLeader() ? 0 : 1;
  // The observer names it, taken over.
  auto named = [&](const std::string& id) {
    absl::StatusOr<std::optional<LeaderInfo>> now = (*observer)->Current(absl::Seconds(20));
    const absl::Time end = absl::Now() + absl::Seconds(40);
    while (now.ok() && !(now->has_value() && (*now)->id == id && (*now)->taken_over) &&
           absl::Now() < end) {
      auto next = (*observer)->AwaitChange(*now, absl::Seconds(20));
      if (!next.ok()) return std::optional<LeaderInfo>();
      now = next;
    }
    return now.ok() && now->has_value() && (*now)->id == id ? *now : std::optional<LeaderInfo>();
  };
  std::optional<LeaderInfo> seen = named(absl::StrCat("c", leading));
  EXPECT_TRUE(seen.has_value()) << "the observer did not name c" << leading;
  // The leader leaves; the other leads and the observer follows.
  EXPECT_TRUE(candidates[leading]->Leave().ok());
  const int next = 1 - leading;
  if (!candidates[next]->joined()) {
    ASSERT_TRUE(candidates[next]->Join().ok());
  }
  EXPECT_TRUE(candidates[next]->AwaitLeadership(absl::Seconds(30)).ok());
  std::optional<LeaderInfo> successor = named(absl::StrCat("c", next));
  EXPECT_TRUE(successor.has_value()) << "the observer did not follow to c" << next;
  if (seen && successor) {
    EXPECT_GT(successor->epoch, seen->epoch);
  }
  monitor.Stop();
  EXPECT_TRUE(monitor.violations().empty()) << monitor.violations().size();
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(overlaps, 0) << absl::StrJoin(history, " ");
    std::printf("history: %s\n", absl::StrJoin(history, " ").c_str());
  }
  observer->reset();
  for (auto& c : candidates) (void)c->Leave();
  candidates.clear();
}

// Promise (barrier.h): "all are released together once `count` have
// entered"; "A request that fails with its connection (the `ready` create, a
// listing, a leaving member's delete) is sent again once the session is
// connected, up to the timeout"; "a member's create whose reply is lost is
// found again ..., never made twice (no phantom member)". Three members on
// three servers; the third enters while its server is frozen, and the first
// leaves while its server is frozen.
TEST_F(Review50Test, DoubleBarrierMembersOnFrozenServersEnterAndLeaveTogether) {
  absl::StatusOr<int> zk_leader = ensemble_->Leader();
  ASSERT_TRUE(zk_leader.ok()) << zk_leader.status();
  const int f1 = OtherThan(*zk_leader);
  const int f2 = OtherThan(*zk_leader, f1);
  // Members 0 and 2 on the followers, member 1 on the leader.
  std::vector<std::unique_ptr<Session>> sessions;
  for (int member : {f1, *zk_leader, f2}) {
    std::unique_ptr<Session> s = SessionOn(member);
    ASSERT_NE(s, nullptr);
    sessions.push_back(std::move(s));
  }
  const std::string path = root_ + "/round";
  std::vector<std::unique_ptr<DoubleBarrier>> members;
  for (int i = 0; i < 3; ++i) {
    auto m = DoubleBarrier::Create(*sessions[i], path, absl::StrCat("m", i), 3);
    ASSERT_TRUE(m.ok()) << m.status();
    members.push_back(std::move(*m));
  }
  std::vector<std::future<absl::Status>> entered;
  for (int i = 0; i < 2; ++i) {
    entered.push_back(std::async(std::launch::async,
                                 [&, i] { return members[i]->Enter(absl::Seconds(60)); }));
  }
  ASSERT_TRUE(testing::AwaitChildCount(*admin_, path, 2));
  ASSERT_TRUE(ensemble_->Pause(f2).ok());
  entered.push_back(
      std::async(std::launch::async, [&] { return members[2]->Enter(absl::Seconds(60)); }));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(entered[i].wait_for(std::chrono::seconds(70)), std::future_status::ready) << i;
  }
  ASSERT_TRUE(ensemble_->Resume(f2).ok());
  std::vector<absl::Status> enter_status;
  for (auto& f : entered) enter_status.push_back(f.get());
  // On a loaded machine (the suite in parallel, three servers on two cores)
  // the ensemble may lose its quorum long enough for a session to expire:
  // then the truthful answer is the session-lost status, and the member's
  // node goes with its session (TearDown checks that nothing is left).
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(enter_status[i].ok() || IsSessionLost(enter_status[i]))
        << "m" << i << ": " << enter_status[i]
                                      << " (session " << SessionStateName(sessions[i]->state())
                                      << ")";
  }
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  auto children = admin_->GetChildren(path);
  ASSERT_TRUE(children.ok());
  std::printf("inside: %s\n", absl::StrJoin(*children, ",").c_str());
  // Leave: m0's server frozen meanwhile.
  ASSERT_TRUE(ensemble_->Pause(f1).ok());
  std::vector<std::future<absl::Status>> left;
  for (int i = 0; i < 3; ++i) {
    if (!members[i]->entered()) {
      left.push_back(std::async(std::launch::deferred, [] { return absl::OkStatus(); }));
      continue;
    }
    left.push_back(std::async(std::launch::async,
                              [&, i] { return members[i]->Leave(absl::Seconds(60)); }));
  }
  for (int i = 0; i < 3; ++i) {
    if (left[i].wait_for(std::chrono::seconds(0)) == std::future_status::deferred) continue;
    ASSERT_EQ(left[i].wait_for(std::chrono::seconds(70)), std::future_status::ready) << i;
  }
  ASSERT_TRUE(ensemble_->Resume(f1).ok());
  for (int i = 0; i < 3; ++i) {
    absl::Status s = left[i].get();
    EXPECT_TRUE(s.ok() || IsSessionLost(s)) << "m" << i << " leave: " << s;
  }
  members.clear();
}

// Promises: ~LeaderElection "waits no longer" than one session timeout;
// ~DoubleBarrier "waits at most one session timeout"; LockGuard::Release
// waits "at most until the session's lease runs out"; and nothing is left
// behind afterwards (TearDown), no watch. Every recipe object, then the
// session, is destroyed while the member the session is connected to is
// frozen.
TEST_F(Review50Test, DestroyingEverythingWhileTheConnectedMemberIsFrozen) {
  absl::StatusOr<int> zk_leader = ensemble_->Leader();
  ASSERT_TRUE(zk_leader.ok()) << zk_leader.status();
  const int frozen = OtherThan(*zk_leader);
  std::unique_ptr<Session> s = SessionOn(frozen);
  ASSERT_NE(s, nullptr);
  const absl::Duration t = s->negotiated_timeout();
  auto lock = ExclusiveLock::Create(*s, root_ + "/lock");
  auto sem = Semaphore::Create(*s, root_ + "/sem", 3);
  ElectionOptions eo;
  eo.id = "e";
  auto election = LeaderElection::Create(*s, root_ + "/elect", eo);
  GroupOptions go;
  go.id = "g";
  auto member = GroupMember::Create(*s, root_ + "/group", go);
  auto barrier = DoubleBarrier::Create(*s, root_ + "/barrier", "b", 1);
  ASSERT_TRUE(lock.ok() && sem.ok() && election.ok() && member.ok() && barrier.ok());
  auto guard = (*lock)->Acquire(absl::Seconds(10));
  auto lease = (*sem)->Acquire(2, absl::Seconds(10));
  ASSERT_TRUE(guard.ok() && lease.ok());
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  ASSERT_TRUE((*member)->Join().ok());
  ASSERT_TRUE((*barrier)->Enter(absl::Seconds(10)).ok());
  auto observer = LeaderObserver::Create(*s, root_ + "/elect");
  auto watch = GroupWatch::Create(*s, root_ + "/group", [](const auto&) {});
  ASSERT_TRUE(observer.ok() && watch.ok());
  ASSERT_TRUE((*observer)->Current(absl::Seconds(10)).ok());

  ASSERT_TRUE(ensemble_->Pause(frozen).ok());
  auto timed = [](const char* what, absl::Duration bound, const std::function<void()>& f) {
    const absl::Time start = absl::Now();
    f();
    const absl::Duration took = absl::Now() - start;
    std::printf("%s: %s\n", what, absl::FormatDuration(took).c_str());
    EXPECT_LE(took, bound) << what;
  };
  const absl::Duration slack = absl::Seconds(3);
  timed("guard release", t + slack, [&] { EXPECT_TRUE(guard->Release().ok()); });
  timed("semaphore lease release", t + slack, [&] { EXPECT_TRUE(lease->Release().ok()); });
  timed("~LeaderElection", t + slack, [&] { election->reset(); });
  timed("~DoubleBarrier", t + slack, [&] { barrier->reset(); });
  timed("~GroupMember", t + slack, [&] { member->reset(); });
  timed("~LeaderObserver", slack, [&] { observer->reset(); });
  timed("~GroupWatch", slack, [&] { watch->reset(); });
  lock->reset();
  sem->reset();
  std::printf("session %s, generation %llu, on member %d\n",
              std::string(SessionStateName(s->state())).c_str(),
              static_cast<unsigned long long>(s->generation()), ConnectedMember(*s));
  const int64_t id = s->session_id();
  timed("Session::Close", t + slack, [&] { s->Close(); });
  s.reset();
  ASSERT_TRUE(ensemble_->Resume(frozen).ok());
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  EXPECT_TRUE(Eventually([&] { return WatchesOf(id, root_).empty(); }, absl::Seconds(30)))
      << absl::StrJoin(WatchesOf(id, root_), "; ");
}

// Promise (README "Nothing left behind"): "an attempt that times out or is
// cancelled deletes its node (retried until done) ...; no watch is left on
// the server"; observers and group watches stop watching when destroyed
// (leader_observer.h, group_member.h). A session on a member that is frozen:
// its lock waiter times out, its observer and group watch are destroyed,
// all while the connection is silent; the C client then reconnects to
// another member within the session (and sets its watches again there).
// Afterwards the session lists no watch and no node of those that gave up.
TEST_F(Review50Test, GivingUpWhileTheConnectedMemberIsFrozenLeavesNoWatch) {
  absl::StatusOr<int> zk_leader = ensemble_->Leader();
  ASSERT_TRUE(zk_leader.ok()) << zk_leader.status();
  const int frozen = OtherThan(*zk_leader);
  const int holder_member = *zk_leader;
  SessionOptions long_options = Options();
  long_options.session_timeout = absl::Seconds(12);
  std::unique_ptr<Session> a_session = SessionOn(holder_member);
  std::unique_ptr<Session> s = SessionOn(frozen, long_options);
  ASSERT_NE(a_session, nullptr);
  ASSERT_NE(s, nullptr);
  testing::StateRecorder states(*s);
  const std::string lock_path = root_ + "/lock";
  const std::string elect_path = root_ + "/elect";
  const std::string group_path = root_ + "/group";
  auto a_lock = ExclusiveLock::Create(*a_session, lock_path);
  ASSERT_TRUE(a_lock.ok());
  auto a = (*a_lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(a.ok()) << a.status();
  ElectionOptions eo;
  eo.id = "leader";
  auto election = LeaderElection::Create(*a_session, elect_path, eo);
  ASSERT_TRUE(election.ok() && (*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  GroupOptions go;
  go.id = "m";
  auto member = GroupMember::Create(*a_session, group_path, go);
  ASSERT_TRUE(member.ok() && (*member)->Join().ok());

  auto observer = LeaderObserver::Create(*s, elect_path);
  ASSERT_TRUE(observer.ok());
  ASSERT_TRUE((*observer)->Current(absl::Seconds(10)).ok());
  auto watch = GroupWatch::Create(*s, group_path, [](const auto&) {});
  ASSERT_TRUE(watch.ok());
  auto b_lock = ExclusiveLock::Create(*s, lock_path);
  ASSERT_TRUE(b_lock.ok());
  auto b = std::async(std::launch::async,
                      [&] { return (*b_lock)->Acquire(absl::Seconds(2)).status(); });
  ASSERT_TRUE(testing::AwaitChildCount(*admin_, lock_path, 2));
  // The waiter, the observer and the group watch all watch something now.
  EXPECT_TRUE(Eventually([&] { return WatchesOf(s->session_id(), root_).size() >= 3; },
                         absl::Seconds(10)))
      << absl::StrJoin(WatchesOf(s->session_id(), root_), "; ");
  std::printf("watches before: %s\n", absl::StrJoin(WatchesOf(s->session_id(), root_), "; ").c_str());

  ASSERT_TRUE(ensemble_->Pause(frozen).ok());
  observer->reset();
  watch->reset();
  ASSERT_EQ(b.wait_for(std::chrono::seconds(40)), std::future_status::ready);
  absl::Status b_status = b.get();
  EXPECT_TRUE(absl::IsDeadlineExceeded(b_status)) << b_status;
  // The session survives on another member.
  EXPECT_TRUE(states.WaitFor(SessionState::kReconnected, 1, absl::Seconds(40)).has_value())
      << "session states: " << states.states().size();
  ASSERT_TRUE(ensemble_->Resume(frozen).ok());
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  ASSERT_EQ(s->generation(), 1u);
  ASSERT_TRUE(s->Exists(root_).ok());  // a round trip
  std::vector<std::string> left;
  Eventually(
      [&] {
        left = WatchesOf(s->session_id(), root_);
        return left.empty();
      },
      absl::Seconds(5));
  EXPECT_TRUE(left.empty()) << "watches of the session that gave up: " << absl::StrJoin(left, "; ");
  auto children = admin_->GetChildren(lock_path);
  ASSERT_TRUE(children.ok());
  EXPECT_EQ(children->size(), 1u) << absl::StrJoin(*children, ",");
  EXPECT_TRUE(a->Release().ok());
  EXPECT_TRUE((*member)->Leave().ok());
  EXPECT_TRUE((*election)->Leave().ok());
  b_lock->reset();
}

// Promise (barrier.h): Barrier::Wait "Waits until the barrier node is
// absent. DeadlineExceeded after `timeout`"; "Timeouts are measured on the
// session's monotonic clock". Also DoubleBarrier::Enter, GroupMember::Join
// ("DeadlineExceeded (nothing left behind) after `timeout`"), the observer
// and a lock. Each is called with a 1 s timeout while the member the
// session is connected to is frozen (the client does not know yet: it hears
// silence for 2/3 of the 30 s session timeout, then reconnects elsewhere).
// A wait must return by its deadline (3 s of slack), not when the client
// gives up on the connection.
TEST_F(Review50Test, ShortTimeoutsReturnByTheirDeadlineWhileTheConnectedMemberIsFrozen) {
  absl::StatusOr<int> zk_leader = ensemble_->Leader();
  ASSERT_TRUE(zk_leader.ok()) << zk_leader.status();
  const int frozen = OtherThan(*zk_leader);
  SessionOptions long_options = Options();
  long_options.session_timeout = absl::Seconds(30);
  std::unique_ptr<Session> s = SessionOn(frozen, long_options);
  ASSERT_NE(s, nullptr);
  auto gate_setter = Barrier::Create(*admin_, root_ + "/gate");
  ASSERT_TRUE(gate_setter.ok() && (*gate_setter)->Set().ok());
  auto gate = Barrier::Create(*s, root_ + "/gate");
  auto round = DoubleBarrier::Create(*s, root_ + "/round", "m", 2);
  GroupOptions go;
  go.id = "g";
  auto member = GroupMember::Create(*s, root_ + "/group", go);
  auto lock = ExclusiveLock::Create(*s, root_ + "/lock");
  ASSERT_TRUE(gate.ok() && round.ok() && member.ok() && lock.ok());
  auto observer = LeaderObserver::Create(*s, root_ + "/elect");
  ASSERT_TRUE(observer.ok());
  ASSERT_TRUE((*observer)->Current(absl::Seconds(10)).ok());
  ASSERT_TRUE(ensemble_->Pause(frozen).ok());
  const absl::Duration timeout = absl::Seconds(1);
  const absl::Duration slack = absl::Seconds(3);
  struct Result {
    std::string what;
    absl::Status status;
    absl::Duration took;
  };
  auto run = [](std::string what, std::function<absl::Status()> f) {
    return std::async(std::launch::async, [what, f] {
      const absl::Time start = absl::Now();
      absl::Status status = f();
      return Result{what, status, absl::Now() - start};
    });
  };
  std::vector<std::future<Result>> calls;
  // Barrier::Wait creates nothing: it has no cleanup to wait for. The
  // others create a node whose create's outcome is unknown; like a lock's
  // acquisition (README "Limits": "A timed-out acquisition waits at most one
  // session timeout more for its node's delete") they are allowed one
  // session timeout more.
  calls.push_back(run("Barrier::Wait", [&] { return (*gate)->Wait(timeout); }));
  calls.push_back(run("DoubleBarrier::Enter (allowed + one session timeout)",
                      [&] { return (*round)->Enter(timeout); }));
  calls.push_back(run("GroupMember::Join (allowed + one session timeout)",
                      [&] { return (*member)->Join(timeout); }));
  calls.push_back(run("LeaderObserver::AwaitChange",
                      [&] { return (*observer)->AwaitChange(std::nullopt, timeout).status(); }));
  calls.push_back(
      run("ExclusiveLock::Acquire (allowed + one session timeout)",
          [&] { return (*lock)->Acquire(timeout).status(); }));
  for (auto& f : calls) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(90)), std::future_status::ready);
    Result r = f.get();
    std::printf("%s: %s after %s\n", r.what.c_str(), r.status.ToString().c_str(),
                absl::FormatDuration(r.took).c_str());
    const bool lock_allowance = absl::StrContains(r.what, "allowed");
    EXPECT_LE(r.took, timeout + slack + (lock_allowance ? s->negotiated_timeout() : absl::ZeroDuration()))
        << r.what << " returned " << r.status << " after " << r.took;
  }
  ASSERT_TRUE(ensemble_->Resume(frozen).ok());
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  round->reset();
  member->reset();
  observer->reset();
  lock->reset();
  ASSERT_TRUE((*gate_setter)->Remove().ok());
}

// Promise (session.h): Close() "every pending operation completes with
// Cancelled, listeners see kClosed, and the close request is sent; ... (the
// C client does not wait for its reply)". The session's member is frozen
// (the client believes it is connected) with a request outstanding; Close()
// and the destructor must not wait for the frozen server, and the pending
// request completes with Cancelled.
TEST_F(Review50Test, ClosingASessionWhoseMemberIsFrozenDoesNotWaitForIt) {
  absl::StatusOr<int> zk_leader = ensemble_->Leader();
  ASSERT_TRUE(zk_leader.ok()) << zk_leader.status();
  const int frozen = OtherThan(*zk_leader);
  SessionOptions long_options = Options();
  long_options.session_timeout = absl::Seconds(30);
  std::unique_ptr<Session> s = SessionOn(frozen, long_options);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Create(root_, "", CreateMode::kPersistent, {}).ok() ||
              admin_->Exists(root_).ok());
  ASSERT_TRUE(s->Create(root_ + "/eph", "", CreateMode::kEphemeral).ok());
  ASSERT_TRUE(ensemble_->Pause(frozen).ok());
  absl::Notification answered;
  absl::Status pending;
  s->GetChildrenAsync(root_, [&](absl::StatusOr<std::vector<std::string>> r) {
    pending = r.status();
    answered.Notify();
  });
  const absl::Time start = absl::Now();
  auto closed = std::async(std::launch::async, [&] { s->Close(); });
  const bool returned = closed.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  const absl::Duration took = absl::Now() - start;
  EXPECT_TRUE(returned) << "Close() had not returned after " << took;
  if (!returned) {
    ASSERT_EQ(closed.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  }
  std::printf("Close: %s\n", absl::FormatDuration(absl::Now() - start).c_str());
  EXPECT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_TRUE(absl::IsCancelled(pending)) << pending;
  s.reset();
  ASSERT_TRUE(ensemble_->Resume(frozen).ok());
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  EXPECT_TRUE(Eventually(
      [&] {
        auto e = admin_->Exists(root_ + "/eph");
        return e.ok() && !e->has_value();
      },
      absl::Seconds(40)));
}

// Promise (leader_election.h): Join() "Queues this candidate and returns at
// once (leadership is reported through IsLeader/AwaitLeadership/on_change)";
// AwaitLeadership "DeadlineExceeded after `timeout`". Called while the
// session's member is frozen (30 s session: 20 s of silence before the
// client moves on); once the member is back the candidate leads and leaves
// nothing behind.
TEST_F(Review50Test, JoiningAnElectionWhileTheConnectedMemberIsFrozenReturnsAtOnce) {
  absl::StatusOr<int> zk_leader = ensemble_->Leader();
  ASSERT_TRUE(zk_leader.ok()) << zk_leader.status();
  const int frozen = OtherThan(*zk_leader);
  SessionOptions long_options = Options();
  long_options.session_timeout = absl::Seconds(30);
  std::unique_ptr<Session> s = SessionOn(frozen, long_options);
  ASSERT_NE(s, nullptr);
  ElectionOptions eo;
  eo.id = "c";
  auto election = LeaderElection::Create(*s, root_ + "/elect", eo);
  ASSERT_TRUE(election.ok());
  ASSERT_TRUE(ensemble_->Pause(frozen).ok());
  absl::Time start = absl::Now();
  absl::Status joined = (*election)->Join();
  const absl::Duration join_took = absl::Now() - start;
  start = absl::Now();
  absl::Status led = (*election)->AwaitLeadership(absl::Seconds(1));
  const absl::Duration await_took = absl::Now() - start;
  std::printf("Join: %s after %s; AwaitLeadership(1s): %s after %s\n",
              joined.ToString().c_str(), absl::FormatDuration(join_took).c_str(),
              led.ToString().c_str(), absl::FormatDuration(await_took).c_str());
  EXPECT_TRUE(joined.ok()) << joined;
  EXPECT_LE(join_took, absl::Seconds(3));
  EXPECT_LE(await_took, absl::Seconds(4));
  ASSERT_TRUE(ensemble_->Resume(frozen).ok());
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  EXPECT_TRUE((*election)->AwaitLeadership(absl::Seconds(60)).ok());
  EXPECT_TRUE((*election)->Leave().ok());
  election->reset();
}

// The Barrier::Wait case alone. Promise (barrier.h): "Wait: Waits until
// the barrier node is absent. DeadlineExceeded after `timeout`"; "Timeouts
// are measured on the session's monotonic clock". Wait creates nothing, so
// no cleanup excuses a late return. A Wait begun before the freeze (its
// watch set) returns on time; one begun during the freeze waits for the
// watching read's reply, which comes only when the client gives up on the
// connection (2/3 of the session timeout: 20 s here for a 1 s timeout).
TEST_F(Review50Test, BarrierWaitBegunWhileTheConnectedMemberIsFrozenReturnsByItsDeadline) {
  absl::StatusOr<int> zk_leader = ensemble_->Leader();
  ASSERT_TRUE(zk_leader.ok()) << zk_leader.status();
  const int frozen = OtherThan(*zk_leader);
  SessionOptions long_options = Options();
  long_options.session_timeout = absl::Seconds(30);
  std::unique_ptr<Session> s = SessionOn(frozen, long_options);
  ASSERT_NE(s, nullptr);
  auto setter = Barrier::Create(*admin_, root_ + "/gate");
  ASSERT_TRUE(setter.ok() && (*setter)->Set().ok());
  auto gate = Barrier::Create(*s, root_ + "/gate");
  auto early_gate = Barrier::Create(*s, root_ + "/gate");
  ASSERT_TRUE(gate.ok() && early_gate.ok());
  // Control: begun before the freeze.
  auto early = std::async(std::launch::async, [&] {
    const absl::Time start = absl::Now();
    absl::Status st = (*early_gate)->Wait(absl::Seconds(2));
    return std::make_pair(st, absl::Now() - start);
  });
  EXPECT_TRUE(Eventually([&] { return !WatchesOf(s->session_id(), root_).empty(); },
                         absl::Seconds(5)));
  ASSERT_TRUE(ensemble_->Pause(frozen).ok());
  const absl::Time start = absl::Now();
  absl::Status waited = (*gate)->Wait(absl::Seconds(1));
  const absl::Duration took = absl::Now() - start;
  auto [early_status, early_took] = early.get();
  std::printf("begun before the freeze, Wait(2s): %s after %s\n",
              early_status.ToString().c_str(), absl::FormatDuration(early_took).c_str());
  std::printf("begun during the freeze, Wait(1s): %s after %s\n", waited.ToString().c_str(),
              absl::FormatDuration(took).c_str());
  EXPECT_TRUE(absl::IsDeadlineExceeded(early_status));
  EXPECT_LE(early_took, absl::Seconds(5));
  EXPECT_TRUE(absl::IsDeadlineExceeded(waited)) << waited;
  EXPECT_LE(took, absl::Seconds(4)) << "Wait(1s) returned after " << took;
  ASSERT_TRUE(ensemble_->Resume(frozen).ok());
  ASSERT_TRUE(ensemble_->WaitUntilServing().ok());
  // The member answers the given-up read late, on the same connection (the
  // client had not given up on it): the watch that sets is removed again.
  std::vector<std::string> watches;
  EXPECT_TRUE(Eventually(
      [&] {
        watches = WatchesOf(s->session_id(), root_);
        return watches.empty();
      },
      absl::Seconds(20)))
      << absl::StrJoin(watches, ", ");
  ASSERT_TRUE((*setter)->Remove().ok());
}

}  // namespace
}  // namespace zkr
