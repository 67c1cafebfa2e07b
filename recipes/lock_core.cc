#include "recipes/lock_core.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "recipes/lock_data.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/process_identity.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/status.h"
#include "src/multi_outcome.h"
#include "src/session_access.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {
namespace {

// What an acquisition is called in messages: "write lock /a", "semaphore /s".
std::string Subject(NodeMode mode, const std::string& path) {
  if (mode == NodeMode::kLease) return absl::StrCat("semaphore ", path);
  return absl::StrCat(LockModeName(mode), " lock ", path);
}

}  // namespace

// ---- LockCore -----------------------------------------------------------

namespace {

// What every attempt through a lock object of these options has in common.
std::shared_ptr<const QueueEntry::Settings> AttemptSettings(std::string path,
                                                            const LockOptions& options,
                                                            int leases, const NodeScheme& scheme) {
  auto settings = std::make_shared<QueueEntry::Settings>();
  settings->dir = std::move(path);
  settings->leases = leases;
  // A peer reads a node's data as its owner's identifier: the purpose (in
  // ours, with the pid, mode and time of the attempt).
  settings->data = options.purpose;
  settings->data_is_purpose = scheme.dialect == Dialect::kZkr;
  settings->scheme = scheme;
  // A peer may change a node's data (Curator's revocation): a change of the
  // node we wait on then only makes us list again.
  settings->mark_release = scheme.dialect == Dialect::kZkr;
  settings->acl = options.acl;
  settings->watch_own_node = options.watch_own_node;
  settings->own_node_watch_delay = options.own_node_watch_delay;
  settings->watch_revoke = static_cast<bool>(options.on_revoke_request);
  settings->revocable = scheme.dialect == Dialect::kZkr;
  return settings;
}

}  // namespace

LockCore::LockCore(Session& session, std::string path, LockOptions options, int leases,
                   NodeScheme scheme)
    : session_(session),
      settings_(AttemptSettings(std::move(path), options, leases, scheme)),
      on_state_change_(std::move(options.on_state_change)),
      on_revoke_request_(std::move(options.on_revoke_request)) {}

absl::StatusOr<std::shared_ptr<LockCore>> LockCore::Create(Session& session, std::string path,
                                                           LockOptions options, int leases,
                                                           QueueKind kind) {
  ZKR_RETURN_IF_ERROR(ValidatePath(path));
  if (path == "/") return absl::InvalidArgumentError("invalid lock path \"/\": use a directory");
  if (options.dialect != Dialect::kZkr) {
    const absl::string_view dialect = DialectName(options.dialect);
    if (leases > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "semaphore ", path, ": dialect ", dialect, " is for locks and elections only"));
    }
    if (options.on_revoke_request) {
      return absl::InvalidArgumentError(absl::StrCat(
          "lock ", path, ": dialect ", dialect,
          " has no revocation requests (its peers would count them as contenders); "
          "leave on_revoke_request unset"));
    }
  }
  // The purpose is a line of our node's data (recipes/lock_data.h): a
  // newline would start a field of its own ("mode=read" in a writer's).
  if (absl::StrContains(options.purpose, '\n')) {
    return absl::InvalidArgumentError(absl::StrCat("invalid purpose \"",
                                                   absl::CEscape(options.purpose), "\" for lock ",
                                                   path, ": one line, no newline"));
  }
  // The purpose rides in every node (QueueEntry::OwnNodeData): refused now
  // if it cannot fit.
  ZKR_RETURN_IF_ERROR(CoreOf(session)->CheckRequestSize(
      "purpose for lock", path,
      LockNodeData(ProcessId(), NodeMode::kWrite, options.purpose, absl::ToUnixMillis(absl::Now()))
              .size() +
          CoreOf(session)->OpBytes(path, &options.acl)));
  const NodeScheme scheme = SchemeFor(options.dialect, kind);
  return std::shared_ptr<LockCore>(
      new LockCore(session, std::move(path), std::move(options), leases, scheme));
}

