// zkr::Session: the public face of SessionCore. Every operation exists once,
// as an asynchronous "Start" function completing on the C client's thread;
// the synchronous forms wait for it (with retries for idempotent ones) and
// the asynchronous forms hop to the dispatcher thread.
#include "zkrecipes/session.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "src/macros.h"
#include "src/paths.h"
#include "src/retry.h"
#include "src/multi_outcome.h"
#include "src/session_core.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {

using internal::Delivering;
using internal::NodeData;
using internal::OnCompletionThread;
using internal::RetryBlocking;
using internal::RetryPlan;
using internal::ValidatePath;
using internal::ZkClient;

using internal::SessionCore;

absl::string_view SessionStateName(SessionState state) {
  switch (state) {
    case SessionState::kConnecting: return "CONNECTING";
    case SessionState::kConnected: return "CONNECTED";
    case SessionState::kSuspended: return "SUSPENDED";
    case SessionState::kReconnected: return "RECONNECTED";
    case SessionState::kLost: return "LOST";
    case SessionState::kClosed: return "CLOSED";
  }
  return "UNKNOWN";
}

std::vector<Acl> OpenAcl() { return {Acl{"world", "anyone", kPermAll}}; }
std::vector<Acl> CreatorAllAcl() { return {Acl{"auth", "", kPermAll}}; }

Op Op::Create(std::string path, std::string data, CreateMode mode, std::vector<Acl> acl) {
  Op op;
  op.type = Type::kCreate;
  op.path = std::move(path);
  op.data = std::move(data);
  op.mode = mode;
  op.acl = std::move(acl);
  return op;
}
Op Op::Delete(std::string path, int32_t version) {
  Op op;
  op.type = Type::kDelete;
  op.path = std::move(path);
  op.version = version;
  return op;
}
Op Op::SetData(std::string path, std::string data, int32_t version) {
  Op op;
  op.type = Type::kSetData;
  op.path = std::move(path);
  op.data = std::move(data);
  op.version = version;
  return op;
}
Op Op::Check(std::string path, int32_t version) {
  Op op;
  op.type = Type::kCheck;
  op.path = std::move(path);
  op.version = version;
  return op;
}

namespace {

template <typename T>
using Done = std::function<void(T)>;

// Checks the session and path, then hands the current client to `start`;
// completes with the error instead when they are not usable.
template <typename T>
void Start(SessionCore& core, absl::string_view op, const std::string& path,
           std::function<void(ZkClient&)> start, const Done<T>& done) {
  absl::Status valid = ValidatePath(path);
  if (!valid.ok()) return done(T(valid));
  if (core.closed()) {
    return done(T(absl::FailedPreconditionError(absl::StrCat(op, " ", path, ": session is closed"))));
  }
  if (OnCompletionThread()) {
    // Unreachable from zkrecipes' code: a synchronous wait here would deadlock.
    return done(T(absl::FailedPreconditionError(absl::StrCat(
        op, " ", path, ": called on the ZooKeeper completion thread"))));
  }
  SessionCore::Handle handle = core.current();
  start(*handle.client);
}

// Waits for one asynchronous operation. Safe to keep on the stack: every
// completion runs exactly once, so Wait() always returns after it.
template <typename T>
class Waiter {
 public:
  Done<T> callback() {
    return [this](T value) {
      result_.emplace(std::move(value));
      done_.Notify();
    };
  }
  T Wait() {
    done_.WaitForNotification();
    return std::move(*result_);
  }

