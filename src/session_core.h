// SessionCore: the session manager behind zkr::Session, and the interface the
// recipes use (they never touch zhandle_t; the core never knows a recipe).
//
// It owns the current ZkClient (one per generation), maps C client events to
// SessionState, keeps the lease clock, declares LOST when the lease runs out
// while disconnected, and opens the next generation after LOST.
//
// Threads:
//   * C client events arrive on the completion thread; "internal" listeners
//     (recipes) are called synchronously there, or on the supervisor thread
//     when the lease clock declares LOST, or on the Close() caller's thread.
//     They must not block.
//   * user listeners and user callbacks run on the dispatcher thread.
//   * the supervisor thread watches the lease and closes/opens handles (the
//     C client forbids zookeeper_close from its own callbacks).
#ifndef ZKRECIPES_SRC_SESSION_CORE_H_
#define ZKRECIPES_SRC_SESSION_CORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/callback_gate.h"
#include "src/delayed_tasks.h"
#include "src/delivery.h"
#include "src/dispatcher.h"
#include "src/event_reporter.h"
#include "src/watch_budget.h"
#include "src/zk_client.h"
#include "zkrecipes/clock.h"
#include "zkrecipes/session_options.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace internal {

class SessionCore : public std::enable_shared_from_this<SessionCore> {
 public:
  // A client and the generation it belongs to.
  struct Handle {
    std::shared_ptr<ZkClient> client;
    uint64_t generation = 0;
  };

  // Validates options, opens generation 1 and waits for it to connect.
  // `factory` makes each generation's client: the C client's adaptor, or in
  // a test one that injects faults (src/testing/faulty_client.h).
  static absl::StatusOr<std::shared_ptr<SessionCore>> Connect(
      SessionOptions options, ClientFactory factory = OpenCClient);
  ~SessionCore();
  // See Session::Close().
  void Close() ABSL_LOCKS_EXCLUDED(mu_);

  Handle current() const ABSL_LOCKS_EXCLUDED(mu_);
  SessionState state() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t generation() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t session_id() const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Duration negotiated_timeout() const ABSL_LOCKS_EXCLUDED(mu_);
  // The lease's end as a wall-clock time (for reporting), InfinitePast()
  // when there is none. Decide with WithinLease(), never by comparing this
  // with a wall clock.
  absl::Time valid_until() const ABSL_LOCKS_EXCLUDED(mu_);
  // True while the session's lease holds, measured on the monotonic clock.
  bool WithinLease() const ABSL_LOCKS_EXCLUDED(mu_);
  // Time left on the lease (monotonic), zero or less once it has ended.
  absl::Duration LeaseRemaining() const ABSL_LOCKS_EXCLUDED(mu_);
  // How long a lease lasts from the send time of an answered request:
  // negotiated timeout - margin.
  absl::Duration LeaseLength() const ABSL_LOCKS_EXCLUDED(mu_);
  // The send time (monotonic) of the current generation's latest heartbeat
  // whose answer has been handled. Its answer runs on the completion thread
  // in the server's order, so read there it names a request the server
  // processed before whatever is being handled (recipes/revoke_watch.h).
  absl::Duration HeardInOrder() const ABSL_LOCKS_EXCLUDED(mu_);
  const Clock& clock() const { return *clock_; }
  bool closed() const ABSL_LOCKS_EXCLUDED(mu_);
  // True while `generation` is the current one and connected.
  bool IsConnected(uint64_t generation) const ABSL_LOCKS_EXCLUDED(mu_);
  // True once `generation` is over: superseded, lost or closed (its
  // ephemeral nodes are gone or going).
  bool GenerationOver(uint64_t generation) const ABSL_LOCKS_EXCLUDED(mu_);
  const SessionOptions& options() const { return options_; }
  // OK when a write of `data_bytes` of node data to `path` fits the
  // server's packet limit (SessionOptions::max_request_bytes); else
  // InvalidArgument naming `op`, the path, the size and the limit. Every
  // write is checked before it is sent (the server would drop the
  // connection). `data_bytes` may sum a multi's ops.
  absl::Status CheckRequestSize(absl::string_view op, absl::string_view path,
                                size_t data_bytes) const;
  // What a write carries besides its node data, to add to `data_bytes`
  // above: one op's path, header and fields, with `acl` when it creates
  // (empty: the session's default ACL).
  size_t OpBytes(absl::string_view path, const std::vector<Acl>* acl = nullptr) const {
    return OpBytes(path.size(), acl);
  }
  // The same for a path of `path_bytes`.
  size_t OpBytes(size_t path_bytes, const std::vector<Acl>* acl = nullptr) const;
  // The session's watch budget (src/watch_budget.h): every recipe reserves
  // the bytes of the paths it will watch before it sets a watch, and is
  // refused with ResourceExhausted when they would not fit.
  const std::shared_ptr<WatchBudget>& watch_budget() const { return watch_budget_; }
  // `watch`, holding a reservation of the bytes of a watch on `path` until
  // the function is destroyed (it fired, was cancelled, or went with its
  // client): ResourceExhausted naming `what` if the budget lacks them, before
  // anything is sent. A null `watch` is returned as it is.
  absl::StatusOr<ZkClient::WatchFn> ReservedWatch(const std::string& path, absl::string_view what,
                                                  ZkClient::WatchFn watch) const;
  // What one watched path of `path_bytes` takes of that budget.
  size_t WatchedPathBytes(size_t path_bytes) const;
  // The ACL for nodes that do not name their own.
  const std::vector<Acl>& default_acl() const { return default_acl_; }
  Dispatcher& dispatcher() { return *dispatcher_; }
  // The user's observer (SessionOptions::observer); events().on() is false
  // without one.
  const EventReporter& events() const { return events_; }
  // Reports a retry of `operation` on `path` (if observed): `attempt`
  // failed with `reason`; the next waits `backoff`, or for the connection.
  void ReportRetry(absl::string_view operation, const std::string& path, int attempt,
                   const absl::Status& reason,
                   absl::Duration backoff = absl::ZeroDuration()) const;
  // Work a recipe defers (arming a holder's own-node watch): the process's
  // DelayedTasks. Its tasks run on its own thread and must not block; they
  // may run after Close() (they hold weak references).
  DelayedTasks& delayed() { return DelayedTasks::Shared(); }

