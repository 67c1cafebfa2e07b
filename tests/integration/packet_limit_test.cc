// Data above the server's packet limit (issue 31 item 13). The server drops
// the connection of a client that sends a packet longer than its
// jute.maxbuffer (1 MB less one byte by default); a recipe that retried the
// write made the session flap for as long as it tried, disturbing every
// other recipe on it. Every write, the session's own and those a recipe
// makes on the caller's behalf, is refused up front with InvalidArgument
// naming the size and the limit (SessionOptions::max_request_bytes): the
// session never leaves CONNECTED, and nothing is left on the server.
#include <functional>
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
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ZkTest;
using testing::Eventually;
using testing::StateRecorder;

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

// Writes near the limit: what the library counts towards it (each op's
// header, an ACL, the chroot) and that a write it accepts the server accepts.
constexpr size_t kLimit = 0xfffff;  // the server's default jute.maxbuffer

class PacketLimitBoundaryTest : public ZkTest {
 protected:
  // The write was either applied or refused up front (InvalidArgument).
  static void ExpectAcceptedOrRefused(const absl::Status& status, absl::string_view what) {
    EXPECT_TRUE(status.ok() || absl::IsInvalidArgument(status))
        << what << ": the library sent a write the server refused: " << status;
  }
  // The largest size `write` is not refused for (InvalidArgument) near the
  // limit, found by bisection; every write tried is either
  // applied or refused up front, never sent to be refused by the server.
  static size_t LargestAccepted(const std::function<absl::Status(size_t)>& write,
                                absl::string_view what) {
    // Within 16 KiB under the limit: few probes, since the server keeps its
    // last 500 writes in memory and this binary's server has a small heap.
    size_t accepted = kLimit - 16 * 1024, refused = kLimit + 1;
    absl::Status lowest = write(accepted);
    EXPECT_TRUE(lowest.ok()) << what << " of " << accepted << " bytes: " << lowest;
    if (!lowest.ok()) return 0;
    while (refused - accepted > 1) {
      const size_t size = accepted + (refused - accepted) / 2;
      absl::Status status = write(size);
      ExpectAcceptedOrRefused(status, what);
      if (!status.ok() && !absl::IsInvalidArgument(status)) return accepted;
      (status.ok() ? accepted : refused) = size;
    }
    return accepted;
  }
  // One acquisition and release of `path` with a purpose of `size` bytes
  // and `acl`, on `session`.
  static absl::Status LockOnce(Session& session, const std::string& path, size_t size,
                               std::vector<Acl> acl = {}) {
    LockOptions options;
    options.purpose = std::string(size, 'p');
    options.acl = std::move(acl);
    auto lock = ExclusiveLock::Create(session, path, options);
    if (!lock.ok()) return lock.status();
    absl::StatusOr<LockGuard> guard = (*lock)->Acquire(absl::Seconds(5));
    if (!guard.ok()) return guard.status();
    return guard->Release();
  }
  static std::vector<Acl> LargeAcl(int entries) {
    std::vector<Acl> acl = OpenAcl();
    for (int i = 0; i < entries; ++i) {
      acl.push_back({"digest", absl::StrCat("user", i, ":0123456789abcdefghijklmnopqr="),
                     kPermRead});
    }
    return acl;
  }
};

// A multi of 50 SetData ops whose data and paths sum to just under the
// limit: each op carries ~21 bytes of header the check does not count.
TEST_F(PacketLimitBoundaryTest, AMultiOfManyOpsCountsEachOpsHeader) {
  auto session = NewSession();
  StateRecorder states(*session);
  const std::string path = Path("multi");
  ASSERT_TRUE(session->Create(path, "", CreateMode::kEphemeral).ok());
  constexpr int kOps = 50;
  const size_t most = LargestAccepted(
      [&](size_t size) {
        std::vector<Op> ops;
        for (int i = 0; i < kOps; ++i) ops.push_back(Op::SetData(path, std::string(size / kOps, 'm')));
        return session->Multi(ops).status();
      },
      "multi of 50 sets");
  EXPECT_GT(most, kLimit / 2);
  EXPECT_THAT(states.states(), ElementsAre()) << "the session left CONNECTED";
  (void)admin().Delete(path);
}