 private:
  absl::Notification done_;
  std::optional<T> result_;
};

template <typename T>
T RunSync(const std::function<void(Done<T>)>& start) {
  Waiter<T> waiter;
  start(waiter.callback());
  return waiter.Wait();
}

// Retries an idempotent operation on Unavailable with bounded exponential
// backoff and jitter (SessionOptions::retry; src/retry.h).
// Each retry is reported to the session's observer as `operation` on `path`.
template <typename T>
T RunSyncWithRetry(SessionCore& core, absl::string_view operation,
                   const std::string& path,
                   const std::function<void(Done<T>)>& start) {
  RetryPlan plan;
  plan.operation = std::string(operation);
  plan.path = path;
  plan.backoff = &core.options().retry;
  return RetryBlocking(core, plan, [&] { return RunSync<T>(start); });
}

// ---- the operations, once each -------------------------------------------

void StartCreate(SessionCore& core, const std::string& path, std::string data, CreateMode mode,
                 std::vector<Acl> acl, Done<absl::StatusOr<CreateResult>> done) {
  absl::Status fits =
      core.CheckRequestSize("create", path, data.size() + core.OpBytes(path, &acl));
  if (!fits.ok()) return done(fits);
  Start<absl::StatusOr<CreateResult>>(
      core, "create", path,
      [&](ZkClient& client) {
        client.Create(path, data, mode, acl.empty() ? core.default_acl() : acl, done);
      },
      done);
}

// The user's `watch` on `path`, run on the dispatcher, holding its room in
// the session's watch budget until it runs or is dropped with its session
// (SessionCore::ReservedWatch); null for none.
absl::StatusOr<ZkClient::WatchFn> UserWatch(SessionCore& core, absl::string_view op,
                                            const std::string& path, WatchCallback watch) {
  if (watch == nullptr) return ZkClient::WatchFn();
  ZKR_RETURN_IF_ERROR(ValidatePath(path));  // its error first
  return core.ReservedWatch(path, absl::StrCat(op, " ", path, " with a watch"),
                            Delivering(core.dispatcher(), nullptr, std::move(watch)));
}

void StartGet(SessionCore& core, const std::string& path, WatchCallback watch,
              Done<absl::StatusOr<NodeData>> done) {
  absl::StatusOr<ZkClient::WatchFn> watch_fn = UserWatch(core, "get", path, std::move(watch));
  if (!watch_fn.ok()) return done(watch_fn.status());
  Start<absl::StatusOr<NodeData>>(
      core, "get", path,
      [&](ZkClient& client) { client.Get(path, *std::move(watch_fn), done); },
      done);
}

void StartSet(SessionCore& core, const std::string& path, std::string data, int32_t version,
              Done<absl::StatusOr<Stat>> done) {
  absl::Status fits = core.CheckRequestSize("set", path, data.size() + core.OpBytes(path));
  if (!fits.ok()) return done(fits);
  Start<absl::StatusOr<Stat>>(
      core, "set", path,
      [&](ZkClient& client) {
        client.Set(path, data, version, done);
      },
      done);
}

void StartDelete(SessionCore& core, const std::string& path, int32_t version,
                 Done<absl::Status> done) {
  Start<absl::Status>(
      core, "delete", path,
      [&](ZkClient& client) {
        client.Delete(path, version, done);
      },
      done);
}

void StartExists(SessionCore& core, const std::string& path, WatchCallback watch,
                 Done<absl::StatusOr<std::optional<Stat>>> done) {
  absl::StatusOr<ZkClient::WatchFn> watch_fn = UserWatch(core, "exists", path, std::move(watch));
  if (!watch_fn.ok()) return done(watch_fn.status());
  Start<absl::StatusOr<std::optional<Stat>>>(
      core, "exists", path,
      [&](ZkClient& client) {
        client.Exists(path, *std::move(watch_fn),
                      [done](absl::StatusOr<Stat> stat) {
                        if (absl::IsNotFound(stat.status()))
                          return done(std::optional<Stat>());
                        if (!stat.ok()) return done(stat.status());
                        done(std::optional<Stat>(*stat));
                      });
      },
      done);
}

void StartGetChildren(SessionCore& core, const std::string& path, WatchCallback watch,
                      Done<absl::StatusOr<std::vector<std::string>>> done) {
  absl::StatusOr<ZkClient::WatchFn> watch_fn =
      UserWatch(core, "get children of", path, std::move(watch));
  if (!watch_fn.ok()) return done(watch_fn.status());
  Start<absl::StatusOr<std::vector<std::string>>>(
      core, "get children of", path,
      [&](ZkClient& client) {
        client.GetChildren(path, *std::move(watch_fn), [done](absl::StatusOr<internal::ChildList> listed) {
          done(internal::AsVector(std::move(listed)));
        });
      },
      done);
}

void StartMulti(SessionCore& core, std::vector<Op> ops, Done<internal::MultiOutcome> done) {
  if (ops.empty()) return done(internal::MultiOutcome());
  size_t bytes = 0;
  for (const Op& op : ops) {
    absl::Status valid = ValidatePath(op.path);
    if (!valid.ok()) return done(valid);
    bytes += op.data.size() +
             core.OpBytes(op.path, op.type == Op::Type::kCreate ? &op.acl : nullptr);
  }
  absl::Status fits = core.CheckRequestSize("multi starting at", ops.front().path, bytes);
  if (!fits.ok()) return done(fits);
  const std::string first_path = ops.front().path;
  Start<internal::MultiOutcome>(
      core, "multi", first_path,
      [&](ZkClient& client) {
        client.Multi(ops, core.default_acl(),
                     [done](absl::Status status, std::vector<OpResult> results) {
                       done(internal::MultiOutcome(std::move(status), std::move(results)));
                     });
      },
      done);
}

absl::StatusOr<std::vector<OpResult>> ResultsOf(internal::MultiOutcome outcome) {
  if (!outcome.status.ok()) return outcome.status;
  return std::move(outcome.results);
}

}  // namespace

