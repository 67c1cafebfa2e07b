// The queue decision: given the children of a queue directory and my node,
// am I through, or which single node do I wait on? A pure function.
//
//   my node absent                  -> kLost
//   reader, no W before me          -> kAcquired
//   reader, a W before me           -> kWait on the last W before me
//   writer, nothing before me       -> kAcquired
//   writer, something before me     -> kWait on my direct predecessor
// A kWait also counts the nodes that block me (QueueDecision::blockers).
// Foreign (unparseable) children are ignored. Order is serial-number order
// relative to my own sequence, so a wrapped counter still orders correctly.
//
// Semaphore nodes (S<k>of<N>): a lock and a semaphore cannot share a path.
// The earliest node says whose the path is:
//   a semaphore node is the earliest, before me  -> kOtherKind (refuse;
//                                                   unless `accepted`)
//   a semaphore node before me, not the earliest -> it blocks me like a
//     (a refused participant about to leave, or      writer: I wait until it
//     one that came while the path was empty)       is gone, never beside it
// Semaphore nodes after me are ignored (they are refused, or wait for me).
//
// `scheme` (queue_node.h): whose names the queue speaks. A child that is
// foreign to it (IsForeignNode: another library's, or any unknown name in
// a dialect queue) is never guessed at: kForeign, wherever it is.
// Once a participant has waited (`accepted`), its place is never refused:
// a semaphore node that is earliest later only blocks it.
#ifndef ZKRECIPES_RECIPES_QUEUE_DECISION_H_
#define ZKRECIPES_RECIPES_QUEUE_DECISION_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "recipes/queue_node.h"
#include "src/child_list.h"

namespace zkr {
namespace internal {

struct QueueDecision {
  enum class Kind { kAcquired, kWait, kLost, kOtherKind, kForeign };
  Kind kind = Kind::kLost;
  // For kWait: the child name to watch. For kOtherKind: the semaphore node.
  // For kForeign: the foreign child.
  std::string watch;
  // For kWait: how many nodes before mine block me (any for a writer,
  // writers for a reader). With one, the watched node is the only one: once
  // it is gone nothing else can be ahead (sequence numbers only grow).
  int blockers = 0;
};

QueueDecision DecideQueue(const ChildList& children, absl::string_view my_name,
                          bool accepted = false, const NodeScheme& scheme = NodeScheme());

// Whether a participant of `mode` could be granted the lock at once, judging
// by the current children (used by try-acquire before creating a node).
bool CouldAcquireNow(const ChildList& children, NodeMode mode,
                     const NodeScheme& scheme = NodeScheme());

// Whether `children` hold a node of the other kind than `mode` (a semaphore
// node for a lock participant, a lock node for a semaphore's) or a node
// foreign to `scheme`: then only a queued decision can say whether to refuse
// or wait, so a try queues too (and is refused, leaving nothing behind).
bool HasOtherKind(const ChildList& children, NodeMode mode,
                  const NodeScheme& scheme = NodeScheme());

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_QUEUE_DECISION_H_
