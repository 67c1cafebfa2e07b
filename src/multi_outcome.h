// A transaction's outcome with every op's result, also when it failed (the
// server's answer says which op failed; Session::Multi keeps only the
// status). For the library's own code: the lock core reads which op failed.
#ifndef ZKRECIPES_SRC_MULTI_OUTCOME_H_
#define ZKRECIPES_SRC_MULTI_OUTCOME_H_

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "src/session_core.h"
#include "zkrecipes/types.h"

namespace zkr {
namespace internal {

struct MultiOutcome {
  MultiOutcome(absl::Status status = absl::OkStatus(), std::vector<OpResult> results = {})
      : status(std::move(status)), results(std::move(results)) {}
  absl::Status status;
  std::vector<OpResult> results;  // one per op once the server answered
};
// Sends `ops` as one transaction on `core`'s session and waits for the
// outcome. Blocks: never on the ZooKeeper completion thread.
MultiOutcome MultiWithResults(SessionCore& core, const std::vector<Op>& ops);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_MULTI_OUTCOME_H_
