// CClient: the adaptor over the ZooKeeper C client, ZkClient (src/zk_client.h)
// on one zhandle_t, shared by its two files: src/c_client.cc (the handle's
// life, session events, watches) and src/c_client_requests.cc (the requests
// and their completions). Only those two files include this header, and
// with src/zk_status.cc they are the only users of zookeeper.h.
//
// Threads: completions and watch events run on the C client's completion
// thread (CompletionScope marks it); no call into the C library waits for it.
#ifndef ZKRECIPES_SRC_C_CLIENT_H_
#define ZKRECIPES_SRC_C_CLIENT_H_

#include <zookeeper/zookeeper.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "src/watch_registry.h"
#include "src/zk_client.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {
namespace c_adaptor {

// Set on the completion thread while a callback runs (OnCompletionThread()).
extern thread_local bool on_completion_thread;

// Marks the current thread as the completion thread while a callback runs.
class CompletionScope {
 public:
  CompletionScope() : was_(on_completion_thread) { on_completion_thread = true; }
  ~CompletionScope() { on_completion_thread = was_; }

 private:
  bool was_;
};

class CClient;

// A request in flight: heap-allocated, owned by the C library until its
// trampoline runs, tracked by the client so that a completion the library
// drops at close still runs (cancelled, or session lost).
class PendingCall {
 public:
  PendingCall(CClient* client, const char* op, std::string path);
  virtual ~PendingCall() = default;
  // Completes the request with the status of `rc` and no result.
  virtual void Fail(int rc) = 0;
  // The status of `rc` for this request ("<op> <path>: ...").
  absl::Status StatusOf(int rc) const { return ZkStatus(rc, op, path); }

  CClient* const client;
  const char* const op;
  const std::string path;
  const absl::Duration sent_at;  // on the clock's Monotonic()
};

// Completion contexts: heap-allocated per request, freed by the trampoline.
template <typename Done>
struct Context : PendingCall {
  Context(CClient* client, const char* op, std::string path, Done done)
      : PendingCall(client, op, std::move(path)), done(std::move(done)) {}
  void Fail(int rc) override { Complete(done, StatusOf(rc)); }
  // A failure: every Done takes a non-OK status alone.
  static void Complete(const ZkClient::MultiDone& done, absl::Status status) {
    done(std::move(status), {});
  }
  template <typename D>
  static void Complete(const D& done, absl::Status status) {
    done(std::move(status));
  }
  Done done;
};

inline bool IsServerAnswer(int rc) {
  return rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT && rc != ZCLOSING &&
         rc != ZINVALIDSTATE;
}

class CClient final : public ZkClient {
 public:
  CClient(std::string connect, std::shared_ptr<Clock> clock, EventFn on_event)
      : connect_(std::move(connect)), clock_(std::move(clock)), on_event_(std::move(on_event)) {}
  ~CClient() override {
    if (!OnCompletionThread()) Close();
  }
  // Takes the handle once zookeeper_init2 made it.
  void Adopt(zhandle_t* zh) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    zh_ = zh;
  }

