// Adversarial review (issue 31 items 9, 13, 16), against a real server:
//   * Semaphore sizes: a participant with another N than the earliest one's
//     is refused, but a refused (stray) node briefly in the queue must not
//     get correctly configured participants refused, nor let more than N be
//     held at once;
//   * SessionOptions::max_request_bytes: every write over the server's
//     packet limit is refused up front (InvalidArgument), the session never
//     leaves CONNECTED, a refused write has no lasting effect, and a raised
//     limit is honoured;
//   * an acquisition started between generations begins once the next one
//     connects.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <iostream>
#include <map>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/proxied_test.h"
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
using testing::ProxiedZkTest;
using testing::StateRecorder;
using testing::Eventually;
using testing::ZkTest;

constexpr size_t kLimit = 0xfffff;  // the server's default jute.maxbuffer

// ---- semaphore sizes ----------------------------------------------------------

struct Participant {
  std::unique_ptr<Session> session;
  std::unique_ptr<Semaphore> semaphore;
  absl::Notification acquired;
  std::optional<LockGuard> guard;
  absl::Notification failed;
  absl::Status failure;
};


class ReviewSemaphoreTest : public ZkTest {
 protected:
  std::unique_ptr<Participant> Join(const std::string& path, int leases,
                                    std::unique_ptr<Session> session = nullptr) {
    auto p = std::make_unique<Participant>();
    p->session = session != nullptr ? std::move(session) : NewSession();
    LockOptions options;
    options.watch_own_node = false;  // only queue watches on the server
    auto semaphore = Semaphore::Create(*p->session, path, leases, options);
    EXPECT_TRUE(semaphore.ok()) << semaphore.status();
    p->semaphore = std::move(*semaphore);
    return p;
  }
  // Asks `count` leases and waits until the server lists `nodes_after` nodes.
  void Queue(Participant& p, int count, const std::string& path, size_t nodes_after) {
    p.semaphore->AcquireAsync(count, [&p](absl::StatusOr<LockGuard> guard) {
      if (!guard.ok()) {
        p.failure = guard.status();
        p.failed.Notify();
        return;
      }
      p.guard.emplace(std::move(*guard));
      p.acquired.Notify();
    });
    ASSERT_TRUE(Eventually([&] {
      auto children = admin().GetChildren(path);
      return children.ok() && children->size() >= nodes_after;
    })) << "node of participant never appeared";
  }
  // True once `p` watches exactly `paths` (it decided to wait on them).
  bool Watches(Participant& p, const std::string& path, std::vector<std::string> paths) {
    std::sort(paths.begin(), paths.end());
    return Eventually([&] {
      if (p.failed.HasBeenNotified() || p.acquired.HasBeenNotified()) return true;
      std::vector<std::string> watched = testing::WatchedPaths(*p.session, path);
      std::sort(watched.begin(), watched.end());
      return watched == paths;
    });
  }
};

