#include "src/zk_client.h"

#include <zookeeper/zookeeper.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/zk_status.h"

namespace zkr {
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

// ---- test-only fault injection ----
// The next `left` requests of one kind whose path starts with `prefix`.
struct FaultRule {
  std::string prefix;
  int left = 0;
};
absl::Mutex fault_mu(absl::kConstInit);
FaultRule* dropped_create_replies ABSL_GUARDED_BY(fault_mu) = nullptr;
FaultRule* lost_deletes ABSL_GUARDED_BY(fault_mu) = nullptr;
FaultRule* dropped_children_replies ABSL_GUARDED_BY(fault_mu) = nullptr;

void SetFaultRule(FaultRule*& rule, const std::string& prefix, int count) {
  absl::MutexLock lock(&fault_mu);
  delete rule;
  rule = new FaultRule{prefix, count};
}

// True if `path` is one of the requests `rule` still applies to (counted).
bool TakeFault(FaultRule* const& rule, const std::string& path) {
  absl::MutexLock lock(&fault_mu);
  if (rule == nullptr || rule->left == 0 || !absl::StartsWith(path, rule->prefix)) return false;
  --rule->left;
  return true;
}

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

// Completes a request with `rc` and no result (a refused or dropped request).
void CompleteEmpty(const ZkClient::VoidDone& done, int rc) { done(rc); }
void CompleteEmpty(const ZkClient::CreateDone& done, int rc) { done(rc, "", Stat()); }
void CompleteEmpty(const ZkClient::StatDone& done, int rc) { done(rc, Stat()); }
void CompleteEmpty(const ZkClient::DataDone& done, int rc) { done(rc, "", Stat()); }
void CompleteEmpty(const ZkClient::ChildrenDone& done, int rc) { done(rc, {}); }
void CompleteEmpty(const ZkClient::MultiDone& done, int rc) { done(rc, {}); }

}  // namespace

// A request in flight: heap-allocated, owned by the C library until its
// trampoline runs, tracked by the client so that a completion the library
// drops at close still runs (with ZCLOSING).
class PendingCall {
 public:
  explicit PendingCall(ZkClient* client)
      : client(client), sent_at(client->clock().Monotonic()) {}
  virtual ~PendingCall() = default;
  // Completes the request with `rc` and no result.
  virtual void Fail(int rc) = 0;

  ZkClient* const client;
  const absl::Duration sent_at;  // on the clock's Monotonic()
};

namespace {

// Completion contexts: heap-allocated per request, freed by the trampoline.
template <typename Done>
struct Context : PendingCall {
  Context(ZkClient* client, Done done) : PendingCall(client), done(std::move(done)) {}
  void Fail(int rc) override { CompleteEmpty(done, rc); }
  Done done;
};

bool IsServerAnswer(int rc) {
  return rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT && rc != ZCLOSING &&
         rc != ZINVALIDSTATE;
}

// Takes a context back from the C library in its trampoline.
// `rc` becomes what the caller is told (see ZkClient::Outcome).
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
  context->done(rc);
}

void CreateTrampoline(int rc, const char* path, const struct ::Stat* stat,
                      const void* data) {
  CompletionScope scope;
  auto context = TakeContext<Context<ZkClient::CreateDone>>(rc, data);
  context->done(rc, rc == ZOK && path != nullptr ? std::string(path) : std::string(),
                FromC(rc == ZOK ? stat : nullptr));
}

void StatTrampoline(int rc, const struct ::Stat* stat, const void* data) {
  CompletionScope scope;
  auto context = TakeContext<Context<ZkClient::StatDone>>(rc, data);
  context->done(rc, FromC(rc == ZOK ? stat : nullptr));
}

void DataTrampoline(int rc, const char* value, int value_len, const struct ::Stat* stat,
                    const void* data) {
  CompletionScope scope;
  auto context = TakeContext<Context<ZkClient::DataDone>>(rc, data);
  std::string copy;
  if (rc == ZOK && value != nullptr && value_len > 0) copy.assign(value, value_len);
  context->done(rc, std::move(copy), FromC(rc == ZOK ? stat : nullptr));
}

