// SessionAccess: what the library's own code (recipes, test support) may do
// with a Session beyond its public API — reach its core, and make a Session
// around a core built here (e.g. with a fault-injecting client factory).
// Not for users: it is not installed.
#ifndef ZKRECIPES_SRC_SESSION_ACCESS_H_
#define ZKRECIPES_SRC_SESSION_ACCESS_H_

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "src/session_core.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace internal {

class SessionAccess {
 public:
  static std::unique_ptr<Session> Wrap(std::shared_ptr<SessionCore> core) {
    return std::unique_ptr<Session>(new Session(std::move(core)));
  }
  // Session::Connect with every generation's client made by `factory` (a
  // test's wrapper around OpenCClient).
  static absl::StatusOr<std::unique_ptr<Session>> Connect(SessionOptions options,
                                                          ClientFactory factory) {
    absl::StatusOr<std::shared_ptr<SessionCore>> core =
        SessionCore::Connect(std::move(options), std::move(factory));
    if (!core.ok()) return core.status();
    return Wrap(*std::move(core));
  }
  static const std::shared_ptr<SessionCore>& Core(const Session& session) {
    return session.core_;
  }
};

// The core of `session` (what recipes build on).
inline const std::shared_ptr<SessionCore>& CoreOf(const Session& session) {
  return SessionAccess::Core(session);
}

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_SESSION_ACCESS_H_
