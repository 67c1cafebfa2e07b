// zkr::LeaderElection and zkr::LeaderSelector on the shared queue engine: a
// candidate is a writer in the election queue; leadership is "holding" it.
#include "zkrecipes/leader_election.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "recipes/candidate_data.h"
#include "recipes/queue_entry.h"
#include "recipes/member_node.h"
#include "recipes/queue_node.h"
#include "src/callback_gate.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/zk_status.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_observer.h"
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
// queues again after a loss. Its state is one Candidacy value; the queue
// entry itself waits for a CONNECTED session (no second "start once
// connected" here). Callbacks from the entry and the session run on the
// completion thread; on_change is posted to the dispatcher in order.
class ElectionCore : public std::enable_shared_from_this<ElectionCore> {
 public:
  // The candidate's state.
  enum class Candidacy {
    kIdle,       // not joined (never, left, or ended by itself: see error_)
    kQueued,     // joined; our node waits in the queue (or for a session)
    kLeader,     // our node is first
    kSuspended,  // leader, but the session is disconnected
    kStopped,    // the LeaderElection is going away: no more Join()
  };
  static absl::string_view CandidacyName(Candidacy candidacy) {
    switch (candidacy) {
      case Candidacy::kIdle: return "IDLE";
      case Candidacy::kQueued: return "QUEUED";
      case Candidacy::kLeader: return "LEADER";
      case Candidacy::kSuspended: return "SUSPENDED";
      case Candidacy::kStopped: return "STOPPED";
    }
    return "?";
  }

  ElectionCore(Session& session, std::string path, ElectionOptions options)
      : session_(session), path_(std::move(path)), options_(std::move(options)) {
    absl::MutexLock lock(&mu_);
    data_ = options_.data;
  }

  // Touches nothing of the session: a selector's thread may drop the last
  // reference after its owner (and the session) went; Shutdown() removed the
  // listener.
  ~ElectionCore() = default;

  absl::Status Join() ABSL_LOCKS_EXCLUDED(mu_) {
    {
      absl::MutexLock lock(&mu_);
      if (candidacy_ == Candidacy::kStopped) {
        return absl::CancelledError(absl::StrCat("election ", path_, ": stopped"));
      }
      if (Joined()) {
        return absl::FailedPreconditionError(
            absl::StrCat("join election ", path_, ": already joined"));
      }
      if (CoreOf(session_)->closed()) {
        return absl::FailedPreconditionError(
            absl::StrCat("join election ", path_, ": session is closed"));
      }
      MoveTo(Candidacy::kQueued, 0);
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
      if (!Joined()) {
        // A candidacy that ended by itself (session closed or lost) has
        // nothing left to leave.
        if (!error_.ok()) return absl::OkStatus();
        return absl::FailedPreconditionError(
            absl::StrCat("leave election ", path_, ": not joined"));
      }
      MoveTo(Candidacy::kIdle, 0, TermEnded::Why::kLeft);
      entry = std::move(entry_);
    }
    return Withdraw(std::move(entry));
  }

  absl::Status Yield() ABSL_LOCKS_EXCLUDED(mu_) {
    std::shared_ptr<QueueEntry> entry;
    {
      absl::MutexLock lock(&mu_);
      if (candidacy_ != Candidacy::kLeader && candidacy_ != Candidacy::kSuspended) {
        return absl::FailedPreconditionError(
            absl::StrCat("yield election ", path_, ": not leading"));
      }
      MoveTo(Candidacy::kQueued, 0, TermEnded::Why::kYielded);
      entry = std::move(entry_);
    }
    ZKR_RETURN_IF_ERROR(Withdraw(std::move(entry)));
    StartCandidate();  // at the back of the queue
    return absl::OkStatus();
  }