void ChildrenTrampoline(int rc, const struct String_vector* strings, const void* data) {
  CompletionScope scope;
  auto context = TakeContext<Context<ZkClient::ChildrenDone>>(rc, data);
  std::vector<std::string> children;
  if (rc == ZOK && strings != nullptr) {
    children.reserve(strings->count);
    for (int i = 0; i < strings->count; ++i) children.emplace_back(strings->data[i]);
  }
  context->done(rc, std::move(children));
}

// A multi-op request: the C structures and the buffers they point into.
struct MultiContext : PendingCall {
  explicit MultiContext(ZkClient* client) : PendingCall(client) {}
  void Fail(int rc) override { CompleteEmpty(done, rc); }
  ZkClient::MultiDone done;
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
      results.push_back(std::move(result));
    }
  }
  context->done(rc, std::move(results));
}

void GlobalWatcher(zhandle_t* zh, int type, int state, const char* path, void*) {
  CompletionScope scope;
  auto* client = static_cast<ZkClient*>(const_cast<void*>(zoo_get_context(zh)));
  if (client != nullptr && type == ZOO_SESSION_EVENT) client->DispatchSessionEvent(state);
}

void PathWatcher(zhandle_t* zh, int type, int state, const char* path, void* ctx) {
  CompletionScope scope;
  auto* client = static_cast<ZkClient*>(const_cast<void*>(zoo_get_context(zh)));
  if (client == nullptr) return;
  client->DispatchWatch(reinterpret_cast<uintptr_t>(ctx), type, state, path);
}

}  // namespace

void ZkClient::DropNextCreateReplies(const std::string& path_prefix, int count) {
  SetFaultRule(dropped_create_replies, path_prefix, count);
}

void ZkClient::LoseNextDeletes(const std::string& path_prefix, int count) {
  SetFaultRule(lost_deletes, path_prefix, count);
}

void ZkClient::DropNextChildrenReplies(const std::string& path_prefix, int count) {
  SetFaultRule(dropped_children_replies, path_prefix, count);
}

void SetClientLog(std::function<void(absl::string_view)> sink, ClientLogLevel level) {
  absl::MutexLock lock(&log_mu);
  delete log_sink;
  log_sink = new std::function<void(absl::string_view)>(std::move(sink));
  zoo_set_debug_level(static_cast<ZooLogLevel>(level));
}

ZkClient::ZkClient(std::shared_ptr<Clock> clock, SessionEventFn on_event)
    : clock_(std::move(clock)), on_event_(std::move(on_event)) {}

absl::StatusOr<std::shared_ptr<ZkClient>> ZkClient::Open(const std::string& connect,
                                                         absl::Duration session_timeout,
                                                         std::shared_ptr<Clock> clock,
                                                         SessionEventFn on_event) {
  std::shared_ptr<ZkClient> client(new ZkClient(std::move(clock), std::move(on_event)));
  errno = 0;
  zhandle_t* zh = zookeeper_init2(connect.c_str(), GlobalWatcher,
                                  static_cast<int>(absl::ToInt64Milliseconds(session_timeout)),
                                  nullptr, client.get(), 0, LogCallback);
  if (zh == nullptr) {
    int error = errno;
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open a ZooKeeper handle for \"", connect, "\": ",
        error != 0 ? std::strerror(error) : "rejected by the client"));
  }
  // By default the C client re-resolves every server name each time it
  // polls its socket (a getaddrinfo per I/O loop: most of an idle client's
  // CPU). Once a second is plenty to notice DNS changes; a lost connection
  // still resolves at once.
  zoo_set_servers_resolution_delay(zh, kServerResolutionDelayMs);
  absl::MutexLock lock(&client->mu_);
  client->zh_ = zh;
  return client;
}

ZkClient::~ZkClient() {
  if (!OnCompletionThread()) Close();
}

void ZkClient::Close() {
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
    watches_.clear();
    watches_per_path_.clear();
    dropped.swap(pending_);
  }
  // The C client may drop a completion when it closes an expired handle:
  // every request still completes exactly once.
  CompletionScope scope;
  for (PendingCall* call : dropped) {
    std::unique_ptr<PendingCall> owned(call);
    owned->Fail(ClosedCode());
  }
}

void ZkClient::Untrack(PendingCall* call) {
  absl::MutexLock lock(&mu_);
  pending_.erase(call);
}

