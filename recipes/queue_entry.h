// QueueEntry: one participant's attempt in a queue directory — the shared
// engine of the lock recipes (and the ordering core of election).
//
// Protocol (design.md "The queue"): protected create of one
// EPHEMERAL_SEQUENTIAL node, read the children (the listing is sent right
// behind the create, without waiting for its reply), decide (recipes/
// queue_decision.h), then either through, or a data watch on the one node
// that blocks us; when it goes (or is already gone): if the listing showed
// it as our only blocker, hold at once once our own node is confirmed ours
// (one exists, not a listing: nothing can have got ahead, sequence numbers
// only grow — tests/model proves it); otherwise read the children and
// decide again. Never a child watch, never polling.
//
// The engine is an explicit step machine (Step): each step sends one request
// stamped with an epoch; every reply goes through OnReply(), which sorts it
// in one order — stale, abandoned, retryable, or final — Next() says where
// a final reply leads and Go() moves there. Every change of step goes
// through MoveLocked(), and the session's observer hears of each
// transition in one place (ReportLocked). From the first blocker watch to
// the release, the own-node watch, the held state and the revocation
// request's watch are the HoldMonitor's (recipes/hold_monitor.h).
//
// Threads: the state machine advances on the ZooKeeper completion thread
// (and inline on the caller's thread for the first step); `done` and the
// state listener run there too and must not block. Internally synchronised.
//
// What differs between a lock and a semaphore's lease set is the driver's
// (recipes/queue_driver.h); the node itself — protected create, recovery by
// unique id, fencing token, guaranteed delete — is the Participant's
// (recipes/participant.h).
//
// Cleanup guarantee: an attempt that is abandoned (timeout, cancel, error)
// or released deletes its node, retrying after reconnects until the node is
// gone or its session is (Participant::DeleteGuaranteed); a create whose
// reply was lost is found again by its unique participant id, never created
// twice.
#ifndef ZKRECIPES_RECIPES_QUEUE_ENTRY_H_
#define ZKRECIPES_RECIPES_QUEUE_ENTRY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "recipes/acquisition_report.h"
#include "recipes/hold_monitor.h"
#include "recipes/participant.h"
#include "recipes/queue_driver.h"
#include "recipes/queue_node.h"
#include "src/callback_gate.h"
#include "src/session_core.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace internal {

