#include "src/session_core.h"


#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/session_limits.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {
namespace {

bool IsConnectedState(SessionState state) {
  return state == SessionState::kConnected || state == SessionState::kReconnected;
}

}  // namespace

SessionCore::SessionCore(SessionOptions options, ClientFactory factory)
    : options_(std::move(options)),
      client_factory_(std::move(factory)),
      clock_(options_.clock != nullptr ? options_.clock : SystemClock()),
      default_acl_(options_.default_acl.empty() ? OpenAcl() : options_.default_acl),
      dispatcher_(std::make_unique<Dispatcher>()),
      events_(options_.observer, dispatcher_.get()),
      watch_budget_(std::make_shared<WatchBudget>(
          WatchReservationLimit(options_),
          "7/8 of SessionOptions::max_request_bytes, the server's jute.maxbuffer")) {
  if (events_.on()) {
    absl::MutexLock lock(&mu_);
    state_since_ = clock_->Monotonic();
  }
}

void SessionCore::ReportRetry(absl::string_view operation, const std::string& path, int attempt,
                              const absl::Status& reason, absl::Duration backoff) const {
  if (!events_.on()) return;
  events_.Report(&Observer::OnRetry,
                 Retry{std::string(operation), path, attempt, reason, backoff});
}

// Debian's Abseil is built without NDEBUG, so by default every absl::Mutex
// operation also maintains a lock-order graph for deadlock detection
// (GraphCycles in a lock cycle's profile). A release build of ours turns
// it off once, process-wide, when its first session connects; a debug
// build (and the tests' sanitizer builds) keeps it. A program that wants
// the detector can set it again after connecting.
namespace {
void SkipMutexDeadlockDetectionInReleaseBuilds() {
#ifdef NDEBUG
  static std::once_flag once;
  std::call_once(once, [] {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  });
#endif
}
}  // namespace

absl::StatusOr<std::shared_ptr<SessionCore>> SessionCore::Connect(SessionOptions options,
                                                                  ClientFactory factory) {
  ZKR_RETURN_IF_ERROR(ValidateSessionOptions(options));
  SkipMutexDeadlockDetectionInReleaseBuilds();
  SetClientLog(options.log_sink, options.log_level);
  std::shared_ptr<SessionCore> core(new SessionCore(std::move(options), std::move(factory)));
  ZKR_RETURN_IF_ERROR(core->OpenGeneration());
  core->supervisor_ = std::thread([raw = core.get()] { raw->Supervise(); });

  const SessionOptions& opts = core->options_;
  bool connected = false;
  bool chroot_missing = false;
  absl::Status auth;
  {
    absl::MutexLock lock(&core->mu_);
    core->mu_.AwaitWithTimeout(absl::Condition(core.get(), &SessionCore::ConnectSettled),
                               opts.connect_timeout);
    connected = core->FirstGenerationUsable();
    auth = core->auth_status_;
    chroot_missing = core->first_answer_ == FirstAnswer::kChrootMissing;
  }
  if (chroot_missing) {
    core->Close();
    const size_t slash = opts.connect.find('/');
    return absl::NotFoundError(absl::StrCat(
        "connect \"", opts.connect, "\": the server answered, but the chroot \"",
        opts.connect.substr(slash), "\" does not exist (create it first, without the chroot)"));
  }
  if (!auth.ok()) {
    core->Close();
    return auth;
  }
  if (!connected) {
    core->Close();
    return absl::UnavailableError(absl::StrCat(
        "connect \"", opts.connect, "\": no ZooKeeper server answered within ",
        absl::FormatDuration(opts.connect_timeout)));
  }
  return core;
}

SessionCore::~SessionCore() {
  Close();
  dispatcher_->Shutdown();  // before the members its tasks may use go
}

absl::Status SessionCore::OpenGeneration() {
  std::shared_ptr<ZkClient> client;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::CancelledError("session closed");
    const uint64_t generation = ++generation_;
    generation_connected_once_ = false;
    first_answer_ = FirstAnswer::kPending;
    heard_in_order_ = absl::ZeroDuration();
    auth_pending_ = !options_.digest_auth.empty();
    // Opened under the lock so that no event of the new generation can be
    // seen before client_ and generation_ agree; the C client never waits
    // for its completion thread here.
    ZKR_ASSIGN_OR_RETURN(client, client_factory_(options_.connect, options_.session_timeout,
                                                 clock_, [this, generation](ZkClient::Event event) {
                                                   OnClientEvent(generation, event);
                                                 }));
    client->LimitWatches(WatchBytesLimit(options_), WatchedPathOverhead(options_));
    client_ = client;
  }
  if (!options_.digest_auth.empty()) {
    const uint64_t generation = this->generation();
    client->AddAuth("digest", options_.digest_auth, [this, generation](absl::Status added) {
      absl::MutexLock lock(&mu_);
      if (generation != generation_) return;
      auth_pending_ = false;
      auth_status_ = std::move(added);
    });
  }
  return absl::OkStatus();
}

