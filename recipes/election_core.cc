#include "recipes/election_core.h"

#include <algorithm>
#include <utility>

#include "absl/synchronization/notification.h"
#include "recipes/candidate_data.h"
#include "recipes/member_node.h"
#include "recipes/queue_node.h"
#include "src/delivery.h"
#include "src/macros.h"
#include "src/retry.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

absl::string_view ElectionCore::CandidacyName(Candidacy candidacy) {
  switch (candidacy) {
    case Candidacy::kIdle: return "IDLE";
    case Candidacy::kQueued: return "QUEUED";
    case Candidacy::kLeader: return "LEADER";
    case Candidacy::kSuspended: return "SUSPENDED";
    case Candidacy::kStopped: return "STOPPED";
  }
  return "?";
}

absl::Status ElectionCore::Join() {
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

absl::Status ElectionCore::Leave() {
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
    MoveTo(Candidacy::kIdle, 0, TermEnded::Why::kLeft, /*defer_notice=*/true);
    entry = std::move(entry_);
    if (entry == nullptr && yield_withdrawals_ > 0) {
      // A Yield() is removing our node (it took the entry): left once that
      // node is gone (bounded as Withdraw's own wait), with its outcome.
      PostDeferredNoticeLocked();
      auto removed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return yield_withdrawals_ == 0;
      };
      if (!mu_.AwaitWithTimeout(absl::Condition(&removed),
                                CoreOf(session_)->negotiated_timeout())) {
        return absl::UnavailableError(absl::StrCat(
            "election ", path_, ": left, but the node a Yield() is removing is not removed yet "
            "(still retried; it goes with the session at the latest)"));
      }
      return yield_withdrawn_;
    }
  }
  return Withdraw(std::move(entry));
}

absl::Status ElectionCore::Yield() {
  std::shared_ptr<QueueEntry> entry;
  {
    absl::MutexLock lock(&mu_);
    if (candidacy_ != Candidacy::kLeader && candidacy_ != Candidacy::kSuspended) {
      return absl::FailedPreconditionError(
          absl::StrCat("yield election ", path_, ": not leading"));
    }
    MoveTo(Candidacy::kQueued, 0, TermEnded::Why::kYielded, /*defer_notice=*/true);
    entry = std::move(entry_);
    ++yield_withdrawals_;
  }
  const absl::Status withdrawn = Withdraw(std::move(entry));
  {
    absl::MutexLock lock(&mu_);
    --yield_withdrawals_;
    yield_withdrawn_ = withdrawn;
  }
  ZKR_RETURN_IF_ERROR(withdrawn);
  StartCandidate();  // at the back of the queue (unless left meanwhile)
  // Returned once that create is applied: one round trip on our session,
  // which the server answers after it (it serves a session's requests in
  // order). So a leader that yields after this returns queues behind us,
  // rather than ahead of a create of ours still on its way (review37's
  // yield rounds: the yielder led again, 1 run in 30 under load). Best
  // effort, bounded: with the connection down the create waits for it, and
  // so does whoever yields next.
  SessionCore::Handle handle = CoreOf(session_)->current();
  if (handle.client != nullptr) {
    auto answered = std::make_shared<absl::Notification>();  // may outlive the wait
    handle.client->Exists(path_, nullptr,
                          [answered](absl::StatusOr<Stat>) { answered->Notify(); });
    answered->WaitForNotificationWithTimeout(CoreOf(session_)->negotiated_timeout());
  }
  return absl::OkStatus();
}

absl::Status ElectionCore::SetData(std::string data) {
  if (OnCompletionThread()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "set data of election ", path_, ": called on the ZooKeeper completion thread"));
  }
  // Refused before it is kept: data that cannot be written would make
  // every later candidacy (Yield, a rejoin after a loss) fail.
  if (options_.dialect != Dialect::kZkr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "set data of election ", path_, ": dialect ", DialectName(options_.dialect),
        " stores the id alone in a candidate's node (its peers read it as the id)"));
  }
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

void ElectionCore::MarkTakenOver(std::string node, uint64_t generation) {
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
                       RetryWhenConnected(
                           *CoreOf(self->session_), generation, /*attempt=*/1,
                           /*note=*/nullptr, [weak, node, generation] {
                             if (auto self = weak.lock()) {
                               self->MarkTakenOver(node, generation);
                             }
                           });
                     });
}

