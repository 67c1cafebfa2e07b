// Tests of the test harness itself: real standalone servers and ensembles,
// driven and checked with the raw ZooKeeper C client.
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace testing {
namespace {

// ---- a raw C-client handle --------------------------------------------------

// One zhandle_t with a record of the session states its watcher saw.
class RawClient {
 public:
  // Connects to `connect`; null (with a test failure) unless connected
  // within `timeout`.
  static std::unique_ptr<RawClient> Connect(
      const std::string& connect, absl::Duration timeout = absl::Seconds(30)) {
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    auto client = std::unique_ptr<RawClient>(new RawClient());
    client->zh_ = zookeeper_init(connect.c_str(), &RawClient::Watcher, 10000,
                                 nullptr, client.get(), 0);
    if (client->zh_ == nullptr) {
      ADD_FAILURE() << "zookeeper_init " << connect << " failed";
      return nullptr;
    }
    if (!client->WaitForState(ZOO_CONNECTED_STATE, timeout)) {
      ADD_FAILURE() << "no connection to " << connect << " within " << timeout;
      return nullptr;
    }
    return client;
  }

  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  ~RawClient() {
    if (zh_ != nullptr) zookeeper_close(zh_);
  }

  zhandle_t* get() const { return zh_; }

  // Whether the watcher has seen session state `state` by `timeout`.
  bool WaitForState(int state, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto seen = [this, state]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return std::find(states_.begin(), states_.end(), state) != states_.end();
    };
    return mu_.AwaitWithTimeout(absl::Condition(&seen), timeout);
  }

  absl::Status Create(const std::string& path, const std::string& data,
                      int flags) {
    const int rc = zoo_create(zh_, path.c_str(), data.data(),
                              static_cast<int>(data.size()),
                              &ZOO_OPEN_ACL_UNSAFE, flags, nullptr, 0);
    if (rc == ZOK) return absl::OkStatus();
    return absl::UnknownError(absl::StrCat("create ", path, ": ", zerror(rc)));
  }

  // The data of `path`, or the ZooKeeper error text.
  std::string Get(const std::string& path) {
    char buffer[256];
    int len = sizeof(buffer);
    const int rc = zoo_get(zh_, path.c_str(), 0, buffer, &len, nullptr);
    if (rc != ZOK) return zerror(rc);
    return std::string(buffer, std::max(len, 0));
  }

  int Exists(const std::string& path) {
    return zoo_exists(zh_, path.c_str(), 0, nullptr);
  }

  int Delete(const std::string& path) {
    return zoo_delete(zh_, path.c_str(), -1);
  }

 private:
  RawClient() = default;

  static void Watcher(zhandle_t* /*zh*/, int type, int state,
                      const char* /*path*/, void* context) {
    if (type != ZOO_SESSION_EVENT) return;
    auto* self = static_cast<RawClient*>(context);
    absl::MutexLock lock(&self->mu_);
    self->states_.push_back(state);
  }

  zhandle_t* zh_ = nullptr;
  absl::Mutex mu_;
  std::vector<int> states_ ABSL_GUARDED_BY(mu_);
};

// ---- helpers ----------------------------------------------------------------

// The command line of process `pid`, split into arguments.
std::vector<std::string> CommandLine(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/cmdline"), std::ios::binary);
  std::string cmdline((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
  return absl::StrSplit(cmdline, '\0', absl::SkipEmpty());
}

// The parent of process `pid`, or -1.
pid_t ParentOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  // "pid (comm) state ppid ...": comm may contain anything but ends at the
  // last ')'.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(stat).substr(paren + 2), ' ');
  int ppid;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &ppid)) return -1;
  return ppid;
}

// Children of this process with an argument ending in `suffix`, e.g. the
// zoo.cfg of a server.
std::vector<pid_t> ChildrenWithArgument(absl::string_view suffix) {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    int pid;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    if (ParentOf(pid) != getpid()) continue;
    for (const std::string& arg : CommandLine(pid)) {
      if (absl::EndsWith(arg, suffix)) {
        pids.push_back(pid);
        break;
      }
    }
  }
  return pids;
}

// Whether process `pid` exists and is not a zombie.
bool ProcessExists(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

// The processes (anyone's) with the argument `arg`.
std::vector<pid_t> ProcessesWithArgument(const std::string& arg) {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    int pid;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    const std::vector<std::string> args = CommandLine(pid);
    if (std::find(args.begin(), args.end(), arg) != args.end()) {
      pids.push_back(pid);
    }
  }
  return pids;
}

