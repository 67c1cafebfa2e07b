// A child process of the zkr command-line tests; see cli_process.h.
#include "tests/support/cli_process.h"

#include <sys/prctl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace zkr {
namespace testing {
namespace {

ServerProcessOptions OwnGroupWithOutputIn(std::string out_path,
                                          std::string err_path) {
  ServerProcessOptions options;
  options.stdout_file = std::move(out_path);
  options.stderr_file = std::move(err_path);
  options.own_process_group = true;
  return options;
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, std::string out_path,
                 std::string err_path)
    : command_(absl::StrJoin(argv, " ")),
      out_path_(std::move(out_path)),
      err_path_(std::move(err_path)),
      process_(argv, OwnGroupWithOutputIn(out_path_, err_path_)) {
  // Orphans of our children (a CMD whose zkr was SIGKILLed) become our
  // children, so that KillGroup() can reap them too. Process-wide, so it is
  // set here, not by ServerProcess, whose other users do not want it.
  static const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  (void)subreaper;
  absl::Status started = WriteFile(out_path_, "");
  if (started.ok()) started = WriteFile(err_path_, "");
  if (started.ok()) started = process_.Start();
  if (!started.ok()) {
    ADD_FAILURE() << "cannot start " << command_ << ": " << started;
    return;
  }
  pid_ = process_.pid();
}

std::optional<int> Process::Wait(absl::Duration timeout) {
  if (WaitUntil([this] { return Exited(); }, timeout))
    return process_.exit_code();
  KillGroup();
  return std::nullopt;
}

bool Process::Exited() { return !process_.Running(); }

void Process::Signal(int signal) { process_.Signal(signal).IgnoreError(); }

void Process::KillGroup() { process_.KillGroup().IgnoreError(); }

std::string Process::Describe() const {
  const std::optional<int> code = process_.exit_code();
  return absl::StrCat("\n$ ", command_, "\n[exit ",
                      code.has_value() ? absl::StrCat(*code) : "-",
                      "]\n[stdout]\n", Stdout(), "[stderr]\n", Stderr());
}

}  // namespace testing
}  // namespace zkr
