// What every example starts with: the ZooKeeper named on its command line
// (argv[1]), else an embedded local server that lives as long as `server`.
#ifndef ZKRECIPES_TOOLS_EXAMPLES_EXAMPLE_SERVER_H_
#define ZKRECIPES_TOOLS_EXAMPLES_EXAMPLE_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "zkrecipes/testing/zookeeper_server.h"

// The connect string to use; starts a server into `server` if none is named.
inline absl::StatusOr<std::string> ConnectOrStartServer(
    int argc, char** argv, std::unique_ptr<zkr::testing::ZooKeeperServer>* server) {
  if (argc > 1 && argv[1][0] != '\0') return std::string(argv[1]);
  absl::StatusOr<std::unique_ptr<zkr::testing::ZooKeeperServer>> started =
      zkr::testing::ZooKeeperServer::Start();
  if (!started.ok()) return started.status();
  *server = std::move(*started);
  return (*server)->connect_string();
}

#endif  // ZKRECIPES_TOOLS_EXAMPLES_EXAMPLE_SERVER_H_
