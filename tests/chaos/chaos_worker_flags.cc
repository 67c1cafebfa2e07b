#include "tests/chaos/chaos_worker_flags.h"

#include <cstdio>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/string_view.h"

namespace zkr {
namespace chaos {

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "chaos_worker: %s\nusage: chaos_worker --zk=HOSTS --path=/lock "
               "--ledger=FILE "
               "--resource=FILE --id=N [--mode=mixed|write] [--election=/path] "
               "[--session_timeout=3s] [--run_for=inf]\n",
               why.c_str());
  return 2;
}

std::optional<Flags> ParseFlags(int argc, char** argv, std::string* error) {
  Flags flags;
  std::map<std::string, std::string> values;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (!absl::ConsumePrefix(&arg, "--")) {
      *error = absl::StrCat("unexpected argument \"", argv[i], "\"");
      return std::nullopt;
    }
    std::string key, value;
    size_t eq = arg.find('=');
    if (eq != absl::string_view::npos) {
      key = std::string(arg.substr(0, eq));
      value = std::string(arg.substr(eq + 1));
    } else if (i + 1 < argc) {
      key = std::string(arg);
      value = argv[++i];
    } else {
      *error = absl::StrCat("--", arg, " needs a value");
      return std::nullopt;
    }
    values[key] = value;
  }
  for (const auto& [key, value] : values) {
    if (key == "zk") {
      flags.zk = value;
    } else if (key == "path") {
      flags.path = value;
    } else if (key == "ledger") {
      flags.ledger = value;
    } else if (key == "resource") {
      flags.resource = value;
    } else if (key == "mode") {
      flags.mode = value;
    } else if (key == "election") {
      flags.election = value;
    } else if (key == "id") {
      if (!absl::SimpleAtoi(value, &flags.id) || flags.id < 0) {
        *error = absl::StrCat("--id=", value, ": not a non-negative integer");
        return std::nullopt;
      }
    } else if (key == "session_timeout" || key == "run_for") {
      absl::Duration d;
      if (!absl::ParseDuration(value, &d) || d <= absl::ZeroDuration()) {
        *error =
            absl::StrCat("--", key, "=", value, ": not a positive duration");
        return std::nullopt;
      }
      (key == "run_for" ? flags.run_for : flags.session_timeout) = d;
    } else {
      *error = absl::StrCat("unknown flag --", key);
      return std::nullopt;
    }
  }
  if (flags.zk.empty() || flags.path.empty() || flags.ledger.empty() ||
      flags.resource.empty() || flags.id < 0) {
    *error = "--zk, --path, --ledger, --resource and --id are required";
    return std::nullopt;
  }
  if (flags.mode != "mixed" && flags.mode != "write") {
    *error = absl::StrCat("--mode=", flags.mode, ": expected mixed or write");
    return std::nullopt;
  }
  return flags;
}

}  // namespace chaos
}  // namespace zkr
