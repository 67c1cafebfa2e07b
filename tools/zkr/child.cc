#include "tools/zkr/child.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/zkr/common.h"

extern char** environ;

namespace zkr {
namespace cli {
namespace {

// What the forked processes need, prepared before fork: between fork and
// exec (and in the guardian, which never execs) only async-signal-safe calls.
struct Launch {
  char* const* argv;
  char* const* envp;
  const int* keep;     // the descriptors CMD inherits from 3 on, ascending
  size_t keep_count;
  pid_t zkr;           // the guardian's parent
  int death_signal;    // the guardian gets it when zkr's main thread ends
  int exec_error_fd;   // CMD writes exec's errno here; closed by a good exec
  int report_fd;       // the guardian writes CMD's wait status here
  int deadline_fd;     // the guardian reads KillBy's deadlines here
  // Socket activation: the value of LISTEN_PID in envp, to be CMD's own pid
  // (it named zkr's); nullptr if it names no pid of ours.
  char* listen_pid;
  bool default_stop_signals;  // SIGINT, SIGTERM, SIGUSR1/2 to SIG_DFL
};

// Whether SIGPIPE was ignored when zkr started (IgnoreBrokenPipes).
bool broken_pipes_ignored_at_start = false;

void SetDefault(int signal) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
}

// Writes `pid` in decimal into `out` (room for 20 digits and the NUL);
// async-signal-safe.
void WritePid(pid_t pid, char* out) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + pid % 10);
    pid /= 10;
  } while (pid > 0);
  while (n > 0) *out++ = digits[--n];
  *out = '\0';
}

// The guardian's handler of its death signal: CMD's whole group (named after
// the guardian, which has left it), then the guardian.
void KillCommandGroup(int) {
  kill(-getpid(), SIGKILL);
  _exit(1);
}

// Closes every descriptor from 3 on but the `count` in `keep` (ascending,
// each at least 3).
void CloseAllBut(const int* keep, size_t count) {
  unsigned next = 3;  // the first descriptor not yet decided
  for (size_t i = 0; i < count; ++i) {
    const unsigned kept = static_cast<unsigned>(keep[i]);
    if (kept > next) close_range(next, kept - 1, 0);
    next = kept + 1;
  }
  close_range(next, ~0U, 0);
}

// The caller's descriptors (KeepInheritedDescriptors), ascending.
std::vector<int>& Inherited() {
  static auto* inherited = new std::vector<int>;
  return *inherited;
}

[[noreturn]] void ExecCommand(const Launch& launch) {
  close(launch.report_fd);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // with the guardian
  sigset_t none;
  sigemptyset(&none);
  // The dispositions zkr was given, not zkr's own (sigaction is
  // async-signal-safe); then the default mask.
  if (!broken_pipes_ignored_at_start) SetDefault(SIGPIPE);
  if (launch.default_stop_signals) {
    for (int signal : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2}) SetDefault(signal);
  }
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (launch.listen_pid != nullptr) WritePid(getpid(), launch.listen_pid);
  execvpe(launch.argv[0], launch.argv, launch.envp);
  const int error = errno;
  (void)!write(launch.exec_error_fd, &error, sizeof(error));
  _exit(kExitCommandNotFound);
}

// Moves the guardian out of its own group (CMD's group, named after the
// guardian) into a group of its own: a child makes a group, the guardian joins
// it, the child dies. Then kill(-group, 0) tells whether any process is left
// in CMD's group, and the group's id cannot be reused while the guardian (or
// its unreaped zombie) exists. False if it could not.
bool LeaveCommandGroup() {
  const pid_t guardian = getpid();
  const pid_t anchor = fork();
  if (anchor < 0) return false;
  if (anchor == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != guardian) _exit(0);
    for (;;) pause();  // until the guardian has joined its group and kills it
  }
  const bool left = setpgid(anchor, anchor) == 0 && setpgid(0, anchor) == 0;
  kill(anchor, SIGKILL);
  while (waitpid(anchor, nullptr, 0) < 0 && errno == EINTR) {
  }
  return left;
}

