#include "recipes/queue_entry.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "recipes/queue_decision.h"
#include "recipes/semaphore_decision.h"
#include "src/paths.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

// Appended to a writer's node data by the transaction that releases it
// (ReleaseMarked): its watcher then sees "data changed", which only that
// release produces.
constexpr absl::string_view kReleasedMark = "released=1\n";
std::shared_ptr<QueueEntry> QueueEntry::Make(std::shared_ptr<SessionCore> core, Config config) {
  return std::shared_ptr<QueueEntry>(new QueueEntry(std::move(core), std::move(config)));
}

QueueEntry::QueueEntry(std::shared_ptr<SessionCore> core, Config config)
    : core_(std::move(core)),
      config_(std::move(config)),
      participant_(NewParticipantId(config_.label)),
      prefix_(NodePrefix(participant_, config_.mode, config_.weight, config_.leases)),
      listens_(config_.revocable && (config_.watch_own_node || config_.watch_revoke)),
      report_(*core_, config_.dir, config_.mode, config_.weight,
              config_.decide && config_.report) {}

QueueEntry::~QueueEntry() {
  if (session_listener_id_ != 0) core_->RemoveInternalListener(session_listener_id_);
}

std::string QueueEntry::PathOf(absl::string_view child) const {
  return JoinPath(config_.dir, child);
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
  revoke_listener_ = std::move(listener);
}

LockState QueueEntry::state() const {
  LockState state;
  std::shared_ptr<RevokeWatch> revoke_watch;
  absl::Duration basis;
  {
    absl::MutexLock lock(&mu_);
    state = step_ == Step::kHeld ? held_state_ : LockState::kReleased;
    revoke_watch = revoke_watch_;
    basis = basis_;
  }
  if (state != LockState::kHeld) return state;
  // Past the session's lease the server may have expired us (say, after this
  // process was paused) even if no event has said so yet.
  if (!core_->WithinLease()) return LockState::kSuspended;
  // A force may have been marked that we cannot have heard of: our request
  // watch is not known to be set, and the lease of the request that granted
  // us (or that set it last) has run out (recipes/revoke_watch.h).
  if (listens_) {
    const absl::Duration now = core_->clock().Monotonic();
    const absl::Duration lease = core_->LeaseLength();
    if (revoke_watch != nullptr ? !revoke_watch->MayHold(now, lease) : now >= basis + lease) {
      return LockState::kSuspended;
    }
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

void QueueEntry::Start(Done done) {
  // The node's data (with the released mark a writer may add) must fit the
  // server's packet limit: refused here, before anything is sent.
  // The largest request is the marked release: a set of that data and a
  // delete, both on the node's path (which the create's ACL does not cross).
  const size_t node = config_.dir.size() + 1 + prefix_.size() + 11;  // "<dir>/<prefix><seq>"
  absl::Status fits = core_->CheckRequestSize(
      "create in", config_.dir,
      config_.data.size() + kReleasedMark.size() + (listens_ ? kMaxPublishedTimeoutBytes : 0) +
          std::max(core_->OpBytes(node, &config_.acl), 2 * core_->OpBytes(node)));
  if (!fits.ok()) {
    {
      absl::MutexLock lock(&mu_);
      abandoned_ = true;
      cleaned_ = true;  // nothing was created
    }
    return done(fits);
  }
  report_.Started();
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
      between_generations = state == SessionState::kLost || state == SessionState::kConnecting;
      done_ = std::move(done);
      generation_ = core_->generation();
      session_listener_id_ = listener;
      // Between generations the first step waits in kIdle for the next
      // CONNECTED (OnSessionState), within the caller's deadline.
      if (!between_generations) epoch = EnterLocked(FirstStep());
    }
  }
  if (refused) {
    core_->RemoveInternalListener(listener);
    return done(absl::CancelledError(absl::StrCat("lock ", config_.dir, ": abandoned before start")));
  }
  if (!between_generations) return Send(FirstStep(), epoch);
  if (state == SessionState::kLost && !core_->options().reconnect_after_loss) {
    Finish(SessionLostStatus("lock", config_.dir));
  }
}

// ---- the step machine ---------------------------------------------------------

absl::string_view QueueEntry::StepName(Step step) {
  switch (step) {
    case Step::kIdle: return "IDLE";
    case Step::kPeek: return "PEEK";
    case Step::kCreateDirectory: return "CREATE_DIRECTORY";
    case Step::kCreate: return "CREATE";
    case Step::kRecover: return "RECOVER";
    case Step::kReadToken: return "READ_TOKEN";
    case Step::kList: return "LIST";
    case Step::kWatch: return "WATCH";
    case Step::kConfirm: return "CONFIRM";
    case Step::kCheckRevoke: return "CHECK_REVOKE";
    case Step::kHeld: return "HELD";
    case Step::kReleasing: return "RELEASING";
    case Step::kCleaning: return "CLEANING";
    case Step::kDone: return "DONE";
  }
  return "?";
}

std::string QueueEntry::DebugString() const {
  absl::MutexLock lock(&mu_);
  return absl::StrCat("step=", StepName(step_), " generation=", generation_, " node=",
                      node_name_.empty() ? "-" : node_name_, " abandoned=", abandoned_ ? 1 : 0);
}

