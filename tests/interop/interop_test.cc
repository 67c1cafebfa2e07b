// Shared queues with real Apache Curator (Java) and Kazoo (Python)
// processes (issue 34): peers (tests/interop/CuratorPeer.java,
// kazoo_peer.py) and our participants (library threads with a dialect, and
// zkr) take one lock or election in turns, each hold written to one ledger
// (tests/support/hold_ledger.h). A test fails on any overlap of a writer or
// leader with anyone, on a participant that did not finish its rounds, and
// on any node left behind.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/hold_ledger.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::AppendHold;
using testing::CheckHolds;
using testing::LedgerCheck;
using testing::Process;
using testing::ReadFile;
using testing::WaitUntil;

constexpr int kRounds = 5;
constexpr int kHoldMs = 30;
const absl::Duration kPeerBound = absl::Seconds(150);

// The Curator jars' classpath (tools/bench/compare/classpath.sh), or empty.
std::string CuratorClasspath(const std::string& source) {
  std::FILE* pipe = popen((source + "/tools/bench/compare/classpath.sh").c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  return pclose(pipe) == 0 ? std::string(absl::StripAsciiWhitespace(out)) : "";
}

class InteropTest : public testing::CliTest {
 protected:
  void SetUp() override {
    testing::CliTest::SetUp();
    if (HasFatalFailure()) return;
    const char* source = std::getenv("ZKR_SOURCE_DIR");
    ASSERT_TRUE(source != nullptr && *source != '\0') << "ZKR_SOURCE_DIR (ctest sets it)";
    source_ = source;
    classpath_ = CuratorClasspath(source_);
    ASSERT_FALSE(classpath_.empty()) << "Curator's jars are missing (tools/run.sh installs them)";
    ledger_ = File("ledger");
  }

  // A Curator peer: RECIPE mutex, read, write or latch.
  Process& Curator(const std::string& recipe, const std::string& path, const std::string& name,
                   int rounds = kRounds) {
    return Start({"java", "-cp", classpath_, source_ + "/tests/interop/CuratorPeer.java",
                  connect_, recipe, path, name, ledger_, absl::StrCat(rounds),
                  absl::StrCat(kHoldMs)});
  }
  // A Kazoo peer: RECIPE lock, write, read or election.
  Process& Kazoo(const std::string& recipe, const std::string& path, const std::string& name,
                 int rounds = kRounds) {
    return Start({"/usr/bin/python3", source_ + "/tests/interop/kazoo_peer.py", connect_, recipe,
                  path, name, ledger_, absl::StrCat(rounds), absl::StrCat(kHoldMs)});
  }
  Process& Start(const std::vector<std::string>& argv) {
    const int n = static_cast<int>(peers_.size());
    peers_.push_back(std::make_unique<Process>(argv, File(absl::StrCat("peer", n, ".out")),
                                               File(absl::StrCat("peer", n, ".err"))));
    return *peers_.back();
  }
  void TearDown() override {
    peers_.clear();  // kills and reaps what a failed test left running
    testing::CliTest::TearDown();
  }

  // Our lock participant on its own session: `rounds` holds of `mode`
  // ('E' exclusive, 'W' write, 'R' read) in `dialect`, each in the ledger.
  std::thread Ours(const std::string& path, Dialect dialect, char mode, const std::string& name) {
    return std::thread([this, path, dialect, mode, name] {
      auto session = NewSession();
      LockOptions options;
      options.dialect = dialect;
      options.purpose = name;
      std::unique_ptr<ExclusiveLock> exclusive;
      std::unique_ptr<SharedLock> shared;
      if (mode == 'E') {
        exclusive = std::move(*ExclusiveLock::Create(*session, path, options));
      } else {
        shared = std::move(*SharedLock::Create(*session, path, options));
      }
      for (int round = 0; round < kRounds; ++round) {
        absl::StatusOr<LockGuard> guard =
            exclusive ? exclusive->Acquire(absl::Seconds(90))
            : mode == 'R' ? shared->AcquireRead(absl::Seconds(90))
                          : shared->AcquireWrite(absl::Seconds(90));
        if (!guard.ok()) {
          ADD_FAILURE() << name << " round " << round << ": " << guard.status();
          return;
        }
        const std::string run = absl::StrCat(name, "-", round);
        const char ledger_mode = mode == 'R' ? 'R' : 'W';
        AppendHold(ledger_, run, ledger_mode, true);
        absl::SleepFor(absl::Milliseconds(kHoldMs));
        AppendHold(ledger_, run, ledger_mode, false);
        EXPECT_TRUE(guard->Release().ok()) << name;
      }
    });
  }
  // Our candidate: `rounds` terms in `dialect`, each in the ledger.
  std::thread OurCandidate(const std::string& path, Dialect dialect, const std::string& name) {
    return std::thread([this, path, dialect, name] {
      auto session = NewSession();
      ElectionOptions options;
      options.dialect = dialect;
      options.id = name;
      auto election = LeaderElection::Create(*session, path, options);
      ASSERT_TRUE(election.ok()) << election.status();
      for (int round = 0; round < kRounds; ++round) {
        ASSERT_TRUE((*election)->Join().ok());
        absl::Status leading = (*election)->AwaitLeadership(absl::Seconds(90));
        ASSERT_TRUE(leading.ok()) << name << " round " << round << ": " << leading;
        const std::string run = absl::StrCat(name, "-", round);
        AppendHold(ledger_, run, 'W', true);
        absl::SleepFor(absl::Milliseconds(kHoldMs));
        AppendHold(ledger_, run, 'W', false);
        ASSERT_TRUE((*election)->Leave().ok());
      }
    });
  }

  // Once every peer is connected, all participants start at once (the
  // peers wait for LEDGER.go; ours are started after it).
  void StartTogether() {
    for (auto& peer : peers_) {
      ASSERT_TRUE(WaitUntil(
          [&] { return absl::StrContains(peer->Stdout(), "ready") || peer->Exited(); }, kPeerBound))
          << peer->Describe();
      ASSERT_FALSE(peer->Exited()) << peer->Describe();
    }
    std::ofstream(ledger_ + ".go").put('\n');
  }

  // Every peer exits 0; the ledger has no overlap and every participant's
  // rounds; nothing is left under `path`.
  void ExpectAllFinishedApart(const std::string& path, std::vector<std::thread>& ours,
                              const std::vector<std::string>& participants) {
    for (std::thread& t : ours) t.join();
    for (auto& peer : peers_) EXPECT_EQ(peer->Wait(kPeerBound), 0) << peer->Describe();
    const LedgerCheck check = CheckHolds(ReadFile(ledger_));
    EXPECT_EQ(check.overlaps, 0) << check.description;
    EXPECT_EQ(check.malformed, 0) << check.description;
    EXPECT_THAT(check.open_runs, SizeIs(0));
    for (const std::string& name : participants) {
      EXPECT_EQ(check.runs_by_participant.count(name) ? check.runs_by_participant.at(name) : 0,
                kRounds)
          << name << " did not finish its rounds:\n" << ReadFile(ledger_);
    }
    ExpectEmptyAndDelete(path);
  }

  std::string source_;
  std::string classpath_;
  std::string ledger_;
  std::vector<std::unique_ptr<Process>> peers_;
};

TEST_F(InteropTest, CuratorMutexWithOurExclusiveLocks) {
  const std::string path = Path("curator-mutex");
  Curator("mutex", path, "cur1");
  Curator("mutex", path, "cur2");
  ASSERT_NO_FATAL_FAILURE(StartTogether());
  std::vector<std::thread> ours;
  ours.push_back(Ours(path, Dialect::kCurator, 'E', "ours1"));
  ours.push_back(Ours(path, Dialect::kCurator, 'E', "ours2"));
  ExpectAllFinishedApart(path, ours, {"cur1", "cur2", "ours1", "ours2"});
}

TEST_F(InteropTest, CuratorReadWriteLockWithOurSharedLocks) {
  const std::string path = Path("curator-rw");
  Curator("write", path, "curw");
  Curator("read", path, "curr");
  ASSERT_NO_FATAL_FAILURE(StartTogether());
  std::vector<std::thread> ours;
  ours.push_back(Ours(path, Dialect::kCurator, 'W', "oursw"));
  ours.push_back(Ours(path, Dialect::kCurator, 'R', "oursr"));
  ExpectAllFinishedApart(path, ours, {"curw", "curr", "oursw", "oursr"});
}

TEST_F(InteropTest, CuratorLeaderLatchWithOurCandidate) {
  const std::string path = Path("curator-latch");
  Curator("latch", path, "latch1");
  Curator("latch", path, "latch2");
  ASSERT_NO_FATAL_FAILURE(StartTogether());
  std::vector<std::thread> ours;
  ours.push_back(OurCandidate(path, Dialect::kCurator, "cand"));
  ExpectAllFinishedApart(path, ours, {"latch1", "latch2", "cand"});
}

// A LeaderLatch heeds only the deletion of the node it watches: a data
// change (our take-over mark, written when a candidate starts to lead) uses
// up its watch, and it would never lead (a stall the mixed-latch test hit).
// Here it watches our second candidate while that one takes over from our
// first, leads a while, then leaves.
TEST_F(InteropTest, ALatchBehindOurTakeOverLeadsWhenWeLeave) {
  const std::string path = Path("latch-behind");
  auto a = NewSession(), b = NewSession();
  auto candidate = [&](Session& session, const std::string& id) {
    ElectionOptions options;
    options.dialect = Dialect::kCurator;
    options.id = id;
    return std::move(*LeaderElection::Create(session, path, options));
  };
  auto first = candidate(*a, "first");
  auto second = candidate(*b, "second");
  ASSERT_TRUE(first->Join().ok());
  ASSERT_TRUE(first->AwaitLeadership(absl::Seconds(20)).ok());
  ASSERT_TRUE(second->Join().ok());
  ASSERT_TRUE(WaitForChildren(path, 2));
  Process& latch = Curator("latch", path, "latch", /*rounds=*/1);
  ASSERT_NO_FATAL_FAILURE(StartTogether());
  ASSERT_TRUE(WaitForChildren(path, 3, absl::Seconds(60))) << latch.Describe();
  // The latch's watch is on our second candidate's node (the server says so).
  ASSERT_NE(testing::SharedServer(), nullptr);
  auto queue = InspectQueue(admin(), path);
  ASSERT_TRUE(queue.ok() && queue->size() == 3) << queue.status();
  ASSERT_EQ((*queue)[1].data, "second");
  const std::string watched = path + "/" + (*queue)[1].name;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto watches = testing::SharedServer()->FourLetterWord("wchp");
        return watches.ok() && absl::StrContains(*watches, watched + "\n");
      },
      absl::Seconds(30)))
      << "no watch on " << watched;
  ASSERT_TRUE(first->Leave().ok());
  ASSERT_TRUE(second->AwaitLeadership(absl::Seconds(20)).ok());
  // Leading, it writes nothing to its node (a take-over mark would use up
  // the latch's watch): a negative, so observed for a bounded 2 s (the
  // mark, when there was one, came within milliseconds).
  EXPECT_FALSE(WaitUntil(
      [&] {
        auto stat = admin().Exists(watched);
        return stat.ok() && stat->has_value() && (*stat)->version > 0;
      },
      absl::Seconds(2)))
      << "our candidate wrote its node on taking over";
  ASSERT_TRUE(second->Leave().ok());
  EXPECT_EQ(latch.Wait(absl::Seconds(60)), 0) << "the latch never led: " << latch.Describe();
  EXPECT_THAT(ReadFile(ledger_), HasSubstr("latch-0 W begin")) << latch.Describe();
  ExpectEmptyAndDelete(path);
}

