// zkr::LeaderSelector: runs take_leadership on a thread of its own for each
// term its election (an ElectionCore, recipes/election_core.h) wins.
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "recipes/election_core.h"
#include "src/macros.h"
#include "zkrecipes/leader_election.h"

namespace zkr {

// ---- LeaderSelector -----------------------------------------------------------

namespace {

class Context : public LeadershipContext {
 public:
  Context(internal::ElectionCore& core, int64_t epoch) : core_(core), epoch_(epoch) {}
  int64_t epoch() const override { return epoch_; }
  bool IsCurrent() const override { return core_.WaitWhileLeader(epoch_, absl::ZeroDuration()); }
  bool WaitWhileCurrent(absl::Duration timeout) const override {
    return core_.WaitWhileLeader(epoch_, timeout);
  }

 private:
  internal::ElectionCore& core_;
  const int64_t epoch_;
};

}  // namespace

class LeaderSelector::Impl {
 public:
  Impl(std::unique_ptr<LeaderElection> election, std::shared_ptr<internal::ElectionCore> core,
       std::function<void(LeadershipContext&)> take_leadership, bool requeue)
      : election_(std::move(election)),
        campaign_(std::make_shared<Campaign>(std::move(core), std::move(take_leadership),
                                             requeue)) {}

  // From inside take_leadership the thread cannot be joined: it is let go
  // and finishes the term on its Campaign, touching nothing else (the
  // election has left and let go of the session before this returns).
  ~Impl() {
    Stop();
    absl::MutexLock lock(&mu_);
    if (thread_.joinable()) thread_.detach();
  }

  absl::Status Start() {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("leader selector: already started");
    started_ = true;
    thread_ = std::thread([campaign = campaign_] { campaign->Run(); });
    return absl::OkStatus();
  }

  void Stop() {
    campaign_->core->Shutdown();  // wakes the loop and a running take_leadership's waits
    std::thread thread;
    {
      absl::MutexLock lock(&mu_);  // Start() may be assigning it
      // From inside take_leadership: the loop ends once it returns; the
      // thread cannot join itself (a later Stop() or the destructor does).
      if (std::this_thread::get_id() == thread_.get_id()) return;
      thread = std::move(thread_);  // joined once, however many Stop()s
    }
    if (thread.joinable()) thread.join();
  }

  int terms() const { return campaign_->terms(); }
  LeaderElection& election() { return *election_; }

 private:
  // What the selector's thread uses, owned by it too: the selector may be
  // destroyed from inside take_leadership, which must not free the function
  // that is running nor what the loop reads after it returns.
  struct Campaign {
    Campaign(std::shared_ptr<internal::ElectionCore> core,
             std::function<void(LeadershipContext&)> take_leadership, bool requeue)
        : core(std::move(core)), take_leadership(std::move(take_leadership)), requeue(requeue) {}

    void Run() {
      for (;;) {
        if (!core->Join().ok()) return;  // stopped
        if (!core->AwaitLeadership(absl::InfiniteDuration()).ok()) return;
        {
          absl::MutexLock lock(&mu);
          ++terms_run;
        }
        Context context(*core, core->epoch());
        take_leadership(context);
        (void)core->Leave();  // stopped meanwhile: nothing to leave
        if (!requeue) return;
      }
    }
    int terms() const {
      absl::MutexLock lock(&mu);
      return terms_run;
    }

    const std::shared_ptr<internal::ElectionCore> core;
    const std::function<void(LeadershipContext&)> take_leadership;
    const bool requeue;
    mutable absl::Mutex mu;
    int terms_run ABSL_GUARDED_BY(mu) = 0;
  };

  const std::unique_ptr<LeaderElection> election_;
  const std::shared_ptr<Campaign> campaign_;
  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<LeaderSelector>> LeaderSelector::Create(
    Session& session, std::string path, std::function<void(LeadershipContext&)> take_leadership,
    Options options) {
  if (!take_leadership) {
    return absl::InvalidArgumentError("leader selector: take_leadership is empty");
  }
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<LeaderElection> election,
                       LeaderElection::Create(session, std::move(path), options.election));
  std::shared_ptr<internal::ElectionCore> core = election->core_;
  return std::unique_ptr<LeaderSelector>(new LeaderSelector(std::make_unique<Impl>(
      std::move(election), std::move(core), std::move(take_leadership), options.requeue)));
}

LeaderSelector::LeaderSelector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LeaderSelector::~LeaderSelector() = default;
absl::Status LeaderSelector::Start() { return impl_->Start(); }
void LeaderSelector::Stop() { impl_->Stop(); }
int LeaderSelector::terms() const { return impl_->terms(); }
LeaderElection& LeaderSelector::election() { return impl_->election(); }

}  // namespace zkr