std::string ModeOf(const absl::StatusOr<std::string>& srvr) {
  if (!srvr.ok()) return "(no answer)";
  for (absl::string_view line : absl::StrSplit(*srvr, '\n')) {
    if (absl::ConsumePrefix(&line, "Mode: ")) return std::string(line);
  }
  return "(not serving)";
}

std::string ClientPassword(const clientid_t& id) {
  return std::string(id.passwd, sizeof(id.passwd));
}

// ---- standalone server ------------------------------------------------------

TEST(ZooKeeperServerTest, StartsAndAnswersFourLetterWords) {
  const absl::Time start = absl::Now();
  auto server = ZooKeeperServer::Start();
  const absl::Duration startup = absl::Now() - start;
  ASSERT_TRUE(server.ok()) << server.status();
  std::cout << "standalone server start-up: " << startup << std::endl;

  EXPECT_EQ((*server)->connect_string(),
            absl::StrCat("127.0.0.1:", (*server)->client_port()));
  EXPECT_TRUE(std::filesystem::exists((*server)->directory() + "/zoo.cfg"));

  auto ruok = (*server)->FourLetterWord("ruok");
  ASSERT_TRUE(ruok.ok()) << ruok.status();
  EXPECT_EQ(*ruok, "imok");
  auto srvr = (*server)->FourLetterWord("srvr");
  ASSERT_TRUE(srvr.ok()) << srvr.status();
  EXPECT_EQ(ModeOf(srvr), "standalone") << *srvr;
  auto mntr = (*server)->FourLetterWord("mntr");
  ASSERT_TRUE(mntr.ok()) << mntr.status();
  EXPECT_TRUE(absl::StrContains(*mntr, "zk_server_state\tstandalone")) << *mntr;
}

TEST(ZooKeeperServerTest, StopAndRestartKeepPersistentZnodes) {
  auto server = ZooKeeperServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  {
    auto client = RawClient::Connect((*server)->connect_string());
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->Create("/kept", "v1", 0).ok());
  }
  const absl::Time stopping = absl::Now();
  ASSERT_TRUE((*server)->Stop().ok());
  std::cout << "graceful stop: " << absl::Now() - stopping << std::endl;
  EXPECT_TRUE(absl::IsUnavailable((*server)->FourLetterWord("ruok").status()));

  const absl::Time restarting = absl::Now();
  ASSERT_TRUE((*server)->Restart().ok());
  std::cout << "restart: " << absl::Now() - restarting << std::endl;
  auto client = RawClient::Connect((*server)->connect_string());
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->Get("/kept"), "v1");
  EXPECT_EQ(client->Delete("/kept"), ZOK);
}

TEST(ZooKeeperServerTest, KillAndRestart) {
  auto server = ZooKeeperServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  {
    auto client = RawClient::Connect((*server)->connect_string());
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->Create("/kept", "v2", 0).ok());
  }
  ASSERT_TRUE((*server)->Kill().ok());
  EXPECT_TRUE(absl::IsUnavailable((*server)->FourLetterWord("ruok").status()));
  // Killing a dead server is harmless.
  EXPECT_TRUE((*server)->Kill().ok());

  ASSERT_TRUE((*server)->Restart().ok());
  EXPECT_EQ(*(*server)->FourLetterWord("ruok"), "imok");
  auto client = RawClient::Connect((*server)->connect_string());
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->Get("/kept"), "v2");
}

TEST(ZooKeeperServerTest, PauseSilencesAndResumeRevives) {
  auto server = ZooKeeperServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->client_port();

  ASSERT_TRUE((*server)->Pause().ok());
  auto silent =
      FourLetterWord("127.0.0.1", port, "ruok", absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsUnavailable(silent.status())) << silent.status();

  ASSERT_TRUE((*server)->Resume().ok());
  auto answer = FourLetterWord("127.0.0.1", port, "ruok", absl::Seconds(10));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "imok");
}