  absl::Status SetData(std::string data) ABSL_LOCKS_EXCLUDED(mu_) {
    if (OnCompletionThread()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "set data of election ", path_, ": called on the ZooKeeper completion thread"));
    }
    // Refused before it is kept: data that cannot be written would make
    // every later candidacy (Yield, a rejoin after a loss) fail.
    ZKR_RETURN_IF_ERROR(
        CheckCandidateData(*CoreOf(session_), "set data of election", path_, options_.id, data));
    const std::string node_data = CandidateNodeData(options_.id, data);
    std::shared_ptr<QueueEntry> entry;
    {
      absl::MutexLock lock(&mu_);
      if (candidacy_ != Candidacy::kLeader || entry_ == nullptr) {
        return absl::FailedPreconditionError(
            absl::StrCat("set data of election ", path_, ": not leading"));
      }
      data_ = data;
      entry = entry_;
    }
    // Written on our node's own session only (a later session's client
    // could still write the node until the server expires the old one).
    return SetMemberData(entry, node_data, "set data of election", "leadership lost");
  }

  // The take-over mark: our node's data written again, so that observers,
  // and a leader handing over, see that we lead now (LeaderInfo::taken_over:
  // version > 0). Asynchronous (we are on the completion thread; leading
  // does not wait for it); after a lost connection it is sent again once
  // connected, while the node lives. Written over the node's first version
  // only: once anything wrote the node (this mark, its reply lost, or
  // SetData) it is marked, and a mark sent again must not put older data
  // back over SetData's. Not sent under mu_ (src/zk_client.h).
  void MarkTakenOver(std::string node, uint64_t generation) ABSL_LOCKS_EXCLUDED(mu_) {
    std::string data;
    {
      absl::MutexLock lock(&mu_);
      data = CandidateNodeData(options_.id, data_);
    }
    SessionCore::Handle handle = CoreOf(session_)->current();
    if (handle.generation != generation || handle.client == nullptr) return;
    std::weak_ptr<ElectionCore> weak = weak_from_this();
    handle.client->Set(node, data, /*version=*/0,
                       [weak, node, generation](absl::StatusOr<Stat> written) {
                         // Done: written, already written (Aborted: bad
                         // version), or the node is gone.
                         auto self = weak.lock();
                         if (self == nullptr || !IsRetryable(written.status())) return;
                         CoreOf(self->session_)->WhenConnected(
                             generation, [weak, node, generation](absl::Status connected) {
                               auto self = weak.lock();
                               if (self != nullptr && connected.ok()) {
                                 self->MarkTakenOver(node, generation);
                               }
                             });
                       });
  }

  // Our node now, or "" (to tell our own leadership from a successor's).
  std::string node_path() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return entry_ == nullptr ? "" : entry_->node_path();
  }

  // Stops on_change deliveries not yet run and waits for one running (the
  // owner is going away).
  void StopNotifying() { listener_gate_->Close(); }

  // Makes Join() fail and waiters return from now on; leaves if joined.
  // Stopped is for good: the session listener goes too, so that nothing of
  // the session is touched after this returns.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_) {
    std::shared_ptr<QueueEntry> entry;
    int listener_id;
    {
      absl::MutexLock lock(&mu_);
      MoveTo(Candidacy::kStopped, 0, TermEnded::Why::kLeft);
      entry = std::move(entry_);
      listener_id = std::exchange(listener_id_, 0);
    }
    if (listener_id != 0) CoreOf(session_)->RemoveInternalListener(listener_id);
    (void)Withdraw(std::move(entry));
  }

  bool joined() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return Joined();
  }
  // kLeader only within the session's lease: past it the server may have
  // expired us (say, after this process was paused) before any event says so.
  Leadership leadership() const ABSL_LOCKS_EXCLUDED(mu_) {
    Leadership leadership;
    {
      absl::MutexLock lock(&mu_);
      leadership = LeadershipOf(candidacy_);
    }
    if (leadership == Leadership::kLeader && !WithinLease()) return Leadership::kSuspended;
    return leadership;
  }
  // Read with the state it belongs to (a term that ends in between is not
  // reported as current).
  int64_t epoch() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return candidacy_ == Candidacy::kLeader && WithinLease() ? epoch_ : 0;
  }

  absl::Status AwaitLeadership(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_) {
    const Clock& clock = CoreOf(session_)->clock();
    const absl::Duration end = clock.Monotonic() + timeout;  // infinite stays infinite
    absl::MutexLock lock(&mu_);
    auto settled = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return candidacy_ != Candidacy::kQueued && candidacy_ != Candidacy::kSuspended;
    };
    auto not_leader = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return candidacy_ != Candidacy::kLeader;
    };
    mu_.AwaitWithTimeout(absl::Condition(&settled), end - clock.Monotonic());
    // Leader, but past the session's lease (a process pause, a slow
    // server): not leader until a heartbeat renews the lease, which no event
    // announces; look again a few times per heartbeat.
    const absl::Duration recheck = CoreOf(session_)->negotiated_timeout() / 20;
    while (candidacy_ == Candidacy::kLeader && !WithinLease()) {
      const absl::Duration left = end - clock.Monotonic();
      if (left <= absl::ZeroDuration()) break;
      mu_.AwaitWithTimeout(absl::Condition(&not_leader), std::min(left, recheck));
    }
    if (candidacy_ == Candidacy::kLeader && WithinLease()) return absl::OkStatus();
    if (!error_.ok()) return error_;
    if (candidacy_ == Candidacy::kStopped) {
      return absl::CancelledError(absl::StrCat("election ", path_, ": stopped"));
    }
    if (!Joined()) {
      return absl::FailedPreconditionError(
          absl::StrCat("await leadership of ", path_, ": not joined"));
    }
    return absl::DeadlineExceededError(absl::StrCat(
        "await leadership of ", path_, ": not leader within ", absl::FormatDuration(timeout),
        " (", CandidacyName(candidacy_), ")"));
  }

  // Waits while leadership of `epoch` is current; returns whether it still is.
  bool WaitWhileLeader(int64_t epoch, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_) {
    const Clock& clock = CoreOf(session_)->clock();
    const absl::Duration end = clock.Monotonic() + timeout;  // infinite stays infinite
    absl::MutexLock lock(&mu_);
    auto over = [this, epoch]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return candidacy_ != Candidacy::kLeader || epoch_ != epoch;
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
  static Leadership LeadershipOf(Candidacy candidacy) {
    return candidacy == Candidacy::kLeader      ? Leadership::kLeader
           : candidacy == Candidacy::kSuspended ? Leadership::kSuspended
                                                : Leadership::kNotLeader;
  }
  bool Joined() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return candidacy_ == Candidacy::kQueued || candidacy_ == Candidacy::kLeader ||
           candidacy_ == Candidacy::kSuspended;
  }

  // Queues a new node. The entry waits by itself for a CONNECTED session.
  void StartCandidate() ABSL_LOCKS_EXCLUDED(mu_) {
    QueueEntry::Config config;
    config.dir = path_;
    config.mode = NodeMode::kWrite;
    {
      absl::MutexLock lock(&mu_);
      config.data = CandidateNodeData(options_.id, data_);
    }
    config.acl = options_.acl;
    // Candidates change their node's data (SetData, the take-over mark): a
    // change must not read as a marked release.
    config.mark_release = false;
    config.report = false;  // the observer hears of terms instead (MoveTo)
    std::shared_ptr<QueueEntry> entry = QueueEntry::Make(CoreOf(session_), std::move(config));
    std::weak_ptr<ElectionCore> weak = weak_from_this();
    QueueEntry* raw = entry.get();
    entry->SetStateListener([weak, raw](LockState state) {
      if (auto self = weak.lock()) self->OnHeldState(raw, state);
    });
    {
      absl::MutexLock lock(&mu_);
      // Queued meanwhile by another call (a Leave() and a Join() since ours
      // marked the candidacy queued): one node per candidacy.
      if (candidacy_ != Candidacy::kQueued || entry_ != nullptr) return;
      entry_ = entry;
    }
    entry->Start([weak, raw](absl::Status status) {
      if (auto self = weak.lock()) self->OnStartDone(raw, std::move(status));
    });
  }

  // Gives up `entry`: deletes a queued node (returns once it is gone) or
  // releases a held one.
  absl::Status Withdraw(std::shared_ptr<QueueEntry> entry) {
    if (entry == nullptr) return absl::OkStatus();
    if (entry->state() == LockState::kReleased) {  // still queued
      // If the entry won meanwhile, Abandon refuses and the hold is released.
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

  void OnStartDone(QueueEntry* entry, absl::Status status) ABSL_LOCKS_EXCLUDED(mu_) {
    bool restart = false;
    bool won = false;
    {
      absl::MutexLock lock(&mu_);
      if (entry_.get() != entry || !Joined()) return;
      if (status.ok()) {
        MoveTo(Candidacy::kLeader, entry->fencing_token());
        won = true;
      } else if (options_.rejoin_after_loss && CoreOf(session_)->options().reconnect_after_loss &&
                 (IsSessionLost(status) || absl::IsAborted(status))) {
        // Aborted: the session was lost, or our node was deleted while we
        // waited in the queue ("vanished while waiting"): both mean "queue
        // again" — when a new session will come.
        entry_ = nullptr;  // its later callbacks are stale
        restart = true;
      } else if (!absl::IsCancelled(status) || CoreOf(session_)->closed()) {
        // The candidacy is over (e.g. PermissionDenied, the session closed,
        // or lost without rejoin): AwaitLeadership reports why.
        EndCandidacy(status);
      }
    }
    if (won) MarkTakenOver(entry->node_path(), entry->generation());  // outside mu_
    if (restart) StartCandidate();
  }

  void OnHeldState(QueueEntry* entry, LockState state) ABSL_LOCKS_EXCLUDED(mu_) {
    bool restart = false;
    {
      absl::MutexLock lock(&mu_);
      if (entry_.get() != entry || !Joined()) return;
      switch (state) {
        case LockState::kHeld:
          MoveTo(Candidacy::kLeader, entry->fencing_token());
          break;
        case LockState::kSuspended:
          MoveTo(Candidacy::kSuspended, epoch_);
          break;
        case LockState::kLost:
        case LockState::kReleased: {
          SessionCore& core = *CoreOf(session_);
          if (core.closed()) {
            EndCandidacy(absl::CancelledError(absl::StrCat("election ", path_, ": session closed")));
          } else if (options_.rejoin_after_loss) {
            MoveTo(Candidacy::kQueued, 0);
            entry_ = nullptr;  // its later callbacks are stale
            restart = true;
          } else {
            EndCandidacy(core.GenerationOver(entry->generation())
                             ? SessionLostStatus("election", path_)
                             : absl::AbortedError(absl::StrCat(
                                   "election ", path_, ": leadership lost (node deleted)")));
          }
          break;
        }
      }
    }
    if (restart) StartCandidate();
  }

  void OnSessionState(SessionState state) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (state == SessionState::kClosed && Joined()) {
      EndCandidacy(absl::CancelledError(absl::StrCat("election ", path_, ": session closed")));
    }
  }

  // The candidacy can no longer succeed: not joined any more, and waiters
  // are told `why`.
  void EndCandidacy(absl::Status why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    MoveTo(Candidacy::kIdle, 0);
    entry_ = nullptr;
    error_ = std::move(why);
  }

  // The one place the state changes; on_change hears of every change of
  // leadership, the observer of every term (a term that ends says `why`).
  void MoveTo(Candidacy next, int64_t epoch, TermEnded::Why why = TermEnded::Why::kLost)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (candidacy_ == Candidacy::kStopped) return;  // for good
    const Leadership before = LeadershipOf(candidacy_);
    const int64_t epoch_before = epoch_;
    const Candidacy candidacy_before = candidacy_;
    candidacy_ = next;
    epoch_ = epoch;
    ReportTerms(candidacy_before, epoch_before, why);
    const Leadership leadership = LeadershipOf(next);
    if ((leadership == before && epoch == epoch_before) || !options_.on_change) return;
    // Posted under the lock so listeners see changes in order; dropped once
    // the LeaderElection object is gone.
    PostThrough(CoreOf(session_)->dispatcher(), listener_gate_,
                [listener = options_.on_change, leadership] { listener(leadership); });
  }

  // Tells the session's observer of a term that ended and one that began
  // with the move from `before` (of `epoch_before`) to the current state.
  void ReportTerms(Candidacy before, int64_t epoch_before, TermEnded::Why why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const EventReporter& events = CoreOf(session_)->events();
    if (!events.on()) return;
    // Leader or suspended: a term in progress.
    const bool led = LeadershipOf(before) != Leadership::kNotLeader;
    const bool leads = LeadershipOf(candidacy_) != Leadership::kNotLeader;
    const absl::Duration now = CoreOf(session_)->clock().Monotonic();
    const bool same_term = led && leads && epoch_before == epoch_;
    if (led && !same_term) {
      events.Report(&Observer::OnTermEnded,
                    TermEnded{path_, options_.id, epoch_before, now - since_, why});
      since_ = now;
    }
    if (candidacy_ == Candidacy::kQueued && before != Candidacy::kQueued) since_ = now;
    if (candidacy_ == Candidacy::kLeader && !same_term) {
      events.Report(&Observer::OnTermBegan, TermBegan{path_, options_.id, epoch_, now - since_});
      since_ = now;
    }
  }

  Session& session_;
  const std::string path_;
  const ElectionOptions options_;
  const std::shared_ptr<CallbackGate> listener_gate_ = std::make_shared<CallbackGate>();

  mutable absl::Mutex mu_;
  Candidacy candidacy_ ABSL_GUARDED_BY(mu_) = Candidacy::kIdle;
  int64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;  // while kLeader / kSuspended
  std::shared_ptr<QueueEntry> entry_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);  // why the last candidacy ended by itself
  std::string data_ ABSL_GUARDED_BY(mu_);  // what we publish (options_.data, SetData)
  int listener_id_ ABSL_GUARDED_BY(mu_) = 0;
  // Monotonic, observed sessions only: when the current wait in the queue,
  // or the current term, began.
  absl::Duration since_ ABSL_GUARDED_BY(mu_);
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
  ZKR_ASSIGN_OR_RETURN(options.id, internal::ParticipantLabel(std::move(options.id), "candidate"));
  ZKR_RETURN_IF_ERROR(internal::CheckCandidateData(*internal::CoreOf(session),
                                                  "candidate data for election", path, options.id,
                                                  options.data, &options.acl));
  auto core = std::make_shared<internal::ElectionCore>(session, std::move(path), std::move(options));
  return std::unique_ptr<LeaderElection>(new LeaderElection(std::move(core)));
}

