// ZooKeeperEnsemble: QuorumPeerMain members on 127.0.0.1, each in its own
// directory under one temporary root.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "src/macros.h"
#include "src/testing/server_process.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace testing {
namespace {

constexpr char kQuorumMain[] =
    "org.apache.zookeeper.server.quorum.QuorumPeerMain";

// One ensemble member. Its server id (myid) is its index + 1.
struct Member {
  std::string directory;
  int client_port = -1;
  int quorum_port = -1;
  int election_port = -1;
  std::unique_ptr<ServerProcess> process;
  // Stopped or killed on purpose: not expected to serve.
  bool stopped = false;

  std::string config_file() const { return directory + "/zoo.cfg"; }
  std::string data_dir() const { return directory + "/data"; }
};

}  // namespace

class ZooKeeperEnsemble::Impl {
 public:
  Impl(ServerOptions options, std::string root)
      : options_(std::move(options)), root_(std::move(root)) {}

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Stops the members and removes the directory, unless a failed start has
  // to keep it: a later test process removes it (see MakeOwnedTempDir).
  ~Impl() {
    StopAll();
    if (!keep_directory_) RemoveDirRecursively(root_).IgnoreError();
  }

  // Creates `size` members: ports, directories, myid and zoo.cfg files.
  absl::Status Prepare(int size) {
    for (int i = 0; i < size; ++i) {
      Member member;
      member.directory = absl::StrCat(root_, "/member-", i);
      ZKR_ASSIGN_OR_RETURN(member.client_port, PickFreePort());
      ZKR_ASSIGN_OR_RETURN(member.quorum_port, PickFreePort());
      ZKR_ASSIGN_OR_RETURN(member.election_port, PickFreePort());
      members_.push_back(std::move(member));
    }
    for (int i = 0; i < size; ++i) {
      Member& member = members_[i];
      ZKR_RETURN_IF_ERROR(MakeDirectory(member.data_dir()));
      ZKR_RETURN_IF_ERROR(
          WriteFile(member.data_dir() + "/myid", absl::StrCat(i + 1, "\n")));
      ZKR_RETURN_IF_ERROR(WriteFile(member.config_file(), Config(member)));
      member.process = std::make_unique<ServerProcess>(
          JavaCommand(options_, kQuorumMain, member.config_file()), LogFile(i));
    }
    return absl::OkStatus();
  }

  // Starts every member, then waits until the ensemble serves. If it does
  // not, keeps the directory with the logs the error points to.
  absl::Status LaunchAll() {
    for (Member& member : members_) {
      ZKR_RETURN_IF_ERROR(member.process->Start());
    }
    absl::Status serving =
        WaitUntilServing(absl::Now() + options_.start_timeout);
    if (!serving.ok()) keep_directory_ = true;
    return serving;
  }

  int size() const { return static_cast<int>(members_.size()); }

