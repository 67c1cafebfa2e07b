// Names for the queue decision's tests (queue_decision_test.cc,
// queue_decision_random_test.cc): a reader's and a writer's node name as a
// participant's create ends up, and a decision or a child list spelled for a
// failure message.
#ifndef ZKRECIPES_TESTS_SUPPORT_QUEUE_DECISION_NAMES_H_
#define ZKRECIPES_TESTS_SUPPORT_QUEUE_DECISION_NAMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "recipes/queue_decision.h"

namespace zkr {
namespace testing {

using internal::QueueDecision;

// "<participant>-<M>-<%010d seq>", exactly as a participant's create ends up.
inline std::string R(absl::string_view participant, int32_t sequence) {
  return absl::StrFormat("%s-R-%010d", participant, sequence);
}
inline std::string W(absl::string_view participant, int32_t sequence) {
  return absl::StrFormat("%s-W-%010d", participant, sequence);
}

inline const char* KindName(QueueDecision::Kind kind) {
  switch (kind) {
    case QueueDecision::Kind::kAcquired:
      return "kAcquired";
    case QueueDecision::Kind::kWait:
      return "kWait";
    case QueueDecision::Kind::kLost:
      return "kLost";
    case QueueDecision::Kind::kOtherKind:
      return "kOtherKind";
  }
  return "?";
}

inline std::string Describe(const QueueDecision& decision) {
  if (decision.kind != QueueDecision::Kind::kWait) return KindName(decision.kind);
  return absl::StrCat("kWait(", absl::CHexEscape(decision.watch), ")");
}

inline std::string DescribeChildren(const std::vector<std::string>& children) {
  return absl::StrCat("[", absl::StrJoin(children, ", ", [](std::string* out, const std::string& s) {
                        absl::StrAppend(out, "\"", absl::CHexEscape(s), "\"");
                      }),
                      "]");
}

inline bool SameDecision(const QueueDecision& a, const QueueDecision& b) {
  return a.kind == b.kind && (a.kind != QueueDecision::Kind::kWait || a.watch == b.watch);
}

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_QUEUE_DECISION_NAMES_H_
