#include "recipes/queue_entry.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "recipes/lock_data.h"
#include "recipes/queue_decision.h"
#include "recipes/revoke_watch.h"
#include "src/paths.h"
#include "src/process_identity.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

std::shared_ptr<QueueEntry> QueueEntry::Make(std::shared_ptr<SessionCore> core,
                                             std::shared_ptr<const Settings> settings,
                                             Attempt attempt) {
  auto entry =
      std::make_shared<QueueEntry>(Key(), std::move(core), std::move(settings), std::move(attempt));
  if (entry->listens_) {  // every listing and blocker reply raises its basis
    absl::MutexLock lock(&entry->mu_);
    entry->MonitorLocked();
  }
  return entry;
}

const std::shared_ptr<HoldMonitor>& QueueEntry::MonitorLocked() {
  if (monitor_ == nullptr) {
    HoldMonitor::Config watch;
    watch.watch_own_node = config().watch_own_node;
    watch.own_node_watch_delay = config().own_node_watch_delay;
    watch.watch_revoke = config().watch_revoke;
    watch.listens = listens_;
    monitor_ = HoldMonitor::Make(core_, watch, std::weak_ptr<HoldMonitor::Owner>(weak_from_this()));
  }
  return monitor_;
}

std::shared_ptr<HoldMonitor> QueueEntry::monitor() const {
  absl::MutexLock lock(&mu_);
  return monitor_;
}

QueueEntry::QueueEntry(Key, std::shared_ptr<SessionCore> core,
                       std::shared_ptr<const Settings> settings, Attempt attempt)
    : core_(std::move(core)),
      settings_(std::move(settings)),
      attempt_(std::move(attempt)),
      // The directory is the settings', shared (aliasing: it keeps them).
      participant_(std::shared_ptr<const std::string>(settings_, &settings_->dir), /*label=*/"",
                   attempt_.mode, attempt_.weight, config().leases, config().scheme),
      driver_(QueueDriver::For(participant_.dir(), attempt_.mode, attempt_.weight,
                               config().leases, config().mark_release, config().scheme)),
      listens_(config().revocable && (config().watch_own_node || config().watch_revoke)),
      // A lock's or a semaphore's attempt (not an election's or a member's),
      // on a session with an observer.
      report_(config().report && core_->events().on()
                  ? std::make_unique<AcquisitionReport>(*core_, participant_.dir(), attempt_.mode,
                                                        attempt_.weight, config().scheme)
                  : nullptr),
      watch_reservation_(core_->watch_budget()) {}

std::string QueueEntry::OwnNodeData() const {
  if (!config().data_is_purpose) return config().data;
  return LockNodeData(ProcessId(), attempt_.mode, config().data, attempt_.requested_ms);
}

std::string QueueEntry::CreateData() const {
  std::string data = OwnNodeData();
  // What a requester needs to force us safely: how long our lease lasts
  // (the session's, fixed for its life).
  if (listens_) absl::StrAppend(&data, PublishSessionTimeout(core_->negotiated_timeout()));
  return data;
}

QueueEntry::~QueueEntry() {
  if (session_listener_id_ != 0) core_->RemoveInternalListener(session_listener_id_);
}

size_t QueueEntry::OwnWatchBytes() const {
  // Our own node's path, and the revocation request's beside it
  // ("<node>.revoke").
  const size_t own = participant_.node_path_bytes();
  size_t bytes = 0;
  if (config().watch_own_node) bytes += core_->WatchedPathBytes(own);
  if (listens_) bytes += core_->WatchedPathBytes(own + RevokeRequestPath("").size());
  return bytes;
}

size_t QueueEntry::WatchBytesNeeded() const {
  // And a blocker's: another participant's name may be a little longer
  // than ours (a margin; a longer one tops the reservation up in kWatch).
  constexpr size_t kOtherNameMargin = 16;
  return OwnWatchBytes() + core_->WatchedPathBytes(participant_.node_path_bytes() + kOtherNameMargin);
}

const char* QueueEntry::Noun() const {
  return attempt_.mode == NodeMode::kLease ? "semaphore" : "lock";
}

std::string QueueEntry::WatchPurpose() const { return absl::StrCat(Noun(), " ", dir()); }

std::string QueueEntry::PathOf(absl::string_view child) const {
  return participant_.PathOf(child);
}

absl::Duration QueueEntry::BasisOf(absl::Duration sent) const {
  return listens_ ? std::max(sent, core_->HeardInOrder()) : absl::ZeroDuration();
}

std::shared_ptr<ZkClient> QueueEntry::Client() {
  SessionCore::Handle handle = core_->current();
  absl::MutexLock lock(&mu_);
  return handle.generation == generation_ ? handle.client : nullptr;
}

