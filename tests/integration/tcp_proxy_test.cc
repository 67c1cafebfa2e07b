// zkr::testing::TcpProxy between a test client and an echo server in this
// process (no ZooKeeper needed).
#include "zkrecipes/testing/tcp_proxy.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace zkr {
namespace {

using testing::TcpProxy;
using Mode = TcpProxy::Mode;

// How long a test waits for something that must happen.
constexpr absl::Duration kPatience = absl::Seconds(10);
// How long a test waits to conclude that something does not happen.
constexpr absl::Duration kQuiet = absl::Milliseconds(300);

// A loopback listening socket on a free port, or -1.
int ListenOnFreePort(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  *port = ntohs(address.sin_port);
  return fd;
}

// Milliseconds for poll(), at least 1 unless `left` is not positive.
int PollMs(absl::Duration left) {
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(absl::ToInt64Milliseconds(
      absl::Ceil(std::min(left, absl::Hours(1)), absl::Milliseconds(1))));
}

// Echoes every byte back on every connection, from one poll() thread, and
// records everything it received. Thread-safe.
class EchoServer {
 public:
  EchoServer() {
    listen_fd_ = ListenOnFreePort(&port_);
    stop_fd_ = eventfd(0, EFD_CLOEXEC);
    thread_ = std::thread([this] { Run(); });
  }
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;
  ~EchoServer() {
    const uint64_t one = 1;
    EXPECT_EQ(write(stop_fd_, &one, sizeof(one)), 8);
    thread_.join();
    close(listen_fd_);
    close(stop_fd_);
  }

  bool ok() const { return listen_fd_ >= 0 && stop_fd_ >= 0; }
  int port() const { return port_; }

  // Waits up to `timeout` until the bytes received so far contain `bytes`.
  bool AwaitReceived(absl::string_view bytes, absl::Duration timeout) {
    struct Args {
      EchoServer* server;
      absl::string_view bytes;
    } args{this, bytes};
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(
        absl::Condition(
            +[](Args* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
              return absl::string_view(a->server->received_).find(a->bytes) !=
                     absl::string_view::npos;
            },
            &args),
        timeout);
  }

  // Everything received so far, on all connections.
  std::string received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  void Run() {
    std::vector<int> connections;
    char buffer[4096];
    for (;;) {
      std::vector<pollfd> fds = {{stop_fd_, POLLIN, 0},
                                 {listen_fd_, POLLIN, 0}};
      for (int fd : connections) fds.push_back({fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), -1) < 0) continue;
      if (fds[0].revents != 0) break;
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        const int fd = fds[i].fd;
        const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
        if (n <= 0) {
          close(fd);
          connections.erase(
              std::find(connections.begin(), connections.end(), fd));
          continue;
        }
        {
          absl::MutexLock lock(&mu_);
          received_.append(buffer, n);
        }
        // Blocking: the tests send little at a time and read the replies.
        for (ssize_t sent = 0; sent < n;) {
          const ssize_t m = send(fd, buffer + sent, n - sent, MSG_NOSIGNAL);
          if (m <= 0) break;
          sent += m;
        }
      }
      if (fds[1].revents != 0) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) connections.push_back(fd);
      }
    }
    for (int fd : connections) close(fd);
  }

  int listen_fd_ = -1;
  int stop_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  absl::Mutex mu_;
  std::string received_ ABSL_GUARDED_BY(mu_);
};

