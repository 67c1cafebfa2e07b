#include "recipes/lock_queue.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "recipes/queue_decision.h"
#include "src/paths.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {
namespace {

using Listing = absl::StatusOr<std::vector<std::string>>;

}  // namespace
std::shared_ptr<QueueEntry> QueueEntry::Make(std::shared_ptr<SessionCore> core, Config config) {
  return std::shared_ptr<QueueEntry>(new QueueEntry(std::move(core), std::move(config)));
}

QueueEntry::QueueEntry(std::shared_ptr<SessionCore> core, Config config)
    : core_(std::move(core)),
      config_(std::move(config)),
      participant_(NewParticipantId()),
      prefix_(NodePrefix(participant_, config_.mode)) {}

QueueEntry::~QueueEntry() {
  if (session_listener_id_ != 0) core_->RemoveInternalListener(session_listener_id_);
}

std::string QueueEntry::PathOf(absl::string_view child) const {
  return JoinPath(config_.dir, child);
}

std::shared_ptr<ZkClient> QueueEntry::Client() {
  SessionCore::Handle handle = core_->current();
  absl::MutexLock lock(&mu_);
  return handle.generation == generation_ ? handle.client : nullptr;
}

bool QueueEntry::Abandoned() {
  absl::MutexLock lock(&mu_);
  return abandoned_;
}

void QueueEntry::SetStateListener(StateListener listener) {
  absl::MutexLock lock(&mu_);
  state_listener_ = std::move(listener);
}

LockState QueueEntry::state() const {
  LockState state;
  {
    absl::MutexLock lock(&mu_);
    state = phase_ == Phase::kHeld ? held_state_ : LockState::kReleased;
  }
  // Past the session's lease the server may have expired us (say, after this
  // process was paused) even if no event has said so yet.
  if (state == LockState::kHeld && !core_->WithinLease()) {
    return LockState::kSuspended;
  }
  return state;
}

std::string QueueEntry::node_path() const {
  absl::MutexLock lock(&mu_);
  return node_name_.empty() ? "" : PathOf(node_name_);
}

int64_t QueueEntry::fencing_token() const {
  absl::MutexLock lock(&mu_);
  return token_;
}

uint64_t QueueEntry::generation() const {
  absl::MutexLock lock(&mu_);
  return generation_;
}

void QueueEntry::Start(Done done) {
  std::weak_ptr<QueueEntry> weak = weak_from_this();
  int listener = core_->AddInternalListener([weak](SessionState state, uint64_t generation) {
    if (auto self = weak.lock()) self->OnSessionState(state, generation);
  });
  const SessionState state = core_->state();
  const bool between_generations =
      state == SessionState::kLost || state == SessionState::kConnecting;
  {
    absl::MutexLock lock(&mu_);
    if (abandoned_) {  // abandoned before it started
      mu_.Unlock();
      core_->RemoveInternalListener(listener);
      done(absl::CancelledError(absl::StrCat("lock ", config_.dir, ": abandoned before start")));
      mu_.Lock();
      return;
    }
    done_ = std::move(done);
    phase_ = between_generations ? Phase::kIdle : Phase::kWorking;
    generation_ = core_->generation();
    session_listener_id_ = listener;
  }
  // A session that lost its generation is opening the next one: begin there
  // (OnSessionState), within the caller's deadline — unless it will not.
  if (!between_generations) return Begin();
  if (state == SessionState::kLost && !core_->options().reconnect_after_loss) {
    Finish(SessionLostStatus("lock", config_.dir));
  }
}

void QueueEntry::Begin() {
  if (config_.try_only) {
    Peek();
  } else {
    CreateNode(/*directory_created=*/false);
  }
}

void QueueEntry::RetryWhenConnected(std::function<void()> step) {
  auto self = shared_from_this();
  core_->WhenConnected(generation(), [self, step = std::move(step)](absl::Status connected) {
    if (connected.ok()) {
      step();
    } else {
      self->Finish(connected);
      self->MarkCleaned();  // lost or closed: the node went with the session
    }
  });
}

// Each step below: issue one request; its completion either advances, retries
// the step after a reconnect, or finishes the attempt.

