// The semaphore's decision: given the children of a semaphore directory and
// my node ("...-S<k>of<N>-<seq>"), do I hold k of the N leases, or which
// nodes do I wait on? A pure function; tests/model/semaphore.pml checks the
// rule (exclusion, no lost wake-up, one waiter woken per event).
//
//   my node absent                         -> kLost
//   the earliest node says another N       -> kMismatch (refuse: the first
//                                             participant's N is the size;
//                                             a later node with another N
//                                             is refused itself, so it only
//                                             keeps its place meanwhile)
//   leases asked before me + k <= limit    -> kAcquired; `successor` if a
//     (limit: the smallest N up to mine,      node after mine was listed (it
//     so no holder sees more than its N)      may wait on me: mark our node)
//   everything before me fits in limit     -> kWait, first waiter: watch
//                                             EVERY node before me
//     (so all of them hold or may)            (`any_one`: any single release
//                                             lets me in)
//   otherwise                              -> kWait on my direct predecessor,
//                                             a waiter: its mark (it holds
//                                             now) or its delete wakes me
// Strict FIFO: nobody passes a waiter, so a large request is not starved.
// Foreign names are ignored. Lock nodes (R/W): a lock and a semaphore cannot
// share a path; as in recipes/queue_decision.h, a lock node that is the
// earliest, before me, refuses me (kOtherKind, unless `size_accepted`); one
// before me that is not the earliest makes me wait on it (kWait, never
// granted beside it); lock nodes after me are ignored.
#ifndef ZKRECIPES_RECIPES_SEMAPHORE_DECISION_H_
#define ZKRECIPES_RECIPES_SEMAPHORE_DECISION_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "src/child_list.h"

namespace zkr {
namespace internal {

struct SemaphoreDecision {
  // kForeign: another library's node (Curator's, Kazoo's: IsForeignNode),
  // named in `mismatch`: never guessed at.
  enum class Kind { kAcquired, kWait, kLost, kMismatch, kOtherKind, kForeign };
  Kind kind = Kind::kLost;
  // kWait: the child names to watch (every node before me for the first
  // waiter, else my direct predecessor).
  std::vector<std::string> watch;
  bool first_waiter = false;
  // kWait, first waiter: the release of any one watched node lets me in.
  bool any_one = false;
  // kAcquired: a node after mine was listed.
  bool successor = false;
  // kMismatch: the earlier node with another N, and its N. kOtherKind: the
  // lock node.
  std::string mismatch;
  int mismatch_leases = 0;
};

// `size_accepted`: my N was accepted by an earlier decision (I waited), so
// I am never refused now; another N (or a lock node) before me only keeps
// its place.
SemaphoreDecision DecideSemaphore(const ChildList& children,
                                  absl::string_view my_name, bool size_accepted = false);

// Whether `weight` of `leases` could be granted at once judging by the
// current children (try-acquire reads them before creating a node).
bool CouldTakeLeasesNow(const ChildList& children, int weight, int leases);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_SEMAPHORE_DECISION_H_
