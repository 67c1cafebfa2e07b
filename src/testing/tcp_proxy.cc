// TcpProxy: one poll() loop forwarding loopback connections, with faults.
#include "zkrecipes/testing/tcp_proxy.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace zkr {
namespace testing {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes read per recv().
constexpr size_t kReadSize = 64 * 1024;
// A direction stops reading while this many bytes wait in its queue.
constexpr size_t kMaxQueued = 4 * 1024 * 1024;

absl::Status ErrnoError(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

void SetNoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Closes `fd` so that its peer sees a reset (RST), not an end of stream.
void CloseAbruptly(int fd) {
  const linger no_linger{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &no_linger, sizeof(no_linger));
  close(fd);
}

// Bytes read at once, to be written to the other end once due.
struct Chunk {
  Clock::time_point due;
  std::string bytes;
  size_t sent = 0;
};

// One direction of a connection: bytes read from `from` wait in `queue`
// until due, then are written to `to`. Neither descriptor is owned.
struct Direction {
  int from = -1;
  int to = -1;
  std::deque<Chunk> queue;
  size_t queued = 0;     // unsent bytes in `queue`
  bool eof = false;      // `from` ended its stream
  bool shut = false;     // the end was passed on: shutdown(to, SHUT_WR)
  bool blocked = false;  // `to` is full: wait for POLLOUT

  bool WantsRead() const { return !eof && queued < kMaxQueued; }
};

// A client connection and its connection to the target; both owned.
struct Connection {
  Connection(int client_fd, int server_fd, bool connecting_now)
      : client(client_fd), server(server_fd), connecting(connecting_now) {
    up.from = down.to = client;
    up.to = down.from = server;
  }
  const int client;
  const int server;
  bool connecting;  // the non-blocking connect to the target is under way
  bool failed = false;
  Direction up;    // client -> server
  Direction down;  // server -> client
};

}  // namespace

class TcpProxy::Impl {
 public:
  struct Settings {
    Mode mode = Mode::kPass;
    absl::Duration fixed = absl::ZeroDuration();
    absl::Duration jitter = absl::ZeroDuration();
    uint64_t resets = 0;  // ResetConnections() calls so far
  };

  Impl(const sockaddr_storage& target, socklen_t target_length)
      : target_(target), target_length_(target_length) {}

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  ~Impl() {
    if (thread_.joinable()) {
      {
        absl::MutexLock lock(&mu_);
        stop_ = true;
      }
      Wake();
      thread_.join();
    }
    if (listen_fd_ >= 0) close(listen_fd_);
    if (wake_fd_ >= 0) close(wake_fd_);
  }

