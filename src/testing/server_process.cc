#include "src/testing/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

extern char** environ;

namespace zkr {
namespace testing {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// ---- the spawner thread -----------------------------------------------------

// A thread that lives as long as the process and runs closures for others.
// Children are forked here: PR_SET_PDEATHSIG fires when the thread that
// forked the child exits, so forking from a test's worker thread would kill
// the server as soon as that worker finished.
//
// A process forked from this one (e.g. by a test) has no spawner thread, only
// a copy of its state: it makes a new one on first use.
class SpawnerThread {
 public:
  static SpawnerThread& Get() ABSL_LOCKS_EXCLUDED(instance_mu_) {
    absl::MutexLock lock(&instance_mu_);
    static const bool registered =
        pthread_atfork(nullptr, nullptr, &SpawnerThread::ForgetInChild) == 0;
    (void)registered;
    if (instance_ == nullptr) instance_ = new SpawnerThread();  // Never freed.
    return *instance_;
  }

  // Runs `fn` on the spawner thread and returns when it has finished.
  void Run(const std::function<void()>& fn) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &SpawnerThread::Idle));
    task_ = &fn;
    done_ = false;
    mu_.Await(absl::Condition(&done_));
    task_ = nullptr;
  }

 private:
  SpawnerThread() {
    std::thread([this] { Loop(); }).detach();
  }

  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return task_ == nullptr;
  }
  bool HasTask() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return task_ != nullptr && !done_;
  }

  void Loop() ABSL_LOCKS_EXCLUDED(mu_) {
    mu_.Lock();
    for (;;) {
      mu_.Await(absl::Condition(this, &SpawnerThread::HasTask));
      const std::function<void()>* task = task_;
      mu_.Unlock();
      (*task)();
      mu_.Lock();
      done_ = true;
    }
  }

  // Runs in a forked child, which has one thread: the spawner thread is
  // gone; leak its state and make a new one on first use.
  static void ForgetInChild() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    instance_ = nullptr;
  }

  static absl::Mutex instance_mu_;
  static SpawnerThread* instance_ ABSL_GUARDED_BY(instance_mu_);

  absl::Mutex mu_;
  const std::function<void()>* task_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

ABSL_CONST_INIT absl::Mutex SpawnerThread::instance_mu_(absl::kConstInit);
SpawnerThread* SpawnerThread::instance_ = nullptr;

// ---- fork/exec --------------------------------------------------------------

// `name` if it contains '/', else the first executable `name` in $PATH.
absl::StatusOr<std::string> ResolveProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::NotFoundError(
      absl::StrCat("program '", name, "' is not in $PATH"));
}

// File descriptors the child needs, opened close-on-exec by the parent.
struct ChildFds {
  int dev_null = -1;
  int out = -1;
  int err = -1;               // -1: stderr goes to `out` too.
  int exec_error_read = -1;   // EOF once the child has exec'd.
  int exec_error_write = -1;  // The child writes errno here if exec fails.

  ~ChildFds() {
    for (int fd : {dev_null, out, err, exec_error_read, exec_error_write}) {
      if (fd >= 0) close(fd);
    }
  }
};

absl::Status OpenOutputFile(const std::string& path, int& fd) {
  fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("open log file ", path, ": ", ErrnoText(errno)));
  }
  return absl::OkStatus();
}

absl::Status OpenChildFds(const ServerProcessOptions& options, ChildFds& fds) {
  fds.dev_null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fds.dev_null < 0) {
    return absl::InternalError(
        absl::StrCat("open /dev/null: ", ErrnoText(errno)));
  }
  absl::Status opened = OpenOutputFile(options.stdout_file, fds.out);
  if (opened.ok() && !options.stderr_file.empty()) {
    opened = OpenOutputFile(options.stderr_file, fds.err);
  }
  if (!opened.ok()) return opened;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", ErrnoText(errno)));
  }
  fds.exec_error_read = pipe_fds[0];
  fds.exec_error_write = pipe_fds[1];
  return absl::OkStatus();
}

