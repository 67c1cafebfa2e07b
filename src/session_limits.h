// What a session accepts: its options, and the size of a request (the
// server's packet limit). SessionCore (src/session_core.h) applies them.
#ifndef ZKRECIPES_SRC_SESSION_LIMITS_H_
#define ZKRECIPES_SRC_SESSION_LIMITS_H_

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "zkrecipes/session_options.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace internal {

// OK, or InvalidArgument naming the first option out of its range (connect
// string, timeouts, digest credentials, request limit, retry attempts).
absl::Status ValidateSessionOptions(const SessionOptions& options);

// SessionCore::OpBytes and CheckRequestSize (src/session_core.h) for a
// session with `options` and `default_acl`.
size_t OpBytes(const SessionOptions& options, const std::vector<Acl>& default_acl,
               size_t path_bytes, const std::vector<Acl>* acl);
absl::Status CheckRequestSize(const SessionOptions& options, absl::string_view op,
                              absl::string_view path, size_t data_bytes);

// On reconnect the C client sets every watch of the session again in one
// SetWatches packet, which the server drops (with the connection, on every
// attempt) if it is longer than its jute.maxbuffer: what the watched paths
// may take of that packet (WatchRegistry::Limit, src/watch_registry.h),
// and what each path takes beside its own bytes (its length field and the
// connect string's chroot).
size_t WatchBytesLimit(const SessionOptions& options);
size_t WatchedPathOverhead(const SessionOptions& options);
// What a session's recipes may reserve of it (src/watch_budget.h): seven
// eighths, the rest covering watches whose removal is not answered yet
// (the C client holds them until it is), so that a recipe admitted is never
// left without its watch.
size_t WatchReservationLimit(const SessionOptions& options);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_SESSION_LIMITS_H_
