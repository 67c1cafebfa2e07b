#include "src/process_identity.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

namespace zkr {
namespace internal {
namespace {

std::atomic<pid_t> kept_pid{0};  // 0: not read yet (or forgotten in a child)

void ForgetPid() { kept_pid.store(0, std::memory_order_relaxed); }

}  // namespace

pid_t ProcessId() {
  // Registered before the first pid is kept, so no fork after it goes unseen.
  static const bool forgets_in_children = pthread_atfork(nullptr, nullptr, ForgetPid) == 0;
  pid_t pid = kept_pid.load(std::memory_order_relaxed);
  if (pid == 0 || !forgets_in_children) {
    pid = getpid();
    kept_pid.store(pid, std::memory_order_relaxed);
  }
  return pid;
}

const std::string& HostName() {
  static const std::string* const host = [] {
    char name[256] = {0};
    if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
      return new std::string("unknown-host");
    }
    return new std::string(name);
  }();
  return *host;
}

}  // namespace internal
}  // namespace zkr
