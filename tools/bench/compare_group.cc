// Workload 8's group-membership rows (issue 37, item 6's remainder): a
// member joins and a watcher on another session hears of it — from the
// join call to the watcher's callback, per round (8g: GroupMember and
// GroupWatch; Curator GroupMember seen by a CuratorCache listener, 8cg;
// Kazoo Party seen by a ChildrenWatch, 8kg). Each other library's p50 is a
// ratio to ours measured just before it (lower is better). Our GroupWatch
// reads every member's data on each change (it reports ids and data); a
// Kazoo ChildrenWatch gets the node names only.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "src/macros.h"
#include "tools/bench/compare.h"
#include "zkrecipes/group_member.h"

namespace zkr {
namespace bench {

absl::StatusOr<std::vector<Result>> Groups(Context& context, const std::string& base,
                                           const std::string (&programs)[2]) {
  const int rounds = context.quick ? 3 : 30, warmup = context.quick ? 1 : 5;
  const std::string path = context.root + "/compare-group";
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> watching, Connect(context));
  ZKR_ASSIGN_OR_RETURN(std::unique_ptr<Session> joining, Connect(context));
  absl::Mutex mu;
  std::map<std::string, absl::Time> heard;  // guarded by mu: id -> when it was seen to join
  ZKR_ASSIGN_OR_RETURN(
      std::unique_ptr<GroupWatch> watch,
      GroupWatch::Create(*watching, path, [&](const std::vector<GroupMemberInfo>& members) {
        const absl::Time now = absl::Now();
        absl::MutexLock lock(&mu);
        std::map<std::string, absl::Time> current;
        for (const GroupMemberInfo& m : members) {
          auto known = heard.find(m.id);
          current[m.id] = known != heard.end() ? known->second : now;
        }
        heard.swap(current);
      }));
  // Waits until the watcher has seen `id` in the group (or, !in, out of it).
  auto await = [&](const std::string& id, bool in) -> absl::Status {
    absl::MutexLock lock(&mu);
    auto seen = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return (heard.count(id) > 0) == in; };
    if (!mu.AwaitWithTimeout(absl::Condition(&seen), absl::Seconds(30))) {
      return absl::DeadlineExceededError(absl::StrCat("the watcher missed ", id));
    }
    return absl::OkStatus();
  };
  Samples samples;
  for (int round = -warmup; round < rounds; ++round) {
    GroupOptions options;
    options.id = absl::StrCat("m", round + warmup);
    ZKR_ASSIGN_OR_RETURN(std::unique_ptr<GroupMember> member,
                         GroupMember::Create(*joining, path, options));
    const absl::Time start = absl::Now();
    ZKR_RETURN_IF_ERROR(member->Join());
    ZKR_RETURN_IF_ERROR(await(options.id, true));
    if (round >= 0) {
      absl::MutexLock lock(&mu);
      samples.Add(heard[options.id] - start);
    }
    ZKR_RETURN_IF_ERROR(member->Leave());
    ZKR_RETURN_IF_ERROR(await(options.id, false));
  }
  watch.reset();
  ZKR_RETURN_IF_ERROR(DeleteLockDirectory(*joining, path));
  Result ours = LatencyRow(
      "8g", "group: a member joins -> a watcher on another session hears: zkrecipes", samples);
  ours.ratio = 1.0;
  std::vector<Result> rows{ours};
  const char* ids[] = {"8cg", "8kg"};
  const char* recipes[] = {"GroupMember seen by a CuratorCache", "Party seen by a ChildrenWatch"};
  for (int i = 0; i < 2; ++i) {
    ZKR_ASSIGN_OR_RETURN(std::string line,
                         RunOne(programs[i], "group", context, base, rounds, warmup));
    Result theirs(ids[i], absl::StrCat("group, same: ", LibraryOf(line), " ", recipes[i]));
    theirs.in_process = false;
    ZKR_ASSIGN_OR_RETURN(theirs.p50_us, Number(line, "p50_us"));
    ZKR_ASSIGN_OR_RETURN(theirs.p99_us, Number(line, "p99_us"));
    theirs.ratio = ours.p50_us > 0 ? theirs.p50_us / ours.p50_us : 0;
    rows.push_back(std::move(theirs));
  }
  return rows;
}

}  // namespace bench
}  // namespace zkr
