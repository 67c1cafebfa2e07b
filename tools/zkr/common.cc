#include "tools/zkr/common.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gflags/gflags.h"
#include "src/paths.h"
#include "recipes/candidate_data.h"
#include "src/utf8.h"
#include "tools/zkr/flags.h"
#include "tools/zkr/plain_text.h"
#include "tools/zkr/stderr_writer.h"

DECLARE_string(zk);
DECLARE_string(session_timeout);
DECLARE_string(auth);
DECLARE_string(acl);
DECLARE_bool(verbose);
DECLARE_bool(quiet);
DECLARE_bool(client_log);
DECLARE_string(dialect);
DECLARE_string(auth_file);
DECLARE_int32(conflict_exit_code);

namespace zkr {

using internal::ValidatePath;
namespace cli {

std::string ConnectString() {
  // $ZKR_CONNECT reaches FLAGS_zk through the flag table (flags.cc).
  return FLAGS_zk.empty() ? "127.0.0.1:2181" : FLAGS_zk;
}

namespace {

// "5", "0.5", ".5": digits with at most one point, nothing else (no sign,
// no exponent, no "nan").
bool IsBareSeconds(absl::string_view text) {
  bool digit = false, point = false;
  for (char c : text) {
    if (c == '.' && !point) {
      point = true;
    } else if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      digit = true;
    } else {
      return false;
    }
  }
  return digit;
}

}  // namespace

absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view flag, const std::string& text) {
  absl::Duration duration;
  double seconds = 0;
  if (IsBareSeconds(text) && absl::SimpleAtod(text, &seconds)) {
    return absl::Seconds(seconds);  // a huge one saturates to inf
  }
  if (!absl::ParseDuration(text, &duration) || duration < absl::ZeroDuration()) {
    const std::string source = FlagSource(absl::StrReplaceAll(flag, {{"-", "_"}}));
    return absl::InvalidArgumentError(absl::StrCat(
        source, "=", text, ": not a duration (examples: 5 or 0.5 (seconds), 30s, 1m30s, 500ms, inf)"));
  }
  return duration;
}

int NotAcquiredCode() { return FLAGS_conflict_exit_code; }

bool Quiet() { return FLAGS_quiet; }

absl::Status CheckPathFlag(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("--path is required");
  absl::Status valid = ValidatePath(path);
  if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat("--path: ", valid.message()));
  if (path == "/") return absl::InvalidArgumentError("--path: \"/\" cannot be a lock or election");
  return absl::OkStatus();
}

absl::StatusOr<Dialect> DialectFlag() {
  for (Dialect dialect : {Dialect::kZkr, Dialect::kCurator, Dialect::kKazoo}) {
    if (FLAGS_dialect == DialectName(dialect)) return dialect;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--dialect=", FLAGS_dialect, ": expected zkr, curator or kazoo"));
}

absl::Status CheckIdFlag(const std::string& id, absl::string_view kind) {
  if (!internal::IsValidUtf8(id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--id=\"", absl::CHexEscape(id), "\": not valid UTF-8"));
  }
  absl::StatusOr<std::string> label = internal::ParticipantLabel(id, kind);
  if (!label.ok()) return absl::InvalidArgumentError(absl::StrCat("--id: ", label.status().message()));
  return absl::OkStatus();
}

// A JSON string literal of `text`, whatever bytes it holds: each malformed
// UTF-8 sequence becomes U+FFFD, so that the output always parses; control
// characters (C0, DEL and C1, e.g. the 8-bit CSI) are \u escapes, so that
// node data cannot drive a terminal that shows the JSON.
std::string JsonString(absl::string_view bytes) {
  auto escape = [](int32_t code, std::string* out) {
    if (code == '"') {
      *out += "\\\"";
    } else if (code == '\\') {
      *out += "\\\\";
    } else if (code == '\n') {
      *out += "\\n";
    } else if (code == '\t') {
      *out += "\\t";
    } else if (IsControlCharacter(code)) {
      absl::StrAppendFormat(out, "\\u%04x", code);
    } else {
      return false;
    }
    return true;
  };
  // Well formed (ToValidUtf8): the walk meets no malformed sequence.
  return absl::StrCat("\"", EscapeEach(internal::ToValidUtf8(bytes), escape), "\"");
}

std::string ShortNodeName(absl::string_view name) {
  const size_t sequence = name.rfind('-');
  const size_t marker = sequence == absl::string_view::npos || sequence == 0
                            ? absl::string_view::npos
                            : name.rfind('-', sequence - 1);
  return std::string(marker == absl::string_view::npos ? name : name.substr(marker + 1));
}

