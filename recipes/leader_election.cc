// zkr::LeaderElection and zkr::LeaderSelector on the shared queue engine: a
// candidate is a writer in the election queue; leadership is "holding" it.
#include "zkrecipes/leader_election.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "recipes/lock_queue.h"
#include "recipes/queue_node.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/zk_status.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/status.h"
#include "src/session_access.h"

namespace zkr {

using internal::ValidatePath;
using internal::SessionLostStatus;
using internal::NodeMode;

absl::string_view LeadershipName(Leadership leadership) {
  switch (leadership) {
    case Leadership::kLeader: return "LEADER";
    case Leadership::kSuspended: return "SUSPENDED";
    case Leadership::kNotLeader: return "NOT_LEADER";
  }
  return "UNKNOWN";
}

namespace internal {

// One candidate: joins by queueing a QueueEntry, follows its held state, and
// queues again after a loss. Callbacks from the entry and the session run on
// the completion thread; on_change is posted to the dispatcher in order.
class ElectionCore : public std::enable_shared_from_this<ElectionCore> {
 public:
  ElectionCore(Session& session, std::string path, ElectionOptions options)
      : session_(session), path_(std::move(path)), options_(std::move(options)) {}

  ~ElectionCore() {
    if (listener_id_ != 0) CoreOf(session_)->RemoveInternalListener(listener_id_);
  }

  absl::Status Join() ABSL_LOCKS_EXCLUDED(mu_) {
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return absl::CancelledError(absl::StrCat("election ", path_, ": stopped"));
      if (joined_) {
        return absl::FailedPreconditionError(
            absl::StrCat("join election ", path_, ": already joined"));
      }
      if (CoreOf(session_)->closed()) {
        return absl::FailedPreconditionError(
            absl::StrCat("join election ", path_, ": session is closed"));
      }
      joined_ = true;
      error_ = absl::OkStatus();
      if (listener_id_ == 0) {
        std::weak_ptr<ElectionCore> weak = weak_from_this();
        listener_id_ = CoreOf(session_)->AddInternalListener(
            [weak](SessionState state, uint64_t generation) {
              if (auto self = weak.lock()) self->OnSessionState(state);
            });
      }
    }
    StartCandidate();
    return absl::OkStatus();
  }

  absl::Status Leave() ABSL_LOCKS_EXCLUDED(mu_) {
    std::shared_ptr<QueueEntry> entry;
    {
      absl::MutexLock lock(&mu_);
      if (!joined_) {
        // A candidacy that ended by itself (session closed or lost) has
        // nothing left to leave.
        if (!error_.ok()) return absl::OkStatus();
        return absl::FailedPreconditionError(
            absl::StrCat("leave election ", path_, ": not joined"));
      }
      joined_ = false;
      rejoin_pending_ = false;
      entry = std::move(entry_);
      entry_ = nullptr;
      SetLeadership(Leadership::kNotLeader, 0);
    }
    if (entry == nullptr) return absl::OkStatus();
    if (entry->state() == LockState::kReleased) {  // still queued
      // Returns once the queued node is gone, like a leader's Leave(). If
      // the entry won meanwhile, Abandon refuses and the hold is released.
      absl::Notification cleaned;
      if (entry->Abandon(absl::CancelledError(absl::StrCat("election ", path_, ": left")),
                         [&cleaned] { cleaned.Notify(); })) {
        cleaned.WaitForNotification();
        return absl::OkStatus();
      }
    }
    absl::Notification released;
    absl::Status status;
    entry->Release(
        [&](absl::Status s) {
          status = std::move(s);
          released.Notify();
        },
        /*caller_waits=*/true);
    released.WaitForNotification();
    return status;
  }

  // Stops on_change deliveries not yet run (the owner is going away).
  void StopNotifying() { notify_->store(false); }

  // Makes Join() fail and waiters return from now on; leaves if joined.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_) {
    {
      absl::MutexLock lock(&mu_);
      shut_down_ = true;
    }
    (void)Leave();
  }

