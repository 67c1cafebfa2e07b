#include "zkrecipes/leader_observer.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "recipes/candidate_data.h"
#include "recipes/follow_loop.h"
#include "recipes/queue_node.h"
#include "src/delivery.h"
#include "src/paths.h"
#include "src/session_access.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {

// The observer's loop (recipes/follow_loop.h), on the ZooKeeper completion
// thread: list the election; no directory -> an exists watch on it; no
// candidate -> a child watch; else a data watch on the first candidate's
// node.
class ObserverCore : public FollowLoop {
 public:
  ObserverCore(std::shared_ptr<SessionCore> core, std::string path, LeaderObserver::OnChange on_change)
      : FollowLoop(std::move(core), "leader observer", std::move(path)),
        on_change_(std::move(on_change)) {}

  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_) {
    listener_gate_->Close();
    Stop();
  }

  absl::StatusOr<std::optional<LeaderInfo>> AwaitChange(const std::optional<LeaderInfo>& previous,
                                                        absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_) {
    if (core().closed()) return Closed();
    absl::MutexLock lock(&mu_);
    auto changed = [this, &previous]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return (known_ && leader_ != previous) || !refused_.ok();
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&changed), timeout)) {
      return absl::DeadlineExceededError(absl::StrCat("observe leader of ", path(),
                                                      ": no change within ",
                                                      absl::FormatDuration(timeout)));
    }
    if (!refused_.ok()) return refused_;
    return leader_;
  }
  absl::StatusOr<std::optional<LeaderInfo>> Current(absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_) {
    if (core().closed()) return Closed();
    absl::MutexLock lock(&mu_);
    auto answered = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return known_ || !refused_.ok();
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&answered), timeout)) {
      return absl::DeadlineExceededError(absl::StrCat("observe leader of ", path(),
                                                      ": no answer within ",
                                                      absl::FormatDuration(timeout)));
    }
    if (!refused_.ok()) return refused_;
    return leader_;
  }
  std::optional<LeaderInfo> leader() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return leader_;
  }
  bool known() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return known_;
  }

 private:
  // The first candidate's node among `children` (in queue order), if any.
  static std::optional<std::string> FirstCandidate(const std::vector<std::string>& children) {
    const internal::NodeScheme scheme = internal::DetectScheme(children);
    std::vector<QueueNode> nodes = ParseQueue(children, 0, scheme);
    if (!nodes.empty()) nodes = ParseQueue(children, nodes.front().sequence, scheme);
    for (const QueueNode& node : nodes) {
      if (node.mode == NodeMode::kWrite) return node.name;
    }
    return std::nullopt;
  }

  std::shared_ptr<ObserverCore> Self() {
    return std::static_pointer_cast<ObserverCore>(shared_from_this());
  }

  void Refresh() override {
    SessionCore::Handle handle = SessionHandle();
    if (handle.client == nullptr) return;  // the next CONNECTED starts us again
    std::weak_ptr<ObserverCore> weak = Self();
    const uint64_t generation = handle.generation;
    handle.client->GetChildren(
        path(), nullptr,
        [weak, generation](absl::StatusOr<ChildList> children) {
          if (auto self = weak.lock()) self->OnListing(generation, AsVector(std::move(children)));
        });
  }

  void OnListing(uint64_t generation, absl::StatusOr<std::vector<std::string>> children) {
    if (IsRetryable(children.status())) return RetryWhenConnected(generation, children.status());
    std::shared_ptr<ZkClient> client = Client(generation);
    if (client == nullptr) return;
    std::weak_ptr<ObserverCore> weak = Self();
    // A watch refused for room: said to Current() and AwaitChange(), and
    // tried again (paced) until room frees.
    auto refused = [weak, generation](const absl::Status& status) {
      auto self = weak.lock();
      if (self == nullptr) return;
      self->Refuse(status);
      self->RetryWhenConnected(generation, status);
    };
    if (absl::IsNotFound(children.status())) {
      // No election yet: its creation is what can change the answer.
      Publish(std::nullopt);
      return KeepWatch(generation, client->Exists(path(), Again(), [weak, generation, refused](absl::StatusOr<Stat> stat) {
        auto self = weak.lock();
        if (self != nullptr && stat.ok()) self->RefreshIfLive();  // created meanwhile
        if (self != nullptr && IsRetryable(stat.status())) self->RetryWhenConnected(generation, stat.status());
        if (absl::IsResourceExhausted(stat.status())) refused(stat.status());
      }));
    }
    if (!children.ok()) return;  // e.g. PermissionDenied: nothing to follow
    std::optional<std::string> first = FirstCandidate(*children);
    if (!first.has_value()) {
      // Nobody campaigns (the directory may hold other children: a config
      // node, a lock reader): wait for the next candidate to join, on a
      // child watch. Its listing looks again only if one joined meanwhile.
      Publish(std::nullopt);
      return KeepWatch(generation, client->GetChildren(
                                   path(), Again(),
                                   [weak, generation, refused](absl::StatusOr<ChildList> listed) {
                                     absl::StatusOr<std::vector<std::string>> now = AsVector(std::move(listed));
                                     auto self = weak.lock();
                                     if (self == nullptr) return;
                                     if (IsRetryable(now.status())) return self->RetryWhenConnected(generation, now.status());
                                     if (absl::IsResourceExhausted(now.status())) return refused(now.status());
                                     if (now.ok() && FirstCandidate(*now).has_value()) {
                                       self->RefreshIfLive();  // joined meanwhile
                                     }
                                   }));
    }
    const std::string node = *std::move(first);
    // The leader's node may have a longer path than the one reserved.
    if (absl::Status room = Cover(JoinPath(path(), node)); !room.ok()) return refused(room);
    KeepWatch(generation, client->Get(JoinPath(path(), node), Again(),
                                  [weak, generation, node, refused](absl::StatusOr<NodeData> data) {
                                    auto self = weak.lock();
                                    if (self == nullptr) return;
                                    if (IsRetryable(data.status())) return self->RetryWhenConnected(generation, data.status());
                                    if (absl::IsResourceExhausted(data.status())) return refused(data.status());
                                    if (absl::IsNotFound(data.status())) return self->RefreshIfLive();  // gone meanwhile
                                    // Any other error would fail again at once (say,
                                    // PermissionDenied): nothing to follow, as for the
                                    // listing; a session lost meanwhile is refreshed
                                    // by the next one's CONNECTED.
                                    if (!data.ok()) return;
                                    LeaderInfo leader;
                                    ParseCandidateNodeData(data->data, &leader.id, &leader.data);
                                    leader.epoch = data->stat.czxid;
                                    leader.node = node;
                                    leader.taken_over = data->stat.version > 0;
                                    self->Publish(std::move(leader));
                                  }));
  }

  absl::Status Closed() const {
    return absl::CancelledError(absl::StrCat("observe leader of ", path(), ": session closed"));
  }

  // Nothing more will be heard: Current() and AwaitChange() return
  // Cancelled (also a wait in progress), as every recipe's pending call.
  void OnSessionClosed() override { Refuse(Closed()); }

  // A watch could not be set: the answer is unknown (an earlier leader may
  // have gone unseen); Current() and AwaitChange() say why until an answer
  // comes.
  void Refuse(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    refused_ = status;
    known_ = false;
    leader_.reset();
  }

  void Publish(std::optional<LeaderInfo> leader) ABSL_LOCKS_EXCLUDED(mu_) {
    if (stopped()) return;
    absl::MutexLock lock(&mu_);
    refused_ = absl::OkStatus();
    if (known_ && leader_ == leader) return;
    known_ = true;
    leader_ = leader;
    if (!on_change_) return;
    // Posted under the lock: listeners see the changes in order.
    Deliver(core().dispatcher(), listener_gate_,
            [listener = on_change_, leader] { listener(leader); });
  }

  const LeaderObserver::OnChange on_change_;
  mutable absl::Mutex mu_;
  bool known_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<LeaderInfo> leader_ ABSL_GUARDED_BY(mu_);
  absl::Status refused_ ABSL_GUARDED_BY(mu_);  // Refuse()
  // Closed by Shutdown(): deliveries already posted are dropped.
  const std::shared_ptr<CallbackGate> listener_gate_ = std::make_shared<CallbackGate>();
};

}  // namespace internal

