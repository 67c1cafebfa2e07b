// Participant: the one node a recipe puts in a directory — its unique name,
// its protected create, its recovery by that name after a lost reply, its
// fencing token, and its guaranteed delete (design.md "The queue").
//
// - Protected create: the node is EPHEMERAL_SEQUENTIAL, named
//   "<participant id>-<mode>-" (queue_node.h) with a random id fresh for
//   each attempt; a create whose reply was lost is found again by listing
//   the directory and matching that prefix, never created twice.
//   Its steps (CreateStep: the directory's containers if missing, the
//   create, the recovery listing, the recovered node's token) are sent and
//   read here (Send, SendCreate, Note, Next) for every participant: the
//   queue engine runs them among its own steps (recipes/queue_entry.h), a
//   member node alone (recipes/member_node.h). The caller keeps the steps'
//   order, their epochs and the retry once connected.
// - Fencing token: the node's czxid, from the create's Stat or, after a
//   recovery, from a read of the node.
// - Guaranteed delete: DeleteGuaranteed / DeleteChildGuaranteed retry after
//   each reconnect until the node is gone or its session is; Clean deletes
//   what a given-up attempt may have created.
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
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "recipes/joint_create.h"
#include "recipes/queue_node.h"
#include "src/session_core.h"
#include "src/zk_client.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace internal {

// A node a recipe made and writes to (SetMemberData, recipes/member_node.h):
// its session, directory, path, the generation that made it and its held
// state. A queue entry and a member node are one each.
class OwnedNode {
 public:
  virtual ~OwnedNode() = default;
  virtual SessionCore& core() const = 0;
  virtual const std::string& dir() const = 0;
  virtual std::string node_path() const = 0;
  virtual uint64_t generation() const = 0;
  virtual LockState state() const = 0;
};

class Participant {
 public:
  // A node under `dir` named for a fresh participant id with `label` (empty:
  // the host), `mode`, and a semaphore's `weight` of `leases`, in `scheme`'s
  // dialect (queue_node.h; its id then ignores `label`). `dir` is shared,
  // not copied: a lock's attempts have one between them.
  Participant(std::shared_ptr<const std::string> dir, absl::string_view label, NodeMode mode,
              int weight, int leases,
              const NodeScheme& scheme = NodeScheme());

  const std::string& dir() const { return *dir_; }
  // "<participant id>-R-" / "-W-" (and a semaphore's weight): the name the
  // server appends the sequence number to.
  const std::string& prefix() const { return prefix_; }
  // The length of our node's path once made: "<dir>/<prefix><sequence>".
  size_t node_path_bytes() const { return dir_->size() + 1 + prefix_.size() + 10; }
  // The path the create is sent to: "<dir>/<prefix>".
  std::string CreatePath() const;
  std::string PathOf(absl::string_view child) const;

  // The node's name once created or found; empty until then.
  std::string node_name() const ABSL_LOCKS_EXCLUDED(mu_);
  // Its full path; empty until known.
  std::string node_path() const ABSL_LOCKS_EXCLUDED(mu_);
  // The fencing token: the node's czxid (0 until known).
  int64_t token() const ABSL_LOCKS_EXCLUDED(mu_);

  // The create of our node with `data_bytes` of data (and the requests
  // that may follow on its path: the larger of the create, with `acl`,
  // and two requests on the node) fits the server's packet limit:
  // InvalidArgument ("create in <dir>: ...") before anything is sent.
  absl::Status CheckRequestSize(SessionCore& core, size_t data_bytes,
                                const std::vector<Acl>& acl) const;
  // A create is about to be sent: its outcome is unknown until its reply.
  void CreateEntered() ABSL_LOCKS_EXCLUDED(mu_);

