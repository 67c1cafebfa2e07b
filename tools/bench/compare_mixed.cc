// Workload 8's mixed row (8m, issue 34): contended handoffs on one Curator
// InterProcessMutex shared by Curator and zkrecipes (Dialect::kCurator), as
// a ratio to two Curator contenders alone, both measured in the same run.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/macros.h"
#include "tools/bench/compare.h"
#include "zkrecipes/exclusive_lock.h"

namespace zkr {
namespace bench {
namespace {

// Runs CuratorHandoffBench (`command` plus its arguments) with `contenders`
// for `seconds`: once it is connected, creates `go` and calls `started`;
// returns its acquisitions.
absl::StatusOr<int64_t> CuratorHandoffs(const std::string& command, const Context& context,
                                        const std::string& path, int contenders, double seconds,
                                        const std::string& go,
                                        const std::function<void()>& started) {
  const std::string line = absl::StrCat(command, " '", context.connect, "' '", path, "' ",
                                        contenders, " ", seconds, " '", go, "'");
  FILE* pipe = popen(line.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("cannot run: ", line));
  std::string out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
    out += buffer;
    if (absl::StartsWith(buffer, "ready")) {
      std::ofstream(go).put('\n');
      if (started) started();
    }
  }
  const int status = pclose(pipe);
  const size_t at = out.find("\"acquisitions\":");
  int64_t acquisitions = 0;
  if (status != 0 || at == std::string::npos ||
      !absl::SimpleAtoi(out.substr(at + 15, out.find_first_of(",}", at) - at - 15),
                        &acquisitions)) {
    return absl::InternalError(absl::StrCat("failed (status ", status, "): ", line, ": ", out));
  }
  std::remove(go.c_str());
  return acquisitions;
}

}  // namespace

absl::StatusOr<Result> MixedHandoffs(Context& context, const std::string& java_command) {
  const double seconds = context.quick ? 0.5 : 5.0;
  const std::string path = context.root + "/compare-mixed";
  char dir_template[] = "/tmp/zkr-bench-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp failed");
  const std::string dir = dir_template;
  // The floor: two Curator contenders alone.
  ZKR_ASSIGN_OR_RETURN(int64_t alone, CuratorHandoffs(java_command, context, path, 2, seconds,
                                                      dir + "/go-alone", nullptr));
  // One Curator contender and one of ours, from the same moment.
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Connect(context));
  LockOptions options;
  options.dialect = Dialect::kCurator;
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<ExclusiveLock> lock,
                       ExclusiveLock::Create(*session, path, options));
  std::atomic<int64_t> ours{0};
  absl::Status ours_status;
  std::thread loop;
  ZKR_ASSIGN_OR_RETURN(
      int64_t theirs,
      CuratorHandoffs(java_command, context, path, 1, seconds, dir + "/go-mixed", [&] {
        loop = std::thread([&] {
          const absl::Time end = absl::Now() + absl::Seconds(seconds);
          while (absl::Now() < end) {
            absl::StatusOr<LockGuard> guard = lock->Acquire(absl::Seconds(30));
            if (!guard.ok()) {
              ours_status = guard.status();
              return;
            }
            ++ours;
            absl::Status released = guard->Release();
            if (!released.ok()) {
              ours_status = released;
              return;
            }
          }
        });
      }));
  if (loop.joinable()) loop.join();
  rmdir(dir.c_str());
  ZKR_RETURN_IF_ERROR(ours_status);
  lock.reset();
  ZKR_RETURN_IF_ERROR(DeleteLockDirectory(*session, path));
  const double alone_rate = alone / seconds;
  const double mixed_rate = (theirs + ours.load()) / seconds;
  Result r("8m",
           "mixed handoffs: 1 zkrecipes (dialect curator) + 1 Curator on one InterProcessMutex, "
           "per s, vs 2 Curator alone");
  r.in_process = false;
  r.ratio = alone_rate > 0 ? mixed_rate / alone_rate : 0;
  r.figures = {{"handoffs_per_s", mixed_rate},
               {"curator_alone_handoffs_per_s", alone_rate},
               {"zkrecipes_share", mixed_rate > 0 ? ours.load() / seconds / mixed_rate : 0}};
  return r;
}

}  // namespace bench
}  // namespace zkr
