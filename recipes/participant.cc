#include "recipes/participant.h"

#include <utility>

#include "absl/strings/match.h"
#include "src/paths.h"
#include "src/retry.h"
#include "src/zk_status.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace internal {
namespace {

// After a delete (or a listing that did not find the node): the node is
// gone, or its session is (expired, or closed by us) and it goes with it.
bool NodeIsGone(const absl::Status& status) {
  return status.ok() || absl::IsNotFound(status) || IsSessionLost(status) ||
         absl::IsCancelled(status);
}

// DeleteGuaranteed's `attempt`th try (counted for retry reports).
void DeleteAttempt(std::shared_ptr<SessionCore> core, uint64_t generation, std::string path,
                   std::function<void(absl::Status)> done, bool caller_waits, int attempt) {
  SessionCore::Handle handle = core->current();
  if (handle.generation != generation || handle.client == nullptr) {
    if (done) done(absl::OkStatus());  // the node went with its session
    return;
  }
  auto answered = [core, generation, path, done, attempt](absl::Status status) {
    if (NodeIsGone(status)) {
      if (done) done(absl::OkStatus());
      return;
    }
    if (!IsRetryable(status)) {
      if (done) done(status);
      return;
    }
    const RetryNote note{"guaranteed delete", path, attempt, status};
    RetryWhenConnected(
        *core, generation, attempt, &note,
        [core, generation, path, done, attempt] {
          DeleteAttempt(core, generation, path, done, false, attempt + 1);
        },
        [done](absl::Status) {
          if (done) done(absl::OkStatus());  // lost or closed: the node went with the session
        });
  };
  if (caller_waits && !OnCompletionThread()) {
    answered(handle.client->DeleteBlocking(path, -1));
  } else {
    handle.client->Delete(path, -1, std::move(answered));
  }
}

}  // namespace

Participant::Participant(std::string dir, absl::string_view label, NodeMode mode, int weight,
                         int leases)
    : dir_(std::move(dir)),
      id_(NewParticipantId(label)),
      prefix_(NodePrefix(id_, mode, weight, leases)) {}

std::string Participant::CreatePath() const { return PathOf(prefix_); }

std::string Participant::PathOf(absl::string_view child) const { return JoinPath(dir_, child); }

std::string Participant::node_name() const {
  absl::MutexLock lock(&mu_);
  return node_name_;
}

std::string Participant::node_path() const {
  absl::MutexLock lock(&mu_);
  return node_name_.empty() ? "" : PathOf(node_name_);
}

int64_t Participant::token() const {
  absl::MutexLock lock(&mu_);
  return token_;
}

void Participant::SetToken(int64_t czxid) {
  absl::MutexLock lock(&mu_);
  token_ = czxid;
}

void Participant::CreateEntered() {
  absl::MutexLock lock(&mu_);
  create_unknown_ = true;  // until its reply says
  create_sent_ = false;
}

void Participant::OnCreateReply(const absl::Status& status, const CreateResult& created) {
  if (IsRetryable(status)) return;  // lost: still unknown
  absl::MutexLock lock(&mu_);
  create_unknown_ = false;
  if (status.ok()) {
    node_name_ = std::string(NodeName(created.path));
    token_ = created.stat.czxid;
  }
}

bool Participant::FindOwn(const std::vector<std::string>& children) {
  absl::MutexLock lock(&mu_);
  create_unknown_ = false;
  for (const std::string& child : children) {
    if (absl::StartsWith(child, prefix_)) node_name_ = child;
  }
  return !node_name_.empty();
}

bool Participant::CreateHandedOver() {
  absl::MutexLock lock(&mu_);
  create_sent_ = true;
  return std::exchange(clean_after_create_, false);
}

bool Participant::CreateDropped() {
  absl::MutexLock lock(&mu_);
  create_unknown_ = false;
  return std::exchange(clean_after_create_, false);
}

Participant::Cleanup Participant::PlanCleanup() {
  absl::MutexLock lock(&mu_);
  if (!node_name_.empty()) return Cleanup::kByName;
  if (!create_unknown_) return Cleanup::kNothing;
  if (!create_sent_) {
    clean_after_create_ = true;
    return Cleanup::kAfterCreate;
  }
  return Cleanup::kByPrefix;
}

void Participant::DeleteGuaranteed(std::shared_ptr<SessionCore> core, uint64_t generation,
                                   std::string path, std::function<void(absl::Status)> done,
                                   bool caller_waits) {
  DeleteAttempt(std::move(core), generation, std::move(path), std::move(done), caller_waits, 1);
}

void Participant::DeleteChildGuaranteed(std::shared_ptr<SessionCore> core, uint64_t generation,
                                        std::string dir, std::string prefix,
                                        std::function<void(absl::Status)> done) {
  SessionCore::Handle handle = core->current();
  if (handle.generation != generation || handle.client == nullptr) {
    if (done) done(absl::OkStatus());  // the node went with its session
    return;
  }
  handle.client->GetChildren(
      dir, nullptr,
      [core, generation, dir, prefix, done](absl::StatusOr<std::vector<std::string>> children) {
        if (children.ok()) {
          for (const std::string& child : *children) {
            if (child.compare(0, prefix.size(), prefix) == 0) {
              return DeleteGuaranteed(core, generation, JoinPath(dir, child), done);
            }
          }
        }
        if (NodeIsGone(children.status())) {
          if (done) done(absl::OkStatus());  // never created, or gone with its session
          return;
        }
        if (!IsRetryable(children.status())) {
          if (done) done(children.status());
          return;
        }
        const RetryNote note{"guaranteed delete (lookup)", dir, 1, children.status()};
        RetryWhenConnected(
            *core, generation, note.attempt, &note,
            [core, generation, dir, prefix, done] {
              DeleteChildGuaranteed(core, generation, dir, prefix, done);
            },
            [done](absl::Status) {
              if (done) done(absl::OkStatus());
            });
      });
}

}  // namespace internal
}  // namespace zkr