TEST_F(InteropTest, KazooLockWithOurLocksAndZkr) {
  const std::string path = Path("kazoo-lock");
  Kazoo("lock", path, "kz1");
  Kazoo("write", path, "kz2");
  ASSERT_NO_FATAL_FAILURE(StartTogether());
  std::vector<std::thread> ours;
  ours.push_back(Ours(path, Dialect::kKazoo, 'E', "ours1"));
  ours.push_back(Ours(path, Dialect::kKazoo, 'W', "ours2"));
  // zkr lock --dialect=kazoo, one round after another, in the same ledger.
  ours.push_back(std::thread([this, path] {
    for (int round = 0; round < kRounds; ++round) {
      const std::string line = absl::StrCat("echo \"zkr-", round, " W $1 $(date +%s%6N)\" >> ",
                                            testing::ShQuote(ledger_));
      Process& zkr = Zkr({"lock", "--dialect=kazoo", "--path=" + path, "--", "sh", "-c",
                          absl::StrCat("set -- begin; ", line, "; sleep 0.03; set -- end; ", line),
                          "sh"});
      EXPECT_EQ(zkr.Wait(absl::Seconds(90)), 0) << zkr.Describe();
    }
  }));
  ExpectAllFinishedApart(path, ours, {"kz1", "kz2", "ours1", "ours2", "zkr"});
}