  absl::Status CheckIndex(int i) const {
    if (i >= 0 && i < size()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "no member ", i, " in an ensemble of ", size(), " members"));
  }

  // REQUIRES: 0 <= i < size(); aborts otherwise.
  const Member& member(int i) const {
    if (!CheckIndex(i).ok()) {
      std::fprintf(stderr, "zkr::testing::ZooKeeperEnsemble: %s\n",
                   CheckIndex(i).ToString().c_str());
      std::abort();
    }
    return members_[i];
  }

  std::string connect_string() const {
    std::vector<std::string> hosts;
    for (const Member& m : members_) {
      hosts.push_back(absl::StrCat("127.0.0.1:", m.client_port));
    }
    return absl::StrJoin(hosts, ",");
  }

  absl::Status Stop(int i) {
    ZKR_RETURN_IF_ERROR(CheckIndex(i));
    members_[i].stopped = true;
    return members_[i].process->Stop();
  }

  absl::Status Kill(int i) {
    ZKR_RETURN_IF_ERROR(CheckIndex(i));
    members_[i].stopped = true;
    return members_[i].process->Kill();
  }

  absl::Status Restart(int i) {
    ZKR_RETURN_IF_ERROR(CheckIndex(i));
    Member& m = members_[i];
    ZKR_RETURN_IF_ERROR(m.process->Stop());
    m.stopped = false;
    ZKR_RETURN_IF_ERROR(m.process->Start());
    absl::Status serving = testing::WaitUntilServing(
        *m.process, m.client_port, absl::Now() + options_.start_timeout);
    if (serving.ok()) return serving;
    keep_directory_ = true;
    return Annotate(serving, i);
  }

  absl::Status Pause(int i) {
    ZKR_RETURN_IF_ERROR(CheckIndex(i));
    return members_[i].process->Pause();
  }

  absl::Status Resume(int i) {
    ZKR_RETURN_IF_ERROR(CheckIndex(i));
    return members_[i].process->Resume();
  }

  absl::StatusOr<int> Leader() const {
    for (int i = 0; i < size(); ++i) {
      const Member& m = members_[i];
      if (m.stopped || m.process->paused()) continue;
      absl::StatusOr<std::string> mode =
          QueryMode(m.client_port, absl::Seconds(2));
      if (mode.ok() && *mode == "leader") return i;
    }
    return absl::NotFoundError(
        absl::StrCat("no member of ", connect_string(), " is leading"));
  }

  // Waits until every member that should run (not stopped, not paused)
  // serves, and exactly one of them leads: right after a leader dies, its
  // followers still answer "follower" for a moment.
  absl::Status WaitUntilServing(absl::Time deadline) {
    const absl::Time start = absl::Now();
    for (;;) {
      ZKR_RETURN_IF_ERROR(CheckNoneExited());
      std::vector<std::string> modes = Modes();
      if (AllServeWithOneLeader(modes)) return absl::OkStatus();
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "zookeeper ensemble ", connect_string(), " did not serve within ",
            DurationText(absl::Now() - start),
            "; modes: ", absl::StrJoin(modes, ", "), LogTails(modes)));
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

 private:
  std::string Config(const Member& member) const {
    std::string config =
        CommonConfig(options_, member.data_dir(), member.client_port);
    absl::StrAppend(&config,
                    "initLimit=50\n"
                    "syncLimit=25\n"
                    "reconfigEnabled=false\n"
                    "standaloneEnabled=false\n");
    for (int i = 0; i < size(); ++i) {
      absl::StrAppend(&config, "server.", i + 1,
                      "=127.0.0.1:", members_[i].quorum_port, ":",
                      members_[i].election_port, "\n");
    }
    return config;
  }

  std::string LogFile(int i) const {
    if (options_.log_file.empty()) return members_[i].directory + "/server.log";
    return absl::StrCat(options_.log_file, ".", i);
  }

  // Stops all members at once: SIGTERM to all, then the waits.
  void StopAll() {
    for (Member& m : members_) {
      if (m.process != nullptr) m.process->Terminate();
    }
    for (Member& m : members_) {
      if (m.process != nullptr) m.process->Stop().IgnoreError();
    }
  }

  // Error if a member that should run has exited by itself.
  absl::Status CheckNoneExited() {
    for (int i = 0; i < size(); ++i) {
      Member& m = members_[i];
      if (m.stopped || m.process->Running()) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          "member ", i, " of zookeeper ensemble ", connect_string(),
          " (client port ", m.client_port, ") ", m.process->exit_description(),
          "; see ", m.process->log_file(), ":\n",
          LogTail(m.process->log_file())));
    }
    return absl::OkStatus();
  }

  // Each member's mode: "leader", "follower", "observer", "not serving",
  // "no answer", "stopped" or "paused".
  std::vector<std::string> Modes() const {
    std::vector<std::string> modes;
    for (const Member& m : members_) {
      if (m.stopped) {
        modes.push_back("stopped");
      } else if (m.process->paused()) {
        modes.push_back("paused");
      } else {
        absl::StatusOr<std::string> mode =
            QueryMode(m.client_port, absl::Seconds(1));
        if (!mode.ok()) {
          modes.push_back("no answer");
        } else {
          modes.push_back(mode->empty() ? "not serving" : *mode);
        }
      }
    }
    return modes;
  }

  static bool AllServeWithOneLeader(const std::vector<std::string>& modes) {
    int leaders = 0;
    for (const std::string& mode : modes) {
      if (mode == "stopped" || mode == "paused") continue;
      if (mode == "leader") {
        ++leaders;
      } else if (mode != "follower" && mode != "observer") {
        return false;
      }
    }
    return leaders == 1;
  }

  // The end of the log of each member that should serve but does not.
  std::string LogTails(const std::vector<std::string>& modes) const {
    std::string tails;
    for (int i = 0; i < size(); ++i) {
      const std::string& mode = modes[i];
      if (mode == "leader" || mode == "follower" || mode == "stopped" ||
          mode == "paused") {
        continue;
      }
      absl::StrAppend(&tails, "\n--- member ", i, ": ",
                      members_[i].process->log_file(), ":\n",
                      LogTail(members_[i].process->log_file(), 10));
    }
    return tails;
  }

  absl::Status Annotate(const absl::Status& status, int i) const {
    return absl::Status(status.code(),
                        absl::StrCat("member ", i, " of zookeeper ensemble ",
                                     connect_string(), ": ", status.message()));
  }

  const ServerOptions options_;
  const std::string root_;
  std::vector<Member> members_;
  bool keep_directory_ = false;
};

