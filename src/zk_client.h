// ZkClient: RAII ownership of one zhandle_t (one ZooKeeper session
// generation) and an asynchronous adaptor over the C client with
// std::function completions.
//
// Threads: every completion and watch callback runs on the C client's
// completion thread, except that a request the C client refuses to queue
// (e.g. after Close(): ZCLOSING) completes inline on the calling thread.
// Callbacks must never block and never call a synchronous ZooKeeper function.
// REQUIRES for callers: do not hold a mutex that a callback takes while
// issuing a request (the inline completion would self-deadlock).
//
// Lifetime: Close() must be called (not from the completion thread) before
// the last reference goes; all pending completions then run with ZCLOSING and
// pending watches are dropped. Watch callbacks live in a registry owned by the
// client, never as raw memory handed to the C library.
#ifndef ZKRECIPES_SRC_ZK_CLIENT_H_
#define ZKRECIPES_SRC_ZK_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "zkrecipes/session.h"

typedef struct _zhandle zhandle_t;

namespace zkr {

class PendingCall;

// The least time between two routine DNS resolutions of the server list (the
// C client's default is one per poll of its socket).
inline constexpr int kServerResolutionDelayMs = 1000;

class ZkClient {
 public:
  // C-client session state changes (ZOO_CONNECTED_STATE, ...).
  using SessionEventFn = std::function<void(int zk_state)>;
  // A watch firing: ZOO_CREATED_EVENT etc. and the path.
  using WatchFn = std::function<void(int zk_event_type, const std::string& path)>;

  using VoidDone = std::function<void(int rc)>;
  using CreateDone = std::function<void(int rc, const std::string& path, const Stat& stat)>;
  using StatDone = std::function<void(int rc, const Stat& stat)>;
  using DataDone = std::function<void(int rc, std::string data, const Stat& stat)>;
  using ChildrenDone = std::function<void(int rc, std::vector<std::string> children)>;
  using MultiDone = std::function<void(int rc, std::vector<OpResult> results)>;

  // Starts connecting (does not wait). `on_event` runs on the completion
  // thread for every session event of this handle.
  static absl::StatusOr<std::shared_ptr<ZkClient>> Open(const std::string& connect,
                                                        absl::Duration session_timeout,
                                                        std::shared_ptr<Clock> clock,
                                                        SessionEventFn on_event);
  ZkClient(const ZkClient&) = delete;
  ZkClient& operator=(const ZkClient&) = delete;
  ~ZkClient();

  // Closes the handle (the server deletes the session's ephemeral nodes if it
  // can be reached). Idempotent. REQUIRES: not on the completion thread.
  void Close() ABSL_LOCKS_EXCLUDED(mu_);
  // Marks the session of this handle as lost (expired, or its lease ran
  // out): from now on, requests that the close cuts short, or that come
  // after it, complete with ZSESSIONEXPIRED rather than ZCLOSING (which is
  // kept for the user's own Close()).
  void MarkLost() { lost_.store(true); }
  // ZCLOSING, or ZSESSIONEXPIRED once MarkLost() was called.
  int ClosedCode() const;
  // `rc` with ZCLOSING read as above.
  int Outcome(int rc) const { return rc == ZkClosingCode() ? ClosedCode() : rc; }

  // The session id and password (valid once connected).
  int64_t session_id() const;
  std::string password() const;
  // Negotiated timeout (valid once connected).
  absl::Duration negotiated_timeout() const;
  // "host:port" of the server this handle is connected to, or empty.
  std::string current_server() const;
  // The send time, on the clock's Monotonic(), of the latest request the
  // server has answered: the server heard from this session no earlier than
  // that. Zero until the first answer.
  absl::Duration last_response() const;
  const Clock& clock() const { return *clock_; }

  void Create(const std::string& path, absl::string_view data, CreateMode mode,
              const std::vector<Acl>& acl, CreateDone done);
  void Delete(const std::string& path, int32_t version, VoidDone done);
  // The same, answered on the calling thread: the C client's I/O thread wakes
  // the caller directly, one thread hop fewer than a completion. Blocks until
  // the server answers or the connection fails. REQUIRES: not on the
  // completion thread.
  int DeleteBlocking(const std::string& path, int32_t version);
  // The watch calls return the watch's id (0 without one), for
  // CancelWatch().
  // With a non-null `watch`, an exists-watch is left also when the node is
  // absent (it fires on creation).
  uintptr_t Exists(const std::string& path, WatchFn watch, StatDone done);
  // With a non-null `watch`, a data watch is left only if the node exists.
  uintptr_t Get(const std::string& path, WatchFn watch, DataDone done);
  void Set(const std::string& path, absl::string_view data, int32_t version, StatDone done);
  uintptr_t GetChildren(const std::string& path, WatchFn watch, ChildrenDone done);
  // Gives up watch `id`: it will not fire, and once no other watch of ours
  // (of the same kind) remains on its path, the server forgets it too
  // (removed locally even if the server cannot be reached). No effect once
  // it fired or was never set.
  void CancelWatch(uintptr_t id) ABSL_LOCKS_EXCLUDED(mu_);
  // True while watch `id` is set on the server (its request answered, not
  // fired, not cancelled).
  bool WatchArmed(uintptr_t id) const ABSL_LOCKS_EXCLUDED(mu_);
  void Multi(const std::vector<Op>& ops, const std::vector<Acl>& default_acl,
             MultiDone done);
  void AddAuth(const std::string& scheme, const std::string& credentials, VoidDone done);

