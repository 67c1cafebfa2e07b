#include "recipes/revoke_watch.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {

constexpr absl::string_view kRevokeSuffix = ".revoke";

std::string RevokeRequestPath(absl::string_view node_path) {
  return absl::StrCat(node_path, kRevokeSuffix);
}

bool IsRevokeRequest(absl::string_view child, std::string* node) {
  if (child.size() <= kRevokeSuffix.size() || !absl::EndsWith(child, kRevokeSuffix)) return false;
  if (node != nullptr) *node = std::string(child.substr(0, child.size() - kRevokeSuffix.size()));
  return true;
}

std::shared_ptr<RevokeWatch> RevokeWatch::Start(std::shared_ptr<SessionCore> core,
                                                uint64_t generation, std::string node_path,
                                                OnRequest on_request) {
  std::shared_ptr<RevokeWatch> watch(new RevokeWatch(
      std::move(core), generation, RevokeRequestPath(node_path), std::move(on_request)));
  watch->Arm();
  return watch;
}

RevokeWatch::RevokeWatch(std::shared_ptr<SessionCore> core, uint64_t generation,
                         std::string path, OnRequest on_request)
    : core_(std::move(core)),
      generation_(generation),
      path_(std::move(path)),
      on_request_(std::move(on_request)) {}

std::shared_ptr<ZkClient> RevokeWatch::Client() {
  SessionCore::Handle handle = core_->current();
  return handle.generation == generation_ ? handle.client : nullptr;
}

void RevokeWatch::Stop() {
  uintptr_t watch;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    watch = std::exchange(watch_, 0);
  }
  if (watch == 0) return;
  if (std::shared_ptr<ZkClient> client = Client()) client->CancelWatch(watch);
}

void RevokeWatch::Arm() {
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return;  // the session moved on: the hold is lost
  std::weak_ptr<RevokeWatch> weak = weak_from_this();
  const uintptr_t watch = client->Exists(
      path_,
      [weak](const WatchEvent&) {
        if (auto self = weak.lock()) self->Arm();  // created, changed or deleted: look again
      },
      [weak](absl::StatusOr<Stat> stat) {
        auto self = weak.lock();
        if (self == nullptr) return;
        if (stat.ok()) return self->ReadRequest();
        if (!IsRetryable(stat.status())) return;  // NotFound: nobody asks (yet)
        self->core_->WhenConnected(self->generation_, [weak](absl::Status connected) {
          auto self = weak.lock();
          if (self != nullptr && connected.ok()) self->Arm();
        });
      });
  uintptr_t previous = 0;
  bool keep;
  {
    absl::MutexLock lock(&mu_);
    keep = !stopped_;
    if (keep) previous = std::exchange(watch_, watch);
  }
  if (!keep) return client->CancelWatch(watch);  // stopped while we armed it
  if (previous != 0 && previous != watch) client->CancelWatch(previous);  // keep one
}

void RevokeWatch::ReadRequest() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
  }
  std::shared_ptr<ZkClient> client = Client();
  if (client == nullptr) return;
  std::weak_ptr<RevokeWatch> weak = weak_from_this();
  client->Get(path_, nullptr, [weak](absl::StatusOr<NodeData> request) {
    auto self = weak.lock();
    if (self == nullptr) return;
    {
      absl::MutexLock lock(&self->mu_);
      if (self->stopped_) return;
    }
    // Gone again before we read it: still a request that was made.
    self->on_request_(request.ok() ? request->data : std::string());
  });
}

}  // namespace internal
}  // namespace zkr