absl::StatusOr<std::unique_ptr<ZooKeeperEnsemble>> ZooKeeperEnsemble::Start(
    int size, ServerOptions options) {
  if (size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ensemble size ", size, " is not positive"));
  }
  ZKR_ASSIGN_OR_RETURN(std::string root, MakeOwnedTempDir("ensemble"));
  // From here on, the Impl owns (and finally removes) the directory.
  auto impl = std::make_unique<Impl>(std::move(options), std::move(root));
  ZKR_RETURN_IF_ERROR(impl->Prepare(size));
  ZKR_RETURN_IF_ERROR(impl->LaunchAll());
  return std::unique_ptr<ZooKeeperEnsemble>(
      new ZooKeeperEnsemble(std::move(impl)));
}

ZooKeeperEnsemble::ZooKeeperEnsemble(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

ZooKeeperEnsemble::~ZooKeeperEnsemble() = default;

int ZooKeeperEnsemble::size() const { return impl_->size(); }

std::string ZooKeeperEnsemble::connect_string() const {
  return impl_->connect_string();
}

std::string ZooKeeperEnsemble::member_connect_string(int i) const {
  return absl::StrCat("127.0.0.1:", client_port(i));
}

int ZooKeeperEnsemble::client_port(int i) const {
  return impl_->member(i).client_port;
}

int ZooKeeperEnsemble::MemberByClientPort(int port) const {
  for (int i = 0; i < size(); ++i) {
    if (client_port(i) == port) return i;
  }
  return -1;
}

absl::StatusOr<int> ZooKeeperEnsemble::Leader() const {
  return impl_->Leader();
}

absl::StatusOr<std::string> ZooKeeperEnsemble::FourLetterWord(
    int i, absl::string_view command) const {
  ZKR_RETURN_IF_ERROR(impl_->CheckIndex(i));
  return testing::FourLetterWord("127.0.0.1", client_port(i), command);
}

absl::Status ZooKeeperEnsemble::Stop(int i) { return impl_->Stop(i); }

absl::Status ZooKeeperEnsemble::Kill(int i) { return impl_->Kill(i); }

absl::Status ZooKeeperEnsemble::Restart(int i) { return impl_->Restart(i); }

absl::Status ZooKeeperEnsemble::Pause(int i) { return impl_->Pause(i); }

absl::Status ZooKeeperEnsemble::Resume(int i) { return impl_->Resume(i); }

absl::Status ZooKeeperEnsemble::WaitUntilServing(absl::Duration timeout) {
  return impl_->WaitUntilServing(absl::Now() + timeout);
}

}  // namespace testing
}  // namespace zkr
