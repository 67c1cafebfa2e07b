#include "tools/bench/compare.h"

#include <zookeeper/zookeeper.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "src/macros.h"
#include "tools/bench/raw_floor.h"

namespace zkr {
namespace bench {
namespace {

constexpr char kPackages[] =
    "libcurator-recipes-java libcurator-framework-java default-jdk-headless python3-kazoo";

// Where the comparison programs are: $ZKR_COMPARE_DIR, else the source tree
// this binary was built from.
std::string ProgramDir() {
  const char* dir = std::getenv("ZKR_COMPARE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : ZKR_COMPARE_DIR;
}

struct Library {
  const char* id;       // row prefix
  const char* name;
  std::string check;    // a shell command that succeeds when it can run
  std::string command;  // the program, to be followed by its four arguments
};

absl::Status CreateDir(RawClient& raw, const std::string& path) {
  int rc = zoo_create(raw.get(), path.c_str(), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                      nullptr, 0);
  if (rc != ZOK) return absl::InternalError(absl::StrCat("create ", path, ": ", zerror(rc)));
  return absl::OkStatus();
}

absl::Status DeleteDir(RawClient& raw, const std::string& path) {
  int rc = zoo_delete(raw.get(), path.c_str(), -1);
  if (rc == ZNOTEMPTY) {
    return absl::InternalError(absl::StrCat(path, " is not empty: a compared library left nodes"));
  }
  if (rc != ZOK) return absl::InternalError(absl::StrCat("delete ", path, ": ", zerror(rc)));
  return absl::OkStatus();
}

}  // namespace

absl::string_view JsonField(absl::string_view line, absl::string_view key) {
  const std::string quoted = absl::StrCat("\"", key, "\":");
  size_t at = line.find(quoted);
  if (at == absl::string_view::npos) return "";
  absl::string_view value = line.substr(at + quoted.size());
  value = value.substr(0, value.find_first_of(",}"));
  if (absl::ConsumePrefix(&value, "\"")) absl::ConsumeSuffix(&value, "\"");
  return value;
}

absl::StatusOr<std::string> Output(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("cannot run: ", command));
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) {
    return absl::InternalError(absl::StrCat("failed (status ", status, "): ", command));
  }
  return out;
}

absl::StatusOr<std::vector<Result>> OtherLibraries(Context& context) {
  const int cycles = context.quick ? 50 : 2000;
  const int warmup = context.quick ? 50 : 2000;  // the JVM needs its JIT warm
  const std::string dir = ProgramDir();
  const std::string classpath = absl::StrCat("\"$(sh '", dir, "/classpath.sh')\"");
  const Library libraries[] = {
      {"8c", "Curator",
       absl::StrCat("command -v java >/dev/null && sh '", dir, "/classpath.sh' >/dev/null"),
       absl::StrCat("java -cp ", classpath, " '", dir, "/CuratorLockBench.java'")},
      {"8k", "Kazoo", "/usr/bin/python3 -c 'import kazoo' 2>/dev/null",
       absl::StrCat("/usr/bin/python3 '", dir, "/kazoo_lock_bench.py'")},
  };
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<RawClient> raw, RawClient::Connect(context.connect));
  const std::string base = context.root + "/compare";
  const std::string raw_dir = base + "-raw";
  ZKR_RETURN_IF_ERROR(CreateDir(*raw, base));
  ZKR_RETURN_IF_ERROR(CreateDir(*raw, raw_dir));
  std::vector<Result> results;
  for (const Library& library : libraries) {
    if (std::system(library.check.c_str()) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          library.name, " cannot run here: `tools/run.sh bench --compare` installs it (Debian: ",
          kPackages, "); programs looked for in ", dir, " ($ZKR_COMPARE_DIR)"));
    }
    // The floor just before, on the same server state.
    Samples floor;
    ZKR_RETURN_IF_ERROR(RawCycles(*raw, raw_dir, cycles, &floor));
    const double floor_p50 = floor.Quantile(0.5);
    ZKR_ASSIGN_OR_RETURN(
        std::string out,
        Output(absl::StrCat(library.command, " '", context.connect, "' '", base, "' ", cycles,
                            " ", warmup)));
    for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
      Result r;
      double cpu = 0;
      if (!absl::SimpleAtod(JsonField(line, "p50_us"), &r.p50_us) ||
          !absl::SimpleAtod(JsonField(line, "p99_us"), &r.p99_us) ||
          !absl::SimpleAtod(JsonField(line, "cpu_us_per_cycle"), &cpu)) {
        return absl::InternalError(absl::StrCat(library.name, " printed an unreadable line: ", line));
      }
      const absl::string_view variant = JsonField(line, "variant");
      // The letter of workload 2's row for the same lock: w, r or x.
      const absl::string_view letter = variant == "exclusive" ? "x" : variant.substr(0, 1);
      r.id = absl::StrCat(library.id, letter);
      r.name = absl::StrCat(JsonField(line, "library"), " ", JsonField(line, "version"), " ",
                            variant, " lock acquire+release (compare 2", letter, ")");
      r.in_process = false;
      r.ratio = floor_p50 > 0 ? r.p50_us / floor_p50 : 0;
      r.figures = {{"paired_floor_p50_us", floor_p50},
                   {"client_cpu_us_per_cycle", cpu},
                   {"cpu_ratio_to_raw", context.floor_cpu_us_per_cycle > 0
                                            ? cpu / context.floor_cpu_us_per_cycle
                                            : 0}};
      results.push_back(std::move(r));
    }
  }
  ZKR_ASSIGN_OR_RETURN(Result mixed,
                       MixedHandoffs(context, absl::StrCat("java -cp ", classpath, " '", dir,
                                                           "/CuratorHandoffBench.java'")));
  results.push_back(std::move(mixed));
  ZKR_ASSIGN_OR_RETURN(
      std::vector<Result> recipes,
      OtherRecipes(context, base,
                   absl::StrCat("java -cp ", classpath, " '", dir, "/CuratorRecipeBench.java'"),
                   absl::StrCat("/usr/bin/python3 '", dir, "/kazoo_recipe_bench.py'")));
  results.insert(results.end(), recipes.begin(), recipes.end());
  ZKR_RETURN_IF_ERROR(DeleteDir(*raw, raw_dir));
  ZKR_RETURN_IF_ERROR(DeleteDir(*raw, base));
  return results;
}

}  // namespace bench
}  // namespace zkr