// Session::Create with an ACL of its own: the ACL is part of the request.
TEST_F(PacketLimitBoundaryTest, ACreatesAclCountsTowardsTheLimit) {
  auto session = NewSession();
  StateRecorder states(*session);
  const std::string path = Path("acl");
  CreateOptions options;
  options.acl = LargeAcl(40);  // ~2 KB of ACL
  const size_t most = LargestAccepted(
      [&](size_t size) {
        absl::Status status =
            session->Create(path, std::string(size, 'a'), CreateMode::kPersistent, options).status();
        if (status.ok()) (void)admin().Delete(path);
        return status;
      },
      "create with a 40-entry ACL");
  EXPECT_GT(most, kLimit / 2);
  EXPECT_THAT(states.states(), ElementsAre()) << "the session left CONNECTED";
  (void)admin().Delete(path);
}

// A lock whose LockOptions::acl is long: its queue node's create carries it.
TEST_F(PacketLimitBoundaryTest, ALocksAclCountsTowardsTheLimit) {
  auto session = NewSession();
  StateRecorder states(*session);
  const std::string path = Path("lock-acl");
  LockOptions options;
  options.acl = LargeAcl(40);
  const size_t most = LargestAccepted(
      [&](size_t size) { return LockOnce(*session, path, size, options.acl); },
      "lock with a 40-entry ACL");
  EXPECT_GT(most, kLimit / 2);
  EXPECT_THAT(states.states(), ElementsAre()) << "the session left CONNECTED";
  ASSERT_TRUE(Eventually([&] {
    auto children = admin().GetChildren(path);
    return !children.ok() || children->empty();
  }));
  (void)admin().Delete(path);
}

// A session with a chroot: the C client puts the chroot in front of every
// path it sends.
TEST_F(PacketLimitBoundaryTest, AChrootCountsTowardsTheLimit) {
  const std::string chroot = Path(std::string(600, 'c'));
  ASSERT_TRUE(admin().Create(chroot, "", CreateMode::kPersistent, {{}, true}).ok());
  SessionOptions options = Options();
  options.connect = connect_ + chroot;
  auto session = NewSession(options);
  ASSERT_NE(session, nullptr);
  StateRecorder states(*session);
  const size_t most = LargestAccepted(
      [&](size_t size) {
        absl::Status status =
            session->Create("/n", std::string(size, 'c'), CreateMode::kEphemeral).status();
        if (status.ok()) (void)session->Delete("/n");
        return status;
      },
      "create under a 600-byte chroot");
  EXPECT_GT(most, kLimit / 2);
  EXPECT_THAT(states.states(), ElementsAre()) << "the session left CONNECTED";
  session->Close();
  (void)testing::DeleteRecursively(admin(), chroot);
}

