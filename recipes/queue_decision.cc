#include "recipes/queue_decision.h"

#include <algorithm>
#include <optional>

namespace zkr {
namespace internal {

QueueDecision DecideQueue(const std::vector<std::string>& children, absl::string_view my_name,
                          bool accepted) {
  std::optional<QueueNode> me = ParseQueueNode(my_name);
  if (!me.has_value() || me->mode == NodeMode::kLease ||
      std::find(children.begin(), children.end(), my_name) == children.end()) {
    return {QueueDecision::Kind::kLost, "", 0};
  }
  // Walk the nodes strictly before mine, in order; remember the last one that
  // blocks me (any node for a writer, a writer or a semaphore's for a reader).
  std::string blocker;
  int blockers = 0;
  bool earliest = true;
  for (const QueueNode& node : ParseQueue(children, me->sequence)) {
    if (SequenceOffset(node.sequence, me->sequence) >= 0) break;
    const bool semaphore = node.mode == NodeMode::kLease;
    if (semaphore && earliest && !accepted) return {QueueDecision::Kind::kOtherKind, node.name, 0};
    earliest = false;
    if (semaphore || me->mode == NodeMode::kWrite || node.mode == NodeMode::kWrite) {
      blocker = node.name;
      ++blockers;
    }
  }
  if (blocker.empty()) return {QueueDecision::Kind::kAcquired, "", 0};
  return {QueueDecision::Kind::kWait, blocker, blockers};
}

bool CouldAcquireNow(const std::vector<std::string>& children, NodeMode mode) {
  for (const std::string& child : children) {
    std::optional<QueueNode> node = ParseQueueNode(child);
    if (node.has_value() && node->mode != NodeMode::kLease &&
        (mode == NodeMode::kWrite || node->mode == NodeMode::kWrite)) {
      return false;
    }
  }
  return true;
}

bool HasOtherKind(const std::vector<std::string>& children, NodeMode mode) {
  return std::any_of(children.begin(), children.end(), [mode](const std::string& child) {
    std::optional<QueueNode> node = ParseQueueNode(child);
    return node.has_value() && (node->mode == NodeMode::kLease) != (mode == NodeMode::kLease);
  });
}

}  // namespace internal
}  // namespace zkr
