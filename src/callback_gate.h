// CallbackGate: lets the owner of a user callback stop it for good. Once
// Close() returns, the callback is neither running nor will it run, so what
// it captured may go — except when Close() is called from inside the
// callback itself, which returns at once (waiting would be waiting for
// itself; the rest of that call runs on its own stack).
//
// Thread safety: safe for concurrent use. Run() calls back on the calling
// thread (the session's dispatcher) and holds no lock while it does, so the
// callback may call Close() or anything else.
#ifndef ZKRECIPES_SRC_CALLBACK_GATE_H_
#define ZKRECIPES_SRC_CALLBACK_GATE_H_

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"

namespace zkr {
namespace internal {

class CallbackGate {
 public:
  CallbackGate() = default;
  CallbackGate(const CallbackGate&) = delete;
  CallbackGate& operator=(const CallbackGate&) = delete;

  // Runs `callback` unless closed.
  void Run(absl::FunctionRef<void()> callback) ABSL_LOCKS_EXCLUDED(mu_);
  // Closes the gate, then waits for a call in progress on another thread.
  // REQUIRES: the caller holds nothing the callback may wait for.
  void Close() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // The threads now in Run()'s callback: the dispatcher's, or, after the
  // dispatcher stopped, the threads that posted (tasks then run inline).
  std::vector<std::thread::id> running_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_CALLBACK_GATE_H_
