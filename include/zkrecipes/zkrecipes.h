// zkrecipes: coordination recipes on Apache ZooKeeper — the umbrella header.
//
// Includes every public header: the session manager, the read/write and
// exclusive locks, the multi-lock, the semaphore, the standard-library
// adapters, leader election, barriers and queue inspection. The test
// fixtures (zkrecipes/testing/zookeeper_server.h, library
// zkrecipes::testing) are separate.
//
// Example:
//   #include "zkrecipes/zkrecipes.h"
//   zkr::SessionOptions options;
//   options.connect = "zk1:2181,zk2:2181,zk3:2181";
//   auto session = zkr::Session::Connect(options);
#ifndef ZKRECIPES_ZKRECIPES_H_
#define ZKRECIPES_ZKRECIPES_H_

#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/observer.h"
#include "zkrecipes/revocation.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"
#include "zkrecipes/std_lock.h"
#include "zkrecipes/version.h"

#endif  // ZKRECIPES_ZKRECIPES_H_
