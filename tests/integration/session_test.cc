// zkr::Session against a real standalone ZooKeeper server: connecting, the
// operations, watches, leases and expiry, and calls after Close().
#include "zkrecipes/session.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/zk_client.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"
#include "zkrecipes/testing/zookeeper_server.h"
#include "tests/support/fake_clock.h"
#include "zkrecipes/exclusive_lock.h"

namespace zkr {

using internal::OnCompletionThread;
using internal::SetClientLog;
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using testing::StateRecorder;
using testing::ZkTest;

// A loopback port on which nothing listens.
int DeadPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

class SessionTest : public ZkTest {};

TEST_F(SessionTest, ConnectsWithALease) {
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->state(), SessionState::kConnected);
  EXPECT_EQ(session->generation(), 1u);
  EXPECT_NE(session->session_id(), 0);
  EXPECT_EQ(session->negotiated_timeout(), absl::Seconds(4));
  // Connected: the lease reaches at least a third of the timeout ahead.
  EXPECT_GT(session->valid_until(), absl::Now() + absl::Seconds(4) / 3);
  EXPECT_LE(session->valid_until(), absl::Now() + absl::Seconds(4));
  session->Close();
  EXPECT_EQ(session->state(), SessionState::kClosed);
  EXPECT_EQ(session->valid_until(), absl::InfinitePast());
}

TEST_F(SessionTest, CreateGetSetExistsChildrenDelete) {
  Session& s = admin();
  const std::string dir = Path("dir");
  auto created = s.Create(dir + "/a", "one", CreateMode::kPersistent, {{}, true, false});
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->path, dir + "/a");
  EXPECT_GT(created->stat.czxid, 0);

  Stat stat;
  auto data = s.Get(dir + "/a", &stat);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(*data, "one");
  EXPECT_EQ(stat.version, 0);

  auto set = s.Set(dir + "/a", "two", 0);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->version, 1);
  absl::Status stale = s.Set(dir + "/a", "three", 0).status();
  EXPECT_TRUE(absl::IsAborted(stale)) << stale;
  EXPECT_FALSE(IsSessionLost(stale));
  EXPECT_THAT(stale.message(), HasSubstr(dir + "/a"));

  auto seq = s.Create(dir + "/s-", "", CreateMode::kPersistentSequential);
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(seq->path, dir + "/s-0000000001");

  auto children = s.GetChildren(dir);
  ASSERT_TRUE(children.ok());
  EXPECT_THAT(*children, UnorderedElementsAre("a", "s-0000000001"));

  auto exists = s.Exists(dir + "/a");
  ASSERT_TRUE(exists.ok());
  ASSERT_TRUE(exists->has_value());
  EXPECT_EQ((*exists)->version, 1);
  auto absent = s.Exists(dir + "/nope");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());

  EXPECT_TRUE(absl::IsAlreadyExists(s.Create(dir + "/a", "", CreateMode::kPersistent).status()));
  EXPECT_TRUE(absl::IsNotFound(s.Get(dir + "/nope").status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(s.Delete(dir)));  // not empty
  EXPECT_TRUE(absl::IsAborted(s.Delete(dir + "/a", 0)));   // bad version
  EXPECT_TRUE(s.Delete(dir + "/a", 1).ok());
  EXPECT_TRUE(s.Delete(seq->path).ok());
  EXPECT_TRUE(absl::IsNotFound(s.Delete(dir + "/a")));
  EXPECT_TRUE(s.Delete(dir).ok());
}

