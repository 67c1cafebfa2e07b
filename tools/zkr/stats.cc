#include "tools/zkr/stats.h"

#include <cstdio>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gflags/gflags.h"
#include "tools/zkr/stderr_writer.h"

DECLARE_bool(stats);

namespace zkr {
namespace cli {

// Counts the session's events (on its dispatcher thread); Line() reads them.
class SessionStats : public Observer {
 public:
  void OnHandoff(const Handoff&) override {
    absl::MutexLock lock(&mu_);
    ++handoffs_;
  }
  void OnGranted(const AcquisitionGranted& e) override {
    absl::MutexLock lock(&mu_);
    ++acquired_;
    waited_ += e.waited;
    position_ = e.position;
  }
  void OnAcquireFailed(const AcquisitionFailed& e) override {
    absl::MutexLock lock(&mu_);
    ++failed_;
    waited_ += e.waited;
  }
  void OnReleased(const Released& e) override {
    absl::MutexLock lock(&mu_);
    ++released_;
    held_ += e.held;
  }
  void OnLost(const HoldLost& e) override {
    absl::MutexLock lock(&mu_);
    ++lost_;
    held_ += e.held;
  }
  void OnSessionState(const SessionStateChange& e) override {
    absl::MutexLock lock(&mu_);
    if (e.to == SessionState::kSuspended) ++suspended_;
    if (e.from == SessionState::kSuspended) suspended_for_ += e.lasted;
    if (e.to == SessionState::kLost) ++sessions_lost_;
  }
  void OnRetry(const Retry&) override {
    absl::MutexLock lock(&mu_);
    ++retries_;
  }
  void OnTermBegan(const TermBegan& e) override {
    absl::MutexLock lock(&mu_);
    ++terms_;
    waited_ += e.waited;
  }
  void OnTermEnded(const TermEnded& e) override {
    absl::MutexLock lock(&mu_);
    led_ += e.lasted;
  }

  std::string Line() const {
    absl::MutexLock lock(&mu_);
    auto d = [](absl::Duration duration) { return absl::FormatDuration(duration); };
    return absl::StrCat("acquired=", acquired_, " failed=", failed_, " waited=", d(waited_),
                        " position=", position_, " handoffs=", handoffs_, " held=", d(held_),
                        " released=", released_, " lost=", lost_, " terms=", terms_,
                        " led=", d(led_), " suspended=", suspended_,
                        " suspended_for=", d(suspended_for_), " sessions_lost=", sessions_lost_,
                        " retries=", retries_);
  }

 private:
  mutable absl::Mutex mu_;
  int acquired_ ABSL_GUARDED_BY(mu_) = 0;
  int failed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration waited_ ABSL_GUARDED_BY(mu_);  // to be granted, or to lead
  int position_ ABSL_GUARDED_BY(mu_) = 0;       // of the last grant
  int handoffs_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration held_ ABSL_GUARDED_BY(mu_);
  int released_ ABSL_GUARDED_BY(mu_) = 0;
  int lost_ ABSL_GUARDED_BY(mu_) = 0;
  int terms_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration led_ ABSL_GUARDED_BY(mu_);
  int suspended_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration suspended_for_ ABSL_GUARDED_BY(mu_);
  int sessions_lost_ ABSL_GUARDED_BY(mu_) = 0;
  int retries_ ABSL_GUARDED_BY(mu_) = 0;
};

StatsLine::StatsLine(std::string what)
    : what_(std::move(what)), stats_(FLAGS_stats ? std::make_shared<SessionStats>() : nullptr) {}

StatsLine::~StatsLine() {
  if (stats_ != nullptr) {
    PrintStderr("zkr %s: stats: %s\n", what_.c_str(), stats_->Line().c_str());
  }
}

std::shared_ptr<Observer> StatsLine::observer() const { return stats_; }

}  // namespace cli
}  // namespace zkr
