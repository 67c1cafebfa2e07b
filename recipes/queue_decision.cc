#include "recipes/queue_decision.h"

#include <algorithm>
#include <optional>

namespace zkr {
namespace internal {

QueueDecision DecideQueue(const std::vector<std::string>& children, absl::string_view my_name) {
  std::optional<QueueNode> me = ParseQueueNode(my_name);
  if (!me.has_value() || me->mode == NodeMode::kLease ||
      std::find(children.begin(), children.end(), my_name) == children.end()) {
    return {QueueDecision::Kind::kLost, "", 0};
  }
  // Walk the nodes strictly before mine, in order; remember the last one that
  // blocks me (any node for a writer, a writer for a reader).
  std::string blocker;
  int blockers = 0;
  for (const QueueNode& node : ParseQueue(children, me->sequence)) {
    if (SequenceOffset(node.sequence, me->sequence) >= 0) break;
    if (node.mode == NodeMode::kLease) continue;  // a semaphore's: not ours
    if (me->mode == NodeMode::kWrite || node.mode == NodeMode::kWrite) {
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

}  // namespace internal
}  // namespace zkr
