// Translation of ZooKeeper C client return codes into absl::Status.
#ifndef ZKRECIPES_SRC_ZK_STATUS_H_
#define ZKRECIPES_SRC_ZK_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace zkr {
namespace internal {

// The absl code for a ZooKeeper return code (see zkrecipes/status.h).
absl::StatusCode ZkCodeToStatusCode(int rc);

// "<op> <path>: <zerror(rc)> (<rc>)" with the rc attached as a payload;
// OK for ZOK.
absl::Status ZkStatus(int rc, absl::string_view op, absl::string_view path);

// Whether a failure is worth retrying the same request for, once connected:
// the connection was lost (the outcome of a write is unknown), the request
// timed out, or the server throttled it (Unavailable). The one definition;
// everything that retries asks it.
bool IsRetryable(const absl::Status& status);

// A session-lost status not produced by the server (e.g. our lease ran out).
absl::Status SessionLostStatus(absl::string_view op, absl::string_view path);

// `status` with another message, its payloads kept (IsSessionLost(),
// ZooKeeperCode() still answer).
absl::Status Restate(const absl::Status& status, absl::string_view message);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_ZK_STATUS_H_
