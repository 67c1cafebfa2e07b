// QueueEntry's step machine (recipes/queue_entry.h): each step's request
// (Send), the one reply path (OnReply) and where a final reply leads (Next).
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "recipes/queue_decision.h"
#include "recipes/queue_entry.h"
#include "src/paths.h"
#include "src/retry.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {

uint64_t QueueEntry::EnterLocked(Step step) {
  MoveLocked(step);
  if (step == Step::kCreate) participant_.CreateEntered();
  return ++epoch_;
}

void QueueEntry::GoTo(Step step) {
  uint64_t epoch;
  WatchIds previous;  // the watches of the last kWatch, if not fired
  {
    absl::MutexLock lock(&mu_);
    if (abandoned_ || !Acquiring(step_)) return;  // gave up, or done
    epoch = EnterLocked(step);
    previous.swap(blocker_watches_);
  }
  // The next step's request first, the removals after it: the server takes
  // a session's requests in order, and a semaphore's first waiter has a
  // watch on every holder but the one that left.
  Send(step, epoch);
  CancelWatches(std::move(previous));
}

void QueueEntry::Send(Step step, uint64_t epoch, JointCreate* joint) {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) {
    if (step == Step::kCreate) {
      bool clean;
      {
        absl::MutexLock lock(&mu_);  // no create was sent
        clean = participant_.CreateDropped();
      }
      if (clean) MarkCleaned();
    }
    return Finish(SessionLostStatus(Noun(), dir()));
  }
  auto self = shared_from_this();
  // A grant's basis: when the request that decided it was sent.
  const absl::Duration sent_at = listens_ ? core_->clock().Monotonic() : absl::ZeroDuration();
  auto reply = [self, epoch, sent_at](Reply r) {
    r.basis = self->BasisOf(sent_at);
    self->OnReply(epoch, std::move(r));
  };
  auto listing = [reply](absl::StatusOr<ChildList> children) {
    reply(Reply::Listing(std::move(children)));
  };
  // The participant's create steps: their reply is the participant's.
  auto participant_reply = [reply](Participant::Reply r) {
    Reply full;
    static_cast<Participant::Reply&>(full) = std::move(r);
    reply(std::move(full));
  };
  const std::vector<Acl>& acl = config().acl.empty() ? core_->default_acl() : config().acl;
  switch (step) {
    case Step::kPeek:
    case Step::kList:
      client->GetChildren(dir(), nullptr, listing);
      return;
    case Step::kCreateDirectory:
    case Step::kRecover:
    case Step::kReadToken:
      participant_.Send(*client, *CreateStepOf(step), acl, participant_reply);
      return;
    case Step::kCreate: {
      bool joined = false;
      Participant::ReplyFn created = participant_reply;
      if (joint != nullptr) {
        // Made by the transaction (a count of at least our node): listed
        // after it. A create sent alone has its listing right behind it.
        created = [self, epoch, sent_at, participant_reply](Participant::Reply r) {
          if (r.status.ok() && r.directory_children > 0) {
            self->ListAfterJointCreate(epoch, sent_at, r);
          }
          participant_reply(std::move(r));
        };
      }
      const bool sent = participant_.SendCreate(
          core_, generation(), *client, CreateData(), acl, std::move(created),
          [self] { self->MarkCleaned(); }, joint, &joined);
      if (!sent || joined) return;  // given up: nothing to list; joined: listed after it
      return SendListingBehindCreate(*client, epoch, sent_at);
    }
    case Step::kCheckRevoke:
      client->Exists(RevokeRequestPath(node_path()), nullptr, [reply](absl::StatusOr<Stat> stat) {
        Reply r = Reply::Of(stat.status());
        if (stat.ok()) r.stat = *stat;
        reply(std::move(r));
      });
      return;
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
        mark = mark_on_acquire_;
        if (mark) data = CreateData();
      }
      // The mark: a new version of our node (same data) wakes a semaphore
      // waiter behind us; its reply confirms our node as an exists would.
      if (mark) return client->Set(node_path(), data, -1, stat_reply);
      client->Exists(node_path(), nullptr, stat_reply);
      return;
    }
    case Step::kWatch: {
      absl::InlinedVector<std::string, 1> blockers;
      bool marks_count;
      {
        absl::MutexLock lock(&mu_);
        blockers = blockers_;
        marks_count = blocker_marks_count_;
      }
      // Each fired watch, or the first reply that finds a blocker gone,
      // moves us on.
      std::weak_ptr<QueueEntry> weak = weak_from_this();
      auto fired = [weak, epoch, sent_at](size_t index) -> ZkClient::WatchFn {
        return [weak, epoch, index, sent_at](const WatchEvent& event) {
          auto self = weak.lock();
          if (self == nullptr) return;
          Reply r = Reply::WatchFired(event.type);
          r.blocker = index;
          r.basis = self->BasisOf(sent_at);
          self->OnReply(epoch, std::move(r));
        };
      };
      auto keep = [this, epoch, &client](uintptr_t watch) {
        bool kept;
        {
          absl::MutexLock lock(&mu_);
          kept = epoch == epoch_;
          if (kept) blocker_watches_.push_back(watch);
        }
        if (!kept) client->CancelWatch(watch);  // moved on (or gave up) while we set it
      };
      size_t blocker_bytes = 0;
      for (const std::string& blocker : blockers) {
        blocker_bytes += core_->WatchedPathBytes(PathOf(blocker).size());
      }
      if (!watch_reservation_.Cover(OwnWatchBytes() + blocker_bytes, WatchPurpose()).ok()) {
        // The blockers' paths do not fit the session's watch budget (longer
        // names than ours reserved for, or a semaphore's many holders): one
        // child watch on the directory instead, whose path is shorter than
        // the one reserved at Start(). Every node that goes is seen (so
        // every release that lets us in), at the cost of a listing on every
        // join and leave in the directory while we wait.
        keep(client->GetChildren(
            dir(), fired(0),
            [reply, blockers](absl::StatusOr<ChildList> children) {
              Reply r = Reply::Of(children.status());
              for (size_t index = 0; children.ok() && index < blockers.size(); ++index) {
                if (!children->Contains(blockers[index])) {
                  r = Reply::Of(absl::NotFoundError(blockers[index]));  // gone already
                  r.blocker = index;
                  break;
                }
              }
              reply(std::move(r));
            }));
      } else {
        // Data watches (getData) rather than exists watches: on a node
        // already gone, no watch is left behind on the server. All are sent
        // at once.
        for (size_t index = 0; index < blockers.size(); ++index) {
          keep(client->Get(PathOf(blockers[index]), fired(index),
                           [reply, marks_count, index](absl::StatusOr<NodeData> node) {
                             Reply r = Reply::Of(node.status());
                             r.blocker = index;
                             // Created with version 0; only its owner's mark changes it.
                             r.blocker_marked = marks_count && node.ok() && node->stat.version > 0;
                             reply(std::move(r));
                           }));
        }
      }
      // With the first blocker watch, a watch on our own node (sent behind
      // it): the woken waiter may then hold on the event itself (kWatch in
      // Next), and it is the watch a holder keeps. Not for a semaphore: its
      // acquisition marks (changes) our node anyway.
      if (driver_->WatchesOwnNodeWhileWaiting() && config().watch_own_node) {
        std::shared_ptr<HoldMonitor> monitor;
        {
          absl::MutexLock lock(&mu_);
          if (epoch == epoch_) monitor = MonitorLocked();  // else moved on (or gave up)
        }
        if (monitor != nullptr) monitor->WatchWhileWaiting(node_path(), generation());
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
    if (std::optional<Participant::CreateStep> create = CreateStepOf(step)) {
      participant_.Note(*create, reply);
    }
    // An answer to a listing, a blocker watch or a request check: the
    // server processed it before anything a later decision depends on.
    if (listens_ && !IsRetryable(reply.status) &&
        (step == Step::kList || step == Step::kWatch || step == Step::kCheckRevoke)) {
      MonitorLocked()->RaiseBasis(reply.basis);  // made by Make()
    }
    abandoned = abandoned_;
    retries_in_a_row_ = IsRetryable(reply.status) ? retries_in_a_row_ + 1 : 0;
    attempt = retries_in_a_row_;
  }
  if (abandoned) return;  // Finish() has started cleaning
  const bool retry = IsRetryable(reply.status);
  // Retryable: the step again once connected — but the create's outcome is
  // unknown: look it up rather than create twice; and a watch's arming:
  // list again rather than re-arm on a stale decision.
  Target target = !retry                  ? Next(step, reply)
                  : CreateStepOf(step)   ? Target::To(StepOf(Participant::RetryStep(*CreateStepOf(step))))
                  : step == Step::kWatch ? Target::To(Step::kList)
                                         : Target::To(step);
  {
    absl::MutexLock lock(&mu_);
    Transition moved{step, target.moves ? target.to : step, &reply};
    moved.attempt = attempt;
    ReportLocked(moved);
  }
  if (retry) return RetryWhenConnected(target.to, epoch, attempt);
  Go(step, std::move(target));
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

void QueueEntry::ListAfterJointCreate(uint64_t create_epoch, absl::Duration sent_at,
                                      const Participant::Reply& created) {
  if (created.directory_children == 1) {
    // The directory as of our create, which held our node alone: what a
    // listing right behind the create would show.
    Reply r = Reply::Listing(ChildList{NodeName(created.created.path)});
    r.basis = BasisOf(sent_at);
    return OnListingBehindCreate(create_epoch, std::move(r));
  }
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return;  // the session moved on: the attempt ends
  SendListingBehindCreate(*client, create_epoch, sent_at);
}

void QueueEntry::SendListingBehindCreate(ZkClient& client, uint64_t create_epoch,
                                         absl::Duration sent_at) {
  auto self = shared_from_this();
  client.GetChildren(dir(), nullptr,
                     [self, create_epoch, sent_at](absl::StatusOr<ChildList> children) {
                       Reply r = Reply::Listing(std::move(children));
                       r.basis = self->BasisOf(sent_at);
                       self->OnListingBehindCreate(create_epoch, std::move(r));
                     });
}

bool QueueEntry::StillAt(uint64_t epoch) {
  absl::MutexLock lock(&mu_);
  return epoch == epoch_;  // else moved on (or gave up) meanwhile
}

void QueueEntry::RetryWhenConnected(Step step, uint64_t epoch, int attempt) {
  auto self = shared_from_this();
  internal::RetryWhenConnected(
      *core_, generation(), attempt, /*note=*/nullptr,
      [self, step, epoch] {
        if (self->StillAt(epoch)) self->GoTo(step);
      },
      [self, epoch](absl::Status lost) {
        // Lost or closed: the node went with the session.
        if (self->StillAt(epoch)) self->Finish(std::move(lost));
      });
}

void QueueEntry::CancelBlockerWatch() {
  WatchIds watches;
  {
    absl::MutexLock lock(&mu_);
    watches.swap(blocker_watches_);
  }
  CancelWatches(std::move(watches));
}

void QueueEntry::CancelWatches(WatchIds watches) {
  if (watches.empty()) return;
  if (std::shared_ptr<ZkClient> client = Client()) {
    for (uintptr_t watch : watches) client->CancelWatch(watch);
  }
}

}  // namespace internal
}  // namespace zkr
