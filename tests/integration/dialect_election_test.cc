// Elections that speak Curator's (LeaderLatch) and Kazoo's (Election) node
// names (ElectionOptions::dialect), against a real server; observers and
// inspect read them without being told. With real peers: tests/interop.
#include <regex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/lock_fixture.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/leader_observer.h"

namespace zkr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::LockTest;

using DialectElectionTest = LockTest;

std::unique_ptr<LeaderElection> Candidate(Session& session, const std::string& path,
                                          Dialect dialect, const std::string& id) {
  ElectionOptions options;
  options.id = id;
  options.dialect = dialect;
  auto election = LeaderElection::Create(session, path, options);
  EXPECT_TRUE(election.ok()) << election.status();
  return election.ok() ? std::move(*election) : nullptr;
}

TEST_F(DialectElectionTest, CandidatesHaveThePeersNamesAndTheIdAsData) {
  struct Case {
    Dialect dialect;
    std::string pattern;
  };
  const Case cases[] = {
      {Dialect::kCurator,
       "_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-latch-[0-9]{10}"},
      {Dialect::kKazoo, "[0-9a-f]{32}__lock__[0-9]{10}"},
  };
  for (const Case& c : cases) {
    const std::string path = Path(absl::StrCat("elect-", DialectName(c.dialect)));
    SCOPED_TRACE(path);
    auto a = NewSession(), b = NewSession();
    auto first = Candidate(*a, path, c.dialect, "alpha");
    auto second = Candidate(*b, path, c.dialect, "beta");
    ASSERT_TRUE(first->Join().ok());
    ASSERT_TRUE(first->AwaitLeadership(absl::Seconds(20)).ok());
    ASSERT_TRUE(second->Join().ok());
    ASSERT_TRUE(WaitForChildren(path, 2));
    EXPECT_FALSE(second->IsLeader());
    for (const std::string& child : Children(path)) {
      EXPECT_TRUE(std::regex_match(child, std::regex(c.pattern))) << child;
      auto data = admin().Get(path + "/" + child);
      ASSERT_TRUE(data.ok());
      EXPECT_TRUE(*data == "alpha" || *data == "beta") << *data;
    }
    // Read without being told the dialect.
    auto leader = first->CurrentLeader();
    ASSERT_TRUE(leader.ok()) << leader.status();
    EXPECT_EQ(*leader, std::optional<std::string>("alpha"));
    auto observer = LeaderObserver::Create(admin(), path);
    ASSERT_TRUE(observer.ok()) << observer.status();
    auto seen = (*observer)->Current(absl::Seconds(20));
    ASSERT_TRUE(seen.ok()) << seen.status();
    ASSERT_TRUE(seen->has_value());
    EXPECT_EQ((*seen)->id, "alpha");
    auto queue = InspectQueue(admin(), path);
    ASSERT_TRUE(queue.ok()) << queue.status();
    ASSERT_THAT(*queue, SizeIs(2));
    EXPECT_EQ((*queue)[0].dialect, c.dialect);
    EXPECT_TRUE((*queue)[0].holds);
    EXPECT_FALSE((*queue)[1].holds);
    EXPECT_EQ((*queue)[1].watches, (*queue)[0].name);
    // The leader hands over (nobody marks a take-over in a dialect): the
    // next one leads.
    absl::Status handed = first->LeaveAndHandOver(absl::Seconds(20));
    ASSERT_TRUE(handed.ok()) << handed;
    ASSERT_TRUE(second->AwaitLeadership(absl::Seconds(20)).ok());
    auto next = (*observer)->AwaitChange(*seen, absl::Seconds(20));
    ASSERT_TRUE(next.ok()) << next.status();
    ASSERT_TRUE(next->has_value());
    EXPECT_EQ((*next)->id, "beta");
    ASSERT_TRUE(second->Leave().ok());
    EXPECT_THAT(Children(path), SizeIs(0));
    observer->reset();
    ASSERT_TRUE(admin().Delete(path).ok());
  }
}

TEST_F(DialectElectionTest, DataBesideTheIdIsRefused) {
  auto session = NewSession();
  ElectionOptions options;
  options.id = "gamma";
  options.data = "10.0.0.7:5000";
  options.dialect = Dialect::kCurator;
  auto refused = LeaderElection::Create(*session, Path("elect-data"), options);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("curator"));
  auto candidate = Candidate(*session, Path("elect-data"), Dialect::kKazoo, "gamma");
  absl::Status set = candidate->SetData("10.0.0.7:5000");
  EXPECT_TRUE(absl::IsInvalidArgument(set)) << set;
  EXPECT_FALSE(admin().Exists(Path("elect-data")).value().has_value());
}

TEST_F(DialectElectionTest, InspectReadsAPeersLockQueue) {
  const std::string path = Path("inspect-kazoo");
  ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
  // As a Kazoo WriteLock and ReadLock make them.
  auto w = admin().Create(path + "/0123456789abcdef0123456789abcdef__lock__", "writer-1",
                          CreateMode::kEphemeralSequential);
  auto r = admin().Create(path + "/fedcba9876543210fedcba9876543210__rlock__", "reader-2",
                          CreateMode::kEphemeralSequential);
  ASSERT_TRUE(w.ok() && r.ok());
  auto queue = InspectQueue(admin(), path);
  ASSERT_TRUE(queue.ok()) << queue.status();
  ASSERT_THAT(*queue, SizeIs(2));
  EXPECT_EQ((*queue)[0].dialect, Dialect::kKazoo);
  EXPECT_TRUE((*queue)[0].write);
  EXPECT_TRUE((*queue)[0].holds);
  EXPECT_EQ((*queue)[0].data, "writer-1");
  EXPECT_FALSE((*queue)[1].write);
  EXPECT_FALSE((*queue)[1].holds);
  EXPECT_EQ((*queue)[1].participant, "fedcba9876543210fedcba9876543210");
  ASSERT_TRUE(admin().Delete(w->path).ok());
  ASSERT_TRUE(admin().Delete(r->path).ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

}  // namespace
}  // namespace zkr
