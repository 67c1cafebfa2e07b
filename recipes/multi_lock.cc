#include "zkrecipes/multi_lock.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "recipes/joint_create.h"
#include "recipes/lock_core.h"
#include "src/await_until.h"
#include "src/macros.h"
#include "src/session_access.h"
#include "src/zk_status.h"

namespace zkr {
namespace {

absl::string_view ModeName(LockMode mode) { return mode == LockMode::kRead ? "read" : "write"; }

// The worst of the parts' states: kLost, else kSuspended, else kHeld
// (kReleased for no parts, or once any is released).
LockState Combine(const std::vector<LockState>& states) {
  auto any = [&](LockState s) { return std::count(states.begin(), states.end(), s) > 0; };
  if (states.empty() || any(LockState::kReleased)) return LockState::kReleased;
  if (any(LockState::kLost)) return LockState::kLost;
  if (any(LockState::kSuspended)) return LockState::kSuspended;
  return LockState::kHeld;
}

}  // namespace

namespace internal {

// A multi-lock's parts and what its acquisitions, its parts' state callbacks
// (dispatcher thread) and its guards share. The MultiLock owns it; a running
// Take and every guard keep it alive, so destroying the MultiLock while
// another thread acquires frees nothing that thread uses.
class MultiLockCore : public std::enable_shared_from_this<MultiLockCore> {
 public:
  static absl::StatusOr<std::shared_ptr<MultiLockCore>> Create(Session& session,
                                                               std::vector<LockPart> parts,
                                                               const LockOptions& options);

  absl::StatusOr<MultiLockGuard> Take(absl::Duration timeout, bool try_only)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Cancel() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (taking_) cancelled_ = true;  // the Take wakes and cancels its part itself
  }
  // The MultiLock is going: ends a Take in progress, refuses new ones.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
  }
  // Part `part`'s hold is now `state` (dispatcher thread, through that
  // part's callback gate: never once the hold is released).
  void Update(size_t part, LockState state) ABSL_LOCKS_EXCLUDED(mu_);
  // A guard let go of its grant: nothing more is reported for it.
  void Ungrant() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    --grants_;
  }
  const std::vector<LockPart>& parts() const { return parts_; }

 private:
  MultiLockCore(Session& session, std::vector<LockPart> parts,
                std::function<void(LockState)> listener)
      : session_(session),
        parts_(std::move(parts)),
        listener_(std::move(listener)),
        slots_(parts_.size()),
        states_(parts_.size(), LockState::kReleased) {}

 public:
  ~MultiLockCore() {
    for (const std::shared_ptr<LockCore>& lock : locks_) lock->Shutdown();
  }

 private:

  // "multi-lock part /a (write)", for messages.
  std::string Name(size_t i) const {
    return absl::StrCat("multi-lock part ", parts_[i].path, " (", ModeName(parts_[i].mode), ")");
  }
  // Part `i` if it is free now.
  absl::StatusOr<LockGuard> TryPart(size_t i);
  // Every part, pipelined (see "Taking the parts together" below), waiting
  // until the monotonic `end`; Cancel(), Shutdown() or a part lost
  // meanwhile end the wait (with their reason). On success `taken` holds
  // every part in canonical order; on failure nothing is held.
  absl::Status TakeTogether(absl::Duration end, std::vector<LockGuard>& taken)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Starts an attempt on part `i` (its outcome: PartDone; a wait: PartWaits),
  // its create into `joint` (recipes/joint_create.h) if that takes it (and
  // is not null).
  void StartPart(size_t i, const std::shared_ptr<JointCreate>& joint) ABSL_LOCKS_EXCLUDED(mu_);
  // Starts parts [from, to) with their creates in one transaction.
  void StartParts(size_t from, size_t to) ABSL_LOCKS_EXCLUDED(mu_);
  void PartDone(size_t i, uint64_t attempt, absl::StatusOr<LockGuard> result)
      ABSL_LOCKS_EXCLUDED(mu_);
  void PartWaits(size_t i, uint64_t attempt) ABSL_LOCKS_EXCLUDED(mu_);
  // Every part taken: OK once each is HELD (and from then on changes are
  // reported); waits until `end` while one is suspended (unless `try_only`).
  absl::Status Confirm(const std::vector<LockGuard>& taken, absl::Duration end, bool try_only)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool StoppingLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return shut_down_ || cancelled_ || lost_.has_value();
  }
  // Why the Take in progress must stop; OK if it need not.
  absl::Status StopReasonLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status LostStatus(size_t i) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits until `cond` holds or the monotonic `end` passes; whether it holds.
  bool AwaitUntil(const absl::Condition& cond, absl::Duration end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Session& session_;
  const std::vector<LockPart> parts_;              // canonical order
  const std::function<void(LockState)> listener_;  // the user's on_state_change
  std::vector<std::shared_ptr<LockCore>> locks_;  // one per part; fixed by Create
  mutable absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  bool taking_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;     // the session's as the Take began
  std::optional<size_t> lost_ ABSL_GUARDED_BY(mu_);  // a part lost during the Take
  // Each part's attempt in flight (0: none), whether it was told to wait,
  // and its outcome until the Take picks it up.
  struct Slot {
    uint64_t attempt = 0;
    bool waits = false;
    std::optional<absl::StatusOr<LockGuard>> result;
  };
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
  uint64_t attempts_ ABSL_GUARDED_BY(mu_) = 0;  // attempts started (their ids)
  // The last joint create sent, and whether one was refused for want of
  // permission to write a directory (then the parts no longer try one).
  std::shared_ptr<JointCreate> last_joint_ ABSL_GUARDED_BY(mu_);
  bool joint_refused_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t events_ ABSL_GUARDED_BY(mu_) = 0;    // outcomes and waits heard
  uint64_t notices_ ABSL_GUARDED_BY(mu_) = 0;        // part state changes heard
  std::vector<LockState> states_ ABSL_GUARDED_BY(mu_);  // each part's, as last heard
  LockState reported_ ABSL_GUARDED_BY(mu_) = LockState::kReleased;
  int grants_ ABSL_GUARDED_BY(mu_) = 0;  // guards not yet released: report while > 0
};

