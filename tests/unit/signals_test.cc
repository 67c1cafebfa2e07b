// zkr's signal thread (tools/zkr/signals.h), job control: Ctrl-Z stops CMD's
// group (the job-control handler) and then zkr itself; fg continues both.
// Each case runs Signals in a forked child (Signals blocks signals in every
// thread and must come first) and watches it from here with waitpid.
#include "tools/zkr/signals.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "gtest/gtest.h"

namespace zkr {
namespace cli {
namespace {

// One byte through a pipe, each way: the child reports what its handler
// saw ('R' ready, 'T' SIGTSTP, 'C' SIGCONT); the parent releases a handler
// that waits ('go').
class Child {
 public:
  // `hold_tstp`: the SIGTSTP handler waits for Release() before it returns.
  explicit Child(bool hold_tstp) {
    if (pipe(report_) != 0 || pipe(release_) != 0) std::abort();
    pid_ = fork();
    if (pid_ == 0) Run(hold_tstp);
    close(report_[1]);
    close(release_[0]);
  }
  ~Child() {
    kill(pid_, SIGCONT);
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
    close(report_[0]);
    close(release_[1]);
  }
  pid_t pid() const { return pid_; }

  // The next byte the child's handler reported, or 0 if none within 10 s.
  char Next() {
    pollfd fd{report_[0], POLLIN, 0};
    if (poll(&fd, 1, 10000) != 1) return 0;
    char c = 0;
    return read(report_[0], &c, 1) == 1 ? c : 0;
  }
  void Release() { (void)!write(release_[1], "g", 1); }

  // Whether the child is stopped, waiting up to `ms` for it to stop.
  bool StoppedWithin(int ms) {
    for (int waited = 0;; waited += 10) {
      int status = 0;
      const pid_t got = waitpid(pid_, &status, WUNTRACED | WNOHANG);
      if (got == pid_ && WIFSTOPPED(status)) return true;
      if (waited >= ms) return false;
      usleep(10000);
    }
  }

 private:
  [[noreturn]] void Run(bool hold_tstp) {
    close(report_[0]);
    close(release_[1]);
    Signals signals;
    const int report = report_[1];
    const int release = release_[0];
    signals.SetJobControl([=](int signal) {
      (void)!write(report, signal == SIGTSTP ? "T" : "C", 1);
      char go;
      if (signal == SIGTSTP && hold_tstp) (void)!read(release, &go, 1);
    });
    (void)!write(report, "R", 1);
    for (;;) pause();
  }

  pid_t pid_ = -1;
  int report_[2];
  int release_[2];
};

// Ctrl-Z, then fg: the handler stops CMD first, then zkr stops; fg continues
// zkr and reaches the handler.
TEST(SignalsJobControlTest, TstpStopsAfterTheHandlerAndContReachesIt) {
  Child child(/*hold_tstp=*/false);
  ASSERT_EQ(child.Next(), 'R');
  kill(child.pid(), SIGTSTP);
  EXPECT_EQ(child.Next(), 'T');
  EXPECT_TRUE(child.StoppedWithin(10000));
  kill(child.pid(), SIGCONT);
  EXPECT_EQ(child.Next(), 'C');
}

// `kill -TSTP; kill -CONT` at once: the SIGCONT comes while the handler is
// still stopping CMD's group. A self-stop after it would discard that
// SIGCONT (a stop signal discards a pending SIGCONT) and leave zkr and CMD
// stopped for good; zkr must not stop, and the SIGCONT reaches the handler
// (which continues CMD). A SIGCONT in the few instructions between zkr's
// check for a pending SIGCONT and its own SIGSTOP is lost all the same:
// no process that handles SIGTSTP can close that window (tools/zkr/README.md).
TEST(SignalsJobControlTest, ContDuringTheTstpHandlerLeavesNothingStopped) {
  Child child(/*hold_tstp=*/true);
  ASSERT_EQ(child.Next(), 'R');
  kill(child.pid(), SIGTSTP);
  ASSERT_EQ(child.Next(), 'T');  // in the handler, which waits
  kill(child.pid(), SIGCONT);    // pending once kill returns
  child.Release();
  EXPECT_EQ(child.Next(), 'C');
  EXPECT_FALSE(child.StoppedWithin(0));  // after its C, only a SIGTSTP stops it
}

}  // namespace
}  // namespace cli
}  // namespace zkr
