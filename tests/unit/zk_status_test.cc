#include "src/zk_status.h"

#include <zookeeper/zookeeper.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "zkrecipes/status.h"

namespace zkr {

using internal::ZkStatus;
using internal::SessionLostStatus;
namespace {

TEST(ZkStatusTest, MapsEveryDocumentedCode) {
  struct Case {
    int rc;
    absl::StatusCode code;
  } cases[] = {
      {ZNONODE, absl::StatusCode::kNotFound},
      {ZNOWATCHER, absl::StatusCode::kNotFound},
      {ZNODEEXISTS, absl::StatusCode::kAlreadyExists},
      {ZBADVERSION, absl::StatusCode::kAborted},
      {ZNOTEMPTY, absl::StatusCode::kFailedPrecondition},
      {ZNOCHILDRENFOREPHEMERALS, absl::StatusCode::kFailedPrecondition},
      {ZNOAUTH, absl::StatusCode::kPermissionDenied},
      {ZAUTHFAILED, absl::StatusCode::kUnauthenticated},
      {ZCONNECTIONLOSS, absl::StatusCode::kUnavailable},
      {ZOPERATIONTIMEOUT, absl::StatusCode::kUnavailable},
      {ZSESSIONMOVED, absl::StatusCode::kUnavailable},
      {ZSESSIONEXPIRED, absl::StatusCode::kAborted},
      {ZINVALIDSTATE, absl::StatusCode::kAborted},
      {ZBADARGUMENTS, absl::StatusCode::kInvalidArgument},
      {ZINVALIDACL, absl::StatusCode::kInvalidArgument},
      {ZCLOSING, absl::StatusCode::kCancelled},
      {ZSYSTEMERROR, absl::StatusCode::kInternal},
      {ZMARSHALLINGERROR, absl::StatusCode::kInternal},
      // An xid mismatch: the C client drops the connection and fails every
      // request in flight with it (outcome unknown), as for a connection loss.
      {ZRUNTIMEINCONSISTENCY, absl::StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    absl::Status status = ZkStatus(c.rc, "create", "/locks/a");
    EXPECT_EQ(status.code(), c.code) << c.rc;
    EXPECT_EQ(ZooKeeperCode(status), c.rc);
    EXPECT_EQ(status.message(),
              absl::StrCat("create /locks/a: ", zerror(c.rc), " (", c.rc, ")"));
  }
  EXPECT_TRUE(ZkStatus(ZOK, "get", "/").ok());
}

TEST(ZkStatusTest, TellsSessionLossFromVersionConflict) {
  EXPECT_TRUE(IsSessionLost(ZkStatus(ZSESSIONEXPIRED, "get", "/a")));
  EXPECT_TRUE(IsSessionLost(SessionLostStatus("lock", "/a")));
  EXPECT_FALSE(IsSessionLost(ZkStatus(ZBADVERSION, "set", "/a")));
  EXPECT_FALSE(IsSessionLost(absl::AbortedError("not from ZooKeeper")));
  EXPECT_EQ(ZooKeeperCode(absl::AbortedError("x")), std::nullopt);
}

// The server's UNKNOWNSESSION (-12; not among the C client's codes): it
// answers a request of a session it has dropped, before the connection
// closes (review 44 saw it end a waiter INTERNAL). The session is lost.
TEST(ZkStatusTest, AnUnknownSessionIsALostSession) {
  absl::Status status = ZkStatus(-12, "get children of", "/locks/a");
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
  EXPECT_TRUE(IsSessionLost(status)) << status;
  EXPECT_EQ(ZooKeeperCode(status), -12);
  EXPECT_EQ(status.message(), "get children of /locks/a: unknown session (-12)");
}

}  // namespace
}  // namespace zkr
