// How many contenders of a contended row wait in the queue with their watch
// set, so that a holder can release only once the one it hands to is ready
// (a handoff sample is then the handoff alone, as the raw floor's is, not a
// handoff racing the previous holder's new create: on an ensemble that
// create is a quorum write ahead of the release in the leader's pipeline).
// Counted by the raw textbook lock once its exists watch is set, and by our
// recipes through an observer once their first listing said wait (the
// watch's getData leaves right behind that listing's report). Thread-safe.
#ifndef ZKRECIPES_TOOLS_BENCH_WAITING_COUNT_H_
#define ZKRECIPES_TOOLS_BENCH_WAITING_COUNT_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "zkrecipes/observer.h"

namespace zkr {
namespace bench {

class WaitingCount {
 public:
  // Contender `who` begins (+1) or ends (-1) a wait.
  void Add(int delta, int who = -1) {
    absl::MutexLock lock(&mu_);
    waiting_ += delta;
    if (delta > 0) last_ = who;
  }
  // Until at least `n` wait, or `limit` passed (the last holder has none);
  // the contender that began waiting last (-1: none, or not known).
  int AwaitAtLeast(int n, absl::Duration limit) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return waiting_ >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), limit);
    return last_;
  }

 private:
  absl::Mutex mu_;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  int last_ ABSL_GUARDED_BY(mu_) = -1;
};

// Counts contender `who`'s waiting attempts into a WaitingCount: queued
// behind another node, until granted or failed. The report leaves as the
// watch's getData is sent, so a holder makes a round trip on `who`'s
// session before it releases: the server answers it after that getData.
class WaitingObserver : public Observer {
 public:
  WaitingObserver(WaitingCount& count, int who) : count_(count), who_(who) {}
  void OnQueued(const AcquisitionQueued& e) override {
    if (e.position == 0) return;
    {
      absl::MutexLock lock(&mu_);
      if (!waiting_.insert(e.who.node).second) return;
    }
    count_.Add(1, who_);
  }
  void OnGranted(const AcquisitionGranted& e) override { Ended(e.who.node); }
  void OnAcquireFailed(const AcquisitionFailed& e) override { Ended(e.who.node); }

 private:
  void Ended(const std::string& node) {
    {
      absl::MutexLock lock(&mu_);
      if (waiting_.erase(node) == 0) return;
    }
    count_.Add(-1);
  }
  WaitingCount& count_;
  const int who_;
  absl::Mutex mu_;
  absl::flat_hash_set<std::string> waiting_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bench
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_BENCH_WAITING_COUNT_H_
