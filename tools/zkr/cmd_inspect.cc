// zkr inspect: the queue of a lock, semaphore or election, for people and
// for machines.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gflags/gflags.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "zkrecipes/inspect.h"

DECLARE_string(path);
DECLARE_bool(json);

namespace zkr {

namespace cli {
namespace {

// "host_pid_random" -> "host" and "pid" (best effort, for the table).
std::string HostOf(const std::string& participant) {
  size_t last = participant.rfind('_');
  if (last == std::string::npos || last == 0) return participant;
  size_t pid = participant.rfind('_', last - 1);
  return pid == std::string::npos ? participant.substr(0, last) : participant.substr(0, pid);
}

// "R", "W", or "S2/4" (a semaphore participant asking 2 of 4 leases).
std::string ModeOf(const QueueEntryInfo& e) {
  if (e.semaphore_size > 0) return absl::StrCat("S", e.leases, "/", e.semaphore_size);
  return e.write ? "W" : "R";
}

void PrintJson(const std::vector<QueueEntryInfo>& queue) {
  const absl::Time now = absl::Now();
  std::string out = absl::StrCat("{\"path\":", JsonString(FLAGS_path), ",\"entries\":[");
  for (size_t i = 0; i < queue.size(); ++i) {
    const QueueEntryInfo& e = queue[i];
    absl::StrAppend(&out, i == 0 ? "" : ",", "{\"node\":", JsonString(e.name),
                    ",\"participant\":", JsonString(e.participant), ",\"host\":", JsonString(HostOf(e.participant)),
                    ",\"mode\":", JsonString(e.semaphore_size > 0 ? "S" : e.write ? "W" : "R"),
                    ",\"leases\":", e.leases, ",\"semaphore_size\":", e.semaphore_size,
                    ",\"sequence\":", e.sequence,
                    ",\"session_id\":", JsonString(absl::StrFormat("0x%x", e.session_id)),
                    ",\"age_ms\":", absl::ToInt64Milliseconds(now - e.created),
                    ",\"fencing_token\":", e.czxid, ",\"holds\":", e.holds ? "true" : "false",
                    ",\"watches\":", e.watches.empty() ? "null" : JsonString(e.watches),
                    ",\"watching\":[");
    for (size_t w = 0; w < e.watching.size(); ++w) {
      absl::StrAppend(&out, w == 0 ? "" : ",", JsonString(e.watching[w]));
    }
    absl::StrAppend(&out, "],\"revoke_requested\":", e.revoke_requested ? "true" : "false",
                    ",\"revoke_reason\":", e.revoke_requested ? JsonString(e.revoke_reason) : "null",
                    ",\"data\":", JsonString(e.data), "}");
  }
  absl::StrAppend(&out, "]}");
  std::printf("%s\n", out.c_str());
}

void PrintTable(const std::vector<QueueEntryInfo>& queue) {
  const absl::Time now = absl::Now();
  std::printf("%s: %zu participant(s)\n", FLAGS_path.c_str(), queue.size());
  std::printf("%-6s %-11s %-6s %-20s %-10s %-24s %s\n", "MODE", "SEQUENCE", "STATE", "SESSION",
              "AGE", "WAITS ON", "HOST (DATA)");
  for (const QueueEntryInfo& e : queue) {
    std::string data = absl::StrReplaceAll(e.data, {{"\n", " "}});
    std::string waits = "-";
    if (!e.watching.empty()) {
      waits = ShortNodeName(e.watching.back());
      if (e.watching.size() > 1) waits = absl::StrCat("all ", e.watching.size(), " before");
    }
    std::printf("%-6s %-11d %-6s %-20s %-10s %-24s %s (%s)%s\n", ModeOf(e).c_str(), e.sequence,
                e.holds ? "HOLDS" : "waits", absl::StrFormat("0x%x", e.session_id).c_str(),
                absl::FormatDuration(absl::Trunc(now - e.created, absl::Milliseconds(100))).c_str(),
                waits.c_str(), HostOf(e.participant).c_str(), data.c_str(),
                e.revoke_requested
                    ? absl::StrCat("  REVOKE REQUESTED: ",
                                   absl::StrReplaceAll(e.revoke_reason, {{"\n", " "}}))
                          .c_str()
                    : "");
  }
}

}  // namespace

int RunInspect() {
  if (absl::Status s = CheckPathFlag(FLAGS_path); !s.ok()) return Report("inspect", s);
  auto session = ConnectFromFlags();
  if (!session.ok()) return Report("inspect", session.status());
  auto queue = InspectQueue(**session, FLAGS_path);
  if (!queue.ok()) return Report("inspect", queue.status());
  if (FLAGS_json) {
    PrintJson(*queue);
  } else {
    PrintTable(*queue);
  }
  return kExitOk;
}

}  // namespace cli
}  // namespace zkr