absl::StatusOr<std::shared_ptr<MultiLockCore>> MultiLockCore::Create(
    Session& session, std::vector<LockPart> parts, const LockOptions& options) {
  if (parts.empty()) return absl::InvalidArgumentError("multi-lock: no parts given");
  if (options.dialect != Dialect::kZkr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "multi-lock: dialect ", DialectName(options.dialect),
        " is for single locks and elections only; a multi-lock speaks zkr's names"));
  }
  for (const LockPart& part : parts) {
    if (part.mode != LockMode::kRead && part.mode != LockMode::kWrite) {
      return absl::InvalidArgumentError(absl::StrCat("multi-lock: path ", part.path, " has mode ",
                                                     static_cast<int>(part.mode),
                                                     ", neither kRead nor kWrite"));
    }
  }
  std::sort(parts.begin(), parts.end(),
            [](const LockPart& a, const LockPart& b) { return a.path < b.path; });
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].path == parts[i - 1].path) {
      return absl::InvalidArgumentError(
          absl::StrCat("multi-lock: path ", parts[i].path, " is given twice"));
    }
  }
  std::shared_ptr<MultiLockCore> core(
      new MultiLockCore(session, std::move(parts), options.on_state_change));
  // Weak: a part's hold (in a guard) must not keep the core, which owns
  // the part's lock object, alive in a cycle; a MultiLockGuard keeps it.
  std::weak_ptr<MultiLockCore> weak = core;
  for (size_t i = 0; i < core->parts_.size(); ++i) {  // each path validated here
    LockOptions part_options = options;
    part_options.on_state_change = [weak, i](LockState state) {
      if (std::shared_ptr<MultiLockCore> alive = weak.lock()) alive->Update(i, state);
    };
    ZKR_ASSIGN_OR_RETURN(std::shared_ptr<LockCore> lock,
                         LockCore::Create(session, core->parts_[i].path, part_options));
    core->locks_.push_back(std::move(lock));
  }
  return core;
}

