// The adaptor over the ZooKeeper C client: ZkClient (src/zk_client.h) on
// one zhandle_t. Every reply's status is built here, once.
#include <netdb.h>
#include <sys/socket.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "src/watch_registry.h"
#include "src/zk_client.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {
namespace {

thread_local bool on_completion_thread = false;

// Marks the current thread as the completion thread while a callback runs.
class CompletionScope {
 public:
  CompletionScope() : was_(on_completion_thread) { on_completion_thread = true; }
  ~CompletionScope() { on_completion_thread = was_; }

 private:
  bool was_;
};

// ---- process-wide log sink (the C client's callback has no context) ----
absl::Mutex log_mu(absl::kConstInit);
std::function<void(absl::string_view)>* log_sink ABSL_GUARDED_BY(log_mu) = nullptr;

void LogCallback(const char* message) {
  absl::MutexLock lock(&log_mu);
  if (log_sink != nullptr && *log_sink) {
    (*log_sink)(message);
  } else {
    std::fprintf(stderr, "%s\n", message);
  }
}

Stat FromC(const struct ::Stat* stat) {
  Stat out;
  if (stat == nullptr) return out;
  out.czxid = stat->czxid;
  out.mzxid = stat->mzxid;
  out.ctime = stat->ctime;
  out.mtime = stat->mtime;
  out.version = stat->version;
  out.cversion = stat->cversion;
  out.aversion = stat->aversion;
  out.ephemeral_owner = stat->ephemeralOwner;
  out.data_length = stat->dataLength;
  out.num_children = stat->numChildren;
  out.pzxid = stat->pzxid;
  return out;
}

int ModeToC(CreateMode mode) {
  switch (mode) {
    case CreateMode::kPersistent: return ZOO_PERSISTENT;
    case CreateMode::kEphemeral: return ZOO_EPHEMERAL;
    case CreateMode::kPersistentSequential: return ZOO_PERSISTENT_SEQUENTIAL;
    case CreateMode::kEphemeralSequential: return ZOO_EPHEMERAL_SEQUENTIAL;
    case CreateMode::kContainer: return ZOO_CONTAINER;
  }
  return ZOO_PERSISTENT;
}

// An ACL list in the C client's shape, pointing into `acls` (which must
// outlive it). Empty means world:anyone, all permissions.
class CAclVector {
 public:
  explicit CAclVector(const std::vector<Acl>& acls) {
    static const Acl kOpen{"world", "anyone", kPermAll};
    const std::vector<Acl>& source = acls.empty() ? open_ : acls;
    if (acls.empty()) open_.push_back(kOpen);
    for (const Acl& acl : source) {
      struct ACL entry;
      entry.perms = acl.perms;
      entry.id.scheme = const_cast<char*>(acl.scheme.c_str());
      entry.id.id = const_cast<char*>(acl.id.c_str());
      entries_.push_back(entry);
    }
    vector_.count = static_cast<int32_t>(entries_.size());
    vector_.data = entries_.data();
  }
  const struct ACL_vector* get() const { return &vector_; }