absl::Status LeaderElection::Join() { return core_->Join(); }
absl::Status LeaderElection::Leave() { return core_->Leave(); }
absl::Status LeaderElection::Yield() { return core_->Yield(); }
absl::Status LeaderElection::SetData(std::string data) { return core_->SetData(std::move(data)); }

absl::Status LeaderElection::LeaveAndHandOver(absl::Duration timeout) {
  // On the session's monotonic clock: a wall-clock step neither stretches
  // nor cuts the wait (an infinite timeout stays infinite).
  const Clock& clock = internal::CoreOf(core_->session())->clock();
  const absl::Duration end = clock.Monotonic() + timeout;
  const std::string ours = core_->node_path();
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<LeaderObserver> observer,
                       LeaderObserver::Create(core_->session(), core_->path()));
  ZKR_RETURN_IF_ERROR(Leave());
  std::optional<LeaderInfo> seen;
  absl::StatusOr<std::optional<LeaderInfo>> now = observer->Current(end - clock.Monotonic());
  while (now.ok()) {
    seen = *now;
    const bool successor = seen.has_value() &&
                           internal::JoinPath(core_->path(), seen->node) != ours &&
                           seen->taken_over;
    if (successor) return absl::OkStatus();
    now = observer->AwaitChange(seen, end - clock.Monotonic());
  }
  return absl::DeadlineExceededError(absl::StrCat("leave election ", core_->path(),
                                                  ": left, but no successor took over within ",
                                                  absl::FormatDuration(timeout)));
}
bool LeaderElection::joined() const { return core_->joined(); }
bool LeaderElection::IsLeader() const { return core_->leadership() == Leadership::kLeader; }
Leadership LeaderElection::leadership() const { return core_->leadership(); }
absl::Status LeaderElection::AwaitLeadership(absl::Duration timeout) {
  return core_->AwaitLeadership(timeout);
}
int64_t LeaderElection::epoch() const { return core_->epoch(); }
const std::string& LeaderElection::path() const { return core_->path(); }
const std::string& LeaderElection::id() const { return core_->id(); }