TEST(ZooKeeperServerTest, DestructorStopsTheServerAndRemovesItsDirectory) {
  auto server = ZooKeeperServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string directory = (*server)->directory();
  const std::vector<pid_t> pids = ChildrenWithArgument(directory + "/zoo.cfg");
  ASSERT_EQ(pids.size(), 1u);
  ASSERT_TRUE(ProcessExists(pids[0]));
  // Even a paused server goes away.
  ASSERT_TRUE((*server)->Pause().ok());

  server->reset();

  EXPECT_FALSE(ProcessExists(pids[0]));
  EXPECT_FALSE(std::filesystem::exists(directory));
}

// The server must not outlive a test process that dies without running
// destructors: a forked child starts one, reports its directory and is
// killed.
TEST(ZooKeeperServerTest, ServerDiesWithTheProcessThatStartedIt) {
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(report[0]);
    auto server = ZooKeeperServer::Start();
    const std::string directory = server.ok() ? (*server)->directory() : "";
    (void)!write(report[1], directory.data(), directory.size());
    close(report[1]);
    for (;;) pause();  // Until killed.
  }
  close(report[1]);
  std::string directory;
  char buffer[512];
  ssize_t n;
  while ((n = read(report[0], buffer, sizeof(buffer))) > 0) {
    directory.append(buffer, static_cast<size_t>(n));
  }
  close(report[0]);
  // (The child's Start() is bounded by its start timeout, so was this read.)

  const std::vector<pid_t> servers =
      directory.empty() ? std::vector<pid_t>()
                        : ProcessesWithArgument(directory + "/zoo.cfg");
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_FALSE(directory.empty()) << "the child could not start a server";
  ASSERT_EQ(servers.size(), 1u);

  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (ProcessExists(servers[0]) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_FALSE(ProcessExists(servers[0]))
      << "java process " << servers[0] << " outlived its parent";
  std::filesystem::remove_all(directory);  // The child could not.
}

TEST(ZooKeeperServerTest, ExpireSessionExpiresARawClientSession) {
  auto server = ZooKeeperServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto victim = RawClient::Connect((*server)->connect_string());
  ASSERT_NE(victim, nullptr);
  ASSERT_TRUE(victim->Create("/ephemeral", "", ZOO_EPHEMERAL).ok());
  const clientid_t id = *zoo_client_id(victim->get());

  const absl::Time start = absl::Now();
  ASSERT_TRUE(ExpireSession((*server)->connect_string(), id.client_id,
                            ClientPassword(id))
                  .ok());
  EXPECT_TRUE(
      victim->WaitForState(ZOO_EXPIRED_SESSION_STATE, absl::Seconds(30)));
  std::cout << "session expiry seen by its client after " << absl::Now() - start
            << std::endl;

  auto observer = RawClient::Connect((*server)->connect_string());
  ASSERT_NE(observer, nullptr);
  EXPECT_EQ(observer->Exists("/ephemeral"), ZNONODE);
  // Expiring it again: already expired is fine.
  EXPECT_TRUE(ExpireSession((*server)->connect_string(), id.client_id,
                            ClientPassword(id))
                  .ok());
}

TEST(ZooKeeperServerTest, ReportsAJavaThatCannotRun) {
  ServerOptions options;
  options.java = "/nonexistent/java";
  auto server = ZooKeeperServer::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(absl::StrContains(server.status().message(), "/nonexistent/java"))
      << server.status();
}

TEST(ZooKeeperServerTest, ReportsAServerThatDoesNotServe) {
  ServerOptions options;
  // An impossible session-timeout range: the server refuses to start.
  options.min_session_timeout = absl::Seconds(10);
  options.max_session_timeout = absl::Seconds(1);
  options.start_timeout = absl::Seconds(30);
  auto server = ZooKeeperServer::Start(options);
  ASSERT_FALSE(server.ok());
  std::cout << "a failed start reads:\n" << server.status() << std::endl;
  const std::string message(server.status().message());
  EXPECT_TRUE(absl::StrContains(message, "127.0.0.1:")) << message;
  EXPECT_TRUE(absl::StrContains(message, "minSessionTimeout")) << message;
  // The log it points to is kept.
  const size_t see = message.find("see ");
  const size_t colon = message.find(":\n", see);
  ASSERT_NE(colon, std::string::npos) << message;
  const std::filesystem::path log = message.substr(see + 4, colon - see - 4);
  EXPECT_EQ(log.filename(), "server.log");
  EXPECT_TRUE(std::filesystem::exists(log)) << log;
  std::filesystem::remove_all(log.parent_path());
}

