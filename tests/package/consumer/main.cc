// The consumer test's program: takes a lock on a real (embedded) server
// through the installed zkrecipes and checks what it got.
#include <cstdio>

#include "zkrecipes/testing/zookeeper_server.h"
#include "zkrecipes/zkrecipes.h"

int main() {
  auto server = zkr::testing::ZooKeeperServer::Start();
  if (!server.ok()) return std::fprintf(stderr, "%s\n", server.status().ToString().c_str()), 1;
  zkr::SessionOptions options;
  options.connect = (*server)->connect_string();
  auto session = zkr::Session::Connect(options);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
  auto lock = zkr::ExclusiveLock::Create(**session, "/consumer/lock");
  if (!lock.ok()) return 1;
  auto guard = (*lock)->Acquire(absl::Seconds(10));
  if (!guard.ok() || guard->fencing_token() <= 0) return 1;
  std::printf("consumer: lock held with fencing token %lld\n",
              static_cast<long long>(guard->fencing_token()));
  return guard->Release().ok() ? 0 : 1;
}
