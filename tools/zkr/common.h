// Shared pieces of the zkr subcommands: global flags -> session, exit codes,
// and what a signal does before a session exists (tools/zkr/signals.h has
// the signal thread).
#ifndef ZKRECIPES_TOOLS_ZKR_COMMON_H_
#define ZKRECIPES_TOOLS_ZKR_COMMON_H_

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tools/zkr/signals.h"
#include "tools/zkr/stderr_writer.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace cli {

// Exit codes (documented in `zkr --help` and the README).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;         // any other failure (message on stderr)
inline constexpr int kExitUsage = 2;         // bad flags, missing command or path
inline constexpr int kExitNotAcquired = 3;   // the default of --conflict_exit_code
inline constexpr int kExitLost = 4;          // lock or leadership lost while CMD ran
inline constexpr int kExitUnreachable = 5;   // no ZooKeeper server answered
inline constexpr int kExitInterrupted = 130; // cancelled without a signal number (as SIGINT)

// The --zk value: the flag, else $ZKR_CONNECT, else 127.0.0.1:2181.
std::string ConnectString();
// Checks --path before anything else (InvalidArgument naming it).
absl::Status CheckPathFlag(const std::string& path);
// Checks --id (elect, group join, barrier enter) before connecting: UTF-8
// text without control characters (empty: <hostname>_<pid>).
absl::Status CheckIdFlag(const std::string& id, absl::string_view kind);
// --dialect's value; InvalidArgument naming it if it is none of
// zkr, curator, kazoo.
absl::StatusOr<Dialect> DialectFlag();
// A JSON string literal of `bytes`: each malformed UTF-8 sequence becomes
// U+FFFD, so that the output always parses.
std::string JsonString(absl::string_view bytes);
// A queue node's name from its mode marker on, for people:
// "<host>_<pid>_<random>-S1of2-0000000003" -> "S1of2-0000000003".
std::string ShortNodeName(absl::string_view name);
// Connects with the global flags (--zk, --session-timeout, --auth, --verbose),
// reporting to `observer` if given (--stats). Gives up (Unavailable: no
// server answered) at `deadline` if that comes before the connect timeout
// (the session timeout, at least 5 s).
absl::StatusOr<std::unique_ptr<Session>> ConnectFromFlags(
    std::shared_ptr<Observer> observer = nullptr, absl::Time deadline = absl::InfiniteFuture());

// How long a try (--nonblock, --timeout=0) may take to connect: a server that
// answers at all answers well within it.
inline constexpr absl::Duration kTryConnectBound = absl::Seconds(2);

// --timeout as one bound on connecting and then waiting (for the lock, the
// barrier...). Connecting gets the timeout but never less than
// kTryConnectBound (a try, --nonblock or a zero timeout, gets just that): a
// tiny timeout must not read as "no server answered". Once connected, what
// is left is waited; nothing left means: try once, do not wait.
class WaitLimit {
 public:
  WaitLimit(absl::Duration timeout, bool try_once)
      : start_(absl::Now()), timeout_(try_once ? absl::ZeroDuration() : timeout) {}
  // The deadline for ConnectFromFlags.
  absl::Time deadline() const { return start_ + std::max(timeout_, kTryConnectBound); }
  // What is left of the timeout once connected; zero: try once.
  absl::Duration left() const {
    return std::max(absl::ZeroDuration(), start_ + timeout_ - absl::Now());
  }

 private:
  const absl::Time start_;
  const absl::Duration timeout_;
};
// Prints "zkr <what>: <status message>" and returns the exit code for it.
int Report(absl::string_view what, const absl::Status& status);
// Writes `text` to stdout, keeping the cause if the write fails (for
// FinishOutput's message): output that may pass stdio's buffer.
void PrintOutput(absl::string_view text);
// Flushes stdout: `code`, or (a write failed: a full disk, a reader gone
// with SIGPIPE ignored) kExitError if it was kExitOk, with a message.
int FinishOutput(absl::string_view what, int code);
// For output printed until stopped (--watch, on the dispatcher thread): a
// flush that fails ends zkr at once (kExitError, message on stderr); there
// is nothing to undo.
void FlushOrExit(absl::string_view what);
// "30s", "1m30s", "500ms", "inf", and a bare number of seconds ("5",
// "0.5", as flock -w and timeout(1) take it) -> Duration; InvalidArgument
// naming the flag (or the environment variable that set it).
absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view flag, const std::string& text);

// Until a session exists nothing needs undoing: a signal N ends zkr at once
// with 128+N, as a shell reports a process killed by N (from the signal
// thread).
void ExitOnSignal(Signals& signals, absl::string_view what);
// Prints "zkr <what>: interrupted (<signal>)" and returns 128+signal (130
// if `signal` is 0).
int Interrupted(absl::string_view what, int signal);
// --quiet: only errors on stderr. Notices (Inform) are left out.
bool Quiet();
// A notice on stderr ("zkr elect: leader"), unless --quiet: what is not an
// error nor the reason for the exit code. Queued, never blocking
// (tools/zkr/stderr_writer.h).
template <typename... Args>
void Inform(const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (!Quiet()) PrintStderr(format, args...);
}
// The exit code for "not acquired in time", "busy", "no leader":
// --conflict_exit_code (default kExitNotAcquired).
int NotAcquiredCode();


}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_COMMON_H_
