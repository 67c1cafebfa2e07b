// The phase of `zkr lock`, `zkr elect` and `zkr barrier enter` in which CMD
// runs: it starts CMD (tools/zkr/child.h), forwards the signals zkr gets to
// CMD's whole process group, terminates the group when the lock or the
// leadership is lost, and returns only once the group has exited.
//
// Thread safety: Forward() and Lost() may be called from any thread (the
// signal thread, a session callback), before, during or after Run(), which
// runs on the main thread.
#ifndef ZKRECIPES_TOOLS_ZKR_COMMAND_RUN_H_
#define ZKRECIPES_TOOLS_ZKR_COMMAND_RUN_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tools/zkr/child.h"

namespace zkr {
namespace cli {

class CommandRun {
 public:
  // `terminate_on_loss`: Lost() sends SIGTERM, then SIGKILL after `grace`
  // (--on_lost=terminate); otherwise Lost() is only remembered.
  CommandRun(bool terminate_on_loss, absl::Duration grace)
      : terminate_on_loss_(terminate_on_loss), grace_(grace) {}
  CommandRun(const CommandRun&) = delete;
  CommandRun& operator=(const CommandRun&) = delete;

  // A signal for CMD's group; one that comes before CMD runs is held and
  // sent once it does.
  void Forward(int signal) ABSL_LOCKS_EXCLUDED(mu_);
  // The lock or leadership is lost; applies to a CMD not yet started too.
  void Lost() ABSL_LOCKS_EXCLUDED(mu_);
  bool lost() const ABSL_LOCKS_EXCLUDED(mu_);

  // Starts CMD with `env` added and waits for its group. Returns CMD's exit
  // code, or 126/127 (reported on stderr as "zkr <what>: ...") when it could
  // not be started.
  int Run(absl::string_view what, const std::vector<std::string>& argv,
          const std::vector<std::pair<std::string, std::string>>& env) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const bool terminate_on_loss_;
  const absl::Duration grace_;
  mutable absl::Mutex mu_;
  Child* running_ ABSL_GUARDED_BY(mu_) = nullptr;
  int pending_signal_ ABSL_GUARDED_BY(mu_) = 0;
  bool lost_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_COMMAND_RUN_H_
