// What zkr says while it waits (issue 35): after a second of waiting, on a
// terminal, one status line redrawn in place each second — how long it has
// waited, how many participants are ahead, who holds (or leads) and since
// when; with --verbose, a line for each change of that (on a terminal or
// not); with --quiet, nothing. The line is cleared when the wait ends.
//
// It reads the queue (zkrecipes/inspect.h: one listing and one read per
// participant) once a second while it shows something, and never
// otherwise: a script's zkr, not on a terminal and not --verbose, costs the
// server nothing more.
//
// Thread safety: the constructor starts a thread of its own, which only
// reads the session; the destructor stops it (before the session goes:
// declare it after the session) and clears the line.
#ifndef ZKRECIPES_TOOLS_ZKR_PROGRESS_H_
#define ZKRECIPES_TOOLS_ZKR_PROGRESS_H_

#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace cli {

class WaitProgress {
 public:
  // `what`: "lock", "semaphore", "elect"; `path`: the queue waited in.
  WaitProgress(Session& session, std::string what, std::string path);
  WaitProgress(const WaitProgress&) = delete;
  WaitProgress& operator=(const WaitProgress&) = delete;
  ~WaitProgress();

  // The status of `path`'s queue for the participant of `session_id`, as the
  // line shows it, without the time waited ("2 ahead; held by h_12 for 40s").
  static std::string Describe(Session& session, const std::string& path, int64_t session_id);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);

  Session& session_;
  const std::string what_;
  const std::string path_;
  const bool terminal_;  // stderr is a terminal: the line redrawn in place
  const bool verbose_;   // --verbose: a line per change
  const absl::Time start_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_PROGRESS_H_
