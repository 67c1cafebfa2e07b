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
  auto watch = std::make_shared<RevokeWatch>(std::move(core), generation,
                                             RevokeRequestPath(node_path), std::move(on_request));
  watch->FollowLoop::Start();
  return watch;
}

void RevokeWatch::Refresh() {
  std::shared_ptr<ZkClient> client = Client(generation_);
  if (client == nullptr) return;  // the session moved on: the hold is lost
  std::weak_ptr<RevokeWatch> weak =
      std::static_pointer_cast<RevokeWatch>(shared_from_this());
  const uint64_t generation = generation_;
  KeepWatch(client, client->Exists(path(), Again(), [weak, generation](absl::StatusOr<Stat> stat) {
              auto self = weak.lock();
              if (self == nullptr) return;
              if (stat.ok()) return self->ReadRequest();
              // NotFound: nobody asks (yet).
              if (IsRetryable(stat.status())) self->RetryWhenConnected(generation, stat.status());
            }));
}

void RevokeWatch::ReadRequest() {
  std::shared_ptr<ZkClient> client = Client(generation_);
  if (client == nullptr || stopped()) return;
  std::weak_ptr<RevokeWatch> weak =
      std::static_pointer_cast<RevokeWatch>(shared_from_this());
  client->Get(path(), nullptr, [weak](absl::StatusOr<NodeData> request) {
    auto self = weak.lock();
    if (self == nullptr || self->stopped()) return;
    // Gone again before we read it: still a request that was made.
    self->on_request_(request.ok() ? request->data : std::string());
  });
}

}  // namespace internal
}  // namespace zkr
