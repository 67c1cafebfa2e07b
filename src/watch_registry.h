// WatchRegistry: the watches one ZooKeeper client has set, by id, for the C
// adaptor (src/c_client.cc). Ids are unique in the process, never per client:
// a recipe that keeps an id across a new session and hands it to the new
// client (to cancel it) must not hit another recipe's watch there.
//
// It decides, and the client does what it says: when the server's watch on a
// place (a path and a kind: data or child) may be removed — the last of ours
// there was cancelled, or given up before its request's reply — and which
// removals lost with their connection to send again once connected (the C
// client keeps its own copy of a watch until the server confirms a removal,
// and sets it again on reconnect).
//
// And it bounds them: on reconnect the C client sets every watch it holds
// again in one SetWatches packet, and a packet longer than the server's
// jute.maxbuffer makes the server drop the connection, on every attempt,
// until the session expires. So the bytes that packet would carry (each
// place the C client holds, removals not yet confirmed included) are
// counted, and a watch that would take them past the limit is refused.
//
// Thread safety: safe for concurrent use; it never calls out (a watch's
// function is handed back by Fire(), to be called with no lock held).
#ifndef ZKRECIPES_SRC_WATCH_REGISTRY_H_
#define ZKRECIPES_SRC_WATCH_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "src/zk_client.h"

namespace zkr {
namespace internal {

class WatchRegistry {
 public:
  // Where a server watch lives: its path and kind.
  struct Place {
    std::string path;
    bool child = false;
    bool operator==(const Place& other) const {
      return path == other.path && child == other.child;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Place& place) {
      return H::combine(std::move(h), place.path, place.child);
    }
  };

  // Watches may take at most `max_bytes` of the reconnect packet, each
  // place `path_overhead` bytes beside its path (its length field and the
  // connect string's chroot). Unlimited until called.
  void Limit(size_t max_bytes, size_t path_overhead) ABSL_LOCKS_EXCLUDED(mu_);
  // What the places the C client holds take of that packet, and how many.
  size_t watched_bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t watched_places() const ABSL_LOCKS_EXCLUDED(mu_);

  // Registers `watch` on `path` (a child watch if `child`); 0 for an empty
  // `watch` (no watch). ResourceExhausted, naming the path, the bytes and
  // the limit, if a new place would take the watches past the limit.
  absl::StatusOr<uintptr_t> Register(const std::string& path, bool child,
                                     ZkClient::WatchFn watch) ABSL_LOCKS_EXCLUDED(mu_);
  // The request that set watch `id` was answered: `set` says whether the
  // server now holds the watch. Returns the place whose server watch to
  // remove, if the watch was cancelled meanwhile and was the last of ours
  // there.
  std::optional<Place> Replied(uintptr_t id, bool set) ABSL_LOCKS_EXCLUDED(mu_);
  // Gives up watch `id`: its function is never called. Returns the place
  // whose server watch to remove (the last of ours there, and armed); before
  // the reply, the reply decides (Replied).
  std::optional<Place> Cancel(uintptr_t id) ABSL_LOCKS_EXCLUDED(mu_);
  // The watch fired: forgets it and returns its function (empty if it was
  // cancelled or is unknown).
  ZkClient::WatchFn Fire(uintptr_t id) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the reply that set watch `id` came and it has neither fired nor
  // been cancelled.
  bool Armed(uintptr_t id) const ABSL_LOCKS_EXCLUDED(mu_);
  // The paths with a live watch (not cancelled), sorted, each once.
  std::vector<std::string> WaitedPaths() const ABSL_LOCKS_EXCLUDED(mu_);

  // A removal of `place` was lost with its connection: send it again on the
  // next connection (TakeRemovalsToResend), unless closed.
  void RemovalLost(const Place& place) ABSL_LOCKS_EXCLUDED(mu_);
  // The removal of `place` was answered (removed, already fired, or the
  // session is gone): the C client no longer holds it.
  void RemovalDone(const Place& place) ABSL_LOCKS_EXCLUDED(mu_);
  // The removals to send again now (connected again), forgetting them: those
  // whose place has no watch of ours again (else the server's is wanted).
  std::vector<Place> TakeRemovalsToResend() ABSL_LOCKS_EXCLUDED(mu_);

  // The client closed: forgets everything, and ignores removals lost later.
  void Close() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    ZkClient::WatchFn fn;  // null once cancelled
    // Its place: the key of its count in per_place_ (one copy of the path
    // for every watch there; a waiter's memory is mostly its watch).
    const Place* place = nullptr;
    bool armed = false;      // the request's reply set it
    bool cancelled = false;  // given up before the reply came
  };
  // Forgets entry `it`; returns its place when it was the last of ours of
  // its kind on its path (the server's watch may then go). `removal_sent`:
  // the caller sends that removal, and the place stays counted until it is
  // answered (RemovalDone); else the server holds no watch there any more.
  std::optional<Place> Erase(absl::flat_hash_map<uintptr_t, Entry>::iterator it,
                             bool removal_sent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the C client may hold a watch on `place`.
  bool Held(const Place& place) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return per_place_.contains(place) || removing_.contains(place);
  }
  // How many places the C client holds (Held()).
  size_t PlacesHeld() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stops counting `place` unless the C client still holds it.
  void Uncount(const Place& place) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t Cost(const Place& place) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return path_overhead_ + place.path.size();
  }

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<uintptr_t, Entry> watches_ ABSL_GUARDED_BY(mu_);
  // How many entries of watches_ are on each place (a node map: the
  // entries point at their place's key).
  absl::node_hash_map<Place, int> per_place_ ABSL_GUARDED_BY(mu_);
  // Removals that failed with a connection loss.
  absl::flat_hash_set<Place> removals_to_resend_ ABSL_GUARDED_BY(mu_);
  // Places whose removal was sent (or is to be sent again) and not
  // answered: the C client still holds them.
  absl::flat_hash_set<Place> removing_ ABSL_GUARDED_BY(mu_);
  // The bytes of the places Held(), and the limit.
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t max_bytes_ ABSL_GUARDED_BY(mu_) = SIZE_MAX;
  size_t path_overhead_ ABSL_GUARDED_BY(mu_) = 4;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_WATCH_REGISTRY_H_
