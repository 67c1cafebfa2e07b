// Translation of ZooKeeper C client return codes into absl::Status.
#ifndef ZKRECIPES_SRC_ZK_STATUS_H_
#define ZKRECIPES_SRC_ZK_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace zkr {

// The absl code for a ZooKeeper return code (see zkrecipes/status.h).
absl::StatusCode ZkCodeToStatusCode(int rc);

// "<op> <path>: <zerror(rc)> (<rc>)" with the rc attached as a payload;
// OK for ZOK.
absl::Status ZkStatus(int rc, absl::string_view op, absl::string_view path);

// A session-lost status not produced by the server (e.g. our lease ran out).
absl::Status SessionLostStatus(absl::string_view op, absl::string_view path);

}  // namespace zkr

#endif  // ZKRECIPES_SRC_ZK_STATUS_H_
