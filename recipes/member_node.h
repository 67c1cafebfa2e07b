// A member's node: one participant node that the queue engine creates
// without deciding anything — protected create (a create whose reply was
// lost is found again by its unique id, never made twice: a second node
// would be a phantom member) and guaranteed delete. A double-barrier member
// and a group member are one each.
//
// Threads: blocking calls, from any thread but the ZooKeeper client's.
#ifndef ZKRECIPES_RECIPES_MEMBER_NODE_H_
#define ZKRECIPES_RECIPES_MEMBER_NODE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "recipes/queue_entry.h"
#include "src/session_core.h"

namespace zkr {
namespace internal {

// Creates the member node `<label>_<pid>_<random>-W-<seq>` under `dir` with
// `data` by `deadline`, a time on the session's monotonic clock
// (core->clock().Monotonic(); InfiniteDuration() for none). On failure (its
// node, if any, deleted — waited for up to one session timeout) returns
// why; `what` names the act in errors.
absl::StatusOr<std::shared_ptr<QueueEntry>> CreateMemberNode(
    const std::shared_ptr<SessionCore>& core, const std::string& dir, const std::string& label,
    const std::string& data, const std::vector<Acl>& acl, absl::Duration deadline,
    absl::string_view what);

// Deletes it (retried after reconnects until it is gone or its session is),
// waiting for that up to one session timeout.
void RemoveMemberNode(const std::shared_ptr<QueueEntry>& entry);

// Writes `data` to its node (a group member's or an election candidate's),
// on the node's own session only: once that session is over (LOST, even
// before the server expires it and while a new session is connected) or
// the node is gone, FailedPrecondition ("<what> <dir>: <lost> (...)") and
// nothing is written. Otherwise the write's status (Unavailable: outcome
// unknown). The caller checks the size first (CheckCandidateData).
absl::Status SetMemberData(const std::shared_ptr<QueueEntry>& entry, absl::string_view data,
                           absl::string_view what, absl::string_view lost);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_MEMBER_NODE_H_