class QueueEntry : public OwnedNode,
                   public HoldMonitor::Owner,
                   public std::enable_shared_from_this<QueueEntry> {
 public:
  // What every attempt of one participant has in common: a lock object's
  // (made with it, LockCore), a semaphore object's, or one candidacy's.
  // Immutable and shared by those attempts, so a waiting attempt carries a
  // pointer, not a copy: a deep queue's memory is its depth times the
  // attempt (zkr bench row 6).
  struct Settings {
    // The queue directory (created as a container on demand).
    std::string dir;
    // A semaphore's size (kLease); 0 for a lock.
    int leases = 0;
    // Stored in the node, for operators: `data` as it is — or, with
    // data_is_purpose (a lock's or semaphore's in our dialect), the lock
    // node data (recipes/lock_data.h) of this process, the attempt's mode
    // and start, with `data` as the purpose (OwnNodeData()).
    std::string data;
    bool data_is_purpose = false;
    // Whose node names the queue speaks (recipes/queue_node.h): ours, or a
    // lock's or an election's in Curator's or Kazoo's.
    NodeScheme scheme;
    std::vector<Acl> acl;  // empty: the session's default
    // After acquisition, watch our own node and report kLost if it vanishes.
    bool watch_own_node = true;
    // ... armed once the hold has lasted this long (LockOptions).
    absl::Duration own_node_watch_delay = absl::ZeroDuration();
    // A writer that waited releases with the marked transaction, and a data
    // change of the node we wait on means that release (ReleaseMarked).
    // Off for an election, whose candidates change their data (leader data):
    // there a change only makes the watcher list again.
    bool mark_release = true;
    // While held, watch for revocation requests (recipes/revoke_watch.h)
    // and hand each to the revoke listener.
    bool watch_revoke = false;
    // A lock's or semaphore's participant (zkrecipes/revocation.h). If it
    // watches its own node or asks for requests (watch_revoke), it hears a
    // forced revocation: it publishes its session timeout in its node
    // (PublishSessionTimeout), follows its request while held (RevokeWatch,
    // armed with the own-node watch, or at once with watch_revoke), and a
    // force makes the hold kLost and deletes its node. Until that watch is
    // set, the hold reads kSuspended once the lease of the request that
    // granted it has run out.
    bool revocable = false;
    // Report the attempt to the session's observer (recipes/
    // acquisition_report.h): a lock's or semaphore's, not an election's.
    bool report = true;
  };
  // What one attempt adds to its Settings.
  struct Attempt {
    NodeMode mode = NodeMode::kWrite;
    // kLease (a semaphore participant): asks `weight` of the settings'
    // leases and decides by recipes/semaphore_decision.h.
    int weight = 1;
    // When it was asked for (Unix milliseconds): in the node's data.
    int64_t requested_ms = 0;
    // Try-acquire: read the children first and create nothing unless the
    // lock looks free; give up (DeadlineExceeded) instead of waiting.
    bool try_only = false;
    // A retry after generation N's session was found lost (a request refused
    // as by an expired handle) before the session itself heard so: start on
    // a generation after N, not on N again (where every request is refused
    // at once, on the caller's thread). 0: on the current one.
    uint64_t after_generation = 0;
    // Called once, the first time a listing tells the attempt to wait (it
    // queues behind a holder and enters kWatch): a multi-lock gives back
    // the parts after this one then (recipes/multi_lock.cc). On the
    // completion thread (or the caller's, for the first step), with no
    // engine mutex held; must not block. Internal: no recipe's public API.
    std::function<void()> on_wait;
  };
  using Done = std::function<void(absl::Status)>;
  using StateListener = std::function<void(LockState)>;
  using RevokeListener = std::function<void(std::string reason)>;

  static std::shared_ptr<QueueEntry> Make(std::shared_ptr<SessionCore> core,
                                          std::shared_ptr<const Settings> settings,
                                          Attempt attempt);
  // Make()'s (one allocation for the entry and its count): only it has a Key.
  class Key {
    friend class QueueEntry;
    Key() = default;
  };
  QueueEntry(Key, std::shared_ptr<SessionCore> core, std::shared_ptr<const Settings> settings,
             Attempt attempt);
  ~QueueEntry() override;

  // Starts the attempt; `done(OK)` once acquired, or done(error) once it
  // failed or was abandoned. Runs exactly once. Refused at once, nothing
  // sent, when the node's data would not fit a request (InvalidArgument) or
  // its watches would not fit the session's (ResourceExhausted: reserved
  // from SessionCore::watch_budget() until the attempt ends or the node of
  // a hold is gone). With `joint`, the first create goes into that
  // transaction with others' (a multi-lock's parts: recipes/joint_create.h)
  // if it takes it; a reply that says our node is alone in the directory
  // stands for the listing. (Not kept: a waiter's memory.)
  void Start(Done done, JointCreate* joint = nullptr) ABSL_LOCKS_EXCLUDED(mu_);
  // Gives up a not-yet-acquired attempt: done(why) runs (if it has not run)
  // and the node is deleted; `cleaned` (if given) runs once it is gone (or
  // its session is). Returns false, with no effect, once acquired.
  bool Abandon(absl::Status why, std::function<void()> cleaned = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Deletes the node of an acquired entry; `done` runs once the node is gone
  // (or its session is). FailedPrecondition if not held. With `caller_waits`
  // the delete may be answered on the calling thread (see
  // Participant::DeleteGuaranteed).
  void Release(Done done, bool caller_waits = false) ABSL_LOCKS_EXCLUDED(mu_);
  // A release begun but not yet sent (StartRelease): sent on its own
  // (SendRelease), or with others' in one transaction (ReleaseJointly).
  struct PendingRelease {
    std::shared_ptr<QueueEntry> entry;
    uint64_t generation = 0;
    std::string path;  // our node
    bool marked = false;  // the marked release (ReleaseMarked)
    Done released;        // the node is gone: ends the entry, then the caller's done
  };
  // Release()'s first half: the entry stops holding (kReleasing) and its
  // watches stop; nothing is sent. Not held: done(FailedPrecondition) runs
  // and nullopt is returned.
  std::optional<PendingRelease> StartRelease(Done done) ABSL_LOCKS_EXCLUDED(mu_);
  // Its second half: the marked transaction or the guaranteed delete.
  static void SendRelease(PendingRelease pending, bool caller_waits = false);
  // Several entries' releases (of one session) in one transaction: one
  // round trip and one request for all. If it is not applied (the
  // connection dropped — it may have been — or a node is gone already, or
  // the entries are not all of the session's current generation), each is
  // sent on its own (SendRelease), as if it had never been tried together.
  static void ReleaseJointly(std::vector<PendingRelease> pending);
  // Runs `cleaned` once a failed or abandoned attempt has left nothing
  // behind (its node deleted, or gone with its session); at once if so.
  void WhenCleaned(std::function<void()> cleaned) ABSL_LOCKS_EXCLUDED(mu_);
  // Called with every change of an acquired entry's state (completion or
  // supervisor thread; must not block). Set before Start().
  void SetStateListener(StateListener listener) ABSL_LOCKS_EXCLUDED(mu_);
  // Called with each revocation request while held (Settings::watch_revoke),
  // on the completion thread; must not block. Set before Start().
  void SetRevokeListener(RevokeListener listener) ABSL_LOCKS_EXCLUDED(mu_);
  // The gate the user's callbacks about this entry run through on the
  // dispatcher (LockOptions::on_state_change, on_revoke_request), made by
  // the first call (an entry without user callbacks has none); the release
  // of its hold closes it (CloseUserCallbacks), so none runs once that
  // returns.
  std::shared_ptr<CallbackGate> user_callbacks() ABSL_LOCKS_EXCLUDED(mu_);
  void CloseUserCallbacks() ABSL_LOCKS_EXCLUDED(mu_);

  LockState state() const override ABSL_LOCKS_EXCLUDED(mu_);
  std::string node_path() const override ABSL_LOCKS_EXCLUDED(mu_);
  int64_t fencing_token() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t generation() const override ABSL_LOCKS_EXCLUDED(mu_);
  const std::string& dir() const override { return participant_.dir(); }
  const Settings& config() const { return *settings_; }
  NodeMode mode() const { return attempt_.mode; }
  // Where the attempt is: "step=LIST generation=2 node=... abandoned=0"
  // (for tests and failure messages).
  std::string DebugString() const ABSL_LOCKS_EXCLUDED(mu_);
  SessionCore& core() const override { return *core_; }

 private:
  // Every step of an attempt. Each step but kIdle, kHeld and kDone has one
  // request in flight; its reply goes through OnReply().
  enum class Step {
    kIdle,             // started between generations: waits for CONNECTED
    kPeek,             // try-acquire reads the queue before creating anything
    // The participant's protected create (Participant::CreateStep):
    kCreateDirectory,  // the directory's containers
    kCreate,           // our node
    kRecover,          // its lookup by unique id after a lost reply
    kReadToken,        // the recovered node's fencing token
    kList,             // lists the queue and decides
    kWatch,            // a data watch on the one node that blocks us
    kConfirm,          // it went, and was our only blocker: is our node still ours?
                       // (a semaphore's setData: marks our node, and confirms it)
    kCheckRevoke,      // the granting listing showed a revocation request for our
                       // node: hold only if it is not marked as forced
    kHeld,             // acquired; the own-node watch reports loss
    kReleasing,        // deleting our node after a release
    kCleaning,         // given up: deleting what we may have created
    kDone,
  };
  static absl::string_view StepName(Step step);
  // The participant's create step that `step` is, if it is one; and back.
  static std::optional<Participant::CreateStep> CreateStepOf(Step step);
  static Step StepOf(Participant::CreateStep step);
  // What a request's completion reports, whatever the step: the
  // participant's (status; children of kPeek, kRecover, kList; kCreate's
  // result; kReadToken's, kConfirm's and kCheckRevoke's stat), and a watch's.
  struct Reply : Participant::Reply {
    bool watch_fired = false;           // kWatch: the blocker changed or went
    bool blocker_deleted = false;       // ... went
    bool blocker_data_changed = false;  // ... its data changed (a marked release)
    bool blocker_marked = false;        // kWatch armed: a semaphore waiter's node was marked
    size_t blocker = 0;                 // kWatch: which of blockers_ this reply is about
    // A participant that hears a forced revocation: the send time
    // (monotonic) of a request the server processed before this reply or
    // event (BasisOf) — a grant's basis (RevokeWatch::MayHold).
    absl::Duration basis;

    static Reply Of(absl::Status status) {
      Reply reply;
      reply.status = std::move(status);
      return reply;
    }
    static Reply Listing(absl::StatusOr<ChildList> children) {
      Reply reply = Of(children.status());
      if (children.ok()) reply.children = *std::move(children);
      return reply;
    }
    static Reply WatchFired(WatchEvent::Type type) {
      Reply reply;
      reply.watch_fired = true;
      reply.blocker_deleted = type == WatchEvent::Type::kDeleted;
      reply.blocker_data_changed = type == WatchEvent::Type::kDataChanged;
      return reply;
    }
  };

  // What our node stores (Settings::data): made on use, not kept.
  std::string OwnNodeData() const;
  // What kCreate stores, and a semaphore's mark writes again: OwnNodeData,
  // and the session timeout of a participant that hears a forced
  // revocation (listens_).
  std::string CreateData() const;
  std::string PathOf(absl::string_view child) const;
  // The client of our generation, or null if the session moved on.
  std::shared_ptr<ZkClient> Client() ABSL_LOCKS_EXCLUDED(mu_);
  // For a reply to a request sent at `sent`, or an event it set, on the
  // completion thread as it arrives: the later of `sent` and the latest
  // heartbeat answered before it (SessionCore::HeardInOrder).
  absl::Duration BasisOf(absl::Duration sent) const;

  // The first step: kPeek for try-acquire, else kCreate.
  Step FirstStep() const { return attempt_.try_only ? Step::kPeek : Step::kCreate; }
  // Makes `step` the current one; returns its new epoch.
  uint64_t EnterLocked(Step step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every change of step_ (with or without a new epoch): reports it.
  // `failure`: into kCleaning, why the attempt ended.
  void MoveLocked(Step step, const absl::Status* failure = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A move of the step machine, as the session's observer hears of it:
  // entering `to` (started, watching, granted, failed, releasing,
  // released), leaving `from` on `reply` (a retry, the first listing, a
  // handoff), or a held state's change (kHeld -> kHeld: lost).
  struct Transition {
    Step from;
    Step to;
    const Reply* reply = nullptr;  // the reply that moved it, if one did
    int attempt = 0;               // a retryable reply: how many in a row
    const absl::Status* failure = nullptr;  // into kCleaning: why
    LockState held = LockState::kHeld;      // kHeld -> kHeld: the new state
    uint64_t generation = 0;                // ... of the hold
  };
  // The one place the observer hears of the attempt (AcquisitionReport,
  // SessionCore::ReportRetry): every transition comes through here.
  void ReportLocked(const Transition& t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves to `step` and sends its request, stamped with a new epoch (a
  // reply or watch of an older epoch is stale and dropped).
  void GoTo(Step step) ABSL_LOCKS_EXCLUDED(mu_);
  // `joint`: Start()'s, for the first step.
  void Send(Step step, uint64_t epoch, JointCreate* joint = nullptr) ABSL_LOCKS_EXCLUDED(mu_);
  // Every reply of every step, sorted in one order: stale -> dropped;
  // attempt abandoned -> cleaning; retryable -> the step again once
  // connected; otherwise -> Next().
  void OnReply(uint64_t epoch, Reply reply) ABSL_LOCKS_EXCLUDED(mu_);
  // Where a reply leads: a step (kHeld: OnAcquired; kCleaning: Finish with
  // `failure`), or nowhere yet (a watch armed).
  struct Target {
    Step to = Step::kIdle;
    absl::Status failure;
    bool moves = true;
    static Target To(Step step) { return Target{step, absl::OkStatus(), true}; }
    static Target Fail(absl::Status why) { return Target{Step::kCleaning, std::move(why), true}; }
    static Target Stay() { return Target{Step::kIdle, absl::OkStatus(), false}; }
  };
  // Where a step's final reply leads (keeps what it says; sends nothing).
  Target Next(Step step, const Reply& reply) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves there from `from`.
  void Go(Step from, Target target) ABSL_LOCKS_EXCLUDED(mu_);
  // Once our generation is connected again: `step` (unless something moved
  // on meanwhile), or the attempt fails if the session is lost.
  void RetryWhenConnected(Step step, uint64_t epoch, int attempt);
  // Whether the request stamped `epoch` is still the one in flight.
  bool StillAt(uint64_t epoch) ABSL_LOCKS_EXCLUDED(mu_);
  // kCreate sends the listing too, right behind the create (pipelined): the
  // server answers a session's requests in order, so the listing is
  // processed after the create and shows our node — one wait for both.
  // Its reply belongs to the kList step a successful create enters
  // (ListBehindCreate); if the create fails, it is stale and dropped.
  void ListBehindCreate() ABSL_LOCKS_EXCLUDED(mu_);
  // A joint create (Start()'s `joint`) made our node (`created`): its
  // listing is the reply's directory if we are alone there, else a listing
  // sent now; either goes where a listing behind the create goes.
  void ListAfterJointCreate(uint64_t create_epoch, absl::Duration sent_at,
                            const Participant::Reply& created) ABSL_LOCKS_EXCLUDED(mu_);
  // The listing that goes where a listing behind the create goes (its reply
  // to OnListingBehindCreate): right behind the create, or after a joint one.
  void SendListingBehindCreate(ZkClient& client, uint64_t create_epoch, absl::Duration sent_at)
      ABSL_LOCKS_EXCLUDED(mu_);
  void OnListingBehindCreate(uint64_t create_epoch, Reply reply) ABSL_LOCKS_EXCLUDED(mu_);
  // kHeld: done(OK), and the hold's watches (HoldMonitor).
  void OnAcquired() ABSL_LOCKS_EXCLUDED(mu_);
  // A decision says we hold: kHeld, unless the listing showed a
  // revocation request for our node (then kCheckRevoke first).
  Target GrantTarget() ABSL_LOCKS_EXCLUDED(mu_);
  // The hold monitor, made now if it was not (monitor_).
  const std::shared_ptr<HoldMonitor>& MonitorLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The hold monitor if made, else null.
  std::shared_ptr<HoldMonitor> monitor() const ABSL_LOCKS_EXCLUDED(mu_);
  // Our node went (or is not ours): a waiting attempt fails, a hold is lost.
  void OnOwnNodeGone() override ABSL_LOCKS_EXCLUDED(mu_);
  // The hold's state changed (HoldMonitor): to the observer and the listener.
  void OnHeldState(LockState state, uint64_t generation) override ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the node we wait on is a writer's.
  bool BlockerWrites() ABSL_LOCKS_EXCLUDED(mu_);
  // A writer that waited releases with one transaction that marks its
  // node's data and deletes it: its watcher sees "data changed" and knows
  // we held, so it holds without listing the queue (linear drains).
  // Falls back to Participant::DeleteGuaranteed if the transaction is not
  // applied.
  void ReleaseMarked(uint64_t generation, const std::string& path, Done done);
  // What releasing our node at `path` sends: its delete, or (`marked`) the
  // marked transaction's two ops.
  std::vector<Op> ReleaseOps(const std::string& path, bool marked) const;
  // Cancels the watches on the nodes that blocked us (given up, or moving on).
  void CancelBlockerWatch() ABSL_LOCKS_EXCLUDED(mu_);
  // ZkClient watch ids (inline room for one: a waiting lock's memory).
  using WatchIds = absl::InlinedVector<uintptr_t, 1>;
  void CancelWatches(WatchIds watches) ABSL_LOCKS_EXCLUDED(mu_);
  // Completes the attempt with `status` (once); on error cleans up.
  void Finish(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  // kCleaning: deletes our node by name, or — created but not known — by
  // our unique prefix (a listing sent after the create sees its outcome).
  void CleanUp(const absl::Status& why) ABSL_LOCKS_EXCLUDED(mu_);
  // The abandoned attempt left nothing behind: run the `cleaned` callbacks
  // (kept by the participant).
  void MarkCleaned() ABSL_LOCKS_EXCLUDED(mu_);
  void OnSessionState(SessionState state, uint64_t generation) ABSL_LOCKS_EXCLUDED(mu_);
  bool Acquiring(Step step) const {
    return step != Step::kIdle && step != Step::kHeld && step != Step::kReleasing &&
           step != Step::kCleaning && step != Step::kDone;
  }

  const std::shared_ptr<SessionCore> core_;
  const std::shared_ptr<const Settings> settings_;  // config()
  const Attempt attempt_;
  // Our node: its name, protected create, recovery, token and deletes. It
  // shares the settings' directory (dir()).
  Participant participant_;
  // What differs between a lock and a lease set (decision, marks).
  const std::unique_ptr<QueueDriver> driver_;
  // Hears a forced revocation (Settings::revocable): publishes its timeout.
  const bool listens_;
  // For the session's observer; none without one (or for an election's
  // entry): a waiting participant's memory is the queue's depth times this.
  const std::unique_ptr<AcquisitionReport> report_;
  // Its watches' room in the session's budget (src/watch_budget.h):
  // reserved by Start() for its own node's and revocation request's watches
  // (OwnWatchBytes) and a blocker's (its path estimated from ours:
  // WatchBytesNeeded); topped up to the real blockers' paths when it
  // watches them. Released once the attempt ends without a hold (CleanUp),
  // once the node of a hold is gone (MarkCleaned), or on destruction.
  size_t OwnWatchBytes() const;
  size_t WatchBytesNeeded() const;
  std::string WatchPurpose() const;
  // What the caller acquires, for messages: "semaphore" or "lock".
  const char* Noun() const;
  WatchReservation watch_reservation_;

  mutable absl::Mutex mu_;
  // The own-node watch, the held state and the revocation request's watch:
  // made when first needed (MonitorLocked) — at the grant, or for a waiter's
  // own-node watch, or at once for a participant that hears revocations —
  // so that a plain waiter does not carry one. Never replaced once made.
  std::shared_ptr<HoldMonitor> monitor_ ABSL_GUARDED_BY(mu_);
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;  // of the request in flight
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  // kWatch: the nodes we watch (one, but every node before a semaphore's
  // first waiter).
  absl::InlinedVector<std::string, 1> blockers_ ABSL_GUARDED_BY(mu_);
  // The listing sent behind a create: the create's epoch, the kList epoch
  // that awaits it (0 until the create's reply is handled), or its reply if
  // it came first.
  struct BehindCreate {
    uint64_t create_epoch = 0;
    uint64_t list_epoch = 0;
    std::unique_ptr<Reply> reply;  // rare: on the heap, not in every entry
  };
  BehindCreate behind_create_ ABSL_GUARDED_BY(mu_);
  WatchIds blocker_watches_ ABSL_GUARDED_BY(mu_);
  Done done_ ABSL_GUARDED_BY(mu_);
  StateListener state_listener_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<CallbackGate> user_callbacks_ ABSL_GUARDED_BY(mu_);  // user_callbacks()
  // (The small fields last, side by side: a waiting attempt's memory.)
  Step step_ ABSL_GUARDED_BY(mu_) = Step::kIdle;
  int retries_in_a_row_ ABSL_GUARDED_BY(mu_) = 0;  // replies lost to connection loss
  int session_listener_id_ ABSL_GUARDED_BY(mu_) = 0;
  // The last listing showed that the release of any one of blockers_ lets
  // us in (a lock's only blocker; a semaphore's first waiter with room for
  // us once any of them goes): nothing can get ahead (sequence numbers only
  // grow), so kConfirm replaces a new listing.
  bool one_release_enough_ ABSL_GUARDED_BY(mu_) = false;
  // A semaphore waiter watches a waiter: that node's mark (it holds now)
  // counts as a change, also when its watch's reply shows it already made.
  bool blocker_marks_count_ ABSL_GUARDED_BY(mu_) = false;
  bool waited_ ABSL_GUARDED_BY(mu_) = false;  // a listing told us to wait
  // A semaphore participant that may be watched as a waiter marks its node
  // when it acquires (kConfirm sends a setData instead of an exists).
  bool mark_on_acquire_ ABSL_GUARDED_BY(mu_) = false;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  // Whether the last listing showed a revocation request for our node.
  bool request_seen_ ABSL_GUARDED_BY(mu_) = false;
};

// Test seam: `hook` runs inside every QueueEntry::Start() just before the
// attempt is recorded (no lock held), so a test can deliver a session event
// in that window. Null: none (the default).
void SetQueueStartHookForTesting(std::function<void()> hook);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_QUEUE_ENTRY_H_