  void Close() override ABSL_LOCKS_EXCLUDED(mu_);
  void SetCloseSettle(absl::Duration settle) override ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    close_settle_ = settle;
  }
  void MarkLost() override { lost_.store(true); }
  int64_t session_id() const override ABSL_LOCKS_EXCLUDED(mu_);
  std::string password() const override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Duration negotiated_timeout() const override ABSL_LOCKS_EXCLUDED(mu_);
  std::string current_server() const override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Duration last_response() const override {
    return absl::Nanoseconds(last_response_ns_.load(std::memory_order_relaxed));
  }

  void Create(const std::string& path, absl::string_view data, CreateMode mode,
              const std::vector<Acl>& acl, CreateDone done) override;
  void Delete(const std::string& path, int32_t version, VoidDone done) override;
  absl::Status DeleteBlocking(const std::string& path, int32_t version) override;
  uintptr_t Exists(const std::string& path, WatchFn watch, StatDone done) override;
  uintptr_t Get(const std::string& path, WatchFn watch, DataDone done) override;
  void Set(const std::string& path, absl::string_view data, int32_t version,
           StatDone done) override;
  uintptr_t GetChildren(const std::string& path, WatchFn watch, ChildrenDone done) override;
  void CancelWatch(uintptr_t id) override ABSL_LOCKS_EXCLUDED(mu_);
  bool WatchArmed(uintptr_t id) const override ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::string> WaitedPaths() const override ABSL_LOCKS_EXCLUDED(mu_);
  void LimitWatches(size_t max_bytes, size_t path_overhead) override {
    watches_.Limit(max_bytes, path_overhead);
  }
  void Multi(const std::vector<Op>& ops, const std::vector<Acl>& default_acl,
             MultiDone done) override;
  void AddAuth(const std::string& scheme, const std::string& credentials,
               VoidDone done) override;

  // For the trampolines.
  const Clock& clock() const { return *clock_; }
  // `rc` as the caller is told it: ZCLOSING is session lost after MarkLost().
  int Outcome(int rc) const { return rc == ZCLOSING ? ClosedCode() : rc; }
  void NoteResponse(absl::Duration sent_at);
  void Untrack(PendingCall* call) ABSL_LOCKS_EXCLUDED(mu_);
  void DispatchWatch(uintptr_t id, int type, const char* path) ABSL_LOCKS_EXCLUDED(mu_);
  void DispatchSessionEvent(int state);

 private:
  // ZCLOSING, or ZSESSIONEXPIRED once MarkLost() was called.
  int ClosedCode() const { return lost_.load() ? ZSESSIONEXPIRED : ZCLOSING; }
  // Brackets a call into the C library.
  // The handle, or null once closing (then the caller completes inline
  // with ClosedCode()). Close() waits for every call begun to end.
  zhandle_t* BeginCall() ABSL_LOCKS_EXCLUDED(mu_);
  void EndCall() ABSL_LOCKS_EXCLUDED(mu_);
  // Starts tracking a request until its trampoline (or Close) completes it.
  template <typename C>
  C* Track(C* call) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    pending_.insert(call);
    return call;
  }
  // Registers a request's watch (WatchRegistry::Register); if it is
  // refused (past the limit), ends the call and completes `done` with the
  // refusal, and returns nothing.
  template <typename Done>
  std::optional<uintptr_t> RegisterWatch(const std::string& path, bool child, WatchFn watch,
                                         Done& done) {
    absl::StatusOr<uintptr_t> id = watches_.Register(path, child, std::move(watch));
    if (id.ok()) return *id;
    EndCall();
    done(id.status());
    return std::nullopt;
  }
  // Completes a request the C library refused to queue.
  void Refused(PendingCall* call, int rc) ABSL_LOCKS_EXCLUDED(mu_);
  // The request that set watch `id` was answered: `set` says whether the
  // server now holds the watch (WatchRegistry::Replied).
  void WatchReplied(uintptr_t id, bool set);
  // Asks the server (and the C client) to forget our watches of one kind on
  // a path. A removal lost with its connection is sent again once connected
  // (ResendRemovals).
  void RemoveServerWatches(const WatchRegistry::Place& place) ABSL_LOCKS_EXCLUDED(mu_);
  // On CONNECTED (completion thread): sends again the removals lost with the
  // previous connection, before anyone hears of the reconnection.
  void ResendRemovals() ABSL_LOCKS_EXCLUDED(mu_);

  const std::string connect_;
  const std::shared_ptr<Clock> clock_;
  std::atomic<bool> lost_{false};
  const EventFn on_event_;
  std::atomic<int64_t> last_response_ns_{0};
  WatchRegistry watches_;

  mutable absl::Mutex mu_;
  zhandle_t* zh_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  // The session's last state event was CONNECTED.
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  // SetCloseSettle's bound for Close()'s first wait: 0 unless the session
  // is within its lease (so it connected, and is neither expired nor lost).
  absl::Duration close_settle_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  // For Close(): connected, with no request in flight.
  bool QuietAndConnected() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return connected_ && pending_.empty();
  }
  int active_calls_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<PendingCall*> pending_ ABSL_GUARDED_BY(mu_);
};

inline PendingCall::PendingCall(CClient* client, const char* op, std::string path)
    : client(client), op(op), path(std::move(path)), sent_at(client->clock().Monotonic()) {}


// Takes a context back from the C library in its trampoline; `rc` becomes
// what the caller is told (CClient::Outcome).
template <typename C>
std::unique_ptr<C> TakeContext(int& rc, const void* data) {
  std::unique_ptr<C> context(static_cast<C*>(const_cast<void*>(data)));
  context->client->Untrack(context.get());
  if (IsServerAnswer(rc)) context->client->NoteResponse(context->sent_at);
  rc = context->client->Outcome(rc);
  return context;
}

// The C library's watch callback (src/c_client.cc), set by the requests.
void PathWatcher(zhandle_t* zh, int type, int state, const char* path, void* ctx);

}  // namespace c_adaptor
}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_C_CLIENT_H_