TEST_F(InteropTest, KazooElectionWithOurCandidate) {
  const std::string path = Path("kazoo-election");
  Kazoo("election", path, "kzc1");
  Kazoo("election", path, "kzc2");
  ASSERT_NO_FATAL_FAILURE(StartTogether());
  std::vector<std::thread> ours;
  ours.push_back(OurCandidate(path, Dialect::kKazoo, "cand"));
  ExpectAllFinishedApart(path, ours, {"kzc1", "kzc2", "cand"});
}

TEST_F(InteropTest, APeerKilledWhileHoldingIsFollowedOnlyAfterItsSessionEnds) {
  const std::string path = Path("curator-killed");
  Process& holder = Curator("mutex", path, "doomed", /*rounds=*/-1);
  ASSERT_NO_FATAL_FAILURE(StartTogether());
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(holder.Stdout(), "held") || holder.Exited(); },
                        kPeerBound))
      << holder.Describe();
  // inspect and a try by zkr see the peer's hold.
  Process& inspect = Zkr({"inspect", "--path=" + path});
  EXPECT_EQ(inspect.Wait(absl::Seconds(20)), 0) << inspect.Describe();
  EXPECT_THAT(inspect.Stdout(), HasSubstr("curator's node names")) << inspect.Describe();
  EXPECT_THAT(inspect.Stdout(), HasSubstr("HOLDS")) << inspect.Describe();
  Process& busy = Zkr({"lock", "--dialect=curator", "--nonblock", "--path=" + path, "--", "true"});
  EXPECT_EQ(busy.Wait(absl::Seconds(20)), 3) << busy.Describe();
  // Ours waits behind it; the peer dies with SIGKILL.
  std::vector<std::thread> ours;
  ours.push_back(Ours(path, Dialect::kCurator, 'E', "after"));
  ASSERT_TRUE(WaitForChildren(path, 2, absl::Seconds(30)));
  const int64_t killed_us = absl::ToUnixMicros(absl::Now());
  holder.KillGroup();
  for (std::thread& t : ours) t.join();
  const LedgerCheck check = CheckHolds(ReadFile(ledger_), killed_us);
  EXPECT_EQ(check.overlaps, 0) << check.description;
  EXPECT_EQ(check.runs_by_participant.count("after") ? check.runs_by_participant.at("after") : 0,
            kRounds);
  peers_.clear();
  ExpectEmptyAndDelete(path);
}

