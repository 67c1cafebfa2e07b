# A consumer's own FindZooKeeper.cmake, of the common kind that sets
# variables and defines no target: zkrecipes' package must not depend on
# which FindZooKeeper.cmake comes first on the consumer's module path.
find_path(ZooKeeper_INCLUDE_DIR zookeeper/zookeeper.h)
find_library(ZooKeeper_LIBRARY zookeeper_mt)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ZooKeeper REQUIRED_VARS ZooKeeper_LIBRARY ZooKeeper_INCLUDE_DIR)