std::optional<absl::StatusOr<LockGuard>> LockCore::Reenter(NodeMode mode) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<LockHold> hold = hold_.lock();
  if (mode == NodeMode::kLease && hold != nullptr && hold->InUse()) {
    return absl::StatusOr<LockGuard>(absl::FailedPreconditionError(absl::StrCat(
        "acquire ", Subject(mode, path()),
        ": this semaphore object holds leases already (release them, or use another object)")));
  }
  if (hold != nullptr && mode != NodeMode::kLease) {
    const bool write = mode == NodeMode::kWrite;
    absl::StatusOr<bool> counted =
        hold->CountReentry(write, absl::StrCat("acquire ", Subject(mode, path())));
    if (!counted.ok()) return absl::StatusOr<LockGuard>(counted.status());
    if (*counted) return absl::StatusOr<LockGuard>(GuardOn(std::move(hold), write));
  }
  if (pending_ != nullptr) {
    return absl::StatusOr<LockGuard>(absl::FailedPreconditionError(absl::StrCat(
        "acquire ", Subject(mode, path()),
        ": another acquisition through this lock object is in progress")));
  }
  return std::nullopt;  // queue a new node
}

absl::StatusOr<std::shared_ptr<QueueEntry>> LockCore::NewEntry(NodeMode mode, bool try_only,
                                                                int weight,
                                                                std::function<void()> on_wait) {
  QueueEntry::Attempt attempt;
  attempt.mode = mode;
  attempt.weight = weight;
  attempt.requested_ms = absl::ToUnixMillis(absl::Now());
  attempt.try_only = try_only;
  attempt.on_wait = std::move(on_wait);
  std::shared_ptr<QueueEntry> entry =
      QueueEntry::Make(CoreOf(session_), settings_, std::move(attempt));
  if (on_state_change_) {
    entry->SetStateListener(Delivering(CoreOf(session_)->dispatcher(), entry->user_callbacks(),
                                       on_state_change_));
  }
  if (on_revoke_request_) {
    Dispatcher* dispatcher = &CoreOf(session_)->dispatcher();
    auto listener = on_revoke_request_;
    std::weak_ptr<QueueEntry> weak = entry;
    const std::string lock_path = path();
    std::shared_ptr<CallbackGate> gate = entry->user_callbacks();
    entry->SetRevokeListener([dispatcher, listener, weak, lock_path, gate](std::string reason) {
      auto entry = weak.lock();
      if (entry == nullptr) return;
      auto [text, grace] = internal::ParseRevokeRequestData(reason);
      RevokeRequest request{lock_path, entry->node_path(), std::move(text), grace};
      Deliver(*dispatcher, gate, [listener, request] { listener(request); });
    });
  }
  absl::MutexLock lock(&mu_);
  if (shut_down_) {
    return absl::CancelledError(
        absl::StrCat("acquire ", Subject(mode, path()), ": the lock object is gone"));
  }
  if (pending_ != nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "acquire ", Subject(mode, path()),
        ": another acquisition through this lock object is in progress"));
  }
  pending_ = entry;
  return entry;
}

absl::StatusOr<LockGuard> LockCore::Complete(const std::shared_ptr<QueueEntry>& entry,
                                             absl::Status status) {
  absl::MutexLock lock(&mu_);
  if (pending_ == entry) pending_ = nullptr;
  if (!status.ok()) return Named(entry->mode(), std::move(status));
  auto hold = std::make_shared<LockHold>(session_, path(), entry);
  hold_ = hold;
  const bool write = entry->mode() == NodeMode::kWrite;
  hold->CountFirstGuard(write);
  return GuardOn(std::move(hold), write);
}

LockGuard LockCore::GuardOn(std::shared_ptr<LockHold> hold, bool write) {
  return LockGuard(std::move(hold), write);
}