uint64_t QueueEntry::EnterLocked(Step step) {
  step_ = step;
  if (step == Step::kCreate) {
    create_unknown_ = true;  // until its reply says
    create_sent_ = false;
  }
  return ++epoch_;
}

void QueueEntry::GoTo(Step step) {
  uint64_t epoch;
  std::vector<uintptr_t> previous;  // the watches of the last kWatch, if not fired
  {
    absl::MutexLock lock(&mu_);
    if (abandoned_ || !Acquiring(step_)) return;  // gave up, or done
    epoch = EnterLocked(step);
    previous.swap(blocker_watches_);
  }
  if (step == Step::kWatch) report_.Watching();
  // The next step's request first, the removals after it: the server takes
  // a session's requests in order, and a semaphore's first waiter has a
  // watch on every holder but the one that left.
  Send(step, epoch);
  CancelWatches(std::move(previous));
}

void QueueEntry::Send(Step step, uint64_t epoch) {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) {
    if (step == Step::kCreate) {
      bool clean;
      {
        absl::MutexLock lock(&mu_);  // no create was sent
        create_unknown_ = false;
        clean = std::exchange(clean_after_create_, false);
      }
      if (clean) MarkCleaned();
    }
    return Finish(SessionLostStatus("lock", config_.dir));
  }
  auto self = shared_from_this();
  // A grant's basis: when the request that decided it was sent.
  const absl::Duration sent = listens_ ? core_->clock().Monotonic() : absl::ZeroDuration();
  auto reply = [self, epoch, sent](Reply r) {
    r.basis = self->BasisOf(sent);
    self->OnReply(epoch, std::move(r));
  };
  auto listing = [reply](absl::StatusOr<std::vector<std::string>> children) {
    reply(Reply::Listing(std::move(children)));
  };
  auto created = [reply](absl::StatusOr<CreateResult> result) {
    Reply r = Reply::Of(result.status());
    if (result.ok()) r.created = *std::move(result);
    reply(std::move(r));
  };
  const std::vector<Acl>& acl = config_.acl.empty() ? core_->default_acl() : config_.acl;
  switch (step) {
    case Step::kPeek:
    case Step::kRecover:
    case Step::kList:
      client->GetChildren(config_.dir, nullptr, listing);
      return;
    case Step::kCreateDirectory: {
      size_t index;
      {
        absl::MutexLock lock(&mu_);
        index = directory_index_;
      }
      // Computed here, not kept: rare, and every queued waiter would pay.
      client->Create(AncestorsAndSelf(config_.dir)[index], "", CreateMode::kContainer, acl,
                     created);
      return;
    }
    case Step::kCreate: {
      bool clean = false;
      bool stale;
      {
        // Abandoned since the step was entered: send nothing.
        absl::MutexLock lock(&mu_);
        stale = epoch != epoch_;
        if (stale) {
          create_unknown_ = false;
          clean = std::exchange(clean_after_create_, false);
        }
      }
      if (stale) {
        if (clean) MarkCleaned();  // the cleaning left to us: nothing was created
        return;
      }
      if (!listens_) {
        client->Create(PathOf(prefix_), config_.data, CreateMode::kEphemeralSequential, acl,
                       created);
      } else {
        // What a requester needs to force us safely: how long our lease lasts.
        std::string data =
            absl::StrCat(config_.data, PublishSessionTimeout(core_->negotiated_timeout()));
        client->Create(PathOf(prefix_), data, CreateMode::kEphemeralSequential, acl, created);
        absl::MutexLock lock(&mu_);
        node_data_ = std::move(data);
      }
      uint64_t generation;
      {
        absl::MutexLock lock(&mu_);
        create_sent_ = true;
        clean = std::exchange(clean_after_create_, false);
        generation = generation_;
      }
      // Abandoned while the create was being handed over: clean up now,
      // after it.
      if (clean) return CleanUnknownCreate(generation);
      if (config_.decide) {
        client->GetChildren(config_.dir, nullptr,
                            [self, epoch, sent](absl::StatusOr<std::vector<std::string>> children) {
                              Reply r = Reply::Listing(std::move(children));
                              r.basis = self->BasisOf(sent);
                              self->OnListingBehindCreate(epoch, std::move(r));
                            });
      }
      return;
    }
    case Step::kCheckRevoke:
      client->Exists(RevokeRequestPath(node_path()), nullptr, [reply](absl::StatusOr<Stat> stat) {
        Reply r = Reply::Of(stat.status());
        if (stat.ok()) r.stat = *stat;
        reply(std::move(r));
      });
      return;
    case Step::kReadToken:
    case Step::kConfirm: {
      auto stat_reply = [reply](absl::StatusOr<Stat> stat) {
        Reply r = Reply::Of(stat.status());
        if (stat.ok()) r.stat = *stat;
        reply(std::move(r));
      };
      bool mark;
      std::string data;
      {
        absl::MutexLock lock(&mu_);
        mark = step == Step::kConfirm && mark_on_acquire_;
        if (mark) data = listens_ ? node_data_ : config_.data;
      }
      // The mark: a new version of our node (same data) wakes a semaphore
      // waiter behind us; its reply confirms our node as an exists would.
      if (mark) return client->Set(node_path(), data, -1, stat_reply);
      client->Exists(node_path(), nullptr, stat_reply);
      return;
    }
    case Step::kWatch: {
      std::vector<std::string> blockers;
      bool marks_count;
      {
        absl::MutexLock lock(&mu_);
        blockers = blockers_;
        marks_count = blocker_marks_count_;
      }
      // Data watches (getData) rather than exists watches: on a node already
      // gone, no watch is left behind on the server. All are sent at once;
      // the first that fires (or answers NotFound) moves us on.
      std::weak_ptr<QueueEntry> weak = weak_from_this();
      for (size_t index = 0; index < blockers.size(); ++index) {
        const uintptr_t watch = client->Get(
            PathOf(blockers[index]),
            [weak, epoch, index, sent](const WatchEvent& event) {
              auto self = weak.lock();
              if (self == nullptr) return;
              Reply r = Reply::WatchFired(event.type);
              r.blocker = index;
              r.basis = self->BasisOf(sent);
              self->OnReply(epoch, std::move(r));
            },
            [reply, marks_count, index](absl::StatusOr<NodeData> node) {
              Reply r = Reply::Of(node.status());
              r.blocker = index;
              // Created with version 0; only its owner's mark changes it.
              r.blocker_marked = marks_count && node.ok() && node->stat.version > 0;
              reply(std::move(r));
            });
        bool keep;
        {
          absl::MutexLock lock(&mu_);
          keep = epoch == epoch_;
          if (keep) blocker_watches_.push_back(watch);
        }
        if (!keep) client->CancelWatch(watch);  // moved on (or gave up) while we set it
      }
      // With the first blocker watch, a watch on our own node (sent behind
      // it): the woken waiter may then hold on the event itself (kWatch in
      // Next), and it is the watch a holder keeps. Not for a semaphore: its
      // acquisition marks (changes) our node anyway.
      if (config_.mode != NodeMode::kLease && config_.watch_own_node && OwnWatchUnset()) {
        bool current;
        {
          absl::MutexLock lock(&mu_);
          current = epoch == epoch_;
        }
        if (current) WatchOwnNode(/*verify=*/false);
      }
      return;
    }
    case Step::kIdle:
    case Step::kHeld:
    case Step::kReleasing:
    case Step::kCleaning:
    case Step::kDone:
      return;  // no request of their own here
  }
}

