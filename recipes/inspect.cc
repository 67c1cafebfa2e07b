#include "zkrecipes/inspect.h"

#include "recipes/queue_decision.h"
#include "recipes/queue_node.h"
#include "src/macros.h"
#include "src/paths.h"

namespace zkr {

using internal::ValidatePath;
using internal::JoinPath;
using internal::NodeMode;
using internal::QueueNode;
using internal::ParseQueue;
using internal::DecideQueue;
using internal::QueueDecision;

absl::StatusOr<std::vector<QueueEntryInfo>> InspectQueue(Session& session,
                                                         const std::string& path) {
  ZKR_RETURN_IF_ERROR(ValidatePath(path));
  absl::StatusOr<std::vector<std::string>> children = session.GetChildren(path);
  if (absl::IsNotFound(children.status())) return std::vector<QueueEntryInfo>();
  if (!children.ok()) return children.status();
  std::vector<QueueEntryInfo> queue;
  std::vector<QueueNode> nodes = ParseQueue(*children, 0);
  if (nodes.empty()) return queue;
  // Order relative to a member: right also across the counter's wrap.
  nodes = ParseQueue(*children, nodes.front().sequence);
  for (const QueueNode& node : nodes) {
    Stat stat;
    absl::StatusOr<std::string> data = session.Get(JoinPath(path, node.name), &stat);
    if (absl::IsNotFound(data.status())) continue;  // left meanwhile
    if (!data.ok()) return data.status();
    QueueEntryInfo info;
    info.name = node.name;
    info.participant = node.participant;
    info.write = node.mode == NodeMode::kWrite;
    info.sequence = node.sequence;
    info.session_id = stat.ephemeral_owner;
    info.created = absl::FromUnixMillis(stat.ctime);
    info.czxid = stat.czxid;
    info.data = std::move(*data);
    QueueDecision decision = DecideQueue(*children, node.name);
    info.holds = decision.kind == QueueDecision::Kind::kAcquired;
    info.watches = decision.watch;
    queue.push_back(std::move(info));
  }
  return queue;
}

}  // namespace zkr
