// How zkrecipes reports errors.
//
// Every fallible call returns absl::Status or absl::StatusOr<T>. Messages read
// "<op> <path>: <ZooKeeper error text> (<rc>)" and name the path or value
// involved. When the error came from ZooKeeper, the raw ZooKeeper return code
// rides along as a payload; ZooKeeperCode() reads it back, so callers can tell
// the two Aborted cases apart without parsing messages.
//
// Mapping (ZooKeeper code -> absl code):
//   ZOK                                       -> OK
//   ZNONODE, ZNOWATCHER                       -> NotFound
//   ZNODEEXISTS                               -> AlreadyExists
//   ZBADVERSION                               -> Aborted (re-read and redo)
//   ZNOTEMPTY, ZNOCHILDRENFOREPHEMERALS       -> FailedPrecondition
//   ZNOAUTH                                   -> PermissionDenied
//   ZAUTHFAILED                               -> Unauthenticated
//   ZCONNECTIONLOSS, ZOPERATIONTIMEOUT,
//   ZSESSIONMOVED                             -> Unavailable (a write's outcome
//                                                is unknown)
//   ZSESSIONEXPIRED, ZINVALIDSTATE            -> Aborted (session lost: start
//                                                the recipe again)
//   ZBADARGUMENTS, ZINVALIDACL                -> InvalidArgument
//   ZCLOSING                                  -> Cancelled
//   anything else                             -> Internal
// zkrecipes' own conditions: invalid path/option -> InvalidArgument; a caller's
// cancellation -> Cancelled; our own timeout -> DeadlineExceeded; misuse
// (release when not held, second enter) -> FailedPrecondition.
#ifndef ZKRECIPES_STATUS_H_
#define ZKRECIPES_STATUS_H_

#include <optional>

#include "absl/status/status.h"

namespace zkr {

// The raw ZooKeeper return code carried by `status`, if it came from ZooKeeper.
std::optional<int> ZooKeeperCode(const absl::Status& status);

// True when `status` says the ZooKeeper session is gone (expired, closed
// locally after its lease ran out, or no longer known to the server — its
// code -12, UNKNOWNSESSION): the recipe must be started again.
bool IsSessionLost(const absl::Status& status);

}  // namespace zkr

#endif  // ZKRECIPES_STATUS_H_
