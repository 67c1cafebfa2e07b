// FollowLoop: the skeleton of a follower that reads, watches, and reads
// again — the leader observer and the group membership watch. The
// subclass's Refresh() runs at Start(), after every event of the one watch
// it keeps (KeepWatch), on every new session (the old one's watches are
// gone), and once connected again after a retryable error
// (RetryWhenConnected). Stop() removes the watch; nothing runs after it.
// The watch's room in the session's watch budget (src/watch_budget.h) is
// reserved by Start() for the followed path, and topped up by Cover() for a
// longer one; a watch the budget or the client refuses (ResourceExhausted)
// is retried like a lost connection's read, paced, until room frees.
//
// Threads: Refresh() and the replies run on the ZooKeeper completion thread
// (Start() runs the first on the caller's): never block there.
#ifndef ZKRECIPES_RECIPES_FOLLOW_LOOP_H_
#define ZKRECIPES_RECIPES_FOLLOW_LOOP_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "src/session_core.h"

namespace zkr {
namespace internal {

class FollowLoop : public std::enable_shared_from_this<FollowLoop> {
 public:
  // `path` is what it follows; `what` names the loop in retry reports
  // ("leader observer").
  FollowLoop(std::shared_ptr<SessionCore> core, std::string what, std::string path)
      : core_(std::move(core)),
        what_(std::move(what)),
        path_(std::move(path)),
        reservation_(core_->watch_budget()) {}
  virtual ~FollowLoop() = default;
  FollowLoop(const FollowLoop&) = delete;
  FollowLoop& operator=(const FollowLoop&) = delete;

  // ResourceExhausted, with nothing started, when a watch on path() does not
  // fit the session's watch budget.
  absl::Status Start() ABSL_LOCKS_EXCLUDED(mu_);
  // Starts a loop whose watch is covered by its owner's reservation (a
  // hold's revocation watch: QueueEntry reserves it).
  void StartCovered() ABSL_LOCKS_EXCLUDED(mu_);
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  // The path it follows.
  const std::string& path() const { return path_; }

 protected:
  // Reads again (from any thread; never blocks). Not called once stopped.
  virtual void Refresh() = 0;
  // The session was closed: nothing more will be read (on the thread that
  // delivers the session's state; never blocks). Not called once stopped.
  virtual void OnSessionClosed() {}
  // The session's client now, and its generation; null client between
  // sessions (the next CONNECTED refreshes).
  SessionCore::Handle SessionHandle() const { return core_->current(); }
  // The client of `generation`, or null if the session moved on.
  std::shared_ptr<ZkClient> Client(uint64_t generation) const;
  SessionCore& core() const { return *core_; }
  // A watch callback that refreshes.
  ZkClient::WatchFn Again();
  // Keeps `watch`, set on `generation`'s client, as the one watch: a watch
  // is known by {generation, id}, never by its id alone, and the newer of
  // the two (later generation, else higher id: ids grow in send order) is
  // kept. Removes the other if its generation is still current (an earlier
  // session's went with it), or `watch` itself once stopped.
  void KeepWatch(uint64_t generation, uintptr_t watch) ABSL_LOCKS_EXCLUDED(mu_);
  // Makes the reservation cover a watch on `path` too: ResourceExhausted if
  // the budget lacks the room.
  absl::Status Cover(const std::string& path);
  // A read failed with the retryable `reason`: Refresh() once `generation`
  // is connected again (after a backoff if it still is: src/retry.h).
  void RetryWhenConnected(uint64_t generation, const absl::Status& reason);
  // Whether a read's or watch's `status` is one to retry: the connection's
  // (IsRetryable), or a watch refused for room (ResourceExhausted).
  static bool Retried(const absl::Status& status);
  bool stopped() const ABSL_LOCKS_EXCLUDED(mu_);
  // Refreshes unless stopped.
  void RefreshIfLive() {
    if (!stopped()) Refresh();
  }

 private:
  const std::shared_ptr<SessionCore> core_;
  const std::string what_;
  const std::string path_;
  WatchReservation reservation_;
  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  // The watch kept: its session generation and id (an id means nothing to
  // another generation's client).
  struct KeptWatch {
    uint64_t generation = 0;
    uintptr_t id = 0;
  };
  // Removes `watch` from its generation's client, if that is still current.
  void CancelKept(KeptWatch watch) const;
  KeptWatch watch_ ABSL_GUARDED_BY(mu_);
  // Retries since a watch last fired: paces reads the server refuses.
  int retries_in_a_row_ ABSL_GUARDED_BY(mu_) = 0;
  int listener_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_FOLLOW_LOOP_H_
