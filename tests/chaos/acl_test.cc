// Hostile clients against ACL-protected queues (issue 7): with digest auth and
// CreatorAllAcl(), a lock's (or an election's) directory and nodes belong to
// the creator's identity. A client without those credentials — or with
// someone else's — can neither delete the holder's node, nor inject a fake
// earlier node into the queue, nor tamper with or list it: it gets a clear
// PermissionDenied, and the holder keeps its lock (node present, still held,
// no state change, still exclusive).
//
// CreatorAllAcl() denies the fixture's admin session too, so each test
// releases and deletes what it created with the owner's session (also when
// an assertion fails half-way), leaving the fixture's open root empty.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using testing::ZkTest;

// Runs a function when it goes out of scope.
class Cleanup {
 public:
  explicit Cleanup(std::function<void()> fn) : fn_(std::move(fn)) {}
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  ~Cleanup() {
    if (fn_) fn_();
  }

 private:
  std::function<void()> fn_;
};

class AclTest : public ZkTest {
 protected:
  std::unique_ptr<Session> SessionAs(const std::string& credentials) {
    SessionOptions options = Options();
    options.digest_auth = credentials;
    return NewSession(options);
  }

  // Every way a client without the owner's credentials could disturb the
  // queue under `dir` whose participant node is `node`: each must be refused
  // with PermissionDenied.
  void ExpectIntruderRefused(Session& intruder, const std::string& dir,
                             const std::string& node, const std::string& who) {
    SCOPED_TRACE(who);
    absl::Status deleted = intruder.Delete(node);
    EXPECT_TRUE(absl::IsPermissionDenied(deleted))
        << "delete the holder's node: " << deleted;
    // A fake node that would sort before every real participant.
    for (const char* mode : {"W", "R"}) {
      const std::string fake = absl::StrFormat(
          "%s/intruder_1_0000000000000000-%s-%010d", dir, mode, 0);
      auto created = intruder.Create(fake, "", CreateMode::kEphemeral);
      EXPECT_TRUE(absl::IsPermissionDenied(created.status()))
          << "create " << fake << ": " << created.status();
      auto negative = intruder.Create(
          absl::StrFormat("%s/intruder_1_0000000000000000-%s-%010d", dir, mode,
                          INT32_MIN),
          "", CreateMode::kPersistent);
      EXPECT_TRUE(absl::IsPermissionDenied(negative.status()))
          << negative.status();
      auto queued = intruder.Create(
          absl::StrCat(dir, "/intruder_2_0000000000000000-", mode, "-"), "",
          CreateMode::kEphemeralSequential);
      EXPECT_TRUE(absl::IsPermissionDenied(queued.status()))
          << "queue: " << queued.status();
    }
    auto set = intruder.Set(node, "pwned");
    EXPECT_TRUE(absl::IsPermissionDenied(set.status()))
        << "set data: " << set.status();
    auto listed = intruder.GetChildren(dir);
    EXPECT_TRUE(absl::IsPermissionDenied(listed.status()))
        << "list: " << listed.status();
  }
};