// In the child: tells the parent errno and exits.
[[noreturn]] void FailChild(const ChildFds& fds) {
  int err = errno;
  (void)!write(fds.exec_error_write, &err, sizeof(err));
  _exit(127);
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecChild(pid_t parent, const ChildFds& fds,
                            bool own_process_group, const char* program,
                            char* const* argv) {
  // Before anything else, so that a signal to the group, sent once Start()
  // has returned, reaches the child.
  if (own_process_group && setpgid(0, 0) != 0) FailChild(fds);
  // Die with the parent; if it died before prctl took effect, we have been
  // re-parented already and nobody would ever stop us.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
  if (dup2(fds.dev_null, STDIN_FILENO) < 0 ||
      dup2(fds.out, STDOUT_FILENO) < 0 ||
      dup2(fds.err >= 0 ? fds.err : fds.out, STDERR_FILENO) < 0) {
    FailChild(fds);
  }
  // Every other descriptor (a test's client sockets, above all) closes on
  // exec: a server holding a copy of a client's socket would keep that
  // connection open after the client closed it.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  // Signals this process ignores would stay ignored across exec.
  struct sigaction default_action;
  std::memset(&default_action, 0, sizeof(default_action));
  default_action.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) {
    sigaction(signal, &default_action, nullptr);  // Fails for KILL, STOP.
  }
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  execve(program, argv, environ);
  FailChild(fds);
}

// Forks and execs; returns the child's pid once exec has succeeded.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& args,
                            const ServerProcessOptions& options) {
  if (args.empty()) return absl::InvalidArgumentError("empty command line");
  absl::StatusOr<std::string> program = ResolveProgram(args[0]);
  if (!program.ok()) return program.status();
  ChildFds fds;
  absl::Status opened = OpenChildFds(options, fds);
  if (!opened.ok()) return opened;
  std::vector<char*> argv;
  for (const std::string& arg : args) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);

  const pid_t parent = getpid();
  pid_t pid = -1;
  int fork_errno = 0;
  SpawnerThread::Get().Run([&] {
    pid = fork();
    if (pid == 0) {
      ExecChild(parent, fds, options.own_process_group, program->c_str(),
                argv.data());
    }
    fork_errno = errno;
  });
  if (pid < 0) {
    return absl::InternalError(
        absl::StrCat("fork for ", *program, ": ", ErrnoText(fork_errno)));
  }
  close(fds.exec_error_write);
  fds.exec_error_write = -1;
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(fds.exec_error_read, &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  if (n == 0) return pid;  // exec succeeded and closed the pipe.
  waitpid(pid, nullptr, 0);
  return absl::FailedPreconditionError(
      absl::StrCat("cannot run ", *program, ": ",
                   n > 0 ? ErrnoText(child_errno) : "child died before exec"));
}

// Options that send stdout and stderr to `log_file`.
ServerProcessOptions OutputTo(std::string log_file) {
  ServerProcessOptions options;
  options.stdout_file = std::move(log_file);
  return options;
}

// When waitpid fails (ECHILD: SIGCHLD ignored, or reaped by other code).
constexpr char kReapedElsewhere[] = "ended (reaped elsewhere)";

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(wait_status));
  }
  if (WIFSIGNALED(wait_status)) {
    return absl::StrCat("killed by signal ", WTERMSIG(wait_status));
  }
  return absl::StrCat("ended with wait status ", wait_status);
}

// ---- ports ------------------------------------------------------------------

absl::Mutex port_mu(absl::kConstInit);
std::set<int>& HandedOutPorts() ABSL_EXCLUSIVE_LOCKS_REQUIRED(port_mu) {
  static auto* const ports = new std::set<int>();
  return *ports;
}

// Whether nothing is bound to 127.0.0.1:`port` (TCP). Without SO_REUSEADDR,
// so a port in TIME_WAIT also counts as taken.
bool PortIsFree(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return free;
}

// A port the kernel picks (bind to port 0): the fallback.
absl::StatusOr<int> KernelPickedPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("socket: ", ErrnoText(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  int err = errno;
  close(fd);
  if (port < 0) {
    return absl::UnavailableError(
        absl::StrCat("bind 127.0.0.1:0: ", ErrnoText(err)));
  }
  return port;
}

// The kernel's ephemeral port range, [low, high].
std::pair<int, int> EphemeralPortRange() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768, high = 60999;
  if (!(in >> low >> high)) return {32768, 60999};
  return {low, high};
}

}  // namespace