// A writer that waited releases with a marked release: one transaction that
// writes its data plus the mark, then deletes its node (two paths, two op
// headers). The engine checked data + mark + one path. On a long lock path
// with the largest purpose it accepts, the release must still fit.
TEST_F(PacketLimitBoundaryTest, AMarkedReleaseOnALongPathFitsTheLimit) {
  const std::string path = Path(std::string(700, 'l'));
  auto session = NewSession();
  // The largest purpose the engine accepts (found on the free lock first).
  const size_t most =
      LargestAccepted([&](size_t size) { return LockOnce(*session, path, size); }, "lock");
  auto holder_session = NewSession();
  auto holder_lock = ExclusiveLock::Create(*holder_session, path);
  ASSERT_TRUE(holder_lock.ok());
  absl::StatusOr<LockGuard> held = (*holder_lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();

  StateRecorder states(*session);
  LockOptions options;
  options.watch_own_node = false;
  options.purpose = std::string(most, 'p');
  auto lock = ExclusiveLock::Create(*session, path, options);
  ASSERT_TRUE(lock.ok()) << lock.status();
  std::future<absl::StatusOr<LockGuard>> waiting = (*lock)->AcquireFuture();
  ASSERT_TRUE(Eventually([&] { return !testing::WatchedPaths(*session, path).empty(); }));
  ASSERT_TRUE(held->Release().ok());
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  absl::StatusOr<LockGuard> guard = waiting.get();
  ASSERT_TRUE(guard.ok()) << guard.status();
  EXPECT_TRUE(guard->Release().ok());
  EXPECT_THAT(states.states(), ElementsAre())
      << "the marked release made the server drop the connection";
  lock->reset();
  holder_lock->reset();
  ASSERT_TRUE(Eventually([&] {
    auto children = admin().GetChildren(path);
    return !children.ok() || children->empty();
  }));
  (void)admin().Delete(path);
}

// A refused SetData has no lasting effect: the leader that tried to publish
// too much can still yield and lead again with its old data.
TEST_F(PacketLimitBoundaryTest, ARefusedElectionSetDataDoesNotPoisonTheCandidate) {
  auto session = NewSession();
  StateRecorder states(*session);
  ElectionOptions options;
  options.data = "small";
  auto election = LeaderElection::Create(*session, Path("election"), options);
  ASSERT_TRUE(election.ok());
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  absl::Status refused = (*election)->SetData(std::string(1100 * 1024, 'x'));
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  ASSERT_TRUE((*election)->Yield().ok());
  absl::Status again = (*election)->AwaitLeadership(absl::Seconds(10));
  EXPECT_TRUE(again.ok()) << "after a refused SetData, Yield() ended the candidacy: " << again;
  (void)(*election)->Leave();
  EXPECT_THAT(states.states(), ElementsAre());
  election->reset();
  (void)testing::DeleteRecursively(admin(), Path("election"));
}

TEST_F(PacketLimitBoundaryTest, ARefusedGroupSetDataDoesNotPoisonTheMember) {
  auto session = NewSession();
  GroupOptions options;
  options.data = "small";
  auto member = GroupMember::Create(*session, Path("group"), options);
  ASSERT_TRUE(member.ok());
  ASSERT_TRUE((*member)->Join(absl::Seconds(10)).ok());
  absl::Status refused = (*member)->SetData(std::string(1100 * 1024, 'x'));
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  ASSERT_TRUE((*member)->Leave().ok());
  absl::Status rejoined = (*member)->Join(absl::Seconds(10));
  EXPECT_TRUE(rejoined.ok()) << "after a refused SetData the member cannot join again: "
                             << rejoined;
  (void)(*member)->Leave();
  member->reset();
  (void)testing::DeleteRecursively(admin(), Path("group"));
}

// The boundary: the largest write the library accepts is accepted by the
// server too, one byte more is refused, the session stays CONNECTED.
TEST_F(PacketLimitBoundaryTest, TheLargestAcceptedWriteIsAcceptedByTheServer) {
  auto session = NewSession();
  StateRecorder states(*session);
  const std::string path = Path("edge");
  const size_t most = LargestAccepted(
      [&](size_t size) {
        absl::Status status =
            session->Create(path, std::string(size, 'e'), CreateMode::kEphemeral).status();
        if (status.ok()) (void)session->Delete(path);
        return status;
      },
      "create");
  // The library's allowance for what is not data is small: within 1 KiB.
  EXPECT_GT(most + 1024, kLimit - path.size());
  ASSERT_TRUE(session->Create(path, std::string(most, 'e'), CreateMode::kEphemeral).ok());
  EXPECT_TRUE(session->Set(path, std::string(most, 'f')).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(session->Set(path, std::string(most + 64, 'h')).status()));
  EXPECT_THAT(states.states(), ElementsAre());
  (void)session->Delete(path);
}

// A server whose jute.maxbuffer is raised to 4 MiB, and sessions told so:
// a 3 MiB write (session's own and a lock purpose) is accepted and read back.
TEST_F(PacketLimitBoundaryTest, ARaisedLimitIsHonoured) {
  testing::ServerOptions server_options;
  server_options.jute_max_buffer = 4194304;
  auto server = testing::ZooKeeperServer::Start(server_options);
  ASSERT_TRUE(server.ok()) << server.status();
  SessionOptions options = Options();
  options.connect = (*server)->connect_string();
  options.max_request_bytes = 4194304;
  auto session = Session::Connect(options);
  ASSERT_TRUE(session.ok()) << session.status();
  StateRecorder states(**session);
  const std::string data(3 * 1024 * 1024, 'r');
  absl::Status created = (*session)->Create("/big", data, CreateMode::kEphemeral).status();
  EXPECT_TRUE(created.ok()) << created;
  absl::StatusOr<std::string> read = (*session)->Get("/big");
  EXPECT_TRUE(read.ok() && read->size() == data.size()) << read.status();
  LockOptions lock_options;
  lock_options.purpose = data;
  auto lock = ExclusiveLock::Create(**session, "/biglock", lock_options);
  ASSERT_TRUE(lock.ok()) << lock.status();
  absl::StatusOr<LockGuard> guard = (*lock)->Acquire(absl::Seconds(10));
  EXPECT_TRUE(guard.ok()) << guard.status();
  if (guard.ok()) {
    EXPECT_TRUE(guard->Release().ok());
  }
  EXPECT_THAT(states.states(), ElementsAre());
  lock->reset();
  (*session)->Close();
}

}  // namespace
}  // namespace zkr
