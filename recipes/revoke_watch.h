// RevokeWatch: a holder's watch for revocation requests. A request is a node
// "<holder's node>.revoke" beside the holder's node (a foreign name to every
// queue: it never blocks anyone); its data says who asks and why. An exists
// watch (set also while the node is absent) tells the holder when one is
// created; its data is then read and handed to `on_request`, once per
// creation or change. Re-armed after every event and, after a lost
// connection, once connected again.
//
// Threads: `on_request` runs on the ZooKeeper completion thread and must not
// block (LockCore posts it to the dispatcher). Internally synchronised.
#ifndef ZKRECIPES_RECIPES_REVOKE_WATCH_H_
#define ZKRECIPES_RECIPES_REVOKE_WATCH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "src/session_core.h"

namespace zkr {
namespace internal {

// The request node of the queue node at `node_path`.
std::string RevokeRequestPath(absl::string_view node_path);
// Whether a child name is a revocation request ("<node>.revoke"), and of which node.
bool IsRevokeRequest(absl::string_view child, std::string* node = nullptr);

class RevokeWatch : public std::enable_shared_from_this<RevokeWatch> {
 public:
  using OnRequest = std::function<void(std::string reason)>;
  // Watches `node_path`'s request node on `generation` of `core`.
  static std::shared_ptr<RevokeWatch> Start(std::shared_ptr<SessionCore> core, uint64_t generation,
                                            std::string node_path, OnRequest on_request);
  // No more requests (released, or lost): the watch is removed.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  RevokeWatch(std::shared_ptr<SessionCore> core, uint64_t generation, std::string node_path,
              OnRequest on_request);
  void Arm() ABSL_LOCKS_EXCLUDED(mu_);
  void ReadRequest() ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<ZkClient> Client();

  const std::shared_ptr<SessionCore> core_;
  const uint64_t generation_;
  const std::string path_;  // the request node
  const OnRequest on_request_;
  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  uintptr_t watch_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_REVOKE_WATCH_H_
