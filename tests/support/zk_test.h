// Test support shared by the integration tests: one real ZooKeeper server per
// test binary (or the external ensemble named by ZKR_TEST_CONNECT), a unique
// root path per test, and a check that each test left no znodes behind.
#ifndef ZKRECIPES_TESTS_SUPPORT_ZK_TEST_H_
#define ZKRECIPES_TESTS_SUPPORT_ZK_TEST_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace testing {

// The connect string of this binary's shared server, started on first use.
// Fails the calling test (never skips) if no server can be started.
std::string SharedServerConnect();
// The shared standalone server, or null when ZKR_TEST_CONNECT is set.
ZooKeeperServer* SharedServer();

// Records a session's state changes (from its listener) and lets a test
// wait, bounded, for one.
class StateRecorder {
 public:
  explicit StateRecorder(Session& session);
  ~StateRecorder();

  struct Event {
    SessionState state;
    uint64_t generation;
    absl::Time at;  // when the listener ran
  };
  // The first `state` of `generation` seen, waiting up to `timeout`.
  std::optional<Event> WaitFor(SessionState state, uint64_t generation,
                               absl::Duration timeout = absl::Seconds(30));
  // Every state seen so far, in order.
  std::vector<SessionState> states();

 private:
  Session& session_;
  int id_;
  absl::Mutex mu_;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
};

// Expires `session`'s current ZooKeeper session on the server.
absl::Status ExpireSession(Session& session);

// Session::Connect, with a watch audit on every generation's client (and
// `faults` injected, as ConnectWithFaults does, unless null). When a client
// is closed while connected, it first makes two round trips, then fails the
// current test (ADD_FAILURE) for every path on which the shared server
// still lists a watch of its session that the client no longer waits for
// (ZkClient::WaitedPaths): a watch left behind by a waiter that gave up,
// was cancelled or left. No audit without the embedded server
// (ZKR_TEST_CONNECT), nor for a session that is lost or disconnected (its
// watches go with it). The audit runs on the thread that closes the client
// (the Session::Close() caller, or the session's supervisor thread).
absl::StatusOr<std::unique_ptr<Session>> ConnectWithWatchAudit(
    SessionOptions options, std::shared_ptr<ClientFaults> faults = nullptr);

// Base fixture: root() is "/zkr-test/<suite>.<test>-<pid>"; TearDown fails the
// test if anything is left under it, then removes it. Every session it makes
// (admin() included, closed at TearDown) is watch-audited when it closes
// (ConnectWithWatchAudit).
class ZkTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Session options for the shared server; session timeout 4s.
  SessionOptions Options() const;
  // A connected session (fails the test if it cannot connect).
  std::unique_ptr<Session> NewSession(SessionOptions options);
  std::unique_ptr<Session> NewSession() { return NewSession(Options()); }
  // A connected session whose clients inject `faults` (the client seam,
  // src/testing/faulty_client.h); fails the test if it cannot connect.
  std::unique_ptr<Session> NewFaultySession(std::shared_ptr<ClientFaults> faults);
  // root() + "/" + relative.
  std::string Path(absl::string_view relative) const;
  const std::string& root() const { return root_; }
  // The fixture's own session (for checks and cleanup).
  Session& admin() { return *admin_; }

  std::string connect_;

 private:
  std::string root_;
  std::unique_ptr<Session> admin_;
};

// The paths at or below `under` that the server lists (`wchp`) as watched by
// `session`'s current ZooKeeper session. Makes one round trip on `session`
// first, so every request it sent before (a watch removal, say) has been
// processed. Fails the calling test when the listing cannot be read.
std::vector<std::string> WatchedPaths(Session& session, absl::string_view under);
// The same without the nodes `session` owns: the queue watches, without a
// waiter's or holder's watch on its own node.
std::vector<std::string> WatchedPathsOfOthers(Session& session, absl::string_view under);

// The server's data watches by path (`wchp`): path -> watching sessions.
using WatchListing = std::map<std::string, std::set<std::string>>;
// The shared server's listing, read until it equals `expected` (bounded:
// about 5 s); returns the last one read.
WatchListing AwaitWatchListing(const WatchListing& expected);
// A counter of the shared server's `mntr`; -1 if it cannot be read.
int64_t SharedServerCounter(absl::string_view key);
// Data watches the shared server has fired so far: on deletes, and on data
// changes (a writer's marked release, a semaphore acquirer's mark).
int64_t DataWatchesFired();

// Polls `condition` every 5 ms until it holds or `timeout` has passed;
// returns its last answer. For state a test cannot be told of (a listing,
// another process's view), never to let time pass.
template <typename F>
bool Eventually(F condition, absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (condition()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return condition();
}

// Polls `path` through `session` until it has `count` children (a missing
// path has none); false after `timeout`.
bool AwaitChildCount(Session& session, const std::string& path, size_t count,
                     absl::Duration timeout = absl::Seconds(10));

// Bytes of heap in use (malloc's view), to compare before and after a loop.
size_t HeapInUse();

// Deletes `path` and everything below it.
absl::Status DeleteRecursively(Session& session, const std::string& path);
// Every path below `path` (not `path` itself), depth first.
absl::StatusOr<std::vector<std::string>> ListRecursively(Session& session,
                                                         const std::string& path);

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_ZK_TEST_H_
