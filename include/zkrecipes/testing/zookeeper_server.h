// Real ZooKeeper servers for tests: a standalone server and a 3-node ensemble,
// started from Debian's `zookeeper` package (java + /usr/share/java jars) on
// free loopback ports in fresh temporary directories.
//
// Guarantees: a started server is serving requests when Start() returns; the
// destructor stops it (SIGTERM, then SIGKILL after a grace period) and removes
// its directory, also when a test fails. The server process dies with the
// process that started it (PR_SET_PDEATHSIG), so no java process outlives a
// crashed test. No callbacks. Each object is used from one thread at a time,
// and any thread may be used (servers are forked by an internal thread that
// lives as long as the process, so a server does not die with the thread
// that happened to start it). If Start() fails, its error names the server's
// log and quotes its end; that directory is kept for inspection and removed
// by a later test process once this one has exited.
//
// Example:
//   auto server = zkr::testing::ZooKeeperServer::Start();
//   if (!server.ok()) FAIL() << server.status();
//   SessionOptions options;
//   options.connect = (*server)->connect_string();   // "127.0.0.1:PORT"
#ifndef ZKRECIPES_TESTING_ZOOKEEPER_SERVER_H_
#define ZKRECIPES_TESTING_ZOOKEEPER_SERVER_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace zkr {
namespace testing {

// Settings shared by standalone servers and ensemble members.
struct ServerOptions {
  // ZooKeeper's tick. Session timeouts must lie in [2, 20] ticks unless
  // min/max_session_timeout say otherwise (they do, below).
  absl::Duration tick = absl::Milliseconds(200);
  // Negotiable session-timeout range.
  absl::Duration min_session_timeout = absl::Milliseconds(400);
  absl::Duration max_session_timeout = absl::Seconds(60);
  // How long Start()/Restart() wait for the server to serve.
  absl::Duration start_timeout = absl::Seconds(60);
  // How often the server deletes empty container nodes (lock, election and
  // barrier directories); zero keeps ZooKeeper's default (one minute).
  absl::Duration container_check_interval = absl::ZeroDuration();
  // The server's packet limit, jute.maxbuffer: the longest request (and
  // reconnect's SetWatches) it accepts; zero keeps ZooKeeper's default
  // (0xfffff, 1 MB less one byte). Sessions are told it through
  // SessionOptions::max_request_bytes.
  size_t jute_max_buffer = 0;
  // The java executable.
  std::string java = "java";
  // Where the server's stdout/stderr go: empty = a file `server.log` in its
  // directory (kept only while the server object lives). Ensemble member i
  // appends to `<log_file>.<i>`.
  std::string log_file;
};

// Sends a four-letter-word command (e.g. "ruok", "srvr", "wchc", "mntr") to
// host:port and returns the whole reply. Fails with Unavailable if nothing
// answers within `timeout`.
absl::StatusOr<std::string> FourLetterWord(absl::string_view host, int port,
                                           absl::string_view command,
                                           absl::Duration timeout = absl::Seconds(5));

// Watches per path from a `wchp` reply: path -> watching session ids as the
// server prints them ("0x...").
std::map<std::string, std::set<std::string>> ParseWatchesByPath(absl::string_view wchp);

// A numeric line "<key>\t<value>" of an `mntr` reply (e.g.
// "zk_sum_node_deleted_watch_count": watchers triggered by deletions so
// far), or -1 if absent.
int64_t MntrValue(absl::string_view mntr, absl::string_view key);

// A session id as the four-letter words print it: "0x" + lowercase hex.
std::string SessionIdHex(int64_t session_id);

// Expires a session on the server, the standard way: opens a second handle
// with the same session id and password, waits until it is connected, then
// closes it. The original client learns of the expiry when it next hears
// from the server (it then sees SESSION_EXPIRED).
absl::Status ExpireSession(const std::string& connect, int64_t session_id,
                           const std::string& password,
                           absl::Duration timeout = absl::Seconds(30));

// The connect string of an external ensemble from ZKR_TEST_CONNECT, or empty.
std::string ExternalConnectString();

// A standalone server (ZooKeeperServerMain).
class ZooKeeperServer {
 public:
  // Starts a server and waits until it serves.
  static absl::StatusOr<std::unique_ptr<ZooKeeperServer>> Start(
      ServerOptions options = {});

  ZooKeeperServer(const ZooKeeperServer&) = delete;
  ZooKeeperServer& operator=(const ZooKeeperServer&) = delete;
  ~ZooKeeperServer();

  // "127.0.0.1:<client port>".
  std::string connect_string() const;
  int client_port() const;
  // The server's data/config directory.
  const std::string& directory() const;

  // Four-letter word against this server.
  absl::StatusOr<std::string> FourLetterWord(absl::string_view command) const;

  // Graceful stop (SIGTERM, then SIGKILL); data is kept for Restart().
  absl::Status Stop();
  // kill -9; data is kept for Restart().
  absl::Status Kill();
  // Starts it again on the same port and data; waits until it serves.
  absl::Status Restart();
  // SIGSTOP / SIGCONT.
  absl::Status Pause();
  absl::Status Resume();

 private:
  class Impl;
  explicit ZooKeeperServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// An ensemble of QuorumPeerMain members on 127.0.0.1, each with distinct
// client, quorum and election ports. Members are numbered 0..size-1.
class ZooKeeperEnsemble {
 public:
  // Starts `size` members and waits until every member serves.
  static absl::StatusOr<std::unique_ptr<ZooKeeperEnsemble>> Start(
      int size = 3, ServerOptions options = {});

  ZooKeeperEnsemble(const ZooKeeperEnsemble&) = delete;
  ZooKeeperEnsemble& operator=(const ZooKeeperEnsemble&) = delete;
  ~ZooKeeperEnsemble();

  int size() const;
  // "127.0.0.1:p0,127.0.0.1:p1,127.0.0.1:p2".
  std::string connect_string() const;
  // "127.0.0.1:<client port of member i>".
  std::string member_connect_string(int i) const;
  int client_port(int i) const;
  // The member whose client port is `port`, or -1.
  int MemberByClientPort(int port) const;
  // The member that is currently the quorum leader ("Mode: leader" in srvr),
  // or NotFound.
  absl::StatusOr<int> Leader() const;

  absl::StatusOr<std::string> FourLetterWord(int i, absl::string_view command) const;

  absl::Status Stop(int i);
  absl::Status Kill(int i);
  // Restarts member i and waits until it serves again.
  absl::Status Restart(int i);
  absl::Status Pause(int i);
  absl::Status Resume(int i);
  // Waits until every running, unpaused member serves requests.
  absl::Status WaitUntilServing(absl::Duration timeout = absl::Seconds(60));

 private:
  class Impl;
  explicit ZooKeeperEnsemble(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTING_ZOOKEEPER_SERVER_H_