absl::StatusOr<MultiLockGuard> MultiLockCore::Take(absl::Duration timeout, bool try_only) {
  SessionCore& session = *CoreOf(session_);
  if (!try_only && session.dispatcher().OnDispatcherThread()) {
    return absl::FailedPreconditionError(
        "multi-lock: Acquire with a timeout called on the session's dispatcher thread (inside "
        "a recipe callback), where the parts' state changes are delivered; call it from another "
        "thread, or use TryAcquire");
  }
  // One deadline for the set, on the session's monotonic clock (Duration
  // arithmetic saturates: a huge or infinite timeout stays so).
  const absl::Duration end = session.clock().Monotonic() + timeout;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return absl::CancelledError("multi-lock: the MultiLock is gone");
    if (taking_) {
      return absl::FailedPreconditionError(
          "multi-lock: another acquisition through this object is in progress");
    }
    taking_ = true;
    cancelled_ = false;
    lost_.reset();
    generation_ = session.generation();
  }
  std::vector<LockGuard> taken;
  absl::Status failed;
  if (try_only) {
    // A try reads each queue before it creates anything (and creates
    // nothing once one part is taken elsewhere): one part after another.
    for (size_t i = 0; i < parts_.size() && failed.ok(); ++i) {
      absl::StatusOr<LockGuard> guard = TryPart(i);
      if (!guard.ok()) {
        failed = guard.status();
        break;
      }
      taken.push_back(*std::move(guard));
      absl::MutexLock lock(&mu_);
      failed = StopReasonLocked();  // Cancel(), or a part taken before lost meanwhile
    }
  } else {
    failed = TakeTogether(end, taken);
  }
  if (failed.ok()) failed = Confirm(taken, end, try_only);
  {
    absl::MutexLock lock(&mu_);
    taking_ = false;
  }
  if (!failed.ok()) {
    // Give back what was taken, all at once, before answering.
    (void)LockCore::ReleaseTogether(taken);
    return failed;
  }
  return MultiLockGuard(parts_, std::move(taken), shared_from_this());
}

absl::StatusOr<LockGuard> MultiLockCore::TryPart(size_t i) {
  LockCore& lock = *locks_[i];
  absl::StatusOr<LockGuard> guard =
      lock.Acquire(parts_[i].mode == LockMode::kRead ? NodeMode::kRead : NodeMode::kWrite,
                   absl::InfiniteDuration(), /*try_only=*/true);
  if (guard.ok()) return guard;
  return Restate(guard.status(), absl::StrCat(Name(i), ": ", guard.status().message()));
}

