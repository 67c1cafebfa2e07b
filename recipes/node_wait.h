// WaitForNode: block until a znode exists (or is gone), with one watch per
// round and no polling. The building block of the barrier recipes.
#ifndef ZKRECIPES_RECIPES_NODE_WAIT_H_
#define ZKRECIPES_RECIPES_NODE_WAIT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/retry.h"  // AwaitConnected, for the callers that wait between rounds
#include "src/session_core.h"

namespace zkr {
namespace internal {

// Deadlines are times on the session's monotonic clock
// (core.clock().Monotonic()); InfiniteDuration() waits for ever.

// Waits until `path` exists (want_exists) or is absent. Retries after a
// connection loss; fails with a session-lost status if the session is lost,
// DeadlineExceeded (naming the path) at `deadline`. Leaves no watch on the
// server when it returns: a data watch (set only on an existing node) waits
// for a deletion; an exists watch, cancelled unless it fired, for a
// creation. Callable from any thread except the ZooKeeper completion thread
// (dispatcher callbacks included).
absl::Status WaitForNode(SessionCore& core, const std::string& path, bool want_exists,
                         absl::Duration deadline);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_NODE_WAIT_H_
