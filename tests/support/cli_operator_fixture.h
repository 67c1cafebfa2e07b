// The fixture of the tests of zkr as operators use it (issue 35): on top of
// CliTest, zkr run with variables in its environment, a shell script run
// the same way, the KEY=VALUE lines a hold without CMD prints, and files
// (credentials) with a given mode.
#ifndef ZKRECIPES_TESTS_SUPPORT_CLI_OPERATOR_FIXTURE_H_
#define ZKRECIPES_TESTS_SUPPORT_CLI_OPERATOR_FIXTURE_H_

#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/support/cli_fixture.h"

namespace zkr {
namespace testing {

class CliOperatorFixture : public CliTest {
 protected:
  // `zkr <args>` with `env` ("NAME=VALUE") added to its environment, and
  // --zk only if `with_zk`.
  Process& ZkrWithEnv(const std::vector<std::string>& env, std::vector<std::string> args,
                      bool with_zk = true) {
    if (with_zk) args.insert(args.begin() + 1, absl::StrCat("--zk=", connect_));
    return Started(Concat(Concat(Concat({"env"}, env), {binary_}), args), "e");
  }
  // `shell -c script` (sh, bash), captured as zkr's own runs are.
  Process& Shell(const std::string& script, const std::string& shell = "sh") {
    return Started({shell, "-c", script}, "s");
  }
  // The value of "KEY=VALUE" in `p`'s stdout once printed ("" if not
  // within 20 s or `p` exited first).
  std::string PrintedValue(Process& p, const std::string& key) {
    std::string value;
    WaitUntil(
        [&] {
          std::vector<std::string> values = AllValues(p.Stdout(), key);
          if (!values.empty()) value = values.front();
          return !values.empty() || p.Exited();
        },
        absl::Seconds(20));
    return value;
  }
  // Every value of KEY in `text`'s KEY=VALUE lines, in order.
  static std::vector<std::string> AllValues(const std::string& text, const std::string& key) {
    std::vector<std::string> values;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (absl::StartsWith(line, key + "=")) values.emplace_back(line.substr(key.size() + 1));
    }
    return values;
  }
  // File(name) holding `text`, with `mode`.
  void WriteFile(const std::string& name, const std::string& text, mode_t mode = 0600) {
    std::ofstream(File(name)) << text;
    chmod(File(name).c_str(), mode);
  }

 private:
  Process& Started(const std::vector<std::string>& argv, const std::string& prefix) {
    const int n = static_cast<int>(processes_.size());
    processes_.push_back(std::make_unique<Process>(argv, File(absl::StrCat(prefix, n, ".out")),
                                                   File(absl::StrCat(prefix, n, ".err"))));
    return *processes_.back();
  }
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_CLI_OPERATOR_FIXTURE_H_
