// The fixture of the queue engine's tests (queue_engine_test.cc,
// protected_create_test.cc): a write entry on a session's core, started and
// waited for (bounded), and the check that one node was held then released.
// QueueEngineHelpers adds them to any ZkTest.
#ifndef ZKRECIPES_TESTS_SUPPORT_QUEUE_ENGINE_FIXTURE_H_
#define ZKRECIPES_TESTS_SUPPORT_QUEUE_ENGINE_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_entry.h"
#include "src/session_access.h"
#include "tests/support/zk_test.h"

namespace zkr {
namespace testing {

using internal::QueueEntry;

template <class Base>
class QueueEngineHelpers : public Base {
 protected:
  std::shared_ptr<QueueEntry> NewEntry(Session& session, const std::string& dir) {
    QueueEntry::Settings config;
    config.dir = dir;
    config.watch_own_node = false;
    return QueueEntry::Make(internal::CoreOf(session),
                            std::make_shared<const QueueEntry::Settings>(config),
                            QueueEntry::Attempt());
  }
  // Expects one node under `dir` (the held entry's: one create reached the
  // server), releases it, and removes `dir`.
  void ExpectOneNodeThenRelease(QueueEntry& entry, const std::string& dir) {
    auto children = this->admin().GetChildren(dir);
    ASSERT_TRUE(children.ok());
    EXPECT_THAT(*children, ::testing::SizeIs(1)) << "one node per attempt";
    absl::Notification released;
    entry.Release([&](absl::Status) { released.Notify(); });
    ASSERT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(20)));
    ASSERT_TRUE(this->admin().Delete(dir).ok());
  }
  // Starts `entry` and waits (bounded) for its outcome.
  absl::Status StartAndWait(QueueEntry& entry) {
    auto finished = std::make_shared<absl::Notification>();
    auto result = std::make_shared<absl::Status>();
    entry.Start([finished, result](absl::Status status) {
      *result = std::move(status);
      finished->Notify();
    });
    if (!finished->WaitForNotificationWithTimeout(absl::Seconds(20))) {
      return absl::DeadlineExceededError("the attempt never completed: " + entry.DebugString());
    }
    return *result;
  }
};

using QueueEngineTest = QueueEngineHelpers<ZkTest>;

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_QUEUE_ENGINE_FIXTURE_H_
