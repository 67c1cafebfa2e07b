// Locks that speak Curator's and Kazoo's node names (LockOptions::dialect),
// against a real server: the names and data each library expects, the order
// among themselves, and a foreign child refused with nothing left behind.
// Shared queues with real Curator and Kazoo processes: tests/interop.
#include <regex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/lock_fixture.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/revocation.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::LockTest;

using DialectLockTest = LockTest;

LockOptions Speaking(Dialect dialect, std::string purpose = "") {
  LockOptions options;
  options.dialect = dialect;
  options.purpose = std::move(purpose);
  return options;
}

TEST_F(DialectLockTest, NodesHaveTheNamesAndDataEachLibraryMakes) {
  struct Case {
    Dialect dialect;
    bool exclusive;
    bool read;
    std::string pattern;
  };
  const std::string uuid = "_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
  const Case cases[] = {
      {Dialect::kCurator, true, false, uuid + "-lock-[0-9]{10}"},
      {Dialect::kCurator, false, false, uuid + "-__WRIT__[0-9]{10}"},
      {Dialect::kCurator, false, true, uuid + "-__READ__[0-9]{10}"},
      {Dialect::kKazoo, true, false, "[0-9a-f]{32}__lock__[0-9]{10}"},
      {Dialect::kKazoo, false, false, "[0-9a-f]{32}__lock__[0-9]{10}"},
      {Dialect::kKazoo, false, true, "[0-9a-f]{32}__rlock__[0-9]{10}"},
  };
  auto session = NewSession();
  int n = 0;
  for (const Case& c : cases) {
    const std::string path = Path(absl::StrCat("names-", n++));
    SCOPED_TRACE(path);
    absl::StatusOr<LockGuard> guard = absl::UnknownError("not tried");
    std::unique_ptr<ExclusiveLock> exclusive;
    std::unique_ptr<SharedLock> shared;
    if (c.exclusive) {
      auto lock = ExclusiveLock::Create(*session, path, Speaking(c.dialect, "job 7"));
      ASSERT_TRUE(lock.ok()) << lock.status();
      exclusive = std::move(*lock);
      guard = exclusive->Acquire(absl::Seconds(20));
    } else {
      shared = NewSharedLock(*session, path, Speaking(c.dialect, "job 7"));
      ASSERT_NE(shared, nullptr);
      guard = c.read ? shared->AcquireRead(absl::Seconds(20)) : shared->AcquireWrite(absl::Seconds(20));
    }
    ASSERT_TRUE(guard.ok()) << guard.status();
    const std::vector<std::string> children = Children(path);
    ASSERT_THAT(children, SizeIs(1));
    EXPECT_TRUE(std::regex_match(children[0], std::regex(c.pattern))) << children[0];
    EXPECT_EQ(guard->node_path(), path + "/" + children[0]);
    // The data is the purpose alone: peers read it as the owner's identifier.
    auto data = admin().Get(path + "/" + children[0]);
    ASSERT_TRUE(data.ok()) << data.status();
    EXPECT_EQ(*data, "job 7");
    ASSERT_TRUE(guard->Release().ok());
    EXPECT_THAT(Children(path), SizeIs(0));
    ASSERT_TRUE(admin().Delete(path).ok());
  }
}

