// zkr::GroupMember: membership of a group of processes (Curator's
// GroupMember, Kazoo's Party, Mesos's Group), and zkr::GroupWatch, which
// tells anyone of every membership change.
//
// A member is one EPHEMERAL_SEQUENTIAL node under the group's path, holding
// its id and its data (say, its address). The node is made by the same
// participant code as a lock's: protected create (a create whose reply was
// lost is found again, never made twice) and guaranteed delete. A member
// whose session dies disappears with its node; it is then no longer
// joined() (Join() again, on the new session).
//
// GroupWatch keeps one child watch on the group and, after every change of
// membership (a join or a leave), reads the members and calls on_change
// once with the full list, in join order. A list leaves out only members
// that are gone: if the connection drops while it reads them, it reads
// them all again once connected instead of reporting a partial list. Every watcher wants every change:
// this is the one recipe where each event reaches each watcher, by design.
// A member's SetData is not a membership change (ListGroup reads it).
// Only changes are reported: a list equal to the last one reported (as a
// new session's first listing usually is) is not reported again.
//
// Thread safety: safe for concurrent use. on_change runs on the session's
// dispatcher thread, in order. REQUIRES: the Session outlives the objects.
//
// Example:
//   zkr::GroupOptions options;
//   options.id = "worker-7";
//   options.data = "10.0.0.7:8080";
//   auto me = zkr::GroupMember::Create(*session, "/services/workers", options);
//   if (!me.ok() || !(*me)->Join().ok()) return;
//   auto watch = zkr::GroupWatch::Create(*session, "/services/workers",
//       [](const std::vector<zkr::GroupMemberInfo>& members) { Rebalance(members); });
#ifndef ZKRECIPES_GROUP_MEMBER_H_
#define ZKRECIPES_GROUP_MEMBER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "zkrecipes/session.h"

namespace zkr {

struct GroupMemberInfo {
  std::string id;
  std::string data;
  std::string node;        // the member's node (child name)
  int64_t session_id = 0;  // its owner
};

struct GroupOptions {
  // The member's id (no control characters). Empty: "<hostname>_<pid>".
  std::string id;
  // What it publishes; SetData() changes it.
  std::string data;
  // ACL of the member's node and of the group directory when created.
  std::vector<Acl> acl;
};

// The members of the group at `path`, in join order (none if it does not
// exist). One listing and one read per member: a snapshot, not atomic.
absl::StatusOr<std::vector<GroupMemberInfo>> ListGroup(Session& session, const std::string& path);

namespace internal {
class MemberNode;
class MembershipCore;
}  // namespace internal

class GroupMember {
 public:
  // Validates `path` and options.id; creates nothing yet.
  static absl::StatusOr<std::unique_ptr<GroupMember>> Create(Session& session, std::string path,
                                                             GroupOptions options = {});
  GroupMember(const GroupMember&) = delete;
  GroupMember& operator=(const GroupMember&) = delete;
  // Leave()s.
  ~GroupMember();

  // Joins: returns once the member's node exists. FailedPrecondition if
  // joined (also while its session is suspended: the node may still be
  // there) or while another Join() is in progress; DeadlineExceeded
  // (nothing left behind) after `timeout`, measured on the session's
  // monotonic clock — plus, when the server has not answered (a silent
  // member), at most one session timeout more to delete the node the create
  // may have made, as a timed-out lock acquisition.
  absl::Status Join(absl::Duration timeout = absl::Seconds(30)) ABSL_LOCKS_EXCLUDED(mu_);
  // Publishes `data` on the member's node, through the session that made
  // it. FailedPrecondition, and nothing written, if not joined, if that
  // session has ended (LOST: also while the server still holds the old node
  // and a new session is connected), or if the node is gone.
  // A refused or failed SetData changes nothing: the next Join() publishes
  // the data last written (or GroupOptions::data).
  absl::Status SetData(std::string data) ABSL_LOCKS_EXCLUDED(mu_);
  // Deletes the member's node; returns once it is gone (or its session is).
  // FailedPrecondition if not joined.
  absl::Status Leave() ABSL_LOCKS_EXCLUDED(mu_);
  // True while the node exists on the current session, as far as known.
  bool joined() const ABSL_LOCKS_EXCLUDED(mu_);
  // The member's node path while joined, else "".
  std::string node_path() const ABSL_LOCKS_EXCLUDED(mu_);
  const std::string& path() const { return path_; }
  const std::string& id() const { return options_.id; }

 private:
  GroupMember(Session& session, std::string path, GroupOptions options);
  Session& session_;
  const std::string path_;
  const GroupOptions options_;
  mutable absl::Mutex mu_;
  std::shared_ptr<internal::MemberNode> entry_ ABSL_GUARDED_BY(mu_);
  bool joining_ ABSL_GUARDED_BY(mu_) = false;  // a Join() is creating the node
  std::string data_ ABSL_GUARDED_BY(mu_);
};

class GroupWatch {
 public:
  using OnChange = std::function<void(const std::vector<GroupMemberInfo>& members)>;
  // Validates `path` and starts watching: `on_change` gets the first list,
  // then one list per change. ResourceExhausted when the session has no
  // room left for its watch (SessionOptions::max_request_bytes).
  static absl::StatusOr<std::unique_ptr<GroupWatch>> Create(Session& session, std::string path,
                                                            OnChange on_change);
  GroupWatch(const GroupWatch&) = delete;
  GroupWatch& operator=(const GroupWatch&) = delete;
  // Stops. After it returns, on_change is neither running nor called again:
  // a call in progress is waited for (not from inside on_change, which may
  // destroy its own watch). Do not destroy it holding a lock on_change takes.
  ~GroupWatch();

 private:
  explicit GroupWatch(std::shared_ptr<internal::MembershipCore> core);
  std::shared_ptr<internal::MembershipCore> core_;
};

}  // namespace zkr

#endif  // ZKRECIPES_GROUP_MEMBER_H_