  // Listens on a free port of 127.0.0.1 and starts the loop.
  absl::Status Listen() {
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) return ErrnoError("eventfd");
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) return ErrnoError("socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), length) != 0) {
      return ErrnoError("bind");
    }
    if (listen(listen_fd_, SOMAXCONN) != 0) return ErrnoError("listen");
    if (getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address),
                    &length) != 0) {
      return ErrnoError("getsockname");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Run(); });
    return absl::OkStatus();
  }

  int port() const { return port_; }
  int accepted() const { return accepted_.load(); }

  // Changes the settings and waits until the loop has taken them.
  template <typename Change>
  void Update(Change change) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    change(settings_);
    ++version_;
    Wake();
    mu_.Await(absl::Condition(this, &Impl::AllApplied));
  }

 private:
  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t ignored = write(wake_fd_, &one, sizeof(one));
  }

  // Takes the current settings and performs requested resets. Returns false
  // when the loop must stop.
  bool TakeSettings() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (stop_) return false;
    current_ = settings_;
    if (current_.resets != resets_done_) {
      resets_done_ = current_.resets;
      for (auto& c : connections_) c->failed = true;
      RetireConnections();
    }
    applied_ = version_;
    return true;
  }

  bool DropsUp() const {
    return current_.mode == Mode::kBlackhole ||
           current_.mode == Mode::kDropClientToServer;
  }
  bool DropsDown() const {
    return current_.mode == Mode::kBlackhole ||
           current_.mode == Mode::kDropServerToClient;
  }

  // When the next chunk read now is due.
  Clock::time_point DueTime(Clock::time_point now) {
    Clock::duration delay = absl::ToChronoNanoseconds(current_.fixed);
    const int64_t jitter_ns = absl::ToInt64Nanoseconds(current_.jitter);
    if (jitter_ns > 0) {
      std::uniform_int_distribution<int64_t> jitter(0, jitter_ns - 1);
      delay += std::chrono::nanoseconds(jitter(random_));
    }
    return now + delay;
  }

  // Reads once from d.from: queues the bytes (or discards them if `drops`).
  void Read(Connection& c, Direction& d, bool drops, Clock::time_point now) {
    const ssize_t n = recv(d.from, buffer_.data(), buffer_.size(), 0);
    if (n > 0) {
      if (drops) return;
      Chunk chunk{DueTime(now), std::string(buffer_.data(), n)};
      // Never before an earlier chunk: the delay may have shrunk, or jitter.
      if (!d.queue.empty()) chunk.due = std::max(chunk.due, d.queue.back().due);
      d.queue.push_back(std::move(chunk));
      d.queued += n;
    } else if (n == 0) {
      d.eof = true;
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      c.failed = true;
    }
  }

  // Writes the due chunks of `d` and passes on its end of stream. Returns
  // when the loop must next wake for `d` (max: no timer needed).
  Clock::time_point Flush(Connection& c, Direction& d, bool drops,
                          Clock::time_point now) {
    constexpr Clock::time_point kNever = Clock::time_point::max();
    d.blocked = false;
    if (drops) {  // discard what was queued; hold the end of stream
      d.queue.clear();
      d.queued = 0;
      return kNever;
    }
    if (d.to == c.server && c.connecting) return kNever;
    while (!d.queue.empty()) {
      Chunk& chunk = d.queue.front();
      if (chunk.due > now) return chunk.due;
      const ssize_t n = send(d.to, chunk.bytes.data() + chunk.sent,
                             chunk.bytes.size() - chunk.sent, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          d.blocked = true;
        } else {
          c.failed = true;
        }
        return kNever;
      }
      chunk.sent += n;
      d.queued -= n;
      if (chunk.sent == chunk.bytes.size()) d.queue.pop_front();
    }
    if (d.eof && !d.shut) {
      shutdown(d.to, SHUT_WR);
      d.shut = true;
    }
    return kNever;
  }

  // Closes failed connections abruptly and finished ones (both ends passed
  // on) gracefully.
  void RetireConnections() {
    auto done = [](const std::unique_ptr<Connection>& c) {
      if (c->failed) {
        CloseAbruptly(c->client);
        CloseAbruptly(c->server);
        return true;
      }
      if (c->up.shut && c->down.shut) {
        close(c->client);
        close(c->server);
        return true;
      }
      return false;
    };
    connections_.erase(
        std::remove_if(connections_.begin(), connections_.end(), done),
        connections_.end());
  }

  // Accepts every pending client and starts connecting it to the target.
  void Accept() {
    for (;;) {
      const int client =
          accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (client < 0) {
        if (errno == EINTR) continue;
        return;  // EAGAIN: none left; anything else: try again next wake
      }
      accepted_.fetch_add(1);
      SetNoDelay(client);
      const int server = socket(target_.ss_family,
                                SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (server < 0) {
        CloseAbruptly(client);
        continue;
      }
      SetNoDelay(server);
      const int rc = connect(
          server, reinterpret_cast<const sockaddr*>(&target_), target_length_);
      if (rc != 0 && errno != EINPROGRESS) {
        close(server);
        CloseAbruptly(client);
        continue;
      }
      connections_.push_back(
          std::make_unique<Connection>(client, server, rc != 0));
    }
  }

  void FinishConnect(Connection& c) {
    int error = 0;
    socklen_t length = sizeof(error);
    if (getsockopt(c.server, SOL_SOCKET, SO_ERROR, &error, &length) != 0 ||
        error != 0) {
      c.failed = true;
    } else {
      c.connecting = false;
    }
  }

  void Run() {
    std::vector<pollfd> fds;
    while (TakeSettings()) {
      // Forward what is due, retire connections, and find the next timer.
      Clock::time_point now = Clock::now();
      Clock::time_point next = Clock::time_point::max();
      for (auto& c : connections_) {
        if (c->failed) continue;
        next = std::min(next, Flush(*c, c->up, DropsUp(), now));
        next = std::min(next, Flush(*c, c->down, DropsDown(), now));
      }
      RetireConnections();

      fds.clear();
      fds.push_back({wake_fd_, POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (auto& c : connections_) {
        const short client_events =
            (c->up.WantsRead() ? POLLIN : 0) | (c->down.blocked ? POLLOUT : 0);
        short server_events = POLLOUT;  // while connecting
        if (!c->connecting) {
          server_events = (c->down.WantsRead() ? POLLIN : 0) |
                          (c->up.blocked ? POLLOUT : 0);
        }
        // A descriptor with no events is left out: poll() would still
        // report its hang-up, again and again.
        fds.push_back({client_events != 0 ? c->client : -1, client_events, 0});
        fds.push_back({server_events != 0 ? c->server : -1, server_events, 0});
      }
      int timeout_ms = -1;
      if (next != Clock::time_point::max()) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now());
        timeout_ms = static_cast<int>(std::clamp<int64_t>(
            left.count(), 0, std::numeric_limits<int>::max()));
      }
      if (poll(fds.data(), fds.size(), timeout_ms) < 0) continue;  // EINTR

      if (fds[0].revents != 0) {
        uint64_t count;
        [[maybe_unused]] ssize_t ignored =
            read(wake_fd_, &count, sizeof(count));
      }
      const size_t polled = connections_.size();
      if (fds[1].revents != 0) Accept();
      now = Clock::now();
      for (size_t i = 0; i < polled; ++i) {
        Connection& c = *connections_[i];
        const short client_revents = fds[2 + 2 * i].revents;
        const short server_revents = fds[3 + 2 * i].revents;
        if (c.connecting) {
          if (server_revents != 0) FinishConnect(c);
        } else if ((server_revents & ~POLLOUT) != 0 && c.down.WantsRead()) {
          Read(c, c.down, DropsDown(), now);
        }
        if ((client_revents & ~POLLOUT) != 0 && c.up.WantsRead() && !c.failed) {
          Read(c, c.up, DropsUp(), now);
        }
      }
    }
    for (auto& c : connections_) c->failed = true;
    RetireConnections();
  }

  const sockaddr_storage target_;
  const socklen_t target_length_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  int port_ = 0;
  std::atomic<int> accepted_{0};

  absl::Mutex mu_;
  Settings settings_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;  // Update() calls so far
  uint64_t applied_ ABSL_GUARDED_BY(mu_) = 0;  // ...that the loop has taken
  // For Update(): every change so far has been taken (later ones too).
  bool AllApplied() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return applied_ >= version_; }

  // Used by the loop thread only.
  Settings current_;
  uint64_t resets_done_ = 0;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<char> buffer_ = std::vector<char>(kReadSize);
  std::mt19937_64 random_{std::random_device{}()};
  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(
    std::string target_host, int target_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = absl::StrCat(target_port);
  const int gai =
      getaddrinfo(target_host.c_str(), port.c_str(), &hints, &found);
  if (gai != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot resolve '", target_host, "': ", gai_strerror(gai)));
  }
  sockaddr_storage target{};
  std::memcpy(&target, found->ai_addr, found->ai_addrlen);
  const socklen_t target_length = found->ai_addrlen;
  freeaddrinfo(found);

  auto impl = std::make_unique<Impl>(target, target_length);
  absl::Status status = impl->Listen();
  if (!status.ok()) return status;
  return std::unique_ptr<TcpProxy>(new TcpProxy(std::move(impl)));
}

TcpProxy::TcpProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

TcpProxy::~TcpProxy() = default;

int TcpProxy::port() const { return impl_->port(); }

std::string TcpProxy::address() const {
  return absl::StrCat("127.0.0.1:", impl_->port());
}

void TcpProxy::SetMode(Mode mode) {
  impl_->Update([mode](Impl::Settings& s) { s.mode = mode; });
}

void TcpProxy::SetDelay(absl::Duration fixed, absl::Duration jitter) {
  auto bounded = [](absl::Duration d) {
    return std::clamp(d, absl::ZeroDuration(), absl::Hours(24));
  };
  impl_->Update([&](Impl::Settings& s) {
    s.fixed = bounded(fixed);
    s.jitter = bounded(jitter);
  });
}

void TcpProxy::ResetConnections() {
  impl_->Update([](Impl::Settings& s) { ++s.resets; });
}

int TcpProxy::connections_accepted() const { return impl_->accepted(); }

}  // namespace testing
}  // namespace zkr