absl::Status LockCore::Named(NodeMode mode, absl::Status status) const {
  // Ours name what they acquire already; the server's name a node, a
  // session's nothing.
  const absl::string_view message = status.message();
  for (absl::string_view named : {"acquire ", "try-acquire ", "lock ", "semaphore "}) {
    if (absl::StartsWith(message, named)) return status;
  }
  return Restate(status, absl::StrCat("acquire ", Subject(mode, path()), ": ", message));
}

absl::Status LockCore::SessionClosed(NodeMode mode) const {
  return absl::FailedPreconditionError(
      absl::StrCat("acquire ", Subject(mode, path()), ": session is closed"));
}

absl::StatusOr<LockGuard> LockCore::Acquire(NodeMode mode, absl::Duration timeout,
                                            bool try_only, int weight) {
  // The lock object may be destroyed while we wait (that cancels us): the
  // core stays alive until we return.
  auto self = shared_from_this();
  if (std::optional<absl::StatusOr<LockGuard>> reentered = Reenter(mode)) {
    return std::move(*reentered);
  }
  if (CoreOf(session_)->closed()) return SessionClosed(mode);
  if (timeout <= absl::ZeroDuration()) try_only = true;  // no wait: try once
  ZKR_ASSIGN_OR_RETURN(std::shared_ptr<QueueEntry> entry, NewEntry(mode, try_only, weight));
  absl::Notification finished;
  absl::Status result;
  entry->Start([&](absl::Status status) {
    result = std::move(status);
    finished.Notify();
  });
  // A try-acquire never waits for the lock, only for the server: bounded by
  // the connect timeout while no server answers.
  const absl::Duration wait = try_only ? CoreOf(session_)->options().connect_timeout : timeout;
  if (!finished.WaitForNotificationWithTimeout(wait)) {
    entry->Abandon(try_only ? absl::UnavailableError(absl::StrCat(
                                  "try-acquire ", Subject(mode, path()),
                                  ": no ZooKeeper server answered within ",
                                  absl::FormatDuration(wait)))
                            : absl::DeadlineExceededError(absl::StrCat(
                                  "acquire ", Subject(mode, path()), ": not acquired within ",
                                  absl::FormatDuration(timeout), " (", entry->DebugString(),
                                  ")")));
    finished.WaitForNotification();  // Abandon completes it unless it just won
  }
  if (!result.ok()) {
    // Return once the attempt's node is gone, so that the caller (and anyone
    // it tells) sees the queue without it. Bounded: with the connection down,
    // the delete goes on in the background and the session's lease ends the
    // wait's reason within one session timeout.
    auto cleaned = std::make_shared<absl::Notification>();  // may outlive the wait
    entry->WhenCleaned([cleaned] { cleaned->Notify(); });
    cleaned->WaitForNotificationWithTimeout(CoreOf(session_)->negotiated_timeout());
  }
  return Complete(entry, std::move(result));
}

void LockCore::AcquireAsync(NodeMode mode, std::function<void(absl::StatusOr<LockGuard>)> done,
                            int weight, AsyncHooks hooks) {
  // Nobody to tell the outcome to: start nothing. (A grant would be
  // dropped, and its guard's release would block the thread that drops it.)
  if (!done) return;
  // Where the outcome goes: to `done` on the dispatcher thread, or inline.
  // (`done` itself is kept while the attempt waits, not a delivering
  // wrapper around it: a waiter's memory; so is what its completion keeps.)
  const bool done_inline = hooks.done_inline;
  const bool failure_when_cleaned = hooks.failure_when_cleaned;
  if (std::optional<absl::StatusOr<LockGuard>> reentered = Reenter(mode)) {
    return Tell(done_inline, done, std::move(*reentered));
  }
  if (CoreOf(session_)->closed()) return Tell(done_inline, done, SessionClosed(mode));
  absl::StatusOr<std::shared_ptr<QueueEntry>> entry =
      NewEntry(mode, false, weight, std::move(hooks.on_wait));
  if (!entry.ok()) return Tell(done_inline, done, entry.status());
  auto self = shared_from_this();
  std::shared_ptr<QueueEntry> started = *entry;
  started->Start([self, started, done = std::move(done), done_inline,
                  failure_when_cleaned](absl::Status status) {
    absl::StatusOr<LockGuard> result = self->Complete(started, std::move(status));
    if (!result.ok() && failure_when_cleaned) {
      // Told once the attempt's node is gone (a create abandoned in flight
      // is found by its unique prefix first), or its session is.
      started->WhenCleaned([self, done, done_inline, failed = result.status()] {
        self->Tell(done_inline, done, failed);
      });
      return;
    }
    self->Tell(done_inline, done, std::move(result));
  }, hooks.joint_create.get());  // its maker keeps it until it is flushed
}

