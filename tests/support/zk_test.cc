#include "tests/support/zk_test.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "src/session_access.h"
#include "src/session_core.h"
#include "src/testing/forwarding_client.h"

namespace zkr {
namespace testing {
namespace {

std::unique_ptr<ZooKeeperServer>& Server() {
  static auto* server = new std::unique_ptr<ZooKeeperServer>();
  return *server;
}

// Stops the shared server when the test binary ends.
class SharedServerEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { Server().reset(); }
};
const auto* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new SharedServerEnvironment);

// The paths `server` lists (`wchp`) as watched by session `session_id`.
// Fails the calling test when the listing cannot be read.
std::vector<std::string> ListedWatches(ZooKeeperServer& server, int64_t session_id) {
  std::vector<std::string> paths;
  absl::StatusOr<std::string> wchp = server.FourLetterWord("wchp");
  if (!wchp.ok()) {
    ADD_FAILURE() << "watch listing: " << wchp.status();
    return paths;
  }
  const std::string id = SessionIdHex(session_id);
  for (const auto& [path, sessions] : ParseWatchesByPath(*wchp)) {
    if (sessions.count(id) > 0) paths.push_back(path);
  }
  return paths;
}

// A client that checks, when it is closed, that its session leaves no
// watch behind (see ConnectWithWatchAudit). Close() blocks for at most one
// round trip; it runs on the closing thread, never the completion thread.
// Everything else is forwarded untouched.
class WatchAuditClient final : public ForwardingClient {
 public:
  // Whether the wrapped client is connected: set from its session events,
  // on its completion thread.
  struct Connection {
    std::atomic<bool> connected{false};
  };

  WatchAuditClient(std::shared_ptr<ZkClient> inner, std::string connect,
                   std::shared_ptr<const Connection> connection)
      : ForwardingClient(std::move(inner)),
        connect_(std::move(connect)),
        connection_(std::move(connection)) {}

  void Close() override {
    if (!audited_.exchange(true)) Audit();
    ForwardingClient::Close();
  }
  void MarkLost() override {
    lost_.store(true);
    ForwardingClient::MarkLost();
  }

 private:
  void Audit();
  // A request answered by the server (false: not within 5 s, or failed).
  bool RoundTrip();
  // The paths (as the server lists them) we wait on now.
  std::set<std::string> Waited() const;
  // The paths the server lists as our watches that we waited on neither
  // just before nor just after the listing.
  std::set<std::string> ListedButNotWaited();