void SessionCore::Close() {
  std::vector<std::shared_ptr<ZkClient>> clients;
  std::shared_ptr<ZkClient> current;
  absl::Duration settle;
  Notice notice;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      // Another thread is closing it: return once the server has closed it
      // too (a caller may exit the process next).
      mu_.Await(absl::Condition(&handles_closed_));
      return;
    }
    closed_ = true;
    // The current handle may first let its close reach the server (its
    // answers in flight, a connection being made again) — but only within
    // the lease: once it is over, someone else may hold what we held, and
    // a caller that ends after Close() must not outlive that.
    settle = std::max(absl::ZeroDuration(),
                      std::min({absl::Seconds(1), NegotiatedTimeoutLocked() / 3,
                                LeaseEnd() - clock_->Monotonic()}));
    notice = SetState(SessionState::kClosed);
    clients = std::move(clients_to_close_);
    if (client_ != nullptr) clients.push_back(client_);
    current = client_;
  }
  if (current != nullptr) current->SetCloseSettle(settle);
  // The handles first: closing the session on the server is what others wait
  // for (its ephemeral nodes go at once); our own threads can end after.
  for (auto& client : clients) client->Close();
  {
    absl::MutexLock lock(&mu_);
    handles_closed_ = true;
  }
  if (supervisor_.joinable()) supervisor_.join();
  Notify(std::move(notice));
  // Runs what is queued (the kClosed notices). The thread stays until the
  // core goes, so that calls made after Close() still complete on it.
  dispatcher_->Drain();
}

SessionCore::Handle SessionCore::current() const {
  absl::MutexLock lock(&mu_);
  return Handle{client_, generation_};
}

SessionState SessionCore::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

uint64_t SessionCore::generation() const {
  absl::MutexLock lock(&mu_);
  return generation_;
}

int64_t SessionCore::session_id() const {
  absl::MutexLock lock(&mu_);
  return generation_connected_once_ && client_ != nullptr ? client_->session_id() : 0;
}

absl::Duration SessionCore::negotiated_timeout() const {
  absl::MutexLock lock(&mu_);
  return NegotiatedTimeoutLocked();
}

bool SessionCore::closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

bool SessionCore::IsConnected(uint64_t generation) const {
  absl::MutexLock lock(&mu_);
  return generation == generation_ && IsConnectedState(state_);
}

bool SessionCore::GenerationOver(uint64_t generation) const {
  absl::MutexLock lock(&mu_);
  return closed_ || generation != generation_ || state_ == SessionState::kLost;
}

absl::Time SessionCore::valid_until() const {
  absl::MutexLock lock(&mu_);
  const absl::Duration end = LeaseEnd();
  if (end == -absl::InfiniteDuration()) return absl::InfinitePast();
  return clock_->Now() + (end - clock_->Monotonic());
}

bool SessionCore::WithinLease() const { return LeaseRemaining() > absl::ZeroDuration(); }

absl::Duration SessionCore::LeaseRemaining() const {
  absl::MutexLock lock(&mu_);
  return LeaseEnd() - clock_->Monotonic();
}

// The server expires a session at the earliest one timeout after it last
// heard from us, and it heard from us no earlier than the send time of the
// latest request it answered. So the lease ends then + timeout - margin; it
// is never extended from "now", which would be wrong after a process pause.
// A heartbeat every third of the timeout keeps it fresh while idle.
absl::Duration SessionCore::LeaseEnd() const {
  if (client_ == nullptr || !(IsConnectedState(state_) || state_ == SessionState::kSuspended)) {
    return -absl::InfiniteDuration();
  }
  const absl::Duration heard = client_->last_response();
  if (heard == absl::ZeroDuration()) return -absl::InfiniteDuration();  // nothing answered yet
  return heard + LeaseLengthLocked();
}

absl::Duration SessionCore::HeardInOrder() const {
  absl::MutexLock lock(&mu_);
  return heard_in_order_;
}

absl::Duration SessionCore::LeaseLength() const {
  absl::MutexLock lock(&mu_);
  return LeaseLengthLocked();
}

absl::Duration SessionCore::LeaseLengthLocked() const {
  const absl::Duration timeout = NegotiatedTimeoutLocked();
  return timeout - options_.lease_margin.value_or(timeout / 15);
}

