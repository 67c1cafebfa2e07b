// zkr::LeaderElection: the public face of one candidate (ElectionCore,
// recipes/election_core.h); the selector is in recipes/leader_selector.cc.
#include "zkrecipes/leader_election.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "recipes/candidate_data.h"
#include "recipes/election_core.h"
#include "recipes/member_node.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/session_access.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_observer.h"

namespace zkr {

using internal::ValidatePath;

absl::string_view LeadershipName(Leadership leadership) {
  switch (leadership) {
    case Leadership::kLeader: return "LEADER";
    case Leadership::kSuspended: return "SUSPENDED";
    case Leadership::kNotLeader: return "NOT_LEADER";
  }
  return "UNKNOWN";
}

// ---- LeaderElection ---------------------------------------------------------

LeaderElection::LeaderElection(std::shared_ptr<internal::ElectionCore> core)
    : core_(std::move(core)) {}

LeaderElection::~LeaderElection() {
  core_->StopNotifying();
  core_->Shutdown();
}

absl::StatusOr<std::unique_ptr<LeaderElection>> LeaderElection::Create(Session& session,
                                                                       std::string path,
                                                                       ElectionOptions options) {
  ZKR_RETURN_IF_ERROR(ValidatePath(path));
  if (path == "/") return absl::InvalidArgumentError("invalid election path \"/\"");
  ZKR_ASSIGN_OR_RETURN(options.id, internal::ParticipantLabel(std::move(options.id), "candidate"));
  if (options.dialect != Dialect::kZkr && !options.data.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "election ", path, ": dialect ", DialectName(options.dialect),
        " stores the id alone in a candidate's node (its peers read it as the id); leave data "
        "empty"));
  }
  ZKR_RETURN_IF_ERROR(internal::CheckCandidateData(*internal::CoreOf(session),
                                                  "candidate data for election", path, options.id,
                                                  options.data, &options.acl));
  auto core = std::make_shared<internal::ElectionCore>(session, std::move(path), std::move(options));
  return std::unique_ptr<LeaderElection>(new LeaderElection(std::move(core)));
}

absl::Status LeaderElection::Join() { return core_->Join(); }
absl::Status LeaderElection::Leave() { return core_->Leave(); }
absl::Status LeaderElection::Yield() { return core_->Yield(); }
absl::Status LeaderElection::SetData(std::string data) { return core_->SetData(std::move(data)); }

absl::Status LeaderElection::LeaveAndHandOver(absl::Duration timeout) {
  // On the session's monotonic clock: a wall-clock step neither stretches
  // nor cuts the wait (an infinite timeout stays infinite).
  const Clock& clock = internal::CoreOf(core_->session())->clock();
  const absl::Duration end = clock.Monotonic() + timeout;
  const std::string ours = core_->node_path();
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<LeaderObserver> observer,
                       LeaderObserver::Create(core_->session(), core_->path()));
  ZKR_RETURN_IF_ERROR(Leave());
  std::optional<LeaderInfo> seen;
  absl::StatusOr<std::optional<LeaderInfo>> now = observer->Current(end - clock.Monotonic());
  while (now.ok()) {
    seen = *now;
    // In a dialect nobody marks a take-over: the next candidate first in
    // the queue is the successor.
    const bool successor = seen.has_value() &&
                           internal::JoinPath(core_->path(), seen->node) != ours &&
                           (seen->taken_over || core_->dialect() != Dialect::kZkr);
    if (successor) return absl::OkStatus();
    now = observer->AwaitChange(seen, end - clock.Monotonic());
  }
  return absl::DeadlineExceededError(absl::StrCat("leave election ", core_->path(),
                                                  ": left, but no successor took over within ",
                                                  absl::FormatDuration(timeout)));
}
bool LeaderElection::joined() const { return core_->joined(); }
bool LeaderElection::IsLeader() const { return core_->leadership() == Leadership::kLeader; }
Leadership LeaderElection::leadership() const { return core_->leadership(); }
absl::Status LeaderElection::AwaitLeadership(absl::Duration timeout) {
  return core_->AwaitLeadership(timeout);
}
int64_t LeaderElection::epoch() const { return core_->epoch(); }
const std::string& LeaderElection::path() const { return core_->path(); }
const std::string& LeaderElection::id() const { return core_->id(); }

namespace {

std::string IdOf(const QueueEntryInfo& entry) {
  std::string id, data;
  internal::ParseCandidateNodeData(entry.data, &id, &data);
  return id;
}

}  // namespace

absl::StatusOr<std::optional<std::string>> LeaderElection::CurrentLeader() {
  ZKR_ASSIGN_OR_RETURN(std::vector<QueueEntryInfo> queue,
                       InspectQueue(core_->session(), core_->path()));
  if (queue.empty()) return std::optional<std::string>();
  return std::optional<std::string>(IdOf(queue.front()));
}

absl::StatusOr<std::vector<std::string>> LeaderElection::Participants() {
  ZKR_ASSIGN_OR_RETURN(std::vector<QueueEntryInfo> queue,
                       InspectQueue(core_->session(), core_->path()));
  std::vector<std::string> ids;
  for (const QueueEntryInfo& entry : queue) ids.push_back(IdOf(entry));
  return ids;
}

}  // namespace zkr
