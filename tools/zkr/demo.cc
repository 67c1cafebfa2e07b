#include "tools/zkr/demo.h"

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace cli {
namespace {

volatile std::sig_atomic_t interrupted = 0;
void OnSignal(int) { interrupted = 1; }

// Prints one timeline line: "+  12.3ms  who  what".
class Timeline {
 public:
  void Say(absl::string_view who, absl::string_view what) {
    absl::PrintF("%+9.1fms  %-10s %s\n", absl::ToDoubleMilliseconds(absl::Now() - start_), who,
                 what);
    std::fflush(stdout);
  }

 private:
  absl::Time start_ = absl::Now();
};

int Fail(Timeline& timeline, const absl::Status& status) {
  timeline.Say("demo", absl::StrCat("FAILED: ", status.ToString()));
  return 1;
}

}  // namespace

int RunDemo(const std::string& connect_flag) {
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  Timeline timeline;

  std::unique_ptr<testing::ZooKeeperServer> server;
  std::string connect = connect_flag;
  if (connect.empty()) {
    timeline.Say("demo", "starting an embedded ZooKeeper server (Debian package) ...");
    auto started = testing::ZooKeeperServer::Start();
    if (!started.ok()) return Fail(timeline, started.status());
    server = std::move(*started);
    connect = server->connect_string();
    timeline.Say("server", absl::StrCat("serving on ", connect, " (data in ", server->directory(),
                                        ")"));
  }

  SessionOptions options;
  options.connect = connect;
  options.session_timeout = absl::Seconds(6);
  auto session = Session::Connect(options);
  if (!session.ok()) return Fail(timeline, session.status());
  (*session)->AddStateListener([&timeline](SessionState state, uint64_t generation) {
    timeline.Say("session", absl::StrCat("state ", SessionStateName(state), " (generation ",
                                         generation, ")"));
  });
  timeline.Say("session",
               absl::StrFormat("connected: id 0x%x, timeout %s, lease valid for %s",
                               (*session)->session_id(),
                               absl::FormatDuration((*session)->negotiated_timeout()),
                               absl::FormatDuration((*session)->valid_until() - absl::Now())));

  const std::string root = absl::StrCat("/zkr-demo-", getpid());
  CreateOptions parents;
  parents.make_parents = true;
  for (int i = 0; i < 3 && !interrupted; ++i) {
    auto created = (*session)->Create(absl::StrCat(root, "/jobs/job-"), absl::StrCat("task ", i),
                                      CreateMode::kEphemeralSequential, parents);
    if (!created.ok()) return Fail(timeline, created.status());
    timeline.Say("client", absl::StrCat("created ", created->path, "  (czxid ",
                                        created->stat.czxid, ")"));
  }
  auto children = (*session)->GetChildren(absl::StrCat(root, "/jobs"));
  if (!children.ok()) return Fail(timeline, children.status());
  timeline.Say("client", absl::StrCat("children of ", root, "/jobs: ",
                                      absl::StrJoin(*children, ", ")));
  for (const std::string& child : *children) {
    absl::Status deleted = (*session)->Delete(absl::StrCat(root, "/jobs/", child));
    if (!deleted.ok()) return Fail(timeline, deleted);
    timeline.Say("client", absl::StrCat("deleted ", child));
  }
  absl::Status bad = (*session)->Create("no-leading-slash", "", CreateMode::kPersistent).status();
  timeline.Say("client", absl::StrCat("bad input is refused: ", bad.ToString()));

  (*session)->Close();
  timeline.Say("demo", interrupted ? "interrupted; cleaned up" : "done");
  if (server != nullptr) {
    server.reset();
    timeline.Say("server", "stopped and removed");
  }
  return interrupted ? 130 : 0;
}

}  // namespace cli
}  // namespace zkr
