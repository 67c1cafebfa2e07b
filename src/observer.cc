#include "zkrecipes/observer.h"

namespace zkr {

absl::string_view AcquisitionKindName(AcquisitionKind kind) {
  switch (kind) {
    case AcquisitionKind::kRead: return "read";
    case AcquisitionKind::kWrite: return "write";
    case AcquisitionKind::kLease: return "lease";
  }
  return "?";
}

absl::string_view TermEndName(TermEnded::Why why) {
  switch (why) {
    case TermEnded::Why::kYielded: return "yielded";
    case TermEnded::Why::kLeft: return "left";
    case TermEnded::Why::kLost: return "lost";
  }
  return "?";
}

}  // namespace zkr
