// Internal plumbing for the test servers (include/zkrecipes/testing/
// zookeeper_server.h): one child process with its output in a log file,
// free loopback ports, temporary directories, and the pieces of a ZooKeeper
// server's command line and configuration that standalone servers and
// ensemble members share.
#ifndef ZKRECIPES_SRC_TESTING_SERVER_PROCESS_H_
#define ZKRECIPES_SRC_TESTING_SERVER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace testing {

// One child process (e.g. a java server), started from a fixed argv with
// stdin from /dev/null and stdout/stderr appended to a log file. The child
// gets SIGKILL when this process dies (PR_SET_PDEATHSIG), and inherits no
// file descriptor but 0, 1 and 2.
//
// The destructor kills a running child and reaps it. Not thread-safe: use
// from one thread at a time (any thread: children are forked by one
// process-lifetime thread, because the kernel sends the death signal when the
// *thread* that forked a child exits, not when its process does).
class ServerProcess {
 public:
  // `argv[0]` is the program: a path, or a name looked up in $PATH.
  ServerProcess(std::vector<std::string> argv, std::string log_file);

  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess();

  // Starts the child. REQUIRES: not running.
  absl::Status Start();
  // Sends SIGTERM (and SIGCONT, in case it is paused) without waiting, so
  // that several children can stop at once. No-op if it is not running.
  void Terminate();
  // Terminate(); after `grace`, SIGKILL. Always reaps the child. OK if it is
  // not running.
  absl::Status Stop(absl::Duration grace = absl::Seconds(5));
  // SIGKILL, then reaps the child. OK if it is not running.
  absl::Status Kill();
  // SIGSTOP / SIGCONT. FailedPrecondition if not running.
  absl::Status Pause();
  absl::Status Resume();

  // Whether the child was started and has not been seen to exit. Reaps a
  // child that has exited by itself (see exit_description()).
  bool Running();
  bool paused() const { return paused_; }
  pid_t pid() const { return pid_; }
  const std::string& log_file() const { return log_file_; }
  // "exited with status 1", "killed by signal 9", or "" if it has not
  // exited since the last Start().
  const std::string& exit_description() const { return exit_description_; }

 private:
  absl::Status SignalOrFail(int signal, absl::string_view what);
  void Reaped(std::string exit_description);

  const std::vector<std::string> argv_;
  const std::string log_file_;
  pid_t pid_ = -1;
  bool paused_ = false;
  std::string exit_description_;
};

// A TCP port on 127.0.0.1 that nothing listens on now, outside the kernel's
// ephemeral range (so no client socket gets it as its local port while a
// server is down), and never handed out before by this process.
absl::StatusOr<int> PickFreePort();

// Creates a fresh directory `<$TMPDIR or /tmp>/<prefix>XXXXXX`.
absl::StatusOr<std::string> MakeTempDir(absl::string_view prefix);
// Creates a fresh directory `<$TMPDIR or /tmp>/zkr-<kind>-<pid>-XXXXXX`
// owned by this process. The first call in a process also removes such
// directories left behind by processes that no longer exist (a test that
// crashed cannot remove its servers' directories; its servers died with it).
absl::StatusOr<std::string> MakeOwnedTempDir(absl::string_view kind);
// Removes `dir` and everything under it. OK if it does not exist.
absl::Status RemoveDirRecursively(const std::string& dir);
// Creates `path` and its missing parents.
absl::Status MakeDirectory(const std::string& path);
// Creates or overwrites `path` with `contents`.
absl::Status WriteFile(const std::string& path, absl::string_view contents);
// The last `max_lines` lines of the file at `path` (at most a few KiB), or a
// note saying it cannot be read.
std::string LogTail(const std::string& path, int max_lines = 20);

// ---- ZooKeeper specifics shared by standalone servers and ensembles ---------

// zoo.cfg lines common to every server: tick, session-timeout range, data
// directory, client port on 127.0.0.1, no admin server, all four-letter
// words, no fsync, unlimited connections. Each line ends with '\n'.
std::string CommonConfig(const ServerOptions& options,
                         const std::string& data_dir, int client_port);

// The argv that runs `main_class` (e.g.
// "org.apache.zookeeper.server.ZooKeeperServerMain") from Debian's jars on
// `config_file`, with a small, fast-starting JVM.
std::vector<std::string> JavaCommand(const ServerOptions& options,
                                     absl::string_view main_class,
                                     const std::string& config_file);

// The server's mode from a `srvr` reply ("standalone", "leader", "follower",
// "observer"), or "" if the reply says it is not serving requests.
std::string ServingMode(absl::string_view srvr_reply);

// The mode of the server at 127.0.0.1:`port`, or "" if it answers `srvr`
// but does not serve; Unavailable if it does not answer within `timeout`.
absl::StatusOr<std::string> QueryMode(int port, absl::Duration timeout);

// Polls the server at 127.0.0.1:`port`, run by `process`, until it serves
// or `deadline` passes. Fails early if the process exits. Errors name the
// port, the log file and include the end of the log.
absl::Status WaitUntilServing(ServerProcess& process, int port,
                              absl::Time deadline);

// "<n>s" / "<n>ms" for messages.
std::string DurationText(absl::Duration d);

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_SRC_TESTING_SERVER_PROCESS_H_