void QueueEntry::OnReply(uint64_t epoch, Reply reply) {
  Step step;
  bool abandoned;
  int attempt;  // of this step, if the reply is retryable
  {
    absl::MutexLock lock(&mu_);
    if (epoch != epoch_) return;  // stale: the attempt moved on
    step = step_;
    // What a reply says about our node is kept even when abandoned: it
    // decides what cleaning must delete.
    if (step == Step::kCreate && !IsRetryable(reply.status)) {
      create_unknown_ = false;
      if (reply.status.ok()) {
        node_name_ = std::string(NodeName(reply.created.path));
        token_ = reply.created.stat.czxid;
      }
    }
    if (step == Step::kRecover && reply.status.ok()) {
      create_unknown_ = false;
      for (const std::string& child : reply.children) {
        if (absl::StartsWith(child, prefix_)) node_name_ = child;
      }
    }
    // An answer to a listing, a blocker watch or a request check: the
    // server processed it before anything a later decision depends on.
    if (listens_ && !IsRetryable(reply.status) &&
        (step == Step::kList || step == Step::kWatch || step == Step::kCheckRevoke)) {
      basis_ = std::max(basis_, reply.basis);
    }
    abandoned = abandoned_;
    retries_in_a_row_ = IsRetryable(reply.status) ? retries_in_a_row_ + 1 : 0;
    attempt = retries_in_a_row_;
  }
  if (abandoned) return;  // Finish() has started cleaning
  if (IsRetryable(reply.status)) {
    if (core_->events().on()) {
      core_->ReportRetry(absl::StrCat("lock step ", StepName(step)), config_.dir, attempt,
                         reply.status);
    }
    // The create's outcome is unknown: look it up rather than create twice.
    // A watch's arming: list again rather than re-arm on a stale decision.
    const Step again = step == Step::kCreate ? Step::kRecover
                       : step == Step::kWatch ? Step::kList
                                              : step;
    return RetryWhenConnected(again, epoch);
  }
  Next(step, std::move(reply));
}

