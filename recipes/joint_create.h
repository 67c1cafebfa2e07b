// JointCreate: the creates of several queue entries' nodes, each in a
// directory of its own (a multi-lock's parts), sent as one transaction.
//
// Beside each create the transaction writes the node's directory's data
// (empty, as the library makes its directories): that op's Stat tells how
// many children the directory has once our node is in it, and its zxid is
// the transaction's — our node's czxid, the fencing token. A part alone in
// its directory then holds without a listing: the Stat is the directory as
// of our create, which a listing right behind it would show (nothing can
// get ahead of us later: sequence numbers only grow). A free multi-lock of
// k parts costs one request, not k creates and k listings.
//
// Fallbacks, each a reply the part's own create step handles:
//  - the server refused the transaction (nothing applied: a directory
//    missing on first use, one the session may not write, ...): each part
//    hears `refused` and sends its create again on its own, from its create
//    step — so a part given up meanwhile sends nothing (its clean-up, sent
//    after the transaction, found nothing: nothing was made);
//  - the outcome is unknown (the connection dropped, or the C client's
//    ZRUNTIMEINCONSISTENCY: a retryable status, maybe applied): each part
//    hears that status, as for its own lost create, and looks its node up by
//    its unique id (Participant: protected create).
//
// Use: Add() each entry's create as it starts (the entry's first step, on
// the starting thread), then Flush() once; an Add after the Flush, of
// another generation, or past the request size limit is refused and the
// entry sends its create itself. Between an Add and the Flush the create is
// not on the wire yet, so a clean-up that looked the node up by its prefix
// then could miss it: the thread that adds flushes straight after its Adds,
// and a multi-lock gives its parts up only from that thread, after the Flush
// (or they go with their session).
//
// Threads: Add and Flush on any thread (internally synchronised); each
// `done` runs on the completion thread (or inline in Flush when the client
// refuses the request) and must not block.
#ifndef ZKRECIPES_RECIPES_JOINT_CREATE_H_
#define ZKRECIPES_RECIPES_JOINT_CREATE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "src/session_core.h"
#include "src/zk_client.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace internal {

class JointCreate {
 public:
  // What a part hears of its create.
  struct Outcome {
    absl::StatusOr<CreateResult> created;
    // How many children the directory had once the node was made.
    int32_t directory_children = 0;
    // The transaction was refused as a whole: nothing was made; send the
    // create again, alone (`created` holds the refusal).
    bool refused = false;
  };
  using Done = std::function<void(Outcome outcome)>;

  // For creates on `core`'s current generation (as it is now).
  explicit JointCreate(std::shared_ptr<SessionCore> core);
  JointCreate(const JointCreate&) = delete;
  JointCreate& operator=(const JointCreate&) = delete;

  // Takes the EPHEMERAL_SEQUENTIAL create of `path` (under `dir`) with `data`
  // and `acl`, for `generation`, into the transaction. False — nothing
  // taken — once flushed, for another generation than the one it was made
  // on, or when the transaction would pass the request size limit.
  bool Add(uint64_t generation, std::string dir, std::string path, std::string data,
           std::vector<Acl> acl, Done done) ABSL_LOCKS_EXCLUDED(mu_);
  // Sends the creates taken (as one transaction; a lone one too: it carries
  // its directory's count). Later Adds are refused.
  void Flush() ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the server refused the transaction because the session may not
  // write a directory (an ACL without WRITE: PermissionDenied) — which every
  // later transaction on those directories would be too. False until the
  // reply has come.
  bool RefusedForPermission() const { return refused_for_permission_->load(); }

 private:
  struct Create {
    std::string dir;
    std::string path;
    std::string data;
    std::vector<Acl> acl;
    Done done;
  };
  static void OnReply(std::vector<Create> creates, const absl::Status& status,
                      const std::vector<OpResult>& results);

  // Set by the reply, which may come after this object is gone.
  const std::shared_ptr<std::atomic<bool>> refused_for_permission_ =
      std::make_shared<std::atomic<bool>>(false);

  const std::shared_ptr<SessionCore> core_;
  // The generation the creates are for, and its client (null: refuses every
  // create), read once.
  const SessionCore::Handle handle_;
  absl::Mutex mu_;
  bool flushed_ ABSL_GUARDED_BY(mu_) = false;
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Create> creates_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_JOINT_CREATE_H_