TEST_F(AclTest, ALockProtectedByCreatorAllAclResistsAClientWithoutCredentials) {
  std::unique_ptr<Session> alice = SessionAs("alice:secret");
  ASSERT_NE(alice, nullptr);
  absl::Mutex mu;
  std::vector<LockState> changes;  // guarded by mu
  LockOptions options;
  options.acl = CreatorAllAcl();
  options.on_state_change = [&](LockState state) {
    absl::MutexLock lock(&mu);
    changes.push_back(state);
  };
  const std::string dir = Path("lock");
  auto lock = SharedLock::Create(*alice, dir, options);
  ASSERT_TRUE(lock.ok()) << lock.status();
  absl::StatusOr<LockGuard> guard = (*lock)->AcquireWrite(absl::Seconds(20));
  ASSERT_TRUE(guard.ok()) << guard.status();
  // Whatever happens below: release and remove the directory as alice.
  Cleanup cleanup([&] {
    if (guard.ok() && guard->state() != LockState::kReleased) {
      EXPECT_TRUE(guard->Release().ok());
    }
    absl::Status removed = alice->Delete(dir);
    EXPECT_TRUE(removed.ok() || absl::IsNotFound(removed)) << removed;
  });
  const std::string node = guard->node_path();
  const int64_t token = guard->fencing_token();

  std::unique_ptr<Session> anonymous = NewSession();
  ASSERT_NE(anonymous, nullptr);
  ExpectIntruderRefused(*anonymous, dir, node, "no credentials");
  std::unique_ptr<Session> mallory = SessionAs("mallory:secret");
  ASSERT_NE(mallory, nullptr);
  ExpectIntruderRefused(*mallory, dir, node, "other credentials");
  std::unique_ptr<Session> wrong_password = SessionAs("alice:guess");
  ASSERT_NE(wrong_password, nullptr);
  ExpectIntruderRefused(*wrong_password, dir, node, "wrong password");
  // The admin session has no credentials either.
  EXPECT_TRUE(absl::IsPermissionDenied(admin().Delete(node)));

  // The lock is unaffected: still held, same node and token, owned by
  // alice's session, alone in its queue, and still exclusive.
  EXPECT_TRUE(guard->held());
  EXPECT_EQ(guard->state(), LockState::kHeld);
  EXPECT_EQ(guard->node_path(), node);
  EXPECT_EQ(guard->fencing_token(), token);
  auto stat = alice->Exists(node);
  ASSERT_TRUE(stat.ok()) << stat.status();
  ASSERT_TRUE(stat->has_value()) << node << " is gone";
  EXPECT_EQ((*stat)->ephemeral_owner, alice->session_id());
  EXPECT_EQ((*stat)->czxid, token);
  auto children = alice->GetChildren(dir);
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_EQ(*children, std::vector<std::string>{node.substr(dir.size() + 1)});
  std::unique_ptr<Session> alice_too = SessionAs("alice:secret");
  ASSERT_NE(alice_too, nullptr);
  auto contender = SharedLock::Create(*alice_too, dir, options);
  ASSERT_TRUE(contender.ok());
  EXPECT_TRUE(
      absl::IsDeadlineExceeded((*contender)->TryAcquireWrite().status()));
  EXPECT_TRUE(
      absl::IsDeadlineExceeded((*contender)->TryAcquireRead().status()));
  // The same credentials are allowed in: the ACL admits the identity, not
  // the session.
  auto read_by_alice_too = alice_too->Get(node);
  EXPECT_TRUE(read_by_alice_too.ok()) << read_by_alice_too.status();
  {
    absl::MutexLock l(&mu);
    EXPECT_TRUE(changes.empty())
        << "the hold changed state " << changes.size() << " times";
  }
}

TEST_F(AclTest,
       AnElectionProtectedByCreatorAllAclResistsAClientWithoutCredentials) {
  std::unique_ptr<Session> alice = SessionAs("alice:secret");
  ASSERT_NE(alice, nullptr);
  absl::Mutex mu;
  std::vector<Leadership> changes;  // guarded by mu
  ElectionOptions options;
  options.id = "alice";
  options.acl = CreatorAllAcl();
  options.on_change = [&](Leadership leadership) {
    absl::MutexLock lock(&mu);
    changes.push_back(leadership);
  };
  const std::string dir = Path("election");
  auto election = LeaderElection::Create(*alice, dir, options);
  ASSERT_TRUE(election.ok()) << election.status();
  ASSERT_TRUE((*election)->Join().ok());
  Cleanup cleanup([&] {
    if ((*election)->joined()) {
      EXPECT_TRUE((*election)->Leave().ok());
    }
    (void)alice->Exists(dir);  // the leave's delete is done once this returns
    absl::Status removed = alice->Delete(dir);
    EXPECT_TRUE(removed.ok() || absl::IsNotFound(removed)) << removed;
  });
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(20)).ok());
  const int64_t epoch = (*election)->epoch();
  auto children = alice->GetChildren(dir);
  ASSERT_TRUE(children.ok()) << children.status();
  ASSERT_EQ(children->size(), 1u);
  const std::string node = absl::StrCat(dir, "/", children->front());

  std::unique_ptr<Session> anonymous = NewSession();
  ASSERT_NE(anonymous, nullptr);
  ExpectIntruderRefused(*anonymous, dir, node, "no credentials");
  std::unique_ptr<Session> mallory = SessionAs("mallory:secret");
  ASSERT_NE(mallory, nullptr);
  ExpectIntruderRefused(*mallory, dir, node, "other credentials");

  EXPECT_TRUE((*election)->IsLeader());
  EXPECT_EQ((*election)->epoch(), epoch);
  auto leader = (*election)->CurrentLeader();
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(*leader, std::optional<std::string>("alice"));
  auto participants = (*election)->Participants();
  ASSERT_TRUE(participants.ok()) << participants.status();
  EXPECT_EQ(*participants, std::vector<std::string>{"alice"});
  {
    // on_change runs on the dispatcher, after AwaitLeadership saw the change.
    absl::MutexLock l(&mu);
    auto told = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return !changes.empty(); };
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&told), absl::Seconds(10)));
    EXPECT_EQ(changes, std::vector<Leadership>{Leadership::kLeader});
  }
}

}  // namespace
}  // namespace zkr
