// `zkr demo`: the main job shown by `tools/run.sh demo`.
#ifndef ZKRECIPES_TOOLS_ZKR_DEMO_H_
#define ZKRECIPES_TOOLS_ZKR_DEMO_H_

#include <string>

namespace zkr {
namespace cli {

// Runs the demo against `connect`, or against an embedded local ZooKeeper
// when `connect` is empty. Returns the process exit code.
int RunDemo(const std::string& connect);

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_DEMO_H_
