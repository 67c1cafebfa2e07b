#include "recipes/semaphore_decision.h"

#include <algorithm>
#include <optional>

#include "recipes/queue_node.h"

namespace zkr {
namespace internal {

SemaphoreDecision DecideSemaphore(const std::vector<std::string>& children,
                                  absl::string_view my_name) {
  SemaphoreDecision decision;
  std::optional<QueueNode> me = ParseQueueNode(my_name);
  if (!me.has_value() || me->mode != NodeMode::kLease ||
      std::find(children.begin(), children.end(), my_name) == children.end()) {
    return decision;  // kLost
  }
  // The lease nodes before mine, in order, and the leases they ask.
  std::vector<const QueueNode*> before;
  int64_t asked = 0;
  int smallest = me->leases;
  const std::vector<QueueNode> queue = ParseQueue(children, me->sequence);
  for (const QueueNode& node : queue) {
    if (node.mode != NodeMode::kLease) continue;
    if (SequenceOffset(node.sequence, me->sequence) > 0) {
      decision.successor = true;
      break;
    }
    if (node.sequence == me->sequence) continue;
    if (node.leases != me->leases) {
      decision.kind = SemaphoreDecision::Kind::kMismatch;
      decision.mismatch = node.name;
      decision.mismatch_leases = node.leases;
      return decision;
    }
    before.push_back(&node);
    asked += node.weight;
    smallest = std::min(smallest, node.weight);
  }
  if (asked + me->weight <= me->leases) {
    decision.kind = SemaphoreDecision::Kind::kAcquired;
    return decision;
  }
  decision.kind = SemaphoreDecision::Kind::kWait;
  decision.successor = false;
  // Prefix sums only grow along the queue: everything before me fits in N
  // exactly when all of it does, so each of those holds or may.
  decision.first_waiter = asked <= me->leases;
  if (decision.first_waiter) {
    for (const QueueNode* node : before) decision.watch.push_back(node->name);
    decision.any_one = asked - smallest + me->weight <= me->leases;
  } else {
    decision.watch.push_back(before.back()->name);
  }
  return decision;
}

bool CouldTakeLeasesNow(const std::vector<std::string>& children, int weight, int leases) {
  int64_t asked = 0;
  for (const std::string& child : children) {
    std::optional<QueueNode> node = ParseQueueNode(child);
    if (node.has_value() && node->mode == NodeMode::kLease) asked += node->weight;
  }
  return asked + weight <= leases;
}

}  // namespace internal
}  // namespace zkr