void ElectionCore::Shutdown() {
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

Leadership ElectionCore::leadership() const {
  Leadership leadership;
  {
    absl::MutexLock lock(&mu_);
    leadership = LeadershipOf(candidacy_);
  }
  if (leadership == Leadership::kLeader && !WithinLease()) return Leadership::kSuspended;
  return leadership;
}

absl::Status ElectionCore::AwaitLeadership(absl::Duration timeout) {
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

bool ElectionCore::WaitWhileLeader(int64_t epoch, absl::Duration timeout) {
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

void ElectionCore::StartCandidate(uint64_t after_generation) {
  QueueEntry::Settings config;
  config.dir = path_;
  {
    absl::MutexLock lock(&mu_);
    config.data = CandidateNodeData(options_.id, data_);
  }
  config.acl = options_.acl;
  config.scheme = SchemeFor(options_.dialect, QueueKind::kElection);
  // Candidates change their node's data (SetData, the take-over mark): a
  // change must not read as a marked release.
  config.mark_release = false;
  config.report = false;  // the observer hears of terms instead (MoveTo)
  QueueEntry::Attempt attempt;
  attempt.mode = NodeMode::kWrite;
  attempt.after_generation = after_generation;
  std::shared_ptr<QueueEntry> entry = QueueEntry::Make(
      CoreOf(session_), std::make_shared<const QueueEntry::Settings>(std::move(config)),
      std::move(attempt));
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

absl::Status ElectionCore::Withdraw(std::shared_ptr<QueueEntry> entry) {
  auto post_notice = [this] {
    absl::MutexLock lock(&mu_);
    PostDeferredNoticeLocked();
  };
  if (entry == nullptr) {
    post_notice();
    return absl::OkStatus();
  }
  if (entry->state() == LockState::kReleased) {  // still queued
    // If the entry won meanwhile, Abandon refuses and the hold is released.
    // The node's removal is waited for up to one session timeout: a server
    // that keeps refusing the look-up of a node whose create reply was lost
    // must not hang Leave() or the destructor. The removal goes on (and the
    // node goes with the session at the latest).
    auto cleaned = std::make_shared<absl::Notification>();
    if (entry->Abandon(absl::CancelledError(absl::StrCat("election ", path_, ": left")),
                       [cleaned] { cleaned->Notify(); })) {
      post_notice();
      if (cleaned->WaitForNotificationWithTimeout(CoreOf(session_)->negotiated_timeout())) {
        return absl::OkStatus();
      }
      return absl::UnavailableError(absl::StrCat(
          "election ", path_, ": left, but the candidate's node is not removed yet (still "
          "retried; it goes with the session at the latest)"));
    }
  }
  // The delete is sent from here (not blocking: the notice follows it out),
  // and its reply awaited below.
  absl::Notification released;
  absl::Status status;
  entry->Release(
      [&](absl::Status s) {
        status = std::move(s);
        released.Notify();
      },
      /*caller_waits=*/false);
  post_notice();
  released.WaitForNotification();
  return status;
}

void ElectionCore::OnStartDone(QueueEntry* entry, absl::Status status) {
  bool restart = false;
  uint64_t lost_generation = 0;  // restart on a later one
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
      // A lost session's requests may be refused at once, on this thread,
      // before the session has heard of the loss: queue on the next one.
      if (IsSessionLost(status)) lost_generation = entry->generation();
    } else if (!absl::IsCancelled(status) || CoreOf(session_)->closed()) {
      // The candidacy is over (e.g. PermissionDenied, the session closed,
      // or lost without rejoin): AwaitLeadership reports why.
      EndCandidacy(status);
    }
  }
  if (won && options_.dialect == Dialect::kZkr) {
    MarkTakenOver(entry->node_path(), entry->generation());  // outside mu_
  }
  if (restart) StartCandidate(lost_generation);
}

void ElectionCore::OnHeldState(QueueEntry* entry, LockState state) {
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

void ElectionCore::MoveTo(Candidacy next, int64_t epoch, TermEnded::Why why, bool defer_notice) {
  if (candidacy_ == Candidacy::kStopped) return;  // for good
  PostDeferredNoticeLocked();  // an earlier move's notice goes first
  const Leadership before = LeadershipOf(candidacy_);
  const int64_t epoch_before = epoch_;
  const Candidacy candidacy_before = candidacy_;
  candidacy_ = next;
  epoch_ = epoch;
  ReportTerms(candidacy_before, epoch_before, why);
  const Leadership leadership = LeadershipOf(next);
  if ((leadership == before && epoch == epoch_before) || !options_.on_change) return;
  deferred_notice_ = leadership;
  if (!defer_notice) PostDeferredNoticeLocked();
}

void ElectionCore::PostDeferredNoticeLocked() {
  if (!deferred_notice_.has_value()) return;
  const Leadership leadership = *std::exchange(deferred_notice_, std::nullopt);
  // Posted under the lock so listeners see changes in order; dropped once
  // the LeaderElection object is gone.
  Deliver(
      CoreOf(session_)->dispatcher(), listener_gate_,
      [listener = options_.on_change, leadership] { listener(leadership); });
}

void ElectionCore::ReportTerms(Candidacy before, int64_t epoch_before, TermEnded::Why why) {
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

}  // namespace internal
}  // namespace zkr