absl::Duration SessionCore::NegotiatedTimeoutLocked() const {
  absl::Duration timeout = client_ != nullptr ? client_->negotiated_timeout() : absl::ZeroDuration();
  return timeout > absl::ZeroDuration() ? timeout : options_.session_timeout;
}

void SessionCore::SendHeartbeat(const std::shared_ptr<ZkClient>& client, uint64_t generation) {
  absl::Duration sent;
  {
    absl::MutexLock lock(&mu_);
    if (generation != generation_) return;
    last_heartbeat_ = sent = clock_->Monotonic();
  }
  // The core outlives its clients' completions (Close() closes them first).
  client->Exists("/", nullptr, [this, generation, sent](absl::StatusOr<Stat> root) {
    absl::MutexLock lock(&mu_);
    if (generation != generation_) return;
    if (root.ok() || absl::IsNotFound(root.status())) {
      heard_in_order_ = std::max(heard_in_order_, sent);
    }
    if (first_answer_ != FirstAnswer::kPending) return;
    // The server answered; "/" is missing only under a chroot that is.
    if (root.ok()) first_answer_ = FirstAnswer::kAnswered;
    if (absl::IsNotFound(root.status())) first_answer_ = FirstAnswer::kChrootMissing;
  });
}

void SessionCore::OnClientEvent(uint64_t generation, ZkClient::Event event) {
  Notice notice;
  std::shared_ptr<ZkClient> heartbeat_client;  // on (re)connection: renew the lease
  {
    absl::MutexLock lock(&mu_);
    if (closed_ || generation != generation_) return;  // an earlier generation
    // A generation declared lost stays lost, whatever its handle says later.
    if (state_ == SessionState::kLost && generation_connected_once_) return;
    if (event == ZkClient::Event::kConnected) {
      heartbeat_client = client_;
      if (!generation_connected_once_) {
        generation_connected_once_ = true;
        notice = SetState(SessionState::kConnected);
      } else if (state_ == SessionState::kSuspended) {
        notice = SetState(SessionState::kReconnected);
      } else {
        return;
      }
    } else if (event == ZkClient::Event::kConnecting) {
      if (!IsConnectedState(state_)) return;
      notice = SetState(SessionState::kSuspended);
    } else {  // expired, or authentication failed
      if (event == ZkClient::Event::kAuthFailed) {
        auth_status_ = absl::UnauthenticatedError(
            absl::StrCat("authenticate on ", options_.connect, ": authentication failed"));
      }
      reopen_needed_ = true;
      notice = SetState(SessionState::kLost);
    }
  }
  if (heartbeat_client != nullptr) SendHeartbeat(heartbeat_client, generation);
  Notify(std::move(notice));
}

SessionCore::Notice SessionCore::SetState(SessionState state) {
  if (events_.on()) {
    const absl::Duration now = clock_->Monotonic();
    events_.Report(&Observer::OnSessionState,
                   SessionStateChange{state_, state, now - state_since_, generation_});
    state_since_ = now;
  }
  state_ = state;
  ++state_changes_;
  Notice notice{state, generation_, {}, absl::OkStatus()};
  if (IsConnectedState(state)) {
    notice.waiters.swap(connected_waiters_);
  } else if (state == SessionState::kLost || state == SessionState::kClosed) {
    notice.waiters.swap(connected_waiters_);
    notice.waiter_status = state == SessionState::kClosed
                               ? absl::CancelledError("session closed")
                               : SessionLostStatus("session", options_.connect);
  }
  // User listeners are posted under the lock so they see states in order.
  for (const auto& entry : user_listeners_) {
    std::weak_ptr<UserListener> listener = entry.second;
    uint64_t generation = generation_;
    Deliver(*dispatcher_, entry.second->gate, [listener, state, generation] {
      if (auto alive = listener.lock()) alive->call(state, generation);
    });
  }
  return notice;
}

void SessionCore::Notify(Notice notice) {
  std::vector<StateListener> listeners;
  {
    absl::MutexLock lock(&mu_);
    listeners.reserve(internal_listeners_.size());
    for (const auto& entry : internal_listeners_) listeners.push_back(entry.second);
  }
  for (const auto& listener : listeners) listener(notice.state, notice.generation);
  for (auto& waiter : notice.waiters) waiter(notice.waiter_status);
}

int SessionCore::AddInternalListener(StateListener listener) {
  absl::MutexLock lock(&mu_);
  int id = next_listener_id_++;
  internal_listeners_.emplace(id, std::move(listener));
  return id;
}

void SessionCore::RemoveInternalListener(int id) {
  absl::MutexLock lock(&mu_);
  internal_listeners_.erase(id);
}

int SessionCore::AddUserListener(StateListener listener) {
  absl::MutexLock lock(&mu_);
  int id = next_listener_id_++;
  user_listeners_[id] = std::make_shared<UserListener>(std::move(listener));
  return id;
}

