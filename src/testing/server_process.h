// Internal plumbing for the test servers (include/zkrecipes/testing/
// zookeeper_server.h): one child process with its output in a log file,
// free loopback ports, temporary directories, and the pieces of a ZooKeeper
// server's command line and configuration that standalone servers and
// ensemble members share. ServerProcess also runs the test-only children:
// the chaos workers and the zkr binary of the command-line tests.
#ifndef ZKRECIPES_SRC_TESTING_SERVER_PROCESS_H_
#define ZKRECIPES_SRC_TESTING_SERVER_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace testing {

// Where a ServerProcess's child writes, and how it is grouped.
// ServerProcess(argv, log_file) sets only stdout_file, to log_file.
struct ServerProcessOptions {
  // The child's stdout is appended to this file (created if missing).
  std::string stdout_file;
  // The child's stderr is appended to this file; "" means stdout_file.
  std::string stderr_file;
  // Puts the child in a new process group whose id is its pid, so that
  // KillGroup() also reaches whatever the child starts.
  bool own_process_group = false;
};

// One child process (e.g. a java server), started from a fixed argv with
// stdin from /dev/null and stdout/stderr appended to a log file (or to two
// files, see ServerProcessOptions). The child gets SIGKILL when this process
// dies (PR_SET_PDEATHSIG), inherits no file descriptor but 0, 1 and 2, and
// starts with no signal blocked and every signal at its default disposition.
//
// The destructor kills a running child (with its process group, if it has
// one of its own) and reaps it. Not thread-safe: use from one thread at a
// time (any thread: children are forked by one process-lifetime thread,
// because the kernel sends the death signal when the *thread* that forked a
// child exits, not when its process does).
class ServerProcess {
 public:
  // `argv[0]` is the program: a path, or a name looked up in $PATH.
  ServerProcess(std::vector<std::string> argv, std::string log_file);
  ServerProcess(std::vector<std::string> argv, ServerProcessOptions options);

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
  // SIGKILLs the child's process group — also what the child started, even
  // after the child itself has been reaped — then reaps the child and every
  // member of the group that is a child of this process (e.g. an orphan
  // adopted because this process is a child subreaper). Idempotent.
  // REQUIRES: options.own_process_group; otherwise the same as Kill().
  absl::Status KillGroup();
  // SIGSTOP / SIGCONT. FailedPrecondition if not running.
  absl::Status Pause();
  absl::Status Resume();
  // Sends `signal` to the child only (not its group). FailedPrecondition if
  // it is not running.
  absl::Status Signal(int signal);

  // Whether the child was started and has not been seen to exit. Reaps a
  // child that has exited by itself (see exit_description()).
  bool Running();
  bool paused() const { return paused_; }
  pid_t pid() const { return pid_; }
  const std::string& log_file() const { return options_.stdout_file; }
  // "exited with status 1", "killed by signal 9", or "" if it has not
  // exited since the last Start().
  const std::string& exit_description() const { return exit_description_; }
  // The exit status, or 128 + N if signal N killed it (as a shell reports
  // it), -1 if it was reaped elsewhere; nullopt if it has not exited since
  // the last Start().
  std::optional<int> exit_code() const { return exit_code_; }

 private:
  absl::Status SignalOrFail(int signal, absl::string_view what);
  // Records the end of the child; `wait_status` is from waitpid, or nullopt
  // if the child was reaped elsewhere.
  void Reaped(std::optional<int> wait_status);

  const std::vector<std::string> argv_;
  const ServerProcessOptions options_;
  pid_t pid_ = -1;
  // The child's process group if it has one of its own, kept after the child
  // is reaped: its orphans may live on in it.
  pid_t group_ = -1;
  bool paused_ = false;
  std::string exit_description_;
  std::optional<int> exit_code_;
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
