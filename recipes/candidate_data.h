// What an election candidate's (or group member's) node holds: its id, then
// (after a newline) the data it publishes (ElectionOptions::data,
// LeaderElection::SetData, GroupMember::SetData). Ids have no control
// characters (ParticipantLabel), so the first newline ends the id.
#ifndef ZKRECIPES_RECIPES_CANDIDATE_DATA_H_
#define ZKRECIPES_RECIPES_CANDIDATE_DATA_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "src/session_core.h"

namespace zkr {
namespace internal {

// A participant's id as given, or "<hostname>_<pid>" if empty;
// InvalidArgument ("invalid <kind> id ...") if it has a control character.
absl::StatusOr<std::string> ParticipantLabel(std::string id, absl::string_view kind);

inline std::string CandidateNodeData(absl::string_view id, absl::string_view data) {
  return data.empty() ? std::string(id) : absl::StrCat(id, "\n", data);
}

// OK when `data` fits in a candidate's (member's) node of `id` under `dir`
// within the session's packet limit (SessionCore::CheckRequestSize), the
// node's name at its longest and `acl` (null: a set) counted; else
// InvalidArgument naming `what` and both sizes.
absl::Status CheckCandidateData(const SessionCore& core, absl::string_view what,
                                absl::string_view dir, absl::string_view id,
                                absl::string_view data, const std::vector<Acl>* acl = nullptr);

inline void ParseCandidateNodeData(absl::string_view node_data, std::string* id,
                                   std::string* data) {
  const size_t newline = node_data.find('\n');
  *id = std::string(node_data.substr(0, newline));
  *data = newline == absl::string_view::npos ? "" : std::string(node_data.substr(newline + 1));
}

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_CANDIDATE_DATA_H_
