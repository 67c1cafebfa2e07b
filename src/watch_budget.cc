#include "src/watch_budget.h"

#include "absl/strings/str_cat.h"

namespace zkr {
namespace internal {

absl::Status WatchBudget::Take(size_t bytes, size_t held, absl::string_view what) {
  if (bytes == 0) return absl::OkStatus();
  size_t reserved = reserved_.load();
  do {
    if (bytes > limit_ || reserved > limit_ - bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          what, ": this session's watches have ", reserved, " of their ", limit_,
          " bytes reserved already (", holders_.load(), " waits, holds and watchers; ",
          limit_source_,
          ": after a reconnect every watch is set again in one packet), and this needs ", bytes,
          " more. Use more sessions, or raise jute.maxbuffer and max_request_bytes together"));
    }
  } while (!reserved_.compare_exchange_weak(reserved, reserved + bytes));
  if (held == 0) ++holders_;
  return absl::OkStatus();
}

void WatchBudget::Give(size_t bytes, size_t left) {
  if (bytes == 0) return;
  reserved_ -= bytes;
  if (left == 0) --holders_;
}

absl::Status WatchReservation::Cover(size_t bytes, absl::string_view what) {
  absl::MutexLock lock(&mu_);
  if (bytes <= bytes_) return absl::OkStatus();
  absl::Status taken = budget_->Take(bytes - bytes_, bytes_, what);
  if (taken.ok()) bytes_ = bytes;
  return taken;
}

void WatchReservation::Release() {
  absl::MutexLock lock(&mu_);
  budget_->Give(bytes_, 0);
  bytes_ = 0;
}

size_t WatchReservation::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace internal
}  // namespace zkr
