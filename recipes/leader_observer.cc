#include "zkrecipes/leader_observer.h"

#include <atomic>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "recipes/candidate_data.h"
#include "recipes/queue_node.h"
#include "src/paths.h"
#include "src/session_access.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {

// The observer's loop, on the ZooKeeper completion thread: list the
// election; no directory -> an exists watch on it; no candidate -> a child
// watch; else a data watch on the first candidate's node. Any event, and
// every new session, starts the loop again. One watch at a time.
class ObserverCore : public std::enable_shared_from_this<ObserverCore> {
 public:
  ObserverCore(std::shared_ptr<SessionCore> core, std::string path, LeaderObserver::OnChange on_change)
      : core_(std::move(core)), path_(std::move(path)), on_change_(std::move(on_change)) {}

  void Start() ABSL_LOCKS_EXCLUDED(mu_) {
    std::weak_ptr<ObserverCore> weak = weak_from_this();
    const int listener = core_->AddInternalListener([weak](SessionState state, uint64_t) {
      // A new session: the old one's watches are gone; look again.
      if (state != SessionState::kConnected) return;
      if (auto self = weak.lock()) self->Refresh();
    });
    {
      absl::MutexLock lock(&mu_);
      listener_ = listener;
    }
    Refresh();
  }

  void Stop() ABSL_LOCKS_EXCLUDED(mu_) {
    uintptr_t watch;
    int listener;
    {
      absl::MutexLock lock(&mu_);
      stopped_ = true;
      watch = std::exchange(watch_, 0);
      listener = std::exchange(listener_, 0);
      *notify_ = false;
    }
    if (listener != 0) core_->RemoveInternalListener(listener);
    if (watch != 0) {
      if (std::shared_ptr<ZkClient> client = core_->current().client) client->CancelWatch(watch);
    }
  }

