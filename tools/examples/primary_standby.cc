// Example: a primary/standby service. Three replicas campaign, each
// publishing its address (ElectionOptions::data); the leader serves as
// primary and stops the moment its leadership is suspended or lost
// (on_change), as a real primary must. Clients do not campaign: they follow
// the primary's address through a LeaderObserver, which watches only the
// primary's node. The primary hands over gracefully (Yield), then a primary
// "dies" (its session closes), and the clients follow each change.
//
//   primary_standby_example [ZK_CONNECT]   (default: starts an embedded server)
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "zkrecipes/zkrecipes.h"

#include "example_server.h"

namespace {

constexpr char kElection[] = "/examples/service/leader";

// Destroyed bottom-up: the election (no more callbacks), then the session,
// then what the callbacks touch.
struct Replica {
  std::string name;
  std::string address;
  std::unique_ptr<zkr::Session> session;
  std::unique_ptr<zkr::LeaderElection> election;
};

absl::StatusOr<std::unique_ptr<zkr::Session>> Connect(const std::string& connect) {
  zkr::SessionOptions options;
  options.connect = connect;
  return zkr::Session::Connect(options);
}

// Waits until the client's observer reports `name` as primary, having
// taken over; prints where it connects.
bool Follow(zkr::LeaderObserver& client, const std::string& who, const std::string& name) {
  absl::StatusOr<std::optional<zkr::LeaderInfo>> now = client.Current(absl::Seconds(30));
  while (now.ok() && !(now->has_value() && (*now)->id == name && (*now)->taken_over)) {
    now = client.AwaitChange(*now, absl::Seconds(30));
  }
  if (!now.ok()) return false;
  std::printf("%s: primary is %s, connecting to %s (epoch %lld)\n", who.c_str(),
              (*now)->id.c_str(), (*now)->data.c_str(), static_cast<long long>((*now)->epoch));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<zkr::testing::ZooKeeperServer> server;  // unless one is named
  absl::StatusOr<std::string> connected = ConnectOrStartServer(argc, argv, &server);
  if (!connected.ok()) return std::fprintf(stderr, "%s\n", connected.status().ToString().c_str()), 1;
  const std::string connect = *connected;
  // A client of the service: follows the primary without campaigning.
  auto client_session = Connect(connect);
  if (!client_session.ok()) return 1;
  auto client = zkr::LeaderObserver::Create(**client_session, kElection);
  if (!client.ok()) return 1;

  std::vector<std::unique_ptr<Replica>> replicas;
  for (int i = 1; i <= 3; ++i) {
    auto r = std::make_unique<Replica>();
    r->name = absl::StrCat("replica-", i);
    r->address = absl::StrCat("10.0.0.", i, ":5432");
    auto session = Connect(connect);
    if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
    r->session = std::move(*session);
    zkr::ElectionOptions options;
    options.id = r->name;
    options.data = r->address;  // what clients connect to while it leads
    Replica* raw = r.get();
    options.on_change = [raw](zkr::Leadership leadership) {
      // SUSPENDED or NOT_LEADER: stop serving writes now.
      std::printf("%s: %s\n", raw->name.c_str(),
                  leadership == zkr::Leadership::kLeader
                      ? "PRIMARY"
                      : absl::StrCat("standing down (", zkr::LeadershipName(leadership), ")").c_str());
    };
    auto election = zkr::LeaderElection::Create(*r->session, kElection, options);
    if (!election.ok()) return std::fprintf(stderr, "%s\n", election.status().ToString().c_str()), 1;
    r->election = std::move(*election);
    if (!r->election->Join().ok()) return 1;
    // Queue one after the other, so that the order is replica-1, -2, -3.
    auto queued = r->election->Participants();
    for (int t = 0; t < 500 && (!queued.ok() || queued->size() != replicas.size() + 1); ++t) {
      absl::SleepFor(absl::Milliseconds(10));
      queued = r->election->Participants();
    }
    replicas.push_back(std::move(r));
  }
  if (!Follow(**client, "client", "replica-1")) return 1;

  // Maintenance: the primary steps down without leaving (it queues again
  // at the back); the next replica takes over, and the client follows.
  std::printf("replica-1: stepping down for maintenance\n");
  if (!replicas[0]->election->Yield().ok()) return 1;
  if (!Follow(**client, "client", "replica-2")) return 1;

  // A crash: the primary's session ends; the next takes over.
  std::printf("replica-2: process dies\n");
  replicas[1]->election.reset();
  replicas[1]->session->Close();  // its node goes at once; a crash would take a session timeout
  if (!Follow(**client, "client", "replica-3")) return 1;
  std::printf("failover complete: replica-3 is primary\n");

  // Shutting down in order: the primary hands over before it goes.
  if (!replicas[2]->election->LeaveAndHandOver(absl::Seconds(30)).ok()) return 1;
  if (!Follow(**client, "client", "replica-1")) return 1;
  for (auto& r : replicas) r->election.reset();  // leave
  return 0;
}