// ---- Taking the parts together ----------------------------------------------
//
// The parts P1 < ... < Pk (canonical order, by path) are all started at once:
// each part's create and listing is one pipelined round trip, and the k
// parts' requests go out together on the one session, so a free set costs
// about one round trip, not k. Parts granted at once are kept. As soon as
// some part Pj must WAIT (its first listing queues it behind a holder: the
// engine's on_wait), every part after Pj is given back — granted ones
// released, waiting or in-flight ones abandoned (the engine's abandon
// deletes their nodes with the guaranteed delete) — and only Pj (and the
// parts before it still in flight) are waited for. Once P1..Pj are all held
// and nothing after Pj is still in flight, Pj+1..Pk are started again the
// same way.
//
// Why two multi-locks (or a multi-lock and single locks) cannot deadlock:
//  * A multi-lock X keeps a part after a waiting part only until its own
//    Take thread has given it back: it releases or abandons those parts as
//    soon as it hears the wait, without waiting for anything but the
//    deletes' replies (its own session; the guaranteed delete, which no
//    other participant can hold up). So such holds are transient: they end
//    whatever any other participant does.
//  * Apart from transient holds, whenever X waits for a part W it holds or
//    queues only on parts before W (parts in flight before W are granted or
//    told to wait within their round trip; one told to wait becomes the new
//    W, and W and everything after it are given back).
//  * Suppose a cycle of indefinite waits: X1 waits for W1, which is held by
//    (or queued ahead of X1 by) X2, which waits for W2, ... , Xn waits for Wn,
//    held by X1. A participant ahead of X1 in W1's queue that itself waits in
//    W1's queue leads, along that queue, to W1's holder; so each Xi+1 holds
//    Wi. Xi+1 holds Wi while waiting for Wi+1 only if Wi < Wi+1 (its parts
//    after Wi+1 being given back, transiently). So W1 < W2 < ... < Wn < W1:
//    impossible. A single lock is a multi-lock of one part.
//  * tests/model/multi_lock.pml checks this take (exclusion, no deadlock) for
//    overlapping sets of three locks and a single lock beside them, and
//    rejects keeping the later parts while one waits.
//  * Every wait is still decided by the canonical order: a multi-lock waits
//    for Pj only behind Pj's queue, as a single lock would, and a waiting
//    part keeps its place (it is not abandoned) — only the later parts are.
absl::Status MultiLockCore::TakeTogether(absl::Duration end, std::vector<LockGuard>& taken) {
  const size_t k = parts_.size();
  enum class Have { kNone, kInFlight, kHeld };
  std::vector<Have> have(k, Have::kNone);
  std::vector<LockGuard> guards(k);
  size_t limit = k;  // the parts wanted now: [0, limit); those after are given back
  uint64_t seen = 0;  // events_ handled
  {
    absl::MutexLock lock(&mu_);
    seen = events_;
  }
  StartParts(0, k);
  std::fill(have.begin(), have.end(), Have::kInFlight);
  absl::Status failed;
  for (;;) {
    // What came in: outcomes (picked up) and waits.
    std::vector<std::optional<absl::StatusOr<LockGuard>>> results(k);
    std::vector<bool> waits(k, false);
    {
      absl::MutexLock lock(&mu_);
      seen = events_;
      for (size_t i = 0; i < k; ++i) {
        if (have[i] != Have::kInFlight) continue;
        waits[i] = slots_[i].waits;
        if (slots_[i].result.has_value()) {
          results[i] = std::move(slots_[i].result);
          slots_[i] = Slot();
        }
      }
    }
    std::vector<LockGuard> give_back;
    for (size_t i = 0; i < k; ++i) {
      if (!results[i].has_value()) continue;
      have[i] = Have::kNone;
      absl::StatusOr<LockGuard>& result = *results[i];
      if (result.ok()) {
        if (i < limit) {
          guards[i] = *std::move(result);
          have[i] = Have::kHeld;
        } else {
          give_back.push_back(*std::move(result));  // won just as we gave it up
        }
      } else if (i < limit) {
        // A part wanted failed (an error, the session lost). One given back
        // (i >= limit) ends as we cancelled it, or with a failure that no
        // longer matters: it is asked for again, and fails again if it must.
        if (failed.ok()) {
          failed = Restate(result.status(),
                           absl::StrCat(Name(i), ": ", result.status().message()));
        }
      }
    }
    if (failed.ok()) {
      // The first part told to wait: everything after it goes back.
      for (size_t j = 0; j + 1 < limit; ++j) {
        if (have[j] != Have::kInFlight || !waits[j]) continue;
        for (size_t m = j + 1; m < limit; ++m) {
          if (have[m] == Have::kHeld) {
            give_back.push_back(std::move(guards[m]));
            have[m] = Have::kNone;
          } else if (have[m] == Have::kInFlight) {
            locks_[m]->Cancel();  // its outcome (Cancelled, or just won) comes
          }
        }
        limit = j + 1;
        break;
      }
    }
    if (!give_back.empty()) (void)LockCore::ReleaseTogether(give_back);
    if (failed.ok()) {
      absl::MutexLock lock(&mu_);
      failed = StopReasonLocked();  // Cancel(), Shutdown(), a part lost
    }
    if (!failed.ok()) break;
    const bool wanted_held = std::all_of(have.begin(), have.begin() + limit,
                                         [](Have h) { return h == Have::kHeld; });
    if (wanted_held) {
      if (limit == k) break;  // every part held
      if (std::none_of(have.begin() + limit, have.end(),
                       [](Have h) { return h == Have::kInFlight; })) {
        // P1..Pj held, nothing after still in flight: the rest, together.
        StartParts(limit, k);
        std::fill(have.begin() + limit, have.end(), Have::kInFlight);
        limit = k;
        continue;
      }
    }
    absl::MutexLock lock(&mu_);
    // Woken only by what this loop acts on: a failure, or every part in
    // flight answered (granted, or told to wait) — not by each grant of a
    // set that comes in one reply (each would be a wake-up of its own).
    auto news = [this, seen, &have]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      if (StoppingLocked()) return true;
      if (events_ == seen) return false;
      bool all_answered = true;
      for (size_t i = 0; i < have.size(); ++i) {
        if (have[i] != Have::kInFlight) continue;
        const Slot& slot = slots_[i];
        if (slot.result.has_value() && !slot.result->ok()) return true;
        if (!slot.result.has_value() && !slot.waits) all_answered = false;
      }
      return all_answered;
    };
    if (!AwaitUntil(absl::Condition(&news), end)) {
      size_t first = 0;
      while (first < limit && have[first] == Have::kHeld) ++first;
      failed = absl::DeadlineExceededError(
          absl::StrCat(Name(std::min(first, k - 1)),
                       ": not acquired within the multi-lock's deadline"));
      break;
    }
  }
  if (failed.ok()) {
    taken = std::move(guards);
    return absl::OkStatus();
  }
  // Give everything back before answering: attempts in flight are
  // abandoned (their nodes deleted) and awaited; what they won is released
  // with what was held.
  std::vector<LockGuard> give_back;
  for (size_t i = 0; i < k; ++i) {
    if (have[i] == Have::kInFlight) locks_[i]->Cancel();
    if (have[i] == Have::kHeld) give_back.push_back(std::move(guards[i]));
  }
  {
    absl::MutexLock lock(&mu_);
    auto all_in = [this, &have]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (size_t i = 0; i < have.size(); ++i) {
        if (have[i] == Have::kInFlight && !slots_[i].result.has_value()) return false;
      }
      return true;
    };
    // Abandon completes each at once unless it just won (a win is told at
    // once); a failure is told once its node is gone. Bounded as a single
    // lock's Acquire: with the connection down the deletes go on in the
    // background, and the session's lease ends within one session timeout.
    mu_.AwaitWithTimeout(absl::Condition(&all_in), CoreOf(session_)->negotiated_timeout());
    for (size_t i = 0; i < k; ++i) {
      if (have[i] != Have::kInFlight) continue;
      if (slots_[i].result.has_value() && slots_[i].result->ok()) {
        give_back.push_back(**std::move(slots_[i].result));
      }
      slots_[i] = Slot();  // an outcome still to come is dropped (a failure)
    }
  }
  (void)LockCore::ReleaseTogether(give_back);
  return failed;
}