 private:
  std::vector<Acl> open_;
  std::vector<struct ACL> entries_;
  struct ACL_vector vector_;
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

bool IsServerAnswer(int rc) {
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
  int active_calls_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<PendingCall*> pending_ ABSL_GUARDED_BY(mu_);
};

PendingCall::PendingCall(CClient* client, const char* op, std::string path)
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

void VoidTrampoline(int rc, const void* data) {
  CompletionScope scope;
  auto context = TakeContext<Context<ZkClient::VoidDone>>(rc, data);
  context->done(context->StatusOf(rc));
}

void CreateTrampoline(int rc, const char* path, const struct ::Stat* stat, const void* data) {
  CompletionScope scope;
  auto context = TakeContext<Context<ZkClient::CreateDone>>(rc, data);
  if (rc != ZOK) return context->done(context->StatusOf(rc));
  context->done(CreateResult{path != nullptr ? std::string(path) : std::string(), FromC(stat)});
}

void StatTrampoline(int rc, const struct ::Stat* stat, const void* data) {
  CompletionScope scope;
  auto context = TakeContext<Context<ZkClient::StatDone>>(rc, data);
  if (rc != ZOK) return context->done(context->StatusOf(rc));
  context->done(FromC(stat));
}

void DataTrampoline(int rc, const char* value, int value_len, const struct ::Stat* stat,
                    const void* data) {
  CompletionScope scope;
  auto context = TakeContext<Context<ZkClient::DataDone>>(rc, data);
  if (rc != ZOK) return context->done(context->StatusOf(rc));
  NodeData node;
  if (value != nullptr && value_len > 0) node.data.assign(value, value_len);
  node.stat = FromC(stat);
  context->done(std::move(node));
}

void ChildrenTrampoline(int rc, const struct String_vector* strings, const void* data) {
  CompletionScope scope;
  auto context = TakeContext<Context<ZkClient::ChildrenDone>>(rc, data);
  if (rc != ZOK) return context->done(context->StatusOf(rc));
  std::vector<std::string> children;
  if (strings != nullptr) {
    children.reserve(strings->count);
    for (int i = 0; i < strings->count; ++i) children.emplace_back(strings->data[i]);
  }
  context->done(std::move(children));
}

// A multi-op request: the C structures and the buffers they point into.
struct MultiContext : Context<ZkClient::MultiDone> {
  MultiContext(CClient* client, std::string first_path, ZkClient::MultiDone done)
      : Context(client, "multi starting at", std::move(first_path), std::move(done)) {}
  std::vector<Op> ops;
  std::vector<std::unique_ptr<CAclVector>> acls;
  std::vector<zoo_op_t> c_ops;
  std::vector<zoo_op_result_t> results;
  std::vector<std::vector<char>> path_buffers;
  std::vector<struct ::Stat> stats;
};

void MultiTrampoline(int rc, const void* data) {
  CompletionScope scope;
  auto context = TakeContext<MultiContext>(rc, data);
  std::vector<OpResult> results;
  absl::Status status = context->StatusOf(rc);
  if (IsServerAnswer(rc)) {
    for (size_t i = 0; i < context->ops.size(); ++i) {
      OpResult result;
      const Op& op = context->ops[i];
      int op_rc = context->results[i].err;
      result.status = ZkStatus(op_rc, absl::StrCat("multi op ", i, " on"), op.path);
      if (op_rc == ZOK && op.type == Op::Type::kCreate) {
        result.path = context->path_buffers[i].data();
      }
      if (op_rc == ZOK && op.type == Op::Type::kSetData) {
        result.stat = FromC(&context->stats[i]);
      }
      // The transaction's status is its first op that failed for a reason
      // of its own (the ops after it fail with ZRUNTIMEINCONSISTENCY).
      if (rc != ZOK && op_rc != ZOK && op_rc != ZRUNTIMEINCONSISTENCY &&
          ZooKeeperCode(status) == rc) {
        status = result.status;
      }
      results.push_back(std::move(result));
    }
  }
  context->done(std::move(status), std::move(results));
}

void GlobalWatcher(zhandle_t* zh, int type, int state, const char* path, void*) {
  CompletionScope scope;
  auto* client = static_cast<CClient*>(const_cast<void*>(zoo_get_context(zh)));
  if (client != nullptr && type == ZOO_SESSION_EVENT) client->DispatchSessionEvent(state);
}

void PathWatcher(zhandle_t* zh, int type, int state, const char* path, void* ctx) {
  CompletionScope scope;
  auto* client = static_cast<CClient*>(const_cast<void*>(zoo_get_context(zh)));
  if (client == nullptr) return;
  client->DispatchWatch(reinterpret_cast<uintptr_t>(ctx), type, path);
}

}  // namespace

void SetClientLog(std::function<void(absl::string_view)> sink, ClientLogLevel level) {
  absl::MutexLock lock(&log_mu);
  delete log_sink;
  log_sink = new std::function<void(absl::string_view)>(std::move(sink));
  zoo_set_debug_level(static_cast<ZooLogLevel>(level));
}

bool OnCompletionThread() { return on_completion_thread; }

namespace {

// The first host of the (validated) connect string that does not resolve,
// as "cannot resolve HOST: why"; empty if every one does. The C client
// fails the handle when a name does not resolve, saying only ENOENT.
std::string UnresolvedHost(const std::string& connect) {
  const absl::string_view hosts = absl::string_view(connect).substr(0, connect.find('/'));
  for (absl::string_view entry : absl::StrSplit(hosts, ',')) {
    const size_t colon = entry.rfind(':');
    absl::string_view host = entry.substr(0, colon);
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    struct addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo* addresses = nullptr;
    const int error = getaddrinfo(std::string(host).c_str(),
                                  std::string(entry.substr(colon + 1)).c_str(), &hints, &addresses);
    if (error == 0) {
      freeaddrinfo(addresses);
      continue;
    }
    return absl::StrCat("cannot resolve ", host, ": ",
                        error == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(error));
  }
  return "";
}

}  // namespace

absl::StatusOr<std::shared_ptr<ZkClient>> OpenCClient(const std::string& connect,
                                                      absl::Duration session_timeout,
                                                      std::shared_ptr<Clock> clock,
                                                      ZkClient::EventFn on_event) {
  auto client = std::make_shared<CClient>(connect, std::move(clock), std::move(on_event));
  errno = 0;
  zhandle_t* zh = zookeeper_init2(connect.c_str(), GlobalWatcher,
                                  static_cast<int>(absl::ToInt64Milliseconds(session_timeout)),
                                  nullptr, client.get(), 0, LogCallback);
  if (zh == nullptr) {
    int error = errno;
    // Not the caller's mistake: DNS may know the name later (exit 5 in zkr).
    if (std::string unresolved = UnresolvedHost(connect); !unresolved.empty()) {
      return absl::UnavailableError(absl::StrCat("connect \"", connect, "\": ", unresolved));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open a ZooKeeper handle for \"", connect, "\": ",
        error != 0 ? std::strerror(error) : "rejected by the client"));
  }
  // By default the C client re-resolves every server name each time it
  // polls its socket (a getaddrinfo per I/O loop: most of an idle client's
  // CPU). Once a second is plenty to notice DNS changes; a lost connection
  // still resolves at once.
  zoo_set_servers_resolution_delay(zh, kServerResolutionDelayMs);
  client->Adopt(zh);
  return client;
}

