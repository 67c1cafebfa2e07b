// Test support for the zkr command-line tests: small file helpers and a
// child process (the real zkr binary) in a process group of its own, whose
// output is captured in files. For use from a test's main thread.
#ifndef ZKRECIPES_TESTS_SUPPORT_CLI_PROCESS_H_
#define ZKRECIPES_TESTS_SUPPORT_CLI_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

extern char** environ;

namespace zkr {
namespace testing {

// ---- files -------------------------------------------------------------------

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

inline std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

inline std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// `text` as a single-quoted sh word.
inline std::string ShQuote(absl::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Polls `done` every 10ms until it returns true (true) or `timeout` passes
// (false). Polling only bounds the wait; the condition decides.
inline bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    if (done()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

// ---- a child process -----------------------------------------------------------

// A child process in a process group of its own, with stdin from /dev/null
// and stdout/stderr captured in files. The destructor SIGKILLs the whole
// group — so also whatever zkr started, even after zkr itself died — and
// reaps it. Not thread-safe; use from the test's main thread (the child gets
// PR_SET_PDEATHSIG, which fires when the forking thread ends).
class Process {
 public:
  Process(const std::vector<std::string>& argv, std::string out_path, std::string err_path)
      : out_path_(std::move(out_path)), err_path_(std::move(err_path)) {
    command_ = absl::StrJoin(argv, " ");
    // Orphans of our children (a CMD whose zkr was SIGKILLed) become our
    // children, so the destructor can reap them too.
    static const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    (void)subreaper;
    // Everything the child needs is prepared before fork: between fork and
    // exec only async-signal-safe calls.
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int out_fd = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err_fd = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (null_fd < 0 || out_fd < 0 || err_fd < 0) {
      ADD_FAILURE() << "cannot open the output files of " << command_ << ": "
                    << std::strerror(errno);
    } else {
      const pid_t parent = getpid();
      pid_ = fork();
      if (pid_ == 0) {
        setpgid(0, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(126);
        if (dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
            dup2(err_fd, STDERR_FILENO) < 0) {
          _exit(126);
        }
        // No copies of the test's client sockets in the child.
        close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        struct sigaction default_action;
        std::memset(&default_action, 0, sizeof(default_action));
        default_action.sa_handler = SIG_DFL;
        for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) {
          sigaction(signal, &default_action, nullptr);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        execve(args[0], args.data(), environ);
        _exit(127);
      }
      if (pid_ < 0) {
        ADD_FAILURE() << "fork for " << command_ << ": " << std::strerror(errno);
      } else {
        setpgid(pid_, pid_);  // also here: no race with a signal to the group
      }
    }
    for (int fd : {null_fd, out_fd, err_fd}) {
      if (fd >= 0) close(fd);
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  ~Process() { KillGroup(); }

  // Waits up to `timeout` for the process to exit and returns its exit code
  // (128 + N if killed by signal N). On timeout kills its group and returns
  // nullopt.
  std::optional<int> Wait(absl::Duration timeout) {
    if (WaitUntil([this] { return Exited(); }, timeout)) return code_;
    KillGroup();
    return std::nullopt;
  }

  // Whether it has exited (reaping it if so); never blocks.
  bool Exited() {
    if (pid_ <= 0) return true;
    if (code_.has_value()) return true;
    int status = 0;
    const pid_t reaped = waitpid(pid_, &status, WNOHANG);
    if (reaped == pid_) {
      code_ = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    } else if (reaped < 0 && errno != EINTR) {
      code_ = -1;  // cannot happen: it is our child
    }
    return code_.has_value();
  }

  // Sends `signal` to the process itself (not its group) unless reaped.
  void Signal(int signal) {
    if (pid_ > 0 && !code_.has_value()) kill(pid_, signal);
  }

  // SIGKILLs the whole group and reaps the process and every member of the
  // group that became our child. Idempotent.
  void KillGroup() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    if (!code_.has_value()) {
      int status = 0;
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      code_ = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    }
    // Members re-parented to us (we are a subreaper); each was SIGKILLed.
    for (;;) {
      const pid_t reaped = waitpid(-pid_, nullptr, 0);
      if (reaped < 0 && errno != EINTR) break;
    }
  }

  pid_t pid() const { return pid_; }
  std::string Stdout() const { return ReadFile(out_path_); }
  std::string Stderr() const { return ReadFile(err_path_); }
  // For failure messages: the command line and what it printed.
  std::string Describe() const {
    return absl::StrCat("\n$ ", command_, "\n[exit ",
                        code_.has_value() ? absl::StrCat(*code_) : "-", "]\n[stdout]\n", Stdout(),
                        "[stderr]\n", Stderr());
  }

 private:
  std::string command_;
  const std::string out_path_;
  const std::string err_path_;
  pid_t pid_ = -1;
  std::optional<int> code_;
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_CLI_PROCESS_H_
