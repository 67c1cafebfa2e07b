// The session and the recipes against a real 3-node ensemble: losing the
// connected member keeps the session, and with it locks, leases and
// leadership.
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "src/session_core.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/revocation.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/testing/zookeeper_server.h"
#include "src/session_access.h"

namespace zkr {

using internal::SetClientLog;
namespace {

using testing::ZooKeeperEnsemble;

class EnsembleTest : public ::testing::Test {
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
  void SetUp() override { ASSERT_NE(ensemble_, nullptr); }

  // Sessions on the whole ensemble; the client's log (noisy while members
  // are killed) is silenced.
  static SessionOptions EnsembleOptions() {
    SessionOptions options;
    options.connect = ensemble_->connect_string();
    options.session_timeout = absl::Seconds(8);
    options.log_sink = [](absl::string_view) {};
    return options;
  }

  static ZooKeeperEnsemble* ensemble_;
};
ZooKeeperEnsemble* EnsembleTest::ensemble_ = nullptr;

// The ensemble member the session is connected to.
int ConnectedMember(Session& session, const ZooKeeperEnsemble& ensemble) {
  std::string server = internal::CoreOf(session)->current().client->current_server();
  std::vector<std::string> parts = absl::StrSplit(server, ':');
  int port = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts.back(), &port)) return -1;
  return ensemble.MemberByClientPort(port);
}