  // Internal listeners: see the thread notes above. Return an id.
  int AddInternalListener(StateListener listener) ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveInternalListener(int id) ABSL_LOCKS_EXCLUDED(mu_);
  // User listeners: run on the dispatcher thread. Removing one waits for
  // its call in progress (not when removed from inside that call).
  int AddUserListener(StateListener listener) ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveUserListener(int id) ABSL_LOCKS_EXCLUDED(mu_);

  // Runs `fn(OK)` once `generation` is connected: inline now if it is, else
  // on its next CONNECTED/RECONNECTED. Runs `fn(<session lost>)` if the
  // generation is lost or superseded first, `fn(Cancelled)` on Close().
  void WhenConnected(uint64_t generation, std::function<void(absl::Status)> fn)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  SessionCore(SessionOptions options, ClientFactory factory);
  absl::Status OpenGeneration() ABSL_LOCKS_EXCLUDED(mu_);
  void OnClientEvent(uint64_t generation, ZkClient::Event event) ABSL_LOCKS_EXCLUDED(mu_);
  // Sets the state and collects what to notify; call Notify() after unlocking.
  struct Notice {
    SessionState state;
    uint64_t generation;
    std::vector<std::function<void(absl::Status)>> waiters;
    absl::Status waiter_status;
  };
  Notice SetState(SessionState state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Notify(Notice notice) ABSL_LOCKS_EXCLUDED(mu_);
  // The lease's end on the monotonic clock; -InfiniteDuration() for none.
  absl::Duration LeaseEnd() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration NegotiatedTimeoutLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration LeaseLengthLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends a cheap request whose answer renews the lease. Heartbeats are
  // paced, not serialised: a slow server may have several to answer.
  void SendHeartbeat(const std::shared_ptr<ZkClient>& client, uint64_t generation)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Supervise() ABSL_LOCKS_EXCLUDED(mu_);
  // Conditions for absl::Mutex::Await (the analysis checks their bodies).
  bool SupervisorHasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ConnectSettled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the first generation connected (and authenticated, and answered).
  bool FirstGenerationUsable() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SessionOptions options_;
  const ClientFactory client_factory_;
  const std::shared_ptr<Clock> clock_;
  const std::vector<Acl> default_acl_;
  std::unique_ptr<Dispatcher> dispatcher_;
  const EventReporter events_;
  const std::shared_ptr<WatchBudget> watch_budget_;

  mutable absl::Mutex mu_;
  std::shared_ptr<ZkClient> client_ ABSL_GUARDED_BY(mu_);
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  SessionState state_ ABSL_GUARDED_BY(mu_) = SessionState::kConnecting;
  bool generation_connected_once_ ABSL_GUARDED_BY(mu_) = false;
  // The first heartbeat answer of this generation: the server answers the
  // first request only once the session is usable.
  enum class FirstAnswer { kPending, kAnswered, kChrootMissing };
  FirstAnswer first_answer_ ABSL_GUARDED_BY(mu_) = FirstAnswer::kPending;
  absl::Duration last_heartbeat_ ABSL_GUARDED_BY(mu_);  // monotonic send time
  absl::Duration heard_in_order_ ABSL_GUARDED_BY(mu_);  // HeardInOrder()
  bool reopen_needed_ ABSL_GUARDED_BY(mu_) = false;
  bool auth_pending_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t state_changes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration state_since_ ABSL_GUARDED_BY(mu_);  // monotonic; observed sessions only
  uint64_t supervisor_seen_changes_ ABSL_GUARDED_BY(mu_) = 0;  // by the last wake-up
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool handles_closed_ ABSL_GUARDED_BY(mu_) = false;  // Close() has closed the handles
  absl::Status auth_status_ ABSL_GUARDED_BY(mu_);
  int next_listener_id_ ABSL_GUARDED_BY(mu_) = 1;
  // A btree: a waiting participant's listener costs its entry, not a tree node.
  // By value (every waiting participant has one: no allocation of its own
  // beyond its slot); Notify calls copies, outside the lock.
  absl::btree_map<int, StateListener> internal_listeners_ ABSL_GUARDED_BY(mu_);
  // A user's listener, and the gate its removal closes.
  struct UserListener {
    explicit UserListener(StateListener listener) : call(std::move(listener)) {}
    const StateListener call;
    const std::shared_ptr<CallbackGate> gate = std::make_shared<CallbackGate>();
  };
  std::map<int, std::shared_ptr<UserListener>> user_listeners_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void(absl::Status)>> connected_waiters_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<ZkClient>> clients_to_close_ ABSL_GUARDED_BY(mu_);

  std::thread supervisor_;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_SESSION_CORE_H_
