// QueueDriver: what differs between a lock's queue and a semaphore's lease
// set, for the queue engine's step machine (recipes/queue_entry.h), in the
// manner of Curator's LockInternalsDriver: the machine's steps are the same
// for both; a driver says whether a try-acquire may queue, what a listing
// decides, whether acquiring marks our node, and whether a release is marked.
//
// Two implementations: a lock's (queue_decision.h: readers and writers) and
// a lease set's (semaphore_decision.h). Pure: no request, no state; any
// thread.
#ifndef ZKRECIPES_RECIPES_QUEUE_DRIVER_H_
#define ZKRECIPES_RECIPES_QUEUE_DRIVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "recipes/queue_node.h"
#include "src/child_list.h"

namespace zkr {
namespace internal {

class QueueDriver {
 public:
  // What a listing decides for our node.
  struct Decision {
    enum class Kind { kAcquired, kWait, kFail };
    Kind kind = Kind::kFail;
    absl::Status failure;  // kFail: why the attempt ends
    // kAcquired, kWait: acquiring marks our node (a new version, same data)
    // so that a waiter watching it wakes; kConfirm sends that setData.
    bool mark_on_acquire = false;
    // kWait: the nodes to watch (one for a lock; every node before a
    // semaphore's first waiter).
    // (Inline room for one: a waiting lock's memory.)
    absl::InlinedVector<std::string, 1> blockers;
    // kWait: the release of any one of `blockers` lets us in — nothing can
    // get ahead (sequence numbers only grow), so it needs no new listing.
    bool one_release_enough = false;
    // kWait: a blocker's mark (a waiter that acquired) counts as a change.
    bool blocker_marks_count = false;
  };

  // The driver of a queue of `mode` under `dir`; kLease: a semaphore
  // participant asking `weight` of `leases`. `mark_release`: a writer that
  // waited releases with the marked transaction (off for an election).
  // `scheme`: whose names a lock's queue speaks (a lease set's: ours).
  // `dir` and `scheme` are not copied: they must outlive the driver (the
  // entry's settings').
  static std::unique_ptr<QueueDriver> For(absl::string_view dir, NodeMode mode, int weight, int leases,
                                          bool mark_release, const NodeScheme& scheme);
  virtual ~QueueDriver() = default;

  // Try-acquire's look before it creates anything: could we be granted now?
  virtual bool CouldTakeNow(const ChildList& children) const = 0;
  // A listing's decision for `my_name`; `waited`: a listing told us to wait
  // before (our place was accepted then).
  virtual Decision Decide(const ChildList& children, const std::string& my_name,
                          bool waited) const = 0;
  // Try-acquire's answer when a listing says wait.
  virtual absl::Status TryGaveUp() const = 0;
  // A holder that `waited` releases with the marked transaction: a
  // watcher that sees its data change knows it held (linear drains).
  virtual bool MarksRelease(bool waited) const = 0;
  // A waiter watches its own node beside its blocker (the watch a holder
  // keeps); not a lease set's, whose acquisition marks (changes) the node.
  virtual bool WatchesOwnNodeWhileWaiting() const = 0;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_QUEUE_DRIVER_H_
