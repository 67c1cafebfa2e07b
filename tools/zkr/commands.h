// The zkr subcommands. Each returns the process exit code (tools/zkr/common.h).
#ifndef ZKRECIPES_TOOLS_ZKR_COMMANDS_H_
#define ZKRECIPES_TOOLS_ZKR_COMMANDS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/zkr/common.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace cli {

// Takes one grant: try once, or wait up to `timeout`.
using Acquirer = std::function<absl::StatusOr<LockGuard>(bool try_once, absl::Duration timeout)>;
// A recipe that `zkr <command> --path=P -- CMD` holds while CMD runs.
struct Holding {
  const char* command = "";  // "lock", "semaphore"
  const char* busy = "";     // "is held": why a try found no grant
  std::function<absl::Status()> check;  // its own flags (before connecting)
  // Makes the recipe object on the session; the Acquirer keeps it alive.
  std::function<absl::StatusOr<Acquirer>(Session&, const LockOptions&)> make;
  std::vector<std::pair<std::string, std::string>> env;  // more for CMD
};
// Acquires, runs CMD, releases once CMD's group exited (zkr lock's run).
int RunHolding(Signals& signals, const std::vector<std::string>& command, const Holding& what);

// `command` is what followed "--".
int RunLock(Signals& signals, const std::vector<std::string>& command);
int RunElect(Signals& signals, const std::vector<std::string>& command);
int RunBarrier(Signals& signals, const std::vector<std::string>& args,
               const std::vector<std::string>& command);
int RunSemaphore(Signals& signals, const std::vector<std::string>& command);
int RunInspect();
// Validates --on-lost.
absl::Status CheckOnLost();

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_COMMANDS_H_
