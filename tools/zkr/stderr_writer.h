// zkr's diagnostics on stderr, written by a thread of their own. A stderr
// that cannot be written — a pipe whose reader has stalled (`2>&1 | tee` on
// a stuck disk, journald pushing back, a paused terminal) — must never hold
// up what zkr does for safety: the watchdog that stops CMD before the lease
// ends, the handling of a loss, a revocation or a signal, or the exit. So
// every line zkr writes to stderr (once it runs) is queued, never written
// in place:
// - WriteStderr never blocks. Lines wait in order in a bounded queue (1 MiB);
//   beyond it they are dropped, and the writer says how many once it can.
// - FlushStderr waits, bounded, for the queue to drain: at exit, where a
//   line still queued is lost only if stderr stayed blocked that long.
// Thread safety: callable from any thread, the signal thread and the C
// client's included.
#ifndef ZKRECIPES_TOOLS_ZKR_STDERR_WRITER_H_
#define ZKRECIPES_TOOLS_ZKR_STDERR_WRITER_H_

#include <string>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace zkr {
namespace cli {

// Queues `text` for stderr (the writer thread starts on first use).
void WriteStderr(std::string text);

template <typename... Args>
void PrintStderr(const absl::FormatSpec<Args...>& format, const Args&... args) {
  WriteStderr(absl::StrFormat(format, args...));
}

// Waits up to `bound` until everything queued so far has been written;
// whether it was.
bool FlushStderr(absl::Duration bound);

// How long an exit waits for its last lines to reach a blocked stderr.
inline constexpr absl::Duration kExitFlushBound = absl::Seconds(1);

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_STDERR_WRITER_H_