LeaderObserver::LeaderObserver(std::shared_ptr<internal::ObserverCore> core)
    : core_(std::move(core)) {}

LeaderObserver::~LeaderObserver() { core_->Shutdown(); }

absl::StatusOr<std::unique_ptr<LeaderObserver>> LeaderObserver::Create(Session& session,
                                                                       std::string path,
                                                                       OnChange on_change) {
  if (absl::Status valid = internal::ValidatePath(path); !valid.ok()) return valid;
  auto core = std::make_shared<internal::ObserverCore>(internal::CoreOf(session), std::move(path),
                                                       std::move(on_change));
  if (absl::Status started = core->Start(); !started.ok()) return started;
  return std::unique_ptr<LeaderObserver>(new LeaderObserver(std::move(core)));
}

absl::StatusOr<std::optional<LeaderInfo>> LeaderObserver::AwaitChange(
    const std::optional<LeaderInfo>& previous, absl::Duration timeout) {
  return core_->AwaitChange(previous, timeout);
}
absl::StatusOr<std::optional<LeaderInfo>> LeaderObserver::Current(absl::Duration timeout) {
  return core_->Current(timeout);
}
std::optional<LeaderInfo> LeaderObserver::leader() const { return core_->leader(); }
bool LeaderObserver::known() const { return core_->known(); }
const std::string& LeaderObserver::path() const { return core_->path(); }

}  // namespace zkr
