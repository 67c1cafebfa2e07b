// Data above the server's packet limit (issue 31 item 13). The server drops
// the connection of a client that sends a packet longer than its
// jute.maxbuffer (1 MB less one byte by default); a recipe that retried the
// write made the session flap for as long as it tried, disturbing every
// other recipe on it. Every write, the session's own and those a recipe
// makes on the caller's behalf, is refused up front with InvalidArgument
// naming the size and the limit (SessionOptions::max_request_bytes): the
// session never leaves CONNECTED, and nothing is left on the server.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ZkTest;

// 1.1 MB: over the server's default limit.
const std::string& TooLarge() {
  static const std::string* data = new std::string(1100 * 1024, 'x');
  return *data;
}

class PacketLimitTest : public ZkTest {
 protected:
  // `status` refuses the 1.1 MB write, naming its size and the limit.
  static void ExpectRefused(const absl::Status& status) {
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("1048575"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("max_request_bytes"));
  }
};

TEST_F(PacketLimitTest, TheSessionsOwnWritesAreRefusedUpFront) {
  auto session = NewSession();
  testing::StateRecorder states(*session);
  const std::string path = Path("big");
  ExpectRefused(session->Create(path, TooLarge(), CreateMode::kEphemeral).status());
  ASSERT_TRUE(session->Create(path, "small", CreateMode::kEphemeral).ok());
  ExpectRefused(session->Set(path, TooLarge()).status());
  ExpectRefused(session->Multi({Op::SetData(path, TooLarge())}).status());
  // Many small ops that add up to more than the limit.
  std::vector<Op> ops;
  for (int i = 0; i < 3; ++i) ops.push_back(Op::SetData(path, std::string(400 * 1024, 'y')));
  ExpectRefused(session->Multi(ops).status());
  EXPECT_EQ(*session->Get(path), "small");
  ASSERT_TRUE(session->Delete(path).ok());
  EXPECT_THAT(states.states(), ElementsAre()) << "the session left CONNECTED";
}

// Ops without data whose paths alone fit, but whose per-op headers take
// the request over the limit: counted too.
TEST_F(PacketLimitTest, AMultiOfManySmallOpsIsMeasuredWithItsHeaders) {
  auto session = NewSession();
  testing::StateRecorder states(*session);
  const std::string path = Path("checked");
  ASSERT_TRUE(session->Create(path, "", CreateMode::kEphemeral).ok());
  const size_t count = (1048575 - 16 * 1024) / path.size();
  std::vector<Op> ops(count, Op::Check(path));
  ExpectRefused(session->Multi(ops).status());
  // A multi that fits is sent and answered.
  ops.resize(10);
  EXPECT_TRUE(session->Multi(ops).ok());
  ASSERT_TRUE(session->Delete(path).ok());
  EXPECT_THAT(states.states(), ElementsAre()) << "the session left CONNECTED";
}

TEST_F(PacketLimitTest, ALockPurposeAboveTheLimitIsRefused) {
  auto session = NewSession();
  testing::StateRecorder states(*session);
  LockOptions options;
  options.purpose = TooLarge();
  auto lock = ExclusiveLock::Create(*session, Path("lock"), options);
  if (lock.ok()) {
    ExpectRefused((*lock)->Acquire(absl::Seconds(10)).status());
  } else {
    ExpectRefused(lock.status());
  }
  auto semaphore = Semaphore::Create(*session, Path("semaphore"), 2, options);
  if (semaphore.ok()) {
    ExpectRefused((*semaphore)->Acquire(1, absl::Seconds(10)).status());
  } else {
    ExpectRefused(semaphore.status());
  }
  EXPECT_THAT(states.states(), ElementsAre()) << "the session left CONNECTED";
  (void)testing::DeleteRecursively(admin(), Path("lock"));
  (void)testing::DeleteRecursively(admin(), Path("semaphore"));
}

TEST_F(PacketLimitTest, ElectionDataAboveTheLimitIsRefused) {
  auto session = NewSession();
  testing::StateRecorder states(*session);
  ElectionOptions options;
  options.data = TooLarge();
  auto election = LeaderElection::Create(*session, Path("election"), options);
  if (election.ok()) {
    ExpectRefused((*election)->Join());
  } else {
    ExpectRefused(election.status());
  }
  ElectionOptions small;
  small.data = "small";
  auto candidate = LeaderElection::Create(*session, Path("election2"), small);
  ASSERT_TRUE(candidate.ok()) << candidate.status();
  ASSERT_TRUE((*candidate)->Join().ok());
  ASSERT_TRUE((*candidate)->AwaitLeadership(absl::Seconds(10)).ok());
  ExpectRefused((*candidate)->SetData(TooLarge()));
  ASSERT_TRUE((*candidate)->Leave().ok());
  EXPECT_THAT(states.states(), ElementsAre()) << "the session left CONNECTED";
  (void)testing::DeleteRecursively(admin(), Path("election"));
  (void)testing::DeleteRecursively(admin(), Path("election2"));
}

TEST_F(PacketLimitTest, GroupMemberDataAboveTheLimitIsRefused) {
  auto session = NewSession();
  testing::StateRecorder states(*session);
  GroupOptions options;
  options.data = TooLarge();
  auto member = GroupMember::Create(*session, Path("group"), options);
  if (member.ok()) {
    ExpectRefused((*member)->Join(absl::Seconds(10)));
  } else {
    ExpectRefused(member.status());
  }
  auto small = GroupMember::Create(*session, Path("group2"));
  ASSERT_TRUE(small.ok()) << small.status();
  ASSERT_TRUE((*small)->Join(absl::Seconds(10)).ok());
  ExpectRefused((*small)->SetData(TooLarge()));
  ASSERT_TRUE((*small)->Leave().ok());
  EXPECT_THAT(states.states(), ElementsAre()) << "the session left CONNECTED";
  (void)testing::DeleteRecursively(admin(), Path("group"));
  (void)testing::DeleteRecursively(admin(), Path("group2"));
}

// Found with the packet limit (a size the client keeps in an int): a
// session timeout too long for the C client is refused, not turned into an
// immediate connect timeout.
TEST_F(PacketLimitTest, ASessionTimeoutTooLongForTheClientIsRefused) {
  SessionOptions options = Options();
  options.session_timeout = absl::Hours(24 * 30);
  absl::StatusOr<std::unique_ptr<Session>> refused = Session::Connect(options);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("session_timeout"));
  options.session_timeout = absl::InfiniteDuration();
  refused = Session::Connect(options);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
}

TEST_F(PacketLimitTest, TheLimitIsAnOptionAndIsValidated) {
  SessionOptions options = Options();
  options.max_request_bytes = 0;
  absl::StatusOr<std::unique_ptr<Session>> refused = Session::Connect(options);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("max_request_bytes"));
  options.max_request_bytes = 2048;
  auto session = NewSession(options);
  absl::Status status =
      session->Create(Path("n"), std::string(4096, 'z'), CreateMode::kEphemeral).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("2048"));
}

}  // namespace
}  // namespace zkr
