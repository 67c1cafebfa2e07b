// The raw ZooKeeper floor: what the official C client alone costs for the
// operations a lock needs, measured in the same run as the recipes.
#ifndef ZKRECIPES_TOOLS_BENCH_RAW_FLOOR_H_
#define ZKRECIPES_TOOLS_BENCH_RAW_FLOOR_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tools/bench/stats.h"
#include "tools/bench/waiting_count.h"

typedef struct _zhandle zhandle_t;

namespace zkr {
namespace bench {

// A bare zhandle_t, connected.
class RawClient {
 public:
  // kAsZkrecipes: the C-client settings zkrecipes uses (DNS re-resolution at
  // most once a second); kClientDefaults: as zookeeper_init leaves them (a
  // getaddrinfo on every poll of the socket).
  enum class Settings { kAsZkrecipes, kClientDefaults };
  static absl::StatusOr<std::unique_ptr<RawClient>> Connect(
      const std::string& connect, Settings settings = Settings::kAsZkrecipes);
  ~RawClient();
  // Closes the session (idempotent).
  void Close();
  zhandle_t* get() const { return zh_; }

 private:
  RawClient() = default;
  zhandle_t* zh_ = nullptr;
  absl::Notification connected_;  // the handle's watcher context
};

// One queue participant on the bare C client: its EPHEMERAL_SEQUENTIAL node
// under `dir`, created by Enqueue() and deleted by Release(). Synchronous.
class RawParticipant {
 public:
  RawParticipant(RawClient& client, std::string dir) : client_(client), dir_(std::move(dir)) {}
  absl::Status Release();

 protected:
  // Creates "<dir>/<prefix><seq>"; `mine` is its child name.
  absl::Status Enqueue(const std::string& prefix, std::string* mine);

  RawClient& client_;
  const std::string dir_;
  std::string node_;  // our node's full path while queued or held
};

// The fewest requests a multi-lock of `dirs.size()` free write parts can
// make on the bare C client: the parts' creates in one multi, their
// listings right behind it, then their deletes in one multi (6 requests for
// 4 parts, where 4 single cycles make 12). `counted`: no listings — beside
// each create the multi writes the part's directory (empty data), whose
// Stat counts its children, one meaning the part is alone (as MultiLock
// does, recipes/joint_create.h): 2 requests. One sample per cycle.
absl::Status RawJointCycles(RawClient& client, const std::vector<std::string>& dirs, int cycles,
                            Samples* samples, bool counted = false);

// The textbook exclusive lock on the bare C client (ZooKeeper's recipe:
// create a sequential node, list, hold if first, else set an exists watch on
// the predecessor and list again when it fires), for the contended floor.
// One per thread; Acquire() blocks.
class RawTextbookLock : public RawParticipant {
 public:
  // `waiting`: counts this lock while its watch is set (waiting_count.h).
  RawTextbookLock(RawClient& client, std::string dir, WaitingCount* waiting)
      : RawParticipant(client, std::move(dir)), waiting_(waiting) {}
  absl::Status Acquire();

 private:
  WaitingCount* const waiting_;
};

// The textbook counting semaphore on the bare C client: create an
// EPHEMERAL_SEQUENTIAL node; list the children with a child watch; hold
// when fewer than `leases` nodes precede ours, else wait for the watch (any
// child change wakes every waiter: the herd) and list again. Release:
// delete. Synchronous calls; one participant per object.
//
// kAhead waits instead on the node `leases` places ahead of ours (an exists
// watch; list again when it fires): one event per release, and releases
// wake several waiters at once — the bound of a herd-free semaphore with
// parallel wake-ups. Not a correct semaphore: when holders release out of
// order it can leave a lease idle while a waiter could take it (spin
// rejects the rule: tests/model/semaphore.pml -DN_AHEAD); here every
// holder releases soon, so nobody waits for ever.
class RawTextbookSemaphore : public RawParticipant {
 public:
  enum class Rule { kChildWatch, kAhead };
  RawTextbookSemaphore(RawClient& client, std::string dir, int leases,
                       Rule rule = Rule::kChildWatch)
      : RawParticipant(client, std::move(dir)), leases_(leases), rule_(rule) {}
  absl::Status Acquire();

 private:
  // kAhead's wait: until the node `leases` places ahead in `before` (the
  // names before ours) is gone (at once if it is already).
  absl::Status AwaitAhead(std::vector<std::string> before);

  const int leases_;
  const Rule rule_;
};

// Synchronous create(EPHEMERAL_SEQUENTIAL) + getChildren + delete cycles
// under `dir` (which must exist); one sample per cycle.
absl::Status RawCycles(RawClient& client, const std::string& dir, int cycles, Samples* samples);

// The same cycle through the asynchronous C API (each step issued from the
// previous one's completion), which is how the recipes drive the client.
absl::Status RawAsyncCycles(RawClient& client, const std::string& dir, int cycles,
                            Samples* samples);

// The cycle with the listing sent right behind the create, without waiting
// for the create's reply (one wait for both), then the delete: the floor of
// a pipelined acquire.
absl::Status RawPipelinedCycles(RawClient& client, const std::string& dir, int cycles,
                                Samples* samples);

// The pipelined cycle shaped as a lock's user runs it: the caller's thread
// waits for the listing (it holds the lock then, and works), then deletes
// with a synchronous call — where RawPipelinedCycles sends the delete from
// the listing's completion, which no lock API can do.
absl::Status RawPipelinedReturningCycles(RawClient& client, const std::string& dir, int cycles,
                                         Samples* samples);

// Asynchronous create+delete pairs with `in_flight` outstanding; returns
// operations (creates and deletes) per second.
absl::StatusOr<double> RawPipelined(RawClient& client, const std::string& dir, int pairs,
                                    int in_flight);

// Handoff floor: `holder` deletes a node `waiter` watches (getData watch);
// sample = from the delete call to the waiter's getChildren reply after the
// watch event. The delete follows the watch's arming at once, or after
// `settle` (both sides idle, as a hand-over in the election rows starts).
absl::Status RawHandoff(RawClient& holder, RawClient& waiter, const std::string& dir, int rounds,
                        absl::Duration settle, Samples* samples);

// How long a failover's doomed holder sits idle, its successor queued,
// before its session is closed — the same in the floor and in the election
// workload, because closing an idle C-client session takes measurably longer
// (~0.5 ms on loopback) than closing one that has just sent a request.
inline constexpr absl::Duration kFailoverSettle = absl::Milliseconds(20);

// Failover floor: a fresh `holder` session creates an ephemeral node that
// `waiter` watches; after kFailoverSettle the holder's session is closed;
// sample = from the close call to the waiter's getChildren reply after the
// watch event.
absl::Status RawFailover(const std::string& connect, RawClient& waiter, const std::string& dir,
                         int rounds, Samples* samples);

}  // namespace bench
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_BENCH_RAW_FLOOR_H_
