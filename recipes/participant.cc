#include "recipes/participant.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "recipes/queue_node.h"
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

Participant::Participant(std::shared_ptr<const std::string> dir, absl::string_view label,
                         NodeMode mode, int weight, int leases, const NodeScheme& scheme)
    : dir_(std::move(dir)),
      prefix_(NodePrefix(NewParticipantId(scheme.dialect, label), mode, weight, leases, scheme)) {}

absl::Status Participant::CheckRequestSize(SessionCore& core, size_t data_bytes,
                                           const std::vector<Acl>& acl) const {
  const size_t node = node_path_bytes() + 1;  // a byte to spare, as ever
  return core.CheckRequestSize(
      "create in", dir(),
      data_bytes + std::max(core.OpBytes(node, &acl), 2 * core.OpBytes(node)));
}

std::string Participant::CreatePath() const { return PathOf(prefix_); }

std::string Participant::PathOf(absl::string_view child) const { return JoinPath(dir(), child); }

std::string Participant::node_name() const {
  absl::MutexLock lock(&mu_);
  return NodeNameLocked();
}

std::string Participant::NodeNameLocked() const {
  return named_ ? absl::StrCat(prefix_, SequenceSuffix(sequence_)) : "";
}

void Participant::NameLocked(std::optional<int32_t> sequence) {
  named_ = sequence.has_value();
  sequence_ = sequence.value_or(0);
}

std::string Participant::node_path() const {
  absl::MutexLock lock(&mu_);
  return named_ ? PathOf(NodeNameLocked()) : "";
}

int64_t Participant::token() const {
  absl::MutexLock lock(&mu_);
  return token_;
}

absl::string_view Participant::StepName(CreateStep step) {
  switch (step) {
    case CreateStep::kCreateDirectory: return "CREATE_DIRECTORY";
    case CreateStep::kCreate: return "CREATE";
    case CreateStep::kRecover: return "RECOVER";
    case CreateStep::kReadToken: return "READ_TOKEN";
    case CreateStep::kCreated: return "CREATED";
    case CreateStep::kFailed: return "FAILED";
  }
  return "?";
}

void Participant::Send(ZkClient& client, CreateStep step, const std::vector<Acl>& acl,
                       ReplyFn reply) const {
  switch (step) {
    case CreateStep::kCreateDirectory: {
      size_t index;
      {
        absl::MutexLock lock(&mu_);
        index = directory_index_;
      }
      // Computed here, not kept: rare, and every queued waiter would pay.
      client.Create(AncestorsAndSelf(dir())[index], "", CreateMode::kContainer, acl,
                    [reply](absl::StatusOr<CreateResult> result) {
                      reply(Reply{result.status(), {}, {}, {}});
                    });
      return;
    }
    case CreateStep::kRecover:
      client.GetChildren(dir(), nullptr, [reply](absl::StatusOr<ChildList> children) {
        Reply r{children.status(), {}, {}, {}};
        if (children.ok()) r.children = *std::move(children);
        reply(std::move(r));
      });
      return;
    case CreateStep::kReadToken:
      client.Exists(node_path(), nullptr, [reply](absl::StatusOr<Stat> stat) {
        Reply r{stat.status(), {}, {}, {}};
        if (stat.ok()) r.stat = *stat;
        reply(std::move(r));
      });
      return;
    case CreateStep::kCreate:  // SendCreate
    case CreateStep::kCreated:
    case CreateStep::kFailed:
      return;
  }
}

bool Participant::SendCreate(const std::shared_ptr<SessionCore>& core, uint64_t generation,
                             ZkClient& client, const std::string& data,
                             const std::vector<Acl>& acl, ReplyFn reply,
                             std::function<void()> cleaned, JointCreate* joint, bool* joined) {
  // Given up since the step was entered (the cleaning was left to us):
  // send nothing; nothing was created.
  if (CreateAbandoned()) {
    cleaned();
    return false;
  }
  auto created = [reply](JointCreate::Outcome outcome) {
    Reply r{outcome.created.status(), {}, {}, {}, outcome.directory_children, outcome.refused};
    if (outcome.created.ok()) r.created = *std::move(outcome.created);
    reply(std::move(r));
  };
  if (joint != nullptr && joint->Add(generation, dir(), CreatePath(), data, acl, created)) {
    if (joined != nullptr) *joined = true;
  } else {
    client.Create(CreatePath(), data, CreateMode::kEphemeralSequential, acl,
                  [created](absl::StatusOr<CreateResult> result) {
                    created({std::move(result), 0, false});
                  });
  }
  bool clean;
  {
    absl::MutexLock lock(&mu_);
    create_sent_ = true;
    clean = std::exchange(clean_after_create_, false);
  }
  // Given up while the create was being handed over: clean up now, after it.
  if (clean) Clean(Cleanup::kByPrefix, core, generation, std::move(cleaned));
  return !clean;
}

