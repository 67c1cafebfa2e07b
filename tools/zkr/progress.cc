#include "tools/zkr/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gflags/gflags.h"
#include "tools/zkr/plain_text.h"
#include "tools/zkr/stderr_writer.h"
#include "zkrecipes/inspect.h"

DECLARE_bool(verbose);
DECLARE_bool(quiet);

namespace zkr {
namespace cli {
namespace {

// "host_1234" of "host_1234_<16 hex>": who it is, without the attempt's id.
std::string Who(const QueueEntryInfo& entry) {
  const std::string& id = entry.participant;
  const size_t last = id.rfind('_');
  return PlainText(last == std::string::npos || last == 0 ? id : id.substr(0, last));
}

// "40s", "3m20s": whole seconds.
std::string Age(absl::Time since) {
  return absl::FormatDuration(absl::Floor(absl::Now() - since, absl::Seconds(1)));
}

// The terminal's width, 80 if unknown.
size_t TerminalWidth() {
  struct winsize size;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

std::string WaitProgress::Describe(Session& session, const std::string& path, int64_t session_id) {
  absl::StatusOr<std::vector<QueueEntryInfo>> queue = InspectQueue(session, path);
  if (!queue.ok()) return absl::StrCat("queue unreadable: ", queue.status().message());
  size_t ours = queue->size();
  std::vector<const QueueEntryInfo*> holders;
  for (size_t i = 0; i < queue->size(); ++i) {
    const QueueEntryInfo& entry = (*queue)[i];
    if (entry.session_id == session_id && ours == queue->size()) ours = i;
    if (entry.holds) holders.push_back(&entry);
  }
  std::string text = ours == queue->size() ? std::string("queueing")
                                           : absl::StrCat(ours, " ahead");
  if (holders.empty()) return absl::StrCat(text, "; nobody holds");
  std::vector<std::string> names;
  for (size_t i = 0; i < holders.size() && i < 2; ++i) {
    names.push_back(absl::StrCat(Who(*holders[i]), " (",
                                 holders[i]->leases > 0 ? absl::StrCat("S", holders[i]->leases)
                                 : holders[i]->write    ? "W"
                                                        : "R",
                                 ") for ", Age(holders[i]->created)));
  }
  if (holders.size() > 2) names.push_back(absl::StrCat("+", holders.size() - 2, " more"));
  return absl::StrCat(text, "; held by ", absl::StrJoin(names, ", "));
}

WaitProgress::WaitProgress(Session& session, std::string what, std::string path)
    : session_(session),
      what_(std::move(what)),
      path_(std::move(path)),
      terminal_(!FLAGS_quiet && !FLAGS_verbose && isatty(STDERR_FILENO) == 1),
      verbose_(!FLAGS_quiet && FLAGS_verbose),
      start_(absl::Now()) {
  if (terminal_ || verbose_) thread_ = std::thread([this] { Run(); });
}

WaitProgress::~WaitProgress() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void WaitProgress::Run() {
  const int64_t session_id = session_.session_id();
  std::string last;
  bool drawn = false;
  // A wait of under a second shows nothing; then a look each second.
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Seconds(1))) break;
    }
    const std::string status = Describe(session_, path_, session_id);
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
    }
    if (verbose_) {
      if (status != last) {
        PrintStderr("zkr %s: %s: %s\n", what_.c_str(), path_.c_str(), status.c_str());
      }
      last = status;
      continue;
    }
    // The path last: a narrow terminal cuts it rather than the status.
    std::string line =
        absl::StrCat("zkr ", what_, ": waiting ", Age(start_), ": ", status, " (", path_, ")");
    const size_t width = TerminalWidth();
    if (line.size() >= width) line.resize(width - 1);
    PrintStderr("\r\033[K%s", line.c_str());
    drawn = true;
  }
  if (drawn) {  // the line goes with the wait
    PrintStderr("\r\033[K");
  }
}

}  // namespace cli
}  // namespace zkr