// ---- ServerProcess ----------------------------------------------------------

ServerProcess::ServerProcess(std::vector<std::string> argv,
                             std::string log_file)
    : ServerProcess(std::move(argv), OutputTo(std::move(log_file))) {}

ServerProcess::ServerProcess(std::vector<std::string> argv,
                             ServerProcessOptions options)
    : argv_(std::move(argv)), options_(std::move(options)) {}

ServerProcess::~ServerProcess() { KillGroup().IgnoreError(); }

absl::Status ServerProcess::Start() {
  if (Running()) {
    return absl::FailedPreconditionError(
        absl::StrCat("process ", pid_, " (", argv_[0], ") is still running"));
  }
  absl::StatusOr<pid_t> pid = Spawn(argv_, options_);
  if (!pid.ok()) return pid.status();
  pid_ = *pid;
  group_ = options_.own_process_group ? pid_ : -1;
  paused_ = false;
  exit_description_.clear();
  exit_code_.reset();
  return absl::OkStatus();
}

bool ServerProcess::Running() {
  if (pid_ < 0) return false;
  int wait_status = 0;
  pid_t r = waitpid(pid_, &wait_status, WNOHANG);
  if (r == 0) return true;
  Reaped(r == pid_ ? std::optional<int>(wait_status) : std::nullopt);
  return false;
}

void ServerProcess::Reaped(std::optional<int> wait_status) {
  if (wait_status.has_value()) {
    exit_description_ = DescribeWaitStatus(*wait_status);
    exit_code_ = WIFSIGNALED(*wait_status) ? 128 + WTERMSIG(*wait_status)
                                           : WEXITSTATUS(*wait_status);
  } else {
    exit_description_ = kReapedElsewhere;
    exit_code_ = -1;
  }
  pid_ = -1;
  paused_ = false;
}

void ServerProcess::Terminate() {
  if (!Running()) return;
  kill(pid_, SIGTERM);
  kill(pid_,
       SIGCONT);  // A stopped process handles SIGTERM only once continued.
}

absl::Status ServerProcess::Stop(absl::Duration grace) {
  if (!Running()) return absl::OkStatus();
  Terminate();
  const absl::Time deadline = absl::Now() + grace;
  while (absl::Now() < deadline) {
    if (!Running()) return absl::OkStatus();
    absl::SleepFor(absl::Milliseconds(10));
  }
  return Kill();
}

absl::Status ServerProcess::Kill() {
  if (!Running()) return absl::OkStatus();
  const pid_t pid = pid_;
  if (kill(pid, SIGKILL) != 0 && errno != ESRCH) {
    return absl::InternalError(
        absl::StrCat("kill -9 ", pid, ": ", ErrnoText(errno)));
  }
  int wait_status = 0;
  pid_t r;
  do {
    r = waitpid(pid, &wait_status, 0);
  } while (r < 0 && errno == EINTR);
  Reaped(r == pid ? std::optional<int>(wait_status) : std::nullopt);
  return absl::OkStatus();
}

absl::Status ServerProcess::KillGroup() {
  if (group_ < 0) return Kill();
  if (kill(-group_, SIGKILL) != 0 && errno != ESRCH) {
    return absl::InternalError(
        absl::StrCat("kill -9 -", group_, ": ", ErrnoText(errno)));
  }
  absl::Status killed = Kill();
  // Members that became our children; each has been SIGKILLed.
  for (;;) {
    if (waitpid(-group_, nullptr, 0) < 0 && errno != EINTR) break;
  }
  return killed;
}

absl::Status ServerProcess::SignalOrFail(int signal, absl::string_view what) {
  if (!Running()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot ", what, " ", argv_[0], ": it is not running",
                     exit_description_.empty() ? "" : " (", exit_description_,
                     exit_description_.empty() ? "" : ")"));
  }
  if (kill(pid_, signal) != 0) {
    return absl::InternalError(
        absl::StrCat(what, " process ", pid_, ": ", ErrnoText(errno)));
  }
  return absl::OkStatus();
}

namespace {

// Whether every thread of process `pid` is stopped ('T' in its stat line).
bool AllThreadsStopped(pid_t pid) {
  std::error_code error;
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream in(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size()) continue;  // gone
    if (stat[paren + 2] != 'T' && stat[paren + 2] != 't') return false;
  }
  return !error;
}

}  // namespace