void MultiLockCore::StartParts(size_t from, size_t to) {
  // A transaction refused because the session may not write a directory
  // would be refused every time: from then on each part asks on its own.
  std::shared_ptr<JointCreate> joint;
  {
    absl::MutexLock lock(&mu_);
    if (last_joint_ != nullptr && last_joint_->RefusedForPermission()) joint_refused_ = true;
    if (!joint_refused_) joint = last_joint_ = std::make_shared<JointCreate>(CoreOf(session_));
  }
  // This thread adds the creates and flushes them straight after: nothing
  // gives a part up in between (JointCreate's window).
  for (size_t i = from; i < to; ++i) StartPart(i, joint);
  if (joint != nullptr) joint->Flush();
}

void MultiLockCore::StartPart(size_t i, const std::shared_ptr<JointCreate>& joint) {
  uint64_t attempt;
  {
    absl::MutexLock lock(&mu_);
    attempt = ++attempts_;
    slots_[i] = Slot();
    slots_[i].attempt = attempt;
  }
  // The outcome and the wait come on the completion thread (or inline in
  // Cancel()'s caller) — a failure (an abandon included) once the
  // attempt's node is gone, so nothing of ours is left under a part given
  // back; the core stays alive for the outcome (every attempt is awaited).
  auto done = [self = shared_from_this(), i, attempt](absl::StatusOr<LockGuard> result) {
    self->PartDone(i, attempt, std::move(result));
  };
  std::weak_ptr<MultiLockCore> weak = weak_from_this();
  auto waits = [weak, i, attempt] {
    if (std::shared_ptr<MultiLockCore> self = weak.lock()) self->PartWaits(i, attempt);
  };
  LockCore::AsyncHooks hooks;
  hooks.on_wait = std::move(waits);
  hooks.failure_when_cleaned = true;
  hooks.done_inline = true;  // PartDone only records it: no dispatcher hop per part
  hooks.joint_create = joint;
  locks_[i]->AcquireAsync(parts_[i].mode == LockMode::kRead ? NodeMode::kRead : NodeMode::kWrite,
                          std::move(done), /*weight=*/1, std::move(hooks));
}