void QueueEntry::Next(Step step, Reply reply) {
  const absl::Status& status = reply.status;
  switch (step) {
    case Step::kPeek:
      if (absl::IsNotFound(status)) return GoTo(Step::kCreate);  // no queue yet: free
      if (!status.ok()) return Finish(status);
      // The other kind's nodes: only a queued decision says refuse or wait.
      if (HasOtherKind(reply.children, config_.mode)) return GoTo(Step::kCreate);
      if (config_.mode == NodeMode::kLease
              ? !CouldTakeLeasesNow(reply.children, config_.weight, config_.leases)
              : !CouldAcquireNow(reply.children, config_.mode)) {
        return Finish(absl::DeadlineExceededError(absl::StrCat(
            "lock ", config_.dir, " is held; try-acquire gave up without queueing")));
      }
      return GoTo(Step::kCreate);
    case Step::kCreateDirectory: {
      if (!status.ok() && !absl::IsAlreadyExists(status)) return Finish(status);
      bool more;
      {
        absl::MutexLock lock(&mu_);
        more = ++directory_index_ < AncestorsAndSelf(config_.dir).size();
        if (!more) directory_created_ = true;
      }
      return GoTo(more ? Step::kCreateDirectory : Step::kCreate);
    }
    case Step::kCreate: {
      if (status.ok()) return config_.decide ? ListBehindCreate() : OnAcquired();
      bool may_create_directory;
      {
        absl::MutexLock lock(&mu_);
        may_create_directory = !directory_created_;
        directory_index_ = 0;
      }
      if (absl::IsNotFound(status) && may_create_directory) return GoTo(Step::kCreateDirectory);
      return Finish(status);
    }
    case Step::kRecover: {
      if (!status.ok() && !absl::IsNotFound(status)) return Finish(status);
      bool found;
      {
        absl::MutexLock lock(&mu_);
        found = !node_name_.empty();
      }
      return GoTo(found ? Step::kReadToken : Step::kCreate);  // else: never applied
    }
    case Step::kReadToken:
      if (!status.ok()) return Finish(status);
      {
        absl::MutexLock lock(&mu_);
        token_ = reply.stat.czxid;
      }
      return config_.decide ? GoTo(Step::kList) : OnAcquired();
    case Step::kList: {
      if (!status.ok() && !absl::IsNotFound(status)) return Finish(status);
      std::string my_name;
      {
        absl::MutexLock lock(&mu_);
        my_name = node_name_;
      }
      report_.Queued(reply.children, my_name);  // the first listing only
      if (listens_) {
        // A request for our node that this listing shows may have been
        // marked before it was processed: the listing is no basis then.
        const bool seen = std::find(reply.children.begin(), reply.children.end(),
                                    RevokeRequestPath(my_name)) != reply.children.end();
        absl::MutexLock lock(&mu_);
        request_seen_ = seen;
      }
      if (config_.mode == NodeMode::kLease) return DecideLeases(reply.children);
      bool waited;
      {
        absl::MutexLock lock(&mu_);
        waited = waited_;
      }
      // A participant that waited was accepted then: a semaphore node that
      // is earliest now only blocks it.
      QueueDecision decision = DecideQueue(reply.children, my_name, /*accepted=*/waited);
      switch (decision.kind) {
        case QueueDecision::Kind::kAcquired:
          return Grant();
        case QueueDecision::Kind::kOtherKind:
          return Finish(absl::FailedPreconditionError(absl::StrCat(
              config_.dir, " is a semaphore (node ", decision.watch,
              "), not a lock: a lock and a semaphore cannot share a path")));
        case QueueDecision::Kind::kLost:
          return Finish(absl::AbortedError(
              absl::StrCat("queue node ", PathOf(my_name), " vanished while waiting")));
        case QueueDecision::Kind::kWait:
          {
            absl::MutexLock lock(&mu_);
            waited_ = true;  // our release will be marked (ReleaseMarked)
          }
          if (config_.try_only) {
            return Finish(absl::DeadlineExceededError(
                absl::StrCat("lock ", config_.dir, " is held; try-acquire gave up")));
          }
          {
            absl::MutexLock lock(&mu_);
            blockers_ = {decision.watch};
            one_release_enough_ = decision.blockers == 1;
            blocker_marks_count_ = false;
          }
          return GoTo(Step::kWatch);
      }
      return;
    }
    case Step::kWatch: {
      // A writer's data changes only in the transaction that releases it
      // (ReleaseMarked): it held, so it was first — nothing blocks us now,
      // whatever our listing showed (a reader watches the last writer
      // before it, so only readers were between). A reader's release says
      // nothing: other readers may still hold.
      const bool released_mark =
          reply.blocker_data_changed && config_.mark_release && BlockerWrites();
      const bool gone = reply.blocker_deleted || released_mark ||
                        (!reply.watch_fired && absl::IsNotFound(status));
      if (gone || reply.watch_fired || reply.blocker_marked) {
        bool enough, own_watch_sure, mark;
        {
          absl::MutexLock lock(&mu_);
          enough = one_release_enough_ || released_mark;
          own_watch_sure = own_watch_sure_;
          mark = mark_on_acquire_;
        }
        // The release that lets us in: nothing can be ahead now. Else (or a
        // semaphore waiter's mark: it holds, we may be first) list again.
        report_.Handoff([&] { return BlockerName(reply.blocker); }, /*granted=*/gone && enough);
        if (!gone || !enough) return GoTo(Step::kList);
        if (mark) return GoTo(Step::kConfirm);
        // Our own node is still ours if its watch, armed before the blocker
        // went and on this connection, has not fired: the server sends a
        // session's events in zxid order, so an earlier deletion of our node
        // would have been handled first (design notes; model EVENT_HANDOFF).
        // Past the lease, or after a disconnect, ask (kConfirm).
        if (own_watch_sure && core_->WithinLease()) return OnAcquired();
        return GoTo(Step::kConfirm);
      }
      if (status.ok()) return;  // armed: waiting for it to fire
      return Finish(status);
    }
    case Step::kConfirm: {
      // Our node still there and ours (its owner our session): we hold. Gone
      // (an operator, or our session expired): lost, as a listing would say.
      std::shared_ptr<ZkClient> client = Client();
      if (status.ok() && client != nullptr && reply.stat.ephemeral_owner == client->session_id()) {
        return Grant();
      }
      if (status.ok() || absl::IsNotFound(status)) {
        return Finish(absl::AbortedError(
            absl::StrCat("queue node ", node_path(), " vanished while waiting")));
      }
      return Finish(status);
    }
    case Step::kCheckRevoke:
      // Marked (any data change after its creation): forced before we knew
      // we held. Else a force can come only after this answer: its send time
      // is the grant's basis.
      if (status.ok() && reply.stat.version > 0) {
        return Finish(absl::AbortedError(absl::StrCat(
            "queue node ", node_path(), " was revoked by force before it held")));
      }
      if (status.ok() || absl::IsNotFound(status)) return OnAcquired();
      return Finish(status);
    case Step::kIdle:
    case Step::kHeld:
    case Step::kReleasing:
    case Step::kCleaning:
    case Step::kDone:
      return;
  }
}