// A blocking client connection to 127.0.0.1:port. Every read is bounded.
class Client {
 public:
  explicit Client(int port)
      : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    connected_ = fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&address),
                                     sizeof(address)) == 0;
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() {
    if (fd_ >= 0) close(fd_);
  }

  bool connected() const { return connected_; }

  bool Send(absl::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(n);
    }
    return true;
  }

  // Reads until `size` bytes arrived, the connection ended, or `timeout`
  // passed; returns what arrived. closed() then tells whether it ended.
  std::string Receive(size_t size, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    std::string bytes;
    char buffer[4096];
    while (bytes.size() < size && !closed_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, PollMs(deadline - absl::Now())) <= 0) break;
      const ssize_t n =
          recv(fd_, buffer, std::min(sizeof(buffer), size - bytes.size()), 0);
      if (n > 0) {
        bytes.append(buffer, n);
      } else if (n == 0 || errno == ECONNRESET) {
        closed_ = true;
        reset_ = n < 0;
      } else if (errno != EINTR) {
        ADD_FAILURE() << "recv: " << errno;
        break;
      }
    }
    return bytes;
  }

  // Waits up to `timeout` for the connection to end (read returns 0 or
  // ECONNRESET); true if it did, with no byte arriving before.
  bool AwaitClosed(absl::Duration timeout) {
    return Receive(1, timeout).empty() && closed_;
  }

  // Sends an end of stream (the connection stays open for reading).
  void ShutdownWrite() { shutdown(fd_, SHUT_WR); }

  bool closed() const { return closed_; }
  bool reset() const { return reset_; }

 private:
  const int fd_;
  bool connected_ = false;
  bool closed_ = false;
  bool reset_ = false;
};

class TcpProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(echo_.ok());
    auto proxy = TcpProxy::Start("127.0.0.1", echo_.port());
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = std::move(*proxy);
  }

  // A client connected through the proxy that has seen one echo.
  std::unique_ptr<Client> Connected(absl::string_view hello = "hello") {
    auto client = std::make_unique<Client>(proxy_->port());
    EXPECT_TRUE(client->connected());
    EXPECT_TRUE(client->Send(hello));
    EXPECT_EQ(client->Receive(hello.size(), kPatience), hello);
    return client;
  }

  EchoServer echo_;
  std::unique_ptr<TcpProxy> proxy_;
};

TEST_F(TcpProxyTest, PassEchoes) {
  EXPECT_EQ(proxy_->address(), absl::StrCat("127.0.0.1:", proxy_->port()));
  auto client = Connected();
  ASSERT_TRUE(client->Send("world"));
  EXPECT_EQ(client->Receive(5, kPatience), "world");
  EXPECT_EQ(proxy_->connections_accepted(), 1);
  auto second = Connected("second");
  EXPECT_EQ(proxy_->connections_accepted(), 2);
}

TEST_F(TcpProxyTest, ForwardsMuchDataInOrder) {
  auto client = Connected();
  std::string data;
  for (int i = 0; data.size() < (1 << 20); ++i) absl::StrAppend(&data, i, ",");
  std::thread sender([&] { EXPECT_TRUE(client->Send(data)); });
  EXPECT_EQ(client->Receive(data.size(), kPatience), data);
  sender.join();
}

TEST_F(TcpProxyTest, HalfCloseIsPassedOn) {
  auto client = Connected();
  // The client's end of stream reaches the echo server, which replies and
  // then closes; both arrive, in order, and the end is orderly (no reset).
  ASSERT_TRUE(client->Send("bye"));
  client->ShutdownWrite();
  EXPECT_EQ(client->Receive(3, kPatience), "bye");
  EXPECT_TRUE(client->AwaitClosed(kPatience));
  EXPECT_FALSE(client->reset());
}

TEST_F(TcpProxyTest, DelayDelaysAndKeepsOrder) {
  auto client = Connected();
  const absl::Duration fixed = absl::Milliseconds(200);
  proxy_->SetDelay(fixed);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(client->Send("slow"));
  ASSERT_EQ(client->Receive(4, kPatience), "slow");
  // Both directions are delayed, so the round trip takes at least 2 * fixed.
  EXPECT_GE(absl::FromChrono(std::chrono::steady_clock::now() - start),
            2 * fixed);

  // With jitter, many small chunks still arrive in order.
  proxy_->SetDelay(absl::Milliseconds(1), absl::Milliseconds(20));
  std::string sent;
  for (int i = 0; i < 100; ++i) {
    const std::string piece = absl::StrCat(i, ";");
    ASSERT_TRUE(client->Send(piece));
    sent += piece;
  }
  EXPECT_EQ(client->Receive(sent.size(), kPatience), sent);

  proxy_->SetDelay(absl::ZeroDuration());
  ASSERT_TRUE(client->Send("fast"));
  EXPECT_EQ(client->Receive(4, kPatience), "fast");
}

