// zkr inspect: the queue of a lock, semaphore or election, for people and
// for machines.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "gflags/gflags.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "tools/zkr/participant_text.h"
#include "tools/zkr/plain_text.h"
#include "tools/zkr/stderr_writer.h"
#include "zkrecipes/inspect.h"

DECLARE_string(path);
DECLARE_bool(json);

namespace zkr {

namespace cli {
namespace {

void PrintJson(const std::vector<QueueEntryInfo>& queue) {
  const absl::Time now = absl::Now();
  const Dialect dialect = queue.empty() ? Dialect::kZkr : queue.front().dialect;
  std::string out = absl::StrCat("{\"path\":", JsonString(FLAGS_path), ",\"dialect\":",
                                 JsonString(DialectName(dialect)), ",\"entries\":[");
  for (size_t i = 0; i < queue.size(); ++i) {
    const QueueEntryInfo& e = queue[i];
    absl::StrAppend(&out, i == 0 ? "" : ",", "{\"node\":", JsonString(e.name),
                    ",\"participant\":", JsonString(e.participant), ",\"host\":", JsonString(HostOf(e)),
                    ",\"mode\":", JsonString(e.barrier_member ? "M" : e.semaphore_size > 0 ? "S" : e.write ? "W" : "R"),
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
                    ",\"barrier_member\":", e.barrier_member ? "true" : "false",
                    ",\"barrier_count\":", e.barrier_count, ",\"data\":", JsonString(e.data), "}");
  }
  absl::StrAppend(&out, "]}");
  std::printf("%s\n", out.c_str());
}

// A double barrier's members: who has entered; none holds or waits on another.
void PrintBarrierTable(const std::vector<QueueEntryInfo>& members, bool open) {
  const absl::Time now = absl::Now();
  const int count = members.front().barrier_count;
  std::printf("%s: double barrier%s, %zu member(s) inside, %s\n", PlainText(FLAGS_path).c_str(),
              count > 0 ? absl::StrCat(" of ", count).c_str() : "", members.size(),
              open ? "open (all entered; they leave as they finish)" : "not open yet");
  std::printf("%-11s %-20s %-10s %s\n", "SEQUENCE", "SESSION", "AGE", "MEMBER");
  for (const QueueEntryInfo& e : members) {
    std::printf("%-11d %-20s %-10s %s\n", e.sequence, absl::StrFormat("0x%x", e.session_id).c_str(),
                AgeOf(e, now).c_str(),
                PlainText(e.data).c_str());
  }
}

void PrintTable(const std::vector<QueueEntryInfo>& queue) {
  const absl::Time now = absl::Now();
  const Dialect dialect = queue.empty() ? Dialect::kZkr : queue.front().dialect;
  std::printf("%s: %zu participant(s)%s\n", PlainText(FLAGS_path).c_str(), queue.size(),
              dialect == Dialect::kZkr
                  ? ""
                  : absl::StrCat(" (", DialectName(dialect), "'s node names)").c_str());
  std::printf("%-6s %-11s %-6s %-20s %-10s %-24s %s\n", "MODE", "SEQUENCE", "STATE", "SESSION",
              "AGE", "WAITS ON", "HOST (DATA)");
  for (const QueueEntryInfo& e : queue) {
    std::string waits = "-";
    if (!e.watching.empty()) {
      waits = PlainText(ShortNodeName(e.watching.back()));
      if (e.watching.size() > 1) waits = absl::StrCat("all ", e.watching.size(), " before");
    }
    // Node data and reasons are other clients' bytes: escaped (one line,
    // nothing for the terminal to interpret).
    std::printf("%-6s %-11d %-6s %-20s %-10s %-24s %s (%s)%s\n", ModeOf(e).c_str(), e.sequence,
                e.holds ? "HOLDS" : "waits", absl::StrFormat("0x%x", e.session_id).c_str(),
                AgeOf(e, now).c_str(),
                waits.c_str(), PlainText(HostOf(e)).c_str(), PlainText(e.data).c_str(),
                e.revoke_requested
                    ? absl::StrCat("  REVOKE REQUESTED: ", PlainText(e.revoke_reason)).c_str()
                    : "");
  }
}

// No participant at `path` but queues below it: not what inspect shows.
int NotAQueue(const std::vector<std::string>& below, size_t limit) {
  std::string list;
  for (const std::string& queue : below) absl::StrAppend(&list, "  ", PlainText(queue), "\n");
  PrintStderr(
              "zkr inspect: %s is not a lock, semaphore, election, group or barrier (no "
              "participant nodes); the queues below it%s:\n%s",
              PlainText(FLAGS_path).c_str(),
              below.size() >= limit ? absl::StrCat(" (the first ", limit, ")").c_str() : "",
              list.c_str());
  return kExitError;
}

}  // namespace

int RunInspect() {
  if (absl::Status s = CheckPathFlag(FLAGS_path); !s.ok()) return Report("inspect", s);
  auto session = ConnectFromFlags();
  if (!session.ok()) return Report("inspect", session.status());
  auto queue = InspectQueue(**session, FLAGS_path);
  if (!queue.ok()) return Report("inspect", queue.status());
  if (queue->empty()) {
    // An absent or empty directory is a free lock; a parent of queues is
    // not one (exit 1, naming them).
    constexpr size_t kLimit = 100;
    auto below = FindQueuesBelow(**session, FLAGS_path, /*depth=*/3, kLimit);
    if (!below.ok()) return Report("inspect", below.status());
    if (!below->empty()) return NotAQueue(*below, kLimit);
  }
  if (FLAGS_json) {
    PrintJson(*queue);
  } else if (!queue->empty() && queue->front().barrier_member) {
    auto ready = (*session)->Exists(FLAGS_path + "/ready");
    if (!ready.ok()) return Report("inspect", ready.status());
    PrintBarrierTable(*queue, ready->has_value());
  } else {
    PrintTable(*queue);
  }
  return kExitOk;
}

}  // namespace cli
}  // namespace zkr