void Participant::Note(CreateStep step, const Reply& reply) {
  absl::MutexLock lock(&mu_);
  if (step == CreateStep::kCreate && !IsRetryable(reply.status)) {
    // A final reply settles the outcome (and names the node); a lost one
    // leaves it unknown.
    create_unknown_ = false;
    if (reply.status.ok()) {
      NameLocked(SequenceAfter(NodeName(reply.created.path), prefix_));
      // (A server's reply always parses; were it not to, the node is
      // cleaned up by our prefix.)
      create_unknown_ = !named_;
      token_ = reply.created.stat.czxid;
    }
  }
  if (step == CreateStep::kRecover && reply.status.ok()) {
    // Recovery by our unique id: our node if the lost create was applied.
    create_unknown_ = false;
    for (absl::string_view child : reply.children) {
      if (std::optional<int32_t> sequence = SequenceAfter(child, prefix_)) NameLocked(sequence);
    }
  }
}

Participant::CreateStep Participant::Next(CreateStep step, const Reply& reply) {
  const absl::Status& status = reply.status;
  absl::MutexLock lock(&mu_);
  switch (step) {
    case CreateStep::kCreateDirectory:
      if (!status.ok() && !absl::IsAlreadyExists(status)) return CreateStep::kFailed;
      if (++directory_index_ < AncestorsAndSelf(dir()).size()) return CreateStep::kCreateDirectory;
      directory_created_ = true;
      return CreateStep::kCreate;
    case CreateStep::kCreate: {
      if (status.ok()) return CreateStep::kCreated;
      // Refused with others' creates: nothing made; again, alone.
      if (reply.joint_refused) return CreateStep::kCreate;
      const bool may_create_directory = !directory_created_;
      directory_index_ = 0;
      if (absl::IsNotFound(status) && may_create_directory) return CreateStep::kCreateDirectory;
      return CreateStep::kFailed;
    }
    case CreateStep::kRecover:
      if (!status.ok() && !absl::IsNotFound(status)) return CreateStep::kFailed;
      // Else never applied: create it.
      return named_ ? CreateStep::kReadToken : CreateStep::kCreate;
    case CreateStep::kReadToken:
      if (!status.ok()) return CreateStep::kFailed;
      token_ = reply.stat.czxid;
      return CreateStep::kCreated;
    case CreateStep::kCreated:
    case CreateStep::kFailed:
      break;
  }
  return step;
}

void Participant::CreateEntered() {
  absl::MutexLock lock(&mu_);
  create_unknown_ = true;  // until its reply says
  create_sent_ = false;
}

bool Participant::CreateAbandoned() {
  absl::MutexLock lock(&mu_);
  if (!clean_after_create_) return false;
  clean_after_create_ = false;
  create_unknown_ = false;
  return true;
}

bool Participant::CreateDropped() {
  absl::MutexLock lock(&mu_);
  create_unknown_ = false;
  return std::exchange(clean_after_create_, false);
}

Participant::Cleanup Participant::PlanCleanup() {
  absl::MutexLock lock(&mu_);
  if (named_) return Cleanup::kByName;
  if (!create_unknown_) return Cleanup::kNothing;
  if (!create_sent_) {
    clean_after_create_ = true;
    return Cleanup::kAfterCreate;
  }
  return Cleanup::kByPrefix;
}

void Participant::MarkCleaned() {
  std::vector<std::function<void()>> callbacks;
  {
    absl::MutexLock lock(&mu_);
    cleaned_ = true;
    callbacks.swap(on_cleaned_);
  }
  for (auto& callback : callbacks) callback();
}

void Participant::WhenCleaned(std::function<void()> cleaned) {
  {
    absl::MutexLock lock(&mu_);
    if (!cleaned_) {
      on_cleaned_.push_back(std::move(cleaned));
      return;
    }
  }
  cleaned();
}

void Participant::Clean(Cleanup plan, const std::shared_ptr<SessionCore>& core,
                        uint64_t generation, std::function<void()> cleaned) const {
  auto deleted = [cleaned](absl::Status) { cleaned(); };
  switch (plan) {
    case Cleanup::kAfterCreate:
      return;  // SendCreate cleans after it
    case Cleanup::kByName:
      return DeleteGuaranteed(core, generation, node_path(), std::move(deleted));
    case Cleanup::kByPrefix:
      // The server handles a session's requests in order: a listing sent
      // after the create sees it applied or not, in flight or with its
      // reply lost.
      return DeleteChildGuaranteed(core, generation, dir(), prefix_, std::move(deleted));
    case Cleanup::kNothing:
      return cleaned();  // nothing was created
  }
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
      [core, generation, dir, prefix, done](absl::StatusOr<ChildList> children) {
        if (children.ok()) {
          for (absl::string_view child : *children) {
            if (SequenceAfter(child, prefix).has_value()) {  // not "<node>.revoke"
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
