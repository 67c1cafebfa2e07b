// AcquisitionReport: one queue attempt's events for the session's observer
// (zkrecipes/observer.h) — queued, handoffs, granted or failed, then
// released or lost — with the times they are measured from.
//
// Each method reports at most once what it names (a second Granted() or a
// Released() after a Lost() is ignored), so the engine may call them on
// every path without bookkeeping of its own. Built only for a session with
// an observer (QueueEntry keeps none otherwise: no clock is read, no event
// built, no memory held).
//
// Thread-safe: the engine calls it from the completion thread and from its
// callers' threads. Reports go to the dispatcher thread (EventReporter).
#ifndef ZKRECIPES_RECIPES_ACQUISITION_REPORT_H_
#define ZKRECIPES_RECIPES_ACQUISITION_REPORT_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "recipes/queue_node.h"
#include "src/child_list.h"
#include "src/session_core.h"
#include "zkrecipes/observer.h"

namespace zkr {
namespace internal {

class AcquisitionReport {
 public:
  // `path` must outlive the report (the queue entry's directory).
  // `scheme`: whose names the queue's nodes have (recipes/queue_node.h).
  AcquisitionReport(const SessionCore& core, const std::string& path, NodeMode mode, int weight,
                    const NodeScheme& scheme = NodeScheme());
  AcquisitionReport(const AcquisitionReport&) = delete;
  AcquisitionReport& operator=(const AcquisitionReport&) = delete;

  // The attempt starts: the wait is measured from here.
  void Started() ABSL_LOCKS_EXCLUDED(mu_);
  // Its first listing after its node `node` was created (or found).
  void Queued(const ChildList& children, const std::string& node)
      ABSL_LOCKS_EXCLUDED(mu_);
  // It waits on a node (a kWatch step began).
  void Watching() ABSL_LOCKS_EXCLUDED(mu_);
  // The node it waited on, named by `from()` (called only when reported),
  // changed: it holds at once (`granted`) or reads the queue again.
  void Handoff(absl::FunctionRef<std::string()> from, bool granted) ABSL_LOCKS_EXCLUDED(mu_);
  void Granted() ABSL_LOCKS_EXCLUDED(mu_);
  // The attempt ended without a grant (`node`: what it had created, if known).
  void Failed(const absl::Status& status, const std::string& node) ABSL_LOCKS_EXCLUDED(mu_);
  void ReleaseStarted() ABSL_LOCKS_EXCLUDED(mu_);
  // The released hold's node is gone.
  void Released() ABSL_LOCKS_EXCLUDED(mu_);
  void Lost(bool session_lost) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class Phase { kIdle, kWaiting, kHeld, kReleasing, kOver };
  Acquisition WhoLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration Now() const { return core_.clock().Monotonic(); }

  const SessionCore& core_;
  const std::string& path_;
  const NodeMode mode_;
  const int weight_;
  const NodeScheme scheme_;

  absl::Mutex mu_;
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kIdle;
  std::string node_ ABSL_GUARDED_BY(mu_);
  bool queued_ ABSL_GUARDED_BY(mu_) = false;
  int position_ ABSL_GUARDED_BY(mu_) = 0;
  int handoffs_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration started_ ABSL_GUARDED_BY(mu_);   // monotonic
  absl::Duration watching_ ABSL_GUARDED_BY(mu_);  // the current watch's start
  absl::Duration granted_ ABSL_GUARDED_BY(mu_);
  absl::Duration releasing_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_ACQUISITION_REPORT_H_