void QueueEntry::ListBehindCreate() {
  uint64_t epoch;
  std::unique_ptr<Reply> arrived;
  {
    absl::MutexLock lock(&mu_);
    if (abandoned_ || !Acquiring(step_)) return;  // gave up, or done
    const uint64_t create_epoch = epoch_;
    epoch = EnterLocked(Step::kList);
    if (behind_create_.create_epoch == create_epoch && behind_create_.reply != nullptr) {
      arrived = std::move(behind_create_.reply);  // it came first
      behind_create_ = BehindCreate();
    } else {
      behind_create_ = BehindCreate{create_epoch, epoch, nullptr};
    }
  }
  if (arrived != nullptr) OnReply(epoch, std::move(*arrived));
}

void QueueEntry::OnListingBehindCreate(uint64_t create_epoch, Reply reply) {
  uint64_t epoch;
  {
    absl::MutexLock lock(&mu_);
    if (behind_create_.create_epoch != create_epoch || behind_create_.list_epoch == 0) {
      // The create's reply is not handled yet: keep this for
      // ListBehindCreate, which drops it unless the create succeeded.
      behind_create_ = BehindCreate{create_epoch, 0, std::make_unique<Reply>(std::move(reply))};
      return;
    }
    epoch = behind_create_.list_epoch;
    behind_create_ = BehindCreate();
  }
  OnReply(epoch, std::move(reply));
}

void QueueEntry::RetryWhenConnected(Step step, uint64_t epoch) {
  auto self = shared_from_this();
  core_->WhenConnected(generation(), [self, step, epoch](absl::Status connected) {
    {
      absl::MutexLock lock(&self->mu_);
      if (epoch != self->epoch_) return;  // moved on (or gave up) meanwhile
    }
    if (connected.ok()) return self->GoTo(step);
    self->Finish(connected);  // lost or closed: the node went with the session
  });
}

void QueueEntry::CancelBlockerWatch() {
  std::vector<uintptr_t> watches;
  {
    absl::MutexLock lock(&mu_);
    watches.swap(blocker_watches_);
  }
  CancelWatches(std::move(watches));
}

void QueueEntry::CancelWatches(std::vector<uintptr_t> watches) {
  if (watches.empty()) return;
  if (std::shared_ptr<ZkClient> client = Client()) {
    for (uintptr_t watch : watches) client->CancelWatch(watch);
  }
}

