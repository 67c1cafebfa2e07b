// CliTest with a runner that gathers each zkr command's exit code, output
// and time, bounded (Run, RunAll); a JSON check of its output lines; a TCP
// proxy to the shared server; and the pid a CMD left in a file.
#ifndef ZKRECIPES_TESTS_SUPPORT_CLI_RUN_FIXTURE_H_
#define ZKRECIPES_TESTS_SUPPORT_CLI_RUN_FIXTURE_H_

#include <sys/types.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/support/cli_fixture.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace testing {

class CliRunTest : public CliTest {
 protected:
  struct Result {
    std::optional<int> code;
    std::string out, err;
    absl::Duration took;
    std::string describe;
  };
  // Runs one command; it must end within `bound`.
  Result Run(const std::vector<std::string>& args, absl::Duration bound = absl::Seconds(30),
             bool raw = false) {
    return std::move(RunAll({args}, bound, raw).front());
  }
  // Runs every command at once (they wait on nothing shared); each must end
  // within `bound` of the start. The results in order.
  std::vector<Result> RunAll(const std::vector<std::vector<std::string>>& commands,
                             absl::Duration bound = absl::Seconds(30), bool raw = false) {
    const absl::Time start = absl::Now();
    std::vector<Process*> started;
    for (const auto& args : commands) started.push_back(raw ? &ZkrRaw(args) : &Zkr(args));
    std::vector<Result> results;
    for (Process* p : started) {
      Result r;
      r.code = p->Wait(std::max(absl::ZeroDuration(), start + bound - absl::Now()));
      r.took = absl::Now() - start;
      r.out = p->Stdout();
      r.err = p->Stderr();
      r.describe = p->Describe();
      results.push_back(std::move(r));
    }
    return results;
  }
  // Each line of File(name) parses as JSON (python3's json module).
  bool JsonLinesParse(const std::string& text, std::string* why) {
    const std::string file = File(absl::StrCat("json", json_files_++, ".txt"));
    std::ofstream(file) << text;
    const std::string cmd = absl::StrCat(
        "python3 -c 'import json,sys\nfor l in open(sys.argv[1],encoding=\"utf-8\"):\n"
        " l.strip() and json.loads(l)' ",
        ShQuote(file), " 2>", ShQuote(file + ".err"));
    const int rc = std::system(cmd.c_str());
    *why = ReadFile(file + ".err");
    return rc == 0;
  }
  std::unique_ptr<TcpProxy> StartProxy() {
    const size_t colon = connect_.rfind(':');
    auto proxy = TcpProxy::Start(connect_.substr(0, colon), std::stoi(connect_.substr(colon + 1)));
    EXPECT_TRUE(proxy.ok()) << proxy.status();
    return proxy.ok() ? std::move(*proxy) : nullptr;
  }
  // The pid a CMD wrote to File(name), or 0.
  pid_t PidIn(absl::string_view name) {
    int pid = 0;
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(File(name))), &pid) ? pid : 0;
  }
  int json_files_ = 0;
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_CLI_RUN_FIXTURE_H_
