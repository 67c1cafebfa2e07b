#include "zkrecipes/revocation.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "recipes/node_wait.h"
#include "recipes/participant.h"
#include "recipes/revoke_watch.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/session_access.h"
#include "src/zk_status.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/status.h"

namespace zkr {

using internal::JoinPath;

absl::string_view RevokeHowName(RevokeOutcome::How how) {
  switch (how) {
    case RevokeOutcome::How::kReleased: return "released";
    case RevokeOutcome::How::kForced: return "forced";
    case RevokeOutcome::How::kNotForced: return "not forced";
  }
  return "?";
}

namespace {

// One holder being revoked.
struct Target {
  std::string node;       // its node's child name
  std::string node_path;
  std::string request;    // its request node's path
  // What its holder published: its session timeout, which bounds its lease
  // (nullopt: it would not hear a force).
  std::optional<absl::Duration> timeout;
  bool gone = false;          // released (or forced out): nothing more to do
  absl::Duration force_end;   // marked: its holder's lease has ended by then (monotonic)
  RevokeOutcome::How how = RevokeOutcome::How::kReleased;
};

// One call of Revoke(): the requester's side of the protocol in
// zkrecipes/revocation.h. Deadlines are on the session's monotonic clock.
class Revocation {
 public:
  Revocation(Session& session, std::string path, RevokeOptions options)
      : session_(session),
        core_(*internal::SessionAccess::Core(session)),
        generation_(core_.generation()),
        path_(std::move(path)),
        options_(std::move(options)),
        data_(internal::RevokeRequestData(options_.reason, options_.grace)) {}

  absl::StatusOr<std::vector<RevokeOutcome>> Run() {
    ZKR_RETURN_IF_ERROR(FindHolders());
    absl::Status status = AskForceAndWait();
    DeleteRequests();
    if (!status.ok()) return status;
    std::vector<RevokeOutcome> outcomes;
    for (const Target& target : targets_) outcomes.push_back({target.node, target.how});
    return outcomes;
  }

