// Internal status-propagation macros (Debian's Abseil 20220623 has none).
#ifndef ZKRECIPES_SRC_MACROS_H_
#define ZKRECIPES_SRC_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ZKR_CONCAT_IMPL(a, b) a##b
#define ZKR_CONCAT(a, b) ZKR_CONCAT_IMPL(a, b)

// ZKR_RETURN_IF_ERROR(expr): returns the status of `expr` if it is not OK.
#define ZKR_RETURN_IF_ERROR(expr)                          \
  do {                                                     \
    ::absl::Status zkr_status_ = (expr);                   \
    if (!zkr_status_.ok()) return zkr_status_;             \
  } while (0)

// ZKR_ASSIGN_OR_RETURN(lhs, expr): evaluates the StatusOr `expr`; returns its
// status on error, else moves its value into `lhs` (which may declare).
#define ZKR_ASSIGN_OR_RETURN(lhs, expr) \
  ZKR_ASSIGN_OR_RETURN_IMPL(ZKR_CONCAT(zkr_statusor_, __LINE__), lhs, expr)
#define ZKR_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return std::move(tmp).status();  \
  lhs = std::move(tmp).value()

#endif  // ZKRECIPES_SRC_MACROS_H_
