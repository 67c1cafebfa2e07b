#include "tools/zkr/command_run.h"

#include <memory>

namespace zkr {
namespace cli {

void CommandRun::Forward(int signal) {
  absl::MutexLock lock(&mu_);
  if (running_ != nullptr) {
    running_->Signal(signal);
  } else {
    pending_signal_ = signal;
  }
}

void CommandRun::Lost() {
  absl::MutexLock lock(&mu_);
  lost_ = true;
  if (running_ != nullptr && terminate_on_loss_) running_->Terminate(grace_);
}

bool CommandRun::lost() const {
  absl::MutexLock lock(&mu_);
  return lost_;
}

int CommandRun::Run(absl::string_view what, const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& env) {
  absl::StatusOr<std::unique_ptr<Child>> child = Child::Start(argv, env);
  if (!child.ok()) return Child::ReportNotStarted(what, child.status());
  {
    absl::MutexLock lock(&mu_);
    running_ = child->get();
    if (lost_ && terminate_on_loss_) running_->Terminate(grace_);
    if (pending_signal_ != 0) running_->Signal(pending_signal_);
  }
  const int code = (*child)->Wait();
  absl::MutexLock lock(&mu_);
  running_ = nullptr;
  return code;
}

}  // namespace cli
}  // namespace zkr