void MultiLockCore::PartDone(size_t i, uint64_t attempt, absl::StatusOr<LockGuard> result) {
  {
    absl::MutexLock lock(&mu_);
    if (slots_[i].attempt == attempt && !slots_[i].result.has_value()) {
      slots_[i].result = std::move(result);
      ++events_;
      return;
    }
  }
  // No longer awaited (the failure path gave up waiting for it, bounded):
  // a grant is given back without waiting — this may be the completion
  // thread, where a guard's blocking release would wait for itself.
  if (result.ok()) result->ReleaseAsync([](absl::Status) {});
}

void MultiLockCore::PartWaits(size_t i, uint64_t attempt) {
  absl::MutexLock lock(&mu_);
  if (slots_[i].attempt != attempt || slots_[i].waits) return;
  slots_[i].waits = true;
  ++events_;
}

absl::Status MultiLockCore::Confirm(const std::vector<LockGuard>& taken, absl::Duration end,
                                    bool try_only) {
  absl::MutexLock lock(&mu_);
  for (;;) {
    ZKR_RETURN_IF_ERROR(StopReasonLocked());
    const uint64_t heard = notices_;
    std::optional<size_t> suspended;
    for (size_t i = 0; i < taken.size(); ++i) {
      const LockState state = taken[i].state();
      if (state == LockState::kLost) return LostStatus(i);
      if (state != LockState::kHeld && !suspended.has_value()) suspended = i;
    }
    if (!suspended.has_value()) {
      // Granted. Changes are reported from here on, from what was just read
      // (a change after that read is heard after this, under mu_).
      std::fill(states_.begin(), states_.end(), LockState::kHeld);
      reported_ = LockState::kHeld;
      ++grants_;
      return absl::OkStatus();
    }
    if (try_only) {
      return absl::UnavailableError(absl::StrCat(
          Name(*suspended),
          ": suspended (connection lost) once every part was taken; every part was given back"));
    }
    // Every state change of a part is heard (Update): wait for the next.
    auto news = [this, heard]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return notices_ != heard || StoppingLocked();
    };
    if (!AwaitUntil(absl::Condition(&news), end)) {
      return absl::DeadlineExceededError(absl::StrCat(
          Name(*suspended),
          ": still suspended (connection lost) at the multi-lock's deadline; every part was "
          "given back"));
    }
  }
}

void MultiLockCore::Update(size_t part, LockState state) {
  LockState combined;
  {
    absl::MutexLock lock(&mu_);
    ++notices_;
    states_[part] = state;
    if (state == LockState::kLost && taking_ && !lost_.has_value()) lost_ = part;
    if (grants_ == 0) return;  // acquiring, or released: nothing is granted to report on
    combined = Combine(states_);
    if (combined == reported_) return;
    reported_ = combined;
  }
  if (listener_) listener_(combined);
}

absl::Status MultiLockCore::StopReasonLocked() const {
  if (shut_down_) {
    return absl::CancelledError(
        "multi-lock: the MultiLock was destroyed during the acquisition; every part was given "
        "back");
  }
  if (cancelled_) return absl::CancelledError("multi-lock: cancelled; every part was given back");
  if (lost_.has_value()) return LostStatus(*lost_);
  return absl::OkStatus();
}

absl::Status MultiLockCore::LostStatus(size_t i) const {
  // Close() ends the held parts (kLost) as it cancels the waiting one:
  // whichever the acquisition hears first, the session was closed, not lost.
  if (CoreOf(session_)->closed()) {
    return absl::CancelledError(absl::StrCat(
        Name(i), ": the session was closed while the multi-lock was taking its parts; every "
                 "part was given back"));
  }
  const std::string message = absl::StrCat(
      Name(i),
      ": lost while the multi-lock was taking its parts (its node was deleted, or the session "
      "ended); every part was given back");
  if (CoreOf(session_)->GenerationOver(generation_)) {
    return Restate(SessionLostStatus("multi-lock part", parts_[i].path), message);
  }
  return absl::AbortedError(message);
}

