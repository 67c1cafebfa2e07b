// The requests of the C adaptor (src/c_client.h): each one's context, its
// trampoline from the C library, and CClient's method that sends it. Every
// reply's status is built here, once.
#include <zookeeper/zookeeper.h>

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/c_client.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {
namespace c_adaptor {
namespace {

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

}  // namespace

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
  ChildList children;
  if (strings != nullptr) {
    size_t bytes = 0;
    for (int i = 0; i < strings->count; ++i) bytes += strlen(strings->data[i]);
    children.Reserve(strings->count, bytes);
    for (int i = 0; i < strings->count; ++i) children.Add(strings->data[i]);
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
  std::optional<uintptr_t> registered = RegisterWatch(path, /*child=*/false, std::move(watch), done);
  if (!registered) return 0;
  const uintptr_t watch_id = *registered;
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
  std::optional<uintptr_t> registered = RegisterWatch(path, /*child=*/false, std::move(watch), done);
  if (!registered) return 0;
  const uintptr_t watch_id = *registered;
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
  std::optional<uintptr_t> registered = RegisterWatch(path, /*child=*/true, std::move(watch), done);
  if (!registered) return 0;
  const uintptr_t watch_id = *registered;
  auto* context = Track(new Context<ChildrenDone>(
      this, "get children of", path,
      [this, watch_id, done = std::move(done)](absl::StatusOr<ChildList> children) {
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

void CClient::RemoveServerWatches(const WatchRegistry::Place& place) {
  zhandle_t* zh = BeginCall();
  if (zh == nullptr) return watches_.RemovalDone(place);  // closing: all goes
  // ZNOWATCHER (it fired meanwhile) is fine. The C client drops its own
  // copy only when the server answers OK; if the connection is lost first,
  // it sets the watch again on reconnect (it would fire into an id we no
  // longer know, and be ignored, but the server would hold it until then):
  // so the removal is sent again once connected. `local` is not used: in
  // the asynchronous call it treats `data` as a synchronous waiter. The
  // header's `void_completion_t*` is really the function itself.
  auto* context = Track(new Context<VoidDone>(
      this, "remove watches of", place.path, [this, place](absl::Status status) {
        // Removed, fired, or the session is gone: the C client holds it no more.
        if (!IsRetryable(status)) return watches_.RemovalDone(place);
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

}  // namespace c_adaptor
}  // namespace internal
}  // namespace zkr
