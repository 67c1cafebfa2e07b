// What a double-barrier member's node holds: its id, then (after a newline)
// "zkr double barrier of <count>". Member nodes are named like a lock's or a
// candidate's ("<id>_<pid>_<random>-W-<seq>"); the data is what tells
// InspectQueue that they are members, which neither hold nor wait on each
// other. Ids have no control characters (ParticipantLabel).
#ifndef ZKRECIPES_RECIPES_BARRIER_MEMBER_H_
#define ZKRECIPES_RECIPES_BARRIER_MEMBER_H_

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "recipes/candidate_data.h"

namespace zkr {
namespace internal {

inline constexpr absl::string_view kBarrierMemberMark = "zkr double barrier of ";

inline std::string BarrierMemberData(absl::string_view id, int count) {
  return CandidateNodeData(id, absl::StrCat(kBarrierMemberMark, count));
}

// True (and the id and count) if `node_data` is a member's.
inline bool ParseBarrierMemberData(absl::string_view node_data, std::string* id, int* count) {
  std::string rest;
  ParseCandidateNodeData(node_data, id, &rest);
  absl::string_view tail = rest;
  return absl::ConsumePrefix(&tail, kBarrierMemberMark) && absl::SimpleAtoi(tail, count);
}

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_BARRIER_MEMBER_H_