namespace {

void CClient::Close() {
  zhandle_t* zh = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (closing_) return;
    closing_ = true;
    // Calls into the C library never wait for the completion thread, so this
    // wait cannot deadlock with it.
    mu_.Await(absl::Condition(
        +[](int* active) { return *active == 0; }, &active_calls_));
    zh = zh_;
  }
  if (zh != nullptr) zookeeper_close(zh);
  absl::flat_hash_set<PendingCall*> dropped;
  {
    absl::MutexLock lock(&mu_);
    zh_ = nullptr;
    dropped.swap(pending_);
  }
  watches_.Close();
  // The C client may drop a completion when it closes an expired handle:
  // every request still completes exactly once.
  CompletionScope scope;
  for (PendingCall* call : dropped) {
    std::unique_ptr<PendingCall> owned(call);
    owned->Fail(ClosedCode());
  }
}

void CClient::Untrack(PendingCall* call) {
  absl::MutexLock lock(&mu_);
  pending_.erase(call);
}

void CClient::Refused(PendingCall* call, int rc) {
  Untrack(call);
  std::unique_ptr<PendingCall> owned(call);
  owned->Fail(Outcome(rc));
}

zhandle_t* CClient::BeginCall() {
  absl::MutexLock lock(&mu_);
  if (closing_ || zh_ == nullptr) return nullptr;
  ++active_calls_;
  return zh_;
}

void CClient::EndCall() {
  absl::MutexLock lock(&mu_);
  --active_calls_;
}