[[noreturn]] void RunGuardian(const Launch& launch) {
  setpgid(0, 0);
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = KillCommandGroup;
  sigemptyset(&action.sa_mask);
  sigaction(launch.death_signal, &action, nullptr);
  action.sa_handler = SIG_DFL;  // an inherited SIG_IGN would reap CMD for us
  sigaction(SIGCHLD, &action, nullptr);
  // Signals zkr forwards to the group are for CMD: the guardian blocks all
  // but its death signal (and SIGCHLD is taken with sigtimedwait below).
  sigset_t mask;
  sigfillset(&mask);
  sigdelset(&mask, launch.death_signal);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  if (prctl(PR_SET_PDEATHSIG, launch.death_signal) != 0 || getppid() != launch.zkr) _exit(1);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  CloseAllBut(launch.keep, launch.keep_count);
  const pid_t command = fork();
  if (command < 0) {
    const int error = errno;
    (void)!write(launch.exec_error_fd, &error, sizeof(error));
    _exit(1);
  }
  if (command == 0) ExecCommand(launch);
  if (!LeaveCommandGroup()) {  // cannot tell when the group is empty: end it
    kill(-getpid(), SIGKILL);
    _exit(1);
  }
  close(launch.exec_error_fd);  // so Start() returns once the guardian is out
  // Until CMD has exited and no process is left in its group: reap whatever
  // became ours (CMD, orphans, also those that left the group) and re-check
  // at every SIGCHLD and every 50 ms, since a process leaving the group
  // (setsid) sends no signal. A zombie still counts as a member, so reaping
  // comes first. Meanwhile the group dies at the last deadline zkr gave
  // (KillBy): the lease's end, even if zkr is stopped and cannot act. Only
  // plain system calls here (signalfd, poll, read, kill, clock_gettime).
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  const int child_signals = signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
  fcntl(launch.deadline_fd, F_SETFL, O_NONBLOCK);
  bool deadlines_open = true;
  int64_t kill_by = INT64_MAX;  // unix nanoseconds; never until told
  bool killed = false;
  bool reported = false;
  for (;;) {
    int status = 0;
    pid_t reaped;
    while ((reaped = waitpid(-1, &status, WNOHANG)) > 0) {
      if (reaped == command) {
        (void)!write(launch.report_fd, &status, sizeof(status));
        reported = true;
      }
    }
    if (reported && kill(-getpid(), 0) < 0 && errno == ESRCH) _exit(0);
    // The latest deadline (zkr writes whole values; it ends the pipe as it
    // goes, when its death signal ends us too).
    while (deadlines_open) {
      int64_t deadline;
      const ssize_t n = read(launch.deadline_fd, &deadline, sizeof(deadline));
      if (n == sizeof(deadline)) {
        kill_by = deadline;
      } else {
        if (n == 0) deadlines_open = false;
        break;
      }
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    const int64_t now_ns = int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
    if (!killed && now_ns >= kill_by) {
      kill(-getpid(), SIGKILL);
      killed = true;
    }
    // Before CMD has exited its own SIGCHLD is enough to wake us, and a
    // deadline (the pipe, or the time it names).
    int timeout_ms = reported || child_signals < 0 ? 50 : -1;
    if (!killed && kill_by != INT64_MAX) {
      const int64_t until = (kill_by - now_ns + 999999) / 1000000;
      const int until_ms = static_cast<int>(std::min<int64_t>(until, INT_MAX));
      timeout_ms = timeout_ms < 0 ? until_ms : std::min(timeout_ms, until_ms);
    }
    struct pollfd fds[2] = {{child_signals, POLLIN, 0},
                            {deadlines_open ? launch.deadline_fd : -1, POLLIN, 0}};
    poll(fds, 2, timeout_ms);
    struct signalfd_siginfo info;
    while (child_signals >= 0 && read(child_signals, &info, sizeof(info)) == sizeof(info)) {
    }
  }
}

// The environment with `env` set (replacing entries of the same name).
std::vector<std::string> Environment(const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const absl::string_view text(*entry);
    const bool replaced = std::any_of(env.begin(), env.end(), [&](const auto& variable) {
      return text.size() > variable.first.size() && text[variable.first.size()] == '=' &&
             text.substr(0, variable.first.size()) == variable.first;
    });
    if (!replaced) entries.emplace_back(text);
  }
  for (const auto& [key, value] : env) entries.push_back(absl::StrCat(key, "=", value));
  return entries;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

void Child::IgnoreBrokenPipes() {
  struct sigaction ignore, old;
  std::memset(&ignore, 0, sizeof(ignore));
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &old);
  broken_pipes_ignored_at_start = old.sa_handler == SIG_IGN;
}

void Child::KeepInheritedDescriptors() {
  std::vector<int>& inherited = Inherited();
  inherited.clear();
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;  // no /proc: CMD inherits 0-2 only
  const int own = dirfd(dir);
  while (const struct dirent* entry = readdir(dir)) {
    int fd = 0;
    if (!absl::SimpleAtoi(entry->d_name, &fd) || fd < 3 || fd == own) continue;
    inherited.push_back(fd);
  }
  closedir(dir);
  std::sort(inherited.begin(), inherited.end());
}