void QueueEntry::SetStateListener(StateListener listener) {
  absl::MutexLock lock(&mu_);
  state_listener_ = std::move(listener);
}

void QueueEntry::SetRevokeListener(RevokeListener listener) {
  absl::MutexLock lock(&mu_);
  MonitorLocked()->SetRevokeListener(std::move(listener));  // its mutex is a leaf
}

std::shared_ptr<CallbackGate> QueueEntry::user_callbacks() {
  absl::MutexLock lock(&mu_);
  if (user_callbacks_ == nullptr) user_callbacks_ = std::make_shared<CallbackGate>();
  return user_callbacks_;
}

void QueueEntry::CloseUserCallbacks() {
  std::shared_ptr<CallbackGate> gate;
  {
    absl::MutexLock lock(&mu_);
    gate = user_callbacks_;
  }
  // Outside our mutex: Close waits for a callback running on the dispatcher.
  if (gate != nullptr) gate->Close();
}

LockState QueueEntry::state() const {
  std::shared_ptr<HoldMonitor> made = monitor();
  return made != nullptr ? made->state() : LockState::kReleased;  // never held
}

std::string QueueEntry::node_path() const { return participant_.node_path(); }

int64_t QueueEntry::fencing_token() const { return participant_.token(); }

uint64_t QueueEntry::generation() const {
  absl::MutexLock lock(&mu_);
  return generation_;
}

namespace {

absl::Mutex start_hook_mu(absl::kConstInit);
std::function<void()>* start_hook ABSL_GUARDED_BY(start_hook_mu) = nullptr;
std::atomic<bool> start_hook_set{false};  // no lock taken when unset

void RunStartHook() {
  if (!start_hook_set.load(std::memory_order_acquire)) return;
  std::function<void()> hook;
  {
    absl::MutexLock lock(&start_hook_mu);
    if (start_hook == nullptr) return;
    hook = *start_hook;
  }
  hook();
}

}  // namespace

void SetQueueStartHookForTesting(std::function<void()> hook) {
  absl::MutexLock lock(&start_hook_mu);
  delete start_hook;
  start_hook = hook ? new std::function<void()>(std::move(hook)) : nullptr;
  start_hook_set.store(start_hook != nullptr, std::memory_order_release);
}

void QueueEntry::Start(Done done, JointCreate* joint) {
  // The node's data (with the released mark a writer may add) must fit the
  // server's packet limit: refused here, before anything is sent.
  // The largest request is the marked release: a set of that data and a
  // delete, both on the node's path (which the create's ACL does not cross).
  absl::Status fits = participant_.CheckRequestSize(
      *core_,
      OwnNodeData().size() + kReleasedMark.size() + (listens_ ? kMaxPublishedTimeoutBytes : 0),
      config().acl);
  // Its watches must fit the packet that sets them again after a
  // reconnect, beside every other wait and hold of the session's.
  if (fits.ok()) fits = watch_reservation_.Cover(WatchBytesNeeded(), WatchPurpose());
  if (!fits.ok()) {
    {
      absl::MutexLock lock(&mu_);
      abandoned_ = true;
    }
    MarkCleaned();  // nothing was created
    return done(fits);
  }
  std::weak_ptr<QueueEntry> weak = weak_from_this();
  int listener = core_->AddInternalListener([weak](SessionState state, uint64_t generation) {
    if (auto self = weak.lock()) self->OnSessionState(state, generation);
  });
  SessionState state = SessionState::kConnecting;
  bool between_generations = false;
  bool refused;
  uint64_t epoch = 0;
  RunStartHook();
  {
    // The state is read in the same critical section that records the
    // attempt: a CONNECTED delivered before it is seen here, one delivered
    // after it finds done_ set (OnSessionState), so none is missed.
    absl::MutexLock lock(&mu_);
    refused = abandoned_;  // abandoned before it started
    if (!refused) {
      state = core_->state();
      between_generations = state == SessionState::kLost || state == SessionState::kConnecting ||
                            core_->generation() <= attempt_.after_generation;
      done_ = std::move(done);
      generation_ = core_->generation();
      session_listener_id_ = listener;
      // Between generations the first step waits in kIdle for the next
      // CONNECTED (OnSessionState), within the caller's deadline.
      if (between_generations) {
        MoveLocked(Step::kIdle);  // started: waiting
      } else {
        epoch = EnterLocked(FirstStep());
      }
    }
  }
  if (refused) {
    core_->RemoveInternalListener(listener);
    return done(absl::CancelledError(absl::StrCat(Noun(), " ", dir(), ": abandoned before start")));
  }
  if (!between_generations) return Send(FirstStep(), epoch, joint);
  if (state == SessionState::kLost && !core_->options().reconnect_after_loss) {
    Finish(SessionLostStatus(Noun(), dir()));
  }
}

