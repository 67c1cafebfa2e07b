// RevokeWatch: a holder's watch on its revocation request
// (zkrecipes/revocation.h). A request is a node "<holder's node>.revoke"
// beside the holder's node (a foreign name to every queue: it never blocks
// anyone); its data says who asks and why. Created, it asks (cooperative);
// any change of its data after that (version > 0) is the requester's force
// mark: the hold is over.
//
// An exists watch (set also while the node is absent) tells the holder when
// a request is created or marked. A new request is handed to `on_request`
// once (read after the watch's reply shows it); a mark calls `on_forced`
// once, on the event itself. Re-armed after every creation or deletion and,
// after a lost connection, once connected again (recipes/follow_loop.h).
//
// Why a force is safe (recipes/README.md, "Revocation"): the requester deletes the
// holder's node only one session timeout of the holder's (published in its
// node, PublishedSessionTimeout) after its mark was answered. The server
// sends a session its events in order with its replies, so a holder whose
// watch was set before the mark hears of it before any answer to a request
// processed after it; a holder that does not hear of it (cut off) has had
// no answer to a request processed after the mark, so its lease — send time
// of its latest answered request + timeout - margin — ends before the
// deletion. While the watch is not known to be set (before its first
// reply, between its firing and the next reply) the holder counts on its
// hold only within the lease of `basis`, the send time of a request it
// knows the server processed before any mark: MayHold().
//
// Threads: `on_request` and `on_forced` run on the ZooKeeper completion
// thread and must not block (LockCore posts the user's callback to the
// dispatcher). Internally synchronised.
#ifndef ZKRECIPES_RECIPES_REVOKE_WATCH_H_
#define ZKRECIPES_RECIPES_REVOKE_WATCH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "recipes/follow_loop.h"
#include "src/session_core.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace internal {

// The request node of the queue node at `node_path` (or of a child name).
std::string RevokeRequestPath(absl::string_view node_path);
// Whether a child name is a revocation request ("<node>.revoke"), and of which node.
bool IsRevokeRequest(absl::string_view child, std::string* node = nullptr);

// A request node's data: the requester's grace on a first line
// ("revoke_grace_ms=1000\n"; none if infinite: it never forces), then the
// reason, so that `zkr inspect` still shows it as text.
std::string RevokeRequestData(absl::string_view reason, absl::Duration grace);
// What a request node's data says: {reason, grace (InfiniteDuration if it
// does not say)}.
std::pair<std::string, absl::Duration> ParseRevokeRequestData(absl::string_view data);

// The line a holder that hears a forced revocation adds to its node's data:
// its session's negotiated timeout ("session_timeout_ms=6000\n").
std::string PublishSessionTimeout(absl::Duration timeout);
// The most PublishSessionTimeout adds (for the packet limit).
inline constexpr size_t kMaxPublishedTimeoutBytes = 40;
// What a node's data publishes (nullopt: its holder cannot hear a force —
// it watches neither its node nor its request, or another library made it).
std::optional<absl::Duration> PublishedSessionTimeout(absl::string_view data);

class RevokeWatch : public FollowLoop {
 public:
  using OnRequest = std::function<void(std::string reason)>;
  using OnForced = std::function<void()>;
  // Watches `node_path`'s request node on `generation` of `core` (only: a
  // hold does not outlive its session). `basis`: the send time (monotonic)
  // of a request the server processed before any mark (the one whose answer
  // granted the hold). `on_request` may be empty. Stop() ends it.
  static std::shared_ptr<RevokeWatch> Start(std::shared_ptr<SessionCore> core, uint64_t generation,
                                            std::string node_path, absl::Duration basis,
                                            OnRequest on_request, OnForced on_forced);

  RevokeWatch(std::shared_ptr<SessionCore> core, uint64_t generation, std::string path,
              absl::Duration basis, OnRequest on_request, OnForced on_forced)
      : FollowLoop(std::move(core), "revoke watch", std::move(path)),  // the request node
        generation_(generation),
        on_request_(std::move(on_request)),
        on_forced_(std::move(on_forced)),
        basis_(basis) {}

  // Whether the hold may still be counted on at `now` (monotonic), for a
  // lease of `lease` (SessionCore::LeaseLength): not forced, and the watch
  // is set — or `now` is within the lease of the basis.
  bool MayHold(absl::Duration now, absl::Duration lease) const ABSL_LOCKS_EXCLUDED(state_mu_);

 private:
  void Refresh() override;
  // The arming sent at `sent` replied / fired.
  void OnArmed(const absl::StatusOr<Stat>& stat, absl::Duration sent) ABSL_LOCKS_EXCLUDED(state_mu_);
  void OnEvent(const WatchEvent& event, absl::Duration sent) ABSL_LOCKS_EXCLUDED(state_mu_);
  void Forced() ABSL_LOCKS_EXCLUDED(state_mu_);
  void ReadRequest();

  const uint64_t generation_;
  const OnRequest on_request_;
  const OnForced on_forced_;
  mutable absl::Mutex state_mu_;
  absl::Duration basis_ ABSL_GUARDED_BY(state_mu_);
  bool sure_ ABSL_GUARDED_BY(state_mu_) = false;  // the watch is set and has not fired
  bool forced_ ABSL_GUARDED_BY(state_mu_) = false;
  int64_t told_czxid_ ABSL_GUARDED_BY(state_mu_) = 0;  // the request on_request was told of
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_REVOKE_WATCH_H_
