// ForwardingClient: a ZkClient that passes every call to another one, so
// that a test client overrides only the calls it changes (LevelDB's
// EnvWrapper). The fault-injecting client (faulty_client.h) and the test
// support's watch audit (tests/support/zk_test.cc) are built on it.
//
// Thread safety and callbacks: exactly those of the wrapped client; every
// completion and watch runs where the wrapped client runs it (its completion
// thread, or inline for a request it refuses).
#ifndef ZKRECIPES_SRC_TESTING_FORWARDING_CLIENT_H_
#define ZKRECIPES_SRC_TESTING_FORWARDING_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/zk_client.h"

namespace zkr {
namespace testing {

class ForwardingClient : public internal::ZkClient {
 public:
  explicit ForwardingClient(std::shared_ptr<ZkClient> inner) : inner_(std::move(inner)) {}

  void Close() override { inner_->Close(); }
  void SetCloseSettle(absl::Duration settle) override { inner_->SetCloseSettle(settle); }
  void MarkLost() override { inner_->MarkLost(); }
  int64_t session_id() const override { return inner_->session_id(); }
  std::string password() const override { return inner_->password(); }
  absl::Duration negotiated_timeout() const override { return inner_->negotiated_timeout(); }
  std::string current_server() const override { return inner_->current_server(); }
  absl::Duration last_response() const override { return inner_->last_response(); }

  void Create(const std::string& path, absl::string_view data, CreateMode mode,
              const std::vector<Acl>& acl, CreateDone done) override {
    inner_->Create(path, data, mode, acl, std::move(done));
  }
  void Delete(const std::string& path, int32_t version, VoidDone done) override {
    inner_->Delete(path, version, std::move(done));
  }
  absl::Status DeleteBlocking(const std::string& path, int32_t version) override {
    return inner_->DeleteBlocking(path, version);
  }
  uintptr_t Exists(const std::string& path, WatchFn watch, StatDone done) override {
    return inner_->Exists(path, std::move(watch), std::move(done));
  }
  uintptr_t Get(const std::string& path, WatchFn watch, DataDone done) override {
    return inner_->Get(path, std::move(watch), std::move(done));
  }
  void Set(const std::string& path, absl::string_view data, int32_t version,
           StatDone done) override {
    inner_->Set(path, data, version, std::move(done));
  }
  uintptr_t GetChildren(const std::string& path, WatchFn watch, ChildrenDone done) override {
    return inner_->GetChildren(path, std::move(watch), std::move(done));
  }
  void CancelWatch(uintptr_t id) override { inner_->CancelWatch(id); }
  bool WatchArmed(uintptr_t id) const override { return inner_->WatchArmed(id); }
  std::vector<std::string> WaitedPaths() const override { return inner_->WaitedPaths(); }
  void LimitWatches(size_t max_bytes, size_t path_overhead) override {
    inner_->LimitWatches(max_bytes, path_overhead);
  }
  void Multi(const std::vector<Op>& ops, const std::vector<Acl>& default_acl,
             MultiDone done) override {
    inner_->Multi(ops, default_acl, std::move(done));
  }
  void AddAuth(const std::string& scheme, const std::string& credentials,
               VoidDone done) override {
    inner_->AddAuth(scheme, credentials, std::move(done));
  }

 protected:
  ZkClient& inner() const { return *inner_; }

 private:
  const std::shared_ptr<ZkClient> inner_;
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_SRC_TESTING_FORWARDING_CLIENT_H_
