// The directory of one chaos run; see run_dir.h.
#include "tests/chaos/run_dir.h"

#include <cstdio>

#include "absl/status/statusor.h"
#include "src/testing/server_process.h"

namespace zkr {
namespace chaos {

RunDirectory::RunDirectory() {
  absl::StatusOr<std::string> dir = testing::MakeTempDir("zkr-chaos-");
  if (dir.ok()) path_ = *dir;
}

RunDirectory::~RunDirectory() {
  if (path_.empty()) return;
  if (keep_) {
    std::printf("chaos: run directory kept for inspection: %s\n",
                path_.c_str());
    return;
  }
  testing::RemoveDirRecursively(path_).IgnoreError();
}

}  // namespace chaos
}  // namespace zkr
