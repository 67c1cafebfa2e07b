// zkr semaphore: take k of the N leases on a path, run a command, release.
#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "tools/zkr/commands.h"
#include "zkrecipes/semaphore.h"

DECLARE_int32(leases);
DECLARE_int32(take);
DECLARE_string(path);

namespace zkr {
namespace cli {

int RunSemaphore(Signals& signals, const std::vector<std::string>& command) {
  Holding semaphore;
  semaphore.command = "semaphore";
  semaphore.label = FLAGS_path;
  semaphore.progress_path = FLAGS_path;
  semaphore.busy = absl::StrCat("has not ", FLAGS_take, " free lease(s)");
  semaphore.check = [] {
    if (FLAGS_leases < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--leases=", FLAGS_leases, ": give the number of leases, 1 or more"));
    }
    if (FLAGS_take < 1 || FLAGS_take > FLAGS_leases) {
      return absl::InvalidArgumentError(absl::StrCat("--take=", FLAGS_take, ": expected 1 to ",
                                                     FLAGS_leases, " (--leases)"));
    }
    return absl::OkStatus();
  };
  semaphore.make = [](Session& session, const LockOptions& options) -> absl::StatusOr<Acquirer> {
    auto created = Semaphore::Create(session, FLAGS_path, FLAGS_leases, options);
    if (!created.ok()) return created.status();
    std::shared_ptr<Semaphore> leases = std::move(*created);
    const int take = FLAGS_take;
    const int size = FLAGS_leases;
    return Acquirer([leases, take, size](bool try_once,
                                         absl::Duration timeout) -> absl::StatusOr<Held> {
      absl::StatusOr<LockGuard> guard =
          try_once ? leases->TryAcquire(take) : leases->Acquire(take, timeout);
      if (!guard.ok()) return guard.status();
      Held held = HeldGuard(std::move(*guard));
      held.env.push_back({"ZKR_LEASES", absl::StrCat(take)});
      held.env.push_back({"ZKR_SEMAPHORE_SIZE", absl::StrCat(size)});
      return held;
    });
  };
  return RunHolding(signals, command, semaphore);
}

}  // namespace cli
}  // namespace zkr
