// The fixture of the double barrier tests (barrier_test.cc,
// double_barrier_recovery_test.cc, protected_create_test.cc): members on
// their own sessions, each Entering and Leaving on its own thread, and waits
// on the member nodes and on the server's watch listing. Member's fields are
// written by its thread and read by the test after the matching
// notification.
#ifndef ZKRECIPES_TESTS_SUPPORT_BARRIER_FIXTURE_H_
#define ZKRECIPES_TESTS_SUPPORT_BARRIER_FIXTURE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recipes/queue_node.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace testing {

using internal::ParseQueue;
using internal::QueueNode;

// Member nodes under `path` (the `ready` flag excluded) as `session` lists
// them, waiting up to `timeout` for there to be `want` of them.
inline size_t MembersEventually(Session& session, const std::string& path, size_t want,
                                absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  size_t members = 0;
  do {
    auto children = session.GetChildren(path);
    members = children.ok() ? ParseQueue(*children, 0).size() : 0;
    if (members == want) break;
    absl::SleepFor(absl::Milliseconds(20));  // polling the server, not deciding
  } while (absl::Now() < deadline);
  return members;
}

// One double-barrier member on its own session and thread: Enter, then wait
// for the test's go-ahead, then Leave. Counters are shared by all members.
struct Member {
  int index = 0;
  std::string id;
  std::unique_ptr<Session> session;
  std::unique_ptr<DoubleBarrier> barrier;
  std::thread thread;
  absl::Notification enter_returned;
  absl::Notification leave_go;
  absl::Notification leave_returned;
  absl::Status enter_status;
  absl::Status leave_status;
  int entering_seen = -1;  // members that had started Enter when this one returned
  int leaving_seen = -1;   // members that had started Leave when this one returned

  ~Member() {
    if (!leave_go.HasBeenNotified()) leave_go.Notify();  // a failed test must not hang
    if (thread.joinable()) thread.join();
    barrier.reset();
    session.reset();
  }
};

class BarrierTest : public ZkTest {
 protected:
  void SetUp() override {
    ZkTest::SetUp();
    server_ = SharedServer();
  }
  // The tests that read the server's watch listing need the embedded server
  // (not an external ensemble named by ZKR_TEST_CONNECT).
  bool HasServer() const { return server_ != nullptr; }

  // `faults`: the member's session injects them (the client seam).
  std::unique_ptr<Member> NewMember(const std::string& path, int index, int count,
                                    std::shared_ptr<ClientFaults> faults = nullptr) {
    auto member = std::make_unique<Member>();
    member->index = index;
    member->id = absl::StrCat("member-", index);
    member->session = faults != nullptr ? NewFaultySession(faults) : NewSession();
    if (member->session == nullptr) return nullptr;
    auto barrier = DoubleBarrier::Create(*member->session, path, member->id, count);
    EXPECT_TRUE(barrier.ok()) << barrier.status();
    if (!barrier.ok()) return nullptr;
    member->barrier = std::move(*barrier);
    return member;
  }
  // Runs Enter(enter_timeout), then (if it entered) waits for leave_go and
  // Leave()s.
  void Run(Member& m, absl::Duration enter_timeout) {
    m.thread = std::thread([this, &m, enter_timeout] {
      ++entering_;
      m.enter_status = m.barrier->Enter(enter_timeout);
      m.entering_seen = entering_.load();
      m.enter_returned.Notify();
      if (!m.enter_status.ok()) return;
      m.leave_go.WaitForNotification();
      ++leaving_;
      m.leave_status = m.barrier->Leave(absl::Seconds(30));
      m.leaving_seen = leaving_.load();
      m.leave_returned.Notify();
    });
  }

  // The member nodes under `path` in queue order (foreign names, e.g. the
  // "ready" flag, skipped).
  std::vector<std::string> MemberNodes(const std::string& path) {
    auto children = admin().GetChildren(path);
    if (!children.ok()) return {};
    std::vector<QueueNode> nodes = ParseQueue(*children, 0);
    if (!nodes.empty()) nodes = ParseQueue(*children, nodes.front().sequence);
    std::vector<std::string> names;
    for (const QueueNode& node : nodes) names.push_back(node.name);
    return names;
  }
  // Polls (bounded, no watches) until `pred(member nodes)` holds.
  std::vector<std::string> WaitForNodes(
      const std::string& path, const std::function<bool(const std::vector<std::string>&)>& pred) {
    std::vector<std::string> nodes;
    for (int i = 0; i < 3000; ++i) {
      nodes = MemberNodes(path);
      if (pred(nodes)) break;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return nodes;
  }
  // Waits (bounded) until the server's watches on paths accepted by `keep`
  // are exactly `expected`.
  WatchListing WaitForWatches(const std::function<bool(const std::string&)>& keep,
                              const WatchListing& expected) {
    WatchListing listing;
    for (int i = 0; i < 1000; ++i) {
      auto text = server_->FourLetterWord("wchp");
      listing.clear();
      if (text.ok()) {
        for (auto& [watched, sessions] : ParseWatchesByPath(*text)) {
          if (keep(watched)) listing[watched] = sessions;
        }
      }
      if (listing == expected) break;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return listing;
  }
  // The barrier directory is a container: the server reaps it only every
  // minute or so, so the test removes it (it must be empty by now).
  void RemoveDirectory(const std::string& path) {
    auto children = admin().GetChildren(path);
    if (children.ok()) {
      EXPECT_THAT(*children, ::testing::IsEmpty()) << path;
    }
    absl::Status status = admin().Delete(path);
    EXPECT_TRUE(status.ok() || absl::IsNotFound(status)) << status;
  }

  // A member of `count` on `session`, made or failing the test.
  std::unique_ptr<DoubleBarrier> NewMember(Session& session, const std::string& path,
                                           const std::string& id, int count) {
    auto barrier = DoubleBarrier::Create(session, path, id, count);
    EXPECT_TRUE(barrier.ok()) << barrier.status();
    return barrier.ok() ? std::move(*barrier) : nullptr;
  }
  // Member nodes under `path` (the `ready` flag excluded), waiting up to
  // `timeout` for there to be `want` of them.
  size_t MembersEventually(const std::string& path, size_t want, absl::Duration timeout) {
    return testing::MembersEventually(admin(), path, want, timeout);
  }

  ZooKeeperServer* server_ = nullptr;
  std::atomic<int> entering_{0};
  std::atomic<int> leaving_{0};
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_BARRIER_FIXTURE_H_