void QueueEntry::OnAcquired() {
  Done done;
  bool arm;  // an own-node watch is wanted and none was set while waiting
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr || abandoned_) return;
    step_ = Step::kHeld;
    held_state_ = LockState::kHeld;
    done = std::move(done_);
    done_ = nullptr;
    arm = config_.watch_own_node && own_watch_ == 0;
  }
  report_.Granted();
  const bool deferred = arm && config_.own_node_watch_delay > absl::ZeroDuration();
  // The request watch: with the own-node watch (a brief hold costs no
  // request), at once if the caller listens for requests or one is there;
  // within half the lease at the latest: until its watch is set the hold
  // counts only on the lease of the grant (RevokeWatch::MayHold), and an
  // undisturbed hold must not read SUSPENDED for want of it.
  bool follow_now = false;
  bool follow_later = false;
  absl::Duration follow_delay = config_.own_node_watch_delay;
  if (listens_) {
    bool request_seen;
    {
      absl::MutexLock lock(&mu_);
      request_seen = request_seen_;
    }
    follow_now = config_.watch_revoke || request_seen ||
                 config_.own_node_watch_delay <= absl::ZeroDuration();
    follow_later = !follow_now;
    if (follow_later) follow_delay = std::min(follow_delay, core_->LeaseLength() / 2);
  }
  // Armed only if the hold lasts: a brief hold costs no request for them.
  // Scheduled before the caller hears of the hold, so that a release right
  // after finds the tasks to cancel; one task when both are due together.
  const bool together = deferred && follow_later && follow_delay == config_.own_node_watch_delay;
  std::weak_ptr<QueueEntry> weak = weak_from_this();
  if (deferred) {
    const uint64_t task =
        core_->delayed().RunAfter(config_.own_node_watch_delay, [weak, together] {
          auto self = weak.lock();
          if (self == nullptr) return;
          self->WatchOwnNode(/*verify=*/false);
          if (together) self->StartRevokeWatch();
        });
    absl::MutexLock lock(&mu_);
    own_watch_task_ = task;
  }
  if (follow_later && !together) {
    const uint64_t task = core_->delayed().RunAfter(follow_delay, [weak] {
      if (auto self = weak.lock()) self->StartRevokeWatch();
    });
    absl::MutexLock lock(&mu_);
    revoke_watch_task_ = task;
  }
  done(absl::OkStatus());  // first: the own-node watch is off the critical path
  if (arm && !deferred) WatchOwnNode(/*verify=*/false);
  if (follow_now) StartRevokeWatch();
}

void QueueEntry::Grant() {
  bool check;
  {
    absl::MutexLock lock(&mu_);
    check = request_seen_;
  }
  if (check) return GoTo(Step::kCheckRevoke);
  OnAcquired();
}

void QueueEntry::StartRevokeWatch() {
  RevokeListener listener;
  uint64_t generation;
  absl::Duration basis;
  {
    absl::MutexLock lock(&mu_);
    revoke_watch_task_ = 0;
    if (step_ != Step::kHeld || revoke_watch_ != nullptr) return;  // released, or started
    if (config_.watch_revoke) listener = revoke_listener_;
    generation = generation_;
    basis = basis_;
  }
  std::weak_ptr<QueueEntry> weak = weak_from_this();
  std::shared_ptr<RevokeWatch> watch =
      RevokeWatch::Start(core_, generation, node_path(), basis, std::move(listener), [weak] {
        if (auto self = weak.lock()) self->OnRevokeForced();
      });
  bool released;
  {
    absl::MutexLock lock(&mu_);
    released = step_ != Step::kHeld;
    if (!released) revoke_watch_ = watch;
  }
  if (released) watch->Stop();  // released while we armed it
}

// A forced revocation: LOST at once, but the node stays until the holder
// lets go (Release) — what it was doing may still be stopping (zkr's CMD),
// and the next holder must not start beside it. A holder that never lets go
// loses the node to the requester, one session timeout after the mark.
void QueueEntry::OnRevokeForced() { SetHeldState(LockState::kLost); }

std::string QueueEntry::BlockerName(size_t index) {
  absl::MutexLock lock(&mu_);
  return index < blockers_.size() ? blockers_[index] : "";
}

bool QueueEntry::BlockerWrites() {
  std::string blocker;
  {
    absl::MutexLock lock(&mu_);
    if (blockers_.size() != 1) return false;
    blocker = blockers_.front();
  }
  std::optional<QueueNode> node = ParseQueueNode(blocker);
  return node.has_value() && node->mode == NodeMode::kWrite;
}

void QueueEntry::DecideLeases(const std::vector<std::string>& children) {
  std::string my_name;
  bool waited;
  {
    absl::MutexLock lock(&mu_);
    my_name = node_name_;
    waited = waited_;
  }
  // A participant that waited was accepted then: a refused node that is
  // earliest now (the holder it came after left first) does not refuse it.
  SemaphoreDecision decision = DecideSemaphore(children, my_name, /*size_accepted=*/waited);
  switch (decision.kind) {
    case SemaphoreDecision::Kind::kAcquired: {
      bool mark;
      {
        absl::MutexLock lock(&mu_);
        // Whoever listed while we waited is behind us in this listing.
        mark_on_acquire_ = waited_ || decision.successor;
        mark = mark_on_acquire_;
      }
      return mark ? GoTo(Step::kConfirm) : Grant();
    }
    case SemaphoreDecision::Kind::kLost:
      return Finish(absl::AbortedError(
          absl::StrCat("queue node ", PathOf(my_name), " vanished while waiting")));
    case SemaphoreDecision::Kind::kMismatch:
      return Finish(absl::FailedPreconditionError(absl::StrCat(
          "semaphore ", config_.dir, " has ", decision.mismatch_leases, " leases (node ",
          decision.mismatch, "); this participant was created with ", config_.leases)));
    case SemaphoreDecision::Kind::kOtherKind:
      return Finish(absl::FailedPreconditionError(absl::StrCat(
          config_.dir, " is a lock (node ", decision.mismatch,
          "), not a semaphore: a lock and a semaphore cannot share a path")));
    case SemaphoreDecision::Kind::kWait:
      if (config_.try_only) {
        return Finish(absl::DeadlineExceededError(absl::StrCat(
            "semaphore ", config_.dir, ": not ", config_.weight,
            " free lease(s); try-acquire gave up")));
      }
      {
        absl::MutexLock lock(&mu_);
        waited_ = true;
        mark_on_acquire_ = true;
        blockers_ = std::move(decision.watch);
        one_release_enough_ = decision.first_waiter && decision.any_one;
        blocker_marks_count_ = !decision.first_waiter;
      }
      return GoTo(Step::kWatch);
  }
}

