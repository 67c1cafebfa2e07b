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

// What a grant gives CMD (its environment) and how it is given back.
struct Held {
  std::vector<std::pair<std::string, std::string>> env;
  std::function<absl::Status()> release;
  // The hold's lease end (LockGuard::valid_until), for CMD's watchdog.
  std::function<absl::Time()> valid_until;
};
// Takes one grant: try once, or wait up to `timeout`.
using Acquirer = std::function<absl::StatusOr<Held>(bool try_once, absl::Duration timeout)>;
// A recipe that `zkr <command> --path=P -- CMD` holds while CMD runs.
struct Holding {
  const char* command = "";  // "lock", "semaphore"
  std::string label;         // what messages call it: the path(s)
  std::string busy;          // "is held": why a try found no grant
  std::string progress_path;  // the queue a status line shows while waiting ("": none)
  std::function<absl::Status()> check;  // its own flags (before connecting)
  // Whose node names it speaks (--dialect): no revocation requests but ours.
  Dialect dialect = Dialect::kZkr;
  // Makes the recipe object on the session; the Acquirer keeps it alive.
  std::function<absl::StatusOr<Acquirer>(Session&, const LockOptions&)> make;
};
// Acquires, runs CMD, releases once CMD's group exited (zkr lock's run).
int RunHolding(Signals& signals, const std::vector<std::string>& command, const Holding& what);
// A LockGuard's grant: ZKR_FENCING_TOKEN, ZKR_LOCK_PATH, ZKR_LOCK_NODE.
Held HeldGuard(LockGuard guard);

// `command` is what followed "--".
// `paths`: every --path given (more than one: all of them, as a MultiLock).
int RunLock(Signals& signals, const std::vector<std::string>& command,
            std::vector<std::string> paths);
int RunElect(Signals& signals, const std::vector<std::string>& command);
int RunBarrier(Signals& signals, const std::vector<std::string>& args,
               const std::vector<std::string>& command);
int RunSemaphore(Signals& signals, const std::vector<std::string>& command);
int RunRevoke(Signals& signals);
int RunGroup(Signals& signals, const std::vector<std::string>& args,
             const std::vector<std::string>& command);
int RunInspect();
// zkr ls: the queues at or below --path (tools/zkr/cmd_ls.cc).
int RunLs(Signals& signals);
// Validates --on-lost.
absl::Status CheckOnLost();

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_COMMANDS_H_
