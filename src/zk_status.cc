#include "src/zk_status.h"

#include <zookeeper/zookeeper.h>

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {
namespace {
constexpr char kZooKeeperCodeUrl[] = "zkrecipes/zookeeper-code";
// The server's UNKNOWNSESSION, which the C client passes through without a
// name of its own: the answer to a request of a session the server has
// already dropped (expired or closed), sent before it closes the connection.
// The session is lost, as with ZSESSIONEXPIRED.
constexpr int kUnknownSession = -12;
}  // namespace

absl::StatusCode ZkCodeToStatusCode(int rc) {
  switch (rc) {
    case ZOK:
      return absl::StatusCode::kOk;
    case ZNONODE:
    case ZNOWATCHER:
      return absl::StatusCode::kNotFound;
    case ZNODEEXISTS:
      return absl::StatusCode::kAlreadyExists;
    case ZBADVERSION:
    case ZSESSIONEXPIRED:
    case ZINVALIDSTATE:
    case kUnknownSession:
      return absl::StatusCode::kAborted;
    case ZNOTEMPTY:
    case ZNOCHILDRENFOREPHEMERALS:
      return absl::StatusCode::kFailedPrecondition;
    case ZNOAUTH:
      return absl::StatusCode::kPermissionDenied;
    case ZAUTHFAILED:
    case ZSESSIONCLOSEDREQUIRESASLAUTH:
      return absl::StatusCode::kUnauthenticated;
    case ZCONNECTIONLOSS:
    case ZOPERATIONTIMEOUT:
    case ZSESSIONMOVED:
    case ZTHROTTLEDOP:
    // A reply whose xid is not the one the C client expects (a late reply
    // after a reconnect, seen under faults): it drops the connection and
    // fails every request in flight with this code. A connection loss,
    // outcome unknown — not an internal error.
    case ZRUNTIMEINCONSISTENCY:
      return absl::StatusCode::kUnavailable;
    case ZBADARGUMENTS:
    case ZINVALIDACL:
      return absl::StatusCode::kInvalidArgument;
    case ZCLOSING:
      return absl::StatusCode::kCancelled;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status ZkStatus(int rc, absl::string_view op, absl::string_view path) {
  if (rc == ZOK) return absl::OkStatus();
  absl::Status status(ZkCodeToStatusCode(rc),
                      absl::StrCat(op, " ", path, ": ",
                                   rc == kUnknownSession ? "unknown session" : zerror(rc), " (",
                                   rc, ")"));
  status.SetPayload(kZooKeeperCodeUrl, absl::Cord(absl::StrCat(rc)));
  return status;
}

bool IsRetryable(const absl::Status& status) { return absl::IsUnavailable(status); }

absl::Status SessionLostStatus(absl::string_view op, absl::string_view path) {
  return ZkStatus(ZSESSIONEXPIRED, op, path);
}

absl::Status Restate(const absl::Status& status, absl::string_view message) {
  absl::Status restated(status.code(), message);
  status.ForEachPayload([&restated](absl::string_view url, const absl::Cord& payload) {
    restated.SetPayload(url, payload);
  });
  return restated;
}

}  // namespace internal

// ---- the public part (zkrecipes/status.h) ----

std::optional<int> ZooKeeperCode(const absl::Status& status) {
  auto payload = status.GetPayload(internal::kZooKeeperCodeUrl);
  int rc = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &rc)) {
    return std::nullopt;
  }
  return rc;
}

bool IsSessionLost(const absl::Status& status) {
  std::optional<int> rc = ZooKeeperCode(status);
  return rc.has_value() && (*rc == ZSESSIONEXPIRED || *rc == ZINVALIDSTATE ||
                            *rc == internal::kUnknownSession);
}

}  // namespace zkr
