// Example: a primary/standby service with leader election and loss handling.
//
// Three replicas campaign; the leader serves as primary and stops the moment
// its leadership is suspended or lost (on_change), as a real primary must.
// The primary's process "dies" (its session closes) and a standby takes over.
//
//   primary_standby_example [ZK_CONNECT]   (default: starts an embedded server)
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "zkrecipes/testing/zookeeper_server.h"
#include "zkrecipes/zkrecipes.h"

// Destroyed bottom-up: the election (no more callbacks), then the session,
// then what the callbacks touch.
struct Replica {
  std::string name;
  absl::Notification became_primary;
  std::unique_ptr<zkr::Session> session;
  std::unique_ptr<zkr::LeaderElection> election;
};

int main(int argc, char** argv) {
  std::unique_ptr<zkr::testing::ZooKeeperServer> server;
  std::string connect = argc > 1 ? argv[1] : "";
  if (connect.empty()) {
    auto started = zkr::testing::ZooKeeperServer::Start();
    if (!started.ok()) return std::fprintf(stderr, "%s\n", started.status().ToString().c_str()), 1;
    server = std::move(*started);
    connect = server->connect_string();
  }
  std::vector<std::unique_ptr<Replica>> replicas;
  for (const char* name : {"replica-1", "replica-2", "replica-3"}) {
    auto r = std::make_unique<Replica>();
    r->name = name;
    zkr::SessionOptions options;
    options.connect = connect;
    auto session = zkr::Session::Connect(options);
    if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
    r->session = std::move(*session);
    zkr::ElectionOptions election_options;
    election_options.id = name;
    Replica* raw = r.get();
    election_options.on_change = [raw](zkr::Leadership leadership) {
      if (leadership == zkr::Leadership::kLeader) {
        std::printf("%s: PRIMARY (epoch %lld)\n", raw->name.c_str(),
                    static_cast<long long>(raw->election->epoch()));
        if (!raw->became_primary.HasBeenNotified()) raw->became_primary.Notify();
      } else {
        // SUSPENDED or NOT_LEADER: stop serving writes now.
        std::printf("%s: standing down (%s)\n", raw->name.c_str(),
                    std::string(zkr::LeadershipName(leadership)).c_str());
      }
    };
    auto election = zkr::LeaderElection::Create(*r->session, "/examples/service/leader",
                                                election_options);
    if (!election.ok()) return std::fprintf(stderr, "%s\n", election.status().ToString().c_str()), 1;
    r->election = std::move(*election);
    if (!r->election->Join().ok()) return 1;
    replicas.push_back(std::move(r));
  }
  // The queue decides: the first is primary, the second its successor.
  // (Join() returns at once; wait until all three candidates are queued.)
  auto queue = replicas[0]->election->Participants();
  for (int i = 0; i < 500 && (!queue.ok() || queue->size() != 3); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    queue = replicas[0]->election->Participants();
  }
  if (!queue.ok() || queue->size() != 3) return 1;
  Replica* primary = nullptr;
  Replica* successor = nullptr;
  for (auto& r : replicas) {
    if (r->name == (*queue)[0]) primary = r.get();
    if (r->name == (*queue)[1]) successor = r.get();
  }
  if (!primary->became_primary.WaitForNotificationWithTimeout(absl::Seconds(10))) return 1;
  std::printf("%s: process dies\n", primary->name.c_str());
  primary->election.reset();
  primary->session->Close();  // its node goes at once; a crash would take a session timeout
  if (!successor->became_primary.WaitForNotificationWithTimeout(absl::Seconds(30))) return 1;
  std::printf("failover complete: %s is primary\n", successor->name.c_str());
  for (auto& r : replicas) r->election.reset();  // leave
  return 0;
}
