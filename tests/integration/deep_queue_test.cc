// Deep queues and wide directories (issue 36 item 2). A directory of tens
// of thousands of nodes lists as megabytes — past the server's packet limit
// that the Java client enforces on what it reads (the C client reads it).
// A timeout must hold however long the queue: an acquisition that times out
// returns by its deadline and its node still goes; inspecting such a
// directory works.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace {

using testing::ZkTest;

// The queue's depth: a listing of about 1.3 MB, past the 1 MB packet
// limit; ZKR_DEEP_QUEUE=N for another (tools/run.sh limits: 100,000).
int Depth() {
  const char* depth = std::getenv("ZKR_DEEP_QUEUE");
  return depth != nullptr ? std::atoi(depth) : 30000;
}

class DeepQueueTest : public ZkTest {
 protected:
  // `depth` writers' nodes of the admin's in `dir`, made in batches.
  void Fill(const std::string& dir, int depth) {
    const absl::Time start = absl::Now();
    CreateOptions parents;
    parents.make_parents = true;
    ASSERT_TRUE(admin().Create(absl::StrCat(dir, "/holder_0_0-W-"), "",
                               CreateMode::kEphemeralSequential, parents)
                    .ok());
    for (int made = 1; made < depth;) {
      std::vector<Op> ops;
      for (int i = 0; i < 1000 && made < depth; ++i, ++made) {
        ops.push_back(Op::Create(absl::StrCat(dir, "/holder_", made, "_0-W-"), "",
                                 CreateMode::kEphemeralSequential));
      }
      auto done = admin().Multi(ops);
      ASSERT_TRUE(done.ok()) << done.status();
    }
    std::cout << depth << " nodes made in " << absl::Now() - start << "\n";
  }
  // Deletes every node of `dir` (the admin's), in batches, and `dir`.
  void Empty(const std::string& dir) {
    auto children = admin().GetChildren(dir);
    ASSERT_TRUE(children.ok()) << children.status();
    std::vector<Op> ops;
    for (size_t i = 0; i < children->size(); ++i) {
      ops.push_back(Op::Delete(absl::StrCat(dir, "/", (*children)[i])));
      if (ops.size() >= 1000 || i + 1 == children->size()) {
        auto done = admin().Multi(ops);
        ASSERT_TRUE(done.ok()) << done.status();
        ops.clear();
      }
    }
    EXPECT_TRUE(admin().Delete(dir).ok());
  }
};

TEST_F(DeepQueueTest, ATimeoutHoldsBehindAQueueListedAsMegabytes) {
  const std::string dir = Path("deep");
  const int depth = Depth();
  Fill(dir, depth);
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, dir);
  ASSERT_TRUE(lock.ok()) << lock.status();
  for (absl::Duration timeout : {absl::Seconds(2), absl::Milliseconds(300)}) {
    const absl::Time start = absl::Now();
    absl::StatusOr<LockGuard> guard = (*lock)->Acquire(timeout);
    const absl::Duration took = absl::Now() - start;
    std::cout << "Acquire(" << timeout << ") behind " << depth << ": " << guard.status().code()
              << " after " << took << "\n";
    EXPECT_TRUE(absl::IsDeadlineExceeded(guard.status())) << guard.status();
  }
  // Its node went: the queue is as it was.
  auto stat = session->Exists(dir);
  ASSERT_TRUE(stat.ok() && stat->has_value()) << stat.status();
  EXPECT_EQ((*stat)->num_children, depth);
  // Inspecting it (zkr inspect) would read every node: refused, named.
  const absl::Time start = absl::Now();
  auto entries = InspectQueue(*session, dir);
  std::cout << "inspect: " << entries.status().code() << " after " << absl::Now() - start << "\n";
  EXPECT_TRUE(absl::IsResourceExhausted(entries.status())) << entries.status();
  EXPECT_THAT(std::string(entries.status().message()),
              ::testing::AllOf(::testing::HasSubstr(dir), ::testing::HasSubstr(absl::StrCat(depth))));
  Empty(dir);
}

// At the limit, inspect answers.
TEST_F(DeepQueueTest, InspectReadsAQueueAtItsLimit) {
  const std::string dir = Path("wide");
  Fill(dir, static_cast<int>(kMaxInspectedNodes));
  const absl::Time start = absl::Now();
  auto entries = InspectQueue(admin(), dir);
  std::cout << "inspect of " << kMaxInspectedNodes << ": " << entries.status().code() << " after "
            << absl::Now() - start << "\n";
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_EQ(entries->size(), kMaxInspectedNodes);
  EXPECT_TRUE(entries->front().holds);
  Empty(dir);
}

}  // namespace
}  // namespace zkr