int64_t CClient::session_id() const {
  absl::MutexLock lock(&mu_);
  if (zh_ == nullptr) return 0;
  return zoo_client_id(zh_)->client_id;
}

std::string CClient::password() const {
  absl::MutexLock lock(&mu_);
  if (zh_ == nullptr) return "";
  const clientid_t* id = zoo_client_id(zh_);
  return std::string(id->passwd, sizeof(id->passwd));
}

absl::Duration CClient::negotiated_timeout() const {
  absl::MutexLock lock(&mu_);
  if (zh_ == nullptr) return absl::ZeroDuration();
  return absl::Milliseconds(zoo_recv_timeout(zh_));
}

std::string CClient::current_server() const {
  absl::MutexLock lock(&mu_);
  if (zh_ == nullptr) return "";
  const char* server = zoo_get_current_server(zh_);
  return server != nullptr ? server : "";
}

void CClient::NoteResponse(absl::Duration sent_at) {
  // The server answered a request sent at `sent_at`: it heard from us then
  // or later. Keep the latest such time.
  int64_t sent = absl::ToInt64Nanoseconds(sent_at);
  int64_t seen = last_response_ns_.load(std::memory_order_relaxed);
  while (sent > seen &&
         !last_response_ns_.compare_exchange_weak(seen, sent, std::memory_order_relaxed)) {
  }
}

void CClient::CancelWatch(uintptr_t id) {
  if (std::optional<WatchRegistry::Place> remove = watches_.Cancel(id)) RemoveServerWatches(*remove);
}

bool CClient::WatchArmed(uintptr_t id) const { return watches_.Armed(id); }

std::vector<std::string> CClient::WaitedPaths() const { return watches_.WaitedPaths(); }

void CClient::WatchReplied(uintptr_t id, bool set) {
  if (std::optional<WatchRegistry::Place> remove = watches_.Replied(id, set)) {
    RemoveServerWatches(*remove);
  }
}

void CClient::RemoveServerWatches(const WatchRegistry::Place& place) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) return;
  // ZNOWATCHER (it fired meanwhile) is fine. The C client drops its own
  // copy only when the server answers OK; if the connection is lost first,
  // it sets the watch again on reconnect (it would fire into an id we no
  // longer know, and be ignored, but the server would hold it until then):
  // so the removal is sent again once connected. `local` is not used: in
  // the asynchronous call it treats `data` as a synchronous waiter. The
  // header's `void_completion_t*` is really the function itself.
  auto* context = Track(new Context<VoidDone>(
      this, "remove watches of", place.path, [this, place](absl::Status status) {
        if (!IsRetryable(status)) return;  // removed, fired, or the session is gone
        watches_.RemovalLost(place);
      }));
  int rc = zoo_aremove_all_watches(zh, place.path.c_str(),
                                   place.child ? ZWATCHTYPE_CHILD : ZWATCHTYPE_DATA,
                                   /*local=*/0,
                                   reinterpret_cast<void_completion_t*>(&VoidTrampoline),
                                   context);
  EndCall();
  if (rc != ZOK) Refused(context, rc);
}

void CClient::ResendRemovals() {
  for (const WatchRegistry::Place& place : watches_.TakeRemovalsToResend()) {
    RemoveServerWatches(place);
  }
}

void CClient::DispatchWatch(uintptr_t id, int type, const char* path) {
  // Session events reach path watchers too; the watch stays armed (the C
  // client re-registers it on reconnect). LOST is handled by the session.
  // NOTWATCHING: a watch we removed ourselves.
  if (type == ZOO_SESSION_EVENT || type == ZOO_NOTWATCHING_EVENT) return;
  WatchFn watch = watches_.Fire(id);
  if (!watch) return;  // cancelled, or not ours
  WatchEvent event;
  event.type = type == ZOO_CREATED_EVENT   ? WatchEvent::Type::kCreated
               : type == ZOO_DELETED_EVENT ? WatchEvent::Type::kDeleted
               : type == ZOO_CHILD_EVENT   ? WatchEvent::Type::kChildrenChanged
                                           : WatchEvent::Type::kDataChanged;
  event.path = path != nullptr ? std::string(path) : std::string();
  watch(event);
}