namespace {

// USER:PASSWORD from --auth or --auth_file ("" if neither); the messages
// never show the password.
absl::StatusOr<std::string> Credentials() {
  constexpr absl::string_view kDigest = "digest:";
  std::string text = FLAGS_auth;
  std::string source = FlagSource("auth");
  if (!FLAGS_auth_file.empty()) {
    source = absl::StrCat(FlagSource("auth_file"), "=", FLAGS_auth_file);
    std::ifstream file(FLAGS_auth_file);
    if (!file.is_open()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": cannot read it: ", std::strerror(errno)));
    }
    std::string line;  // the whole first line, however long
    std::getline(file, line);
    if (file.bad()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": cannot read it"));
    }
    text = std::string(absl::StripTrailingAsciiWhitespace(line));  // CRLF too
    if (text.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": its first line is empty"));
    }
  }
  if (text.empty()) return std::string();
  if (!absl::StartsWith(text, kDigest) || text.find(':', kDigest.size()) == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": expected digest:USER:PASSWORD (", text.size(),
                     " characters given; not shown: it may hold a password)"));
  }
  return text.substr(kDigest.size());
}

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> ConnectFromFlags(std::shared_ptr<Observer> observer,
                                                          absl::Time deadline) {
  SessionOptions options;
  options.observer = std::move(observer);
  options.connect = ConnectString();
  auto timeout = ParseDurationFlag("session-timeout", FLAGS_session_timeout);
  if (!timeout.ok()) return timeout.status();
  options.session_timeout = *timeout;
  // The caller's deadline (--timeout) bounds connecting too; in whole
  // milliseconds (it is printed) and positive (the library needs it).
  const absl::Duration left = absl::Ceil(deadline - absl::Now(), absl::Milliseconds(1));
  options.connect_timeout =
      std::max(std::min(std::max(*timeout, absl::Seconds(5)), left), absl::Milliseconds(1));
  absl::StatusOr<std::string> auth = Credentials();
  if (!auth.ok()) return auth.status();
  if (!auth->empty()) options.digest_auth = *auth;
  const std::string acl = FLAGS_acl.empty() ? (auth->empty() ? "open" : "creator") : FLAGS_acl;
  if (acl == "creator" && auth->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        FlagSource("acl"), "=creator needs --auth_file=FILE or --auth=digest:USER:PASSWORD"));
  }
  if (acl != "creator" && acl != "open") {
    return absl::InvalidArgumentError(
        absl::StrCat(FlagSource("acl"), "=", FLAGS_acl, ": expected creator or open"));
  }
  options.default_acl = acl == "creator" ? CreatorAllAcl() : OpenAcl();
  if (FLAGS_client_log) {
    options.log_level = ClientLogLevel::kInfo;
    // Through the queue: a blocked stderr must not stop the client's threads.
    options.log_sink = [](absl::string_view line) { WriteStderr(absl::StrCat(line, "\n")); };
  } else {
    options.log_level = ClientLogLevel::kError;
    options.log_sink = [](absl::string_view) {};
  }
  auto session = Session::Connect(options);
  // A value the library refuses may have come from a variable: name it.
  if (absl::IsInvalidArgument(session.status())) {
    return absl::InvalidArgumentError(
        absl::StrCat(session.status().message(), EnvironmentNote(session.status().message())));
  }
  if (session.ok() && FLAGS_verbose) {
    (*session)->AddStateListener([](SessionState state, uint64_t generation) {
      PrintStderr("zkr: session %s (generation %llu)\n",
                  std::string(SessionStateName(state)).c_str(),
                  static_cast<unsigned long long>(generation));
    });
  }
  return session;
}

int Report(absl::string_view what, const absl::Status& status) {
  PrintStderr("zkr %s: %s\n", std::string(what).c_str(),
              std::string(status.message()).c_str());
  if (absl::IsInvalidArgument(status)) return kExitUsage;
  if (absl::IsUnavailable(status)) return kExitUnreachable;
  if (absl::IsDeadlineExceeded(status)) return NotAcquiredCode();
  if (absl::IsCancelled(status)) return kExitInterrupted;
  return kExitError;
}

namespace {

// The cause of the first write to stdout that failed inside PrintOutput
// (stdio keeps only its error flag; errno is gone by the final flush).
std::atomic<int> first_output_error{0};

// Whether stdout took everything written to it; else says why on stderr,
// once per process (the stream's error stays set: a later check, at exit,
// finds it again, without its cause).
bool OutputWritten(absl::string_view what) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno != 0 ? errno : first_output_error.load();
  if (flushed && !std::ferror(stdout)) return true;
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) {
    PrintStderr("zkr %s: cannot write the output: %s\n", std::string(what).c_str(),
                error != 0 ? std::strerror(error) : "write error");
  }
  return false;
}

}  // namespace

void PrintOutput(absl::string_view text) {
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) == text.size()) return;
  int none = 0;
  first_output_error.compare_exchange_strong(none, errno);
}

int FinishOutput(absl::string_view what, int code) {
  if (OutputWritten(what)) return code;
  return code == kExitOk ? kExitError : code;
}

void FlushOrExit(absl::string_view what) {
  if (OutputWritten(what)) return;
  FlushStderr(kExitFlushBound);
  std::_Exit(kExitError);
}

void ExitOnSignal(Signals& signals, absl::string_view what) {
  auto exit_now = [what = std::string(what)](int signal) {
    PrintStderr("zkr %s: interrupted (%s)\n", what.c_str(), strsignal(signal));
    FlushStderr(kExitFlushBound);
    std::_Exit(128 + signal);
  };
  // One that came while zkr was starting (they are blocked from the first
  // line of main) ends it now.
  if (const int received = signals.SetHandler(exit_now); received != 0) exit_now(received);
}

int Interrupted(absl::string_view what, int signal) {
  PrintStderr("zkr %s: interrupted (%s)\n", std::string(what).c_str(),
              signal != 0 ? strsignal(signal) : "cancelled");
  return signal != 0 ? 128 + signal : kExitInterrupted;
}

}  // namespace cli
}  // namespace zkr