TEST_F(TcpProxyTest, BlackholeDiscardsUntilPass) {
  auto client = Connected();
  proxy_->SetMode(Mode::kBlackhole);
  ASSERT_TRUE(client->Send("lost"));
  EXPECT_EQ(client->Receive(1, kQuiet), "");
  EXPECT_FALSE(client->closed());
  // New connections are accepted and kept open too.
  Client late(proxy_->port());
  ASSERT_TRUE(late.connected());
  ASSERT_TRUE(late.Send("late"));
  EXPECT_EQ(late.Receive(1, kQuiet), "");
  EXPECT_EQ(echo_.received().find("lost"), std::string::npos);
  EXPECT_EQ(echo_.received().find("late"), std::string::npos);

  proxy_->SetMode(Mode::kPass);
  ASSERT_TRUE(client->Send("back"));
  EXPECT_EQ(client->Receive(4, kPatience), "back");  // not "lostback"
  ASSERT_TRUE(late.Send("again"));
  EXPECT_EQ(late.Receive(5, kPatience), "again");
  EXPECT_EQ(proxy_->connections_accepted(), 2);
}

TEST_F(TcpProxyTest, BlackholeDiscardsDelayedBytes) {
  auto client = Connected();
  proxy_->SetDelay(absl::Seconds(1));
  ASSERT_TRUE(client->Send("inflight"));
  proxy_->SetMode(Mode::kBlackhole);
  proxy_->SetDelay(absl::ZeroDuration());
  proxy_->SetMode(Mode::kPass);
  ASSERT_TRUE(client->Send("after"));
  EXPECT_EQ(client->Receive(5, kPatience), "after");
}

TEST_F(TcpProxyTest, DropClientToServer) {
  auto client = Connected();
  proxy_->SetMode(Mode::kDropClientToServer);
  ASSERT_TRUE(client->Send("dropped"));
  EXPECT_FALSE(echo_.AwaitReceived("dropped", kQuiet));
  EXPECT_EQ(client->Receive(1, kQuiet), "");

  proxy_->SetMode(Mode::kPass);
  ASSERT_TRUE(client->Send("kept"));
  EXPECT_EQ(client->Receive(4, kPatience), "kept");
}

TEST_F(TcpProxyTest, DropServerToClient) {
  auto client = Connected();
  proxy_->SetMode(Mode::kDropServerToClient);
  ASSERT_TRUE(client->Send("request"));
  EXPECT_TRUE(echo_.AwaitReceived("request", kPatience));  // it went up...
  EXPECT_EQ(client->Receive(1, kQuiet), "");               // ...not back

  proxy_->SetMode(Mode::kPass);
  ASSERT_TRUE(client->Send("reply"));
  EXPECT_EQ(client->Receive(5, kPatience), "reply");
}

TEST_F(TcpProxyTest, ResetConnectionsResetsAndAcceptsNewOnes) {
  auto client = Connected();
  proxy_->ResetConnections();
  EXPECT_TRUE(client->AwaitClosed(kPatience));
  EXPECT_TRUE(client->reset());  // RST, not an orderly end of stream

  auto again = Connected("again");
  EXPECT_EQ(proxy_->connections_accepted(), 2);
}

TEST_F(TcpProxyTest, UnreachableTargetClosesClient) {
  int port = 0;
  const int fd = ListenOnFreePort(&port);
  ASSERT_GE(fd, 0);
  close(fd);  // nothing listens on `port` now
  auto proxy = TcpProxy::Start("127.0.0.1", port);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  Client client((*proxy)->port());
  ASSERT_TRUE(client.connected());
  EXPECT_TRUE(client.AwaitClosed(kPatience));
  EXPECT_EQ((*proxy)->connections_accepted(), 1);
}

TEST_F(TcpProxyTest, DestructorClosesConnections) {
  auto client = Connected();
  proxy_.reset();
  EXPECT_TRUE(client->AwaitClosed(kPatience));
}

}  // namespace
}  // namespace zkr
