#include "recipes/acquisition_report.h"

#include <optional>
#include <utility>

namespace zkr {
namespace internal {
namespace {

AcquisitionKind KindOf(NodeMode mode) {
  switch (mode) {
    case NodeMode::kRead: return AcquisitionKind::kRead;
    case NodeMode::kWrite: return AcquisitionKind::kWrite;
    case NodeMode::kLease: return AcquisitionKind::kLease;
  }
  return AcquisitionKind::kWrite;
}

// Whether two nodes are in the same queue: lock and semaphore nodes ignore
// each other.
bool SameQueue(NodeMode a, NodeMode b) { return (a == NodeMode::kLease) == (b == NodeMode::kLease); }

}  // namespace

AcquisitionReport::AcquisitionReport(const SessionCore& core, const std::string& path,
                                     NodeMode mode, int weight, const NodeScheme& scheme)
    : core_(core),
      path_(path),
      mode_(mode),
      weight_(weight),
      scheme_(scheme) {}

Acquisition AcquisitionReport::WhoLocked() const {
  return Acquisition{path_, node_, KindOf(mode_), weight_};
}

void AcquisitionReport::Started() {
  absl::MutexLock lock(&mu_);
  if (phase_ != Phase::kIdle) return;
  phase_ = Phase::kWaiting;
  started_ = Now();
}

void AcquisitionReport::Queued(const ChildList& children,
                               const std::string& node) {
  std::optional<QueueNode> mine = ParseQueueNode(node, scheme_);
  int ahead = 0;
  if (mine.has_value()) {
    for (absl::string_view child : children) {
      std::optional<QueueNode> other = ParseQueueNode(child, scheme_);
      if (other.has_value() && SameQueue(other->mode, mine->mode) &&
          SequenceBefore(other->sequence, mine->sequence)) {
        ++ahead;
      }
    }
  }
  absl::MutexLock lock(&mu_);
  if (phase_ != Phase::kWaiting || queued_) return;
  queued_ = true;
  node_ = node;
  position_ = ahead;
  core_.events().Report(&Observer::OnQueued, AcquisitionQueued{WhoLocked(), ahead});
}

void AcquisitionReport::Watching() {
  absl::MutexLock lock(&mu_);
  watching_ = Now();
}

void AcquisitionReport::Handoff(absl::FunctionRef<std::string()> from, bool granted) {
  std::string name = from();
  absl::MutexLock lock(&mu_);
  if (phase_ != Phase::kWaiting) return;
  ++handoffs_;
  core_.events().Report(&Observer::OnHandoff,
                        zkr::Handoff{WhoLocked(), std::move(name), granted, Now() - watching_});
}

void AcquisitionReport::Granted() {
  absl::MutexLock lock(&mu_);
  if (phase_ != Phase::kWaiting) return;
  phase_ = Phase::kHeld;
  granted_ = Now();
  core_.events().Report(&Observer::OnGranted, AcquisitionGranted{WhoLocked(), granted_ - started_,
                                                                 position_, handoffs_});
}

void AcquisitionReport::Failed(const absl::Status& status, const std::string& node) {
  absl::MutexLock lock(&mu_);
  if (phase_ != Phase::kWaiting && phase_ != Phase::kIdle) return;
  const absl::Duration waited = phase_ == Phase::kIdle ? absl::ZeroDuration() : Now() - started_;
  phase_ = Phase::kOver;
  if (node_.empty()) node_ = node;
  core_.events().Report(&Observer::OnAcquireFailed, AcquisitionFailed{WhoLocked(), waited, status});
}

void AcquisitionReport::ReleaseStarted() {
  absl::MutexLock lock(&mu_);
  if (phase_ != Phase::kHeld) return;
  phase_ = Phase::kReleasing;
  releasing_ = Now();
}

void AcquisitionReport::Released() {
  absl::MutexLock lock(&mu_);
  if (phase_ != Phase::kReleasing) return;
  phase_ = Phase::kOver;
  core_.events().Report(&Observer::OnReleased,
                        zkr::Released{WhoLocked(), releasing_ - granted_, Now() - releasing_});
}

void AcquisitionReport::Lost(bool session_lost) {
  absl::MutexLock lock(&mu_);
  if (phase_ != Phase::kHeld) return;
  phase_ = Phase::kOver;
  core_.events().Report(&Observer::OnLost, HoldLost{WhoLocked(), Now() - granted_, session_lost});
}

}  // namespace internal
}  // namespace zkr
