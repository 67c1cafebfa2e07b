// Example: a batch job whose workers start and finish together (double
// barrier). Each worker is a thread with its own session here; in production
// each is a process on its own machine.
//
//   batch_barrier_example [ZK_CONNECT]   (default: starts an embedded server)
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "zkrecipes/zkrecipes.h"

#include "example_server.h"

int main(int argc, char** argv) {
  std::unique_ptr<zkr::testing::ZooKeeperServer> server;  // unless one is named
  absl::StatusOr<std::string> connected = ConnectOrStartServer(argc, argv, &server);
  if (!connected.ok()) return std::fprintf(stderr, "%s\n", connected.status().ToString().c_str()), 1;
  const std::string connect = *connected;
  constexpr int kWorkers = 4;
  std::atomic<int> entered{0}, started_early{0}, failures{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      zkr::SessionOptions options;
      options.connect = connect;
      auto session = zkr::Session::Connect(options);
      if (!session.ok()) return (void)++failures;
      auto barrier = zkr::DoubleBarrier::Create(**session, "/examples/batch/round-1",
                                                absl::StrCat("worker-", w), kWorkers);
      if (!barrier.ok()) return (void)++failures;
      ++entered;
      if (!(*barrier)->Enter(absl::Seconds(30)).ok()) return (void)++failures;
      if (entered.load() != kWorkers) ++started_early;  // nobody starts alone
      std::printf("worker %d: working\n", w);
      if (!(*barrier)->Leave(absl::Seconds(30)).ok()) return (void)++failures;
      std::printf("worker %d: done, everyone has finished\n", w);
    });
  }
  for (auto& worker : workers) worker.join();
  return failures == 0 && started_early == 0 ? 0 : 1;
}