absl::Status ServerProcess::Pause() {
  absl::Status status = SignalOrFail(SIGSTOP, "pause");
  if (!status.ok()) return status;
  paused_ = true;
  // kill() returns before the stop has reached every thread: a thread busy on
  // another CPU runs on briefly (a paused server could still answer). Return
  // once all of them are stopped. Bounded; polling only decides when to look.
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!AllThreadsStopped(pid_)) {
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("pause ", pid_, ": not every thread stopped within 5s"));
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  return absl::OkStatus();
}

absl::Status ServerProcess::Resume() {
  absl::Status status = SignalOrFail(SIGCONT, "resume");
  if (status.ok()) paused_ = false;
  return status;
}

absl::Status ServerProcess::Signal(int signal) {
  return SignalOrFail(signal, absl::StrCat("send signal ", signal, " to"));
}

// ---- helpers ----------------------------------------------------------------

absl::StatusOr<int> PickFreePort() {
  static constexpr int kLowest = 10000;
  static constexpr int kAttempts = 200;
  auto [ephemeral_low, ephemeral_high] = EphemeralPortRange();
  // Candidates: [kLowest, 65535] minus the ephemeral range.
  std::vector<std::pair<int, int>> ranges;
  if (ephemeral_low - 1 >= kLowest)
    ranges.push_back({kLowest, ephemeral_low - 1});
  if (ephemeral_high + 1 <= 65535)
    ranges.push_back({ephemeral_high + 1, 65535});

  absl::MutexLock lock(&port_mu);
  std::set<int>& handed_out = HandedOutPorts();
  static std::mt19937* const rng = new std::mt19937(
      std::random_device()() ^ static_cast<unsigned>(getpid()));
  for (int attempt = 0; attempt < kAttempts && !ranges.empty(); ++attempt) {
    const auto& [low, high] = ranges[(*rng)() % ranges.size()];
    int port = std::uniform_int_distribution<int>(low, high)(*rng);
    if (handed_out.count(port) == 0 && PortIsFree(port)) {
      handed_out.insert(port);
      return port;
    }
  }
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    absl::StatusOr<int> port = KernelPickedPort();
    if (!port.ok()) return port.status();
    if (handed_out.insert(*port).second) return *port;
  }
  return absl::ResourceExhaustedError("found no free port on 127.0.0.1");
}

namespace {

std::string TempRoot() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
}

// The pid in a name "zkr-<kind>-<pid>-XXXXXX", or -1.
pid_t OwnerOf(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "zkr-")) return -1;
  std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
  int pid;
  if (parts.size() != 3 || parts[2].size() != 6 ||
      !absl::SimpleAtoi(parts[1], &pid) || pid <= 0) {
    return -1;
  }
  return pid;
}

// Removes directories "zkr-<kind>-<pid>-XXXXXX" of processes that are gone.
void RemoveOrphanedTempDirs() {
  std::error_code error;
  std::filesystem::directory_iterator it(TempRoot(), error);
  for (; !error && it != std::filesystem::directory_iterator();
       it.increment(error)) {
    const pid_t owner = OwnerOf(it->path().filename().string());
    if (owner <= 0 || owner == getpid()) continue;
    if (kill(owner, 0) == 0 || errno == EPERM) continue;  // Still alive.
    std::error_code ignored;
    std::filesystem::remove_all(it->path(), ignored);
  }
}

}  // namespace

absl::StatusOr<std::string> MakeOwnedTempDir(absl::string_view kind) {
  static const bool swept = (RemoveOrphanedTempDirs(), true);
  (void)swept;
  return MakeTempDir(absl::StrCat("zkr-", kind, "-", getpid(), "-"));
}

absl::StatusOr<std::string> MakeTempDir(absl::string_view prefix) {
  std::string pattern = absl::StrCat(TempRoot(), "/", prefix, "XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("mkdtemp ", pattern, ": ", ErrnoText(errno)));
  }
  return pattern;
}

absl::Status RemoveDirRecursively(const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("remove ", dir, ": ", error.message()));
  }
  return absl::OkStatus();
}

