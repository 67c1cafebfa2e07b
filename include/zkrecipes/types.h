// The value types every part of zkrecipes speaks: node metadata, ACLs,
// create modes, multi-op transactions, watch events, session and lock states.
// A leaf: it includes nothing of zkrecipes, and everything else may include
// it (the public headers, and the library's own src/ and recipes/).
#ifndef ZKRECIPES_TYPES_H_
#define ZKRECIPES_TYPES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace zkr {

// The connection state as recipes need it (see design.md):
enum class SessionState {
  kConnecting,   // not yet connected for the first time
  kConnected,    // connected; a new generation starts here
  kSuspended,    // disconnected; the session may still be alive until
                 // valid_until(): stop acting on locks/leadership, or act only
                 // with a fencing token
  kReconnected,  // connected again to the same session: ephemeral nodes and
                 // watches survived
  kLost,         // the session is gone (expired, auth failed, or its lease
                 // ran out while disconnected): its ephemeral nodes are gone or
                 // will be; a new session is being opened
  kClosed,       // Close() was called
};

// "CONNECTED", "SUSPENDED", ...
absl::string_view SessionStateName(SessionState state);

// A znode's metadata (ZooKeeper's Stat).
struct Stat {
  int64_t czxid = 0;           // zxid of the create: our fencing token
  int64_t mzxid = 0;           // zxid of the last data change
  int64_t ctime = 0;           // creation time, ms since the epoch
  int64_t mtime = 0;           // last modification, ms since the epoch
  int32_t version = 0;         // data version
  int32_t cversion = 0;        // children version
  int32_t aversion = 0;        // ACL version
  int64_t ephemeral_owner = 0; // owning session id, 0 if not ephemeral
  int32_t data_length = 0;
  int32_t num_children = 0;
  int64_t pzxid = 0;           // zxid of the last child change
};

enum class CreateMode {
  kPersistent,
  kEphemeral,
  kPersistentSequential,
  kEphemeralSequential,
  kContainer,  // deleted by the server once its last child is gone
};

// Permission bits for Acl::perms.
inline constexpr int kPermRead = 1;
inline constexpr int kPermWrite = 2;
inline constexpr int kPermCreate = 4;
inline constexpr int kPermDelete = 8;
inline constexpr int kPermAdmin = 16;
inline constexpr int kPermAll = 31;

// One ACL entry, e.g. {"digest", "alice:<base64 sha1>", kPermAll},
// {"world", "anyone", kPermRead}, {"auth", "", kPermAll} (= the creator's
// authenticated identities).
struct Acl {
  std::string scheme;
  std::string id;
  int perms = kPermAll;
};
// world:anyone with every permission.
std::vector<Acl> OpenAcl();
// Every permission for the creator's authenticated identities only.
std::vector<Acl> CreatorAllAcl();

// The C client's log verbosity.
enum class ClientLogLevel { kError = 1, kWarn = 2, kInfo = 3, kDebug = 4 };

struct CreateResult {
  std::string path;  // with the sequence suffix for sequential nodes
  Stat stat;
};

// One operation of a multi-op transaction.
struct Op {
  enum class Type { kCreate, kDelete, kSetData, kCheck };
  static Op Create(std::string path, std::string data, CreateMode mode,
                   std::vector<Acl> acl = {});
  static Op Delete(std::string path, int32_t version = -1);
  static Op SetData(std::string path, std::string data, int32_t version = -1);
  // Succeeds only if `path` exists (and has `version`, unless -1).
  static Op Check(std::string path, int32_t version = -1);

  Type type = Type::kCheck;
  std::string path;
  std::string data;
  CreateMode mode = CreateMode::kPersistent;
  std::vector<Acl> acl;
  int32_t version = -1;
};

struct OpResult {
  absl::Status status;
  std::string path;  // created path, for kCreate
  Stat stat;         // for kSetData
};

// A watch notification.
struct WatchEvent {
  enum class Type { kCreated, kDeleted, kDataChanged, kChildrenChanged };
  Type type;
  std::string path;
};
// Runs once, on the dispatcher thread. A watch set on a session generation
// that becomes LOST never fires: listen for kLost instead.
using WatchCallback = std::function<void(const WatchEvent& event)>;

// Runs on the dispatcher thread for every state change, in order.
using StateListener = std::function<void(SessionState state, uint64_t generation)>;

// The state of one lock hold (LockGuard::state()).
enum class LockState {
  kHeld,       // held, and the session is connected
  kSuspended,  // the session is disconnected: possibly lost
  kLost,       // lost for good (session lost, or the node was deleted)
  kReleased,   // released by us (or never held)
};
// "HELD", "SUSPENDED", "LOST", "RELEASED".
absl::string_view LockStateName(LockState state);

// Whose node names a lock or an election speaks (LockOptions::dialect,
// ElectionOptions::dialect), so that it shares one queue with that
// library's processes; README "Working with Curator and Kazoo".
enum class Dialect {
  kZkr,      // ours: "<host>_<pid>_<random>-R-<seq>" / "-W-<seq>"
  kCurator,  // Apache Curator 5: "_c_<uuid>-lock-<seq>" (InterProcessMutex),
             // "-__READ__<seq>" / "-__WRIT__<seq>" (InterProcessReadWriteLock),
             // "-latch-<seq>" (LeaderLatch)
  kKazoo,    // Kazoo 2: "<uuid hex>__lock__<seq>" (Lock, WriteLock, Election),
             // "__rlock__<seq>" (ReadLock)
};
// "zkr", "curator", "kazoo".
absl::string_view DialectName(Dialect dialect);

}  // namespace zkr

#endif  // ZKRECIPES_TYPES_H_