  // Test-only fault injection: the replies of the next `count` creates whose
  // path starts with `path_prefix` are reported as ZCONNECTIONLOSS although
  // the server applied them — a reply lost on the network.
  static void DropNextCreateReplies(const std::string& path_prefix, int count);
  // Test-only: the next `count` deletes whose path starts with `path_prefix`
  // never reach the server and complete with ZCONNECTIONLOSS — a request
  // lost with its connection.
  static void LoseNextDeletes(const std::string& path_prefix, int count);
  // Test-only: the replies of the next `count` getChildren requests whose
  // path starts with `path_prefix` are reported as ZCONNECTIONLOSS — a
  // listing lost on the network.
  static void DropNextChildrenReplies(const std::string& path_prefix, int count);

  // True on the C client's completion thread (inside any callback above).
  static bool OnCompletionThread();

  // Internal trampolines' access.
  void NoteResponse(absl::Duration sent_at);
  void Untrack(PendingCall* call) ABSL_LOCKS_EXCLUDED(mu_);
  void DispatchWatch(uintptr_t id, int type, int state, const char* path)
      ABSL_LOCKS_EXCLUDED(mu_);
  void DispatchSessionEvent(int state);

 private:
  ZkClient(std::shared_ptr<Clock> clock, SessionEventFn on_event);

  // Brackets a call into the C library; false once closing (then the caller
  // completes inline with ZCLOSING).
  bool BeginCall() ABSL_LOCKS_EXCLUDED(mu_);
  void EndCall() ABSL_LOCKS_EXCLUDED(mu_);
  // Starts tracking a request until its trampoline (or Close) completes it.
  template <typename C>
  C* Track(C* call) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    pending_.insert(call);
    return call;
  }
  // Completes a request the C library refused to queue.
  void Refused(PendingCall* call, int rc) ABSL_LOCKS_EXCLUDED(mu_);
  // One watch of ours. Data watches (exists, get) and child watches are the
  // server's two kinds.
  struct WatchEntry {
    WatchFn fn;  // null once cancelled
    std::string path;
    bool child = false;
    bool armed = false;      // the request's reply set it
    bool cancelled = false;  // given up before the reply came
  };
  // Registers a watch; 0 for none.
  uintptr_t RegisterWatch(const std::string& path, bool child, WatchFn watch)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The request that set watch `id` was answered: `set` says whether the
  // server now holds the watch.
  void WatchReplied(uintptr_t id, bool set) ABSL_LOCKS_EXCLUDED(mu_);
  // Where a server watch lives: its path and kind.
  struct WatchPlace {
    std::string path;
    bool child = false;
  };
  // Forgets entry `it`; returns its place when it was the last of ours of
  // its kind on its path (the server's watch may then go).
  std::optional<WatchPlace> EraseWatch(absl::flat_hash_map<uintptr_t, WatchEntry>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Asks the server (and the C client) to forget our watches of one kind on
  // a path.
  void RemoveServerWatches(const WatchPlace& place) ABSL_LOCKS_EXCLUDED(mu_);

  static int ZkClosingCode();
  const std::shared_ptr<Clock> clock_;
  std::atomic<bool> lost_{false};
  SessionEventFn on_event_;
  zhandle_t* zh_ = nullptr;
  std::atomic<int64_t> last_response_ns_{0};

  mutable absl::Mutex mu_;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  int active_calls_ ABSL_GUARDED_BY(mu_) = 0;
  uintptr_t next_watch_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uintptr_t, WatchEntry> watches_ ABSL_GUARDED_BY(mu_);
  // How many entries of watches_ are on each (kind, path): "c:/a" or "d:/a".
  absl::flat_hash_map<std::string, int> watches_per_path_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<PendingCall*> pending_ ABSL_GUARDED_BY(mu_);
};

// Installs the process-wide C client log sink and level (empty sink: stderr).
void SetClientLog(std::function<void(absl::string_view)> sink, ClientLogLevel level);

}  // namespace zkr

#endif  // ZKRECIPES_SRC_ZK_CLIENT_H_
