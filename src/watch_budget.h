// WatchBudget and WatchReservation: how much of a session's reconnect
// packet its watches may take, shared out before any watch is set.
//
// On reconnect the C client sets every watch of the session again in one
// SetWatches packet; past the server's jute.maxbuffer the server drops it
// with the connection, on every attempt, until the session expires
// (src/session_limits.h). So every recipe reserves the bytes of the paths it
// will watch before it sends anything that sets a watch — a queue
// participant for as long as it waits or holds, an observer for its life, a
// plain watch until it fires — and is refused with ResourceExhausted, at
// once, when they would not fit. What is reserved is never taken by another:
// a participant admitted keeps its watches. The budget is less than the
// packet's limit; the rest covers watches whose removal the server has not
// answered yet (the C client still holds them), which the client's own
// count (src/watch_registry.h) bounds at the limit itself.
//
// Thread safety: both are safe for concurrent use, and never call out; a
// reservation may be released on any thread (with a watch's function, on
// the ZooKeeper threads).
#ifndef ZKRECIPES_SRC_WATCH_BUDGET_H_
#define ZKRECIPES_SRC_WATCH_BUDGET_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace zkr {
namespace internal {

class WatchBudget {
 public:
  // `limit` bytes in all; `limit_source` says where it comes from, for the
  // refusal's message ("7/8 of SessionOptions::max_request_bytes").
  WatchBudget(size_t limit, std::string limit_source)
      : limit_(limit), limit_source_(std::move(limit_source)) {}
  WatchBudget(const WatchBudget&) = delete;
  WatchBudget& operator=(const WatchBudget&) = delete;

  size_t limit() const { return limit_; }
  // The bytes reserved now, and by how many reservations.
  size_t reserved() const { return reserved_.load(); }
  size_t holders() const { return holders_.load(); }

  // Takes `bytes` more for a reservation that holds `held` already: OK, or
  // ResourceExhausted naming `what`, the bytes and the limit (nothing taken).
  absl::Status Take(size_t bytes, size_t held, absl::string_view what);
  // Gives back `bytes` of a reservation that now holds `left`.
  void Give(size_t bytes, size_t left);

 private:
  const size_t limit_;
  const std::string limit_source_;
  std::atomic<size_t> reserved_{0};
  std::atomic<size_t> holders_{0};  // reservations holding more than nothing
};

// One recipe's share of a budget: nothing until Cover(); all of it given back
// on Release() or destruction.
class WatchReservation {
 public:
  explicit WatchReservation(std::shared_ptr<WatchBudget> budget) : budget_(std::move(budget)) {}
  ~WatchReservation() { Release(); }
  WatchReservation(const WatchReservation&) = delete;
  WatchReservation& operator=(const WatchReservation&) = delete;

  // Makes the reservation at least `bytes`, taking the difference from the
  // budget: ResourceExhausted naming `what` if it lacks it (the
  // reservation is then unchanged). Never shrinks it.
  absl::Status Cover(size_t bytes, absl::string_view what) ABSL_LOCKS_EXCLUDED(mu_);
  // Gives everything back; Cover() may take again.
  void Release() ABSL_LOCKS_EXCLUDED(mu_);
  size_t bytes() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::shared_ptr<WatchBudget> budget_;
  mutable absl::Mutex mu_;
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_WATCH_BUDGET_H_