// Runs `fn` on a new thread and returns once the kernel has finished that
// thread's exit (its /proc entry is gone), i.e. after any death signal it
// triggers has been sent.
void RunOnExitedThread(const std::function<void()>& fn) {
  pid_t tid = -1;
  std::thread thread([&] {
    tid = gettid();
    fn();
  });
  thread.join();
  const std::string task = absl::StrCat("/proc/self/task/", tid);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (std::filesystem::exists(task) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_FALSE(std::filesystem::exists(task));
}

TEST(ZooKeeperServerTest, OutlivesTheThreadThatStartedIt) {
  absl::StatusOr<std::unique_ptr<ZooKeeperServer>> server;
  RunOnExitedThread([&server] { server = ZooKeeperServer::Start(); });
  ASSERT_TRUE(server.ok()) << server.status();
  auto ruok = (*server)->FourLetterWord("ruok");
  ASSERT_TRUE(ruok.ok()) << ruok.status();
  EXPECT_EQ(*ruok, "imok");

  absl::Status restarted;
  RunOnExitedThread([&] { restarted = (*server)->Restart(); });
  ASSERT_TRUE(restarted.ok()) << restarted;
  ruok = (*server)->FourLetterWord("ruok");
  ASSERT_TRUE(ruok.ok()) << ruok.status();
  EXPECT_EQ(*ruok, "imok");
}

TEST(FourLetterWordTest, ClosedPortIsUnavailable) {
  auto server = ZooKeeperServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->client_port();
  server->reset();
  auto reply = FourLetterWord("127.0.0.1", port, "ruok", absl::Seconds(1));
  EXPECT_TRUE(absl::IsUnavailable(reply.status())) << reply.status();
}

TEST(ExternalConnectStringTest, ReadsTheEnvironment) {
  const char* saved = std::getenv("ZKR_TEST_CONNECT");
  const std::string saved_value = saved != nullptr ? saved : "";
  setenv("ZKR_TEST_CONNECT", "10.0.0.1:2181,10.0.0.2:2181", 1);
  EXPECT_EQ(ExternalConnectString(), "10.0.0.1:2181,10.0.0.2:2181");
  unsetenv("ZKR_TEST_CONNECT");
  EXPECT_EQ(ExternalConnectString(), "");
  if (saved != nullptr) setenv("ZKR_TEST_CONNECT", saved_value.c_str(), 1);
}

// ---- ensemble ---------------------------------------------------------------

std::vector<std::string> Modes(const ZooKeeperEnsemble& ensemble) {
  std::vector<std::string> modes;
  for (int i = 0; i < ensemble.size(); ++i) {
    modes.push_back(ModeOf(ensemble.FourLetterWord(i, "srvr")));
  }
  return modes;
}

int CountOf(const std::vector<std::string>& modes, const std::string& mode) {
  return static_cast<int>(std::count(modes.begin(), modes.end(), mode));
}

TEST(ZooKeeperEnsembleTest, ElectsOneLeaderAndSurvivesItsDeath) {
  const absl::Time start = absl::Now();
  auto ensemble = ZooKeeperEnsemble::Start(3);
  const absl::Duration startup = absl::Now() - start;
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  ZooKeeperEnsemble& zk = **ensemble;
  std::cout << "3-node ensemble start-up: " << startup << std::endl;

  ASSERT_EQ(zk.size(), 3);
  EXPECT_EQ(zk.connect_string(), absl::StrCat(zk.member_connect_string(0), ",",
                                              zk.member_connect_string(1), ",",
                                              zk.member_connect_string(2)));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(zk.MemberByClientPort(zk.client_port(i)), i);
  EXPECT_EQ(zk.MemberByClientPort(1), -1);
  EXPECT_TRUE(absl::IsInvalidArgument(zk.FourLetterWord(3, "ruok").status()));

  std::vector<std::string> modes = Modes(zk);
  ASSERT_EQ(CountOf(modes, "leader"), 1) << absl::StrJoin(modes, ",");
  ASSERT_EQ(CountOf(modes, "follower"), 2) << absl::StrJoin(modes, ",");
  auto leader = zk.Leader();
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(modes[*leader], "leader");
  {
    auto client = RawClient::Connect(zk.connect_string());
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->Create("/survivor", "v3", 0).ok());
  }

  // The leader dies; the other two elect a new one.
  const int old_leader = *leader;
  ASSERT_TRUE(zk.Kill(old_leader).ok());
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(zk.WaitUntilServing().ok());
  std::cout << "re-election after killing the leader: " << absl::Now() - killed
            << std::endl;
  modes = Modes(zk);
  EXPECT_EQ(modes[old_leader], "(no answer)");
  EXPECT_EQ(CountOf(modes, "leader"), 1) << absl::StrJoin(modes, ",");
  EXPECT_EQ(CountOf(modes, "follower"), 1) << absl::StrJoin(modes, ",");
  leader = zk.Leader();
  ASSERT_TRUE(leader.ok()) << leader.status();
  EXPECT_NE(*leader, old_leader);
  {
    const int survivor = (old_leader + 1) % 3;
    auto client = RawClient::Connect(zk.member_connect_string(survivor));
    ASSERT_NE(client, nullptr);
    EXPECT_EQ(client->Get("/survivor"), "v3");
  }

  // It comes back as a follower.
  const absl::Time restarting = absl::Now();
  ASSERT_TRUE(zk.Restart(old_leader).ok());
  std::cout << "member restart: " << absl::Now() - restarting << std::endl;
  ASSERT_TRUE(zk.WaitUntilServing().ok());
  modes = Modes(zk);
  EXPECT_EQ(modes[old_leader], "follower");
  EXPECT_EQ(CountOf(modes, "leader"), 1) << absl::StrJoin(modes, ",");
  {
    auto client = RawClient::Connect(zk.member_connect_string(old_leader));
    ASSERT_NE(client, nullptr);
    EXPECT_EQ(client->Get("/survivor"), "v3");
    EXPECT_EQ(client->Delete("/survivor"), ZOK);
  }

  // A paused follower does not hold up WaitUntilServing.
  const int follower = (*leader + 1) % 3;
  ASSERT_TRUE(zk.Pause(follower).ok());
  EXPECT_TRUE(
      absl::IsUnavailable(FourLetterWord("127.0.0.1", zk.client_port(follower),
                                         "ruok", absl::Milliseconds(300))
                              .status()));
  EXPECT_TRUE(zk.WaitUntilServing(absl::Seconds(10)).ok());
  ASSERT_TRUE(zk.Resume(follower).ok());
  EXPECT_TRUE(zk.WaitUntilServing().ok());
}

