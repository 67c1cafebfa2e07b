// RevokeWatch: a holder's watch for revocation requests. A request is a node
// "<holder's node>.revoke" beside the holder's node (a foreign name to every
// queue: it never blocks anyone); its data says who asks and why. An exists
// watch (set also while the node is absent) tells the holder when one is
// created; its data is then read and handed to `on_request`, once per
// creation or change. Re-armed after every event and, after a lost
// connection, once connected again (recipes/follow_loop.h).
//
// Threads: `on_request` runs on the ZooKeeper completion thread and must not
// block (LockCore posts it to the dispatcher). Internally synchronised.
#ifndef ZKRECIPES_RECIPES_REVOKE_WATCH_H_
#define ZKRECIPES_RECIPES_REVOKE_WATCH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "recipes/follow_loop.h"
#include "src/session_core.h"

namespace zkr {
namespace internal {

// The request node of the queue node at `node_path`.
std::string RevokeRequestPath(absl::string_view node_path);
// Whether a child name is a revocation request ("<node>.revoke"), and of which node.
bool IsRevokeRequest(absl::string_view child, std::string* node = nullptr);

class RevokeWatch : public FollowLoop {
 public:
  using OnRequest = std::function<void(std::string reason)>;
  // Watches `node_path`'s request node on `generation` of `core` (only:
  // a hold does not outlive its session). Stop() ends it.
  static std::shared_ptr<RevokeWatch> Start(std::shared_ptr<SessionCore> core, uint64_t generation,
                                            std::string node_path, OnRequest on_request);

  RevokeWatch(std::shared_ptr<SessionCore> core, uint64_t generation, std::string path,
              OnRequest on_request)
      : FollowLoop(std::move(core), "revoke watch", std::move(path)),  // the request node
        generation_(generation),
        on_request_(std::move(on_request)) {}

 private:
  void Refresh() override;
  void ReadRequest();

  const uint64_t generation_;
  const OnRequest on_request_;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_REVOKE_WATCH_H_
