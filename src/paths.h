// ZooKeeper path and connect-string utilities. Pure functions, thread-safe.
#ifndef ZKRECIPES_SRC_PATHS_H_
#define ZKRECIPES_SRC_PATHS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace zkr {
namespace internal {

// Validates `path` exactly as ZooKeeper's server does (PathUtils.validatePath):
// leading '/', no trailing '/' (except the root), no empty segment, no "." or
// ".." segment, no NUL, control or otherwise forbidden character, valid UTF-8.
// The error names the path and what is wrong with it.
absl::Status ValidatePath(absl::string_view path);

// Validates one path segment (a node name), e.g. a participant id used as
// part of a name: non-empty, no '/', same character rules as ValidatePath.
absl::Status ValidateNodeName(absl::string_view name);

// Validates "host:port[,host:port...][/chroot]" without resolving names:
// non-empty hosts of letters, digits, '.', '-', '_' (or a bracketed IPv6
// literal), ports in 1..65535, and a chroot that is a valid path other than "/".
absl::Status ValidateConnectString(absl::string_view connect);

// "/a/b/c" -> {"/a", "/a/b", "/a/b/c"}: a path's ancestors, then itself —
// what must exist, in creation order, for a node under it to be created.
std::vector<std::string> AncestorsAndSelf(absl::string_view path);

// "/a/b" -> "/a"; "/a" -> "/"; "/" -> "/".
std::string ParentPath(absl::string_view path);
// "/a/b" -> "b"; "/" -> "".
absl::string_view NodeName(absl::string_view path);
// JoinPath("/a", "b") -> "/a/b"; JoinPath("/", "b") -> "/b".
std::string JoinPath(absl::string_view parent, absl::string_view child);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_PATHS_H_
