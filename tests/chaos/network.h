// The chaos workers' network: each worker reaches each ensemble member through
// a loopback TCP proxy of its own (zkrecipes/testing/tcp_proxy.h), so that
// the nemesis can cut off, slow down or heal one worker while its process —
// and its clock — keeps running.
// Thread-safety: Set*() may be called from any thread; built and destroyed
// on the test's thread.
#ifndef ZKRECIPES_TESTS_CHAOS_NETWORK_H_
#define ZKRECIPES_TESTS_CHAOS_NETWORK_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "zkrecipes/testing/tcp_proxy.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace chaos {

class WorkerNetwork {
 public:
  // Proxies for `workers` workers to every member of `ensemble`.
  static absl::StatusOr<std::unique_ptr<WorkerNetwork>> Start(
      const testing::ZooKeeperEnsemble& ensemble, int workers);

  // Worker `i`'s connect string: its proxies, one per member.
  std::string ConnectString(int i) const;
  // Every proxy of worker `i` to `mode` (kPass heals).
  void SetMode(int i, testing::TcpProxy::Mode mode);
  // Resets every current connection of worker `i` (the client reconnects).
  void ResetConnections(int i);
  // Delays every chunk of worker `i`'s traffic, each way (zero heals).
  void SetDelay(int i, absl::Duration fixed, absl::Duration jitter);
  // The ensemble member a proxy port leads to, if it is one of ours.
  std::optional<int> MemberOfProxyPort(int port) const;

 private:
  // proxies_[worker][member]
  std::vector<std::vector<std::unique_ptr<testing::TcpProxy>>> proxies_;
};

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_NETWORK_H_