// ---- Session -----------------------------------------------------------------

Session::Session(std::shared_ptr<SessionCore> core) : core_(std::move(core)) {}

absl::StatusOr<std::unique_ptr<Session>> Session::Connect(SessionOptions options) {
  ZKR_ASSIGN_OR_RETURN(std::shared_ptr<SessionCore> core,
                       SessionCore::Connect(std::move(options)));
  return std::unique_ptr<Session>(new Session(std::move(core)));
}

Session::~Session() { Close(); }
void Session::Close() { core_->Close(); }

SessionState Session::state() const { return core_->state(); }
uint64_t Session::generation() const { return core_->generation(); }
int64_t Session::session_id() const { return core_->session_id(); }
absl::Duration Session::negotiated_timeout() const { return core_->negotiated_timeout(); }
absl::Time Session::valid_until() const { return core_->valid_until(); }
const SessionOptions& Session::options() const { return core_->options(); }

int Session::AddStateListener(StateListener listener) {
  return core_->AddUserListener(std::move(listener));
}
void Session::RemoveStateListener(int id) { core_->RemoveUserListener(id); }

absl::StatusOr<CreateResult> Session::Create(const std::string& path, absl::string_view data,
                                             CreateMode mode, const CreateOptions& options) {
  using R = absl::StatusOr<CreateResult>;
  auto create = [&] {
    return RunSync<R>([&](Done<R> done) {
      StartCreate(*core_, path, std::string(data), mode, options.acl, std::move(done));
    });
  };
  R result = create();
  if (options.make_parents && absl::IsNotFound(result.status())) {
    ZKR_RETURN_IF_ERROR(CreateParents(path, options.parents_as_containers));
    result = create();
  }
  return result;
}

absl::StatusOr<std::string> Session::Get(const std::string& path, Stat* stat) {
  return GetAndWatch(path, nullptr, stat);
}

absl::StatusOr<std::string> Session::GetAndWatch(const std::string& path, WatchCallback watch,
                                                 Stat* stat) {
  using R = absl::StatusOr<NodeData>;
  R result = RunSyncWithRetry<R>(*core_, "get", path, [&](Done<R> done) {
    StartGet(*core_, path, watch, std::move(done));
  });
  if (!result.ok()) return result.status();
  if (stat != nullptr) *stat = result->stat;
  return std::move(result->data);
}

absl::StatusOr<Stat> Session::Set(const std::string& path, absl::string_view data,
                                  int32_t version) {
  using R = absl::StatusOr<Stat>;
  return RunSync<R>([&](Done<R> done) {
    StartSet(*core_, path, std::string(data), version, std::move(done));
  });
}

absl::Status Session::Delete(const std::string& path, int32_t version) {
  int attempts = 0;
  absl::Status status =
      RunSyncWithRetry<absl::Status>(*core_, "delete", path, [&](Done<absl::Status> done) {
        ++attempts;
        StartDelete(*core_, path, version, std::move(done));
      });
  // A retry that finds the node gone: the earlier attempt's lost reply was
  // the success.
  if (attempts > 1 && absl::IsNotFound(status)) return absl::OkStatus();
  return status;
}

