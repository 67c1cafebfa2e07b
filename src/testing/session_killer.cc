// FourLetterWord and ExpireSession: talking to servers from tests.
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "src/testing/server_process.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace testing {
namespace {

// ---- four-letter words ------------------------------------------------------

// Closes a file descriptor when it goes out of scope.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  const int fd_;
};

// Waits until `fd` has one of `events` or `deadline` passes. Returns whether
// it is ready.
bool PollUntil(int fd, short events, absl::Time deadline) {
  for (;;) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd p{fd, events, 0};
    const int ms = static_cast<int>(std::max<int64_t>(
        1, absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)))));
    const int n = poll(&p, 1, ms);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// A non-blocking socket connected to host:port by `deadline`.
absl::StatusOr<int> ConnectBy(absl::string_view host, int port,
                              absl::Time deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const std::string host_string(host);
  const std::string port_string = absl::StrCat(port);
  const int gai =
      getaddrinfo(host_string.c_str(), port_string.c_str(), &hints, &addresses);
  if (gai != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve '", host, "': ", gai_strerror(gai)));
  }
  std::string last_error = "no address";
  int connected = -1;
  for (addrinfo* a = addresses; a != nullptr && connected < 0; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
               a->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int err = 0;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        if (PollUntil(fd, POLLOUT, deadline)) {
          socklen_t len = sizeof(err);
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        } else {
          err = ETIMEDOUT;
        }
      }
    }
    if (err == 0) {
      connected = fd;
    } else {
      last_error = std::strerror(err);
      close(fd);
    }
  }
  freeaddrinfo(addresses);
  if (connected < 0) return absl::UnavailableError(last_error);
  return connected;
}

// ---- session expiry ---------------------------------------------------------

// What a handle's session watcher has seen; shared with the completion thread.
struct SessionState {
  absl::Mutex mu;
  int state ABSL_GUARDED_BY(mu) = 0;

  bool Settled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return state == ZOO_CONNECTED_STATE || state == ZOO_EXPIRED_SESSION_STATE ||
           state == ZOO_AUTH_FAILED_STATE;
  }
};

void SessionWatcher(zhandle_t* /*zh*/, int type, int state,
                    const char* /*path*/, void* context) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* session = static_cast<SessionState*>(context);
  absl::MutexLock lock(&session->mu);
  session->state = state;
}

// The killer's handle logs nothing: its connects and closes are expected.
void QuietLog(const char* /*message*/) {}

enum class AttachResult { kConnected, kExpired };

// Opens a handle on session `id` and closes it again. If the handle got
// connected, closing it has ended the session.
absl::StatusOr<AttachResult> AttachAndClose(const std::string& connect,
                                            const clientid_t& id,
                                            absl::Time deadline) {
  SessionState session;
  const int recv_timeout_ms = 6000;
  zhandle_t* zh = zookeeper_init2(connect.c_str(), SessionWatcher,
                                  recv_timeout_ms, &id, &session, 0, QuietLog);
  if (zh == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "zookeeper_init2 '", connect, "': ", std::strerror(errno)));
  }
  int state;
  {
    absl::MutexLock lock(&session.mu);
    session.mu.AwaitWithDeadline(
        absl::Condition(&session, &SessionState::Settled), deadline);
    state = session.state;
  }
  zookeeper_close(zh);  // After it returns, no watcher runs any more.
  if (state == ZOO_CONNECTED_STATE) return AttachResult::kConnected;
  if (state == ZOO_EXPIRED_SESSION_STATE) return AttachResult::kExpired;
  if (state == ZOO_AUTH_FAILED_STATE) {
    return absl::UnauthenticatedError(
        absl::StrCat("session 0x", absl::Hex(id.client_id), " on ", connect,
                     ": authentication failed"));
  }
  return absl::DeadlineExceededError(absl::StrCat("could not reach session 0x",
                                                  absl::Hex(id.client_id),
                                                  " on ", connect, " in time"));
}

}  // namespace

absl::StatusOr<std::string> FourLetterWord(absl::string_view host, int port,
                                           absl::string_view command,
                                           absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const std::string target = absl::StrCat(host, ":", port);
  auto fail = [&](absl::string_view what) {
    return absl::UnavailableError(absl::StrCat("four-letter word '", command,
                                               "' to ", target, ": ", what));
  };
  absl::StatusOr<int> fd = ConnectBy(host, port, deadline);
  if (!fd.ok()) {
    if (absl::IsInvalidArgument(fd.status())) return fd.status();
    return fail(absl::StrCat("connect: ", fd.status().message()));
  }
  ScopedFd socket(*fd);
  if (send(socket.get(), command.data(), command.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(command.size())) {
    return fail(absl::StrCat("send: ", std::strerror(errno)));
  }
  std::string reply;
  char buffer[4096];
  for (;;) {
    if (!PollUntil(socket.get(), POLLIN, deadline)) {
      return fail(
          absl::StrCat("no complete answer within ", DurationText(timeout)));
    }
    const ssize_t n = recv(socket.get(), buffer, sizeof(buffer), 0);
    if (n == 0) return reply;  // The server closes after answering.
    if (n > 0) {
      reply.append(buffer, static_cast<size_t>(n));
    } else if (errno != EINTR && errno != EAGAIN) {
      return fail(absl::StrCat("recv: ", std::strerror(errno)));
    }
  }
}

absl::Status ExpireSession(const std::string& connect, int64_t session_id,
                           const std::string& password,
                           absl::Duration timeout) {
  clientid_t id{};
  if (password.size() != sizeof(id.passwd)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "password of session 0x", absl::Hex(session_id), " has ",
        password.size(), " bytes; ZooKeeper's have ", sizeof(id.passwd)));
  }
  id.client_id = session_id;
  std::memcpy(id.passwd, password.data(), sizeof(id.passwd));
  const absl::Time deadline = absl::Now() + timeout;
  // Attach and close until an attach finds the session gone: a close can
  // miss if the original client re-attached in between (the server then
  // drops our connection), so only "expired" proves the job is done.
  for (;;) {
    absl::StatusOr<AttachResult> result = AttachAndClose(connect, id, deadline);
    if (!result.ok()) return result.status();
    if (*result == AttachResult::kExpired) return absl::OkStatus();
  }
}

std::map<std::string, std::set<std::string>> ParseWatchesByPath(absl::string_view wchp) {
  std::map<std::string, std::set<std::string>> listing;
  std::string current;
  for (absl::string_view line : absl::StrSplit(wchp, '\n', absl::SkipEmpty())) {
    if (line.front() == '\t') {
      listing[current].insert(std::string(absl::StripAsciiWhitespace(line)));
    } else {
      current = std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return listing;
}

int64_t MntrValue(absl::string_view mntr, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(mntr, '\n')) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, '\t');
    int64_t value = 0;
    if (parts.size() == 2 && parts[0] == key && absl::SimpleAtoi(parts[1], &value)) return value;
  }
  return -1;
}

std::string SessionIdHex(int64_t session_id) { return absl::StrFormat("0x%x", session_id); }

}  // namespace testing
}  // namespace zkr
