// A follow loop's first read is sent from the thread that starts it
// (FollowLoop::Start), and its reply runs on the ZooKeeper completion thread,
// possibly before that send has returned. The watch the reply keeps (here: a
// group watch's exists watch on a group not created yet) must stay the kept
// one: the starting thread's late KeepWatch of its own, older, listing watch
// must not cancel it, or the loop never hears another change.
//
// The client below makes that interleaving certain: a watching GetChildren
// sent from another thread than the completion thread returns only once its
// reply has been handled.
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "src/session_access.h"
#include "src/testing/forwarding_client.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/group_member.h"

namespace zkr {
namespace {

using internal::ClientFactory;
using internal::ZkClient;

class ReplyFirstClient final : public testing::ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  uintptr_t GetChildren(const std::string& path, WatchFn watch, ChildrenDone done) override {
    // Sent from the completion thread, the reply cannot come first (and
    // waiting for it there would wait for itself).
    if (!watch || internal::OnCompletionThread()) {
      return ForwardingClient::GetChildren(path, std::move(watch), std::move(done));
    }
    auto handled = std::make_shared<absl::Notification>();
    const uintptr_t id = ForwardingClient::GetChildren(
        path, std::move(watch),
        [handled, done = std::move(done)](absl::StatusOr<internal::ChildList> children) {
          done(std::move(children));
          handled->Notify();
        });
    handled->WaitForNotificationWithTimeout(absl::Seconds(5));
    return id;
  }
};

class FollowLoopRaceTest : public testing::ZkTest {};

TEST_F(FollowLoopRaceTest, AReplyHandledBeforeItsSendReturnedKeepsItsWatch) {
  ClientFactory factory = [](const std::string& connect, absl::Duration timeout,
                             std::shared_ptr<Clock> clock,
                             ZkClient::EventFn on_event) -> absl::StatusOr<std::shared_ptr<ZkClient>> {
    absl::StatusOr<std::shared_ptr<ZkClient>> client =
        internal::OpenCClient(connect, timeout, std::move(clock), std::move(on_event));
    if (!client.ok()) return client.status();
    return std::shared_ptr<ZkClient>(std::make_shared<ReplyFirstClient>(*std::move(client)));
  };
  absl::StatusOr<std::unique_ptr<Session>> session =
      internal::SessionAccess::Connect(Options(), std::move(factory));
  ASSERT_TRUE(session.ok()) << session.status();

  const std::string path = Path("group");
  absl::Mutex mu;
  std::vector<size_t> sizes;
  auto watch = GroupWatch::Create(**session, path, [&](const std::vector<GroupMemberInfo>& now) {
    absl::MutexLock lock(&mu);
    sizes.push_back(now.size());
  });
  ASSERT_TRUE(watch.ok()) << watch.status();

  GroupOptions options;
  options.id = "m1";
  auto member = GroupMember::Create(admin(), path, options);
  ASSERT_TRUE(member.ok()) << member.status();
  ASSERT_TRUE((*member)->Join().ok());
  {
    absl::MutexLock lock(&mu);
    auto joined = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return !sizes.empty() && sizes.back() == 1;
    };
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&joined), absl::Seconds(10)))
        << "the group watch never heard the member join";
  }
  ASSERT_TRUE((*member)->Leave().ok());
  watch->reset();
  (*session)->Close();
  ASSERT_TRUE(admin().Delete(path).ok());
}

}  // namespace
}  // namespace zkr
