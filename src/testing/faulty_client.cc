#include "src/testing/faulty_client.h"

#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/session_access.h"
#include "src/session_core.h"
#include "src/testing/forwarding_client.h"
#include "src/zk_status.h"

namespace zkr {

using internal::ZkClient;
using internal::ClientFactory;
using internal::OpenCClient;
namespace testing {

void ClientFaults::Add(FaultRule rule) {
  absl::MutexLock lock(&mu_);
  rules_.push_back(std::move(rule));
}

void ClientFaults::Clear() {
  absl::MutexLock lock(&mu_);
  rules_.clear();
}

bool ClientFaults::UsedUp() {
  absl::MutexLock lock(&mu_);
  return rules_.empty();
}

std::optional<FaultRule> ClientFaults::Take(FaultRule::Call call, const std::string& path) {
  absl::MutexLock lock(&mu_);
  calls_.emplace_back(call, path);
  for (auto it = rules_.begin(); it != rules_.end(); ++it) {
    if (it->call != call || !absl::StartsWith(path, it->path_prefix)) continue;
    if (it->skip > 0) {  // not yet: this one passes
      --it->skip;
      return std::nullopt;
    }
    const FaultRule taken = *it;
    if (--it->count <= 0) rules_.erase(it);
    return taken;
  }
  return std::nullopt;
}

int ClientFaults::Calls(FaultRule::Call call, absl::string_view path_prefix) {
  absl::MutexLock lock(&mu_);
  int count = 0;
  for (const auto& [kind, path] : calls_) {
    if (kind == call && absl::StartsWith(path, path_prefix)) ++count;
  }
  return count;
}

void ClientFaults::ReleaseHeld() {
  absl::MutexLock lock(&mu_);
  held_released_ = true;
}

void ClientFaults::AwaitReleased() {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&held_released_), absl::Seconds(30));
}

namespace {

using Call = FaultRule::Call;
using Effect = FaultRule::Effect;

// What the caller of a request `rule` hits sees: a connection loss, or the
// rule's code.
absl::Status Lost(const char* op, const std::string& path, const FaultRule& rule) {
  if (rule.reply_code != 0) return internal::ZkStatus(rule.reply_code, op, path);
  return absl::UnavailableError(absl::StrCat(
      op, " ", path, rule.effect == Effect::kLoseRequest ? ": request lost (injected)"
                                                         : ": reply lost (injected)"));
}

// Forwards everything to the wrapped client except the requests a fault
// rule may apply to.
class FaultyClient final : public ForwardingClient {
 public:
  FaultyClient(std::shared_ptr<ZkClient> inner, std::shared_ptr<ClientFaults> faults)
      : ForwardingClient(std::move(inner)), faults_(std::move(faults)) {}