void CClient::DispatchSessionEvent(int state) {
  if (state == ZOO_CONNECTED_STATE) {
    ResendRemovals();  // first: whatever the session sends next comes after
    on_event_(Event::kConnected);
  } else if (state == ZOO_CONNECTING_STATE) {
    on_event_(Event::kConnecting);
  } else if (state == ZOO_EXPIRED_SESSION_STATE) {
    on_event_(Event::kExpired);
  } else if (state == ZOO_AUTH_FAILED_STATE) {
    on_event_(Event::kAuthFailed);
  }
}

// Each request: begin the call (or complete inline: the client is closed),
// hand a heap context to the C library, complete inline if it refused the
// request.
void CClient::Create(const std::string& path, absl::string_view data, CreateMode mode,
                     const std::vector<Acl>& acl, CreateDone done) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) return done(ZkStatus(ClosedCode(), "create", path));
  CAclVector c_acl(acl);
  auto* context = Track(new Context<CreateDone>(this, "create", path, std::move(done)));
  int rc = zoo_acreate2(zh, path.c_str(), data.data(), static_cast<int>(data.size()),
                        c_acl.get(), ModeToC(mode), CreateTrampoline, context);
  EndCall();
  if (rc != ZOK) Refused(context, rc);
}

void CClient::Delete(const std::string& path, int32_t version, VoidDone done) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) return done(ZkStatus(ClosedCode(), "delete", path));
  auto* context = Track(new Context<VoidDone>(this, "delete", path, std::move(done)));
  int rc = zoo_adelete(zh, path.c_str(), version, VoidTrampoline, context);
  EndCall();
  if (rc != ZOK) Refused(context, rc);
}

absl::Status CClient::DeleteBlocking(const std::string& path, int32_t version) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) return ZkStatus(ClosedCode(), "delete", path);
  const absl::Duration sent_at = clock_->Monotonic();
  int rc = zoo_delete(zh, path.c_str(), version);
  EndCall();
  if (IsServerAnswer(rc)) NoteResponse(sent_at);
  return ZkStatus(Outcome(rc), "delete", path);
}

uintptr_t CClient::Exists(const std::string& path, WatchFn watch, StatDone done) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) {
    done(ZkStatus(ClosedCode(), "exists", path));
    return 0;
  }
  uintptr_t watch_id = watches_.Register(path, /*child=*/false, std::move(watch));
  auto* context = Track(new Context<StatDone>(
      this, "exists", path, [this, watch_id, done = std::move(done)](absl::StatusOr<Stat> stat) {
        WatchReplied(watch_id, stat.ok() || absl::IsNotFound(stat.status()));
        done(std::move(stat));
      }));
  int rc = watch_id != 0 ? zoo_awexists(zh, path.c_str(), PathWatcher,
                                        reinterpret_cast<void*>(watch_id), StatTrampoline, context)
                         : zoo_aexists(zh, path.c_str(), 0, StatTrampoline, context);
  EndCall();
  if (rc != ZOK) Refused(context, rc);
  return watch_id;
}

uintptr_t CClient::Get(const std::string& path, WatchFn watch, DataDone done) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) {
    done(ZkStatus(ClosedCode(), "get", path));
    return 0;
  }
  uintptr_t watch_id = watches_.Register(path, /*child=*/false, std::move(watch));
  auto* context = Track(new Context<DataDone>(
      this, "get", path, [this, watch_id, done = std::move(done)](absl::StatusOr<NodeData> node) {
        WatchReplied(watch_id, node.ok());
        done(std::move(node));
      }));
  int rc = watch_id != 0 ? zoo_awget(zh, path.c_str(), PathWatcher,
                                     reinterpret_cast<void*>(watch_id), DataTrampoline, context)
                         : zoo_aget(zh, path.c_str(), 0, DataTrampoline, context);
  EndCall();
  if (rc != ZOK) Refused(context, rc);
  return watch_id;
}

