#include "tools/zkr/common.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "src/paths.h"

DEFINE_string(zk, "",
              "ZooKeeper connect string host:port[,host:port...][/chroot]; "
              "default $ZKR_CONNECT, else 127.0.0.1:2181");
DEFINE_string(session_timeout, "10s", "ZooKeeper session timeout, e.g. 10s");
DEFINE_string(auth, "", "credentials: digest:USER:PASSWORD");
DEFINE_bool(verbose, false, "print the ZooKeeper client's log and session state changes");

namespace zkr {
namespace cli {

std::string ConnectString() {
  if (!FLAGS_zk.empty()) return FLAGS_zk;
  const char* env = std::getenv("ZKR_CONNECT");
  return env != nullptr && *env != '\0' ? env : "127.0.0.1:2181";
}

absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view flag, const std::string& text) {
  absl::Duration duration;
  if (!absl::ParseDuration(text, &duration) || duration < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", text, ": not a duration (examples: 30s, 1m30s, 500ms, inf)"));
  }
  return duration;
}

absl::Status CheckPathFlag(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("--path is required");
  absl::Status valid = ValidatePath(path);
  if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat("--path: ", valid.message()));
  if (path == "/") return absl::InvalidArgumentError("--path: \"/\" cannot be a lock or election");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Session>> ConnectFromFlags() {
  SessionOptions options;
  options.connect = ConnectString();
  auto timeout = ParseDurationFlag("session-timeout", FLAGS_session_timeout);
  if (!timeout.ok()) return timeout.status();
  options.session_timeout = *timeout;
  options.connect_timeout = std::max(*timeout, absl::Seconds(5));
  if (!FLAGS_auth.empty()) {
    constexpr absl::string_view kDigest = "digest:";
    if (FLAGS_auth.rfind(kDigest.data(), 0) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--auth: expected digest:USER:PASSWORD, got \"", FLAGS_auth, "\""));
    }
    options.digest_auth = FLAGS_auth.substr(kDigest.size());
  }
  if (FLAGS_verbose) {
    options.log_level = ClientLogLevel::kInfo;
  } else {
    options.log_level = ClientLogLevel::kError;
    options.log_sink = [](absl::string_view) {};
  }
  auto session = Session::Connect(options);
  if (session.ok() && FLAGS_verbose) {
    (*session)->AddStateListener([](SessionState state, uint64_t generation) {
      std::fprintf(stderr, "zkr: session %s (generation %llu)\n",
                   std::string(SessionStateName(state)).c_str(),
                   static_cast<unsigned long long>(generation));
    });
  }
  return session;
}

int Report(absl::string_view what, const absl::Status& status) {
  std::fprintf(stderr, "zkr %s: %s\n", std::string(what).c_str(),
               std::string(status.message()).c_str());
  if (absl::IsInvalidArgument(status)) return kExitUsage;
  if (absl::IsUnavailable(status)) return kExitUnreachable;
  if (absl::IsDeadlineExceeded(status)) return kExitNotAcquired;
  if (absl::IsCancelled(status)) return kExitInterrupted;
  return kExitError;
}

// ---- Signals -----------------------------------------------------------------

class Signals::Thread {
 public:
  explicit Thread(Signals* owner) : thread_([this, owner] { Run(owner); }) {}
  ~Thread() {
    stopping_ = true;
    pthread_kill(thread_.native_handle(), SIGHUP);
    thread_.join();
  }

 private:
  void Run(Signals* owner) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    for (;;) {
      int signal = 0;
      if (sigwait(&set, &signal) != 0) continue;
      if (stopping_) return;
      std::function<void(int)> handler;
      {
        absl::MutexLock lock(&owner->mu_);
        if (owner->received_ == 0) owner->received_ = signal;
        handler = owner->handler_;
        owner->handling_ = static_cast<bool>(handler);
      }
      if (handler) handler(signal);
      absl::MutexLock lock(&owner->mu_);
      owner->handling_ = false;
    }
  }
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

Signals::Signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::make_unique<Thread>(this);
}

Signals::~Signals() { thread_.reset(); }

void Signals::SetHandler(std::function<void(int)> handler) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* handling) { return !*handling; }, &handling_));
  handler_ = std::move(handler);
}

int Signals::received() const {
  absl::MutexLock lock(&mu_);
  return received_;
}

// ---- Child ---------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Child>> Child::Start(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) return absl::InvalidArgumentError("no command given after --");
  // Tells the parent whether exec failed: closed on a successful exec.
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    for (const auto& [key, value] : env) setenv(key.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    int error = errno;
    (void)!write(status_pipe[1], &error, sizeof(error));
    _exit(127);
  }
  close(status_pipe[1]);
  int error = 0;
  ssize_t n = read(status_pipe[0], &error, sizeof(error));
  close(status_pipe[0]);
  auto child = std::unique_ptr<Child>(new Child(pid));
  if (n == sizeof(error)) {
    child->Wait();
    return absl::NotFoundError(
        absl::StrCat("cannot run \"", argv[0], "\": ", std::strerror(error)));
  }
  return child;
}

Child::~Child() {
  for (std::thread& killer : killers_) killer.join();
}

int Child::Wait() {
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  {
    absl::MutexLock lock(&mu_);
    reaped_ = true;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : kExitError;
}

void Child::Signal(int signal) {
  absl::MutexLock lock(&mu_);
  if (!reaped_) kill(pid_, signal);
}

void Child::Terminate(absl::Duration grace) {
  Signal(SIGTERM);
  absl::MutexLock lock(&mu_);
  killers_.emplace_back([this, grace] {
    absl::Time deadline = absl::Now() + grace;
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithDeadline(absl::Condition(&reaped_), deadline);
    if (!reaped_) kill(pid_, SIGKILL);
  });
}

}  // namespace cli
}  // namespace zkr
