// The options of a zkr::Session (zkrecipes/session.h) and of its
// operations: plain values, in a leaf header that every layer may include
// (the session manager under src/ reads them without seeing the Session
// class above it).
#ifndef ZKRECIPES_SESSION_OPTIONS_H_
#define ZKRECIPES_SESSION_OPTIONS_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "zkrecipes/types.h"

namespace zkr {

// Held by pointer only: zkrecipes/clock.h and zkrecipes/observer.h define
// them (zkrecipes/session.h includes both).
class Clock;
class Observer;

// Bounded exponential backoff with jitter, for idempotent operations (reads
// and deletes) that fail with Unavailable (connection loss).
struct RetryPolicy {
  // Total attempts per operation, the first included. 1 = no retry.
  int max_attempts = 5;
  // Backoff before the second attempt; doubles each retry (plus up to 50%
  // jitter), capped at max_backoff.
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(2);
};

struct SessionOptions {
  // "host:port[,host:port...][/chroot]". Required.
  std::string connect;
  // Requested session timeout; the server may negotiate it into its
  // [min, max] range (see negotiated_timeout()). At least 100 ms (the C
  // client never connects below a round trip or two), at most 24 hours.
  absl::Duration session_timeout = absl::Seconds(10);
  // How long Connect() waits for the first connection.
  absl::Duration connect_timeout = absl::Seconds(15);
  // Retry of idempotent operations on connection loss.
  RetryPolicy retry;
  // Digest credentials "user:password" added to every session generation;
  // empty for none.
  std::string digest_auth;
  // ACL for nodes this session creates (recipes included) unless an
  // operation names its own; empty means OpenAcl().
  std::vector<Acl> default_acl;
  // Where the C client's log lines go. Process-wide: the C client has one
  // log callback for all handles, so the most recently connected session's
  // sink receives every handle's lines. Empty: stderr.
  std::function<void(absl::string_view line)> log_sink;
  ClientLogLevel log_level = ClientLogLevel::kWarn;
  // After LOST, open a new session (generation) automatically.
  bool reconnect_after_loss = true;
  // Subtracted from the lease clock so that local belief ends before the
  // server could expire the session. Default: 1/15 of the negotiated timeout.
  std::optional<absl::Duration> lease_margin;
  // Where the lease clock is read (see zkrecipes/clock.h). Null: SystemClock().
  std::shared_ptr<Clock> clock;
  // The server's packet limit: its jute.maxbuffer (0xfffff, 1 MB less one
  // byte, unless raised there). A write whose request (data, path and
  // headers) would be longer is refused up front with InvalidArgument
  // naming both sizes, never sent: the server drops the connection of a
  // client that sends a longer packet, and a retried write would make the
  // session flap. Applies to every write, the session's own and those a
  // recipe makes for the caller (node data, purpose, revocation reason).
  // It also bounds the session's watches: after a reconnect the C client
  // sets every one again in a single packet, and one longer than the limit
  // would be dropped on every attempt until the session expired. Every
  // watcher reserves its watches' bytes before it sets one, 7/8 of this
  // limit between them (waits and holds of locks, semaphores and elections,
  // observers, group watches, barrier waits, watching reads), and one that
  // does not fit is refused at once with ResourceExhausted, creating
  // nothing; what one reserved is never taken by another. README "Limits".
  size_t max_request_bytes = 0xfffff;
  // Told of acquisitions, session state changes, retries and election terms
  // with their timings, on the dispatcher thread (zkrecipes/observer.h).
  // Null (the default): nothing is measured or reported.
  std::shared_ptr<Observer> observer;
};

struct CreateOptions {
  // ACL of the new node; empty means the session's default_acl.
  std::vector<Acl> acl;
  // Create missing parents first (as container nodes if parents_as_containers).
  bool make_parents = false;
  bool parents_as_containers = true;
};

}  // namespace zkr

#endif  // ZKRECIPES_SESSION_OPTIONS_H_
