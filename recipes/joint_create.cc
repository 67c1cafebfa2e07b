#include "recipes/joint_create.h"

#include <utility>

#include "src/zk_status.h"

namespace zkr {
namespace internal {

JointCreate::JointCreate(std::shared_ptr<SessionCore> core)
    : core_(std::move(core)), handle_(core_->current()) {}

bool JointCreate::Add(uint64_t generation, std::string dir, std::string path, std::string data,
                      std::vector<Acl> acl, Done done) {
  // The create's op with its ACL, and the directory's write beside it.
  const size_t bytes =
      core_->OpBytes(path.size(), &acl) + data.size() + core_->OpBytes(dir.size());
  absl::MutexLock lock(&mu_);
  if (flushed_ || handle_.client == nullptr || generation != handle_.generation) return false;
  if (!core_->CheckRequestSize("joint create in", dir, bytes_ + bytes).ok()) return false;
  bytes_ += bytes;
  creates_.push_back({std::move(dir), std::move(path), std::move(data), std::move(acl),
                      std::move(done)});
  return true;
}

void JointCreate::Flush() {
  std::vector<Create> creates;
  {
    absl::MutexLock lock(&mu_);
    if (flushed_) return;
    flushed_ = true;
    creates.swap(creates_);
  }
  if (creates.empty()) return;
  std::vector<Op> ops;
  ops.reserve(2 * creates.size());
  for (const Create& create : creates) {
    ops.push_back(
        Op::Create(create.path, create.data, CreateMode::kEphemeralSequential, create.acl));
    ops.push_back(Op::SetData(create.dir, ""));
  }
  handle_.client->Multi(ops, core_->default_acl(),
                        [creates = std::move(creates), denied = refused_for_permission_](
                            absl::Status status, std::vector<OpResult> results) mutable {
                          if (absl::IsPermissionDenied(status)) denied->store(true);
                          OnReply(std::move(creates), status, results);
                        });
}

void JointCreate::OnReply(std::vector<Create> creates, const absl::Status& status,
                          const std::vector<OpResult>& results) {
  if (status.ok() && results.size() == 2 * creates.size()) {
    for (size_t i = 0; i < creates.size(); ++i) {
      const Stat& directory = results[2 * i + 1].stat;
      CreateResult created;
      created.path = results[2 * i].path;
      // One transaction, one zxid: the directory's write's is our create's.
      created.stat.czxid = directory.mzxid;
      created.stat.mzxid = directory.mzxid;
      created.stat.ctime = directory.mtime;
      created.stat.mtime = directory.mtime;
      creates[i].done({std::move(created), directory.num_children, false});
    }
    return;
  }
  // Refused: the server answered with an op's own error, and nothing was
  // applied. Otherwise (no answer, or a retryable code) the outcome is
  // unknown: each part looks its node up.
  const bool refused = !status.ok() && !results.empty() && !IsRetryable(status);
  for (Create& create : creates) create.done({status, 0, refused});
}

}  // namespace internal
}  // namespace zkr
