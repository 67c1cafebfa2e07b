// An independent adversarial review (helper-52) of the barrier recipes'
// deadlines, watches and cleanup. Each test names the promise it attacks.
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "tests/support/directory_check.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using testing::ClientFaults;
using testing::Eventually;
using testing::FaultRule;
using testing::TcpProxy;

class Review52Test : public testing::DirectoryCheckedTest<testing::ProxiedZkTest> {
 protected:
  SessionOptions LongOptions() {
    SessionOptions o = ProxiedOptions();
    o.session_timeout = absl::Seconds(15);
    return o;
  }
};

// Promise (barrier.h, Leave): "While the server does not answer, it returns
// at most one session timeout after the deadline (its listings and its
// delete wait for an answer or the connection's loss)". Two members inside;
// b's server goes silent, then b leaves with a 1 s timeout.
TEST_F(Review52Test, LeaveWhileSilentReturnsWithinOneSessionTimeoutOfItsDeadline) {
  auto sa = NewSession();
  auto sb = NewSession(LongOptions());
  ASSERT_TRUE(sa && sb);
  auto a = DoubleBarrier::Create(*sa, Path("round"), "a", 2);
  auto b = DoubleBarrier::Create(*sb, Path("round"), "b", 2);
  ASSERT_TRUE(a.ok() && b.ok());
  auto ea = std::async(std::launch::async, [&] { return (*a)->Enter(absl::Seconds(30)); });
  auto eb = std::async(std::launch::async, [&] { return (*b)->Enter(absl::Seconds(30)); });
  ASSERT_TRUE(ea.get().ok());
  ASSERT_TRUE(eb.get().ok());
  const absl::Duration t = sb->negotiated_timeout();
  proxy_->SetMode(TcpProxy::Mode::kBlackhole);
  const absl::Duration timeout = absl::Seconds(1);
  const absl::Time start = absl::Now();
  absl::Status left = (*b)->Leave(timeout);
  const absl::Duration took = absl::Now() - start;
  std::printf("Leave: %s after %s (session timeout %s)\n", left.ToString().c_str(),
              absl::FormatDuration(took).c_str(), absl::FormatDuration(t).c_str());
  std::printf("members listed at return: %s\n", absl::StrJoin(ChildList(Path("round")), ",").c_str());
  // The silence outlasts the lease: the session is lost (barrier.h), and the
  // member's node goes as the server expires the session.
  EXPECT_TRUE(absl::IsDeadlineExceeded(left) || IsSessionLost(left)) << left;
  EXPECT_LE(took, timeout + t + absl::Seconds(3))
      << "promised: at most one session timeout (" << t << ") after the deadline";
  EXPECT_TRUE(Eventually(
      [&] {
        for (const std::string& child : ChildList(Path("round"))) {
          if (absl::StartsWith(child, "b")) return false;
        }
        return true;
      },
      absl::Seconds(30)))
      << absl::StrJoin(ChildList(Path("round")), ",");
  proxy_->SetMode(TcpProxy::Mode::kPass);
  b->reset();
  sb.reset();
  EXPECT_TRUE((*a)->Leave(absl::Seconds(40)).ok());
}

// Promise (barrier.h, Enter): "On DeadlineExceeded this member's node is
// removed again (when the server has not answered, that takes at most one
// session timeout more, as a timed-out lock acquisition's)". The member's
// create is answered (held at the client seam until the server has gone
// silent); Enter's listing then meets the silence.
TEST_F(Review52Test, EnterSilencedAfterItsCreateReturnsWithinOneSessionTimeoutOfItsDeadline) {
  ASSERT_TRUE(admin().Create(Path("round"), "", CreateMode::kPersistent).ok());
  auto faults = std::make_shared<ClientFaults>();
  auto sb = testing::ConnectWithWatchAudit(LongOptions(), faults);
  ASSERT_TRUE(sb.ok()) << sb.status();
  auto b = DoubleBarrier::Create(**sb, Path("round"), "b", 2);
  ASSERT_TRUE(b.ok());
  faults->Add({FaultRule::Call::kCreate, FaultRule::Effect::kHoldReply, Path("round") + "/", 1});
  const absl::Duration t = (*sb)->negotiated_timeout();
  const absl::Duration timeout = absl::Seconds(2);
  const absl::Time start = absl::Now();
  auto entered = std::async(std::launch::async, [&] { return (*b)->Enter(timeout); });
  ASSERT_TRUE(Eventually([&] { return Children(Path("round")) == 1; }, absl::Seconds(10)));
  proxy_->SetMode(TcpProxy::Mode::kBlackhole);
  faults->ReleaseHeld();
  ASSERT_TRUE(testing::Ready(entered, absl::Seconds(90)));
  absl::Status status = entered.get();
  const absl::Duration took = absl::Now() - start;
  std::printf("Enter: %s after %s (session timeout %s)\n", status.ToString().c_str(),
              absl::FormatDuration(took).c_str(), absl::FormatDuration(t).c_str());
  std::printf("members listed at return: %s\n", absl::StrJoin(ChildList(Path("round")), ",").c_str());
  EXPECT_TRUE(absl::IsDeadlineExceeded(status) || IsSessionLost(status)) << status;
  EXPECT_LE(took, timeout + t + absl::Seconds(3))
      << "promised: at most one session timeout (" << t << ") more";
  proxy_->SetMode(TcpProxy::Mode::kPass);
  EXPECT_TRUE(Eventually([&] { return Children(Path("round")) == 0; }, absl::Seconds(30)))
      << absl::StrJoin(ChildList(Path("round")), ",");
  b->reset();
  sb->reset();
}

// Promise (node_wait.h, README "no watch is left on the server"): Wait
// "Leaves no watch on the server when it returns". Tiny timeouts on a set
// barrier from four threads; each must be DeadlineExceeded; then no watch
// of the session may stay listed (bounded wait); a zero-timeout Wait on an
// absent barrier is OK.
TEST_F(Review52Test, TinyTimeoutStormLeavesNoWatch) {
  auto s = NewSession();
  ASSERT_TRUE(s);
  auto setter = Barrier::Create(admin(), Path("gate"));
  ASSERT_TRUE(setter.ok() && (*setter)->Set().ok());
  auto gate = Barrier::Create(*s, Path("gate"));
  ASSERT_TRUE(gate.ok());
  const absl::Duration timeouts[] = {absl::ZeroDuration(), absl::Microseconds(1),
                                     absl::Microseconds(50), absl::Milliseconds(1),
                                     absl::Milliseconds(10)};
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) {
        absl::Status st = (*gate)->Wait(timeouts[k % 5]);
        if (!absl::IsDeadlineExceeded(st)) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  // Right after returning, once one round trip has passed.
  int strict_seen = 0;
  for (int k = 0; k < 30; ++k) {
    EXPECT_TRUE(absl::IsDeadlineExceeded((*gate)->Wait(absl::Microseconds(50))));
    if (!testing::WatchedPaths(*s, root()).empty()) ++strict_seen;
  }
  std::printf("watch listed right after a returned Wait: %d of 30\n", strict_seen);
  EXPECT_TRUE(Eventually([&] { return testing::WatchedPaths(*s, root()).empty(); },
                         absl::Seconds(5)))
      << absl::StrJoin(testing::WatchedPaths(*s, root()), ",");
  ASSERT_TRUE((*setter)->Remove().ok());
  EXPECT_TRUE((*gate)->Wait(absl::ZeroDuration()).ok());
  EXPECT_TRUE(testing::WatchedPaths(*s, root()).empty());
}

}  // namespace
}  // namespace zkr
