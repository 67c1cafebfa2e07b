#include "tests/chaos/network.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace zkr {
namespace chaos {

absl::StatusOr<std::unique_ptr<WorkerNetwork>> WorkerNetwork::Start(
    const testing::ZooKeeperEnsemble& ensemble, int workers) {
  auto network = std::unique_ptr<WorkerNetwork>(new WorkerNetwork());
  for (int w = 0; w < workers; ++w) {
    network->proxies_.emplace_back();
    for (int m = 0; m < ensemble.size(); ++m) {
      absl::StatusOr<std::unique_ptr<testing::TcpProxy>> proxy =
          testing::TcpProxy::Start("127.0.0.1", ensemble.client_port(m));
      if (!proxy.ok()) return proxy.status();
      network->proxies_.back().push_back(*std::move(proxy));
    }
  }
  return network;
}

std::string WorkerNetwork::ConnectString(int i) const {
  std::vector<std::string> addresses;
  for (const auto& proxy : proxies_[i]) addresses.push_back(proxy->address());
  return absl::StrJoin(addresses, ",");
}

void WorkerNetwork::SetMode(int i, testing::TcpProxy::Mode mode) {
  for (const auto& proxy : proxies_[i]) proxy->SetMode(mode);
}

void WorkerNetwork::ResetConnections(int i) {
  for (const auto& proxy : proxies_[i]) proxy->ResetConnections();
}

void WorkerNetwork::SetDelay(int i, absl::Duration fixed, absl::Duration jitter) {
  for (const auto& proxy : proxies_[i]) proxy->SetDelay(fixed, jitter);
}

std::optional<int> WorkerNetwork::MemberOfProxyPort(int port) const {
  for (const auto& worker : proxies_) {
    for (size_t m = 0; m < worker.size(); ++m) {
      if (worker[m]->port() == port) return static_cast<int>(m);
    }
  }
  return std::nullopt;
}

}  // namespace chaos
}  // namespace zkr
