#include "zkrecipes/inspect.h"

#include <map>

#include "recipes/queue_decision.h"
#include "recipes/queue_node.h"
#include "recipes/revoke_watch.h"
#include "recipes/semaphore_decision.h"
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
using internal::DecideSemaphore;
using internal::SemaphoreDecision;

absl::StatusOr<std::vector<QueueEntryInfo>> InspectQueue(Session& session,
                                                         const std::string& path) {
  ZKR_RETURN_IF_ERROR(ValidatePath(path));
  absl::StatusOr<std::vector<std::string>> children = session.GetChildren(path);
  if (absl::IsNotFound(children.status())) return std::vector<QueueEntryInfo>();
  if (!children.ok()) return children.status();
  std::vector<QueueEntryInfo> queue;
  // Pending revocation requests, by the node they ask.
  std::map<std::string, std::string> requests;
  for (const std::string& child : *children) {
    std::string node;
    if (!internal::IsRevokeRequest(child, &node)) continue;
    absl::StatusOr<std::string> reason = session.Get(JoinPath(path, child));
    if (reason.ok()) requests[node] = *std::move(reason);
  }
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
    if (node.mode == NodeMode::kLease) {
      info.leases = node.weight;
      info.semaphore_size = node.leases;
      SemaphoreDecision decision = DecideSemaphore(*children, node.name);
      info.holds = decision.kind == SemaphoreDecision::Kind::kAcquired;
      info.watching = std::move(decision.watch);
    } else {
      QueueDecision decision = DecideQueue(*children, node.name);
      info.holds = decision.kind == QueueDecision::Kind::kAcquired;
      if (!decision.watch.empty()) info.watching = {decision.watch};
    }
    if (!info.watching.empty()) info.watches = info.watching.back();
    if (auto request = requests.find(node.name); request != requests.end()) {
      info.revoke_requested = true;
      info.revoke_reason = request->second;
    }
    queue.push_back(std::move(info));
  }
  return queue;
}

}  // namespace zkr
