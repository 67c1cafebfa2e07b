#include "recipes/queue_decision.h"

#include <algorithm>
#include <optional>

namespace zkr {
namespace internal {

QueueDecision DecideQueue(const ChildList& children, absl::string_view my_name,
                          bool accepted, const NodeScheme& scheme) {
  std::optional<QueueKey> me = ParseQueueKey(my_name, scheme);
  if (!me.has_value() || me->mode == NodeMode::kLease) return {QueueDecision::Kind::kLost, "", 0};

  // One pass, nothing copied or sorted (a deep queue's listing is long):
  // of the nodes strictly before mine in queue order — by sequence from
  // mine, then by name — the earliest, and the last one that blocks me (any
  // node for a writer, a writer or a semaphore's for a reader).
  struct Place {
    int64_t offset = 0;
    absl::string_view name;
    NodeMode mode = NodeMode::kWrite;
    bool found = false;
    bool After(int64_t other_offset, absl::string_view other_name) const {
      return offset != other_offset ? offset > other_offset : name > other_name;
    }
  };
  Place earliest, blocker;
  int blockers = 0;
  bool present = false;
  std::optional<absl::string_view> foreign;
  for (absl::string_view child : children) {
    present = present || child == my_name;
    std::optional<QueueKey> node = ParseQueueKey(child, scheme);
    if (!node.has_value()) {
      if (!foreign.has_value() && IsForeignNode(child, scheme)) foreign = child;
      continue;
    }
    const int64_t offset = SequenceOffset(node->sequence, me->sequence);
    if (offset >= 0) continue;  // mine, or after it
    if (!earliest.found || earliest.After(offset, child)) {
      earliest = {offset, child, node->mode, true};
    }
    if (node->mode == NodeMode::kLease || me->mode == NodeMode::kWrite ||
        node->mode == NodeMode::kWrite) {
      ++blockers;
      if (!blocker.found || !blocker.After(offset, child)) blocker = {offset, child, node->mode, true};
    }
  }
  if (!present) return {QueueDecision::Kind::kLost, "", 0};
  if (foreign.has_value()) return {QueueDecision::Kind::kForeign, std::string(*foreign), 0};
  if (earliest.found && earliest.mode == NodeMode::kLease && !accepted) {
    return {QueueDecision::Kind::kOtherKind, std::string(earliest.name), 0};
  }
  if (!blocker.found) return {QueueDecision::Kind::kAcquired, "", 0};
  return {QueueDecision::Kind::kWait, std::string(blocker.name), blockers};
}

bool CouldAcquireNow(const ChildList& children, NodeMode mode,
                     const NodeScheme& scheme) {
  for (absl::string_view child : children) {
    std::optional<QueueNode> node = ParseQueueNode(child, scheme);
    if (node.has_value() && node->mode != NodeMode::kLease &&
        (mode == NodeMode::kWrite || node->mode == NodeMode::kWrite)) {
      return false;
    }
  }
  return true;
}

bool HasOtherKind(const ChildList& children, NodeMode mode,
                  const NodeScheme& scheme) {
  return std::any_of(children.begin(), children.end(), [mode, &scheme](absl::string_view child) {
    // Parsed once; only a name that does not parse can be foreign.
    std::optional<QueueNode> node = ParseQueueNode(child, scheme);
    if (!node.has_value()) return IsForeignNode(child, scheme);
    return (node->mode == NodeMode::kLease) != (mode == NodeMode::kLease);
  });
}

}  // namespace internal
}  // namespace zkr