void ZkClient::Refused(PendingCall* call, int rc) {
  Untrack(call);
  std::unique_ptr<PendingCall> owned(call);
  owned->Fail(rc);
}

bool ZkClient::BeginCall() {
  absl::MutexLock lock(&mu_);
  if (closing_ || zh_ == nullptr) return false;
  ++active_calls_;
  return true;
}

void ZkClient::EndCall() {
  absl::MutexLock lock(&mu_);
  --active_calls_;
}

int64_t ZkClient::session_id() const {
  absl::MutexLock lock(&mu_);
  if (zh_ == nullptr) return 0;
  return zoo_client_id(zh_)->client_id;
}

std::string ZkClient::password() const {
  absl::MutexLock lock(&mu_);
  if (zh_ == nullptr) return "";
  const clientid_t* id = zoo_client_id(zh_);
  return std::string(id->passwd, sizeof(id->passwd));
}

absl::Duration ZkClient::negotiated_timeout() const {
  absl::MutexLock lock(&mu_);
  if (zh_ == nullptr) return absl::ZeroDuration();
  return absl::Milliseconds(zoo_recv_timeout(zh_));
}

std::string ZkClient::current_server() const {
  absl::MutexLock lock(&mu_);
  if (zh_ == nullptr) return "";
  const char* server = zoo_get_current_server(zh_);
  return server != nullptr ? server : "";
}

absl::Duration ZkClient::last_response() const {
  return absl::Nanoseconds(last_response_ns_.load(std::memory_order_relaxed));
}

void ZkClient::NoteResponse(absl::Duration sent_at) {
  // The server answered a request sent at `sent_at`: it heard from us then
  // or later. Keep the latest such time.
  int64_t sent = absl::ToInt64Nanoseconds(sent_at);
  int64_t seen = last_response_ns_.load(std::memory_order_relaxed);
  while (sent > seen &&
         !last_response_ns_.compare_exchange_weak(seen, sent, std::memory_order_relaxed)) {
  }
}

bool ZkClient::OnCompletionThread() { return on_completion_thread; }

int ZkClient::ZkClosingCode() { return ZCLOSING; }

int ZkClient::ClosedCode() const { return lost_.load() ? ZSESSIONEXPIRED : ZCLOSING; }

namespace {
std::string WatchKey(const std::string& path, bool child) {
  return absl::StrCat(child ? "c:" : "d:", path);
}
}  // namespace

uintptr_t ZkClient::RegisterWatch(const std::string& path, bool child, WatchFn watch) {
  if (!watch) return 0;
  absl::MutexLock lock(&mu_);
  uintptr_t id = next_watch_id_++;
  watches_.emplace(id, WatchEntry{std::move(watch), path, child});
  ++watches_per_path_[WatchKey(path, child)];
  return id;
}

std::optional<ZkClient::WatchPlace> ZkClient::EraseWatch(
    absl::flat_hash_map<uintptr_t, WatchEntry>::iterator it) {
  WatchPlace place{std::move(it->second.path), it->second.child};
  auto count = watches_per_path_.find(WatchKey(place.path, place.child));
  watches_.erase(it);
  if (count == watches_per_path_.end() || --count->second > 0) return std::nullopt;
  watches_per_path_.erase(count);
  return place;
}

void ZkClient::WatchReplied(uintptr_t id, bool set) {
  if (id == 0) return;
  std::optional<WatchPlace> remove;
  {
    absl::MutexLock lock(&mu_);
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    if (set && !it->second.cancelled) {
      it->second.armed = true;
      return;
    }
    remove = EraseWatch(it);
    // Given up while the request was in flight: the server has it only if set.
    if (!set) remove.reset();
  }
  if (remove) RemoveServerWatches(*remove);
}

void ZkClient::CancelWatch(uintptr_t id) {
  if (id == 0) return;
  std::optional<WatchPlace> remove;
  {
    absl::MutexLock lock(&mu_);
    auto it = watches_.find(id);
    if (it == watches_.end()) return;  // fired, or never set
    if (!it->second.armed) {           // the reply decides (WatchReplied)
      it->second.cancelled = true;
      it->second.fn = nullptr;
      return;
    }
    remove = EraseWatch(it);
  }
  if (remove) RemoveServerWatches(*remove);
}

