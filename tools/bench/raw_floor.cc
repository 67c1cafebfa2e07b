#include "tools/bench/raw_floor.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "src/zk_client.h"

namespace zkr {

using internal::kServerResolutionDelayMs;
namespace bench {
namespace {

void ConnectWatcher(zhandle_t*, int type, int state, const char*, void* context) {
  if (type == ZOO_SESSION_EVENT && state == ZOO_CONNECTED_STATE) {
    auto* connected = static_cast<absl::Notification*>(context);
    if (!connected->HasBeenNotified()) connected->Notify();
  }
}

absl::Status Failed(const char* op, const std::string& path, int rc) {
  return absl::InternalError(absl::StrCat("raw ", op, " ", path, ": ", zerror(rc)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RawClient>> RawClient::Connect(const std::string& connect,
                                                             Settings settings) {
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  std::unique_ptr<RawClient> client(new RawClient());
  client->zh_ = zookeeper_init(connect.c_str(), ConnectWatcher, 10000, nullptr,
                               &client->connected_, 0);
  if (client->zh_ == nullptr) return absl::UnavailableError(absl::StrCat("raw connect ", connect));
  if (settings == Settings::kAsZkrecipes) {
    zoo_set_servers_resolution_delay(client->zh_, kServerResolutionDelayMs);
  }
  if (!client->connected_.WaitForNotificationWithTimeout(absl::Seconds(15))) {
    return absl::UnavailableError(absl::StrCat("raw connect ", connect, ": timed out"));
  }
  return client;
}

RawClient::~RawClient() { Close(); }

void RawClient::Close() {
  if (zh_ != nullptr) zookeeper_close(zh_);
  zh_ = nullptr;
}

absl::Status RawCycles(RawClient& client, const std::string& dir, int cycles, Samples* samples) {
  const std::string prefix = dir + "/raw-W-";
  char created[512];
  for (int i = 0; i < cycles; ++i) {
    absl::Time start = absl::Now();
    int rc = zoo_create(client.get(), prefix.c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE,
                        ZOO_EPHEMERAL_SEQUENTIAL, created, sizeof(created));
    if (rc != ZOK) return Failed("create", prefix, rc);
    String_vector children;
    rc = zoo_get_children(client.get(), dir.c_str(), 0, &children);
    if (rc != ZOK) return Failed("get children", dir, rc);
    deallocate_String_vector(&children);
    rc = zoo_delete(client.get(), created, -1);
    if (rc != ZOK) return Failed("delete", created, rc);
    samples->Add(absl::Now() - start);
  }
  return absl::OkStatus();
}

namespace {

// The replies one step of a joint cycle waits for, and the first failure.
struct Replies {
  explicit Replies(int n) : left(n) {}
  absl::BlockingCounter left;
  std::atomic<int> failed{ZOK};
  void One(int rc) {
    int ok = ZOK;
    if (rc != ZOK) failed.compare_exchange_strong(ok, rc);
    left.DecrementCount();
  }
  int Await() {
    left.Wait();
    return failed;
  }
};

void MultiReplied(int rc, const void* data) {
  static_cast<Replies*>(const_cast<void*>(data))->One(rc);
}

void ListReplied(int rc, const String_vector*, const void* data) {
  static_cast<Replies*>(const_cast<void*>(data))->One(rc);
}

}  // namespace

absl::Status RawJointCycles(RawClient& client, const std::vector<std::string>& dirs, int cycles,
                            Samples* samples, bool counted) {
  const size_t k = dirs.size();
  const size_t per_part = counted ? 2 : 1;  // the create (and the directory's write)
  std::vector<std::string> prefixes;
  for (const std::string& dir : dirs) prefixes.push_back(dir + "/raw-W-");
  std::vector<std::vector<char>> created(k, std::vector<char>(512));
  std::vector<zoo_op_t> ops(per_part * k);
  std::vector<zoo_op_result_t> results(per_part * k);
  std::vector<::Stat> directories(k);
  for (int i = 0; i < cycles; ++i) {
    absl::Time start = absl::Now();
    for (size_t p = 0; p < k; ++p) {
      zoo_create_op_init(&ops[per_part * p], prefixes[p].c_str(), nullptr, -1,
                         &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL, created[p].data(),
                         created[p].size());
      if (counted) zoo_set_op_init(&ops[2 * p + 1], dirs[p].c_str(), "", 0, -1, &directories[p]);
    }
    Replies made(counted ? 1 : int(k) + 1);
    int rc = zoo_amulti(client.get(), int(per_part * k), ops.data(), results.data(),
                        MultiReplied, &made);
    if (rc != ZOK) return Failed("multi create", dirs[0], rc);
    for (size_t p = 0; p < k && !counted; ++p) {
      rc = zoo_aget_children(client.get(), dirs[p].c_str(), 0, ListReplied, &made);
      if (rc != ZOK) return Failed("get children", dirs[p], rc);  // (a rare bench failure)
    }
    if ((rc = made.Await()) != ZOK) return Failed("multi create (+ listings)", dirs[0], rc);
    for (size_t p = 0; p < k && counted; ++p) {  // each part alone in its directory: held
      if (directories[p].numChildren != 1) return Failed("multi create: not alone", dirs[p], rc);
    }
    for (size_t p = 0; p < k; ++p) zoo_delete_op_init(&ops[p], created[p].data(), -1);
    Replies deleted(1);
    rc = zoo_amulti(client.get(), int(k), ops.data(), results.data(), MultiReplied, &deleted);
    if (rc != ZOK) return Failed("multi delete", dirs[0], rc);
    if ((rc = deleted.Await()) != ZOK) return Failed("multi delete", dirs[0], rc);
    samples->Add(absl::Now() - start);
  }
  return absl::OkStatus();
}

namespace {

void PredecessorGone(zhandle_t*, int type, int, const char*, void* context) {
  if (type == ZOO_SESSION_EVENT) return;
  auto* gone = static_cast<absl::Notification*>(context);
  gone->Notify();
}

}  // namespace

absl::Status RawParticipant::Enqueue(const std::string& prefix, std::string* mine) {
  const std::string path = dir_ + "/" + prefix;
  char created[512];
  const int rc = zoo_create(client_.get(), path.c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE,
                            ZOO_EPHEMERAL_SEQUENTIAL, created, sizeof(created));
  if (rc != ZOK) return Failed("create", path, rc);
  node_ = created;
  *mine = node_.substr(dir_.size() + 1);
  return absl::OkStatus();
}

absl::Status RawParticipant::Release() {
  const int rc = zoo_delete(client_.get(), node_.c_str(), -1);
  return rc == ZOK ? absl::OkStatus() : Failed("delete", node_, rc);
}

absl::Status RawTextbookLock::Acquire() {
  std::string mine;
  if (absl::Status created = Enqueue("lock-", &mine); !created.ok()) return created;
  int rc;
  for (;;) {
    String_vector children;
    rc = zoo_get_children(client_.get(), dir_.c_str(), 0, &children);
    if (rc != ZOK) return Failed("get children", dir_, rc);
    // One prefix and %010d suffixes: name order is creation order.
    std::string predecessor;
    for (int i = 0; i < children.count; ++i) {
      std::string child = children.data[i];
      if (child < mine && child > predecessor) predecessor = std::move(child);
    }
    deallocate_String_vector(&children);
    if (predecessor.empty()) return absl::OkStatus();
    // Owned by the watch: it fires only if the predecessor existed.
    auto* gone = new absl::Notification;
    const std::string path = dir_ + "/" + predecessor;
    rc = zoo_wexists(client_.get(), path.c_str(), PredecessorGone, gone, nullptr);
    if (rc == ZNONODE) continue;  // gone already (its never-firing watch keeps `gone`)
    if (rc != ZOK) return Failed("exists+watch", path, rc);
    waiting_->Add(1);
    gone->WaitForNotification();
    waiting_->Add(-1);
    delete gone;
  }
}

namespace {

// A child watch's context, shared by the waiter and the watch (which may
// fire long after the waiter got in): the last of the two frees it.
struct ChildWatch {
  absl::Notification changed;
  std::atomic<int> owners{2};
  void Drop() {
    if (owners.fetch_sub(1) == 1) delete this;
  }
};

void ChildrenChanged(zhandle_t*, int type, int, const char*, void* context) {
  if (type == ZOO_SESSION_EVENT) return;
  auto* watch = static_cast<ChildWatch*>(context);
  watch->changed.Notify();
  watch->Drop();
}

}  // namespace

absl::Status RawTextbookSemaphore::Acquire() {
  std::string mine;
  if (absl::Status created = Enqueue("sem-", &mine); !created.ok()) return created;
  const bool herd = rule_ == Rule::kChildWatch;
  int rc;
  for (;;) {
    ChildWatch* watch = herd ? new ChildWatch : nullptr;
    String_vector children;
    rc = herd ? zoo_wget_children(client_.get(), dir_.c_str(), ChildrenChanged, watch, &children)
              : zoo_get_children(client_.get(), dir_.c_str(), 0, &children);
    if (rc != ZOK) return Failed("get children", dir_, rc);
    // One prefix and %010d suffixes: name order is creation order. (The
    // names are kept only for kAhead: the textbook's floor only counts.)
    int count = 0;
    std::vector<std::string> before;
    for (int i = 0; i < children.count; ++i) {
      if (std::string(children.data[i]) >= mine) continue;
      ++count;
      if (!herd) before.push_back(children.data[i]);
    }
    deallocate_String_vector(&children);
    if (count < leases_) {
      if (herd) watch->Drop();  // the watch stays set; it frees the context when it fires
      return absl::OkStatus();
    }
    if (herd) {
      watch->changed.WaitForNotification();
      watch->Drop();
      continue;
    }
    if (absl::Status waited = AwaitAhead(std::move(before)); !waited.ok()) return waited;
  }
}

absl::Status RawTextbookSemaphore::AwaitAhead(std::vector<std::string> before) {
  std::sort(before.begin(), before.end());
  const std::string path = dir_ + "/" + before[before.size() - leases_];
  // Owned by the watch: it fires only if the node existed.
  auto* gone = new absl::Notification;
  const int rc = zoo_wexists(client_.get(), path.c_str(), PredecessorGone, gone, nullptr);
  if (rc == ZNONODE) return absl::OkStatus();  // its never-firing watch keeps `gone`
  if (rc != ZOK) return Failed("exists+watch", path, rc);
  gone->WaitForNotification();
  delete gone;
  return absl::OkStatus();
}

namespace {

// One asynchronous cycle: create -> getChildren -> delete, chained or
// pipelined.
struct AsyncCycle {
  zhandle_t* zh;
  std::string dir;
  bool delete_from_caller = false;  // the listing's completion ends the wait
  std::string created;
  int rc = ZOK;
  absl::Notification done;
};

void AsyncDeleted(int rc, const void* data) {
  auto* c = static_cast<AsyncCycle*>(const_cast<void*>(data));
  c->rc = rc;
  c->done.Notify();
}

void AsyncListed(int rc, const String_vector*, const void* data) {
  auto* c = static_cast<AsyncCycle*>(const_cast<void*>(data));
  if (rc == ZOK) rc = c->rc;  // a pipelined cycle's create may have failed
  if (rc != ZOK || c->delete_from_caller) return AsyncDeleted(rc, data);
  zoo_adelete(c->zh, c->created.c_str(), -1, AsyncDeleted, c);
}

// Chained: the listing is sent from the create's completion.
void AsyncCreated(int rc, const char* path, const void* data) {
  auto* c = static_cast<AsyncCycle*>(const_cast<void*>(data));
  if (rc != ZOK) return AsyncDeleted(rc, data);
  c->created = path;
  zoo_aget_children(c->zh, c->dir.c_str(), 0, AsyncListed, c);
}

// Pipelined: the listing was sent right behind the create, without waiting
// for its reply (the server answers a session's requests in order, so the
// listing already holds the new node); the delete follows the listing's
// reply.
void PipelinedCreated(int rc, const char* path, const void* data) {
  auto* c = static_cast<AsyncCycle*>(const_cast<void*>(data));
  c->rc = rc;
  if (rc == ZOK) c->created = path;
}

// `cycles` timed create -> getChildren -> delete cycles through the
// asynchronous API, chained or pipelined.
absl::Status AsyncCycles(RawClient& client, const std::string& dir, bool pipelined,
                         bool delete_from_caller, int cycles, Samples* samples) {
  const std::string prefix = dir + (pipelined ? "/praw-W-" : "/araw-W-");
  for (int i = 0; i < cycles; ++i) {
    AsyncCycle cycle;
    cycle.zh = client.get();
    cycle.dir = dir;
    cycle.delete_from_caller = delete_from_caller;
    absl::Time start = absl::Now();
    zoo_acreate(client.get(), prefix.c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE,
                ZOO_EPHEMERAL_SEQUENTIAL, pipelined ? PipelinedCreated : AsyncCreated, &cycle);
    if (pipelined) zoo_aget_children(client.get(), dir.c_str(), 0, AsyncListed, &cycle);
    cycle.done.WaitForNotification();
    if (cycle.rc == ZOK && delete_from_caller) {
      cycle.rc = zoo_delete(client.get(), cycle.created.c_str(), -1);
    }
    if (cycle.rc != ZOK) {
      return Failed(pipelined ? "pipelined cycle" : "async cycle", prefix, cycle.rc);
    }
    samples->Add(absl::Now() - start);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RawAsyncCycles(RawClient& client, const std::string& dir, int cycles,
                            Samples* samples) {
  return AsyncCycles(client, dir, /*pipelined=*/false, /*delete_from_caller=*/false, cycles,
                     samples);
}

absl::Status RawPipelinedCycles(RawClient& client, const std::string& dir, int cycles,
                                Samples* samples) {
  return AsyncCycles(client, dir, /*pipelined=*/true, /*delete_from_caller=*/false, cycles,
                     samples);
}

absl::Status RawPipelinedReturningCycles(RawClient& client, const std::string& dir, int cycles,
                                         Samples* samples) {
  return AsyncCycles(client, dir, /*pipelined=*/true, /*delete_from_caller=*/true, cycles,
                     samples);
}

namespace {

// Shared state of the pipelined run. Completions run on the handle's
// completion thread; the one that finishes the last pair notifies `all_done`
// and touches nothing after that, because the waiting thread then destroys it.
struct Pipeline {
  zhandle_t* zh;
  std::string prefix;
  int pairs_total = 0;
  std::atomic<int> to_start{0};
  std::atomic<int> pairs_done{0};
  std::atomic<int> failures{0};
  absl::Notification all_done;
};

void StartPair(Pipeline* p);

void Deleted(int rc, const void* data) {
  auto* p = static_cast<Pipeline*>(const_cast<void*>(data));
  if (rc != ZOK) ++p->failures;
  StartPair(p);  // Before counting this pair done: `p` may vanish after that.
  const int total = p->pairs_total;
  if (p->pairs_done.fetch_add(1) + 1 == total) p->all_done.Notify();
}

void Created(int rc, const char* path, const void* data) {
  auto* p = static_cast<Pipeline*>(const_cast<void*>(data));
  if (rc != ZOK) {
    ++p->failures;
    Deleted(rc, data);
    return;
  }
  zoo_adelete(p->zh, path, -1, Deleted, p);
}

void StartPair(Pipeline* p) {
  if (p->to_start.fetch_sub(1) <= 0) return;
  zoo_acreate(p->zh, p->prefix.c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE,
              ZOO_EPHEMERAL_SEQUENTIAL, Created, p);
}

}  // namespace

absl::StatusOr<double> RawPipelined(RawClient& client, const std::string& dir, int pairs,
                                    int in_flight) {
  Pipeline pipeline;
  pipeline.zh = client.get();
  pipeline.prefix = dir + "/pipe-W-";
  pipeline.to_start = pairs;
  pipeline.pairs_total = pairs;
  absl::Time start = absl::Now();
  for (int i = 0; i < in_flight; ++i) StartPair(&pipeline);
  pipeline.all_done.WaitForNotification();
  absl::Duration elapsed = absl::Now() - start;
  if (pipeline.failures > 0) return absl::InternalError("raw pipelined run: failures");
  return 2.0 * pairs / absl::ToDoubleSeconds(elapsed);
}

namespace {

struct Handoff {
  zhandle_t* waiter;
  std::string dir;
  absl::Time replied;
  absl::Notification done;
};

void ChildrenReplied(int rc, const String_vector*, const void* data) {
  auto* h = static_cast<Handoff*>(const_cast<void*>(data));
  h->replied = absl::Now();
  h->done.Notify();
}

void BlockerGone(zhandle_t* zh, int type, int, const char*, void* context) {
  if (type == ZOO_SESSION_EVENT) return;
  auto* h = static_cast<Handoff*>(context);
  zoo_aget_children(zh, h->dir.c_str(), 0, ChildrenReplied, h);
}

void Synced(int, const char*, const void* data) {
  static_cast<absl::Notification*>(const_cast<void*>(data))->Notify();
}

// Brings `zh`'s server up to date with the leader before a read: on an
// ensemble another session's create may not have reached the member this
// one talks to yet (ZooKeeper promises a session its own writes in order,
// not another's).
int SyncBlocking(zhandle_t* zh, const std::string& path) {
  absl::Notification synced;
  const int rc = zoo_async(zh, path.c_str(), Synced, &synced);
  if (rc == ZOK) synced.WaitForNotification();
  return rc;
}

// Creates a node with `holder` that `waiter` watches; `remove` then makes it
// go; one sample from `remove` to the waiter's getChildren reply.
template <typename Remove>
absl::Status OneHandoff(zhandle_t* holder, RawClient& waiter, const std::string& dir, int mode,
                        absl::Duration settle, Remove remove, Samples* samples) {
  const std::string prefix = dir + "/hand-W-";
  char created[512];
  int rc = zoo_create(holder, prefix.c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE, mode, created,
                      sizeof(created));
  if (rc != ZOK) return Failed("create", prefix, rc);
  // The watch may still fire after a failed round, so a round that gives up
  // leaves its Handoff to the watch instead of freeing it under it.
  auto handoff = std::make_unique<Handoff>();
  handoff->waiter = waiter.get();
  handoff->dir = dir;
  rc = SyncBlocking(waiter.get(), dir);
  if (rc != ZOK) return Failed("sync", dir, rc);
  char buffer[64];
  int length = sizeof(buffer);
  rc = zoo_wget(waiter.get(), created, BlockerGone, handoff.get(), buffer, &length, nullptr);
  if (rc != ZOK) return Failed("get+watch", created, rc);
  absl::SleepFor(settle);
  absl::Time start = absl::Now();
  rc = remove(created);
  if (rc != ZOK) {
    handoff.release();
    return Failed("remove", created, rc);
  }
  if (!handoff->done.WaitForNotificationWithTimeout(absl::Seconds(10))) {
    handoff.release();
    return absl::DeadlineExceededError("raw handoff: no watch event");
  }
  samples->Add(handoff->replied - start);
  return absl::OkStatus();
}

}  // namespace

absl::Status RawHandoff(RawClient& holder, RawClient& waiter, const std::string& dir, int rounds,
                        absl::Duration settle, Samples* samples) {
  for (int i = 0; i < rounds; ++i) {
    absl::Status status = OneHandoff(
        holder.get(), waiter, dir, ZOO_EPHEMERAL_SEQUENTIAL, settle,
        [&](const char* path) { return zoo_delete(holder.get(), path, -1); }, samples);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status RawFailover(const std::string& connect, RawClient& waiter, const std::string& dir,
                         int rounds, Samples* samples) {
  for (int i = 0; i < rounds; ++i) {
    absl::StatusOr<std::unique_ptr<RawClient>> holder = RawClient::Connect(connect);
    if (!holder.ok()) return holder.status();
    zhandle_t* zh = (*holder)->get();
    absl::Status status = OneHandoff(
        zh, waiter, dir, ZOO_EPHEMERAL_SEQUENTIAL, kFailoverSettle,
        [&](const char*) {
          (*holder)->Close();
          return ZOK;
        },
        samples);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace bench
}  // namespace zkr