bool QueueEntry::OwnWatchUnset() {
  absl::MutexLock lock(&mu_);
  return own_watch_ == 0;
}

void QueueEntry::OnOwnNodeGone() {
  bool waiting;
  {
    absl::MutexLock lock(&mu_);
    waiting = Acquiring(step_);
  }
  if (waiting) {
    return Finish(absl::AbortedError(
        absl::StrCat("queue node ", node_path(), " vanished while waiting")));
  }
  SetHeldState(LockState::kLost);  // ignored unless held
}

void QueueEntry::WatchOwnNode(bool verify) {
  uint64_t deferred, connection;
  {
    absl::MutexLock lock(&mu_);
    if (step_ != Step::kHeld && !Acquiring(step_)) return;  // released: nothing to watch
    deferred = std::exchange(own_watch_task_, 0);
    own_watch_sure_ = false;  // until this arming's reply says so
    connection = connection_epoch_;
  }
  core_->delayed().Cancel(deferred);  // armed now (after a reconnect): once is enough
  // The cancelled task may have carried the request watch's start too.
  if (deferred != 0 && listens_) StartRevokeWatch();
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
          self->OnOwnNodeGone();  // ignored once released
        } else {
          self->WatchOwnNode(/*verify=*/false);  // data changed by someone: keep watching
        }
      },
      [weak, client, verify, connection](absl::StatusOr<NodeData> own) {
        auto self = weak.lock();
        if (self == nullptr) return;
        if (absl::IsNotFound(own.status())) return self->OnOwnNodeGone();
        if (own.ok()) {
          const bool ours = own->stat.ephemeral_owner == client->session_id();
          if (!ours) return self->OnOwnNodeGone();
          {
            absl::MutexLock lock(&self->mu_);
            // Armed on the connection still in use: its events come in order.
            self->own_watch_sure_ = connection == self->connection_epoch_;
          }
          if (verify) self->SetHeldState(LockState::kHeld);
          return;
        }
        // A final refusal (PermissionDenied: the node's ACL does not let us
        // read it) would be the same again: no watch then, and ownership
        // after a reconnect is checked without reading the data.
        if (!IsRetryable(own.status()) && !IsSessionLost(own.status())) {
          if (verify) self->VerifyOwnership(client);
          return;
        }
        // Not armed (the connection dropped with the request in flight):
        // arm it again, and re-check, once connected; a lost session is
        // reported by OnSessionState.
        {
          absl::MutexLock lock(&self->mu_);
          if (self->step_ != Step::kHeld && !self->Acquiring(self->step_)) return;
        }
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
  std::string name;
  {
    absl::MutexLock lock(&mu_);
    if (done_ == nullptr) return;  // already acquired or finished
    name = node_name_;
    done = std::move(done_);
    done_ = nullptr;
    abandoned_ = true;
    std::swap(listener, session_listener_id_);
  }
  report_.Failed(status, name);
  if (listener != 0) core_->RemoveInternalListener(listener);
  CleanUp();
  done(std::move(status));
}

