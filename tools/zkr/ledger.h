// Ledger: records critical sections of a read/write lock as they happen and
// counts exclusion violations (two writers, or a writer with a reader).
// Thread-safe. Used by the demo and the tests.
#ifndef ZKRECIPES_TOOLS_ZKR_LEDGER_H_
#define ZKRECIPES_TOOLS_ZKR_LEDGER_H_

#include <algorithm>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace zkr {

class Ledger {
 public:
  struct Summary {
    int entries = 0;      // critical sections entered
    int writes = 0;       // of which write (exclusive)
    int max_readers = 0;  // most readers inside at once
    int violations = 0;   // entries that broke exclusion
  };

  // A holder enters its critical section.
  void Enter(bool write) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    const bool clash = write ? (writers_ > 0 || readers_ > 0) : writers_ > 0;
    if (clash) ++summary_.violations;
    ++(write ? writers_ : readers_);
    ++summary_.entries;
    if (write) ++summary_.writes;
    summary_.max_readers = std::max(summary_.max_readers, readers_);
  }
  // ... and leaves it (before releasing the lock).
  void Leave(bool write) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    --(write ? writers_ : readers_);
  }
  Summary summary() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return summary_;
  }

 private:
  mutable absl::Mutex mu_;
  int writers_ ABSL_GUARDED_BY(mu_) = 0;
  int readers_ ABSL_GUARDED_BY(mu_) = 0;
  Summary summary_ ABSL_GUARDED_BY(mu_);
};

}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_LEDGER_H_
