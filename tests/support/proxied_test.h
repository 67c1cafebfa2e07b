// A ZkTest whose sessions can reach the shared server through a loopback TCP
// proxy (zkrecipes/testing/tcp_proxy.h), so that a test can partition, slow
// down or reset one session's network while its process keeps running.
#ifndef ZKRECIPES_TESTS_SUPPORT_PROXIED_TEST_H_
#define ZKRECIPES_TESTS_SUPPORT_PROXIED_TEST_H_

#include <memory>

#include "gtest/gtest.h"
#include "src/zk_client.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace testing {

class ProxiedZkTest : public ZkTest {
 protected:
  void SetUp() override {
    ZkTest::SetUp();
    if (HasFatalFailure()) return;
    ZooKeeperServer* server = SharedServer();
    ASSERT_NE(server, nullptr) << "needs the embedded server";
    auto proxy = TcpProxy::Start("127.0.0.1", server->client_port());
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = std::move(*proxy);
  }
  void TearDown() override {
    ZkTest::TearDown();
    proxy_.reset();
    internal::SetClientLog(nullptr, ClientLogLevel::kWarn);
  }
  // Options for a session that reaches the server through the proxy (its
  // client log silenced: a partition makes it loud).
  SessionOptions ProxiedOptions() {
    SessionOptions options = Options();
    options.connect = proxy_->address();
    options.log_sink = [](absl::string_view) {};
    return options;
  }
  std::unique_ptr<TcpProxy> proxy_;
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_PROXIED_TEST_H_