// N = 2. A holds 1 lease; a stray node with N = 3 is queued behind it (what a
// misconfigured participant's node is until its refusal deletes it); C (N = 2,
// asking 2) queues behind the stray and waits. A releases: C lists again and
// now the stray is the earliest node. C is correctly configured: it must not
// be refused because of the stray; it must wait (the stray's lease still
// counts) and hold once the stray is gone.
TEST_F(ReviewSemaphoreTest, AStrayThatBecomesTheEarliestNodeDoesNotGetAWaiterRefused) {
  const std::string path = Path("stray-earliest");
  auto a = Join(path, 2);
  Queue(*a, 1, path, 1);
  ASSERT_TRUE(a->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::StatusOr<CreateResult> stray =
      admin().Create(path + "/stray_1_00ff-S1of3-", "", CreateMode::kEphemeralSequential);
  ASSERT_TRUE(stray.ok()) << stray.status();
  auto c = Join(path, 2);
  Queue(*c, 2, path, 3);
  const std::string a_node = a->guard->node_path();
  ASSERT_TRUE(Watches(*c, path, {a_node, stray->path}));
  ASSERT_FALSE(c->failed.HasBeenNotified()) << c->failure;
  ASSERT_TRUE(a->guard->Release().ok());
  // C decides again: it either waits on the stray alone or fails.
  EXPECT_TRUE(Watches(*c, path, {stray->path}));
  EXPECT_FALSE(c->failed.HasBeenNotified())
      << "a correctly configured waiter was refused because a stray became the earliest node: "
      << c->failure;
  ASSERT_TRUE(admin().Delete(stray->path).ok());
  if (!c->failed.HasBeenNotified()) {
    EXPECT_TRUE(c->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
    if (c->guard) {
      EXPECT_TRUE(c->guard->Release().ok());
    }
  }
  c->semaphore.reset();
  ASSERT_TRUE(Eventually([&] { return admin().GetChildren(path)->empty(); }));
  ASSERT_TRUE(admin().Delete(path).ok());
}

// The same with a holder whose session expires instead of releasing.
TEST_F(ReviewSemaphoreTest, AStrayThatBecomesEarliestOnAHoldersExpiryDoesNotGetAWaiterRefused) {
  const std::string path = Path("stray-expiry");
  auto a = Join(path, 2);
  Queue(*a, 1, path, 1);
  ASSERT_TRUE(a->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::StatusOr<CreateResult> stray =
      admin().Create(path + "/stray_1_00ff-S1of3-", "", CreateMode::kEphemeralSequential);
  ASSERT_TRUE(stray.ok()) << stray.status();
  auto c = Join(path, 2);
  Queue(*c, 2, path, 3);
  ASSERT_TRUE(Watches(*c, path, {a->guard->node_path(), stray->path}));
  ASSERT_TRUE(testing::ExpireSession(*a->session).ok());
  EXPECT_TRUE(Watches(*c, path, {stray->path}));
  EXPECT_FALSE(c->failed.HasBeenNotified())
      << "a correctly configured waiter was refused when the holder expired: " << c->failure;
  ASSERT_TRUE(admin().Delete(stray->path).ok());
  if (!c->failed.HasBeenNotified()) {
    EXPECT_TRUE(c->acquired.WaitForNotificationWithTimeout(absl::Seconds(10)));
    if (c->guard) {
      EXPECT_TRUE(c->guard->Release().ok());
    }
  }
  a->guard.reset();
  c->semaphore.reset();
  ASSERT_TRUE(Eventually([&] { return admin().GetChildren(path)->empty(); }));
  ASSERT_TRUE(admin().Delete(path).ok());
}

// Mixed sizes under churn: four participants with N = 2, two with N = 3,
// weights 1..N, waiters giving up (short timeouts), and stray nodes with
// random N coming and going. Whatever is refused, the leases held at once
// (a ledger kept by the holders) never exceed the N of any holder.
TEST_F(ReviewSemaphoreTest, MixedSizesAndStraysNeverOverGrant) {
  const std::string path = Path("mixed-ledger");
  const int sizes[] = {2, 2, 2, 2, 3, 3};
  std::vector<std::unique_ptr<Participant>> ps;
  for (int n : sizes) ps.push_back(Join(path, n));
  absl::Mutex mu;
  std::map<int, std::pair<int, int>> holding;  // participant -> (k, N)
  std::vector<std::string> violations;
  std::atomic<int> grants{0}, refusals{0}, timeouts{0}, others{0};
  std::atomic<bool> stop{false};
  std::thread strays([&] {
    std::mt19937 random(7);
    while (!stop.load()) {
      const int n = 1 + random() % 4;
      auto stray = admin().Create(absl::StrCat(path, "/stray_1_00ff-S1of", n, "-"), "",
                                  CreateMode::kEphemeralSequential);
      absl::SleepFor(absl::Milliseconds(random() % 20));  // a stray's lifetime
      if (stray.ok()) (void)admin().Delete(stray->path);
      absl::SleepFor(absl::Milliseconds(random() % 20));
    }
  });
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ps.size(); ++i) {
    threads.emplace_back([&, i] {
      std::mt19937 random(100 + i);
      const int n = sizes[i];
      for (int round = 0; round < 25; ++round) {
        const int k = 1 + random() % n;
        absl::StatusOr<LockGuard> lease =
            ps[i]->semaphore->Acquire(k, absl::Milliseconds(20 + random() % 200));
        if (!lease.ok()) {
          if (absl::IsFailedPrecondition(lease.status())) {
            ++refusals;
          } else if (absl::IsDeadlineExceeded(lease.status())) {
            ++timeouts;
          } else {
            ++others;
            ADD_FAILURE() << lease.status();
          }
          continue;
        }
        {
          absl::MutexLock lock(&mu);
          holding[i] = {k, n};
          int in_use = 0;
          for (auto& h : holding) in_use += h.second.first;
          for (auto& h : holding) {
            if (in_use > h.second.second) {
              violations.push_back(absl::StrCat(in_use, " leases in use while participant ",
                                                h.first, " holds with N=", h.second.second));
            }
          }
        }
        ++grants;
        absl::SleepFor(absl::Milliseconds(random() % 60));  // the work under the lease
        {
          absl::MutexLock lock(&mu);
          holding.erase(i);
        }
        EXPECT_TRUE(lease->Release().ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  stop = true;
  strays.join();
  std::cerr << "grants=" << grants << " refusals=" << refusals << " timeouts=" << timeouts
            << "\n";
  EXPECT_GT(timeouts.load(), 0) << "no waiter gave up: the test did not exercise give-ups";
  EXPECT_THAT(violations, ::testing::IsEmpty());
  EXPECT_GT(grants.load(), 0);
  ps.clear();
  ASSERT_TRUE(Eventually([&] { return admin().GetChildren(path)->empty(); }));
  ASSERT_TRUE(admin().Delete(path).ok());
}

// The real thing, no raw nodes: a misconfigured participant (N = 3) on a slow
// link is refused, but its node stays in the queue until its delete arrives.
// Meanwhile the holder releases and the correctly configured waiter behind
// it lists again. It must not be refused.
class ReviewSlowStrayTest : public ProxiedZkTest {};

TEST_F(ReviewSlowStrayTest, ARealMisconfiguredParticipantOnASlowLinkDoesNotGetAWaiterRefused) {
  const std::string path = Path("slow-stray");
  LockOptions options;
  options.watch_own_node = false;
  auto a_session = NewSession();
  auto a = Semaphore::Create(*a_session, path, 2, options);
  ASSERT_TRUE(a.ok());
  absl::StatusOr<LockGuard> a_lease = (*a)->Acquire(1, absl::Seconds(10));
  ASSERT_TRUE(a_lease.ok()) << a_lease.status();

  SessionOptions slow = ProxiedOptions();
  slow.session_timeout = absl::Seconds(15);
  auto b_session = NewSession(slow);
  auto b = Semaphore::Create(*b_session, path, 3, options);
  ASSERT_TRUE(b.ok());
  proxy_->SetDelay(absl::Milliseconds(2000));
  std::future<absl::StatusOr<LockGuard>> b_result = (*b)->AcquireFuture(1);
  ASSERT_TRUE(Eventually([&] { return admin().GetChildren(path)->size() == 2; }));

  auto c_session = NewSession();
  auto c = Semaphore::Create(*c_session, path, 2, options);
  ASSERT_TRUE(c.ok());
  std::future<absl::StatusOr<LockGuard>> c_result = (*c)->AcquireFuture(2);
  ASSERT_TRUE(Eventually([&] {
    return testing::WatchedPaths(*c_session, path).size() == 2 ||
           c_result.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }));
  const bool stray_present = admin().GetChildren(path)->size() == 3;
  ASSERT_TRUE(a_lease->Release().ok());
  // B is refused (its N differs from the earliest's); C must hold once B's
  // node is gone.
  ASSERT_EQ(b_result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  absl::StatusOr<LockGuard> b_lease = b_result.get();
  EXPECT_TRUE(absl::IsFailedPrecondition(b_lease.status())) << b_lease.status();
  ASSERT_EQ(c_result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  absl::StatusOr<LockGuard> c_lease = c_result.get();
  EXPECT_TRUE(c_lease.ok()) << "(stray present at the release: " << stray_present << ") "
                            << c_lease.status();
  if (c_lease.ok()) {
    EXPECT_TRUE(c_lease->Release().ok());
  }
  proxy_->SetDelay(absl::ZeroDuration());
  ASSERT_TRUE(Eventually([&] { return admin().GetChildren(path)->empty(); }));
  ASSERT_TRUE(admin().Delete(path).ok());
}

// ---- the packet limit ---------------------------------------------------------

class ReviewLimitTest : public ZkTest {
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
TEST_F(ReviewLimitTest, AMultiOfManyOpsCountsEachOpsHeader) {
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
TEST_F(ReviewLimitTest, ACreatesAclCountsTowardsTheLimit) {
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
TEST_F(ReviewLimitTest, ALocksAclCountsTowardsTheLimit) {
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
TEST_F(ReviewLimitTest, AChrootCountsTowardsTheLimit) {
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
TEST_F(ReviewLimitTest, AMarkedReleaseOnALongPathFitsTheLimit) {
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
TEST_F(ReviewLimitTest, ARefusedElectionSetDataDoesNotPoisonTheCandidate) {
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

TEST_F(ReviewLimitTest, ARefusedGroupSetDataDoesNotPoisonTheMember) {
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
TEST_F(ReviewLimitTest, TheLargestAcceptedWriteIsAcceptedByTheServer) {
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
TEST_F(ReviewLimitTest, ARaisedLimitIsHonoured) {
  ::setenv("JAVA_TOOL_OPTIONS", "-Djute.maxbuffer=4194304", 1);
  auto server = testing::ZooKeeperServer::Start();
  ::unsetenv("JAVA_TOOL_OPTIONS");
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

// ---- acquisitions started between generations -----------------------------------

class ReviewBetweenGenerationsTest : public ProxiedZkTest {};

// The session is LOST (cut off past its lease) and the next one is waiting
// to connect: acquisitions of every kind started now begin once it connects.
TEST_F(ReviewBetweenGenerationsTest, AcquisitionsStartedWhileLostBeginOnceConnected) {
  std::unique_ptr<Session> session = NewSession(ProxiedOptions());
  StateRecorder recorder(*session);
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  ASSERT_TRUE(recorder.WaitFor(SessionState::kLost, 1).has_value());
  auto lock = ExclusiveLock::Create(*session, Path("lock"));
  auto semaphore = Semaphore::Create(*session, Path("sem"), 3);
  auto member = GroupMember::Create(*session, Path("group"));
  ASSERT_TRUE(lock.ok() && semaphore.ok() && member.ok());
  std::future<absl::StatusOr<LockGuard>> locked = (*lock)->AcquireFuture();
  std::future<absl::StatusOr<LockGuard>> leased = (*semaphore)->AcquireFuture(2);
  absl::Status joined;
  std::thread join([&] { joined = (*member)->Join(absl::Seconds(60)); });
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  ASSERT_TRUE(recorder.WaitFor(SessionState::kConnected, 2).has_value());
  ASSERT_EQ(locked.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  ASSERT_EQ(leased.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  join.join();
  absl::StatusOr<LockGuard> l = locked.get(), s = leased.get();
  EXPECT_TRUE(l.ok()) << l.status();
  EXPECT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(joined.ok()) << joined;
  if (l.ok()) {
    EXPECT_TRUE(l->Release().ok());
  }
  if (s.ok()) {
    EXPECT_TRUE(s->Release().ok());
  }
  (void)(*member)->Leave();
  lock->reset();
  semaphore->reset();
  member->reset();
  for (const char* p : {"lock", "sem", "group"}) (void)testing::DeleteRecursively(admin(), Path(p));
}

// Acquisitions started without pause while the session expires five times:
// each one ends (holds, or fails because the generation it began on was
// lost) — none stays pending; one started while LOST holds (the next
// expiry waits until every earlier attempt has ended).
TEST_F(ReviewBetweenGenerationsTest, AcquisitionsStartedAroundExpiriesNeverHang) {
  std::unique_ptr<Session> session = NewSession();
  StateRecorder recorder(*session);
  const std::string path = Path("pool");
  struct Attempt {
    std::unique_ptr<Semaphore> semaphore;
    absl::Notification done;
    absl::StatusOr<LockGuard> result = absl::UnknownError("pending");
    uint64_t started_in = 0;
    SessionState state_at_start = SessionState::kConnecting;
    bool released = false;
  };
  std::vector<std::unique_ptr<Attempt>> attempts;
  absl::Mutex mu;
  std::atomic<bool> stop{false};
  std::thread starter([&] {
    while (!stop.load()) {
      // Release what was granted, so that the queue stays short.
      std::vector<Attempt*> granted;
      {
        absl::MutexLock lock(&mu);
        for (auto& a : attempts) {
          if (!a->released && a->done.HasBeenNotified() && a->result.ok()) granted.push_back(a.get());
        }
      }
      for (Attempt* a : granted) {
        (void)a->result->Release();
        a->released = true;
      }
      auto attempt = std::make_unique<Attempt>();
      auto semaphore = Semaphore::Create(*session, path, 1000000);
      if (!semaphore.ok()) continue;
      attempt->semaphore = std::move(*semaphore);
      attempt->started_in = session->generation();
      attempt->state_at_start = session->state();
      Attempt* raw = attempt.get();
      {
        absl::MutexLock lock(&mu);
        attempts.push_back(std::move(attempt));
      }
      raw->semaphore->AcquireAsync(1, [raw](absl::StatusOr<LockGuard> guard) {
        raw->result = std::move(guard);
        raw->done.Notify();
      });
      absl::SleepFor(absl::Milliseconds(1));  // pacing, not synchronisation
    }
  });
  int pending = 0;
  for (uint64_t generation = 1; generation <= 5; ++generation) {
    ASSERT_TRUE(testing::ExpireSession(*session).ok());
    ASSERT_TRUE(recorder.WaitFor(SessionState::kConnected, generation + 1).has_value());
    // Every attempt started so far ends before the next expiry.
    std::vector<Attempt*> so_far;
    {
      absl::MutexLock lock(&mu);
      for (auto& a : attempts) so_far.push_back(a.get());
    }
    for (Attempt* a : so_far) {
      if (!a->done.WaitForNotificationWithTimeout(absl::Seconds(15))) ++pending;
    }
    if (pending > 0) break;
  }
  stop = true;
  starter.join();
  int held = 0, failed = 0, started_while_lost = 0;
  for (auto& a : attempts) {
    if (!a->done.WaitForNotificationWithTimeout(absl::Seconds(15))) {
      ++pending;
      continue;
    }
    if (a->state_at_start == SessionState::kLost) ++started_while_lost;
    if (a->result.ok()) {
      ++held;
    } else {
      ++failed;
      if (a->state_at_start == SessionState::kLost) {
        ADD_FAILURE() << "started while LOST (generation " << a->started_in
                      << ") and failed: " << a->result.status();
      }
    }
  }
  std::cerr << attempts.size() << " attempts (" << started_while_lost << " started while LOST): "
            << held << " held, " << failed << " failed, " << pending << " pending\n";
  EXPECT_EQ(pending, 0) << "acquisitions started around an expiry hung";
  for (auto& a : attempts) {
    if (!a->released && a->done.HasBeenNotified() && a->result.ok()) (void)a->result->Release();
  }
  attempts.clear();
  ASSERT_TRUE(Eventually([&] {
    auto children = admin().GetChildren(path);
    return !children.ok() || children->empty();
  }));
  (void)admin().Delete(path);
}

}  // namespace
}  // namespace zkr
namespace zkr {
namespace {

// Acquisitions started from the session's own LOST listener (on the
// dispatcher thread), while the next generation is being opened: each one
// holds once that generation connects.
TEST_F(ReviewBetweenGenerationsTest, AcquisitionsStartedFromTheLostListenerHold) {
  std::unique_ptr<Session> session = NewSession();
  StateRecorder recorder(*session);
  auto lock = ExclusiveLock::Create(*session, Path("from-listener"));
  ASSERT_TRUE(lock.ok());
  absl::Mutex mu;
  std::vector<std::shared_ptr<std::promise<absl::StatusOr<LockGuard>>>> started;
  const int id = session->AddStateListener([&](SessionState state, uint64_t) {
    if (state != SessionState::kLost) return;
    auto promise = std::make_shared<std::promise<absl::StatusOr<LockGuard>>>();
    {
      absl::MutexLock hold(&mu);
      started.push_back(promise);
    }
    (*lock)->AcquireAsync([promise](absl::StatusOr<LockGuard> guard) {
      promise->set_value(std::move(guard));
    });
  });
  for (uint64_t generation = 1; generation <= 3; ++generation) {
    ASSERT_TRUE(testing::ExpireSession(*session).ok());
    ASSERT_TRUE(recorder.WaitFor(SessionState::kConnected, generation + 1).has_value());
    std::shared_ptr<std::promise<absl::StatusOr<LockGuard>>> promise;
    ASSERT_TRUE(Eventually([&] {
      absl::MutexLock hold(&mu);
      return started.size() == generation;
    }));
    {
      absl::MutexLock hold(&mu);
      promise = started.back();
    }
    std::future<absl::StatusOr<LockGuard>> result = promise->get_future();
    ASSERT_EQ(result.wait_for(std::chrono::seconds(15)), std::future_status::ready)
        << "an acquisition started from the LOST listener hung (generation " << generation
        << ")";
    absl::StatusOr<LockGuard> guard = result.get();
    EXPECT_TRUE(guard.ok()) << guard.status();
    if (guard.ok()) {
      EXPECT_TRUE(guard->Release().ok());
    }
  }
  session->RemoveStateListener(id);
  lock->reset();
  (void)testing::DeleteRecursively(admin(), Path("from-listener"));
}

// Without reconnect_after_loss, an acquisition started while LOST fails at
// once rather than waiting for a generation that never comes.
TEST_F(ReviewBetweenGenerationsTest, WithoutReconnectAnAcquisitionStartedWhileLostFailsAtOnce) {
  SessionOptions options = Options();
  options.reconnect_after_loss = false;
  std::unique_ptr<Session> session = NewSession(options);
  StateRecorder recorder(*session);
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  ASSERT_TRUE(recorder.WaitFor(SessionState::kLost, 1).has_value());
  auto lock = ExclusiveLock::Create(*session, Path("no-reconnect"));
  ASSERT_TRUE(lock.ok());
  auto semaphore = Semaphore::Create(*session, Path("no-reconnect-sem"), 2);
  ASSERT_TRUE(semaphore.ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<LockGuard> guard = (*lock)->Acquire(absl::Seconds(20));
  absl::StatusOr<LockGuard> lease = (*semaphore)->Acquire(1, absl::Seconds(20));
  EXPECT_FALSE(guard.ok());
  EXPECT_FALSE(lease.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << guard.status() << " / " << lease.status();
  EXPECT_FALSE(absl::IsDeadlineExceeded(guard.status())) << guard.status();
  EXPECT_FALSE(absl::IsDeadlineExceeded(lease.status())) << lease.status();
}

}  // namespace
}  // namespace zkr
