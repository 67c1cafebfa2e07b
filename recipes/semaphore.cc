#include "zkrecipes/semaphore.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "recipes/lock_core.h"
#include "recipes/queue_node.h"

namespace zkr {

using internal::NodeMode;

Semaphore::Semaphore(std::shared_ptr<internal::LockCore> core, int leases)
    : core_(std::move(core)), leases_(leases) {}
Semaphore::~Semaphore() { core_->Shutdown(); }

absl::StatusOr<std::unique_ptr<Semaphore>> Semaphore::Create(Session& session, std::string path,
                                                             int leases, LockOptions options) {
  if (leases < 1 || leases > internal::kMaxLeases) {
    return absl::InvalidArgumentError(absl::StrCat("semaphore ", path, ": leases=", leases,
                                                   " is out of range (1 to ",
                                                   internal::kMaxLeases, ")"));
  }
  auto core = internal::LockCore::Create(session, std::move(path), std::move(options), leases);
  if (!core.ok()) return core.status();
  return std::unique_ptr<Semaphore>(new Semaphore(std::move(*core), leases));
}

absl::Status Semaphore::CheckCount(int count) const {
  if (count >= 1 && count <= leases_) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("semaphore ", path(), ": count=", count,
                                                 " leases asked; it has ", leases_));
}

absl::StatusOr<LockGuard> Semaphore::Acquire(int count, absl::Duration timeout) {
  if (absl::Status status = CheckCount(count); !status.ok()) return status;
  return core_->Acquire(NodeMode::kLease, timeout, false, count);
}

absl::StatusOr<LockGuard> Semaphore::TryAcquire(int count) {
  if (absl::Status status = CheckCount(count); !status.ok()) return status;
  return core_->Acquire(NodeMode::kLease, absl::InfiniteDuration(), true, count);
}

void Semaphore::AcquireAsync(int count, std::function<void(absl::StatusOr<LockGuard>)> done) {
  if (absl::Status status = CheckCount(count); !status.ok()) {
    return core_->FailAsync(std::move(done), status);
  }
  core_->AcquireAsync(NodeMode::kLease, std::move(done), count);
}

std::future<absl::StatusOr<LockGuard>> Semaphore::AcquireFuture(int count) {
  if (absl::Status status = CheckCount(count); !status.ok()) {
    std::promise<absl::StatusOr<LockGuard>> failed;
    failed.set_value(status);
    return failed.get_future();
  }
  return internal::AcquireAsFuture(*core_, NodeMode::kLease, count);
}

void Semaphore::Cancel() { core_->Cancel(); }
const std::string& Semaphore::path() const { return core_->path(); }

}  // namespace zkr
