// zkr::Session: one ZooKeeper session per process, shared by every recipe.
//
// A Session owns a connection to a ZooKeeper ensemble through the official
// multi-threaded C client and gives recipes and users:
//   * a connection-state model (SessionState) with listeners;
//   * a conservative local lease clock, valid_until(): the latest time at
//     which this process may still believe its session (and so its ephemeral
//     nodes, locks and leadership) is alive;
//   * automatic recovery: after LOST a new session (a new generation) is
//     opened;
//   * synchronous and asynchronous ZooKeeper operations returning absl::Status
//     (mapping in zkrecipes/status.h).
//
// Thread safety: a Session is safe for concurrent use from any number of
// threads without external synchronisation.
//
// Callbacks: state listeners, asynchronous completions and watches run on the
// session's dispatcher thread, one at a time, in order. They may call any
// Session method (including the synchronous ones) but should return promptly:
// while one runs, the others wait. Nothing user-supplied ever runs on the
// ZooKeeper client's own threads.
//
// Example:
//   zkr::SessionOptions options;
//   options.connect = "zk1:2181,zk2:2181,zk3:2181/myapp";
//   absl::StatusOr<std::unique_ptr<zkr::Session>> session =
//       zkr::Session::Connect(options);
//   if (!session.ok()) return session.status();
//   auto created = (*session)->Create("/jobs/job-", "payload",
//                                     zkr::CreateMode::kPersistentSequential);
#ifndef ZKRECIPES_SESSION_H_
#define ZKRECIPES_SESSION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "zkrecipes/clock.h"
#include "zkrecipes/observer.h"
#include "zkrecipes/session_options.h"
#include "zkrecipes/types.h"

namespace zkr {

namespace internal {
class SessionCore;
class SessionAccess;
}  // namespace internal

class Session {
 public:
  // Validates `options`, opens a session and waits up to
  // options.connect_timeout for it to connect (and for digest auth to be
  // added). Errors: InvalidArgument naming the bad connect string or option;
  // Unavailable naming the connect string when no server answered in time;
  // Unauthenticated when authentication failed.
  static absl::StatusOr<std::unique_ptr<Session>> Connect(SessionOptions options);

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // Close()s. REQUIRES: no recipe object on this session outlives it; not
  // called from a callback of this session.
  ~Session();

  // Closes the session: every pending operation completes with Cancelled,
  // listeners see kClosed, and the close request is sent; the server deletes
  // the session's ephemeral nodes as it processes it (the C client does not
  // wait for its reply: a release, which does, is what tells others at
  // once). It first lets a connection being made again come up, and the
  // answers to the requests in flight arrive (at most a third of the
  // session timeout, 1 s, and never past the session's lease, so a process
  // that ends after Close() does not outlive what it held): the C client
  // sends the close only while connected, and an answer meeting the closed
  // socket would reset the connection, so the server would drop the close
  // unread and keep the nodes until the session expires. Idempotent; while
  // another thread is closing the session, returns once that close has sent
  // the request. REQUIRES: not called from a callback of this session.
  void Close();

  SessionState state() const;
  // Increments with every new session opened after LOST (1 for the first).
  uint64_t generation() const;
  // The ZooKeeper session id of the current generation (0 while connecting).
  int64_t session_id() const;
  // The session timeout the server granted.
  absl::Duration negotiated_timeout() const;
  // The lease clock: the send time of the latest request the server
  // answered + negotiated timeout - margin, the earliest moment the server
  // could expire the session, less the margin. Never extended from "now"
  // (a paused process must not believe in a lease it did not renew); a
  // heartbeat every third of the timeout keeps it fresh while idle. When
  // still disconnected at valid_until(), the session declares itself LOST,
  // closes the old handle and opens a new session.
  absl::Time valid_until() const;
  const SessionOptions& options() const;

  // Adds a listener; returns an id for RemoveStateListener.
  int AddStateListener(StateListener listener);
  // After this returns the listener is neither running nor called again, so
  // what it captured may go: a call in progress on the dispatcher thread is
  // waited for. From inside that very listener it returns at once. Do not
  // call it holding a lock the listener takes.
  void RemoveStateListener(int id);

  // Synchronous operations. They wait for the server's answer (or connection
  // loss); reads and deletes are retried per options().retry. Never call them
  // from inside ZooKeeper C client callbacks (zkrecipes never does).
  absl::StatusOr<CreateResult> Create(const std::string& path, absl::string_view data,
                                      CreateMode mode, const CreateOptions& options = {});
  absl::StatusOr<std::string> Get(const std::string& path, Stat* stat = nullptr);
  absl::StatusOr<Stat> Set(const std::string& path, absl::string_view data,
                           int32_t version = -1);
  // Deletes `path` (if `version` matches, unless -1). A retry after connection
  // loss that finds the node gone counts as success.
  absl::Status Delete(const std::string& path, int32_t version = -1);
  // The node's Stat, or nullopt if it does not exist.
  absl::StatusOr<std::optional<Stat>> Exists(const std::string& path);
  // Child names (not paths), in the server's order.
  absl::StatusOr<std::vector<std::string>> GetChildren(const std::string& path);
  // Runs `ops` atomically. On failure the status is the first failing op's,
  // and the per-op results are lost; use MultiAsync to see them all.
  absl::StatusOr<std::vector<OpResult>> Multi(const std::vector<Op>& ops);
  // Creates every missing ancestor of `path` (not `path` itself).
  absl::Status CreateParents(const std::string& path, bool as_containers = true);

  // Watching reads: like Exists/Get/GetChildren, and `watch` runs once when
  // the node changes. Exists sets a watch also when the node is absent.
  absl::StatusOr<std::optional<Stat>> ExistsAndWatch(const std::string& path,
                                                     WatchCallback watch);
  absl::StatusOr<std::string> GetAndWatch(const std::string& path, WatchCallback watch,
                                          Stat* stat = nullptr);
  absl::StatusOr<std::vector<std::string>> GetChildrenAndWatch(const std::string& path,
                                                               WatchCallback watch);

  // Asynchronous operations: return at once; `done` runs on the dispatcher
  // thread exactly once (with Cancelled if the session closes first).
  void CreateAsync(const std::string& path, std::string data, CreateMode mode,
                   std::function<void(absl::StatusOr<CreateResult>)> done);
  void GetAsync(const std::string& path,
                std::function<void(absl::StatusOr<std::string>)> done);
  void SetAsync(const std::string& path, std::string data, int32_t version,
                std::function<void(absl::StatusOr<Stat>)> done);
  void DeleteAsync(const std::string& path, int32_t version,
                   std::function<void(absl::Status)> done);
  void ExistsAsync(const std::string& path,
                   std::function<void(absl::StatusOr<std::optional<Stat>>)> done);
  void GetChildrenAsync(const std::string& path,
                        std::function<void(absl::StatusOr<std::vector<std::string>>)> done);
  // `done` gets every op's result; the overall status is in the first failing
  // op's result (ZooKeeper marks the others as rolled back).
  void MultiAsync(std::vector<Op> ops,
                  std::function<void(absl::StatusOr<std::vector<OpResult>>)> done);

 private:
  friend class internal::SessionAccess;
  explicit Session(std::shared_ptr<internal::SessionCore> core);
  std::shared_ptr<internal::SessionCore> core_;
};

}  // namespace zkr

#endif  // ZKRECIPES_SESSION_H_