// Parents made by make_parents, and so lock directories, are containers: the
// server deletes them once empty. A private server reaps every 100 ms (the
// default is a minute); an empty persistent node beside them stays.
TEST_F(SessionTest, ContainerParentsAndLockDirectoriesVanishOnceEmpty) {
  testing::ServerOptions server_options;
  server_options.container_check_interval = absl::Milliseconds(100);
  auto server = testing::ZooKeeperServer::Start(server_options);
  ASSERT_TRUE(server.ok()) << server.status();
  SessionOptions options = Options();
  options.connect = (*server)->connect_string();
  auto session = NewSession(options);
  ASSERT_NE(session, nullptr);
  CreateOptions parents;
  parents.make_parents = true;
  ASSERT_TRUE(session->Create("/kept", "", CreateMode::kPersistent).ok());
  ASSERT_TRUE(session->Create("/c1/c2/leaf", "", CreateMode::kEphemeral, parents).ok());
  ASSERT_TRUE(session->Delete("/c1/c2/leaf").ok());
  {
    auto lock = SharedLock::Create(*session, "/locks/orders");
    ASSERT_TRUE(lock.ok()) << lock.status();
    auto guard = (*lock)->AcquireWrite(absl::Seconds(10));
    ASSERT_TRUE(guard.ok()) << guard.status();
    ASSERT_TRUE(guard->Release().ok());
  }
  auto gone = [&](const std::string& path) {
    for (absl::Time give_up = absl::Now() + absl::Seconds(20); absl::Now() < give_up;) {
      auto stat = session->Exists(path);
      if (stat.ok() && !stat->has_value()) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  };
  for (const char* path : {"/c1/c2", "/c1", "/locks/orders", "/locks"}) {
    EXPECT_TRUE(gone(path)) << path << " is still there";
  }
  auto kept = session->Exists("/kept");
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->has_value()) << "the reaper deleted a persistent node";
  session->Close();
}

TEST_F(SessionTest, MultiIsAtomic) {
  Session& s = admin();
  auto ok = s.Multi({Op::Create(Path("m"), "x", CreateMode::kPersistent), Op::Check(Path("m"), 0),
                     Op::SetData(Path("m"), "y", 0)});
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->size(), 3u);
  EXPECT_EQ((*ok)[0].path, Path("m"));
  EXPECT_EQ((*ok)[2].stat.version, 1);

  // A failing check rolls the whole transaction back.
  auto failed = s.Multi({Op::Create(Path("n"), "", CreateMode::kPersistent),
                         Op::Check(Path("missing"))});
  EXPECT_TRUE(absl::IsNotFound(failed.status())) << failed.status();
  EXPECT_THAT(failed.status().message(), HasSubstr(Path("missing")));
  auto n = s.Exists(Path("n"));
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(n->has_value());
  EXPECT_TRUE(s.Delete(Path("m")).ok());
}

