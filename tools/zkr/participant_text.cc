#include "tools/zkr/participant_text.h"

#include "absl/strings/str_cat.h"

namespace zkr {
namespace cli {
namespace {

// "host_pid_random" -> the positions of its last two underscores.
bool SplitParticipant(const std::string& participant, size_t* pid_at, size_t* random_at) {
  const size_t last = participant.rfind('_');
  if (last == std::string::npos || last == 0) return false;
  const size_t pid = participant.rfind('_', last - 1);
  if (pid == std::string::npos) return false;
  *pid_at = pid;
  *random_at = last;
  return true;
}

}  // namespace

std::string HostOf(const QueueEntryInfo& e) {
  if (e.dialect != Dialect::kZkr) return "-";
  size_t pid = 0, random = 0;
  if (SplitParticipant(e.participant, &pid, &random)) return e.participant.substr(0, pid);
  const size_t last = e.participant.rfind('_');
  return last == std::string::npos || last == 0 ? e.participant : e.participant.substr(0, last);
}

std::string PidOf(const QueueEntryInfo& e) {
  size_t pid = 0, random = 0;
  if (e.dialect != Dialect::kZkr || !SplitParticipant(e.participant, &pid, &random)) return "-";
  return e.participant.substr(pid + 1, random - pid - 1);
}

std::string ModeOf(const QueueEntryInfo& e) {
  if (e.barrier_member) return "M";
  if (e.semaphore_size > 0) return absl::StrCat("S", e.leases, "/", e.semaphore_size);
  return e.write ? "W" : "R";
}

std::string AgeOf(const QueueEntryInfo& e, absl::Time now) {
  return absl::FormatDuration(absl::Trunc(now - e.created, absl::Milliseconds(100)));
}

}  // namespace cli
}  // namespace zkr
