// The adaptor over the ZooKeeper C client (src/c_client.h): opening a
// handle, the client's log, session events, watches and closing. The
// requests are in src/c_client_requests.cc.
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
#include "src/c_client.h"
#include "src/watch_registry.h"
#include "src/zk_client.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {
namespace c_adaptor {

thread_local bool on_completion_thread = false;

namespace {

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

void GlobalWatcher(zhandle_t* zh, int type, int state, const char* path, void*) {
  CompletionScope scope;
  auto* client = static_cast<CClient*>(const_cast<void*>(zoo_get_context(zh)));
  if (client != nullptr && type == ZOO_SESSION_EVENT) client->DispatchSessionEvent(state);
}

}  // namespace

// The C client's watch callback for every request that set a watch, with
// our watch id as its context.
void PathWatcher(zhandle_t* zh, int type, int state, const char* path, void* ctx) {
  CompletionScope scope;
  auto* client = static_cast<CClient*>(const_cast<void*>(zoo_get_context(zh)));
  if (client == nullptr) return;
  client->DispatchWatch(reinterpret_cast<uintptr_t>(ctx), type, path);
}

}  // namespace c_adaptor

using c_adaptor::CClient;

void SetClientLog(std::function<void(absl::string_view)> sink, ClientLogLevel level) {
  absl::MutexLock lock(&c_adaptor::log_mu);
  delete c_adaptor::log_sink;
  c_adaptor::log_sink = new std::function<void(absl::string_view)>(std::move(sink));
  zoo_set_debug_level(static_cast<ZooLogLevel>(level));
}

bool OnCompletionThread() { return c_adaptor::on_completion_thread; }

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
  zhandle_t* zh = zookeeper_init2(connect.c_str(), c_adaptor::GlobalWatcher,
                                  static_cast<int>(absl::ToInt64Milliseconds(session_timeout)),
                                  nullptr, client.get(), 0, c_adaptor::LogCallback);
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

namespace c_adaptor {

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
    // The C client sends closeSession only while connected, and closes its
    // socket at once, without waiting for the answer: a reply still on its
    // way then meets a closed socket, the connection is reset, and the
    // server may drop our closeSession unread. Either way our ephemeral
    // nodes would stay a session timeout longer. So first let a connection
    // that is being made again come up, and the answers to what is in
    // flight arrive (bounded by SetCloseSettle: within the session's lease;
    // not on the completion thread, which delivers both).
    // (A session that never connected, expired or is lost gets no settle.)
    if (zh_ != nullptr && close_settle_ > absl::ZeroDuration() && !OnCompletionThread()) {
      mu_.AwaitWithTimeout(absl::Condition(this, &CClient::QuietAndConnected), close_settle_);
    }
    // Forgotten before it is closed: zookeeper_close frees the handle, and
    // the accessors (session_id(), negotiated_timeout(), ...) read it under
    // mu_ from any thread; from now on they answer as for a closed client.
    zh = std::exchange(zh_, nullptr);
  }
  if (zh != nullptr) zookeeper_close(zh);
  absl::flat_hash_set<PendingCall*> dropped;
  {
    absl::MutexLock lock(&mu_);
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
  {
    absl::MutexLock lock(&mu_);  // for Close(), which waits for a connection
    connected_ = state == ZOO_CONNECTED_STATE;
  }
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

}  // namespace c_adaptor
}  // namespace internal
}  // namespace zkr
