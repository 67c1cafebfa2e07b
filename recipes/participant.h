// Participant: the one node a recipe puts in a directory — its unique name,
// its protected create, its recovery by that name after a lost reply, its
// fencing token, and its guaranteed delete (design.md "The queue").
//
// - Protected create: the node is EPHEMERAL_SEQUENTIAL, named
//   "<participant id>-<mode>-" (queue_node.h) with a random id fresh for
//   each attempt; a create whose reply was lost is found again by listing
//   the directory and matching that prefix (FindOwn), never created twice.
// - Fencing token: the node's czxid, from the create's Stat or, after a
//   recovery, from a read of the node.
// - Guaranteed delete: DeleteGuaranteed / DeleteChildGuaranteed retry after
//   each reconnect until the node is gone or its session is.
//
// The bookkeeping (Participant) sends nothing; it is internally synchronised
// by a leaf mutex (its owner may call it under its own). The deletes run on
// the completion thread (or inline); their `done` runs there and must not
// block.
#ifndef ZKRECIPES_RECIPES_PARTICIPANT_H_
#define ZKRECIPES_RECIPES_PARTICIPANT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "recipes/queue_node.h"
#include "src/session_core.h"
#include "src/zk_client.h"

namespace zkr {
namespace internal {

class Participant {
 public:
  // A node under `dir` named for a fresh participant id with `label` (empty:
  // the host), `mode`, and a semaphore's `weight` of `leases`.
  Participant(std::string dir, absl::string_view label, NodeMode mode, int weight, int leases);

  const std::string& dir() const { return dir_; }
  // "<participant id>-R-" / "-W-" (and a semaphore's weight): the name the
  // server appends the sequence number to.
  const std::string& prefix() const { return prefix_; }
  // The path the create is sent to: "<dir>/<prefix>".
  std::string CreatePath() const;
  std::string PathOf(absl::string_view child) const;

  // The node's name once created or found; empty until then.
  std::string node_name() const ABSL_LOCKS_EXCLUDED(mu_);
  // Its full path; empty until known.
  std::string node_path() const ABSL_LOCKS_EXCLUDED(mu_);
  // The fencing token: the node's czxid (0 until known).
  int64_t token() const ABSL_LOCKS_EXCLUDED(mu_);

  // A create is about to be sent: its outcome is unknown until its reply.
  void CreateEntered() ABSL_LOCKS_EXCLUDED(mu_);
  // The create's reply: a final one settles the outcome (and names the node).
  void OnCreateReply(const absl::Status& status, const CreateResult& created) ABSL_LOCKS_EXCLUDED(mu_);
  // Recovery after a lost reply: our node among `children`, by our unique
  // prefix. Settles the outcome; false if the create was never applied.
  bool FindOwn(const std::vector<std::string>& children) ABSL_LOCKS_EXCLUDED(mu_);
  // The token of a node found by FindOwn (its czxid).
  void SetToken(int64_t czxid) ABSL_LOCKS_EXCLUDED(mu_);

  // The create was handed to the client (in the session's request order).
  // True if cleaning was left to the sender meanwhile (CleanAfterCreate):
  // then it must delete by prefix now, after the create.
  bool CreateHandedOver() ABSL_LOCKS_EXCLUDED(mu_);
  // The create of an abandoned step is not sent after all: nothing was
  // created. True if cleaning was left to the sender (then nothing is left
  // to clean: it is done).
  bool CreateDropped() ABSL_LOCKS_EXCLUDED(mu_);

  // What a cleanup must delete.
  enum class Cleanup {
    kNothing,         // nothing was created
    kByName,          // node_name()
    kByPrefix,        // a create whose outcome is unknown: list, then delete by prefix
    kAfterCreate,     // a create not yet handed over: its sender cleans after it
  };
  Cleanup PlanCleanup() ABSL_LOCKS_EXCLUDED(mu_);

  // Deletes the ephemeral node `path` of `generation`, retrying after each
  // reconnect until it is gone; done(OK) also when the generation is lost
  // (the server removes the node with the session). `done` may be empty; it
  // runs on the completion thread or inline. With `caller_waits` (the caller
  // blocks until `done` anyway) the first attempt is made on the calling
  // thread, unless that is the completion thread.
  static void DeleteGuaranteed(std::shared_ptr<SessionCore> core, uint64_t generation,
                               std::string path,
                               std::function<void(absl::Status)> done = nullptr,
                               bool caller_waits = false);
  // The same for an ephemeral child of `dir` whose name starts with the
  // unique `prefix` (a create whose reply was lost): lists `dir` once
  // connected, retrying after each loss, and deletes what it finds.
  static void DeleteChildGuaranteed(std::shared_ptr<SessionCore> core, uint64_t generation,
                                    std::string dir, std::string prefix,
                                    std::function<void(absl::Status)> done = nullptr);

 private:
  const std::string dir_;
  const std::string id_;
  const std::string prefix_;
  mutable absl::Mutex mu_;
  std::string node_name_ ABSL_GUARDED_BY(mu_);
  int64_t token_ ABSL_GUARDED_BY(mu_) = 0;
  // A create was sent and its outcome is not known (in flight, or its reply
  // lost): cleaning must look for the node by prefix.
  bool create_unknown_ ABSL_GUARDED_BY(mu_) = false;
  // The create is handed to the client (in the session's request order).
  // Cleaning that finds it not yet handed over leaves the look-up by prefix
  // to the sender, which makes it after the create: a listing sent first
  // could miss the node the create then makes.
  bool create_sent_ ABSL_GUARDED_BY(mu_) = false;
  bool clean_after_create_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_PARTICIPANT_H_
