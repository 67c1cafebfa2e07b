#include "recipes/semaphore_decision.h"

#include <algorithm>
#include <optional>

#include "recipes/queue_node.h"

namespace zkr {
namespace internal {

SemaphoreDecision DecideSemaphore(const ChildList& children,
                                  absl::string_view my_name, bool size_accepted) {
  SemaphoreDecision decision;
  std::optional<QueueNode> me = ParseQueueNode(my_name);
  if (!me.has_value() || me->mode != NodeMode::kLease ||
      !children.Contains(my_name)) {
    return decision;  // kLost
  }
  // The lease nodes before mine, in order, and the leases they ask. The
  // earliest lease node's N is the size: I am refused if mine differs. A
  // later node with another N is refused by the same rule (it soon leaves),
  // so it does not get me refused; until it leaves it keeps its place and
  // its weight counts, and the limit is the smallest N up to mine, so no
  // holder ever sees more leases in use than its own N.
  std::vector<const QueueNode*> before;
  int64_t asked = 0;
  int smallest = me->leases;
  int limit = me->leases;
  std::string foreign;
  const std::vector<QueueNode> queue = ParseQueue(children, me->sequence, NodeScheme(), &foreign);
  if (!foreign.empty()) {
    decision.kind = SemaphoreDecision::Kind::kForeign;
    decision.mismatch = std::move(foreign);
    return decision;
  }
  const QueueNode* earliest = nullptr;
  std::string lock_before;  // the last lock node before mine
  for (const QueueNode& node : queue) {
    if (node.mode != NodeMode::kLease) {
      if (SequenceOffset(node.sequence, me->sequence) > 0) continue;  // after me
      if (earliest == nullptr && lock_before.empty() && !size_accepted) {
        decision.kind = SemaphoreDecision::Kind::kOtherKind;
        decision.mismatch = node.name;
        return decision;
      }
      lock_before = node.name;
      continue;
    }
    if (SequenceOffset(node.sequence, me->sequence) > 0) {
      decision.successor = true;
      break;
    }
    if (earliest == nullptr) earliest = &node;
    if (node.sequence == me->sequence) continue;
    if (earliest->leases != me->leases && !size_accepted) {
      decision.kind = SemaphoreDecision::Kind::kMismatch;
      decision.mismatch = earliest->name;
      decision.mismatch_leases = earliest->leases;
      return decision;
    }
    before.push_back(&node);
    asked += node.weight;
    smallest = std::min(smallest, node.weight);
    limit = std::min(limit, node.leases);
  }
  if (!lock_before.empty()) {  // never beside it: wait until it is gone
    decision.kind = SemaphoreDecision::Kind::kWait;
    decision.successor = false;
    decision.watch.push_back(lock_before);
    return decision;
  }
  if (asked + me->weight <= limit) {
    decision.kind = SemaphoreDecision::Kind::kAcquired;
    return decision;
  }
  decision.kind = SemaphoreDecision::Kind::kWait;
  decision.successor = false;
  // Prefix sums only grow along the queue (and limits only shrink):
  // everything before me fits in my limit exactly when all of it does,
  // so each of those holds or may.
  decision.first_waiter = asked <= limit;
  if (decision.first_waiter) {
    for (const QueueNode* node : before) decision.watch.push_back(node->name);
    decision.any_one = asked - smallest + me->weight <= limit;
  } else {
    decision.watch.push_back(before.back()->name);
  }
  return decision;
}

bool CouldTakeLeasesNow(const ChildList& children, int weight, int leases) {
  int64_t asked = 0;
  for (absl::string_view child : children) {
    std::optional<QueueNode> node = ParseQueueNode(child);
    if (node.has_value() && node->mode == NodeMode::kLease) asked += node->weight;
  }
  return asked + weight <= leases;
}

}  // namespace internal
}  // namespace zkr
