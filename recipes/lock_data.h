// What a zkr-dialect lock or semaphore participant stores in its node, for
// operators (`zkr ls`, `zkr inspect`): one "key=value" line each for its
// pid, mode, purpose and request time. The writer (the lock engine) and the
// reader (zkr) share this one definition. Purposes have no newline (the
// lock refuses one), so each field is one line.
#ifndef ZKRECIPES_RECIPES_LOCK_DATA_H_
#define ZKRECIPES_RECIPES_LOCK_DATA_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "recipes/queue_node.h"

namespace zkr {
namespace internal {

inline absl::string_view LockModeName(NodeMode mode) {
  switch (mode) {
    case NodeMode::kRead: return "read";
    case NodeMode::kWrite: return "write";
    case NodeMode::kLease: return "lease";
  }
  return "?";
}

// The node data of a participant of process `pid` acquiring in `mode`,
// requested at `requested_ms` (Unix milliseconds).
inline std::string LockNodeData(int64_t pid, NodeMode mode, absl::string_view purpose,
                                int64_t requested_ms) {
  return absl::StrCat("pid=", pid, "\nmode=", LockModeName(mode), "\npurpose=", purpose,
                      "\nrequested_ms=", requested_ms, "\n");
}

// The fields of LockNodeData() as written (text: a reader shows them).
struct LockNodeFields {
  std::string pid;
  std::string mode;
  std::string purpose;
  std::string requested_ms;
};

// The fields of `data` if it is a zkr lock's node data (it starts with the
// pid and has a mode line), else nullopt: another library's, an election
// candidate's or a group member's.
inline std::optional<LockNodeFields> ParseLockNodeData(absl::string_view data) {
  if (!absl::StartsWith(data, "pid=") || !absl::StrContains(data, "\nmode=")) return std::nullopt;
  LockNodeFields fields;
  for (absl::string_view line : absl::StrSplit(data, '\n')) {
    const size_t equals = line.find('=');
    if (equals == absl::string_view::npos) continue;
    const absl::string_view key = line.substr(0, equals), value = line.substr(equals + 1);
    if (key == "pid") fields.pid = std::string(value);
    if (key == "mode") fields.mode = std::string(value);
    if (key == "purpose") fields.purpose = std::string(value);
    if (key == "requested_ms") fields.requested_ms = std::string(value);
  }
  return fields;
}

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_RECIPES_LOCK_DATA_H_