void CClient::Set(const std::string& path, absl::string_view data, int32_t version,
                  StatDone done) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) return done(ZkStatus(ClosedCode(), "set", path));
  auto* context = Track(new Context<StatDone>(this, "set", path, std::move(done)));
  int rc = zoo_aset(zh, path.c_str(), data.data(), static_cast<int>(data.size()), version,
                    StatTrampoline, context);
  EndCall();
  if (rc != ZOK) Refused(context, rc);
}

uintptr_t CClient::GetChildren(const std::string& path, WatchFn watch, ChildrenDone done) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) {
    done(ZkStatus(ClosedCode(), "get children of", path));
    return 0;
  }
  uintptr_t watch_id = watches_.Register(path, /*child=*/true, std::move(watch));
  auto* context = Track(new Context<ChildrenDone>(
      this, "get children of", path,
      [this, watch_id, done = std::move(done)](absl::StatusOr<std::vector<std::string>> children) {
        WatchReplied(watch_id, children.ok());
        done(std::move(children));
      }));
  int rc = watch_id != 0
               ? zoo_awget_children(zh, path.c_str(), PathWatcher,
                                    reinterpret_cast<void*>(watch_id), ChildrenTrampoline, context)
               : zoo_aget_children(zh, path.c_str(), 0, ChildrenTrampoline, context);
  EndCall();
  if (rc != ZOK) Refused(context, rc);
  return watch_id;
}

void CClient::Multi(const std::vector<Op>& ops, const std::vector<Acl>& default_acl,
                    MultiDone done) {
  zhandle_t* zh = BeginCall();
  const std::string first_path = ops.empty() ? "" : ops.front().path;
  if (zh == nullptr) return done(ZkStatus(ClosedCode(), "multi starting at", first_path), {});
  auto context = std::make_unique<MultiContext>(this, first_path, std::move(done));
  context->ops = ops;
  const size_t n = ops.size();
  context->c_ops.resize(n);
  context->results.resize(n);
  context->path_buffers.resize(n);
  context->stats.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Op& op = context->ops[i];
    zoo_op_t* c_op = &context->c_ops[i];
    switch (op.type) {
      case Op::Type::kCreate: {
        context->acls.push_back(
            std::make_unique<CAclVector>(op.acl.empty() ? default_acl : op.acl));
        context->path_buffers[i].assign(op.path.size() + 32, '\0');
        zoo_create_op_init(c_op, op.path.c_str(), op.data.data(),
                           static_cast<int>(op.data.size()), context->acls.back()->get(),
                           ModeToC(op.mode), context->path_buffers[i].data(),
                           static_cast<int>(context->path_buffers[i].size()));
        break;
      }
      case Op::Type::kDelete:
        zoo_delete_op_init(c_op, op.path.c_str(), op.version);
        break;
      case Op::Type::kSetData:
        zoo_set_op_init(c_op, op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
                        op.version, &context->stats[i]);
        break;
      case Op::Type::kCheck:
        zoo_check_op_init(c_op, op.path.c_str(), op.version);
        break;
    }
  }
  MultiContext* raw = Track(context.release());
  int rc = zoo_amulti(zh, static_cast<int>(n), raw->c_ops.data(), raw->results.data(),
                      MultiTrampoline, raw);
  EndCall();
  if (rc != ZOK) Refused(raw, rc);
}

void CClient::AddAuth(const std::string& scheme, const std::string& credentials,
                      VoidDone done) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) return done(ZkStatus(ClosedCode(), "add auth on", connect_));
  auto* context = Track(new Context<VoidDone>(this, "add auth on", connect_, std::move(done)));
  int rc = zoo_add_auth(zh, scheme.c_str(), credentials.data(),
                        static_cast<int>(credentials.size()), VoidTrampoline, context);
  EndCall();
  if (rc != ZOK) Refused(context, rc);
}

}  // namespace
}  // namespace internal
}  // namespace zkr