bool QueueEntry::Abandon(absl::Status why, std::function<void()> cleaned) {
  {
    // Decided in one step with OnAcquired (which refuses an abandoned
    // entry): either the grant came first and we refuse, or from here on
    // the entry cannot be granted and Finish() below cleans it up.
    absl::MutexLock lock(&mu_);
    if (step_ == Step::kHeld || step_ == Step::kReleasing) return false;
    if (step_ == Step::kIdle && done_ == nullptr) {
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
  bool deferred = false;
  uint64_t generation;
  {
    absl::MutexLock lock(&mu_);
    step_ = Step::kCleaning;
    ++epoch_;  // whatever is in flight is stale now
    name = node_name_;
    unknown = create_unknown_;
    generation = generation_;
    // A create not yet handed to the client: Send() cleans after it.
    if (name.empty() && unknown && !create_sent_) {
      clean_after_create_ = true;
      unknown = false;
      deferred = true;
    }
  }
  CancelBlockerWatch();  // nothing left waiting for it
  if (deferred) return;
  if (!name.empty()) {
    auto self = shared_from_this();
    core_->DeleteGuaranteed(generation, PathOf(name), [self](absl::Status) { self->MarkCleaned(); });
  } else if (unknown) {
    CleanUnknownCreate(generation);
  } else {
    MarkCleaned();  // nothing was created
  }
}

void QueueEntry::CleanUnknownCreate(uint64_t generation) {
  // The server handles a session's requests in order: a listing sent after
  // the create sees it applied or not, in flight or with its reply lost.
  auto self = shared_from_this();
  core_->DeleteChildGuaranteed(generation, config_.dir, prefix_,
                               [self](absl::Status) { self->MarkCleaned(); });
}

void QueueEntry::Release(Done done, bool caller_waits) {
  std::string path;
  uint64_t generation;
  int listener = 0;
  bool held;
  uint64_t own_watch_task;
  uint64_t revoke_watch_task;
  bool marked;
  std::shared_ptr<RevokeWatch> revoke_watch;
  {
    absl::MutexLock lock(&mu_);
    held = step_ == Step::kHeld;
    if (held) step_ = Step::kReleasing;
    own_watch_task = std::exchange(own_watch_task_, 0);
    revoke_watch_task = std::exchange(revoke_watch_task_, 0);
    // Someone may wait on us whose listing showed others ahead of us: only
    // if we waited ourselves (else we were first when anyone listed).
    marked = held && waited_ && config_.mode == NodeMode::kWrite && config_.mark_release;
    path = PathOf(node_name_);
    generation = generation_;
    if (held) std::swap(listener, session_listener_id_);
    revoke_watch = std::move(revoke_watch_);
  }
  if (revoke_watch != nullptr) revoke_watch->Stop();
  // The caller's callback never runs under our mutex.
  if (!held) {
    return done(absl::FailedPreconditionError(absl::StrCat("release ", config_.dir, ": not held")));
  }
  if (listener != 0) core_->RemoveInternalListener(listener);
  core_->delayed().Cancel(own_watch_task);  // a brief hold: never armed
  core_->delayed().Cancel(revoke_watch_task);
  report_.ReleaseStarted();
  auto self = shared_from_this();
  if (marked) {
    return ReleaseMarked(generation, path, [self, done](absl::Status status) {
      {
        absl::MutexLock lock(&self->mu_);
        self->step_ = Step::kDone;
      }
      self->report_.Released();
      self->MarkCleaned();
      done(status);
    });
  }
  core_->DeleteGuaranteed(
      generation, path,
      [self, done](absl::Status status) {
        {
          absl::MutexLock lock(&self->mu_);
          self->step_ = Step::kDone;
        }
        self->report_.Released();
        self->MarkCleaned();
        done(status);
      },
      caller_waits);
}

void QueueEntry::ReleaseMarked(uint64_t generation, const std::string& path, Done done) {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return core_->DeleteGuaranteed(generation, path, std::move(done));
  std::vector<Op> ops = {Op::SetData(path, absl::StrCat(config_.data, kReleasedMark)),
                         Op::Delete(path)};
  auto core = core_;
  client->Multi(ops, core_->default_acl(),
                [core, generation, path, done](absl::Status status, std::vector<OpResult>) {
                  // Not applied (the connection dropped, or the node is
                  // gone already): delete it the ordinary way; a waiter
                  // woken by a plain delete lists again.
                  if (status.ok()) return done(status);
                  core->DeleteGuaranteed(generation, path, done);
                });
}

void QueueEntry::OnSessionState(SessionState state, uint64_t generation) {
  Step step;
  uint64_t mine;
  uint64_t epoch = 0;
  {
    absl::MutexLock lock(&mu_);
    step = step_;
    mine = generation_;
    if (state != SessionState::kConnected) {
      // Watches set again after a reconnect may fire out of zxid order.
      ++connection_epoch_;
      own_watch_sure_ = false;
    }
    if (step == Step::kIdle && done_ != nullptr && state == SessionState::kConnected) {
      generation_ = generation;  // started between generations: begin on this one
      epoch = EnterLocked(FirstStep());
    }
  }
  if (epoch != 0) return Send(FirstStep(), epoch);
  const bool gone = generation != mine || state == SessionState::kLost ||
                    state == SessionState::kClosed;
  if (step == Step::kIdle || Acquiring(step)) {
    if (state == SessionState::kClosed) {
      Finish(absl::CancelledError(absl::StrCat("lock ", config_.dir, ": session closed")));
    } else if (gone && step != Step::kIdle) {
      Finish(SessionLostStatus("lock", config_.dir));
    }
    return;
  }
  if (step != Step::kHeld) return;
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
  VerifyOwnership(client);
}

void QueueEntry::VerifyOwnership(const std::shared_ptr<ZkClient>& client) {
  auto self = shared_from_this();
  client->Exists(node_path(), nullptr, [self, client](absl::StatusOr<Stat> stat) {
    if (IsRetryable(stat.status())) return;  // SUSPENDED again; the next RECONNECTED re-checks
    const bool ours = stat.ok() && stat->ephemeral_owner == client->session_id();
    self->SetHeldState(ours ? LockState::kHeld : LockState::kLost);
  });
}

void QueueEntry::SetHeldState(LockState state) {
  StateListener listener;
  uint64_t generation;
  {
    absl::MutexLock lock(&mu_);
    if (step_ != Step::kHeld || held_state_ == state || held_state_ == LockState::kLost) return;
    held_state_ = state;
    listener = state_listener_;
    generation = generation_;
  }
  if (state == LockState::kLost) report_.Lost(/*session_lost=*/core_->GenerationOver(generation));
  if (listener) listener(state);
}

}  // namespace internal
}  // namespace zkr
