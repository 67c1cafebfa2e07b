#include "zkrecipes/inspect.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "recipes/barrier_member.h"
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

const size_t kMaxInspectedNodes = 2000;

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
    // Its grace line (RevokeRequestData) is for the holder; people see the reason.
    if (reason.ok()) requests[node] = internal::ParseRevokeRequestData(*reason).first;
  }
  const internal::NodeScheme scheme = internal::DetectScheme(*children);
  std::vector<QueueNode> nodes = ParseQueue(*children, 0, scheme);
  if (nodes.empty()) return queue;
  // Each node is read and placed against the whole listing: beyond a few
  // thousand that is minutes, not an answer (issue 36): refused, named.
  if (nodes.size() > kMaxInspectedNodes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "inspect ", path, ": ", nodes.size(), " nodes are queued there, more than the ",
        kMaxInspectedNodes, " an inspection reads one by one; the directory's child count is ",
        children->size()));
  }
  // Order relative to a member: right also across the counter's wrap.
  nodes = ParseQueue(*children, nodes.front().sequence, scheme);
  for (const QueueNode& node : nodes) {
    Stat stat;
    absl::StatusOr<std::string> data = session.Get(JoinPath(path, node.name), &stat);
    if (absl::IsNotFound(data.status())) continue;  // left meanwhile
    if (!data.ok()) return data.status();
    QueueEntryInfo info;
    info.name = node.name;
    info.participant = node.participant;
    info.dialect = scheme.dialect;
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
      QueueDecision decision = DecideQueue(*children, node.name, false, scheme);
      info.holds = decision.kind == QueueDecision::Kind::kAcquired;
      if (decision.kind == QueueDecision::Kind::kWait) info.watching = {decision.watch};
    }
    if (!info.watching.empty()) info.watches = info.watching.back();
    if (auto request = requests.find(node.name); request != requests.end()) {
      info.revoke_requested = true;
      info.revoke_reason = request->second;
    }
    queue.push_back(std::move(info));
  }
  // A double barrier: its members' data says so, or its `ready` flag (an
  // older version's members). Nobody holds; nobody waits on another member.
  const bool barrier =
      std::find(children->begin(), children->end(), "ready") != children->end() ||
      std::any_of(queue.begin(), queue.end(), [](const QueueEntryInfo& e) {
        std::string id;
        int count;
        return internal::ParseBarrierMemberData(e.data, &id, &count);
      });
  if (!barrier) return queue;
  for (QueueEntryInfo& e : queue) {
    std::string id;
    int count = 0;
    if (internal::ParseBarrierMemberData(e.data, &id, &count)) {
      e.data = std::move(id);
      e.barrier_count = count;
    }
    e.barrier_member = true;
    e.holds = false;
    e.watching.clear();
    e.watches.clear();
  }
  return queue;
}

absl::StatusOr<std::vector<std::string>> FindQueuesBelow(Session& session, const std::string& path,
                                                         int depth, size_t limit) {
  ZKR_RETURN_IF_ERROR(ValidatePath(path));
  if (depth < 0) {
    return absl::InvalidArgumentError(absl::StrCat("find queues below ", path, ": depth ", depth,
                                                   " is negative (0 searches nothing below)"));
  }
  std::vector<std::string> queues;
  // Depth first, children in name order: the result comes out in tree order.
  std::vector<std::pair<std::string, int>> todo = {{path, 0}};
  while (!todo.empty() && queues.size() < limit) {
    auto [dir, level] = std::move(todo.back());
    todo.pop_back();
    absl::StatusOr<std::vector<std::string>> children = session.GetChildren(dir);
    if (absl::IsNotFound(children.status())) continue;  // gone meanwhile
    if (!children.ok()) return children.status();
    // A queue's participant nodes (ephemeral: no children) are not searched;
    // its other children (a directory someone made there) are.
    std::set<std::string> participants;
    for (const QueueNode& node : ParseQueue(*children, 0, internal::DetectScheme(*children))) {
      participants.insert(node.name);
    }
    if (dir != path && !participants.empty()) queues.push_back(dir);
    if (level == depth) continue;
    std::sort(children->rbegin(), children->rend());  // popped in name order
    for (const std::string& child : *children) {
      if (participants.count(child) == 0) todo.push_back({JoinPath(dir, child), level + 1});
    }
  }
  return queues;
}

}  // namespace zkr