  bool joined() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return joined_;
  }
  // kLeader only within the session's lease: past it the server may have
  // expired us (say, after this process was paused) before any event says so.
  Leadership leadership() const ABSL_LOCKS_EXCLUDED(mu_) {
    Leadership leadership;
    {
      absl::MutexLock lock(&mu_);
      leadership = leadership_;
    }
    if (leadership == Leadership::kLeader && !WithinLease()) return Leadership::kSuspended;
    return leadership;
  }
  int64_t epoch() const ABSL_LOCKS_EXCLUDED(mu_) {
    if (leadership() != Leadership::kLeader) return 0;
    absl::MutexLock lock(&mu_);
    return epoch_;
  }

  absl::Status AwaitLeadership(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_) {
    const Clock& clock = CoreOf(session_)->clock();
    const absl::Duration end = clock.Monotonic() + timeout;  // infinite stays infinite
    absl::MutexLock lock(&mu_);
    auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return leadership_ == Leadership::kLeader || !joined_ || shut_down_ || !error_.ok();
    };
    auto stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return leadership_ != Leadership::kLeader || !joined_ || shut_down_ || !error_.ok();
    };
    mu_.AwaitWithTimeout(absl::Condition(&done), end - clock.Monotonic());
    // Leader, but past the session's lease (a process pause, a slow
    // server): not leader until a heartbeat renews the lease, which no event
    // announces; look again a few times per heartbeat.
    const absl::Duration recheck = CoreOf(session_)->negotiated_timeout() / 20;
    while (leadership_ == Leadership::kLeader && !shut_down_ && !WithinLease()) {
      const absl::Duration left = end - clock.Monotonic();
      if (left <= absl::ZeroDuration()) break;
      mu_.AwaitWithTimeout(absl::Condition(&stopped), std::min(left, recheck));
    }
    if (leadership_ == Leadership::kLeader && WithinLease()) return absl::OkStatus();
    if (!error_.ok()) return error_;
    if (shut_down_) return absl::CancelledError(absl::StrCat("election ", path_, ": stopped"));
    if (!joined_) {
      return absl::FailedPreconditionError(
          absl::StrCat("await leadership of ", path_, ": not joined"));
    }
    return absl::DeadlineExceededError(absl::StrCat(
        "await leadership of ", path_, ": not leader within ", absl::FormatDuration(timeout)));
  }

  // Waits while leadership of `epoch` is current; returns whether it still is.
  bool WaitWhileLeader(int64_t epoch, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_) {
    const Clock& clock = CoreOf(session_)->clock();
    const absl::Duration end = clock.Monotonic() + timeout;  // infinite stays infinite
    absl::MutexLock lock(&mu_);
    auto over = [this, epoch]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return leadership_ != Leadership::kLeader || epoch_ != epoch || shut_down_;
    };
    for (;;) {
      // Wake at the lease's end too: leadership is not current past it.
      const absl::Duration lease_left = CoreOf(session_)->LeaseRemaining();
      if (over() || lease_left <= absl::ZeroDuration()) return false;
      const absl::Duration left = end - clock.Monotonic();
      if (left <= absl::ZeroDuration()) return true;
      mu_.AwaitWithTimeout(absl::Condition(&over), std::min(left, lease_left));
    }
  }

  bool WithinLease() const { return CoreOf(session_)->WithinLease(); }

  const std::string& path() const { return path_; }
  const std::string& id() const { return options_.id; }
  Session& session() const { return session_; }

 private:
  void StartCandidate() ABSL_LOCKS_EXCLUDED(mu_) {
    QueueEntry::Config config;
    config.dir = path_;
    config.mode = NodeMode::kWrite;
    config.data = options_.id;
    config.acl = options_.acl;
    std::shared_ptr<QueueEntry> entry = QueueEntry::Make(CoreOf(session_), std::move(config));
    std::weak_ptr<ElectionCore> weak = weak_from_this();
    QueueEntry* raw = entry.get();
    entry->SetStateListener([weak, raw](LockState state) {
      if (auto self = weak.lock()) self->OnHeldState(raw, state);
    });
    {
      absl::MutexLock lock(&mu_);
      if (!joined_) return;
      entry_ = entry;
    }
    entry->Start([weak, raw](absl::Status status) {
      if (auto self = weak.lock()) self->OnStartDone(raw, std::move(status));
    });
  }

  void OnStartDone(QueueEntry* entry, absl::Status status) ABSL_LOCKS_EXCLUDED(mu_) {
    bool restart = false;
    {
      absl::MutexLock lock(&mu_);
      if (entry_.get() != entry || !joined_) return;
      if (status.ok()) {
        SetLeadership(Leadership::kLeader, entry->fencing_token());
        return;
      }
      // Aborted: the session was lost, or our node was deleted while we
      // waited in the queue ("vanished while waiting"): both mean "queue again".
      if (options_.rejoin_after_loss && (IsSessionLost(status) || absl::IsAborted(status))) {
        restart = RejoinNowOrLater();
      } else if (!absl::IsCancelled(status) || CoreOf(session_)->closed()) {
        // The candidacy is over (e.g. PermissionDenied, the session closed,
        // or lost without rejoin): AwaitLeadership reports why.
        EndCandidacy(status);
      }
    }
    if (restart) StartCandidate();
  }

  void OnHeldState(QueueEntry* entry, LockState state) ABSL_LOCKS_EXCLUDED(mu_) {
    bool restart = false;
    {
      absl::MutexLock lock(&mu_);
      if (entry_.get() != entry || !joined_) return;
      switch (state) {
        case LockState::kHeld:
          SetLeadership(Leadership::kLeader, entry->fencing_token());
          break;
        case LockState::kSuspended:
          SetLeadership(Leadership::kSuspended, epoch_);
          break;
        case LockState::kLost:
        case LockState::kReleased:
          SetLeadership(Leadership::kNotLeader, 0);
          if (CoreOf(session_)->closed()) {
            EndCandidacy(absl::CancelledError(absl::StrCat("election ", path_, ": session closed")));
          } else if (options_.rejoin_after_loss) {
            restart = RejoinNowOrLater();
          } else {
            SessionCore& core = *CoreOf(session_);
            EndCandidacy(core.generation() != entry->generation() ||
                                 core.state() == SessionState::kLost
                             ? SessionLostStatus("election", path_)
                             : absl::AbortedError(absl::StrCat(
                                   "election ", path_, ": leadership lost (node deleted)")));
          }
          break;
      }
    }
    if (restart) StartCandidate();
  }

  void OnSessionState(SessionState state) ABSL_LOCKS_EXCLUDED(mu_) {
    {
      absl::MutexLock lock(&mu_);
      if (state == SessionState::kClosed && joined_) {
        SetLeadership(Leadership::kNotLeader, 0);
        EndCandidacy(absl::CancelledError(absl::StrCat("election ", path_, ": session closed")));
        return;
      }
      if (state != SessionState::kConnected || !rejoin_pending_ || !joined_) return;
      rejoin_pending_ = false;
    }
    StartCandidate();
  }

  // The candidacy can no longer succeed: not joined any more, and waiters
  // are told `why`.
  void EndCandidacy(absl::Status why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    joined_ = false;
    rejoin_pending_ = false;
    entry_ = nullptr;
    error_ = std::move(why);
  }

  // True to queue again at once (the session is connected); otherwise marks
  // the rejoin pending until the next CONNECTED.
  bool RejoinNowOrLater() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    entry_ = nullptr;
    SessionCore& core = *CoreOf(session_);
    const uint64_t generation = core.generation();
    if (core.IsConnected(generation)) return true;
    rejoin_pending_ = true;
    return false;
  }

  void SetLeadership(Leadership leadership, int64_t epoch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (leadership == leadership_ && epoch == epoch_) return;
    leadership_ = leadership;
    epoch_ = epoch;
    if (options_.on_change) {
      // Posted under the lock so listeners see changes in order; dropped once
      // the LeaderElection object is gone.
      auto listener = options_.on_change;
      auto notify = notify_;
      CoreOf(session_)->dispatcher().Post([notify, listener, leadership] {
        if (notify->load()) listener(leadership);
      });
    }
  }

  Session& session_;
  const std::string path_;
  const ElectionOptions options_;
  const std::shared_ptr<std::atomic<bool>> notify_ = std::make_shared<std::atomic<bool>>(true);

  mutable absl::Mutex mu_;
  bool joined_ ABSL_GUARDED_BY(mu_) = false;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  bool rejoin_pending_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<QueueEntry> entry_ ABSL_GUARDED_BY(mu_);
  Leadership leadership_ ABSL_GUARDED_BY(mu_) = Leadership::kNotLeader;
  int64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  int listener_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal

