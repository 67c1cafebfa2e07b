// zkr::Observer: a hook for metrics and tracing — what the recipes of one
// session do, as events with their timings.
//
// Set SessionOptions::observer and the session reports:
//   * each lock or semaphore acquisition: queued (its place in the queue),
//     handed off (a node it waited on went), granted (how long it waited),
//     failed (timeout, cancel, error), released (how long it was held) or
//     lost (session lost, node deleted) — every grant ends in exactly one
//     of released or lost;
//   * each session state change, with how long the previous state lasted;
//   * each retry of an operation after a connection loss, with the reason;
//   * each election term, begun and ended.
// Elections report terms rather than acquisitions; barrier and group members
// report nothing of their own (their retries and the session's states are
// reported).
//
// Threads: every method runs on the session's dispatcher thread (the one
// that runs state listeners and async completions), one at a time, in the
// order the events happened, never while the library holds a lock of its
// own. It must return promptly: while it runs, the session's other
// callbacks wait. It may call Session methods, but should not block on
// recipes (a metrics counter is what it is for).
//
// Cost: with no observer set (the default) the recipes read no clock and
// build no event. With one, each event is one task posted to the dispatcher.
//
// Example (counting into the user's own metrics):
//   class Counting : public zkr::Observer {
//    public:
//     void OnGranted(const zkr::AcquisitionGranted& e) override {
//       metrics::Histogram("lock_wait_ms").Add(absl::ToDoubleMilliseconds(e.waited));
//     }
//     void OnLost(const zkr::HoldLost& e) override { metrics::Counter("lock_lost").Add(1); }
//   };
//   zkr::SessionOptions options;
//   options.observer = std::make_shared<Counting>();
#ifndef ZKRECIPES_OBSERVER_H_
#define ZKRECIPES_OBSERVER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "zkrecipes/types.h"

namespace zkr {

// What an acquisition asks for.
enum class AcquisitionKind {
  kRead,   // SharedLock::AcquireRead
  kWrite,  // SharedLock::AcquireWrite, ExclusiveLock
  kLease,  // Semaphore
};
// "read", "write", "lease".
absl::string_view AcquisitionKindName(AcquisitionKind kind);

// Who an acquisition event is about. `node` ties one attempt's events
// together (queued, handoffs, granted, then released or lost).
struct Acquisition {
  std::string path;  // the lock or semaphore directory
  std::string node;  // the attempt's node name ("" if none was created)
  AcquisitionKind kind = AcquisitionKind::kWrite;
  int weight = 1;  // leases asked (a semaphore); 1 for a lock
};

// The attempt's node is in the queue (reported once per attempt, after its
// first listing; not for a try-acquire that gave up before creating one).
struct AcquisitionQueued {
  Acquisition who;
  int position = 0;  // nodes ahead of it in that listing; 0: at the head
};

// A node the attempt waited on went (released, gave up or lost) or, for a
// semaphore waiter, took its leases: the attempt woke up.
struct Handoff {
  Acquisition who;
  std::string from;  // the node that changed; "" when unknown
  // The attempt holds now, without reading the queue again; false: it reads
  // the queue and may wait again (a wake-up that did not grant).
  bool granted = false;
  absl::Duration watched;  // how long it waited on that node
};

struct AcquisitionGranted {
  Acquisition who;
  absl::Duration waited;  // from the attempt's start to the grant
  int position = 0;       // as queued (AcquisitionQueued)
  int handoffs = 0;       // wake-ups on the way (0: granted at once)
};

// The attempt ended without a grant: timeout, try-acquire refused, cancel,
// session lost or closed, or an error; `status` says which.
struct AcquisitionFailed {
  Acquisition who;
  absl::Duration waited;  // from the attempt's start to its end
  absl::Status status;
};

struct Released {
  Acquisition who;
  absl::Duration held;      // from the grant to the release
  absl::Duration deleting;  // from the release to its node's deletion
};

// A hold that ended without a release: its session was lost or its node
// was deleted by someone else (an operator, zkr revoke).
struct HoldLost {
  Acquisition who;
  absl::Duration held;  // from the grant to the loss
  bool session_lost = false;  // else: the node was deleted
};

struct SessionStateChange {
  SessionState from = SessionState::kConnecting;
  SessionState to = SessionState::kConnecting;
  absl::Duration lasted;  // how long the session was in `from`
  uint64_t generation = 0;  // the generation `to` belongs to
};

// An operation failed with a transient error (connection loss) and is tried
// again: after `backoff` (a synchronous Session call), or once the session is
// connected again (the recipes' own steps).
struct Retry {
  std::string operation;  // e.g. "getChildren", "delete", "lock step LIST"
  std::string path;
  // The attempt that failed (1: the first), where the retrying part counts
  // them (synchronous calls, guaranteed deletes, lock steps); else 1.
  int attempt = 1;
  absl::Status reason;
  absl::Duration backoff;  // zero: waits for the connection instead
};

struct TermBegan {
  std::string path;  // the election directory
  std::string id;    // this candidate's id
  int64_t epoch = 0;  // LeaderElection::epoch()
  absl::Duration waited;  // from joining (or the last term) to leading
};

struct TermEnded {
  enum class Why {
    kYielded,  // Yield()
    kLeft,     // Leave(), LeaveAndHandOver() or the object destroyed
    kLost,     // session lost or closed, or the node deleted
  };
  std::string path;
  std::string id;
  int64_t epoch = 0;
  absl::Duration lasted;  // how long the term lasted
  Why why = Why::kLost;
};
// "yielded", "left", "lost".
absl::string_view TermEndName(TermEnded::Why why);

// Override what you need; the rest ignore their events. See the threads
// note above.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void OnQueued(const AcquisitionQueued& /*event*/) {}
  virtual void OnHandoff(const Handoff& /*event*/) {}
  virtual void OnGranted(const AcquisitionGranted& /*event*/) {}
  virtual void OnAcquireFailed(const AcquisitionFailed& /*event*/) {}
  virtual void OnReleased(const Released& /*event*/) {}
  virtual void OnLost(const HoldLost& /*event*/) {}
  virtual void OnSessionState(const SessionStateChange& /*event*/) {}
  virtual void OnRetry(const Retry& /*event*/) {}
  virtual void OnTermBegan(const TermBegan& /*event*/) {}
  virtual void OnTermEnded(const TermEnded& /*event*/) {}
};

}  // namespace zkr

#endif  // ZKRECIPES_OBSERVER_H_
