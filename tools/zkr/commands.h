// The zkr subcommands. Each returns the process exit code (tools/zkr/common.h).
#ifndef ZKRECIPES_TOOLS_ZKR_COMMANDS_H_
#define ZKRECIPES_TOOLS_ZKR_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/zkr/common.h"

namespace zkr {
namespace cli {

// `command` is what followed "--".
int RunLock(Signals& signals, const std::vector<std::string>& command);
int RunElect(Signals& signals, const std::vector<std::string>& command);
int RunBarrier(Signals& signals, const std::vector<std::string>& args,
               const std::vector<std::string>& command);
int RunInspect();
// Validates --on-lost.
absl::Status CheckOnLost();

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_COMMANDS_H_
