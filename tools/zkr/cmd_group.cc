// zkr group: be a member of a group while a command runs, or list (and
// follow) a group's members.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gflags/gflags.h"
#include "src/macros.h"
#include "tools/zkr/commands.h"
#include "tools/zkr/common.h"
#include "tools/zkr/plain_text.h"
#include "zkrecipes/group_member.h"

DECLARE_string(path);
DECLARE_string(id);
DECLARE_string(data);
DECLARE_bool(json);
DECLARE_bool(watch);

namespace zkr {
namespace cli {
namespace {

// One list as `list` prints it: "id<TAB>data" per member, or one JSON object.
std::string MembersText(const std::vector<GroupMemberInfo>& members) {
  if (FLAGS_json) {
    std::vector<std::string> items;
    for (const GroupMemberInfo& m : members) {
      items.push_back(absl::StrCat("{\"id\":", JsonString(m.id), ",\"data\":", JsonString(m.data),
                                   ",\"node\":", JsonString(m.node), "}"));
    }
    return absl::StrCat("{\"path\":", JsonString(FLAGS_path), ",\"members\":[",
                        absl::StrJoin(items, ","), "]}\n");
  }
  std::string out;
  // Escaped: a member's data cannot add lines or tabs, nor drive the terminal.
  for (const GroupMemberInfo& m : members) {
    absl::StrAppend(&out, PlainText(m.id), "\t", PlainText(m.data), "\n");
  }
  return out;
}

int ListMembers() {
  auto session = ConnectFromFlags();
  if (!session.ok()) return Report("group", session.status());
  if (!FLAGS_watch) {
    auto members = ListGroup(**session, FLAGS_path);
    if (!members.ok()) return Report("group", members.status());
    std::printf("%s", MembersText(*members).c_str());
    return kExitOk;
  }
  // --watch: the list after every change, until a signal (exit 130). A
  // blank line ends each list in the plain form.
  auto watch = GroupWatch::Create(**session, FLAGS_path, [](const std::vector<GroupMemberInfo>& m) {
    std::printf("%s%s", MembersText(m).c_str(), FLAGS_json ? "" : "\n");
    FlushOrExit("group");
  });
  if (!watch.ok()) return Report("group", watch.status());
  for (;;) absl::SleepFor(absl::Hours(1));
}

}  // namespace

int RunGroup(Signals& signals, const std::vector<std::string>& args,
             const std::vector<std::string>& command) {
  if (args.size() != 1 || (args[0] != "join" && args[0] != "list")) {
    return Report("group", absl::InvalidArgumentError(
                               args.empty() ? std::string("expected one action: join | list")
                                            : absl::StrCat("unknown action \"", absl::StrJoin(args, " "),
                                                           "\": expected join | list")));
  }
  if (args[0] == "join") {
    if (absl::Status s = CheckIdFlag(FLAGS_id, "group member"); !s.ok()) return Report("group", s);
  }
  if (args[0] == "list") {
    if (absl::Status s = CheckPathFlag(FLAGS_path); !s.ok()) return Report("group", s);
    ExitOnSignal(signals, "group");  // nothing to undo: stop at once
    return ListMembers();
  }
  Holding member;
  member.command = "group";
  member.label = FLAGS_path;
  member.busy = "was not joined";
  member.make = [](Session& session, const LockOptions&) -> absl::StatusOr<Acquirer> {
    GroupOptions options;
    options.id = FLAGS_id;
    options.data = FLAGS_data;
    auto created = GroupMember::Create(session, FLAGS_path, options);
    if (!created.ok()) return created.status();
    std::shared_ptr<GroupMember> me = std::move(*created);
    const absl::Duration connect = session.options().connect_timeout;
    return Acquirer([me, connect](bool try_once, absl::Duration timeout) -> absl::StatusOr<Held> {
      ZKR_RETURN_IF_ERROR(me->Join(try_once ? connect : timeout));
      Held held;
      held.env = {{"ZKR_GROUP_PATH", me->path()}, {"ZKR_GROUP_NODE", me->node_path()}};
      held.release = [me] { return me->Leave(); };
      return held;
    });
  };
  return RunHolding(signals, command, member);
}

}  // namespace cli
}  // namespace zkr