  // The steps of the protected create, in the order they may come.
  enum class CreateStep {
    kCreateDirectory,  // creates the directory and its parents (containers), in order
    kCreate,           // creates our EPHEMERAL_SEQUENTIAL node
    kRecover,          // a create's reply was lost: looks our node up by id
    kReadToken,        // reads the recovered node's czxid (the fencing token)
    kCreated,          // our node exists (not a request: where Next leads)
    kFailed,           // the reply's status ends the attempt (ditto)
  };
  // What a step's request completes with.
  struct Reply {
    absl::Status status;
    ChildList children;  // a listing (kRecover)
    CreateResult created;               // kCreate
    Stat stat;                          // kReadToken
    // kCreate sent jointly (JointCreate): how many children the directory
    // had once our node was made (0: not known); or the transaction was
    // refused (nothing made): the create is sent again, alone.
    int32_t directory_children = 0;
    bool joint_refused = false;
  };
  using ReplyFn = std::function<void(Reply)>;
  // "CREATE_DIRECTORY", "CREATE", "RECOVER", "READ_TOKEN" (retry reports:
  // "lock step <name>"; debug strings).
  static absl::string_view StepName(CreateStep step);
  // Sends the request of kCreateDirectory, kRecover or kReadToken on
  // `client` (`acl`: the directory's).
  void Send(ZkClient& client, CreateStep step, const std::vector<Acl>& acl, ReplyFn reply) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // kCreate, entered with CreateEntered(): sends the create of our node
  // with `data` — unless the attempt was given up meanwhile (PlanCleanup
  // said kAfterCreate): then nothing is sent and `cleaned` runs. If it is
  // given up while the create is handed over, deletes by prefix after it
  // (on `generation`) and `cleaned` runs once done. True if the create was
  // sent and nobody is cleaning. With `joint`, the create goes into that
  // transaction if it takes it (then `*joined` is set: its reply carries the
  // directory's count), else on `client`.
  bool SendCreate(const std::shared_ptr<SessionCore>& core, uint64_t generation,
                  ZkClient& client, const std::string& data, const std::vector<Acl>& acl,
                  ReplyFn reply, std::function<void()> cleaned, JointCreate* joint = nullptr,
                  bool* joined = nullptr) ABSL_LOCKS_EXCLUDED(mu_);
  // What `step`'s reply says about our node (the create's outcome, the
  // recovery's find): kept even when the attempt was given up meanwhile —
  // it decides what cleaning must delete.
  void Note(CreateStep step, const Reply& reply) ABSL_LOCKS_EXCLUDED(mu_);
  // Where a final (not retryable) reply of `step` leads: the next step,
  // kCreated, or kFailed (with reply.status).
  CreateStep Next(CreateStep step, const Reply& reply) ABSL_LOCKS_EXCLUDED(mu_);
  // A retryable reply: the step to send again once connected — the
  // create's outcome is unknown, so it is looked up rather than sent twice.
  static CreateStep RetryStep(CreateStep step) {
    return step == CreateStep::kCreate ? CreateStep::kRecover : step;
  }

  // The create is not sent after all (the session moved on): nothing was
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
  // Nothing is left of a given-up or released attempt (its node deleted,
  // gone with its session, or never created): runs the WhenCleaned
  // callbacks, on this thread. Not under the owner's lock.
  void MarkCleaned() ABSL_LOCKS_EXCLUDED(mu_);
  // Runs `cleaned` once MarkCleaned() was called; at once if it was.
  void WhenCleaned(std::function<void()> cleaned) ABSL_LOCKS_EXCLUDED(mu_);
  // Deletes what `plan` says (of `generation`, with the guaranteed delete);
  // `cleaned` runs once nothing is left (at once if nothing was created;
  // kAfterCreate: by SendCreate).
  void Clean(Cleanup plan, const std::shared_ptr<SessionCore>& core, uint64_t generation,
             std::function<void()> cleaned) const ABSL_LOCKS_EXCLUDED(mu_);

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
  // SendCreate: the attempt was given up before the create was sent (the
  // cleaning left to the sender): nothing was created.
  bool CreateAbandoned() ABSL_LOCKS_EXCLUDED(mu_);

  std::string NodeNameLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Our node is the one of `sequence` (none: not known).
  void NameLocked(std::optional<int32_t> sequence) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Shared with the attempt's settings (QueueEntry::Settings): one copy per
  // lock object.
  const std::shared_ptr<const std::string> dir_;
  const std::string prefix_;
  mutable absl::Mutex mu_;
  int64_t token_ ABSL_GUARDED_BY(mu_) = 0;
  // (The small fields side by side, not padded apart: a waiting attempt's
  // memory.) Once `named_`, our node's name is prefix_ and the server's
  // suffix for `sequence_` (SequenceSuffix): kept as a number, not as a
  // second copy of the prefix.
  int32_t sequence_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t directory_index_ ABSL_GUARDED_BY(mu_) = 0;  // kCreateDirectory: which ancestor
  bool named_ ABSL_GUARDED_BY(mu_) = false;
  // A create was sent and its outcome is not known (in flight, or its reply
  // lost): cleaning must look for the node by prefix.
  bool create_unknown_ ABSL_GUARDED_BY(mu_) = false;
  // The create is handed to the client (in the session's request order).
  // Cleaning that finds it not yet handed over leaves the look-up by prefix
  // to the sender, which makes it after the create: a listing sent first
  // could miss the node the create then makes.
  bool create_sent_ ABSL_GUARDED_BY(mu_) = false;
  bool clean_after_create_ ABSL_GUARDED_BY(mu_) = false;
  bool cleaned_ ABSL_GUARDED_BY(mu_) = false;
  bool directory_created_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::function<void()>> on_cleaned_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_PARTICIPANT_H_