  absl::StatusOr<std::optional<LeaderInfo>> AwaitChange(const std::optional<LeaderInfo>& previous,
                                                        absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    auto changed = [this, &previous]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return known_ && leader_ != previous;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&changed), timeout)) {
      return absl::DeadlineExceededError(absl::StrCat("observe leader of ", path_,
                                                      ": no change within ",
                                                      absl::FormatDuration(timeout)));
    }
    return leader_;
  }
  absl::StatusOr<std::optional<LeaderInfo>> Current(absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (!mu_.AwaitWithTimeout(absl::Condition(&known_), timeout)) {
      return absl::DeadlineExceededError(absl::StrCat("observe leader of ", path_,
                                                      ": no answer within ",
                                                      absl::FormatDuration(timeout)));
    }
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
  const std::string& path() const { return path_; }

 private:
  // Reads the election again (from any thread; never blocks).
  void Refresh() ABSL_LOCKS_EXCLUDED(mu_) {
    if (Stopped()) return;
    SessionCore::Handle handle = core_->current();
    if (handle.client == nullptr) return;  // the next CONNECTED starts us again
    std::weak_ptr<ObserverCore> weak = weak_from_this();
    const uint64_t generation = handle.generation;
    handle.client->GetChildren(
        path_, nullptr,
        [weak, generation](absl::StatusOr<std::vector<std::string>> children) {
          if (auto self = weak.lock()) self->OnListing(generation, std::move(children));
        });
  }

  void OnListing(uint64_t generation, absl::StatusOr<std::vector<std::string>> children) {
    if (IsRetryable(children.status())) return RetryWhenConnected(generation);
    std::weak_ptr<ObserverCore> weak = weak_from_this();
    auto again = [weak](const WatchEvent&) {
      if (auto self = weak.lock()) self->Refresh();
    };
    std::shared_ptr<ZkClient> client = Client(generation);
    if (client == nullptr) return;
    if (absl::IsNotFound(children.status())) {
      // No election yet: its creation is what can change the answer.
      Publish(std::nullopt);
      return Watch(client, client->Exists(path_, again, [weak, generation](absl::StatusOr<Stat> stat) {
        auto self = weak.lock();
        if (self != nullptr && stat.ok()) self->Refresh();  // created meanwhile
        if (self != nullptr && IsRetryable(stat.status())) self->RetryWhenConnected(generation);
      }));
    }
    if (!children.ok()) return;  // e.g. PermissionDenied: nothing to follow
    std::vector<QueueNode> nodes = ParseQueue(*children, 0);
    if (!nodes.empty()) nodes = ParseQueue(*children, nodes.front().sequence);
    const QueueNode* first = nullptr;
    for (const QueueNode& node : nodes) {
      if (node.mode == NodeMode::kWrite) {
        first = &node;
        break;
      }
    }
    if (first == nullptr) {
      // Nobody campaigns: the next candidate to join leads.
      Publish(std::nullopt);
      return Watch(client, client->GetChildren(
                               path_, again,
                               [weak, generation](absl::StatusOr<std::vector<std::string>> now) {
                                 auto self = weak.lock();
                                 if (self == nullptr) return;
                                 if (IsRetryable(now.status())) return self->RetryWhenConnected(generation);
                                 if (now.ok() && !now->empty()) self->Refresh();  // joined meanwhile
                               }));
    }
    const std::string node = first->name;
    Watch(client, client->Get(JoinPath(path_, node), again,
                              [weak, generation, node](absl::StatusOr<NodeData> data) {
                                auto self = weak.lock();
                                if (self == nullptr) return;
                                if (IsRetryable(data.status())) return self->RetryWhenConnected(generation);
                                if (!data.ok()) return self->Refresh();  // gone meanwhile
                                LeaderInfo leader;
                                ParseCandidateNodeData(data->data, &leader.id, &leader.data);
                                leader.epoch = data->stat.czxid;
                                leader.node = node;
                                leader.taken_over = data->stat.version > 0;
                                self->Publish(std::move(leader));
                              }));
  }

  // Keeps `watch` as the one watch; removes the one before.
  void Watch(const std::shared_ptr<ZkClient>& client, uintptr_t watch) ABSL_LOCKS_EXCLUDED(mu_) {
    uintptr_t previous;
    bool stopped;
    {
      absl::MutexLock lock(&mu_);
      stopped = stopped_;
      previous = stopped ? 0 : std::exchange(watch_, watch);
    }
    if (stopped) return client->CancelWatch(watch);
    if (previous != 0 && previous != watch) client->CancelWatch(previous);
  }

  void Publish(std::optional<LeaderInfo> leader) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (stopped_ || (known_ && leader_ == leader)) return;
    known_ = true;
    leader_ = leader;
    if (!on_change_) return;
    // Posted under the lock: listeners see the changes in order.
    auto listener = on_change_;
    auto notify = notify_;
    core_->dispatcher().Post([notify, listener, leader] {
      if (*notify) listener(leader);
    });
  }

  void RetryWhenConnected(uint64_t generation) {
    std::weak_ptr<ObserverCore> weak = weak_from_this();
    core_->WhenConnected(generation, [weak](absl::Status connected) {
      auto self = weak.lock();
      if (self != nullptr && connected.ok()) self->Refresh();  // else a new session starts us
    });
  }

  std::shared_ptr<ZkClient> Client(uint64_t generation) {
    SessionCore::Handle handle = core_->current();
    return handle.generation == generation ? handle.client : nullptr;
  }
  bool Stopped() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return stopped_;
  }

  const std::shared_ptr<SessionCore> core_;
  const std::string path_;
  const LeaderObserver::OnChange on_change_;
  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool known_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<LeaderInfo> leader_ ABSL_GUARDED_BY(mu_);
  uintptr_t watch_ ABSL_GUARDED_BY(mu_) = 0;
  int listener_ ABSL_GUARDED_BY(mu_) = 0;
  // Set false by Stop(): deliveries already posted are dropped.
  const std::shared_ptr<std::atomic<bool>> notify_ = std::make_shared<std::atomic<bool>>(true);
};

}  // namespace internal

LeaderObserver::LeaderObserver(std::shared_ptr<internal::ObserverCore> core)
    : core_(std::move(core)) {}

LeaderObserver::~LeaderObserver() { core_->Stop(); }

absl::StatusOr<std::unique_ptr<LeaderObserver>> LeaderObserver::Create(Session& session,
                                                                       std::string path,
                                                                       OnChange on_change) {
  if (absl::Status valid = internal::ValidatePath(path); !valid.ok()) return valid;
  auto core = std::make_shared<internal::ObserverCore>(internal::CoreOf(session), std::move(path),
                                                       std::move(on_change));
  core->Start();
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