void QueueEntry::Peek() {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SessionMovedOn();
  auto self = shared_from_this();
  client->GetChildren(config_.dir, nullptr, [self](Listing children) {
    if (self->Abandoned()) return;
    if (IsRetryable(children.status())) return self->RetryWhenConnected([self] { self->Peek(); });
    if (absl::IsNotFound(children.status())) return self->CreateNode(false);  // no queue: free
    if (!children.ok()) return self->Finish(children.status());
    if (!CouldAcquireNow(*children, self->config_.mode)) {
      return self->Finish(absl::DeadlineExceededError(absl::StrCat(
          "lock ", self->config_.dir, " is held; try-acquire gave up without queueing")));
    }
    self->CreateNode(false);
  });
}

void QueueEntry::CreateNode(bool directory_created) {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SessionMovedOn();
  {
    absl::MutexLock lock(&mu_);
    if (abandoned_) return;
    create_in_flight_ = true;
  }
  auto self = shared_from_this();
  const std::string path = PathOf(prefix_);
  client->Create(
      path, config_.data, CreateMode::kEphemeralSequential,
      config_.acl.empty() ? core_->default_acl() : config_.acl,
      [self, directory_created](absl::StatusOr<CreateResult> created) {
        bool abandoned;
        {
          absl::MutexLock lock(&self->mu_);
          self->create_in_flight_ = false;
          if (created.ok()) {
            self->node_name_ = std::string(NodeName(created->path));
            self->token_ = created->stat.czxid;
          }
          if (IsRetryable(created.status())) self->create_unknown_ = true;
          abandoned = self->abandoned_;
        }
        if (abandoned) return self->CleanUp();
        if (created.ok()) return self->Check();
        if (IsRetryable(created.status())) {
          return self->RetryWhenConnected([self] { self->RecoverCreate(); });
        }
        if (absl::IsNotFound(created.status()) && !directory_created) {
          return self->EnsureDirectory([self](absl::Status status) {
            if (status.ok()) {
              self->CreateNode(true);
            } else {
              self->Finish(status);
            }
          });
        }
        self->Finish(created.status());
      });
}

void QueueEntry::EnsureDirectory(std::function<void(absl::Status)> then) {
  // Each missing ancestor, then the directory itself, as container nodes.
  auto paths = std::make_shared<std::vector<std::string>>();
  for (size_t slash = config_.dir.find('/', 1); slash != std::string::npos;
       slash = config_.dir.find('/', slash + 1)) {
    paths->push_back(config_.dir.substr(0, slash));
  }
  paths->push_back(config_.dir);
  auto self = shared_from_this();
  // The step refers to itself weakly; whoever may call it next (a pending
  // create, a retry) holds it strongly, so every way out frees it.
  auto step = std::make_shared<std::function<void(size_t)>>();
  std::weak_ptr<std::function<void(size_t)>> weak_step = step;
  *step = [self, paths, weak_step, then](size_t i) {
    if (i == paths->size()) return then(absl::OkStatus());
    auto step = weak_step.lock();  // alive: our caller holds it
    std::shared_ptr<ZkClient> client = self->Client();
    if (client == nullptr) return then(SessionLostStatus("lock", self->config_.dir));
    client->Create((*paths)[i], "", CreateMode::kContainer,
                   self->config_.acl.empty() ? self->core_->default_acl() : self->config_.acl,
                   [self, step, then, i](absl::StatusOr<CreateResult> created) {
                     if (created.ok() || absl::IsAlreadyExists(created.status())) {
                       return (*step)(i + 1);
                     }
                     if (IsRetryable(created.status())) {
                       return self->RetryWhenConnected([step, i] { (*step)(i); });
                     }
                     then(created.status());
                   });
  };
  (*step)(0);
}

void QueueEntry::RecoverCreate() {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SessionMovedOn();
  auto self = shared_from_this();
  client->GetChildren(config_.dir, nullptr, [self](Listing children) {
    if (IsRetryable(children.status())) {
      return self->RetryWhenConnected([self] { self->RecoverCreate(); });
    }
    if (!children.ok() && !absl::IsNotFound(children.status())) {
      self->Finish(children.status());
      if (self->Abandoned()) self->MarkCleaned();
      return;
    }
    std::string mine;
    for (const std::string& child : children.ok() ? *children : std::vector<std::string>()) {
      if (absl::StartsWith(child, self->prefix_)) mine = child;
    }
    bool abandoned;
    {
      absl::MutexLock lock(&self->mu_);
      self->create_unknown_ = false;
      self->node_name_ = mine;
      abandoned = self->abandoned_;
    }
    if (abandoned) return self->CleanUp();
    if (mine.empty()) return self->CreateNode(false);  // the create never happened
    self->ReadToken();
  });
}

