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
//
// Other libraries' nodes (a NodeScheme of another Dialect) have the same
// shape, "<participant><marker><seq>": Curator's "_c_<uuid>" + "-lock-",
// "-__READ__", "-__WRIT__" or "-latch-"; Kazoo's "<uuid hex>" + "__lock__"
// or "__rlock__" and exactly 10 digits (after an optional '-'). A participant of a
// dialect finds every child it cannot parse foreign (IsForeignNode); ours
// ignore unknown names as before but not another library's.
#ifndef ZKRECIPES_RECIPES_QUEUE_NODE_H_
#define ZKRECIPES_RECIPES_QUEUE_NODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "src/child_list.h"
#include "zkrecipes/types.h"

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

// What kind of queue a participant joins: Curator names a mutex, a
// read/write lock and a latch differently.
enum class QueueKind { kSharedLock, kExclusiveLock, kElection };

// How the participants of one queue name their nodes in one dialect.
struct NodeScheme {
  Dialect dialect = Dialect::kZkr;
  absl::string_view read_marker = "-R-";  // empty: no readers in this queue
  absl::string_view write_marker = "-W-";
};
NodeScheme SchemeFor(Dialect dialect, QueueKind kind);
// The scheme most of `children` parse in (ours on a tie, and for none): how
// inspect and observers read a queue they were not told the dialect of.
NodeScheme DetectScheme(const ChildList& children);

// Parses a child name; nullopt for a foreign name (no "-R-"/"-W-"/
// "-S<k>of<N>-" followed by a signed decimal that fits in 32 bits, or an
// empty participant).
std::optional<QueueNode> ParseQueueNode(absl::string_view name);
// Parses a child name in `scheme` (ours: as above, semaphore nodes too).
std::optional<QueueNode> ParseQueueNode(absl::string_view name, const NodeScheme& scheme);

// What ParseQueueNode reads, without copying the name: for a pass over a
// long listing (QueueNode's participant is name[0, participant_size)).
struct QueueKey {
  NodeMode mode = NodeMode::kWrite;
  int32_t sequence = 0;
  int weight = 1;
  int leases = 0;
  size_t participant_size = 0;
};
std::optional<QueueKey> ParseQueueKey(absl::string_view name, const NodeScheme& scheme);

// Whether a participant of `scheme` must refuse the queue for `child`: a
// name it cannot parse (another dialect's, or unknown) in a dialect queue;
// in ours, a name another library's queue would count as a contender
// (Curator's protected "_c_<uuid>-" prefix, Kazoo's lock pattern). Our
// revocation requests ("<node>.revoke") are not foreign in ours.
bool IsForeignNode(absl::string_view child, const NodeScheme& scheme);

// The first child of `children` that IsForeignNode, or empty.
std::string FirstForeignNode(const ChildList& children, const NodeScheme& scheme);

// Serial-number order: true if sequence `a` comes before `b`
// (int32(b - a) > 0), so order survives the counter's wrap at 2^31.
bool SequenceBefore(int32_t a, int32_t b);

// The distance from `origin` to `sequence` in serial arithmetic: negative
// when `sequence` comes before `origin`. A total order for a fixed origin.
int64_t SequenceOffset(int32_t sequence, int32_t origin);

// The suffix the server appends to a sequential node's name for sequence
// number `sequence` ("%010d": "0000000042", "-000000001"), and back:
// nullopt unless `suffix` is exactly that form of a 32-bit number (so a
// node's name is its prefix and its sequence, kept as a number).
std::string SequenceSuffix(int32_t sequence);
std::optional<int32_t> ParseSequenceSuffix(absl::string_view suffix);
// The sequence of `name` if it is `prefix` and such a suffix — the node the
// server made for a sequential create of `prefix` — else nullopt. (A
// revocation request for that node, "<node>.revoke", starts with the
// prefix too, and is not it.)
std::optional<int32_t> SequenceAfter(absl::string_view name, absl::string_view prefix);

// A participant id for one attempt: "<label>_<pid>_<16 hex>", where the
// label is the host name (locks, election) or a barrier member's id, with
// every character outside [A-Za-z0-9._-] replaced by '_'. The one format of
// every recipe's node names.
std::string NewParticipantId(absl::string_view label = "");
// `label` as a participant id carries it: every character outside
// [A-Za-z0-9._-] replaced by '_'.
std::string SafeLabel(absl::string_view label);
// A participant id in `dialect`: ours as above; Curator's protected prefix
// "_c_<random uuid>" (its '-' separator is the marker's first character);
// Kazoo's "<random uuid, 32 hex>".
std::string NewParticipantId(Dialect dialect, absl::string_view label);

// Appended to a writer's node data by the transaction that releases it
// (QueueEntry::ReleaseMarked): its watcher then sees "data changed", which
// only that release produces. A participant's create leaves room for it.
inline constexpr absl::string_view kReleasedMark = "released=1\n";

// The prefix handed to an EPHEMERAL_SEQUENTIAL create: "<participant>-R-";
// for kLease "<participant>-S<weight>of<leases>-"; in a dialect
// "<participant><scheme's marker of mode>".
std::string NodePrefix(absl::string_view participant, NodeMode mode, int weight = 1,
                       int leases = 0, const NodeScheme& scheme = NodeScheme());

// The parseable nodes of `children`, in queue order relative to `origin`
// (the nodes before `origin` first, nearest last); foreign names dropped.
// `foreign`, if given: set to the first child that IsForeignNode (else
// left as it is).
std::vector<QueueNode> ParseQueue(const ChildList& children, int32_t origin,
                                  const NodeScheme& scheme = NodeScheme(),
                                  std::string* foreign = nullptr);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_QUEUE_NODE_H_
