// zkr revoke: ask the holders of a lock or semaphore to let go; after the
// grace period, delete their nodes.
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "tools/zkr/commands.h"
#include "zkrecipes/revocation.h"

DECLARE_string(path);
DECLARE_string(grace);
DECLARE_string(node);
DECLARE_string(reason);

namespace zkr {
namespace cli {

int RunRevoke(Signals& signals) {
  if (absl::Status s = CheckPathFlag(FLAGS_path); !s.ok()) return Report("revoke", s);
  auto grace = ParseDurationFlag("grace", FLAGS_grace);
  if (!grace.ok()) return Report("revoke", grace.status());
  ExitOnSignal(signals, "revoke");
  auto session = ConnectFromFlags();
  if (!session.ok()) return Report("revoke", session.status());
  // A signal closes the session: our request nodes go with it, and no
  // holder's node is deleted after that.
  Signals::Scope scope(signals, [&](int) { (*session)->Close(); });
  if (const int signal = signals.received(); signal != 0) return Interrupted("revoke", signal);
  RevokeOptions options;
  options.node = FLAGS_node;
  options.grace = *grace;
  options.reason = FLAGS_reason.empty() ? absl::StrCat("zkr revoke, pid ", getpid()) : FLAGS_reason;
  auto outcomes = Revoke(**session, FLAGS_path, options);
  if (const int signal = signals.received(); signal != 0) return Interrupted("revoke", signal);
  if (!outcomes.ok()) return Report("revoke", outcomes.status());
  if (outcomes->empty()) std::printf("%s: nothing held\n", FLAGS_path.c_str());
  for (const RevokeOutcome& outcome : *outcomes) {
    std::printf("%s %s\n", outcome.node.c_str(), std::string(RevokeHowName(outcome.how)).c_str());
  }
  return kExitOk;
}

}  // namespace cli
}  // namespace zkr
