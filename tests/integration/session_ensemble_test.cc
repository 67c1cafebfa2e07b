// zkr::Session against a real 3-node ensemble: failover keeps the session.
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "src/session_core.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace {

using testing::ZooKeeperEnsemble;

class SessionEnsembleTest : public ::testing::Test {
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

  static ZooKeeperEnsemble* ensemble_;
};
ZooKeeperEnsemble* SessionEnsembleTest::ensemble_ = nullptr;

// The ensemble member the session is connected to.
int ConnectedMember(Session& session, const ZooKeeperEnsemble& ensemble) {
  std::string server = session.core()->current().client->current_server();
  std::vector<std::string> parts = absl::StrSplit(server, ':');
  int port = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts.back(), &port)) return -1;
  return ensemble.MemberByClientPort(port);
}

class States {
 public:
  explicit States(Session& session) : session_(session) {
    id_ = session.AddStateListener([this](SessionState state, uint64_t generation) {
      absl::MutexLock lock(&mu_);
      states_.push_back(state);
    });
  }
  ~States() { session_.RemoveStateListener(id_); }
  bool WaitFor(SessionState state) {
    absl::MutexLock lock(&mu_);
    auto seen = [&] {
      return std::find(states_.begin(), states_.end(), state) != states_.end();
    };
    return mu_.AwaitWithTimeout(
        absl::Condition(+[](decltype(seen)* f) { return (*f)(); }, &seen), absl::Seconds(60));
  }
  std::vector<SessionState> get() {
    absl::MutexLock lock(&mu_);
    return states_;
  }

 private:
  Session& session_;
  int id_;
  absl::Mutex mu_;
  std::vector<SessionState> states_ ABSL_GUARDED_BY(mu_);
};

TEST_F(SessionEnsembleTest, KillingTheConnectedMemberSuspendsThenReconnectsTheSameSession) {
  SessionOptions options;
  options.connect = ensemble_->connect_string();
  options.session_timeout = absl::Seconds(8);
  options.log_sink = [](absl::string_view) {};
  auto session = Session::Connect(options);
  ASSERT_TRUE(session.ok()) << session.status();
  States states(**session);
  const std::string path = absl::StrCat("/ensemble-eph-", getpid());
  ASSERT_TRUE((*session)->Create(path, "", CreateMode::kEphemeral).ok());
  const int64_t id = (*session)->session_id();
  const int member = ConnectedMember(**session, *ensemble_);
  ASSERT_GE(member, 0);

  ASSERT_TRUE(ensemble_->Kill(member).ok());
  EXPECT_TRUE(states.WaitFor(SessionState::kSuspended));
  EXPECT_TRUE(states.WaitFor(SessionState::kReconnected));
  EXPECT_EQ((*session)->session_id(), id);
  EXPECT_EQ((*session)->generation(), 1u);
  auto still = (*session)->Exists(path);
  ASSERT_TRUE(still.ok()) << still.status();
  ASSERT_TRUE(still->has_value());
  EXPECT_EQ((*still)->ephemeral_owner, id);
  EXPECT_EQ(states.get(),
            (std::vector<SessionState>{SessionState::kSuspended, SessionState::kReconnected}));
  EXPECT_NE(ConnectedMember(**session, *ensemble_), member);

  ASSERT_TRUE(ensemble_->Restart(member).ok());
  EXPECT_TRUE((*session)->Delete(path).ok());
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

TEST_F(SessionEnsembleTest, ForcedExpiryOnTheEnsembleGivesLostThenANewSession) {
  SessionOptions options;
  options.connect = ensemble_->connect_string();
  options.session_timeout = absl::Seconds(8);
  auto session = Session::Connect(options);
  ASSERT_TRUE(session.ok()) << session.status();
  States states(**session);
  const std::string path = absl::StrCat("/ensemble-exp-", getpid());
  ASSERT_TRUE((*session)->Create(path, "", CreateMode::kEphemeral).ok());
  ASSERT_TRUE(testing::ExpireSession(**session).ok());
  (void)(*session)->Exists(path);
  EXPECT_TRUE(states.WaitFor(SessionState::kLost));
  EXPECT_TRUE(states.WaitFor(SessionState::kConnected));
  EXPECT_EQ((*session)->generation(), 2u);
  auto gone = (*session)->Exists(path);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_FALSE(gone->has_value());
}

}  // namespace
}  // namespace zkr