void QueueEntry::ReadToken() {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SessionMovedOn();
  auto self = shared_from_this();
  const std::string path = node_path();
  client->Exists(path, nullptr, [self](absl::StatusOr<Stat> stat) {
    if (IsRetryable(stat.status())) return self->RetryWhenConnected([self] { self->ReadToken(); });
    if (!stat.ok()) return self->Finish(stat.status());
    {
      absl::MutexLock lock(&self->mu_);
      self->token_ = stat->czxid;
    }
    self->Check();
  });
}

void QueueEntry::Check() {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SessionMovedOn();
  auto self = shared_from_this();
  client->GetChildren(config_.dir, nullptr, [self](Listing children) {
    if (self->Abandoned()) return;
    if (IsRetryable(children.status())) return self->RetryWhenConnected([self] { self->Check(); });
    if (!children.ok() && !absl::IsNotFound(children.status())) {
      return self->Finish(children.status());
    }
    std::string my_name;
    {
      absl::MutexLock lock(&self->mu_);
      my_name = self->node_name_;
    }
    QueueDecision decision =
        DecideQueue(children.ok() ? *children : std::vector<std::string>(), my_name);
    switch (decision.kind) {
      case QueueDecision::Kind::kAcquired:
        return self->OnAcquired();
      case QueueDecision::Kind::kLost:
        return self->Finish(absl::AbortedError(
            absl::StrCat("queue node ", self->PathOf(my_name), " vanished while waiting")));
      case QueueDecision::Kind::kWait:
        if (self->config_.try_only) {
          return self->Finish(absl::DeadlineExceededError(absl::StrCat(
              "lock ", self->config_.dir, " is held; try-acquire gave up")));
        }
        return self->WatchBlocker(decision.watch);
    }
  });
}

void QueueEntry::CancelBlockerWatch() {
  uintptr_t watch;
  {
    absl::MutexLock lock(&mu_);
    watch = std::exchange(blocker_watch_, 0);
  }
  if (watch == 0) return;
  if (std::shared_ptr<ZkClient> client = Client()) client->CancelWatch(watch);
}

void QueueEntry::WatchBlocker(const std::string& blocker) {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SessionMovedOn();
  CancelBlockerWatch();  // a previous one, if it has not fired (after a reconnect)
  uint64_t epoch;
  {
    absl::MutexLock lock(&mu_);
    phase_ = Phase::kWaiting;
    epoch = ++watch_epoch_;
  }
  std::weak_ptr<QueueEntry> weak = weak_from_this();
  auto self = shared_from_this();
  // A data watch (getData) rather than an exists watch: if the node is
  // already gone, no watch is left behind on the server.
  const uintptr_t watch = client->Get(
      PathOf(blocker),
      [weak, epoch](const WatchEvent&) {
        auto self = weak.lock();
        if (self == nullptr) return;
        {
          absl::MutexLock lock(&self->mu_);
          if (self->phase_ != Phase::kWaiting || epoch != self->watch_epoch_) return;
        }
        self->Check();
      },
      [self](absl::StatusOr<NodeData> blocker) {
        if (self->Abandoned()) return;
        if (blocker.ok()) return;  // waiting for the watch
        if (absl::IsNotFound(blocker.status())) return self->Check();
        if (IsRetryable(blocker.status())) {
          return self->RetryWhenConnected([self] { self->Check(); });
        }
        self->Finish(blocker.status());
      });
  bool given_up;
  {
    absl::MutexLock lock(&mu_);
    given_up = abandoned_;
    if (!given_up && epoch == watch_epoch_) blocker_watch_ = watch;
  }
  if (given_up) client->CancelWatch(watch);  // abandoned while we set it
}

void QueueEntry::OnAcquired() {
  Done done;
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr || abandoned_) return;
    phase_ = Phase::kHeld;
    held_state_ = LockState::kHeld;
    done = std::move(done_);
    done_ = nullptr;
  }
  done(absl::OkStatus());  // first: the own-node watch is off the critical path
  if (config_.watch_own_node) WatchOwnNode(/*verify=*/false);
}

