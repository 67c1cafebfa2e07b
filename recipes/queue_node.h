// Queue node names and their order: the naming shared by every queue recipe
// (locks, election, double barrier). Pure functions, thread-safe.
//
// A participant's node is "<participant>-<M>-<seq>": <participant> is
// "<host>_<pid>_<16 hex random>" (may contain '-'), <M> is R (read) or W
// (write / exclusive / candidate) or S<k>of<N> (a semaphore participant
// asking k of N leases), <seq> is ZooKeeper's %010d suffix of a signed
// 32-bit counter. Names are parsed from the right; anything else is a
// foreign node, ignored by the queue. A lock and a semaphore refuse to share
// a path (recipes/queue_decision.h, semaphore_decision.h).
#ifndef ZKRECIPES_RECIPES_QUEUE_NODE_H_
#define ZKRECIPES_RECIPES_QUEUE_NODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace zkr {
namespace internal {

enum class NodeMode { kRead, kWrite, kLease };

struct QueueNode {
  std::string name;         // the full child name
  std::string participant;  // everything before "-R-"/"-W-"/"-S<k>of<N>-"
  NodeMode mode = NodeMode::kWrite;
  int32_t sequence = 0;
  int weight = 1;  // kLease: the leases asked (k)
  int leases = 0;  // kLease: the semaphore's size as this participant knows it (N)
};

// The largest number of leases a semaphore may have (and a participant ask).
inline constexpr int kMaxLeases = 1000000;

// Parses a child name; nullopt for a foreign name (no "-R-"/"-W-"/
// "-S<k>of<N>-" followed by a signed decimal that fits in 32 bits, or an
// empty participant).
std::optional<QueueNode> ParseQueueNode(absl::string_view name);

// Serial-number order: true if sequence `a` comes before `b`
// (int32(b - a) > 0), so order survives the counter's wrap at 2^31.
bool SequenceBefore(int32_t a, int32_t b);

// The distance from `origin` to `sequence` in serial arithmetic: negative
// when `sequence` comes before `origin`. A total order for a fixed origin.
int64_t SequenceOffset(int32_t sequence, int32_t origin);

// A participant id for one attempt: "<label>_<pid>_<16 hex>", where the
// label is the host name (locks, election) or a barrier member's id, with
// every character outside [A-Za-z0-9._-] replaced by '_'. The one format of
// every recipe's node names.
std::string NewParticipantId(absl::string_view label = "");

// Appended to a writer's node data by the transaction that releases it
// (QueueEntry::ReleaseMarked): its watcher then sees "data changed", which
// only that release produces. A participant's create leaves room for it.
inline constexpr absl::string_view kReleasedMark = "released=1\n";

// The prefix handed to an EPHEMERAL_SEQUENTIAL create: "<participant>-R-";
// for kLease "<participant>-S<weight>of<leases>-".
std::string NodePrefix(absl::string_view participant, NodeMode mode, int weight = 1,
                       int leases = 0);

// The parseable nodes of `children`, in queue order relative to `origin`
// (the nodes before `origin` first, nearest last); foreign names dropped.
std::vector<QueueNode> ParseQueue(const std::vector<std::string>& children, int32_t origin);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_QUEUE_NODE_H_