// ---- LeaderElection ---------------------------------------------------------

LeaderElection::LeaderElection(std::shared_ptr<internal::ElectionCore> core)
    : core_(std::move(core)) {}

LeaderElection::~LeaderElection() {
  core_->StopNotifying();
  core_->Shutdown();
}

absl::StatusOr<std::unique_ptr<LeaderElection>> LeaderElection::Create(Session& session,
                                                                       std::string path,
                                                                       ElectionOptions options) {
  ZKR_RETURN_IF_ERROR(ValidatePath(path));
  if (path == "/") return absl::InvalidArgumentError("invalid election path \"/\"");
  if (options.id.empty()) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    options.id = absl::StrCat(host[0] != '\0' ? host : "unknown-host", "_", getpid());
  }
  for (char c : options.id) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid candidate id \"", absl::CHexEscape(options.id), "\": control character"));
    }
  }
  auto core = std::make_shared<internal::ElectionCore>(session, std::move(path), std::move(options));
  return std::unique_ptr<LeaderElection>(new LeaderElection(std::move(core)));
}

absl::Status LeaderElection::Join() { return core_->Join(); }
absl::Status LeaderElection::Leave() { return core_->Leave(); }
bool LeaderElection::joined() const { return core_->joined(); }
bool LeaderElection::IsLeader() const { return core_->leadership() == Leadership::kLeader; }
Leadership LeaderElection::leadership() const { return core_->leadership(); }
absl::Status LeaderElection::AwaitLeadership(absl::Duration timeout) {
  return core_->AwaitLeadership(timeout);
}
int64_t LeaderElection::epoch() const { return core_->epoch(); }
const std::string& LeaderElection::path() const { return core_->path(); }
const std::string& LeaderElection::id() const { return core_->id(); }

