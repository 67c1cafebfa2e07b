#include "recipes/queue_driver.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "recipes/queue_decision.h"
#include "recipes/semaphore_decision.h"
#include "src/paths.h"

namespace zkr {
namespace internal {
namespace {

absl::Status Vanished(absl::string_view dir, absl::string_view my_name) {
  return absl::AbortedError(
      absl::StrCat("queue node ", JoinPath(dir, my_name), " vanished while waiting"));
}

// A lock's queue: readers and writers (recipes/queue_decision.h).
class LockDriver : public QueueDriver {
 public:
  LockDriver(absl::string_view dir, NodeMode mode, bool mark_release, const NodeScheme& scheme)
      : dir_(dir), mode_(mode), mark_release_(mark_release), scheme_(scheme) {}

  bool CouldTakeNow(const ChildList& children) const override {
    return CouldAcquireNow(children, mode_, scheme_);
  }

  Decision Decide(const ChildList& children, const std::string& my_name,
                  bool waited) const override {
    // A participant that waited was accepted then: a semaphore node that
    // is earliest now only blocks it.
    QueueDecision queued = DecideQueue(children, my_name, /*accepted=*/waited, scheme_);
    Decision decision;
    switch (queued.kind) {
      case QueueDecision::Kind::kAcquired:
        decision.kind = Decision::Kind::kAcquired;
        break;
      case QueueDecision::Kind::kOtherKind:
        decision.failure = absl::FailedPreconditionError(absl::StrCat(
            dir_, " is a semaphore (node ", queued.watch,
            "), not a lock: a lock and a semaphore cannot share a path"));
        break;
      case QueueDecision::Kind::kForeign:
        decision.failure = absl::FailedPreconditionError(absl::StrCat(
            dir_, " has node ", queued.watch, ", which is not a ", DialectName(scheme_.dialect),
            " participant of this queue: its owner's order and wait cannot be known, so "
            "this participant does not join (set LockOptions::dialect to the library that "
            "made it, or use another path)"));
        break;
      case QueueDecision::Kind::kLost:
        decision.failure = Vanished(dir_, my_name);
        break;
      case QueueDecision::Kind::kWait:
        decision.kind = Decision::Kind::kWait;
        decision.blockers = {queued.watch};
        // In a dialect a peer's node (or one the dialect cannot read) may
        // come while we wait: list again before holding, as the peers do.
        decision.one_release_enough = queued.blockers == 1 && scheme_.dialect == Dialect::kZkr;
        break;
    }
    return decision;
  }

  absl::Status TryGaveUp() const override {
    return absl::DeadlineExceededError(
        absl::StrCat("lock ", dir_, " is held; try-acquire gave up"));
  }

  // Someone may wait on us whose listing showed others ahead of us: only
  // if we waited ourselves (else we were first when anyone listed).
  bool MarksRelease(bool waited) const override {
    return waited && mode_ == NodeMode::kWrite && mark_release_;
  }

  bool WatchesOwnNodeWhileWaiting() const override { return true; }

 private:
  const absl::string_view dir_;  // the entry's (QueueDriver::For)
  const NodeMode mode_;
  const bool mark_release_;
  const NodeScheme& scheme_;  // the entry's (QueueDriver::For)
};

// A semaphore's lease set (recipes/semaphore_decision.h).
class LeaseDriver : public QueueDriver {
 public:
  LeaseDriver(absl::string_view dir, int weight, int leases)
      : dir_(dir), weight_(weight), leases_(leases) {}

  bool CouldTakeNow(const ChildList& children) const override {
    return CouldTakeLeasesNow(children, weight_, leases_);
  }

  Decision Decide(const ChildList& children, const std::string& my_name,
                  bool waited) const override {
    // A participant that waited was accepted then: a refused node that is
    // earliest now (the holder it came after left first) does not refuse it.
    SemaphoreDecision leased = DecideSemaphore(children, my_name, /*size_accepted=*/waited);
    Decision decision;
    switch (leased.kind) {
      case SemaphoreDecision::Kind::kAcquired:
        decision.kind = Decision::Kind::kAcquired;
        // Whoever listed while we waited is behind us in this listing.
        decision.mark_on_acquire = waited || leased.successor;
        break;
      case SemaphoreDecision::Kind::kLost:
        decision.failure = Vanished(dir_, my_name);
        break;
      case SemaphoreDecision::Kind::kMismatch:
        decision.failure = absl::FailedPreconditionError(absl::StrCat(
            "semaphore ", dir_, " has ", leased.mismatch_leases, " leases (node ", leased.mismatch,
            "); this participant was created with ", leases_));
        break;
      case SemaphoreDecision::Kind::kOtherKind:
        decision.failure = absl::FailedPreconditionError(absl::StrCat(
            dir_, " is a lock (node ", leased.mismatch,
            "), not a semaphore: a lock and a semaphore cannot share a path"));
        break;
      case SemaphoreDecision::Kind::kForeign:
        decision.failure = absl::FailedPreconditionError(absl::StrCat(
            dir_, " has node ", leased.mismatch,
            ", another library's (Curator's or Kazoo's): its owner's order and wait cannot be "
            "known, so this participant does not join (use another path)"));
        break;
      case SemaphoreDecision::Kind::kWait:
        decision.kind = Decision::Kind::kWait;
        decision.mark_on_acquire = true;
        decision.blockers.assign(std::make_move_iterator(leased.watch.begin()),
                                  std::make_move_iterator(leased.watch.end()));
        decision.one_release_enough = leased.first_waiter && leased.any_one;
        decision.blocker_marks_count = !leased.first_waiter;
        break;
    }
    return decision;
  }

  absl::Status TryGaveUp() const override {
    return absl::DeadlineExceededError(absl::StrCat(
        "semaphore ", dir_, ": not ", weight_, " free lease(s); try-acquire gave up"));
  }

  bool MarksRelease(bool) const override { return false; }
  bool WatchesOwnNodeWhileWaiting() const override { return false; }

 private:
  const absl::string_view dir_;  // the entry's (QueueDriver::For)
  const int weight_;
  const int leases_;
};

}  // namespace

std::unique_ptr<QueueDriver> QueueDriver::For(absl::string_view dir, NodeMode mode, int weight,
                                              int leases, bool mark_release,
                                              const NodeScheme& scheme) {
  if (mode == NodeMode::kLease) return std::make_unique<LeaseDriver>(dir, weight, leases);
  return std::make_unique<LockDriver>(dir, mode, mark_release, scheme);
}

}  // namespace internal
}  // namespace zkr