TEST(ZooKeeperEnsembleTest, ExpireSessionAndCleanUp) {
  auto ensemble = ZooKeeperEnsemble::Start(3);
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  ZooKeeperEnsemble& zk = **ensemble;

  auto victim = RawClient::Connect(zk.connect_string());
  ASSERT_NE(victim, nullptr);
  ASSERT_TRUE(victim->Create("/ephemeral", "", ZOO_EPHEMERAL).ok());
  const clientid_t id = *zoo_client_id(victim->get());
  ASSERT_TRUE(
      ExpireSession(zk.connect_string(), id.client_id, ClientPassword(id))
          .ok());
  EXPECT_TRUE(
      victim->WaitForState(ZOO_EXPIRED_SESSION_STATE, absl::Seconds(30)));
  {
    auto observer = RawClient::Connect(zk.connect_string());
    ASSERT_NE(observer, nullptr);
    EXPECT_EQ(observer->Exists("/ephemeral"), ZNONODE);
  }

  // Each member runs in <root>/member-<i> on <root>/member-<i>/zoo.cfg.
  const std::vector<pid_t> pids = ChildrenWithArgument("/zoo.cfg");
  ASSERT_EQ(pids.size(), 3u);
  std::vector<std::string> roots;
  for (pid_t pid : pids) {
    const std::filesystem::path config = CommandLine(pid).back();
    roots.push_back(config.parent_path().parent_path().string());
  }
  ASSERT_EQ(std::count(roots.begin(), roots.end(), roots[0]), 3);
  ASSERT_TRUE(std::filesystem::exists(roots[0]));

  const absl::Time stopping = absl::Now();
  ensemble->reset();
  std::cout << "ensemble shutdown: " << absl::Now() - stopping << std::endl;
  for (pid_t pid : pids) EXPECT_FALSE(ProcessExists(pid)) << pid;
  EXPECT_FALSE(std::filesystem::exists(roots[0])) << roots[0];
}

}  // namespace
}  // namespace testing
}  // namespace zkr