  void Create(const std::string& path, absl::string_view data, CreateMode mode,
              const std::vector<Acl>& acl, CreateDone done) override {
    Forward(Call::kCreate, "create", path, std::move(done), [&](CreateDone d) {
      inner().Create(path, data, mode, acl, std::move(d));
      return uintptr_t{0};
    });
  }
  void Delete(const std::string& path, int32_t version, VoidDone done) override {
    Forward(Call::kDelete, "delete", path, std::move(done), [&](VoidDone d) {
      inner().Delete(path, version, std::move(d));
      return uintptr_t{0};
    });
  }
  absl::Status DeleteBlocking(const std::string& path, int32_t version) override {
    std::optional<FaultRule> rule = faults_->Take(Call::kDelete, path);
    if (!rule.has_value()) return inner().DeleteBlocking(path, version);
    // A blocking delete's reply is the caller's own wait: nothing to hold.
    if (rule->effect == Effect::kHoldReply) return inner().DeleteBlocking(path, version);
    if (rule->effect == Effect::kDropReply) (void)inner().DeleteBlocking(path, version);
    return Lost("delete", path, *rule);
  }
  uintptr_t Exists(const std::string& path, WatchFn watch, StatDone done) override {
    return Forward(Call::kExists, "exists", path, std::move(done), [&](StatDone d) {
      return inner().Exists(path, std::move(watch), std::move(d));
    });
  }
  uintptr_t Get(const std::string& path, WatchFn watch, DataDone done) override {
    return Forward(Call::kGet, "get", path, std::move(done), [&](DataDone d) {
      return inner().Get(path, std::move(watch), std::move(d));
    });
  }
  void Set(const std::string& path, absl::string_view data, int32_t version,
           StatDone done) override {
    Forward(Call::kSet, "set", path, std::move(done), [&](StatDone d) {
      inner().Set(path, data, version, std::move(d));
      return uintptr_t{0};
    });
  }
  uintptr_t GetChildren(const std::string& path, WatchFn watch, ChildrenDone done) override {
    return Forward(Call::kGetChildren, "get children of", path, std::move(done),
                   [&](ChildrenDone d) {
                     return inner().GetChildren(path, std::move(watch), std::move(d));
                   });
  }
  void Multi(const std::vector<Op>& ops, const std::vector<Acl>& default_acl,
             MultiDone done) override {
    const std::string path = ops.empty() ? std::string() : ops.front().path;
    std::optional<FaultRule> rule = faults_->Take(Call::kMulti, path);
    if (!rule.has_value()) return inner().Multi(ops, default_acl, std::move(done));
    if (rule->effect == Effect::kLoseRequest) return done(Lost("multi at", path, *rule), {});
    if (rule->effect == Effect::kHoldReply) {
      return inner().Multi(ops, default_acl,
                           [faults = faults_, done = std::move(done)](
                               absl::Status status, std::vector<OpResult> results) {
                             faults->AwaitReleased();
                             done(std::move(status), std::move(results));
                           });
    }
    // With a reply code (the C client's ZRUNTIMEINCONSISTENCY after an xid
    // mismatch) the C client reads each op's result too: one per op, with
    // that code, as it would hand them over.
    inner().Multi(ops, default_acl,
                  [path, rule = *rule, done = std::move(done)](absl::Status,
                                                               std::vector<OpResult> real) {
                    const absl::Status lost = Lost("multi at", path, rule);
                    std::vector<OpResult> results;
                    if (rule.reply_code != 0) results.resize(real.size(), OpResult{lost, "", {}});
                    done(lost, std::move(results));
                  });
  }

 private:
  // A request that answers through `done`: lost before it is sent (then no
  // watch is set: id 0), or its reply replaced once the server answered (a
  // watch the server set stays registered under the id returned, as when a
  // real reply is lost with its connection).
  template <typename Done, typename Send>
  uintptr_t Forward(Call call, const char* op, const std::string& path, Done done, Send send) {
    std::optional<FaultRule> rule = faults_->Take(call, path);
    if (!rule.has_value()) return send(std::move(done));
    if (rule->effect == Effect::kLoseRequest) {
      done(Lost(op, path, *rule));
      return 0;
    }
    if (rule->effect == Effect::kHoldReply) {
      return send([faults = faults_, done = std::move(done)](auto reply) {
        faults->AwaitReleased();
        done(std::move(reply));
      });
    }
    return send([op, path, rule = *rule, done = std::move(done)](auto) {
      done(Lost(op, path, rule));
    });
  }

  const std::shared_ptr<ClientFaults> faults_;
};

}  // namespace

std::shared_ptr<ZkClient> WrapWithFaults(std::shared_ptr<ZkClient> inner,
                                         std::shared_ptr<ClientFaults> faults) {
  return std::make_shared<FaultyClient>(std::move(inner), std::move(faults));
}

absl::StatusOr<std::unique_ptr<Session>> ConnectWithFaults(SessionOptions options,
                                                           std::shared_ptr<ClientFaults> faults) {
  ClientFactory factory = [faults](const std::string& connect, absl::Duration timeout,
                                   std::shared_ptr<Clock> clock,
                                   ZkClient::EventFn on_event) -> absl::StatusOr<std::shared_ptr<ZkClient>> {
    absl::StatusOr<std::shared_ptr<ZkClient>> client =
        OpenCClient(connect, timeout, std::move(clock), std::move(on_event));
    if (!client.ok()) return client.status();
    return WrapWithFaults(*std::move(client), faults);
  };
  return internal::SessionAccess::Connect(std::move(options), std::move(factory));
}

}  // namespace testing
}  // namespace zkr
