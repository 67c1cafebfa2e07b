#include "recipes/queue_decision.h"

#include <algorithm>
#include <optional>

namespace zkr {
namespace internal {

QueueDecision DecideQueue(const std::vector<std::string>& children, absl::string_view my_name,
                          bool accepted, const NodeScheme& scheme) {
  std::optional<QueueNode> me = ParseQueueNode(my_name, scheme);
  if (!me.has_value() || me->mode == NodeMode::kLease ||
      std::find(children.begin(), children.end(), my_name) == children.end()) {
    return {QueueDecision::Kind::kLost, "", 0};
  }

  // Walk the nodes strictly before mine, in order; remember the last one that
  // blocks me (any node for a writer, a writer or a semaphore's for a reader).
  std::string blocker;
  int blockers = 0;
  bool earliest = true;
  std::string foreign;
  const std::vector<QueueNode> queue = ParseQueue(children, me->sequence, scheme, &foreign);
  if (!foreign.empty()) return {QueueDecision::Kind::kForeign, std::move(foreign), 0};
  for (const QueueNode& node : queue) {
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

bool CouldAcquireNow(const std::vector<std::string>& children, NodeMode mode,
                     const NodeScheme& scheme) {
  for (const std::string& child : children) {
    std::optional<QueueNode> node = ParseQueueNode(child, scheme);
    if (node.has_value() && node->mode != NodeMode::kLease &&
        (mode == NodeMode::kWrite || node->mode == NodeMode::kWrite)) {
      return false;
    }
  }
  return true;
}

bool HasOtherKind(const std::vector<std::string>& children, NodeMode mode,
                  const NodeScheme& scheme) {
  return std::any_of(children.begin(), children.end(), [mode, &scheme](const std::string& child) {
    // Parsed once; only a name that does not parse can be foreign.
    std::optional<QueueNode> node = ParseQueueNode(child, scheme);
    if (!node.has_value()) return IsForeignNode(child, scheme);
    return (node->mode == NodeMode::kLease) != (mode == NodeMode::kLease);
  });
}

}  // namespace internal
}  // namespace zkr