absl::StatusOr<std::unique_ptr<Child>> Child::Start(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env, bool default_stop_signals) {
  if (argv.empty()) return absl::InvalidArgumentError("no command given after --");
  std::vector<std::string> args = argv;
  std::vector<std::string> environment = Environment(env);
  // Socket activation passes descriptors to "the process LISTEN_PID names":
  // when that is zkr, CMD (which inherits them) becomes that process.
  char* listen_pid = nullptr;
  const std::string ours = absl::StrCat("LISTEN_PID=", getpid());
  for (std::string& entry : environment) {
    if (entry != ours) continue;
    entry = "LISTEN_PID=" + std::string(21, '\0');
    listen_pid = entry.data() + std::strlen("LISTEN_PID=");
  }
  std::vector<char*> arg_pointers = Pointers(args);
  std::vector<char*> env_pointers = Pointers(environment);
  int exec_pipe[2], report_pipe[2], deadline_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (pipe2(report_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    close(exec_pipe[0]);
    close(exec_pipe[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(error)));
  }
  if (pipe2(deadline_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    for (int fd : {exec_pipe[0], exec_pipe[1], report_pipe[0], report_pipe[1]}) close(fd);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(error)));
  }
  // KillBy never blocks: a full pipe (the guardian gone) drops the value.
  fcntl(deadline_pipe[1], F_SETFL, O_NONBLOCK);
  std::vector<int> keep = Inherited();
  keep.push_back(exec_pipe[1]);
  keep.push_back(report_pipe[1]);
  keep.push_back(deadline_pipe[0]);
  std::sort(keep.begin(), keep.end());
  const Launch launch{arg_pointers.data(), env_pointers.data(), keep.data(),    keep.size(),
                      getpid(),            SIGRTMAX,           exec_pipe[1],   report_pipe[1],
                      deadline_pipe[0],    listen_pid,         default_stop_signals};
  const pid_t guardian = fork();
  if (guardian == 0) RunGuardian(launch);
  const int fork_error = errno;
  close(exec_pipe[1]);
  close(report_pipe[1]);
  close(deadline_pipe[0]);
  if (guardian < 0) {
    close(exec_pipe[0]);
    close(report_pipe[0]);
    close(deadline_pipe[1]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(fork_error)));
  }
  // No setpgid here: the guardian leaves the group it makes once CMD runs.
  // By the end of the pipe (exec done or failed) the group exists.
  int error = 0;
  ssize_t n = 0;
  do {
    n = read(exec_pipe[0], &error, sizeof(error));
  } while (n < 0 && errno == EINTR);
  close(exec_pipe[0]);
  auto child = std::unique_ptr<Child>(new Child(guardian, report_pipe[0], deadline_pipe[1]));
  if (n != sizeof(error)) return child;  // CMD runs
  child->Wait();
  if (error == ENOENT) {
    return absl::NotFoundError(absl::StrCat("cannot run \"", argv[0], "\": no such command (",
                                            std::strerror(error), ")"));
  }
  return absl::PermissionDeniedError(
      absl::StrCat("cannot execute \"", argv[0], "\": ", std::strerror(error)));
}

int Child::ReportNotStarted(absl::string_view what, const absl::Status& status) {
  const int code = Report(what, status);  // prints the message
  if (absl::IsNotFound(status)) return kExitCommandNotFound;
  if (absl::IsPermissionDenied(status)) return kExitCannotExecute;
  return code;
}

Child::~Child() {
  bool reaped;
  {
    absl::MutexLock lock(&mu_);
    reaped = reaped_;
  }
  if (!reaped) {  // never left running behind our back
    Signal(SIGKILL);
    Wait();
  }
  for (std::thread& killer : killers_) killer.join();
  close(report_fd_);
  close(deadline_fd_);
}

void Child::KillBy(absl::Time deadline) {
  const int64_t value =
      deadline == absl::InfiniteFuture() ? INT64_MAX : absl::ToUnixNanos(deadline);
  (void)!write(deadline_fd_, &value, sizeof(value));  // 8 bytes: written whole or not at all
}

int Child::Wait() {
  // Until the guardian is reaped its pid, the group's id, cannot be reused:
  // wait without reaping, stop signalling, then reap.
  siginfo_t info;
  while (waitid(P_PID, guardian_, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  {
    absl::MutexLock lock(&mu_);
    reaped_ = true;
  }
  int status = 0;
  while (waitpid(guardian_, &status, 0) < 0 && errno == EINTR) {
  }
  // CMD's status, which the guardian wrote before waiting for the rest of
  // the group; none if the guardian was killed (SIGKILL to the group).
  int command_status = 0;
  ssize_t n = 0;
  do {
    n = read(report_fd_, &command_status, sizeof(command_status));
  } while (n < 0 && errno == EINTR);
  if (n == sizeof(command_status)) status = command_status;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

void Child::Signal(int signal) {
  absl::MutexLock lock(&mu_);
  if (!reaped_) kill(-guardian_, signal);
}

void Child::Terminate(absl::Duration grace) {
  Signal(SIGTERM);
  absl::MutexLock lock(&mu_);
  killers_.emplace_back([this, grace] {
    const absl::Time deadline = absl::Now() + grace;
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithDeadline(absl::Condition(&reaped_), deadline);
    if (!reaped_) kill(-guardian_, SIGKILL);
  });
}

}  // namespace cli
}  // namespace zkr
