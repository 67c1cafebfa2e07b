#include "recipes/candidate_data.h"

#include "absl/strings/escaping.h"
#include "src/process_identity.h"

namespace zkr {
namespace internal {

absl::StatusOr<std::string> ParticipantLabel(std::string id, absl::string_view kind) {
  if (id.empty()) id = absl::StrCat(HostName(), "_", ProcessId());
  for (char c : id) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid ", kind, " id \"", absl::CHexEscape(id), "\": control character"));
    }
  }
  return id;
}

absl::Status CheckCandidateData(const SessionCore& core, absl::string_view what,
                                absl::string_view dir, absl::string_view id,
                                absl::string_view data, const std::vector<Acl>* acl) {
  // "<id>_<pid>_<random>-W-<seq>" (NewParticipantId), at its longest.
  const std::string node = absl::StrCat(dir, "/", id, "_4294967295_0123456789abcdef-W--2147483648");
  return core.CheckRequestSize(what, dir,
                               CandidateNodeData(id, data).size() + core.OpBytes(node, acl));
}

}  // namespace internal
}  // namespace zkr