absl::Status MakeDirectory(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("mkdir ", path, ": ", error.message()));
  }
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, absl::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) {
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

std::string LogTail(const std::string& path, int max_lines) {
  static constexpr std::streamoff kMaxBytes = 8192;
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::StrCat("(cannot read ", path, ")");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > kMaxBytes ? size - kMaxBytes : 0;
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::StripTrailingAsciiWhitespace(text), '\n');
  if (start > 0 && !lines.empty()) lines.erase(lines.begin());  // Partial.
  if (static_cast<int>(lines.size()) > max_lines) {
    lines.erase(lines.begin(), lines.end() - max_lines);
  }
  return absl::StrJoin(lines, "\n");
}

std::string CommonConfig(const ServerOptions& options,
                         const std::string& data_dir, int client_port) {
  return absl::StrCat(
      "tickTime=", absl::ToInt64Milliseconds(options.tick), "\n",
      "minSessionTimeout=",
      absl::ToInt64Milliseconds(options.min_session_timeout), "\n",
      "maxSessionTimeout=",
      absl::ToInt64Milliseconds(options.max_session_timeout), "\n",
      "dataDir=", data_dir, "\n", "clientPort=", client_port, "\n",
      "clientPortAddress=127.0.0.1\n", "admin.enableServer=false\n",
      "4lw.commands.whitelist=*\n", "forceSync=no\n", "maxClientCnxns=0\n");
}

std::vector<std::string> JavaCommand(const ServerOptions& options,
                                     absl::string_view main_class,
                                     const std::string& config_file) {
  std::vector<std::string> command = {
      options.java,
      "-Xmx256m",
      "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1",
      "-XX:-UsePerfData",  // No /tmp/hsperfdata_* files.
      "-Djava.net.preferIPv4Stack=true",
      "-Dorg.slf4j.simpleLogger.showDateTime=true",
      "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
      "-cp",
      "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar",
  };
  if (options.container_check_interval > absl::ZeroDuration()) {
    command.push_back(absl::StrCat("-Dznode.container.checkIntervalMs=",
                                   absl::ToInt64Milliseconds(options.container_check_interval)));
  }
  if (options.jute_max_buffer > 0) {
    command.push_back(absl::StrCat("-Djute.maxbuffer=", options.jute_max_buffer));
  }
  command.insert(command.end(), {std::string(main_class), config_file});
  return command;
}

std::string ServingMode(absl::string_view srvr_reply) {
  if (absl::StrContains(srvr_reply, "not currently serving")) return "";
  for (absl::string_view line : absl::StrSplit(srvr_reply, '\n')) {
    if (absl::ConsumePrefix(&line, "Mode:")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return "";
}

absl::StatusOr<std::string> QueryMode(int port, absl::Duration timeout) {
  absl::StatusOr<std::string> reply =
      FourLetterWord("127.0.0.1", port, "srvr", timeout);
  if (!reply.ok()) return reply.status();
  return ServingMode(*reply);
}

absl::Status WaitUntilServing(ServerProcess& process, int port,
                              absl::Time deadline) {
  const absl::Time start = absl::Now();
  std::string last_answer = "no answer yet";
  for (;;) {
    if (!process.Running()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "zookeeper server on 127.0.0.1:", port, " ",
          process.exit_description().empty() ? "is not running"
                                             : process.exit_description(),
          "; see ", process.log_file(), ":\n", LogTail(process.log_file())));
    }
    absl::StatusOr<std::string> mode = QueryMode(port, absl::Seconds(2));
    if (mode.ok() && !mode->empty()) return absl::OkStatus();
    last_answer = mode.ok() ? "answers but is not serving"
                            : std::string(mode.status().message());
    if (absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "zookeeper server on 127.0.0.1:", port, " did not serve within ",
      DurationText(absl::Now() - start), " (last: ", last_answer, "); see ",
      process.log_file(), ":\n", LogTail(process.log_file())));
}

std::string DurationText(absl::Duration d) {
  if (d >= absl::Seconds(10)) {
    return absl::StrCat(absl::ToInt64Seconds(d + absl::Milliseconds(500)), "s");
  }
  return absl::StrCat(absl::ToInt64Milliseconds(d), "ms");
}

}  // namespace testing
}  // namespace zkr