 private:
  // The holders (every one, or the one named) from one listing. A waiter
  // named is refused: its place is never touched.
  absl::Status FindHolders() {
    ZKR_ASSIGN_OR_RETURN(std::vector<QueueEntryInfo> queue, InspectQueue(session_, path_));
    if (!queue.empty() && queue.front().dialect != Dialect::kZkr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "revoke ", path_, ": its nodes are ", DialectName(queue.front().dialect),
          "'s, which has no revocation requests (its participants would count the request node "
          "as a contender)"));
    }
    bool named_found = false;
    for (const QueueEntryInfo& entry : queue) {
      if (!options_.node.empty()) {
        if (entry.name != options_.node) continue;
        named_found = true;
        if (!entry.holds) {
          return absl::FailedPreconditionError(absl::StrCat(
              "revoke ", path_, ": node ", entry.name,
              " is waiting, not holding (a waiter's place is never touched)"));
        }
      } else if (!entry.holds) {
        continue;
      }
      Target target;
      target.node = entry.name;
      target.node_path = JoinPath(path_, entry.name);
      target.request = internal::RevokeRequestPath(target.node_path);
      target.timeout = internal::PublishedSessionTimeout(entry.data);
      targets_.push_back(std::move(target));
    }
    if (options_.node.empty() || named_found) return absl::OkStatus();
    ZKR_ASSIGN_OR_RETURN(std::optional<Stat> stat,
                         session_.Exists(JoinPath(path_, options_.node)));
    if (!stat.has_value()) {
      return absl::NotFoundError(absl::StrCat("revoke ", path_, ": no node ", options_.node));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "revoke ", path_, ": node ", options_.node, " is not a participant of the queue"));
  }

  absl::Status AskForceAndWait() {
    // Ask every target first, so that all have the whole grace period.
    for (Target& target : targets_) {
      ZKR_ASSIGN_OR_RETURN(bool queue_there, Ask(target));
      target.gone = !queue_there;  // the directory went with its last holder
    }
    const absl::Duration grace_end = core_.clock().Monotonic() + options_.grace;
    for (Target& target : targets_) {
      if (target.gone) continue;
      ZKR_ASSIGN_OR_RETURN(target.gone, WaitGone(target.node_path, grace_end));
    }
    // Still there: mark each one that can hear it (RevokeWatch), then give
    // it until its lease must have ended.
    for (Target& target : targets_) {
      if (target.gone) continue;
      if (!target.timeout.has_value()) {
        // It would not hear of the force and would go on believing it holds.
        target.how = RevokeOutcome::How::kNotForced;
        continue;
      }
      target.how = RevokeOutcome::How::kForced;
      ZKR_RETURN_IF_ERROR(Mark(target));
      // Its answer came after the server applied the mark: the holder's
      // requests answered before the mark were sent before now.
      target.force_end = core_.clock().Monotonic() + *target.timeout;
    }
    for (Target& target : targets_) {
      if (target.gone || target.how != RevokeOutcome::How::kForced) continue;
      // A holder that heard the mark deletes its node itself.
      ZKR_ASSIGN_OR_RETURN(target.gone, WaitGone(target.node_path, target.force_end));
      if (target.gone) continue;
      absl::Status deleted = session_.Delete(target.node_path);
      if (!deleted.ok() && !absl::IsNotFound(deleted)) return deleted;
    }
    return absl::OkStatus();
  }

  // True once `node_path` is gone, false if it is still there at `deadline`.
  absl::StatusOr<bool> WaitGone(const std::string& node_path, absl::Duration deadline) {
    absl::Status status =
        internal::WaitForNode(core_, node_path, /*want_exists=*/false, deadline);
    if (absl::IsDeadlineExceeded(status)) return false;
    if (!status.ok()) return status;
    return true;
  }

  // Creates the target's request unless there is one: a protected create
  // (a reply lost with the connection is looked up by the node's owner,
  // once connected again); ours are deleted when Revoke ends. False if the
  // queue directory is gone.
  absl::StatusOr<bool> Ask(const Target& target) {
    for (int refused = 0;;) {
      // Our requests are our session's: a new one would not delete them.
      if (core_.GenerationOver(generation_)) return internal::SessionLostStatus("revoke", path_);
      absl::StatusOr<CreateResult> created =
          session_.Create(target.request, data_, CreateMode::kEphemeral);
      if (created.ok()) {
        requests_.push_back(target.request);
        return true;
      }
      if (absl::IsAlreadyExists(created.status())) {
        // Asked already — by us, or by another requester whose grace the
        // holder was told. Told a later deadline than ours (or never), it
        // must hear ours before we force it: that request is withdrawn
        // (unless marked meanwhile: then it is being forced already) and
        // ours made in its place, which the holder is told of.
        ZKR_ASSIGN_OR_RETURN(bool replaced, WithdrawLaterRequest(target));
        if (!replaced) return true;
        continue;
      }
      if (absl::IsNotFound(created.status())) return false;
      if (!internal::IsRetryable(created.status())) return created.status();
      ZKR_RETURN_IF_ERROR(AwaitConnected(++refused));
      ZKR_ASSIGN_OR_RETURN(std::optional<Stat> stat, session_.Exists(target.request));
      if (stat.has_value()) {
        if (stat->ephemeral_owner == session_.session_id()) requests_.push_back(target.request);
        return true;
      }
      // Never applied: create it now.
    }
  }

  // Whether another requester's request for `target`, unmarked and telling
  // a later deadline than ours, was deleted (so ours can be made).
  absl::StatusOr<bool> WithdrawLaterRequest(const Target& target) {
    Stat stat;
    absl::StatusOr<std::string> data = session_.Get(target.request, &stat);
    if (absl::IsNotFound(data.status())) return true;  // gone meanwhile: make ours
    if (!data.ok()) return data.status();
    if (stat.ephemeral_owner == session_.session_id() || stat.version > 0) return false;
    if (internal::ParseRevokeRequestData(*data).second <= std::max(options_.grace,
                                                                  absl::ZeroDuration())) {
      return false;  // told no later than ours
    }
    absl::Status deleted = session_.Delete(target.request, stat.version);
    if (deleted.ok() || absl::IsNotFound(deleted)) return true;
    if (ZooKeeperCode(deleted) == ZBADVERSION) return false;  // marked meanwhile
    return deleted;
  }

  // The force mark: a change of the request's data (its holder's
  // RevokeWatch). Made again if its requester deleted it meanwhile.
  absl::Status Mark(const Target& target) {
    for (int refused = 0;;) {
      ZKR_ASSIGN_OR_RETURN(bool queue_there, Ask(target));
      if (!queue_there) return absl::OkStatus();  // the holder's node is gone too
      absl::StatusOr<Stat> marked = session_.Set(target.request, data_);
      if (marked.ok()) return absl::OkStatus();
      if (internal::IsRetryable(marked.status())) {
        ZKR_RETURN_IF_ERROR(AwaitConnected(++refused));  // then mark again: a second change is harmless
      } else if (!absl::IsNotFound(marked.status())) {
        return marked.status();
      }
    }
  }

  // Once connected again (or the session is lost: its requests are gone),
  // paced by the failed `attempt` if still connected.
  absl::Status AwaitConnected(int attempt) {
    return internal::AwaitConnected(core_, generation_, absl::InfiniteDuration(),
                                    absl::StrCat("revoke ", path_), attempt);
  }

  // The guaranteed delete of our requests, waited for (they also go with
  // the session).
  void DeleteRequests() {
    absl::BlockingCounter deleted(static_cast<int>(requests_.size()));
    for (const std::string& request : requests_) {
      internal::Participant::DeleteGuaranteed(
          internal::CoreOf(session_), generation_, request,
          [&deleted](absl::Status) { deleted.DecrementCount(); });
    }
    deleted.Wait();
  }

  Session& session_;
  internal::SessionCore& core_;
  const uint64_t generation_;
  const std::string path_;
  const RevokeOptions options_;
  // The requests' data: our grace (the holder's deadline), then the reason.
  const std::string data_;
  std::vector<Target> targets_;
  std::vector<std::string> requests_;  // ours: deleted at the end
};

}  // namespace

absl::StatusOr<std::vector<RevokeOutcome>> Revoke(Session& session, const std::string& path,
                                                  RevokeOptions options) {
  ZKR_RETURN_IF_ERROR(internal::ValidatePath(path));
  if (!options.node.empty()) ZKR_RETURN_IF_ERROR(internal::ValidateNodeName(options.node));
  return Revocation(session, path, std::move(options)).Run();
}

}  // namespace zkr