TEST_F(DialectLockTest, ParticipantsOfADialectExcludeEachOther) {
  for (Dialect dialect : {Dialect::kCurator, Dialect::kKazoo}) {
    const std::string path = Path(absl::StrCat("order-", DialectName(dialect)));
    auto a = NewSession(), b = NewSession();
    auto first = NewSharedLock(*a, path, Speaking(dialect));
    auto second = NewSharedLock(*b, path, Speaking(dialect));
    auto writer = first->AcquireWrite(absl::Seconds(20));
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_TRUE(absl::IsDeadlineExceeded(second->TryAcquireRead().status()));
    auto reader = second->AcquireReadFuture();
    ASSERT_TRUE(WaitForChildren(path, 2));
    EXPECT_EQ(reader.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
    ASSERT_TRUE(writer->Release().ok());
    auto read = reader.get();
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_TRUE(read->Release().ok());
    EXPECT_THAT(Children(path), SizeIs(0));
    ASSERT_TRUE(admin().Delete(path).ok());
  }
}

TEST_F(DialectLockTest, AForeignChildIsRefusedByNameAndNothingIsLeftBehind) {
  struct Case {
    Dialect dialect;
    std::string foreign;
  };
  const Case cases[] = {
      // Another library's node in ours: it would not see our order.
      {Dialect::kZkr, "0123456789abcdef0123456789abcdef__lock__"},
      {Dialect::kZkr, "_c_1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b-lock-"},
      // Ours, or anything unknown, in a dialect's queue.
      {Dialect::kKazoo, "host_1_0123456789abcdef-W-"},
      {Dialect::kCurator, "_c_1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b-__WRIT__"},  // RW, not mutex
      {Dialect::kCurator, "notes"},
  };
  auto session = NewSession();
  int n = 0;
  for (const Case& c : cases) {
    const std::string path = Path(absl::StrCat("foreign-", n++));
    SCOPED_TRACE(c.foreign);
    ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent).ok());
    const bool sequential = c.foreign != "notes";
    auto made = admin().Create(path + "/" + c.foreign, "",
                               sequential ? CreateMode::kEphemeralSequential : CreateMode::kEphemeral);
    ASSERT_TRUE(made.ok()) << made.status();
    const std::string foreign = made->path.substr(path.size() + 1);
    auto lock = ExclusiveLock::Create(*session, path, Speaking(c.dialect));
    ASSERT_TRUE(lock.ok()) << lock.status();
    for (bool try_only : {false, true}) {
      auto guard = try_only ? (*lock)->TryAcquire() : (*lock)->Acquire(absl::Seconds(20));
      EXPECT_TRUE(absl::IsFailedPrecondition(guard.status())) << guard.status();
      EXPECT_THAT(guard.status().message(), HasSubstr(foreign));
      EXPECT_THAT(Children(path), ElementsAre(foreign)) << "our node stayed";
    }
    ASSERT_TRUE(admin().Delete(path + "/" + foreign).ok());
    ASSERT_TRUE(admin().Delete(path).ok());
  }
}

TEST_F(DialectLockTest, WhatADialectCannotSayIsRefusedUpFront) {
  auto session = NewSession();
  LockOptions revocable = Speaking(Dialect::kCurator);
  revocable.on_revoke_request = [](const RevokeRequest&) {};
  auto lock = ExclusiveLock::Create(*session, Path("no-revoke"), revocable);
  EXPECT_TRUE(absl::IsInvalidArgument(lock.status())) << lock.status();
  EXPECT_THAT(lock.status().message(), HasSubstr("curator"));
  auto semaphore = Semaphore::Create(*session, Path("no-sem"), 2, Speaking(Dialect::kKazoo));
  EXPECT_TRUE(absl::IsInvalidArgument(semaphore.status())) << semaphore.status();
  EXPECT_THAT(semaphore.status().message(), HasSubstr("kazoo"));
  auto multi = MultiLock::Create(*session, {{Path("m1"), LockMode::kWrite}}, Speaking(Dialect::kKazoo));
  EXPECT_TRUE(absl::IsInvalidArgument(multi.status())) << multi.status();
  EXPECT_FALSE(admin().Exists(Path("no-revoke")).value().has_value());
}

TEST_F(DialectLockTest, RevokeRefusesAPeersQueueAndAddsNothingToIt) {
  const std::string path = Path("revoke-peer");
  auto session = NewSession();
  auto lock = ExclusiveLock::Create(*session, path, Speaking(Dialect::kCurator));
  ASSERT_TRUE(lock.ok()) << lock.status();
  auto guard = (*lock)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(guard.ok()) << guard.status();
  RevokeOptions ask;
  ask.grace = absl::Seconds(1);
  auto outcomes = Revoke(admin(), path, ask);
  EXPECT_TRUE(absl::IsFailedPrecondition(outcomes.status())) << outcomes.status();
  EXPECT_THAT(outcomes.status().message(), HasSubstr("curator"));
  EXPECT_THAT(Children(path), SizeIs(1)) << "a request node was added";
  EXPECT_EQ(guard->state(), LockState::kHeld);
  ASSERT_TRUE(guard->Release().ok());
  ASSERT_TRUE(admin().Delete(path).ok());
}

}  // namespace
}  // namespace zkr
