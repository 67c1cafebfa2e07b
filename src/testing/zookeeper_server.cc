// ZooKeeperServer: a standalone ZooKeeperServerMain in a temporary directory.
#include "zkrecipes/testing/zookeeper_server.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "src/macros.h"
#include "src/testing/server_process.h"

namespace zkr {
namespace testing {
namespace {

constexpr char kStandaloneMain[] =
    "org.apache.zookeeper.server.ZooKeeperServerMain";

}  // namespace

class ZooKeeperServer::Impl {
 public:
  Impl(ServerOptions options, std::string directory, int client_port)
      : options_(std::move(options)),
        directory_(std::move(directory)),
        client_port_(client_port),
        process_(JavaCommand(options_, kStandaloneMain, ConfigFile()),
                 options_.log_file.empty()
                     ? absl::StrCat(directory_, "/server.log")
                     : options_.log_file) {}

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Stops the server and removes its directory, unless a failed start has
  // to keep it: a later test process removes it (see MakeOwnedTempDir).
  ~Impl() {
    process_.Stop().IgnoreError();
    if (!keep_directory_) RemoveDirRecursively(directory_).IgnoreError();
  }

  // Writes the configuration and data directory.
  absl::Status Prepare() {
    const std::string data_dir = absl::StrCat(directory_, "/data");
    ZKR_RETURN_IF_ERROR(MakeDirectory(data_dir));
    return WriteFile(ConfigFile(),
                     CommonConfig(options_, data_dir, client_port_));
  }

  // Starts the process and waits until it serves. If it does not, keeps the
  // directory with the log the error points to.
  absl::Status Launch() {
    ZKR_RETURN_IF_ERROR(process_.Start());
    absl::Status serving = WaitUntilServing(
        process_, client_port_, absl::Now() + options_.start_timeout);
    if (!serving.ok()) keep_directory_ = true;
    return serving;
  }

  int client_port() const { return client_port_; }
  const std::string& directory() const { return directory_; }
  ServerProcess& process() { return process_; }

 private:
  std::string ConfigFile() const {
    return absl::StrCat(directory_, "/zoo.cfg");
  }

  const ServerOptions options_;
  const std::string directory_;
  const int client_port_;
  ServerProcess process_;
  bool keep_directory_ = false;
};

absl::StatusOr<std::unique_ptr<ZooKeeperServer>> ZooKeeperServer::Start(
    ServerOptions options) {
  ZKR_ASSIGN_OR_RETURN(const int port, PickFreePort());
  ZKR_ASSIGN_OR_RETURN(std::string directory, MakeOwnedTempDir("zookeeper"));
  // From here on, the Impl owns (and finally removes) the directory.
  auto impl =
      std::make_unique<Impl>(std::move(options), std::move(directory), port);
  ZKR_RETURN_IF_ERROR(impl->Prepare());
  ZKR_RETURN_IF_ERROR(impl->Launch());
  return std::unique_ptr<ZooKeeperServer>(new ZooKeeperServer(std::move(impl)));
}

ZooKeeperServer::ZooKeeperServer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

ZooKeeperServer::~ZooKeeperServer() = default;

std::string ZooKeeperServer::connect_string() const {
  return absl::StrCat("127.0.0.1:", impl_->client_port());
}

int ZooKeeperServer::client_port() const { return impl_->client_port(); }

const std::string& ZooKeeperServer::directory() const {
  return impl_->directory();
}

absl::StatusOr<std::string> ZooKeeperServer::FourLetterWord(
    absl::string_view command) const {
  return testing::FourLetterWord("127.0.0.1", impl_->client_port(), command);
}

absl::Status ZooKeeperServer::Stop() { return impl_->process().Stop(); }

absl::Status ZooKeeperServer::Kill() { return impl_->process().Kill(); }

absl::Status ZooKeeperServer::Restart() {
  ZKR_RETURN_IF_ERROR(impl_->process().Stop());
  return impl_->Launch();
}

absl::Status ZooKeeperServer::Pause() { return impl_->process().Pause(); }

absl::Status ZooKeeperServer::Resume() { return impl_->process().Resume(); }

std::string ExternalConnectString() {
  const char* connect = std::getenv("ZKR_TEST_CONNECT");
  return connect != nullptr ? connect : "";
}

}  // namespace testing
}  // namespace zkr