TEST_F(EnsembleTest, KillingTheConnectedMemberSuspendsThenReconnectsTheSameSession) {
  SessionOptions options = EnsembleOptions();
  auto session = Session::Connect(options);
  ASSERT_TRUE(session.ok()) << session.status();
  testing::StateRecorder states(**session);
  const std::string path = absl::StrCat("/ensemble-eph-", getpid());
  ASSERT_TRUE((*session)->Create(path, "", CreateMode::kEphemeral).ok());
  const int64_t id = (*session)->session_id();
  const int member = ConnectedMember(**session, *ensemble_);
  ASSERT_GE(member, 0);

  ASSERT_TRUE(ensemble_->Kill(member).ok());
  EXPECT_TRUE(states.WaitFor(SessionState::kSuspended, 1, absl::Seconds(60)).has_value());
  EXPECT_TRUE(states.WaitFor(SessionState::kReconnected, 1, absl::Seconds(60)).has_value());
  EXPECT_EQ((*session)->session_id(), id);
  EXPECT_EQ((*session)->generation(), 1u);
  auto still = (*session)->Exists(path);
  ASSERT_TRUE(still.ok()) << still.status();
  ASSERT_TRUE(still->has_value());
  EXPECT_EQ((*still)->ephemeral_owner, id);
  EXPECT_EQ(states.states(),
            (std::vector<SessionState>{SessionState::kSuspended, SessionState::kReconnected}));
  EXPECT_NE(ConnectedMember(**session, *ensemble_), member);

  ASSERT_TRUE(ensemble_->Restart(member).ok());
  EXPECT_TRUE((*session)->Delete(path).ok());
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

TEST_F(EnsembleTest, ForcedExpiryOnTheEnsembleGivesLostThenANewSession) {
  SessionOptions options = EnsembleOptions();
  auto session = Session::Connect(options);
  ASSERT_TRUE(session.ok()) << session.status();
  testing::StateRecorder states(**session);
  const std::string path = absl::StrCat("/ensemble-exp-", getpid());
  ASSERT_TRUE((*session)->Create(path, "", CreateMode::kEphemeral).ok());
  ASSERT_TRUE(testing::ExpireSession(**session).ok());
  (void)(*session)->Exists(path);
  EXPECT_TRUE(states.WaitFor(SessionState::kLost, 1, absl::Seconds(60)).has_value());
  EXPECT_TRUE(states.WaitFor(SessionState::kConnected, 2, absl::Seconds(60)).has_value());
  EXPECT_EQ((*session)->generation(), 2u);
  auto gone = (*session)->Exists(path);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_FALSE(gone->has_value());
}

TEST_F(EnsembleTest, AWriteLockSurvivesTheLossOfTheConnectedMember) {
  SessionOptions options = EnsembleOptions();
  auto session = Session::Connect(options);
  ASSERT_TRUE(session.ok()) << session.status();
  absl::Mutex mu;
  std::vector<LockState> seen;
  LockOptions lock_options;
  lock_options.on_state_change = [&](LockState state) {
    absl::MutexLock lock(&mu);
    seen.push_back(state);
  };
  const std::string path = absl::StrCat("/ensemble-lock-", getpid());
  auto lock = SharedLock::Create(**session, path, lock_options);
  ASSERT_TRUE(lock.ok());
  auto guard = (*lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(guard.ok()) << guard.status();
  const int member = ConnectedMember(**session, *ensemble_);
  ASSERT_GE(member, 0);

  ASSERT_TRUE(ensemble_->Kill(member).ok());
  // SUSPENDED, then HELD again once RECONNECTED and the node re-checked.
  auto held_again = [&] {
    absl::MutexLock lock(&mu);
    return seen.size() >= 2 && seen.back() == LockState::kHeld;
  };
  for (int i = 0; i < 600 && !held_again(); ++i) absl::SleepFor(absl::Milliseconds(50));
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(seen, (std::vector<LockState>{LockState::kSuspended, LockState::kHeld}));
  }
  EXPECT_TRUE(guard->held());
  auto other = Session::Connect(options);
  ASSERT_TRUE(other.ok());
  auto contender = SharedLock::Create(**other, path);
  EXPECT_TRUE(absl::IsDeadlineExceeded((*contender)->TryAcquireWrite().status()));
  ASSERT_TRUE(guard->Release().ok());
  ASSERT_TRUE(ensemble_->Restart(member).ok());
  EXPECT_TRUE((*session)->Delete(path).ok());
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

// A semaphore of 2 leases on the ensemble: A and B hold, C waits. The
// member A is connected to dies: A's lease survives (SUSPENDED, then HELD),
// C still waits; B releases and C gets B's lease, not A's.
TEST_F(EnsembleTest, SemaphoreLeasesSurviveTheLossOfAMemberAndPassOnRelease) {
  SessionOptions options = EnsembleOptions();
  const std::string path = absl::StrCat("/ensemble-semaphore-", getpid());
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<Semaphore>> semaphores;
  for (int i = 0; i < 3; ++i) {
    auto session = Session::Connect(options);
    ASSERT_TRUE(session.ok()) << session.status();
    sessions.push_back(std::move(*session));
    auto semaphore = Semaphore::Create(*sessions.back(), path, 2);
    ASSERT_TRUE(semaphore.ok());
    semaphores.push_back(std::move(*semaphore));
  }
  auto a = semaphores[0]->Acquire(1, absl::Seconds(10));
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = semaphores[1]->Acquire(1, absl::Seconds(10));
  ASSERT_TRUE(b.ok()) << b.status();
  std::future<absl::StatusOr<LockGuard>> c = semaphores[2]->AcquireFuture(1);
  const int member = ConnectedMember(*sessions[0], *ensemble_);
  ASSERT_GE(member, 0);
  ASSERT_TRUE(ensemble_->Kill(member).ok());
  for (int i = 0; i < 600 && !(a->held() && sessions[0]->state() == SessionState::kReconnected);
       ++i) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(a->held());
  EXPECT_EQ(c.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "C got a lease while A and B still held theirs";
  ASSERT_TRUE(b->Release().ok());
  ASSERT_EQ(c.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  absl::StatusOr<LockGuard> c_lease = c.get();
  ASSERT_TRUE(c_lease.ok()) << c_lease.status();
  EXPECT_TRUE(a->held());
  EXPECT_GT(c_lease->fencing_token(), b->fencing_token());
  ASSERT_TRUE(c_lease->Release().ok());
  ASSERT_TRUE(a->Release().ok());
  ASSERT_TRUE(ensemble_->Restart(member).ok());
  semaphores.clear();
  EXPECT_TRUE(sessions[1]->Delete(path).ok());
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

// On the ensemble: a MultiLock over two paths is taken whole; a contender
// revokes it; not listening, the holder is forced out of both parts (LOST)
// and the contender gets both.
TEST_F(EnsembleTest, AMultiLockIsRevokedWholeOnTheEnsemble) {
  SessionOptions options = EnsembleOptions();
  const std::string a = absl::StrCat("/ensemble-multi-a-", getpid());
  const std::string b = absl::StrCat("/ensemble-multi-b-", getpid());
  auto holder_session = Session::Connect(options);
  auto contender_session = Session::Connect(options);
  ASSERT_TRUE(holder_session.ok() && contender_session.ok());
  LockOptions lock_options;
  lock_options.own_node_watch_delay = absl::ZeroDuration();
  auto holder = MultiLock::Create(**holder_session, {{a, LockMode::kWrite}, {b, LockMode::kRead}},
                                  lock_options);
  auto contender =
      MultiLock::Create(**contender_session, {{b, LockMode::kWrite}, {a, LockMode::kWrite}});
  ASSERT_TRUE(holder.ok() && contender.ok());
  absl::StatusOr<MultiLockGuard> held = (*holder)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(absl::IsDeadlineExceeded((*contender)->TryAcquire().status()));
  RevokeOptions ask;
  ask.grace = absl::Milliseconds(200);
  for (const std::string& path : {a, b}) {
    auto outcomes = Revoke(**contender_session, path, ask);
    ASSERT_TRUE(outcomes.ok()) << outcomes.status();
    ASSERT_EQ(outcomes->size(), 1u);
    EXPECT_EQ((*outcomes)[0].how, RevokeOutcome::How::kForced);
  }
  for (int i = 0; i < 500 && held->state() != LockState::kLost; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(held->state(), LockState::kLost);
  absl::StatusOr<MultiLockGuard> taken = (*contender)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_GT(taken->fencing_token(a), held->fencing_token(a));
  ASSERT_TRUE(taken->Release().ok());
  EXPECT_TRUE(held->Release().ok());
  EXPECT_TRUE((*contender_session)->Delete(a).ok());
  EXPECT_TRUE((*contender_session)->Delete(b).ok());
}

// On the ensemble: an observer follows a leader through the loss of the
// member the observer is connected to, and a group member stays listed
// through it; then the leader yields and the observer reports the next one.
TEST_F(EnsembleTest, ObserversAndMembersFollowThroughTheLossOfAMember) {
  SessionOptions options = EnsembleOptions();
  const std::string election = absl::StrCat("/ensemble-observed-", getpid());
  const std::string group = absl::StrCat("/ensemble-group-", getpid());
  std::vector<std::unique_ptr<Session>> sessions;
  for (int i = 0; i < 3; ++i) {
    auto session = Session::Connect(options);
    ASSERT_TRUE(session.ok()) << session.status();
    sessions.push_back(std::move(*session));
  }
  std::vector<std::unique_ptr<LeaderElection>> candidates;
  for (int i = 0; i < 2; ++i) {
    ElectionOptions election_options;
    election_options.id = absl::StrCat("c", i);
    election_options.data = absl::StrCat("10.0.0.", i);
    auto candidate = LeaderElection::Create(*sessions[i], election, election_options);
    ASSERT_TRUE(candidate.ok());
    ASSERT_TRUE((*candidate)->Join().ok());
    if (i == 0) {
      ASSERT_TRUE((*candidate)->AwaitLeadership(absl::Seconds(10)).ok());
    }
    candidates.push_back(std::move(*candidate));
  }
  GroupOptions member_options;
  member_options.id = "m";
  member_options.data = "here";
  auto member = GroupMember::Create(*sessions[2], group, member_options);
  ASSERT_TRUE(member.ok() && (*member)->Join().ok());
  auto observer = LeaderObserver::Create(*sessions[2], election);
  ASSERT_TRUE(observer.ok());
  auto taken_by = [&](const std::string& id) {
    absl::StatusOr<std::optional<LeaderInfo>> now = (*observer)->Current(absl::Seconds(20));
    while (now.ok() && !(now->has_value() && (*now)->id == id && (*now)->taken_over)) {
      now = (*observer)->AwaitChange(*now, absl::Seconds(20));
    }
    return now.ok() ? *now : std::nullopt;
  };
  std::optional<LeaderInfo> first = taken_by("c0");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->data, "10.0.0.0");

  const int member_index = ConnectedMember(*sessions[2], *ensemble_);
  ASSERT_GE(member_index, 0);
  ASSERT_TRUE(ensemble_->Kill(member_index).ok());
  // Suspended while the client reconnects; a member again once its node is
  // re-checked on the same session.
  for (int i = 0; i < 600 && !(*member)->joined(); ++i) absl::SleepFor(absl::Milliseconds(50));
  EXPECT_TRUE((*member)->joined());
  // The leader yields (its own session may be on the dead member too: the
  // client reconnects first); the observer follows to c1.
  absl::Status yielded;
  for (int i = 0; i < 200; ++i) {
    yielded = candidates[0]->Yield();
    if (yielded.ok() || !absl::IsFailedPrecondition(yielded)) break;
    absl::SleepFor(absl::Milliseconds(50));  // suspended, not leading yet again
  }
  ASSERT_TRUE(yielded.ok()) << yielded;
  std::optional<LeaderInfo> second = taken_by("c1");
  ASSERT_TRUE(second.has_value());
  EXPECT_GT(second->epoch, first->epoch);
  auto members = ListGroup(*sessions[0], group);
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 1u);
  EXPECT_EQ((*members)[0].data, "here");
  ASSERT_TRUE(ensemble_->Restart(member_index).ok());
  observer->reset();
  ASSERT_TRUE((*member)->Leave().ok());
  for (auto& c : candidates) (void)c->Leave();
  candidates.clear();
  EXPECT_TRUE(sessions[0]->Delete(election).ok());
  EXPECT_TRUE(sessions[0]->Delete(group).ok());
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

TEST_F(EnsembleTest, LeadershipSurvivesTheLossOfTheConnectedMemberAndNobodyElseLeads) {
  SessionOptions options = EnsembleOptions();
  auto leader_session = Session::Connect(options);
  ASSERT_TRUE(leader_session.ok()) << leader_session.status();
  auto other_session = Session::Connect(options);
  ASSERT_TRUE(other_session.ok()) << other_session.status();
  absl::Mutex mu;
  std::vector<Leadership> leader_seen, other_seen;  // guarded by mu
  auto record = [&mu](std::vector<Leadership>* seen) {
    return [&mu, seen](Leadership leadership) {
      absl::MutexLock lock(&mu);
      seen->push_back(leadership);
    };
  };
  const std::string path = absl::StrCat("/ensemble-elect-", getpid());
  ElectionOptions leader_options;
  leader_options.id = "leader";
  leader_options.on_change = record(&leader_seen);
  auto leader = LeaderElection::Create(**leader_session, path, leader_options);
  ASSERT_TRUE(leader.ok()) << leader.status();
  ElectionOptions other_options;
  other_options.id = "other";
  other_options.on_change = record(&other_seen);
  auto other = LeaderElection::Create(**other_session, path, other_options);
  ASSERT_TRUE(other.ok()) << other.status();

  ASSERT_TRUE((*leader)->Join().ok());
  ASSERT_TRUE((*leader)->AwaitLeadership(absl::Seconds(10)).ok());
  const int64_t epoch = (*leader)->epoch();
  ASSERT_GT(epoch, 0);
  ASSERT_TRUE((*other)->Join().ok());
  std::vector<std::string> both = {"leader", "other"};
  for (int i = 0; i < 2000; ++i) {
    auto participants = (*leader)->Participants();
    if (participants.ok() && *participants == both) break;
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(*(*leader)->Participants(), both);
  const int64_t session_id = (*leader_session)->session_id();
  const int member = ConnectedMember(**leader_session, *ensemble_);
  ASSERT_GE(member, 0);

  ASSERT_TRUE(ensemble_->Kill(member).ok());
  // SUSPENDED, then LEADER again (same node, same epoch) once RECONNECTED
  // and the node re-checked.
  auto led_again = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return leader_seen.size() >= 3 && leader_seen.back() == Leadership::kLeader;
  };
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&led_again), absl::Seconds(60)));
    EXPECT_EQ(leader_seen, (std::vector<Leadership>{Leadership::kLeader, Leadership::kSuspended,
                                                    Leadership::kLeader}));
  }
  EXPECT_TRUE((*leader)->IsLeader());
  EXPECT_EQ((*leader)->epoch(), epoch);
  EXPECT_EQ((*leader_session)->session_id(), session_id);
  EXPECT_EQ((*leader_session)->generation(), 1u);
  EXPECT_NE(ConnectedMember(**leader_session, *ensemble_), member);
  // The other candidate never led, and still waits behind the leader.
  EXPECT_FALSE((*other)->IsLeader());
  EXPECT_TRUE(absl::IsDeadlineExceeded((*other)->AwaitLeadership(absl::Milliseconds(200))));
  auto current = (*other)->CurrentLeader();
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_EQ(*current, std::optional<std::string>("leader"));
  EXPECT_EQ(*(*leader)->Participants(), both);
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(other_seen.empty()) << "the other candidate changed leadership "
                                    << other_seen.size() << " times";
  }

  ASSERT_TRUE(ensemble_->Restart(member).ok());
  EXPECT_TRUE((*other)->Leave().ok());
  EXPECT_TRUE((*leader)->Leave().ok());
  (void)(*other_session)->Exists(path);  // its delete is done once this returns
  auto children = (*leader_session)->GetChildren(path);
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_TRUE(children->empty());
  EXPECT_TRUE((*leader_session)->Delete(path).ok());
  leader->reset();
  other->reset();
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

}  // namespace
}  // namespace zkr