namespace {

std::string IdOf(const QueueEntryInfo& entry) {
  std::string id, data;
  internal::ParseCandidateNodeData(entry.data, &id, &data);
  return id;
}

}  // namespace

absl::StatusOr<std::optional<std::string>> LeaderElection::CurrentLeader() {
  ZKR_ASSIGN_OR_RETURN(std::vector<QueueEntryInfo> queue,
                       InspectQueue(core_->session(), core_->path()));
  if (queue.empty()) return std::optional<std::string>();
  return std::optional<std::string>(IdOf(queue.front()));
}

absl::StatusOr<std::vector<std::string>> LeaderElection::Participants() {
  ZKR_ASSIGN_OR_RETURN(std::vector<QueueEntryInfo> queue,
                       InspectQueue(core_->session(), core_->path()));
  std::vector<std::string> ids;
  for (const QueueEntryInfo& entry : queue) ids.push_back(IdOf(entry));
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
        campaign_(std::make_shared<Campaign>(std::move(core), std::move(take_leadership),
                                             requeue)) {}

  // From inside take_leadership the thread cannot be joined: it is let go
  // and finishes the term on its Campaign, touching nothing else (the
  // election has left and let go of the session before this returns).
  ~Impl() {
    Stop();
    absl::MutexLock lock(&mu_);
    if (thread_.joinable()) thread_.detach();
  }

  absl::Status Start() {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("leader selector: already started");
    started_ = true;
    thread_ = std::thread([campaign = campaign_] { campaign->Run(); });
    return absl::OkStatus();
  }

  void Stop() {
    campaign_->core->Shutdown();  // wakes the loop and a running take_leadership's waits
    std::thread thread;
    {
      absl::MutexLock lock(&mu_);  // Start() may be assigning it
      // From inside take_leadership: the loop ends once it returns; the
      // thread cannot join itself (a later Stop() or the destructor does).
      if (std::this_thread::get_id() == thread_.get_id()) return;
      thread = std::move(thread_);  // joined once, however many Stop()s
    }
    if (thread.joinable()) thread.join();
  }

  int terms() const { return campaign_->terms(); }
  LeaderElection& election() { return *election_; }

 private:
  // What the selector's thread uses, owned by it too: the selector may be
  // destroyed from inside take_leadership, which must not free the function
  // that is running nor what the loop reads after it returns.
  struct Campaign {
    Campaign(std::shared_ptr<internal::ElectionCore> core,
             std::function<void(LeadershipContext&)> take_leadership, bool requeue)
        : core(std::move(core)), take_leadership(std::move(take_leadership)), requeue(requeue) {}

    void Run() {
      for (;;) {
        if (!core->Join().ok()) return;  // stopped
        if (!core->AwaitLeadership(absl::InfiniteDuration()).ok()) return;
        {
          absl::MutexLock lock(&mu);
          ++terms_run;
        }
        Context context(*core, core->epoch());
        take_leadership(context);
        (void)core->Leave();  // stopped meanwhile: nothing to leave
        if (!requeue) return;
      }
    }
    int terms() const {
      absl::MutexLock lock(&mu);
      return terms_run;
    }

    const std::shared_ptr<internal::ElectionCore> core;
    const std::function<void(LeadershipContext&)> take_leadership;
    const bool requeue;
    mutable absl::Mutex mu;
    int terms_run ABSL_GUARDED_BY(mu) = 0;
  };

  const std::unique_ptr<LeaderElection> election_;
  const std::shared_ptr<Campaign> campaign_;
  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);
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