absl::StatusOr<std::optional<Stat>> Session::Exists(const std::string& path) {
  return ExistsAndWatch(path, nullptr);
}

absl::StatusOr<std::optional<Stat>> Session::ExistsAndWatch(const std::string& path,
                                                            WatchCallback watch) {
  using R = absl::StatusOr<std::optional<Stat>>;
  return RunSyncWithRetry<R>(*core_, "exists", path, [&](Done<R> done) {
    StartExists(*core_, path, watch, std::move(done));
  });
}

absl::StatusOr<std::vector<std::string>> Session::GetChildren(const std::string& path) {
  return GetChildrenAndWatch(path, nullptr);
}

absl::StatusOr<std::vector<std::string>> Session::GetChildrenAndWatch(const std::string& path,
                                                                      WatchCallback watch) {
  using R = absl::StatusOr<std::vector<std::string>>;
  return RunSyncWithRetry<R>(*core_, "getChildren", path, [&](Done<R> done) {
    StartGetChildren(*core_, path, watch, std::move(done));
  });
}

absl::StatusOr<std::vector<OpResult>> Session::Multi(const std::vector<Op>& ops) {
  return ResultsOf(internal::MultiWithResults(*core_, ops));
}

internal::MultiOutcome internal::MultiWithResults(SessionCore& core, const std::vector<Op>& ops) {
  return RunSync<MultiOutcome>([&](Done<MultiOutcome> done) {
    StartMulti(core, ops, std::move(done));
  });
}

absl::Status Session::CreateParents(const std::string& path, bool as_containers) {
  ZKR_RETURN_IF_ERROR(ValidatePath(path));
  const CreateMode mode = as_containers ? CreateMode::kContainer : CreateMode::kPersistent;
  std::vector<std::string> parents = internal::AncestorsAndSelf(path);
  parents.pop_back();  // the parents only
  for (const std::string& parent : parents) {
    absl::StatusOr<CreateResult> created = Create(parent, "", mode);
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  }
  return absl::OkStatus();
}

void Session::CreateAsync(const std::string& path, std::string data, CreateMode mode,
                          std::function<void(absl::StatusOr<CreateResult>)> done) {
  StartCreate(*core_, path, std::move(data), mode, {},
              Delivering(core_->dispatcher(), nullptr, std::move(done)));
}

void Session::GetAsync(const std::string& path,
                       std::function<void(absl::StatusOr<std::string>)> done) {
  StartGet(
      *core_, path, nullptr,
      Delivering(core_->dispatcher(), nullptr,
                 Done<absl::StatusOr<NodeData>>(
                     [done = std::move(done)](absl::StatusOr<NodeData> result) {
                       if (!result.ok()) return done(result.status());
                       done(std::move(result->data));
                     })));
}

void Session::SetAsync(const std::string& path, std::string data, int32_t version,
                       std::function<void(absl::StatusOr<Stat>)> done) {
  StartSet(*core_, path, std::move(data), version,
           Delivering(core_->dispatcher(), nullptr, std::move(done)));
}

void Session::DeleteAsync(const std::string& path, int32_t version,
                          std::function<void(absl::Status)> done) {
  StartDelete(*core_, path, version,
              Delivering(core_->dispatcher(), nullptr, std::move(done)));
}

void Session::ExistsAsync(const std::string& path,
                          std::function<void(absl::StatusOr<std::optional<Stat>>)> done) {
  StartExists(*core_, path, nullptr,
              Delivering(core_->dispatcher(), nullptr, std::move(done)));
}

void Session::GetChildrenAsync(
    const std::string& path,
    std::function<void(absl::StatusOr<std::vector<std::string>>)> done) {
  StartGetChildren(*core_, path, nullptr,
                   Delivering(core_->dispatcher(), nullptr, std::move(done)));
}

void Session::MultiAsync(std::vector<Op> ops,
                         std::function<void(absl::StatusOr<std::vector<OpResult>>)> done) {
  StartMulti(
      *core_, std::move(ops),
      Delivering(core_->dispatcher(), nullptr,
                 Done<internal::MultiOutcome>(
                     [done = std::move(done)](internal::MultiOutcome outcome) {
                       done(ResultsOf(std::move(outcome)));
                     })));
}

}  // namespace zkr