void QueueEntry::WatchOwnNode(bool verify) {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SetHeldState(LockState::kLost);
  std::weak_ptr<QueueEntry> weak = weak_from_this();
  // A data watch: on a node already gone (released meanwhile) none is left.
  const uintptr_t watch = client->Get(
      node_path(),
      [weak](const WatchEvent& event) {
        auto self = weak.lock();
        if (self == nullptr) return;
        if (event.type == WatchEvent::Type::kDeleted) {
          self->SetHeldState(LockState::kLost);  // ignored once released
        } else if (self->state() != LockState::kReleased) {
          self->WatchOwnNode(/*verify=*/false);  // data changed by someone: keep watching
        }
      },
      [weak, client, verify](absl::StatusOr<NodeData> own) {
        auto self = weak.lock();
        if (self == nullptr) return;
        if (absl::IsNotFound(own.status())) return self->SetHeldState(LockState::kLost);
        if (own.ok()) {
          if (verify) {
            const bool ours = own->stat.ephemeral_owner == client->session_id();
            self->SetHeldState(ours ? LockState::kHeld : LockState::kLost);
          }
          return;
        }
        // Not armed (the connection dropped with the request in flight):
        // arm it again, and re-check, once connected; a lost session is
        // reported by OnSessionState.
        if (self->state() == LockState::kReleased) return;
        self->core_->WhenConnected(self->generation(), [weak](absl::Status connected) {
          auto self = weak.lock();
          if (self != nullptr && connected.ok()) self->WatchOwnNode(/*verify=*/true);
        });
      });
  uintptr_t previous;
  {
    absl::MutexLock lock(&mu_);
    previous = std::exchange(own_watch_, watch);
  }
  if (previous != watch) client->CancelWatch(previous);  // keep one
}

void QueueEntry::Finish(absl::Status status) {
  Done done;
  int listener = 0;
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr) return;  // already acquired or finished
    done = std::move(done_);
    done_ = nullptr;
    phase_ = Phase::kDone;
    abandoned_ = true;
    std::swap(listener, session_listener_id_);
  }
  if (listener != 0) core_->RemoveInternalListener(listener);
  CancelBlockerWatch();  // nothing left waiting for it
  CleanUp();
  done(std::move(status));
}

bool QueueEntry::Abandon(absl::Status why, std::function<void()> cleaned) {
  {
    // Decided in one step with OnAcquired (which refuses an abandoned
    // entry): either the grant came first and we refuse, or from here on
    // the entry cannot be granted and Finish() below cleans it up.
    absl::MutexLock lock(&mu_);
    if (phase_ == Phase::kHeld || phase_ == Phase::kReleasing) return false;
    if (phase_ == Phase::kIdle && done_ == nullptr) {
      cleaned_ = true;  // never started: Start() will refuse; nothing to clean
    }
    abandoned_ = true;
    if (cleaned && !cleaned_) {
      on_cleaned_.push_back(std::move(cleaned));
      cleaned = nullptr;
    }
  }
  if (cleaned) cleaned();
  Finish(std::move(why));
  return true;
}

void QueueEntry::SessionMovedOn() {
  Finish(SessionLostStatus("lock", config_.dir));
  MarkCleaned();  // our generation is gone, and its ephemeral node with it
}

void QueueEntry::WhenCleaned(std::function<void()> cleaned) {
  {
    absl::MutexLock lock(&mu_);
    if (!cleaned_) {
      on_cleaned_.push_back(std::move(cleaned));
      return;
    }
  }
  cleaned();
}

void QueueEntry::MarkCleaned() {
  std::vector<std::function<void()>> callbacks;
  {
    absl::MutexLock lock(&mu_);
    cleaned_ = true;
    callbacks.swap(on_cleaned_);
  }
  for (auto& callback : callbacks) callback();
}

