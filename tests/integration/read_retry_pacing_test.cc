// Reads refused while the session stays connected (Unavailable, as a
// throttling server answers) are retried with backoff, not in a hot loop,
// by every waiting recipe, which still gives up at its deadline.
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "tests/support/recipe_runs_fixture.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/barrier.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/group_member.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"

namespace zkr {
namespace {

using testing::ClientFaults;
using testing::Eventually;
using testing::FaultRule;
using testing::Ready;

class ReadRetryPacingTest : public testing::RecipeRunsTest {};

// Look-ups answered Unavailable while the session stays connected (as a
// throttling server answers ZTHROTTLEDOP, mapped to Unavailable in
// src/zk_status.cc): a waiter must retry with backoff (options().retry:
// 50 ms doubling), not hammer the server, and must give up at its deadline
// leaving nothing behind.
TEST_F(ReadRetryPacingTest, LookupsFailingWhileConnectedAreRetriedWithBackoff) {
  const std::string lockp = Path("lock");
  auto xl = ExclusiveLock::Create(admin(), lockp);
  auto xg = (*xl)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(xg.ok());
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  auto lock = ExclusiveLock::Create(*session, lockp);
  faults->Add({FaultRule::Call::kGetChildren, FaultRule::Effect::kDropReply, lockp, 1000000});
  const int before = faults->Calls(FaultRule::Call::kGetChildren, lockp);
  auto f = std::async(std::launch::async, [&] { return (*lock)->Acquire(absl::Seconds(2)); });
  ASSERT_TRUE(Ready(f, absl::Seconds(30))) << "Acquire overran its 2 s deadline";
  auto r = f.get();
  const int listings = faults->Calls(FaultRule::Call::kGetChildren, lockp) - before;
  faults->Clear();
  std::cerr << "acquire: " << r.status() << ", listings sent in 2 s: " << listings << "\n";
  EXPECT_FALSE(r.ok());
  EXPECT_LT(listings, 100) << "a hot retry loop: " << listings << " listings in 2 s";
  EXPECT_TRUE(Eventually([&] { return Children(lockp) == 1; })) << ChildList(lockp);
  ASSERT_TRUE(xg->Release().ok());
}

// The same pacing check for the other waiting recipes: each failing read
// (Unavailable while connected) within about one second of waiting.
TEST_F(ReadRetryPacingTest, OtherRecipesPaceRetriesOfReadsFailingWhileConnected) {
  auto faults = std::make_shared<ClientFaults>();
  auto session = NewFaultySession(faults);
  struct Case {
    std::string name;
    FaultRule::Call call;
    std::string path;
    std::function<void()> wait;  // waits about one second
  };
  const std::string semp = Path("sem"), bar = Path("bar"), group = Path("group"),
                    elect = Path("elect");
  auto xs = Semaphore::Create(admin(), semp, 1);
  auto sg = (*xs)->Acquire(1, absl::Seconds(10));
  ASSERT_TRUE(sg.ok());
  auto gate = Barrier::Create(admin(), bar);
  ASSERT_TRUE((*gate)->Set().ok());
  auto sem = Semaphore::Create(*session, semp, 1);
  auto barrier = Barrier::Create(*session, bar);
  std::vector<Case> cases = {
      {"semaphore", FaultRule::Call::kGetChildren, semp,
       [&] { (void)(*sem)->Acquire(1, absl::Seconds(1)); }},
      {"barrier", FaultRule::Call::kGet, bar, [&] { (void)(*barrier)->Wait(absl::Seconds(1)); }},
      {"group watch", FaultRule::Call::kGetChildren, group,
       [&] {
         auto w = GroupWatch::Create(*session, group, [](const std::vector<GroupMemberInfo>&) {});
         absl::SleepFor(absl::Seconds(1));  // the measuring window, not a synchronisation
         w->reset();
       }},
      {"election", FaultRule::Call::kGetChildren, elect,
       [&] {
         ElectionOptions eo;
         eo.id = "e";
         auto e = LeaderElection::Create(*session, elect, eo);
         (void)(*e)->Join();
         (void)(*e)->AwaitLeadership(absl::Seconds(1));
         faults->Clear();
         (void)(*e)->Leave();
       }},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    faults->Add({c.call, FaultRule::Effect::kDropReply, c.path, 1000000});
    const int before = faults->Calls(c.call, c.path);
    auto f = std::async(std::launch::async, c.wait);
    ASSERT_TRUE(Ready(f, absl::Seconds(30))) << "overran its deadline";
    f.get();
    const int calls = faults->Calls(c.call, c.path) - before;
    faults->Clear();
    std::cerr << c.name << ": " << calls << " failing reads in about 1 s\n";
    EXPECT_LT(calls, 50) << "a hot retry loop";
  }
  ASSERT_TRUE(sg->Release().ok());
  ASSERT_TRUE((*gate)->Remove().ok());
  EXPECT_TRUE(Eventually([&] { return Children(semp) == 0 && Children(elect) == 0; }));
}

}  // namespace
}  // namespace zkr