absl::string_view QueueEntry::StepName(Step step) {
  if (std::optional<Participant::CreateStep> create = CreateStepOf(step)) {
    return Participant::StepName(*create);
  }
  switch (step) {
    case Step::kIdle: return "IDLE";
    case Step::kPeek: return "PEEK";
    case Step::kList: return "LIST";
    case Step::kWatch: return "WATCH";
    case Step::kConfirm: return "CONFIRM";
    case Step::kCheckRevoke: return "CHECK_REVOKE";
    case Step::kHeld: return "HELD";
    case Step::kReleasing: return "RELEASING";
    case Step::kCleaning: return "CLEANING";
    case Step::kDone: return "DONE";
    default: break;
  }
  return "?";
}

std::string QueueEntry::DebugString() const {
  absl::MutexLock lock(&mu_);
  return absl::StrCat("step=", StepName(step_), " generation=", generation_, " node=",
                      participant_.node_name().empty() ? "-" : participant_.node_name(),
                      " abandoned=", abandoned_ ? 1 : 0);
}

void QueueEntry::Finish(absl::Status status) {
  Done done;
  int listener = 0;
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr) return;  // already acquired or finished
    done = std::move(done_);
    done_ = nullptr;
    abandoned_ = true;
    std::swap(listener, session_listener_id_);
  }
  if (listener != 0) core_->RemoveInternalListener(listener);
  CleanUp(status);
  done(std::move(status));
}

bool QueueEntry::Abandon(absl::Status why, std::function<void()> cleaned) {
  bool never_started;
  {
    // Decided in one step with OnAcquired (which refuses an abandoned
    // entry): either the grant came first and we refuse, or from here on
    // the entry cannot be granted and Finish() below cleans it up.
    absl::MutexLock lock(&mu_);
    if (step_ == Step::kHeld || step_ == Step::kReleasing) return false;
    // Never started: Start() will refuse; nothing to clean.
    never_started = step_ == Step::kIdle && done_ == nullptr;
    abandoned_ = true;
  }
  if (never_started) MarkCleaned();
  if (cleaned) WhenCleaned(std::move(cleaned));
  Finish(std::move(why));
  return true;
}

void QueueEntry::WhenCleaned(std::function<void()> cleaned) {
  participant_.WhenCleaned(std::move(cleaned));
}

void QueueEntry::MarkCleaned() {
  // The node is gone and nothing of ours waits: its watches' room is free
  // (also while a released guard is kept).
  watch_reservation_.Release();
  participant_.MarkCleaned();
}

void QueueEntry::CleanUp(const absl::Status& why) {
  Participant::Cleanup cleanup;
  uint64_t generation;
  HoldMonitor::Stopping stopping;
  std::shared_ptr<HoldMonitor> monitor;
  {
    absl::MutexLock lock(&mu_);
    MoveLocked(Step::kCleaning, &why);
    ++epoch_;  // whatever is in flight is stale now
    // Made if it was not, so that a waiter's own-node watch still on its
    // way is refused by a stopped monitor.
    monitor = MonitorLocked();
    stopping = monitor->Stop();  // no waiting any more
    // A create not yet handed to the client: Send() cleans after it.
    cleanup = participant_.PlanCleanup();
    generation = generation_;
  }
  monitor->Stopped(stopping);
  CancelBlockerWatch();  // nothing left waiting for it
  // No watch of ours is wanted any more: the room is free before the
  // outcome is delivered (the watches' removals in flight are what the
  // budget keeps beside it: src/watch_budget.h).
  watch_reservation_.Release();
  auto self = shared_from_this();
  participant_.Clean(cleanup, core_, generation, [self] { self->MarkCleaned(); });
}

void QueueEntry::Release(Done done, bool caller_waits) {
  std::optional<PendingRelease> pending = StartRelease(std::move(done));
  if (pending.has_value()) SendRelease(*std::move(pending), caller_waits);
}

std::optional<QueueEntry::PendingRelease> QueueEntry::StartRelease(Done done) {
  PendingRelease pending;
  int listener = 0;
  bool held;
  HoldMonitor::Stopping stopping;
  std::shared_ptr<HoldMonitor> monitor;
  {
    absl::MutexLock lock(&mu_);
    held = step_ == Step::kHeld;
    if (held) {
      MoveLocked(Step::kReleasing);
      monitor = monitor_;  // made by the grant
      stopping = monitor->Stop();
    }
    pending.marked = held && driver_->MarksRelease(waited_);
    pending.path = PathOf(participant_.node_name());
    pending.generation = generation_;
    if (held) std::swap(listener, session_listener_id_);
  }
  // The caller's callback never runs under our mutex.
  if (!held) {
    done(absl::FailedPreconditionError(absl::StrCat("release ", dir(), ": not held")));
    return std::nullopt;
  }
  monitor->Stopped(stopping);  // held: set above
  if (listener != 0) core_->RemoveInternalListener(listener);
  auto self = shared_from_this();
  pending.entry = self;
  pending.released = [self, done = std::move(done)](absl::Status status) {
    {
      absl::MutexLock lock(&self->mu_);
      self->MoveLocked(Step::kDone);
    }
    self->MarkCleaned();
    done(status);
  };
  return pending;
}