bool MultiLockCore::AwaitUntil(const absl::Condition& cond, absl::Duration end) {
  return internal::AwaitUntil(mu_, cond, end, CoreOf(session_)->clock());
}

}  // namespace internal

// ---- MultiLockGuard ---------------------------------------------------------

MultiLockGuard::MultiLockGuard(std::vector<LockPart> parts, std::vector<LockGuard> guards,
                               std::shared_ptr<internal::MultiLockCore> core)
    : parts_(std::move(parts)), guards_(std::move(guards)), core_(std::move(core)) {}

MultiLockGuard& MultiLockGuard::operator=(MultiLockGuard&& other) noexcept {
  if (this != &other) {
    if (!guards_.empty()) (void)Release();
    parts_ = std::move(other.parts_);
    guards_ = std::move(other.guards_);
    core_ = std::move(other.core_);
  }
  return *this;
}

MultiLockGuard::~MultiLockGuard() {
  if (!guards_.empty()) (void)Release();
}

LockState MultiLockGuard::state() const {
  std::vector<LockState> states;
  for (const LockGuard& guard : guards_) states.push_back(guard.state());
  return Combine(states);
}

int64_t MultiLockGuard::fencing_token(const std::string& path) const {
  const LockGuard* guard = part(path);
  return guard == nullptr ? 0 : guard->fencing_token();
}

const LockGuard* MultiLockGuard::part(const std::string& path) const {
  for (size_t i = 0; i < parts_.size() && i < guards_.size(); ++i) {
    if (parts_[i].path == path) return &guards_[i];
  }
  return nullptr;
}

absl::Time MultiLockGuard::valid_until() const {
  absl::Time earliest = absl::InfiniteFuture();
  for (const LockGuard& guard : guards_) earliest = std::min(earliest, guard.valid_until());
  return guards_.empty() ? absl::InfinitePast() : earliest;
}

absl::Status MultiLockGuard::Release() {
  if (guards_.empty()) return absl::FailedPreconditionError("release multi-lock: not held");
  // No reports for this grant from now on (one running is waited for as
  // each part's release closes that part's callback gate).
  if (core_ != nullptr) core_->Ungrant();
  core_.reset();
  // Every part's delete at once: one round trip for the set.
  absl::Status first = internal::LockCore::ReleaseTogether(guards_);
  guards_.clear();
  return first;
}

// ---- MultiLock --------------------------------------------------------------

MultiLock::MultiLock(std::shared_ptr<internal::MultiLockCore> core) : core_(std::move(core)) {}

MultiLock::~MultiLock() { core_->Shutdown(); }

absl::StatusOr<std::unique_ptr<MultiLock>> MultiLock::Create(Session& session,
                                                             std::vector<LockPart> parts,
                                                             LockOptions options) {
  ZKR_ASSIGN_OR_RETURN(std::shared_ptr<internal::MultiLockCore> core,
                       internal::MultiLockCore::Create(session, std::move(parts), options));
  return std::unique_ptr<MultiLock>(new MultiLock(std::move(core)));
}

absl::StatusOr<MultiLockGuard> MultiLock::Acquire(absl::Duration timeout) {
  // Our own reference: *this may be destroyed while we wait (that cancels us).
  const std::shared_ptr<internal::MultiLockCore> core = core_;
  return core->Take(timeout, /*try_only=*/timeout <= absl::ZeroDuration());
}

absl::StatusOr<MultiLockGuard> MultiLock::TryAcquire() {
  const std::shared_ptr<internal::MultiLockCore> core = core_;
  return core->Take(absl::ZeroDuration(), /*try_only=*/true);
}

void MultiLock::Cancel() { core_->Cancel(); }

const std::vector<LockPart>& MultiLock::parts() const { return core_->parts(); }

}  // namespace zkr
