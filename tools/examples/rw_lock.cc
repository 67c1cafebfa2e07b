// Example: a read/write-locked critical section with fencing-token checks.
//
// Several "workers" (each its own session, as separate processes would be)
// update one shared record under the write lock and read it under the read
// lock. The record remembers the highest fencing token it has seen and
// refuses writes with a lower one: what keeps a paused former holder from
// doing damage.
//
//   rw_lock_example [ZK_CONNECT]    (default: starts an embedded server)
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "zkrecipes/zkrecipes.h"

#include "example_server.h"

// The protected resource: accepts a write only with a current token.
class FencedRecord {
 public:
  bool Write(int64_t token, int value) {
    absl::MutexLock lock(&mu_);
    if (token < highest_token_) return false;  // a deposed holder
    highest_token_ = token;
    value_ = value;
    return true;
  }
  int Read() {
    absl::MutexLock lock(&mu_);
    return value_;
  }

 private:
  absl::Mutex mu_;
  int64_t highest_token_ = 0;
  int value_ = 0;
};

int main(int argc, char** argv) {
  std::unique_ptr<zkr::testing::ZooKeeperServer> server;  // unless one is named
  absl::StatusOr<std::string> connected = ConnectOrStartServer(argc, argv, &server);
  if (!connected.ok()) return std::fprintf(stderr, "%s\n", connected.status().ToString().c_str()), 1;
  const std::string connect = *connected;
  FencedRecord record;
  std::vector<std::thread> workers;
  int failures = 0;
  absl::Mutex failures_mu;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      zkr::SessionOptions options;
      options.connect = connect;
      auto session = zkr::Session::Connect(options);
      auto lock = session.ok() ? zkr::SharedLock::Create(**session, "/examples/record")
                               : absl::StatusOr<std::unique_ptr<zkr::SharedLock>>(session.status());
      for (int i = 0; lock.ok() && i < 5; ++i) {
        if (i % 2 == 0) {
          auto guard = (*lock)->AcquireWrite(absl::Seconds(30));
          if (!guard.ok() || !record.Write(guard->fencing_token(), record.Read() + 1)) {
            absl::MutexLock l(&failures_mu);
            ++failures;
          }
        } else {
          auto guard = (*lock)->AcquireRead(absl::Seconds(30));
          if (guard.ok()) std::printf("worker %d reads %d\n", w, record.Read());
        }
      }
      if (!lock.ok()) {
        absl::MutexLock l(&failures_mu);
        ++failures;
      }
    });
  }
  for (auto& worker : workers) worker.join();
  std::printf("final value %d (expected 12), failures %d\n", record.Read(), failures);
  return record.Read() == 12 && failures == 0 ? 0 : 1;
}
