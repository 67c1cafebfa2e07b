// zkr::LeaderObserver: follows who leads an election without campaigning
// (Mesos's LeaderDetector): the leader's id, its published data (say, its
// address), its epoch, and whether it has taken over.
//
// Herd-free: an observer watches only what can change the answer — the
// leader's node (a data watch: its deletion, or a change of its data), or,
// while nobody campaigns, the election directory's children (the next
// candidate to join leads) — also when the directory holds children that
// are not candidates (a config node): the observer waits on that watch, it
// never lists the directory in a loop. Joins and leaves behind the leader
// wake no observer. A new session (after LOST) is followed by itself. An
// observer that may not read the election (the directory, or the leader's
// node: PermissionDenied) has no answer and does not ask again.
//
// Thread safety: safe for concurrent use. on_change runs on the session's
// dispatcher thread, once per change, in order.
// REQUIRES: the Session outlives the observer.
//
// Example:
//   auto primary = zkr::LeaderObserver::Create(*session, "/services/db/leader");
//   absl::StatusOr<std::optional<zkr::LeaderInfo>> now = (*primary)->Current(absl::Seconds(10));
//   if (now.ok() && now->has_value()) Connect((*now)->data);  // the primary's address
#ifndef ZKRECIPES_LEADER_OBSERVER_H_
#define ZKRECIPES_LEADER_OBSERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "zkrecipes/session.h"

namespace zkr {

struct LeaderInfo {
  std::string id;    // ElectionOptions::id
  std::string data;  // ElectionOptions::data / LeaderElection::SetData
  int64_t epoch = 0; // the leader's node's czxid (its fencing epoch)
  std::string node;  // the leader's node (child name)
  // The leader has acknowledged its leadership (it marks its node when it
  // wins): a candidate that is first but has not done so yet may be dead.
  // Always false in a Curator or Kazoo queue, where nobody marks.
  bool taken_over = false;

  bool operator==(const LeaderInfo& other) const {
    return id == other.id && data == other.data && epoch == other.epoch && node == other.node &&
           taken_over == other.taken_over;
  }
  bool operator!=(const LeaderInfo& other) const { return !(*this == other); }
};

namespace internal {
class ObserverCore;
}  // namespace internal

class LeaderObserver {
 public:
  using OnChange = std::function<void(const std::optional<LeaderInfo>& leader)>;
  // Validates `path` and starts following at once. `on_change` (optional)
  // gets the first answer too, then every change; nullopt = no candidate.
  // ResourceExhausted when the session has no room left for its watch
  // (SessionOptions::max_request_bytes).
  static absl::StatusOr<std::unique_ptr<LeaderObserver>> Create(Session& session,
                                                                std::string path,
                                                                OnChange on_change = nullptr);
  LeaderObserver(const LeaderObserver&) = delete;
  LeaderObserver& operator=(const LeaderObserver&) = delete;
  // Stops following. After it returns, on_change is neither running nor
  // called again: a call in progress is waited for (not from inside
  // on_change, which may destroy its own observer). Do not destroy it
  // holding a lock on_change takes.
  ~LeaderObserver();

  // Waits until an answer is known and differs from `previous`, and
  // returns it (nullopt: nobody campaigns). DeadlineExceeded after `timeout`.
  // ResourceExhausted (at once) while the leader's node cannot be watched
  // for lack of room in the session's watches (a longer path than reserved
  // at Create); the observer tries again, paced, and answers once it can.
  // Meanwhile known() is false and leader() nullopt: the last leader seen
  // may have gone unseen. Cancelled once the session is closed (also a
  // wait in progress when Session::Close() is called).
  absl::StatusOr<std::optional<LeaderInfo>> AwaitChange(const std::optional<LeaderInfo>& previous,
                                                        absl::Duration timeout);
  // Waits until an answer is known (the first read) and returns it;
  // ResourceExhausted and Cancelled as for AwaitChange.
  absl::StatusOr<std::optional<LeaderInfo>> Current(absl::Duration timeout);
  // The last answer seen; nullopt before the first or without a leader.
  std::optional<LeaderInfo> leader() const;
  // Whether an answer was seen yet.
  bool known() const;
  const std::string& path() const;

 private:
  explicit LeaderObserver(std::shared_ptr<internal::ObserverCore> core);
  std::shared_ptr<internal::ObserverCore> core_;
};

}  // namespace zkr

#endif  // ZKRECIPES_LEADER_OBSERVER_H_
