#include "zkrecipes/version.h"

#include <zookeeper/zookeeper_version.h>

namespace zkr {

absl::string_view Version() { return ZKRECIPES_VERSION_STRING; }

absl::string_view ZooKeeperClientVersion() { return ZOO_VERSION; }

}  // namespace zkr
