// chaos_worker's command line (chaos_worker.cc): the flags, parsed from
// --key=value or --key value, and the usage message (exit code 2).
#ifndef ZKRECIPES_TESTS_CHAOS_CHAOS_WORKER_FLAGS_H_
#define ZKRECIPES_TESTS_CHAOS_CHAOS_WORKER_FLAGS_H_

#include <optional>
#include <string>

#include "absl/time/time.h"

namespace zkr {
namespace chaos {

struct Flags {
  std::string zk, path, ledger, resource, mode = "mixed", election;
  int id = -1;
  absl::Duration session_timeout = absl::Seconds(3);
  absl::Duration run_for = absl::InfiniteDuration();
};

// Prints `why` and the usage to stderr; returns the exit code (2).
int Usage(const std::string& why);

// The flags, or nullopt with `*error` set.
std::optional<Flags> ParseFlags(int argc, char** argv, std::string* error);

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_CHAOS_WORKER_FLAGS_H_