absl::StatusOr<std::optional<std::string>> LeaderElection::CurrentLeader() {
  ZKR_ASSIGN_OR_RETURN(std::vector<QueueEntryInfo> queue,
                       InspectQueue(core_->session(), core_->path()));
  if (queue.empty()) return std::optional<std::string>();
  return std::optional<std::string>(queue.front().data);
}

absl::StatusOr<std::vector<std::string>> LeaderElection::Participants() {
  ZKR_ASSIGN_OR_RETURN(std::vector<QueueEntryInfo> queue,
                       InspectQueue(core_->session(), core_->path()));
  std::vector<std::string> ids;
  for (const QueueEntryInfo& entry : queue) ids.push_back(entry.data);
  return ids;
}

// ---- LeaderSelector -----------------------------------------------------------

namespace {

class Context : public LeadershipContext {
 public:
  Context(internal::ElectionCore& core, int64_t epoch) : core_(core), epoch_(epoch) {}
  int64_t epoch() const override { return epoch_; }
  bool IsCurrent() const override { return core_.WaitWhileLeader(epoch_, absl::ZeroDuration()); }
  bool WaitWhileCurrent(absl::Duration timeout) const override {
    return core_.WaitWhileLeader(epoch_, timeout);
  }

 private:
  internal::ElectionCore& core_;
  const int64_t epoch_;
};

}  // namespace

class LeaderSelector::Impl {
 public:
  Impl(std::unique_ptr<LeaderElection> election, std::shared_ptr<internal::ElectionCore> core,
       std::function<void(LeadershipContext&)> take_leadership, bool requeue)
      : election_(std::move(election)),
        core_(std::move(core)),
        take_leadership_(std::move(take_leadership)),
        requeue_(requeue) {}

  ~Impl() {
    Stop();
    if (thread_.joinable()) thread_.detach();  // destroyed from its own term
  }

  absl::Status Start() {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("leader selector: already started");
    started_ = true;
    thread_ = std::thread([this] { Run(); });
    return absl::OkStatus();
  }

  void Stop() {
    core_->Shutdown();  // wakes the loop and a running take_leadership's waits
    // From inside take_leadership: the loop ends once it returns; the
    // thread cannot join itself (a later Stop() or the destructor does).
    if (std::this_thread::get_id() == thread_.get_id()) return;
    if (thread_.joinable()) thread_.join();
  }

  int terms() const {
    absl::MutexLock lock(&mu_);
    return terms_;
  }
  LeaderElection& election() { return *election_; }

 private:
  void Run() {
    for (;;) {
      if (!core_->Join().ok()) return;  // stopped
      if (!core_->AwaitLeadership(absl::InfiniteDuration()).ok()) return;
      {
        absl::MutexLock lock(&mu_);
        ++terms_;
      }
      Context context(*core_, core_->epoch());
      take_leadership_(context);
      (void)core_->Leave();
      if (!requeue_) return;
    }
  }

  const std::unique_ptr<LeaderElection> election_;
  const std::shared_ptr<internal::ElectionCore> core_;
  const std::function<void(LeadershipContext&)> take_leadership_;
  const bool requeue_;
  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  int terms_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<LeaderSelector>> LeaderSelector::Create(
    Session& session, std::string path, std::function<void(LeadershipContext&)> take_leadership,
    Options options) {
  if (!take_leadership) {
    return absl::InvalidArgumentError("leader selector: take_leadership is empty");
  }
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<LeaderElection> election,
                       LeaderElection::Create(session, std::move(path), options.election));
  std::shared_ptr<internal::ElectionCore> core = election->core_;
  return std::unique_ptr<LeaderSelector>(new LeaderSelector(std::make_unique<Impl>(
      std::move(election), std::move(core), std::move(take_leadership), options.requeue)));
}

LeaderSelector::LeaderSelector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LeaderSelector::~LeaderSelector() = default;
absl::Status LeaderSelector::Start() { return impl_->Start(); }
void LeaderSelector::Stop() { impl_->Stop(); }
int LeaderSelector::terms() const { return impl_->terms(); }
LeaderElection& LeaderSelector::election() { return impl_->election(); }

}  // namespace zkr