  const std::string connect_;
  const std::shared_ptr<const Connection> connection_;
  std::atomic<bool> audited_{false};
  std::atomic<bool> lost_{false};
};

void WatchAuditClient::Audit() {
  ZooKeeperServer* server = SharedServer();
  // No listing of an external ensemble; a lost or disconnected session's
  // watches go with it (and a round trip would only wait).
  if (server == nullptr || lost_.load() || !connection_->connected.load()) return;
  // The server handles a session's requests in order: once a round trip is
  // answered, so is every watch (or watch removal) sent before it. Two of
  // them: a watch given up while its request was in flight is removed when
  // that request's reply comes (ZkClient::CancelWatch), which may be just
  // before the first round trip's reply — its removal then goes out after
  // the first round trip, and before the second.
  if (!RoundTrip() || !RoundTrip()) return;  // the session is gone, and its watches with it
  // The session is still in use while it closes (a hold's deferred watch
  // may be set on another thread, one may be given up): a watch set or
  // removed during a listing is neither waited for nor left behind. So a
  // path is suspect when listed and waited for neither just before nor just
  // after the listing; and left behind when still so after another round
  // trip (a removal sent meanwhile is answered then) and listing.
  std::set<std::string> suspects = ListedButNotWaited();
  if (suspects.empty() || !RoundTrip()) return;
  const int64_t session_id = inner().session_id();
  for (const std::string& path : ListedButNotWaited()) {
    if (suspects.count(path) > 0) {
      ADD_FAILURE() << "watch left behind by session " << SessionIdHex(session_id) << " on "
                    << path << " (no one waits for it)";
    }
  }
}

bool WatchAuditClient::RoundTrip() {
  struct Trip {
    absl::Notification answered;
    absl::Status status;
  };
  auto trip = std::make_shared<Trip>();
  inner().Exists("/", nullptr, [trip](absl::StatusOr<Stat> stat) {
    trip->status = stat.status();
    trip->answered.Notify();
  });
  return trip->answered.WaitForNotificationWithTimeout(absl::Seconds(5)) && trip->status.ok();
}

std::set<std::string> WatchAuditClient::Waited() const {
  // The server lists paths with the chroot, if any; we wait on them without.
  const size_t slash = connect_.find('/');
  const std::string chroot = slash == std::string::npos ? "" : connect_.substr(slash);
  std::set<std::string> waited;
  for (const std::string& path : inner().WaitedPaths()) {
    waited.insert(chroot.empty() ? path : path == "/" ? chroot : chroot + path);
  }
  return waited;
}

std::set<std::string> WatchAuditClient::ListedButNotWaited() {
  std::set<std::string> waited = Waited();
  const std::vector<std::string> listed = ListedWatches(*SharedServer(), inner().session_id());
  waited.merge(Waited());
  std::set<std::string> unwaited;
  for (const std::string& path : listed) {
    if (waited.count(path) == 0) unwaited.insert(path);
  }
  return unwaited;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> ConnectWithWatchAudit(
    SessionOptions options, std::shared_ptr<ClientFaults> faults) {
  internal::ClientFactory factory =
      [faults](const std::string& connect, absl::Duration timeout, std::shared_ptr<Clock> clock,
               internal::ZkClient::EventFn on_event)
      -> absl::StatusOr<std::shared_ptr<internal::ZkClient>> {
    auto connection = std::make_shared<WatchAuditClient::Connection>();
    auto tracked = [connection, on_event](internal::ZkClient::Event event) {
      connection->connected.store(event == internal::ZkClient::Event::kConnected);
      on_event(event);
    };
    absl::StatusOr<std::shared_ptr<internal::ZkClient>> client =
        internal::OpenCClient(connect, timeout, std::move(clock), std::move(tracked));
    if (!client.ok()) return client.status();
    // Faults outside the audit: its round trip is never faulted.
    std::shared_ptr<internal::ZkClient> audited =
        std::make_shared<WatchAuditClient>(*std::move(client), connect, connection);
    return faults != nullptr ? WrapWithFaults(std::move(audited), faults) : audited;
  };
  return internal::SessionAccess::Connect(std::move(options), std::move(factory));
}

std::string SharedServerConnect() {
  std::string external = ExternalConnectString();
  if (!external.empty()) return external;
  if (Server() == nullptr) {
    auto server = ZooKeeperServer::Start();
    if (!server.ok()) {
      ADD_FAILURE() << "cannot start a ZooKeeper server: " << server.status();
      return "";
    }
    Server() = std::move(*server);
  }
  return Server()->connect_string();
}

ZooKeeperServer* SharedServer() { return Server().get(); }

StateRecorder::StateRecorder(Session& session) : session_(session) {
  id_ = session.AddStateListener([this](SessionState state, uint64_t generation) {
    absl::MutexLock lock(&mu_);
    events_.push_back({state, generation, absl::Now()});
  });
}

StateRecorder::~StateRecorder() { session_.RemoveStateListener(id_); }

std::optional<StateRecorder::Event> StateRecorder::WaitFor(SessionState state,
                                                           uint64_t generation,
                                                           absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto seen = [&]() -> const Event* {
    for (const Event& e : events_) {
      if (e.state == state && e.generation == generation) return &e;
    }
    return nullptr;
  };
  mu_.AwaitWithTimeout(
      absl::Condition(+[](decltype(seen)* f) { return (*f)() != nullptr; }, &seen), timeout);
  const Event* e = seen();
  return e == nullptr ? std::nullopt : std::optional<Event>(*e);
}

std::vector<SessionState> StateRecorder::states() {
  absl::MutexLock lock(&mu_);
  std::vector<SessionState> out;
  for (const Event& e : events_) out.push_back(e.state);
  return out;
}

absl::Status ExpireSession(Session& session) {
  internal::SessionCore::Handle handle = internal::CoreOf(session)->current();
  return testing::ExpireSession(session.options().connect, handle.client->session_id(),
                                handle.client->password());
}

void ZkTest::SetUp() {
  connect_ = SharedServerConnect();
  ASSERT_FALSE(connect_.empty());
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = absl::StrCat(info->test_suite_name(), ".", info->name(), "-", getpid());
  std::replace(name.begin(), name.end(), '/', '_');  // parameterized test names
  root_ = absl::StrCat("/zkr-test/", name);
  // The observer outlives what a test does to its own sessions: a test that
  // pauses the server until a 4 s session is declared lost must not expire
  // the admin's too (a loaded run saw it: its last ping came up to a third of
  // its timeout before the pause, and the resume took the rest).
  SessionOptions admin_options = Options();
  admin_options.session_timeout = absl::Seconds(12);
  admin_ = NewSession(admin_options);
  ASSERT_NE(admin_, nullptr);
  ASSERT_TRUE(DeleteRecursively(*admin_, root_).ok());
  CreateOptions parents;
  parents.make_parents = true;
  ASSERT_TRUE(admin_->Create(root_, "", CreateMode::kPersistent, parents).ok());
}

void ZkTest::TearDown() {
  if (admin_ == nullptr) return;
  absl::StatusOr<std::vector<std::string>> left = ListRecursively(*admin_, root_);
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_TRUE(left->empty()) << "znodes left behind: " << absl::StrJoin(*left, ", ");
  EXPECT_TRUE(DeleteRecursively(*admin_, root_).ok());
  admin_.reset();
}

SessionOptions ZkTest::Options() const {
  SessionOptions options;
  options.connect = connect_;
  options.session_timeout = absl::Seconds(4);
  options.connect_timeout = absl::Seconds(20);
  return options;
}

std::unique_ptr<Session> ZkTest::NewSession(SessionOptions options) {
  auto session = ConnectWithWatchAudit(std::move(options));
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(*session) : nullptr;
}

std::unique_ptr<Session> ZkTest::NewFaultySession(std::shared_ptr<ClientFaults> faults) {
  auto session = ConnectWithWatchAudit(Options(), std::move(faults));
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(*session) : nullptr;
}

std::string ZkTest::Path(absl::string_view relative) const {
  return absl::StrCat(root_, "/", relative);
}

std::vector<std::string> WatchedPaths(Session& session, absl::string_view under) {
  std::vector<std::string> paths;
  (void)session.Exists("/");  // requests are processed in order: sync first
  ZooKeeperServer* server = SharedServer();
  if (server == nullptr) {
    ADD_FAILURE() << "watch listings need the embedded server";
    return paths;
  }
  for (std::string& path : ListedWatches(*server, session.session_id())) {
    if (absl::StartsWith(path, under)) paths.push_back(std::move(path));
  }
  return paths;
}

WatchListing AwaitWatchListing(const WatchListing& expected) {
  WatchListing listing;
  ZooKeeperServer* server = SharedServer();
  if (server == nullptr) return listing;
  for (int i = 0; i < 1000; ++i) {
    auto text = server->FourLetterWord("wchp");
    if (text.ok()) listing = ParseWatchesByPath(*text);
    if (listing == expected) break;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return listing;
}

int64_t SharedServerCounter(absl::string_view key) {
  ZooKeeperServer* server = SharedServer();
  if (server == nullptr) return -1;
  auto text = server->FourLetterWord("mntr");
  return text.ok() ? MntrValue(*text, key) : -1;
}

int64_t DataWatchesFired() {
  return SharedServerCounter("zk_sum_node_deleted_watch_count") +
         SharedServerCounter("zk_sum_node_changed_watch_count");
}

std::vector<std::string> WatchedPathsOfOthers(Session& session, absl::string_view under) {
  std::vector<std::string> watched = WatchedPaths(session, under);
  ZooKeeperServer* server = SharedServer();
  if (server == nullptr) return watched;  // WatchedPaths has failed the test
  // The server's `dump` lists each session's ephemeral nodes, one per line
  // under the session's id; no request of the session's own is sent (tests
  // count them).
  absl::StatusOr<std::string> dump = server->FourLetterWord("dump");
  if (!dump.ok()) {
    ADD_FAILURE() << "ephemeral listing: " << dump.status();
    return watched;
  }
  const std::string id = SessionIdHex(session.session_id());
  std::set<std::string> own;
  bool in_session = false;
  for (absl::string_view line : absl::StrSplit(*dump, '\n')) {
    if (absl::StartsWith(line, "0x")) {
      in_session = absl::StripSuffix(absl::StripAsciiWhitespace(line), ":") == id;
    } else if (in_session && !absl::StripAsciiWhitespace(line).empty()) {
      own.insert(std::string(absl::StripAsciiWhitespace(line)));
    }
  }
  std::vector<std::string> paths;
  for (std::string& path : watched) {
    if (own.count(path) == 0) paths.push_back(std::move(path));
  }
  return paths;
}

size_t HeapInUse() { return mallinfo2().uordblks; }

absl::StatusOr<std::vector<std::string>> ListRecursively(Session& session,
                                                         const std::string& path) {
  std::vector<std::string> all;
  auto children = session.GetChildren(path);
  if (absl::IsNotFound(children.status())) return all;
  if (!children.ok()) return children.status();
  for (const std::string& child : *children) {
    std::string child_path = path == "/" ? "/" + child : path + "/" + child;
    auto below = ListRecursively(session, child_path);
    if (!below.ok()) return below.status();
    all.insert(all.end(), below->begin(), below->end());
    all.push_back(child_path);
  }
  return all;
}

absl::Status DeleteRecursively(Session& session, const std::string& path) {
  auto below = ListRecursively(session, path);
  if (!below.ok()) return below.status();
  for (const std::string& child : *below) {
    absl::Status status = session.Delete(child);
    if (!status.ok() && !absl::IsNotFound(status)) return status;
  }
  absl::Status status = session.Delete(path);
  return absl::IsNotFound(status) ? absl::OkStatus() : status;
}

bool AwaitChildCount(Session& session, const std::string& path, size_t count,
                     absl::Duration timeout) {
  return Eventually(
      [&] {
        absl::StatusOr<std::vector<std::string>> children = session.GetChildren(path);
        return (children.ok() ? children->size() : 0) == count;
      },
      timeout);
}

}  // namespace testing
}  // namespace zkr