void QueueEntry::CleanUp() {
  std::string name;
  bool unknown;
  uint64_t generation;
  {
    absl::MutexLock lock(&mu_);
    name = node_name_;
    unknown = create_unknown_;
    generation = generation_;
    if (create_in_flight_) return;  // its completion calls CleanUp again
  }
  auto self = shared_from_this();
  if (!name.empty()) {
    core_->DeleteGuaranteed(generation, PathOf(name), [self](absl::Status) { self->MarkCleaned(); });
  } else if (unknown) {
    // The create's reply was lost: find the node by our id once connected
    // (RecoverCreate calls CleanUp again), or it went with the session.
    core_->WhenConnected(generation, [self](absl::Status connected) {
      if (connected.ok()) {
        self->RecoverCreate();
      } else {
        self->MarkCleaned();
      }
    });
  } else {
    MarkCleaned();  // nothing was created
  }
}

void QueueEntry::Release(Done done, bool caller_waits) {
  std::string path;
  uint64_t generation;
  int listener = 0;
  bool held;
  {
    absl::MutexLock lock(&mu_);
    held = phase_ == Phase::kHeld;
    if (held) phase_ = Phase::kReleasing;
    path = PathOf(node_name_);
    generation = generation_;
    if (held) std::swap(listener, session_listener_id_);
  }
  // The caller's callback never runs under our mutex.
  if (!held) {
    return done(absl::FailedPreconditionError(absl::StrCat("release ", config_.dir, ": not held")));
  }
  if (listener != 0) core_->RemoveInternalListener(listener);
  auto self = shared_from_this();
  core_->DeleteGuaranteed(
      generation, path,
      [self, done](absl::Status status) {
        {
          absl::MutexLock lock(&self->mu_);
          self->phase_ = Phase::kDone;
        }
        self->MarkCleaned();
        done(status);
      },
      caller_waits);
}

void QueueEntry::OnSessionState(SessionState state, uint64_t generation) {
  Phase phase;
  uint64_t mine;
  {
    absl::MutexLock lock(&mu_);
    if (phase_ == Phase::kIdle && done_ != nullptr && state == SessionState::kConnected) {
      phase_ = Phase::kWorking;  // started between generations: begin on this one
      generation_ = generation;
      phase = Phase::kIdle;
    } else {
      phase = phase_;
    }
    mine = generation_;
  }
  if (phase == Phase::kIdle) {
    if (state == SessionState::kConnected) Begin();
    if (state == SessionState::kClosed) {
      Finish(absl::CancelledError(absl::StrCat("lock ", config_.dir, ": session closed")));
    }
    return;
  }
  const bool gone = generation != mine || state == SessionState::kLost ||
                    state == SessionState::kClosed;
  if (phase == Phase::kWorking || phase == Phase::kWaiting) {
    if (gone) {
      Finish(state == SessionState::kClosed
                 ? absl::CancelledError(absl::StrCat("lock ", config_.dir, ": session closed"))
                 : SessionLostStatus("lock", config_.dir));
    }
    return;
  }
  if (phase != Phase::kHeld) return;
  if (gone) return SetHeldState(LockState::kLost);
  if (state == SessionState::kSuspended) return SetHeldState(LockState::kSuspended);
  if (state == SessionState::kReconnected) VerifyAfterReconnect();
}

void QueueEntry::VerifyAfterReconnect() {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return SetHeldState(LockState::kLost);
  uintptr_t own_watch;
  {
    absl::MutexLock lock(&mu_);
    own_watch = own_watch_;
  }
  // Without a live own-node watch (its arming failed), set one: its reply
  // re-checks the node too.
  if (config_.watch_own_node && !client->WatchArmed(own_watch)) {
    return WatchOwnNode(/*verify=*/true);
  }
  auto self = shared_from_this();
  client->Exists(node_path(), nullptr, [self, client](absl::StatusOr<Stat> stat) {
    if (IsRetryable(stat.status())) return;  // SUSPENDED again; the next RECONNECTED re-checks
    const bool ours = stat.ok() && stat->ephemeral_owner == client->session_id();
    self->SetHeldState(ours ? LockState::kHeld : LockState::kLost);
  });
}

void QueueEntry::SetHeldState(LockState state) {
  StateListener listener;
  {
    absl::MutexLock lock(&mu_);
    if (phase_ != Phase::kHeld || held_state_ == state || held_state_ == LockState::kLost) return;
    held_state_ = state;
    listener = state_listener_;
  }
  if (listener) listener(state);
}

}  // namespace internal
}  // namespace zkr
