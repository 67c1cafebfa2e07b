// Fault injection at the client seam (src/zk_client.h), over a real server:
// a forwarding ZkClient that loses requests or replies by rule, so that a
// test can drive a recipe's engine through "the create succeeded but its
// reply was lost", "the delete was lost with its connection" and the like,
// one request at a time. LevelDB's EnvWrapper is the model.
//
// Example:
//   auto faults = std::make_shared<zkr::testing::ClientFaults>();
//   auto session = zkr::testing::ConnectWithFaults(options, faults);
//   faults->Add({FaultRule::Call::kCreate, FaultRule::Effect::kDropReply, "/locks/a/", 1});
//
// Thread safety: ClientFaults is safe to use from any thread; the wrapped
// client is as thread-safe as the one it forwards to.
#ifndef ZKRECIPES_SRC_TESTING_FAULTY_CLIENT_H_
#define ZKRECIPES_SRC_TESTING_FAULTY_CLIENT_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "src/zk_client.h"
#include "zkrecipes/session.h"

namespace zkr {

namespace testing {

// `count` requests of one kind whose path starts with `path_prefix`, after
// the first `skip` such requests (so: the Nth call of a kind), fail in one
// way.
struct FaultRule {
  // kMulti: a transaction, matched by its first op's path.
  enum class Call { kCreate, kDelete, kExists, kGet, kSet, kGetChildren, kMulti };
  enum class Effect {
    kLoseRequest,  // it never reaches the server: the caller sees Unavailable
    kDropReply,    // the server applies it, the caller sees Unavailable
    // The server applies it; its reply (the real one) reaches the caller
    // only once ClientFaults::ReleaseHeld() is called (at most 30 s later).
    // The completion thread waits meanwhile, so every later reply and watch
    // of the session waits behind it: nothing that comes after is delivered
    // first. For tests that look at what was sent before a reply came.
    kHoldReply,
  };
  Call call = Call::kCreate;
  Effect effect = Effect::kDropReply;
  std::string path_prefix;
  int count = 1;
  int skip = 0;
  // The C client's code the caller sees instead (0: a connection loss,
  // Unavailable). The C client fails every request in flight with
  // ZRUNTIMEINCONSISTENCY when a reply's xid is not the one it expects,
  // as a late reply after a reconnect can make it; the requests may have
  // been applied.
  int reply_code = 0;
};

// The rules every client of a session consults. Rules apply in the order
// added; a used-up rule is dropped.
class ClientFaults {
 public:
  void Add(FaultRule rule) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops every rule.
  void Clear() ABSL_LOCKS_EXCLUDED(mu_);
  // Whether every rule has been used up (the faults did happen).
  bool UsedUp() ABSL_LOCKS_EXCLUDED(mu_);
  // The first rule that applies to a `call` on `path` (counting it), or
  // nullopt if none does.
  std::optional<FaultRule> Take(FaultRule::Call call, const std::string& path)
      ABSL_LOCKS_EXCLUDED(mu_);
  // How many `call` requests on paths starting with `path_prefix` the
  // session's clients have been asked to send (faulty or not).
  int Calls(FaultRule::Call call, absl::string_view path_prefix) ABSL_LOCKS_EXCLUDED(mu_);
  // Lets the replies a kHoldReply rule holds (and any it holds later) go.
  void ReleaseHeld() ABSL_LOCKS_EXCLUDED(mu_);
  // A kHoldReply rule's reply has come: waits (at most 30 s) for ReleaseHeld().
  void AwaitReleased() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  bool held_released_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<FaultRule> rules_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<FaultRule::Call, std::string>> calls_ ABSL_GUARDED_BY(mu_);
};

// `inner`, with `faults` applied to its requests.
std::shared_ptr<internal::ZkClient> WrapWithFaults(std::shared_ptr<internal::ZkClient> inner,
                                         std::shared_ptr<ClientFaults> faults);

// Connects a session whose every generation's client is the C client's
// adaptor wrapped with `faults`.
absl::StatusOr<std::unique_ptr<Session>> ConnectWithFaults(SessionOptions options,
                                                           std::shared_ptr<ClientFaults> faults);

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_SRC_TESTING_FAULTY_CLIENT_H_