void QueueEntry::SendRelease(PendingRelease pending, bool caller_waits) {
  QueueEntry& entry = *pending.entry;
  if (pending.marked) {
    return entry.ReleaseMarked(pending.generation, pending.path, std::move(pending.released));
  }
  Participant::DeleteGuaranteed(entry.core_, pending.generation, pending.path,
                                std::move(pending.released), caller_waits);
}

std::vector<Op> QueueEntry::ReleaseOps(const std::string& path, bool marked) const {
  if (!marked) return {Op::Delete(path)};
  return {Op::SetData(path, absl::StrCat(OwnNodeData(), kReleasedMark)), Op::Delete(path)};
}

void QueueEntry::ReleaseJointly(std::vector<PendingRelease> pending) {
  if (pending.empty()) return;
  if (pending.size() == 1) return SendRelease(std::move(pending.front()));
  SessionCore& core = *pending.front().entry->core_;
  SessionCore::Handle handle = core.current();
  std::vector<Op> ops;
  size_t bytes = 0;
  bool together = handle.client != nullptr;
  for (const PendingRelease& one : pending) {
    together = together && one.entry->core_.get() == &core && one.generation == handle.generation;
    if (!together) break;
    for (Op& op : one.entry->ReleaseOps(one.path, one.marked)) {
      bytes += op.data.size() + core.OpBytes(op.path);
      ops.push_back(std::move(op));
    }
  }
  // A transaction over the server's packet limit would cost the connection.
  // (The watch budget keeps a set's deletes below it as a rule — each part
  // reserved room for watches on paths as long as its node's — but a marked
  // release is two ops.)
  together = together && core.CheckRequestSize("release of", pending.front().path, bytes).ok();
  if (!together) {
    for (PendingRelease& one : pending) SendRelease(std::move(one));
    return;
  }
  auto shared = std::make_shared<std::vector<PendingRelease>>(std::move(pending));
  handle.client->Multi(ops, core.default_acl(),
                       [shared](absl::Status status, std::vector<OpResult>) {
                         for (PendingRelease& one : *shared) {
                           if (status.ok()) {
                             one.released(absl::OkStatus());
                           } else {
                             SendRelease(std::move(one));
                           }
                         }
                       });
}

void QueueEntry::ReleaseMarked(uint64_t generation, const std::string& path, Done done) {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) {
    return Participant::DeleteGuaranteed(core_, generation, path, std::move(done));
  }
  std::vector<Op> ops = ReleaseOps(path, /*marked=*/true);
  auto core = core_;
  client->Multi(ops, core_->default_acl(),
                [core, generation, path, done](absl::Status status, std::vector<OpResult>) {
                  // Not applied (the connection dropped, or the node is
                  // gone already): delete it the ordinary way; a waiter
                  // woken by a plain delete lists again.
                  if (status.ok()) return done(status);
                  Participant::DeleteGuaranteed(core, generation, path, done);
                });
}

void QueueEntry::OnSessionState(SessionState state, uint64_t generation) {
  Step step;
  uint64_t mine;
  uint64_t epoch = 0;
  std::shared_ptr<HoldMonitor> monitor;
  {
    absl::MutexLock lock(&mu_);
    step = step_;
    mine = generation_;
    monitor = monitor_;
    // Watches set again after a reconnect may fire out of zxid order.
    if (state != SessionState::kConnected && monitor != nullptr) monitor->ConnectionChanged();
    if (step == Step::kIdle && done_ != nullptr && state == SessionState::kConnected &&
        generation > attempt_.after_generation) {
      generation_ = generation;  // started between generations: begin on this one
      epoch = EnterLocked(FirstStep());
    }
  }
  if (epoch != 0) return Send(FirstStep(), epoch);
  const bool gone = generation != mine || state == SessionState::kLost ||
                    state == SessionState::kClosed;
  if (step == Step::kIdle || Acquiring(step)) {
    if (state == SessionState::kClosed) {
      Finish(absl::CancelledError(absl::StrCat(Noun(), " ", dir(), ": session closed")));
    } else if (gone && step != Step::kIdle) {
      Finish(SessionLostStatus(Noun(), dir()));
    }
    return;
  }
  if (step == Step::kHeld) monitor->OnSessionState(state, gone);  // made by the grant
}

}  // namespace internal
}  // namespace zkr