TEST_F(InteropTest, ZkrNamesAPeersLeader) {
  const std::string latch_path = Path("who-latch"), kazoo_path = Path("who-kazoo");
  Process& latch = Curator("latch", latch_path, "latch-leader", /*rounds=*/-1);
  Process& kazoo = Kazoo("election", kazoo_path, "kazoo-leader", /*rounds=*/-1);
  ASSERT_NO_FATAL_FAILURE(StartTogether());
  for (Process* peer : {&latch, &kazoo}) {
    ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(peer->Stdout(), "held") || peer->Exited(); },
                          kPeerBound))
        << peer->Describe();
  }
  Process& who_latch = Zkr({"elect", "--who", "--path=" + latch_path});
  EXPECT_EQ(who_latch.Wait(absl::Seconds(20)), 0) << who_latch.Describe();
  EXPECT_EQ(who_latch.Stdout(), "latch-leader\n");
  Process& who_kazoo = Zkr({"elect", "--who", "--path=" + kazoo_path});
  EXPECT_EQ(who_kazoo.Wait(absl::Seconds(20)), 0) << who_kazoo.Describe();
  EXPECT_EQ(who_kazoo.Stdout(), "kazoo-leader\n");
  peers_.clear();
  for (const std::string& path : {latch_path, kazoo_path}) {
    EXPECT_TRUE(WaitForChildren(path, 0, absl::Seconds(30))) << "the killed peer's session stayed";
    ExpectEmptyAndDelete(path);
  }
}

}  // namespace
}  // namespace zkr
