// PacketLimitServerTest: a test suite's own ZooKeeper server with its packet
// limit (jute.maxbuffer) set, and sessions told the same limit
// (SessionOptions::max_request_bytes), so that the watch-limit tests reach
// the reconnect packet's limit with a few hundred waits instead of
// thousands. The suites put a TCP proxy in front of it to reset
// connections.
#ifndef ZKRECIPES_TESTS_SUPPORT_PACKET_LIMIT_SERVER_H_
#define ZKRECIPES_TESTS_SUPPORT_PACKET_LIMIT_SERVER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace testing {

class PacketLimitServerTest : public ::testing::Test {
 public:
  // The limit the suites use unless they start their own.
  static constexpr size_t kSmallLimit = 64 * 1024;

  // A session on `connect` told the server's limit; quiet (a reset makes
  // the C client loud).
  std::unique_ptr<Session> Connect(const std::string& connect) const {
    SessionOptions options;
    options.connect = connect;
    options.session_timeout = absl::Seconds(4);
    options.max_request_bytes = limit_;
    options.log_sink = [](absl::string_view) {};
    auto session = Session::Connect(options);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }
  // How many of `session`'s watches the server lists under `root`.
  size_t WatchesUnder(Session& session, const std::string& root) const {
    (void)session.Exists("/");  // everything sent before is processed
    auto listing = server_->FourLetterWord("wchp");
    EXPECT_TRUE(listing.ok()) << listing.status();
    if (!listing.ok()) return 0;
    const std::string id = SessionIdHex(session.session_id());
    size_t count = 0;
    for (const auto& [path, sessions] : ParseWatchesByPath(*listing)) {
      if (absl::StartsWith(path, root) && sessions.count(id) > 0) ++count;
    }
    return count;
  }
  static ZooKeeperServer& server() { return *server_; }
  static size_t limit() { return limit_; }

 protected:
  static void SetUpTestSuite() { StartServer(kSmallLimit); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  // A server whose packet limit is `limit` (0: ZooKeeper's default).
  static void StartServer(size_t limit) {
    ServerOptions options;
    options.jute_max_buffer = limit;
    limit_ = limit == 0 ? 0xfffff : limit;
    auto server = ZooKeeperServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }

  static inline ZooKeeperServer* server_ = nullptr;
  static inline size_t limit_ = 0;
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_PACKET_LIMIT_SERVER_H_
