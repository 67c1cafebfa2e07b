// A loopback TCP proxy for injecting network faults between a client (e.g. a
// ZooKeeper C client) and a server in tests.
//
// Guarantees: every connection accepted on 127.0.0.1:port() is paired with a
// new connection to the target; bytes are forwarded in order per direction,
// each chunk no earlier than the configured delay after the proxy read it.
// SetMode(), SetDelay() and ResetConnections() take effect before they return:
// bytes the proxy reads afterwards obey the new settings, and reset
// connections are closed. Bytes the proxy already handed to the kernel cannot
// be recalled. A connection reset or failing at either end (or whose target
// connection fails) is reset at the other end, in every mode.
//
// Threading: thread-safe. One internal thread (a poll() loop) does all the
// forwarding; the destructor stops it and closes every socket. No callbacks.
//
// Example:
//   auto proxy = zkr::testing::TcpProxy::Start("127.0.0.1", server_port);
//   if (!proxy.ok()) FAIL() << proxy.status();
//   options.connect = (*proxy)->address();  // "127.0.0.1:PORT"
//   (*proxy)->SetMode(zkr::testing::TcpProxy::Mode::kBlackhole);  // partition
#ifndef ZKRECIPES_TESTING_TCP_PROXY_H_
#define ZKRECIPES_TESTING_TCP_PROXY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace zkr {
namespace testing {

// Forwards TCP connections from a loopback port to a target host:port, with
// faults a test switches on and off at any time. Thread-safe.
class TcpProxy {
 public:
  enum class Mode {
    // Forward everything (after the configured delay).
    kPass,
    // A partition: connections are accepted (and made to the target) and
    // kept open, but no byte and no end-of-stream passes either way; bytes
    // read are discarded, and so are bytes still queued by a delay.
    kBlackhole,
    // Like kBlackhole for one direction only.
    kDropClientToServer,
    kDropServerToClient,
  };

  // Starts a proxy listening on a free port of 127.0.0.1 that forwards to
  // target_host:target_port (resolved now; connected per accepted
  // connection). Starts in kPass mode without delay.
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(
      std::string target_host, int target_port);

  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;
  // Stops the thread and closes every connection abruptly (RST).
  ~TcpProxy();

  // The listening port on 127.0.0.1.
  int port() const;
  // "127.0.0.1:<port>".
  std::string address() const;

  // SetMode: switches the fault mode for current and future connections.
  void SetMode(Mode mode);
  // SetDelay: each chunk of bytes read from then on is forwarded no earlier
  // than `fixed` + uniform[0, `jitter`) after it was read, and never before
  // an earlier chunk of the same direction (order is preserved). Zero
  // durations forward at once; durations are clamped to [0, 24h].
  void SetDelay(absl::Duration fixed,
                absl::Duration jitter = absl::ZeroDuration());
  // ResetConnections: closes every current connection abruptly (SO_LINGER 0,
  // so both ends see a reset), discarding queued bytes. New connections are
  // accepted as usual.
  void ResetConnections();

  // connections_accepted: client connections accepted so far.
  int connections_accepted() const;

 private:
  class Impl;
  explicit TcpProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTING_TCP_PROXY_H_
