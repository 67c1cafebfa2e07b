// Checks of what a session is given (the request-size checks are
// SessionCore's: src/session_core.h, defined in src/session_limits.cc).
#ifndef ZKRECIPES_SRC_SESSION_LIMITS_H_
#define ZKRECIPES_SRC_SESSION_LIMITS_H_

#include "absl/status/status.h"
#include "zkrecipes/session_options.h"

namespace zkr {
namespace internal {

// OK, or InvalidArgument naming the first option out of its range (connect
// string, timeouts, digest credentials, request limit, retry attempts).
absl::Status ValidateSessionOptions(const SessionOptions& options);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_SESSION_LIMITS_H_