bool ZkClient::WatchArmed(uintptr_t id) const {
  absl::MutexLock lock(&mu_);
  auto it = watches_.find(id);
  return it != watches_.end() && it->second.armed;
}

void ZkClient::RemoveServerWatches(const WatchPlace& place) {
  if (!BeginCall()) return;
  // Best effort: ZNOWATCHER (it fired meanwhile) is fine. The C client
  // drops its own copy when the server answers; if the connection is lost
  // first, it may set the watch again on reconnect (it then fires into an
  // id we no longer know, and is ignored). `local` is not used: in the
  // asynchronous call it treats `data` as a synchronous waiter. The
  // header's `void_completion_t*` is really the function itself.
  auto* context = Track(new Context<VoidDone>(this, [](int) {}));
  int rc = zoo_aremove_all_watches(zh_, place.path.c_str(),
                                   place.child ? ZWATCHTYPE_CHILD : ZWATCHTYPE_DATA,
                                   /*local=*/0,
                                   reinterpret_cast<void_completion_t*>(&VoidTrampoline),
                                   context);
  EndCall();
  if (rc != ZOK) Refused(context, rc);
}

void ZkClient::DispatchWatch(uintptr_t id, int type, int state, const char* path) {
  // Session events reach path watchers too; the watch stays armed (the C
  // client re-registers it on reconnect). LOST is handled by the session.
  // NOTWATCHING: a watch we removed ourselves.
  if (type == ZOO_SESSION_EVENT || type == ZOO_NOTWATCHING_EVENT) return;
  WatchFn watch;
  {
    absl::MutexLock lock(&mu_);
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    watch = std::move(it->second.fn);
    EraseWatch(it);
  }
  if (!watch) return;  // cancelled
  watch(type, path != nullptr ? std::string(path) : std::string());
}

void ZkClient::DispatchSessionEvent(int state) {
  on_event_(state);
}

// Each request: begin the call (or complete inline with ZCLOSING), hand a
// heap context to the C library, complete inline if it refused the request.
void ZkClient::Create(const std::string& path, absl::string_view data, CreateMode mode,
                      const std::vector<Acl>& acl, CreateDone done) {
  if (!BeginCall()) return done(ClosedCode(), "", Stat());
  CAclVector c_acl(acl);
  if (TakeFault(dropped_create_replies, path)) {
    done = [done = std::move(done)](int rc, const std::string& created, const Stat& stat) {
      done(rc == ZOK ? ZCONNECTIONLOSS : rc, "", Stat());
    };
  }
  auto* context = Track(new Context<CreateDone>(this, std::move(done)));
  int rc = zoo_acreate2(zh_, path.c_str(), data.data(), static_cast<int>(data.size()),
                        c_acl.get(), ModeToC(mode), CreateTrampoline, context);
  EndCall();
  if (rc != ZOK) {
    Refused(context, rc);
  }
}

void ZkClient::Delete(const std::string& path, int32_t version, VoidDone done) {
  if (TakeFault(lost_deletes, path)) return done(ZCONNECTIONLOSS);
  if (!BeginCall()) return done(ClosedCode());
  auto* context = Track(new Context<VoidDone>(this, std::move(done)));
  int rc = zoo_adelete(zh_, path.c_str(), version, VoidTrampoline, context);
  EndCall();
  if (rc != ZOK) {
    Refused(context, rc);
  }
}

int ZkClient::DeleteBlocking(const std::string& path, int32_t version) {
  if (TakeFault(lost_deletes, path)) return ZCONNECTIONLOSS;
  if (!BeginCall()) return ClosedCode();
  const absl::Duration sent_at = clock_->Monotonic();
  int rc = zoo_delete(zh_, path.c_str(), version);
  EndCall();
  if (IsServerAnswer(rc)) NoteResponse(sent_at);
  return Outcome(rc);
}