TEST_F(SessionTest, WatchesFireOnceOnTheDispatcherThread) {
  Session& s = admin();
  absl::Notification data_changed, created, children_changed;
  std::thread::id caller = std::this_thread::get_id();
  bool off_client_threads = true;
  ASSERT_TRUE(s.Create(Path("w"), "0", CreateMode::kPersistent).ok());
  ASSERT_TRUE(s.GetAndWatch(Path("w"), [&](const WatchEvent& e) {
                 off_client_threads &= !OnCompletionThread() &&
                                       std::this_thread::get_id() != caller;
                 EXPECT_EQ(e.type, WatchEvent::Type::kDataChanged);
                 EXPECT_EQ(e.path, Path("w"));
                 data_changed.Notify();
               }).ok());
  auto absent = s.ExistsAndWatch(Path("later"), [&](const WatchEvent& e) {
    EXPECT_EQ(e.type, WatchEvent::Type::kCreated);
    created.Notify();
  });
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  ASSERT_TRUE(s.GetChildrenAndWatch(Path("w"), [&](const WatchEvent& e) {
                 EXPECT_EQ(e.type, WatchEvent::Type::kChildrenChanged);
                 children_changed.Notify();
               }).ok());

  ASSERT_TRUE(s.Set(Path("w"), "1").ok());
  ASSERT_TRUE(s.Create(Path("later"), "", CreateMode::kPersistent).ok());
  ASSERT_TRUE(s.Create(Path("w/child"), "", CreateMode::kPersistent).ok());
  EXPECT_TRUE(data_changed.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(created.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(children_changed.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(off_client_threads);
  for (const char* p : {"w/child", "w", "later"}) EXPECT_TRUE(s.Delete(Path(p)).ok());
}

TEST_F(SessionTest, AsyncCompletionsRunOnTheDispatcherInOrder) {
  Session& s = admin();
  absl::Mutex mu;
  std::vector<int> order;
  absl::Notification done;
  bool on_client_thread = false;
  s.CreateAsync(Path("a"), "x", CreateMode::kPersistent, [&](absl::StatusOr<CreateResult> r) {
    EXPECT_TRUE(r.ok()) << r.status();
    absl::MutexLock lock(&mu);
    on_client_thread |= OnCompletionThread();
    order.push_back(1);
  });
  s.GetAsync(Path("a"), [&](absl::StatusOr<std::string> r) {
    EXPECT_TRUE(r.ok() && *r == "x");
    absl::MutexLock lock(&mu);
    order.push_back(2);
  });
  s.GetChildrenAsync(root(), [&](absl::StatusOr<std::vector<std::string>> r) {
    EXPECT_TRUE(r.ok());
    absl::MutexLock lock(&mu);
    order.push_back(3);
  });
  s.DeleteAsync(Path("a"), -1, [&](absl::Status st) {
    EXPECT_TRUE(st.ok()) << st;
    absl::MutexLock lock(&mu);
    order.push_back(4);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::MutexLock lock(&mu);
  EXPECT_THAT(order, ElementsAre(1, 2, 3, 4));
  EXPECT_FALSE(on_client_thread);
}

TEST_F(SessionTest, BadInputIsRefusedNamingTheValue) {
  Session& s = admin();
  for (const char* path : {"", "relative", "/trailing/", "/a//b", "/a/../b"}) {
    absl::Status status = s.Create(path, "", CreateMode::kPersistent).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << path << ": " << status;
    EXPECT_TRUE(absl::IsInvalidArgument(s.Get(path).status())) << path;
    EXPECT_TRUE(absl::IsInvalidArgument(s.Delete(path))) << path;
    EXPECT_TRUE(absl::IsInvalidArgument(s.GetChildren(path).status())) << path;
  }
  EXPECT_THAT(s.Get("/x/").status().message(), HasSubstr("\"/x/\""));

  for (const char* connect : {"", "nohost", "host:99999", "a:1/", "a:1,,b:2"}) {
    SessionOptions options = Options();
    options.connect = connect;
    auto session = Session::Connect(options);
    EXPECT_TRUE(absl::IsInvalidArgument(session.status())) << connect << ": " << session.status();
  }
  SessionOptions options = Options();
  options.session_timeout = absl::ZeroDuration();
  EXPECT_TRUE(absl::IsInvalidArgument(Session::Connect(options).status()));
  options.session_timeout = absl::Milliseconds(1);  // the C client would never connect
  EXPECT_THAT(Session::Connect(options).status().message(), HasSubstr("at least 100ms"));
  options = Options();
  options.digest_auth = "no-colon";
  EXPECT_TRUE(absl::IsInvalidArgument(Session::Connect(options).status()));
}

TEST_F(SessionTest, UnreachableServerFailsWithinTheConnectTimeout) {
  SessionOptions options = Options();
  options.connect = absl::StrCat("127.0.0.1:", DeadPort());
  options.connect_timeout = absl::Seconds(2);
  options.log_level = ClientLogLevel::kError;
  options.log_sink = [](absl::string_view) {};
  absl::Time start = absl::Now();
  auto session = Session::Connect(options);
  EXPECT_TRUE(absl::IsUnavailable(session.status())) << session.status();
  EXPECT_THAT(session.status().message(), HasSubstr(options.connect));
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));  // bounded: no hang
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

// A host name that does not resolve is no malformed connect string: the
// status says which name, and is Unavailable (DNS may answer later).
TEST_F(SessionTest, UnresolvableHostIsUnavailableNamingIt) {
  SessionOptions options = Options();
  options.connect = "nosuchhost.invalid:2181";
  options.connect_timeout = absl::Seconds(2);
  options.log_level = ClientLogLevel::kError;
  options.log_sink = [](absl::string_view) {};
  auto session = Session::Connect(options);
  EXPECT_TRUE(absl::IsUnavailable(session.status())) << session.status();
  EXPECT_THAT(session.status().message(), HasSubstr("cannot resolve nosuchhost.invalid"));
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

TEST_F(SessionTest, OperationsOnAClosedSessionFail) {
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  session->Close();
  session->Close();  // idempotent
  absl::Status status = session->Create(Path("x"), "", CreateMode::kPersistent).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("closed"));
  absl::Notification done;
  session->GetAsync(Path("x"), [&](absl::StatusOr<std::string> r) {
    EXPECT_TRUE(absl::IsFailedPrecondition(r.status()));
    done.Notify();
  });
  // Completions of a closed session run inline or not at all; never hang.
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(5)));
}

TEST_F(SessionTest, ExpiryIsLostThenANewGenerationAndEphemeralsAreGone) {
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  StateRecorder recorder(*session);
  ASSERT_TRUE(session->Create(Path("eph"), "", CreateMode::kEphemeral).ok());
  const int64_t old_id = session->session_id();

  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  // The client hears of the expiry when it next talks to the server.
  (void)session->Exists(Path("eph"));
  ASSERT_TRUE(recorder.WaitFor(SessionState::kLost, 1).has_value());
  ASSERT_TRUE(recorder.WaitFor(SessionState::kConnected, 2).has_value());
  EXPECT_EQ(session->generation(), 2u);
  EXPECT_NE(session->session_id(), old_id);
  auto eph = admin().Exists(Path("eph"));
  ASSERT_TRUE(eph.ok());
  EXPECT_FALSE(eph->has_value());
  // Before the expiry the server moves the session to the killer's handle and
  // back, so SUSPENDED/RECONNECTED may come first; after LOST only the new
  // generation's CONNECTED.
  std::vector<SessionState> states = recorder.states();
  ASSERT_GE(states.size(), 2u);
  EXPECT_EQ(states[states.size() - 2], SessionState::kLost);
  EXPECT_EQ(states.back(), SessionState::kConnected);
  // The new generation works.
  EXPECT_TRUE(session->Create(Path("eph2"), "", CreateMode::kEphemeral).ok());
  session->Close();
}

// The session's accessors read the handle of the current generation. While
// that handle closes — the supervisor closing an expired one, or Close() —
// the C client frees it; an accessor called then must not read the freed
// handle. (A read of freed memory is silent in a plain build: run under
// ZKR_SANITIZE=address, where it fails at the first such read.)
TEST_F(SessionTest, AccessorsWhileTheHandleClosesNeverReadAFreedHandle) {
  // Readers on every core, through expiries (the supervisor closes the
  // handle) and closes: each close leaves a short window.
  for (int round = 0; round < 40; ++round) {
    auto session = NewSession();
    ASSERT_NE(session, nullptr);
    std::atomic<bool> stop{false};
    std::atomic<int64_t> reads{0};
    std::atomic<int> reading{0};  // readers past their first read
    std::vector<std::thread> readers;
    for (int r = 0; r < 3; ++r) {
      readers.emplace_back([&] {
        bool first = true;
        while (!stop.load()) {
          (void)session->negotiated_timeout();
          (void)session->session_id();
          reads.fetch_add(1);
          if (std::exchange(first, false)) reading.fetch_add(1);
        }
      });
    }
    // Every reader is reading before the handle goes (on 2 loaded cores a
    // thread may not have run at all by the time Close() returns).
    while (reading.load() < 3) std::this_thread::yield();
    if (round % 8 == 0) {
      StateRecorder recorder(*session);
      ASSERT_TRUE(testing::ExpireSession(*session).ok());
      (void)session->Exists(root());  // hears of the expiry
      ASSERT_TRUE(recorder.WaitFor(SessionState::kConnected, 2).has_value());
    }
    session->Close();
    stop = true;
    for (std::thread& reader : readers) reader.join();
    EXPECT_GT(reads.load(), 0);
    EXPECT_EQ(session->session_id(), 0);
  }
}

TEST_F(SessionTest, AclDenialSurfacesAsPermissionDenied) {
  SessionOptions alice_options = Options();
  alice_options.digest_auth = "alice:secret";
  auto alice = NewSession(alice_options);
  ASSERT_NE(alice, nullptr);
  CreateOptions private_node;
  private_node.acl = CreatorAllAcl();
  ASSERT_TRUE(alice->Create(Path("private"), "mine", CreateMode::kEphemeral, private_node).ok());

  auto mallory = NewSession();
  ASSERT_NE(mallory, nullptr);
  absl::Status get = mallory->Get(Path("private")).status();
  EXPECT_TRUE(absl::IsPermissionDenied(get)) << get;
  EXPECT_THAT(get.message(), HasSubstr(Path("private")));
  EXPECT_TRUE(absl::IsPermissionDenied(mallory->Set(Path("private"), "x").status()));
  // Deleting needs DELETE on the parent, which is open: ZooKeeper allows it.
  // What the ACL protects is the node itself.
  auto still = alice->Get(Path("private"));
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(*still, "mine");
  alice->Close();
}

TEST_F(SessionTest, LeaseRunsOutWhileTheServerIsPausedAndANewSessionFollows) {
  testing::ZooKeeperServer* server = testing::SharedServer();
  if (server == nullptr) GTEST_SKIP() << "needs the embedded server (ZKR_TEST_CONNECT set)";
  SessionOptions options = Options();
  options.log_sink = [](absl::string_view) {};
  auto session = NewSession(options);
  ASSERT_NE(session, nullptr);
  StateRecorder recorder(*session);

  ASSERT_TRUE(server->Pause().ok());
  auto suspended = recorder.WaitFor(SessionState::kSuspended, 1);
  absl::Time lease = session->valid_until();
  auto lost = recorder.WaitFor(SessionState::kLost, 1);
  ASSERT_TRUE(server->Resume().ok());
  ASSERT_TRUE(suspended.has_value());
  ASSERT_TRUE(lost.has_value());
  // LOST is declared locally when the lease ends, before the server could have
  // expired the session (it never heard from us for a full timeout).
  EXPECT_GE(lost->at, lease);
  EXPECT_LT(lease, suspended->at + session->negotiated_timeout());
  ASSERT_TRUE(recorder.WaitFor(SessionState::kConnected, 2).has_value());
  EXPECT_TRUE(session->Create(Path("after"), "", CreateMode::kEphemeral).ok());
  session->Close();
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

// Item 11: after Close(), asynchronous calls complete on the dispatcher
// thread with the blocking call's status.
TEST_F(SessionTest, AsyncCallsAfterCloseCompleteOnTheDispatcherThread) {
  auto session = NewSession();
  session->Close();
  const absl::Status blocking = session->Get(root()).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(blocking)) << blocking;
  absl::Notification done;
  absl::Status async;
  std::thread::id ran_on;
  session->GetAsync(root(), [&](absl::StatusOr<std::string> data) {
    async = data.status();
    ran_on = std::this_thread::get_id();
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_NE(ran_on, std::this_thread::get_id()) << "done ran inline on the caller's thread";
  EXPECT_EQ(async.code(), blocking.code()) << async;
}

// Item 13: a chroot that does not exist is reported as such, at once, not
// as "no ZooKeeper server answered" after the connect timeout.
TEST_F(SessionTest, AMissingChrootIsReportedAsNotFound) {
  SessionOptions options = Options();
  options.connect = connect_ + Path("not-yet-there");
  options.connect_timeout = absl::Seconds(60);
  const absl::Time start = absl::Now();
  auto session = Session::Connect(options);
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(absl::IsNotFound(session.status())) << session.status();
  EXPECT_THAT(session.status().message(), HasSubstr("not-yet-there"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(60)) << "waited out the connect timeout";
  // Once it exists, the same string connects.
  ASSERT_TRUE(admin().Create(Path("not-yet-there"), "", CreateMode::kPersistent).ok());
  auto connected = Session::Connect(options);
  ASSERT_TRUE(connected.ok()) << connected.status();
  (*connected)->Close();
  ASSERT_TRUE(admin().Delete(Path("not-yet-there")).ok());
}

// Item 16: an operation in flight when the lease runs out is reported as a
// lost session, never as Cancelled (reserved for the caller's own Close()).
TEST_F(SessionTest, AnOperationCutShortByTheLeaseIsSessionLostNotCancelled) {
  testing::ZooKeeperServer* server = testing::SharedServer();
  ASSERT_NE(server, nullptr);
  SessionOptions options = Options();
  options.reconnect_after_loss = false;
  options.retry.max_attempts = 1;
  options.log_sink = [](absl::string_view) {};
  auto session = NewSession(options);
  ASSERT_TRUE(server->Pause().ok());
  absl::Status status = session->Exists("/").status();
  // The first failure may be the connection loss; what follows the lease's
  // end must be the lost session.
  if (absl::IsUnavailable(status)) status = session->Exists("/").status();
  ASSERT_TRUE(server->Resume().ok());
  EXPECT_FALSE(absl::IsCancelled(status)) << status;
  EXPECT_TRUE(IsSessionLost(status)) << status;
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

// Item 17: the lease is measured on the monotonic clock. A wall-clock step
// backwards does not extend it (LOST is declared on time while the server
// is unreachable); a step forwards does not shorten it (a holder stays HELD).
TEST_F(SessionTest, WallClockStepsNeitherExtendNorShortenTheLease) {
  testing::ZooKeeperServer* server = testing::SharedServer();
  ASSERT_NE(server, nullptr);
  auto clock = std::make_shared<testing::FakeClock>();
  SessionOptions options = Options();
  options.clock = clock;
  options.log_sink = [](absl::string_view) {};
  auto session = NewSession(options);
  auto lock = ExclusiveLock::Create(*session, Path("stepped"));
  ASSERT_TRUE(lock.ok());
  auto guard = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(guard.ok()) << guard.status();

  clock->StepWall(absl::Hours(1));
  EXPECT_TRUE(guard->held()) << "a forward wall-clock step shortened the hold";
  EXPECT_EQ(session->state(), SessionState::kConnected);
  EXPECT_GT(guard->valid_until(), clock->Now()) << "valid_until is reported on the wall clock";

  clock->StepWall(-absl::Hours(2));
  auto states = std::make_unique<testing::StateRecorder>(*session);  // goes before `session`
  const uint64_t generation = session->generation();
  ASSERT_TRUE(server->Pause().ok());
  // Lease: 4 s timeout minus the margin, from the last answer. A lease
  // extended by the backward step would last another hour.
  const bool declared =
      states->WaitFor(SessionState::kLost, generation, absl::Seconds(15)).has_value();
  ASSERT_TRUE(server->Resume().ok());
  EXPECT_TRUE(declared) << "the backward wall-clock step extended the lease";
  EXPECT_NE(guard->state(), LockState::kHeld);
  (void)guard->Release();
  lock->reset();
  states.reset();
  session.reset();
  // The old session's node goes when the server, paused meanwhile, expires it.
  for (int i = 0; i < 400; ++i) {
    auto children = admin().GetChildren(Path("stepped"));
    if (!children.ok() || children->empty()) break;
    absl::SleepFor(absl::Milliseconds(50));  // polling the server, not deciding
  }
  (void)admin().Delete(Path("stepped"));
  SetClientLog(nullptr, ClientLogLevel::kWarn);
}

}  // namespace
}  // namespace zkr
