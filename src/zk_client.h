// ZkClient: what a session needs from one ZooKeeper handle (one session
// generation). An interface, so that a test can put a forwarding client that
// injects faults (src/testing/faulty_client.h) between a session and the
// real one; the real one is the adaptor over the C client (OpenCClient).
//
// Every completion carries an absl::Status (or StatusOr) built once, in the
// adaptor: the message names the operation and path, and the ZooKeeper code
// rides along as a payload (zkrecipes/status.h). Only the adaptor and the
// status mapper include zookeeper.h. IsRetryable() (src/zk_status.h) says
// whether a failure is worth retrying.
//
// Threads: every completion and watch callback runs on the C client's
// completion thread, except that a request the client refuses to queue
// (after Close(): Cancelled, or session lost after MarkLost()) completes
// inline on the calling thread. Callbacks must never block and never call a
// synchronous ZooKeeper function. REQUIRES for callers: do not hold a mutex
// that a callback takes while issuing a request (the inline completion would
// self-deadlock).
//
// Lifetime: Close() must be called (not from the completion thread) before
// the last reference goes; all pending completions then run (Cancelled, or
// session lost) and pending watches are dropped. Watch callbacks live in a
// registry owned by the client, never as raw memory handed to the C library.
#ifndef ZKRECIPES_SRC_ZK_CLIENT_H_
#define ZKRECIPES_SRC_ZK_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/child_list.h"
#include "zkrecipes/clock.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace internal {

// A node's data and metadata, as Get answers them.
struct NodeData {
  std::string data;
  Stat stat;
};

class ZkClient {
 public:
  // The handle's session events.
  enum class Event {
    kConnecting,  // the connection is lost; the client is reconnecting
    kConnected,   // connected (again) to the session
    kExpired,     // the server expired the session
    kAuthFailed,  // authentication failed: the handle is unusable
  };
  using EventFn = std::function<void(Event event)>;
  using WatchFn = std::function<void(const WatchEvent& event)>;

  using VoidDone = std::function<void(absl::Status status)>;
  using CreateDone = std::function<void(absl::StatusOr<CreateResult> created)>;
  // Exists: NotFound when the node is absent.
  using StatDone = std::function<void(absl::StatusOr<Stat> stat)>;
  using DataDone = std::function<void(absl::StatusOr<NodeData> node)>;
  using ChildrenDone = std::function<void(absl::StatusOr<ChildList> children)>;
  // `results` has one entry per op when the server answered (OK or not).
  using MultiDone = std::function<void(absl::Status status, std::vector<OpResult> results)>;

  virtual ~ZkClient() = default;

  // Closes the handle (the server deletes the session's ephemeral nodes if it
  // can be reached). Idempotent. REQUIRES: not on the completion thread.
  virtual void Close() = 0;
  // How long a later Close() may first wait for the connection and for the
  // answers in flight, so that the server reads its close (0, the default:
  // not at all). The session sets it within the lease: a process that ends
  // after Close() must not outlive the hold it had.
  virtual void SetCloseSettle(absl::Duration settle) { (void)settle; }
  // Marks the session of this handle as lost (expired, or its lease ran
  // out): from now on, requests that the close cuts short, or that come
  // after it, complete with a session-lost status (IsSessionLost) rather
  // than Cancelled (which is kept for the user's own Close()).
  virtual void MarkLost() = 0;

  // The session id and password (valid once connected).
  virtual int64_t session_id() const = 0;
  virtual std::string password() const = 0;
  // Negotiated timeout (valid once connected).
  virtual absl::Duration negotiated_timeout() const = 0;
  // "host:port" of the server this handle is connected to, or empty.
  virtual std::string current_server() const = 0;
  // The send time, on the clock's Monotonic(), of the latest request the
  // server has answered: the server heard from this session no earlier than
  // that. Zero until the first answer.
  virtual absl::Duration last_response() const = 0;

  virtual void Create(const std::string& path, absl::string_view data, CreateMode mode,
                      const std::vector<Acl>& acl, CreateDone done) = 0;
  virtual void Delete(const std::string& path, int32_t version, VoidDone done) = 0;
  // The same, answered on the calling thread: the C client's I/O thread
  // wakes the caller directly, one thread hop fewer than a completion.
  // Blocks until the server answers or the connection fails.
  // REQUIRES: not on the completion thread.
  virtual absl::Status DeleteBlocking(const std::string& path, int32_t version) = 0;
  // The watch calls return the watch's id (0 without one), for
  // CancelWatch(). With a non-null `watch`, an exists-watch is left also
  // when the node is absent (it fires on creation).
  virtual uintptr_t Exists(const std::string& path, WatchFn watch, StatDone done) = 0;
  // With a non-null `watch`, a data watch is left only if the node exists.
  virtual uintptr_t Get(const std::string& path, WatchFn watch, DataDone done) = 0;
  virtual void Set(const std::string& path, absl::string_view data, int32_t version,
                   StatDone done) = 0;
  virtual uintptr_t GetChildren(const std::string& path, WatchFn watch, ChildrenDone done) = 0;
  // Gives up watch `id`: it will not fire, and once no other watch of ours
  // (of the same kind) remains on its path, the server forgets it too
  // (removed locally even if the server cannot be reached). No effect once
  // it fired or was never set.
  virtual void CancelWatch(uintptr_t id) = 0;
  // True while watch `id` is set on the server (its request answered, not
  // fired, not cancelled).
  virtual bool WatchArmed(uintptr_t id) const = 0;
  // The paths we still wait on, sorted: those with a watch of ours (data or
  // child) that is set or being set, and neither fired nor cancelled. A
  // watch the server holds for this session on any other path is one no
  // one waits for (the integration tests check that none is left behind).
  virtual std::vector<std::string> WaitedPaths() const = 0;
  // Bounds the watches (src/watch_registry.h): a watch that would take the
  // reconnect packet's paths past `max_bytes` (each path `path_overhead`
  // bytes beside its own) completes its request at once, on the calling
  // thread, with ResourceExhausted, and sets nothing. Called once, before
  // any request.
  virtual void LimitWatches(size_t max_bytes, size_t path_overhead) = 0;
  virtual void Multi(const std::vector<Op>& ops, const std::vector<Acl>& default_acl,
                     MultiDone done) = 0;
  virtual void AddAuth(const std::string& scheme, const std::string& credentials,
                       VoidDone done) = 0;
};

// Makes the client of each session generation. A test passes one that wraps
// OpenCClient (src/testing/faulty_client.h).
using ClientFactory = std::function<absl::StatusOr<std::shared_ptr<ZkClient>>(
    const std::string& connect, absl::Duration session_timeout, std::shared_ptr<Clock> clock,
    ZkClient::EventFn on_event)>;

// The adaptor over the C client: starts connecting (does not wait).
// `on_event` runs on the completion thread for every session event.
absl::StatusOr<std::shared_ptr<ZkClient>> OpenCClient(const std::string& connect,
                                                      absl::Duration session_timeout,
                                                      std::shared_ptr<Clock> clock,
                                                      ZkClient::EventFn on_event);

// True on the C client's completion thread (inside any callback above).
bool OnCompletionThread();

// The least time between two routine DNS resolutions of the server list (the
// C client's default is one per poll of its socket).
inline constexpr int kServerResolutionDelayMs = 1000;

// Installs the process-wide C client log sink and level (empty sink: stderr).
void SetClientLog(std::function<void(absl::string_view)> sink, ClientLogLevel level);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_ZK_CLIENT_H_