uintptr_t ZkClient::Exists(const std::string& path, WatchFn watch, StatDone done) {
  if (!BeginCall()) {
    done(ClosedCode(), Stat());
    return 0;
  }
  uintptr_t watch_id = RegisterWatch(path, /*child=*/false, std::move(watch));
  auto* context = Track(new Context<StatDone>(
      this, [this, watch_id, done = std::move(done)](int rc, const Stat& stat) {
        WatchReplied(watch_id, rc == ZOK || rc == ZNONODE);
        done(rc, stat);
      }));
  int rc = watch_id != 0 ? zoo_awexists(zh_, path.c_str(), PathWatcher,
                                        reinterpret_cast<void*>(watch_id), StatTrampoline, context)
                         : zoo_aexists(zh_, path.c_str(), 0, StatTrampoline, context);
  EndCall();
  if (rc != ZOK) {
    Refused(context, rc);
  }
  return watch_id;
}

uintptr_t ZkClient::Get(const std::string& path, WatchFn watch, DataDone done) {
  if (!BeginCall()) {
    done(ClosedCode(), "", Stat());
    return 0;
  }
  uintptr_t watch_id = RegisterWatch(path, /*child=*/false, std::move(watch));
  auto* context = Track(new Context<DataDone>(
      this, [this, watch_id, done = std::move(done)](int rc, std::string data,
                                                     const Stat& stat) {
        WatchReplied(watch_id, rc == ZOK);
        done(rc, std::move(data), stat);
      }));
  int rc = watch_id != 0 ? zoo_awget(zh_, path.c_str(), PathWatcher,
                                     reinterpret_cast<void*>(watch_id), DataTrampoline, context)
                         : zoo_aget(zh_, path.c_str(), 0, DataTrampoline, context);
  EndCall();
  if (rc != ZOK) {
    Refused(context, rc);
  }
  return watch_id;
}

void ZkClient::Set(const std::string& path, absl::string_view data, int32_t version,
                   StatDone done) {
  if (!BeginCall()) return done(ClosedCode(), Stat());
  auto* context = Track(new Context<StatDone>(this, std::move(done)));
  int rc = zoo_aset(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), version,
                    StatTrampoline, context);
  EndCall();
  if (rc != ZOK) {
    Refused(context, rc);
  }
}

uintptr_t ZkClient::GetChildren(const std::string& path, WatchFn watch, ChildrenDone done) {
  if (!BeginCall()) {
    done(ClosedCode(), {});
    return 0;
  }
  if (TakeFault(dropped_children_replies, path)) {
    done = [done = std::move(done)](int rc, std::vector<std::string>) {
      done(rc == ZOK ? ZCONNECTIONLOSS : rc, {});
    };
  }
  uintptr_t watch_id = RegisterWatch(path, /*child=*/true, std::move(watch));
  auto* context = Track(new Context<ChildrenDone>(
      this, [this, watch_id, done = std::move(done)](int rc, std::vector<std::string> children) {
        WatchReplied(watch_id, rc == ZOK);
        done(rc, std::move(children));
      }));
  int rc = watch_id != 0
               ? zoo_awget_children(zh_, path.c_str(), PathWatcher,
                                    reinterpret_cast<void*>(watch_id), ChildrenTrampoline, context)
               : zoo_aget_children(zh_, path.c_str(), 0, ChildrenTrampoline, context);
  EndCall();
  if (rc != ZOK) {
    Refused(context, rc);
  }
  return watch_id;
}

void ZkClient::Multi(const std::vector<Op>& ops, const std::vector<Acl>& default_acl,
                     MultiDone done) {
  if (!BeginCall()) return done(ClosedCode(), {});
  auto context = std::make_unique<MultiContext>(this);
  context->done = std::move(done);
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
  int rc = zoo_amulti(zh_, static_cast<int>(n), raw->c_ops.data(), raw->results.data(),
                      MultiTrampoline, raw);
  EndCall();
  if (rc != ZOK) {
    Refused(raw, rc);
  }
}

void ZkClient::AddAuth(const std::string& scheme, const std::string& credentials,
                       VoidDone done) {
  if (!BeginCall()) return done(ClosedCode());
  auto* context = Track(new Context<VoidDone>(this, std::move(done)));
  int rc = zoo_add_auth(zh_, scheme.c_str(), credentials.data(),
                        static_cast<int>(credentials.size()), VoidTrampoline, context);
  EndCall();
  if (rc != ZOK) {
    Refused(context, rc);
  }
}

}  // namespace zkr
