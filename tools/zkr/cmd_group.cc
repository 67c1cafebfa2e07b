// zkr group: be a member of a group while a command runs, or list (and
// follow) a group's members.
#include <cstdio>
#include <functional>
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

// A member holds nothing the server arbitrates, but CMD runs "while a
// member", so zkr treats membership as a hold: `tell` (RunHolding's
// on_state_change) hears SUSPENDED when the session is cut off, HELD when it
// comes back, and LOST when the session is gone or the member's node has
// left the group (deleted by hand). Stops hearing on destruction.
class MembershipFollow {
 public:
  MembershipFollow(Session& session, std::function<void(LockState)> tell)
      : session_(session), tell_(std::move(tell)) {}
  MembershipFollow(const MembershipFollow&) = delete;
  MembershipFollow& operator=(const MembershipFollow&) = delete;
  ~MembershipFollow() {
    watch_.reset();
    if (listener_ != 0) session_.RemoveStateListener(listener_);
  }

  absl::Status Start(const GroupMember& me) {
    if (!tell_) return absl::OkStatus();
    const uint64_t joined_on = session_.generation();
    listener_ = session_.AddStateListener([tell = tell_, joined_on](SessionState state,
                                                                    uint64_t generation) {
      if (state == SessionState::kSuspended) tell(LockState::kSuspended);
      if (state == SessionState::kReconnected) tell(LockState::kHeld);
      if (state == SessionState::kLost ||
          (state == SessionState::kConnected && generation != joined_on)) {
        tell(LockState::kLost);
      }
    });
    const std::string node = me.node_path().substr(me.node_path().rfind('/') + 1);
    auto watch = GroupWatch::Create(
        session_, me.path(), [tell = tell_, node](const std::vector<GroupMemberInfo>& members) {
          for (const GroupMemberInfo& m : members) {
            if (m.node == node) return;
          }
          tell(LockState::kLost);
        });
    if (!watch.ok()) return watch.status();
    watch_ = std::move(*watch);
    return absl::OkStatus();
  }

 private:
  Session& session_;
  const std::function<void(LockState)> tell_;
  int listener_ = 0;
  std::unique_ptr<GroupWatch> watch_;
};

int ListMembers() {
  auto session = ConnectFromFlags();
  if (!session.ok()) return Report("group", session.status());
  if (!FLAGS_watch) {
    auto members = ListGroup(**session, FLAGS_path);
    if (!members.ok()) return Report("group", members.status());
    PrintOutput(MembersText(*members));
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
  member.make = [](Session& session, const LockOptions& lock) -> absl::StatusOr<Acquirer> {
    GroupOptions options;
    options.id = FLAGS_id;
    options.data = FLAGS_data;
    auto created = GroupMember::Create(session, FLAGS_path, options);
    if (!created.ok()) return created.status();
    std::shared_ptr<GroupMember> me = std::move(*created);
    const absl::Duration connect = session.options().connect_timeout;
    std::function<void(LockState)> tell = lock.on_state_change;
    Session* raw = &session;
    return Acquirer([me, connect, raw, tell](bool try_once,
                                             absl::Duration timeout) -> absl::StatusOr<Held> {
      ZKR_RETURN_IF_ERROR(me->Join(try_once ? connect : timeout));
      auto follow = std::make_shared<MembershipFollow>(*raw, tell);
      if (absl::Status s = follow->Start(*me); !s.ok()) {
        (void)me->Leave();
        return s;
      }
      Held held;
      held.env = {{"ZKR_GROUP_PATH", me->path()}, {"ZKR_GROUP_NODE", me->node_path()}};
      // The follow goes with the hold, before the membership.
      held.release = [me, follow]() mutable {
        follow.reset();
        return me->Leave();
      };
      held.valid_until = [raw] { return raw->valid_until(); };  // the session's lease
      return held;
    });
  };
  return RunHolding(signals, command, member);
}

}  // namespace cli
}  // namespace zkr