void LockCore::Tell(bool done_inline, const std::function<void(absl::StatusOr<LockGuard>)>& done,
                    absl::StatusOr<LockGuard> result) {
  if (done_inline) return done(std::move(result));
  DeliverCall(CoreOf(session_)->dispatcher(), /*gate=*/nullptr, done, std::move(result));
}

absl::Status LockCore::ReleaseTogether(std::vector<LockGuard>& guards) {
  struct Outcome {
    absl::Mutex mu;
    size_t left ABSL_GUARDED_BY(mu) = 0;
    absl::Status first ABSL_GUARDED_BY(mu);
  };
  auto outcome = std::make_shared<Outcome>();  // the replies may outlive a bounded wait
  std::vector<std::pair<std::shared_ptr<LockHold>, bool>> holds;
  absl::Status refused;
  for (LockGuard& guard : guards) {
    if (guard.hold_ == nullptr) {
      if (refused.ok()) {
        refused = absl::FailedPreconditionError(
            "release: this guard holds nothing (already released)");
      }
      continue;
    }
    holds.emplace_back(std::move(guard.hold_), guard.write_);
    guard.hold_ = nullptr;
  }
  {
    absl::MutexLock lock(&outcome->mu);
    outcome->left = holds.size();
  }
  // Every release goes out in one transaction (QueueEntry::ReleaseJointly):
  // one request and one round trip for all.
  std::vector<QueueEntry::PendingRelease> pending;
  for (auto& [hold, write] : holds) {
    std::optional<QueueEntry::PendingRelease> one =
        hold->StartReleaseOne(write, [outcome](absl::Status status) {
          absl::MutexLock lock(&outcome->mu);
          if (outcome->first.ok() && !status.ok()) outcome->first = std::move(status);
          --outcome->left;
        });
    if (one.has_value()) pending.push_back(*std::move(one));
  }
  QueueEntry::ReleaseJointly(std::move(pending));
  absl::MutexLock lock(&outcome->mu);
  auto all_done = [&outcome]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(outcome->mu) {
    return outcome->left == 0;
  };
  outcome->mu.Await(absl::Condition(&all_done));
  return outcome->first.ok() ? refused : outcome->first;
}

void LockCore::FailAsync(std::function<void(absl::StatusOr<LockGuard>)> done,
                         absl::Status status) {
  if (!done) return;  // nobody to tell (AcquireAsync)
  Tell(/*done_inline=*/false, done, std::move(status));
}

void LockCore::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
  }
  Cancel();
}

void LockCore::Cancel() {
  std::shared_ptr<QueueEntry> pending;
  {
    absl::MutexLock lock(&mu_);
    pending = pending_;
  }
  if (pending != nullptr) {
    // Where the attempt was: a diagnosis when a caller gives up on a wait.
    pending->Abandon(absl::CancelledError(
        absl::StrCat("acquire ", Subject(pending->mode(), path()), ": cancelled (",
                     pending->DebugString(), ")")));
  }
}

std::future<absl::StatusOr<LockGuard>> AcquireAsFuture(LockCore& core, NodeMode mode,
                                                       int weight) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<LockGuard>>>();
  std::future<absl::StatusOr<LockGuard>> future = promise->get_future();
  core.AcquireAsync(
      mode, [promise](absl::StatusOr<LockGuard> result) { promise->set_value(std::move(result)); },
      weight);
  return future;
}

}  // namespace internal
}  // namespace zkr