void SessionCore::RemoveUserListener(int id) {
  std::shared_ptr<UserListener> removed;
  {
    absl::MutexLock lock(&mu_);
    auto it = user_listeners_.find(id);
    if (it == user_listeners_.end()) return;
    removed = std::move(it->second);
    user_listeners_.erase(it);
  }
  removed->gate->Close();  // outside mu_: the listener may call the session
}

void SessionCore::WhenConnected(uint64_t generation, std::function<void(absl::Status)> fn) {
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      status = absl::CancelledError("session closed");
    } else if (generation != generation_ || state_ == SessionState::kLost) {
      status = SessionLostStatus("session", options_.connect);
    } else if (!IsConnectedState(state_)) {
      connected_waiters_.push_back(std::move(fn));
      return;
    }
  }
  fn(status);
}

bool SessionCore::SupervisorHasWork() const {
  return closed_ || reopen_needed_ || state_changes_ != supervisor_seen_changes_;
}

bool SessionCore::FirstGenerationUsable() const {
  return generation_connected_once_ && !auth_pending_ && first_answer_ != FirstAnswer::kPending;
}

bool SessionCore::ConnectSettled() const {
  return FirstGenerationUsable() || state_ == SessionState::kLost || !auth_status_.ok();
}

void SessionCore::Supervise() {
  absl::MutexLock lock(&mu_);
  for (;;) {
    supervisor_seen_changes_ = state_changes_;
    const absl::Duration beat = NegotiatedTimeoutLocked() / 3;
    // What to wait for, on the monotonic clock: the next heartbeat while
    // connected, the lease's end while suspended.
    const absl::Duration wake = state_ == SessionState::kSuspended ? LeaseEnd()
                                : IsConnectedState(state_)          ? last_heartbeat_ + beat
                                                                    : absl::InfiniteDuration();
    mu_.AwaitWithTimeout(absl::Condition(this, &SessionCore::SupervisorHasWork),
                         wake - clock_->Monotonic());
    if (closed_) return;
    if (IsConnectedState(state_) && clock_->Monotonic() >= last_heartbeat_ + beat) {
      std::shared_ptr<ZkClient> client = client_;
      const uint64_t generation = generation_;
      mu_.Unlock();
      SendHeartbeat(client, generation);
      mu_.Lock();
      continue;
    }
    if (state_ == SessionState::kSuspended && clock_->Monotonic() >= LeaseEnd()) {
      // Still disconnected when the server may already have expired us: stop
      // believing in the session now rather than when the server says so.
      reopen_needed_ = true;
      Notice notice = SetState(SessionState::kLost);
      mu_.Unlock();
      Notify(std::move(notice));
      mu_.Lock();
      continue;
    }
    if (reopen_needed_) {
      reopen_needed_ = false;
      std::shared_ptr<ZkClient> old = client_;
      mu_.Unlock();
      if (old != nullptr) {
        old->MarkLost();  // what was in flight is lost with it, not cancelled
        old->Close();
      }
      absl::Status opened = options_.reconnect_after_loss ? OpenGeneration() : absl::OkStatus();
      mu_.Lock();
      if (!opened.ok() && !closed_) {
        reopen_needed_ = true;
        mu_.AwaitWithTimeout(absl::Condition(&closed_), absl::Seconds(1));
      }
    }
  }
}

size_t SessionCore::OpBytes(size_t path_bytes, const std::vector<Acl>* acl) const {
  return internal::OpBytes(options_, default_acl_, path_bytes, acl);
}

absl::StatusOr<ZkClient::WatchFn> SessionCore::ReservedWatch(const std::string& path,
                                                             absl::string_view what,
                                                             ZkClient::WatchFn watch) const {
  if (watch == nullptr) return watch;
  auto reservation = std::make_shared<WatchReservation>(watch_budget_);
  ZKR_RETURN_IF_ERROR(reservation->Cover(WatchedPathBytes(path.size()), what));
  return ZkClient::WatchFn(
      [reservation = std::move(reservation), watch = std::move(watch)](const WatchEvent& event) {
        // It fired, once: its room is free before anyone hears of it (a
        // callback may set the watch again at once).
        reservation->Release();
        watch(event);
      });
}

size_t SessionCore::WatchedPathBytes(size_t path_bytes) const {
  return WatchedPathOverhead(options_) + path_bytes;
}

absl::Status SessionCore::CheckRequestSize(absl::string_view op, absl::string_view path,
                                           size_t data_bytes) const {
  return internal::CheckRequestSize(options_, op, path, data_bytes);
}

}  // namespace internal
}  // namespace zkr
