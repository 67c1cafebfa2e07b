// An independent adversarial review (helper-48) of StdSharedMutex's read side
// across lost holds: readers on one or two lost nodes beside readers on a
// fresh node, unlocking in every order; the fresh node itself lost; a local
// writer waiting behind lost readers; try_lock_shared* meanwhile. Each test
// names the promise it attacks. Waits are on observable conditions (session
// states, lock states told through on_state_change, server listings);
// durations only bound hangs.
#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/directory_check.h"
#include "tests/support/lock_loss.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/std_lock.h"

namespace zkr {
namespace {

using testing::DirectoryCheckedTest;
using testing::Eventually;
using testing::ZkTest;

class Review48Test : public DirectoryCheckedTest<ZkTest> {
 protected:
  void RunOrder(const std::string& name, const std::vector<int>& lost_groups, int live,
                const std::vector<int>& order);
};

using testing::ExpireAndReconnect;
using testing::LockStateLog;
using testing::NodesOf;

// Whether a writer on `other` gets the lock at `path` at once (it lets go
// again if it did).
bool WriterElsewhereGetsIn(Session& other, const std::string& path) {
  auto lock = ExclusiveLock::Create(other, path);
  if (!lock.ok()) {
    ADD_FAILURE() << lock.status();
    return true;
  }
  auto writer = (*lock)->TryAcquire();
  if (writer.ok()) {
    EXPECT_TRUE(writer->Release().ok());
    return true;
  }
  EXPECT_TRUE(absl::IsDeadlineExceeded(writer.status())) << writer.status();
  return false;
}

// One reader thread of the adapter: lock_shared(), then holds until told to
// unlock. `inside` counts the readers between their lock_shared() returning
// and their unlock_shared() being called.
class Reader {
 public:
  Reader(StdSharedMutex& mutex, std::atomic<int>& inside) : inside_(inside) {
    thread_ = std::thread([this, &mutex] {
      try {
        mutex.lock_shared();
      } catch (const LockError& e) {
        error_ = e.status();
        holds_.Notify();
        return;
      }
      ++inside_;
      holds_.Notify();
      may_unlock_.WaitForNotification();
      --inside_;
      mutex.unlock_shared();
      unlock_status_ = mutex.status();
    });
  }
  ~Reader() { Finish(); }
  // Waits until lock_shared() returned (or threw); its error, OK if it holds.
  absl::Status WaitHolds() {
    if (!holds_.WaitForNotificationWithTimeout(absl::Seconds(60))) {
      return absl::DeadlineExceededError("lock_shared() did not return in 60 s");
    }
    return error_;
  }
  // Unlocks and waits for unlock_shared() to return.
  void Finish() {
    if (!may_unlock_.HasBeenNotified()) may_unlock_.Notify();
    if (thread_.joinable()) thread_.join();
  }
  absl::Status unlock_status() const { return unlock_status_; }

 private:
  std::atomic<int>& inside_;
  absl::Notification holds_, may_unlock_;
  absl::Status error_, unlock_status_;
  std::thread thread_;
};

// Starts `n` readers and waits until each holds (fails the test otherwise).
void StartReaders(StdSharedMutex& mutex, std::atomic<int>& inside, int n,
                  std::vector<std::unique_ptr<Reader>>& out) {
  for (int i = 0; i < n; ++i) {
    out.push_back(std::make_unique<Reader>(mutex, inside));
    absl::Status st = out.back()->WaitHolds();
    ASSERT_TRUE(st.ok()) << "reader " << i << ": lock_shared() threw " << st;
  }
}

// The whole scenario of one unlock order: `lost_groups` generations of
// readers whose holds get lost (lost_groups[g] readers in generation g),
// then `live` readers on the fresh node of the last generation. `order`
// says which group unlocks next (an index into lost_groups, or -1 for a
// live reader). After every unlock: while a live reader is inside, its
// node (one node of the current session) is on the server and a writer
// elsewhere cannot get in. At the end nothing is left and a local writer
// may enter.
void Review48Test::RunOrder(const std::string& name, const std::vector<int>& lost_groups,
                            int live, const std::vector<int>& order) {
  Session& admin = this->admin();
  SCOPED_TRACE(absl::StrCat("order ", absl::StrJoin(order, " ")));
  // A fresh session per order: the test's sessions are as old as it.
  auto cut = NewSession();
  ASSERT_NE(cut, nullptr);
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  const std::string path = name;
  LockStateLog log;
  auto lock = SharedLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  StdSharedMutex mutex(**lock);
  testing::StateRecorder states(*cut);
  std::atomic<int> inside{0};

  std::vector<std::vector<std::unique_ptr<Reader>>> lost(lost_groups.size());
  std::vector<std::unique_ptr<Reader>> fresh;
  for (size_t g = 0; g < lost_groups.size(); ++g) {
    ASSERT_NO_FATAL_FAILURE(StartReaders(mutex, inside, lost_groups[g], lost[g]));
    ASSERT_EQ(NodesOf(admin, path, cut->session_id()).size(), 1u) << "generation " << g;
    ASSERT_NO_FATAL_FAILURE(ExpireAndReconnect(*cut, log, states, static_cast<int>(g) + 1));
  }
  ASSERT_NO_FATAL_FAILURE(StartReaders(mutex, inside, live, fresh));
  const std::vector<std::string> live_nodes = NodesOf(admin, path, cut->session_id());
  ASSERT_EQ(live_nodes.size(), 1u) << "the live readers hold through one fresh node";
  ASSERT_FALSE(WriterElsewhereGetsIn(*other, path));

  std::vector<size_t> next(lost_groups.size(), 0);
  size_t next_live = 0;
  for (size_t step = 0; step < order.size(); ++step) {
    const int g = order[step];
    if (g < 0) {
      fresh[next_live++]->Finish();
    } else {
      lost[g][next[g]++]->Finish();
    }
    const size_t live_left = fresh.size() - next_live;
    if (live_left > 0) {
      EXPECT_EQ(NodesOf(admin, path, cut->session_id()), live_nodes)
          << "step " << step << ": " << live_left
          << " live reader(s) still inside, yet their read node is gone";
      EXPECT_FALSE(WriterElsewhereGetsIn(*other, path))
          << "step " << step << ": a writer elsewhere got in while " << live_left
          << " live reader(s) are still inside lock_shared()/unlock_shared()";
    }
  }
  for (auto& r : fresh) EXPECT_TRUE(r->unlock_status().ok()) << r->unlock_status();
  for (auto& group : lost) {
    for (auto& r : group) EXPECT_TRUE(r->unlock_status().ok()) << r->unlock_status();
  }
  EXPECT_EQ(inside.load(), 0);
  EXPECT_TRUE(NodesOf(admin, path).empty()) << absl::StrJoin(NodesOf(admin, path), ", ");
  // The local counts are back to zero: a local writer may enter at once.
  ASSERT_TRUE(mutex.try_lock()) << mutex.status();
  mutex.unlock();
  EXPECT_TRUE(NodesOf(admin, path).empty());
}

// All distinct sequences of group labels with the given multiplicities.
std::vector<std::vector<int>> Interleavings(std::vector<int> labels) {
  std::sort(labels.begin(), labels.end());
  std::vector<std::vector<int>> out;
  do {
    out.push_back(labels);
  } while (std::next_permutation(labels.begin(), labels.end()));
  return out;
}

// Promise (std_lock.h): "StdSharedMutex's readers in this process share one
// read hold (one node) ... the node goes with the last of them. (Once that
// hold is LOST, the next reader queues a fresh node, and unlocks by the
// readers of the lost hold never delete it.)" Two readers on a lost hold and
// two on the fresh node unlock in each of the six interleavings.
TEST_F(Review48Test, TwoLostAndTwoLiveReadersUnlockInEveryInterleaving) {
  int i = 0;
  for (const std::vector<int>& order : Interleavings({0, 0, -1, -1})) {
    ASSERT_NO_FATAL_FAILURE(
        RunOrder(Path(absl::StrCat("rw", i++)), {2}, 2, order));
  }
}

// Same promise, two expiries in a row: readers on two lost nodes (one each
// on the first, two on the second) and two on the live node; a selection of
// orders in which the live readers go first, last, and in between.
TEST_F(Review48Test, ReadersOnTwoLostNodesAndALiveOne) {
  const std::vector<std::vector<int>> orders = {
      {0, 1, 1, -1, -1}, {-1, -1, 0, 1, 1}, {1, -1, 0, -1, 1}, {-1, 1, 0, 1, -1},
      {1, 1, 0, -1, -1}};
  int i = 0;
  for (const std::vector<int>& order : orders) {
    ASSERT_NO_FATAL_FAILURE(
        RunOrder(Path(absl::StrCat("rw", i++)), {1, 2}, 2, order));
  }
}

// Promise (std_lock.h): "A local writer waiting keeps later local readers
// out ..., and waits for the local readers to leave"; lock() "throw[s]
// zkr::LockError ... when the lock cannot be had", it never returns without
// the lock. Two readers on a lost hold and one on the fresh node; a local
// writer's lock() begins. It may enter only once no reader is inside (it
// records how many are when lock() returns), and it must enter once they all
// left: no hang on the lost readers' unlocks. Order: a lost reader, the live
// reader, the last lost reader.
TEST_F(Review48Test, LocalWriterWaitsForLostReadersEntersAfterTheLastAndNotBesideALiveOne) {
  auto cut = NewSession();
  ASSERT_NE(cut, nullptr);
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  const std::string path = Path("rw");
  LockStateLog log;
  auto lock = SharedLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  StdSharedMutex mutex(**lock);
  testing::StateRecorder states(*cut);
  std::atomic<int> inside{0};
  std::vector<std::unique_ptr<Reader>> lost, live;
  ASSERT_NO_FATAL_FAILURE(StartReaders(mutex, inside, 2, lost));
  ASSERT_NO_FATAL_FAILURE(ExpireAndReconnect(*cut, log, states, 1));
  ASSERT_NO_FATAL_FAILURE(StartReaders(mutex, inside, 1, live));
  const std::vector<std::string> live_nodes = NodesOf(admin(), path, cut->session_id());
  ASSERT_EQ(live_nodes.size(), 1u);

  absl::Notification writer_may_unlock;
  std::atomic<int> inside_at_entry{-1};
  auto writer = std::async(std::launch::async, [&]() -> absl::Status {
    try {
      mutex.lock();
    } catch (const LockError& e) {
      return e.status();
    }
    inside_at_entry = inside.load();
    writer_may_unlock.WaitForNotification();
    mutex.unlock();
    return mutex.status();
  });
  lost[0]->Finish();
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()), live_nodes);
  EXPECT_FALSE(WriterElsewhereGetsIn(*other, path)) << "beside the live reader";
  live[0]->Finish();
  lost[1]->Finish();
  // All readers left: the writer enters (bounded only against a hang).
  ASSERT_TRUE(Eventually([&] { return inside_at_entry.load() >= 0; }, absl::Seconds(30)))
      << "the local writer's lock() still waits after every reader unlocked";
  EXPECT_EQ(inside_at_entry.load(), 0) << "the local writer entered beside a reader";
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()).size(), 1u) << "the writer's node";
  EXPECT_FALSE(WriterElsewhereGetsIn(*other, path)) << "beside the local writer";
  writer_may_unlock.Notify();
  ASSERT_TRUE(testing::Ready(writer));
  absl::Status w = writer.get();
  EXPECT_TRUE(w.ok()) << w;
  EXPECT_TRUE(NodesOf(admin(), path).empty()) << absl::StrJoin(NodesOf(admin(), path), ", ");
}

// Promise (std_lock.h): try_lock_shared() is "false at once
// (DeadlineExceeded) if one holds or is acquiring — except that a reader
// joins a read hold already held — otherwise one try at the lock";
// try_lock_shared_for "return[s] false, and status() says why:
// DeadlineExceeded when another holder (here or elsewhere) kept it", and
// leaves no node behind. After a loss, with the lost reader still inside
// and a writer elsewhere holding: both tries fail with DeadlineExceeded and
// leave nothing. Once the writer left: try_lock_shared() takes a fresh node,
// a second one joins it, and the lost reader's unlock (and then the first's)
// leave it to the last.
TEST_F(Review48Test, TryLockSharedAfterALossWhileTheLostReaderIsInside) {
  auto cut = NewSession();
  ASSERT_NE(cut, nullptr);
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  const std::string path = Path("rw");
  LockStateLog log;
  auto lock = SharedLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  StdSharedMutex mutex(**lock);
  testing::StateRecorder states(*cut);
  std::atomic<int> inside{0};
  std::vector<std::unique_ptr<Reader>> lost;
  ASSERT_NO_FATAL_FAILURE(StartReaders(mutex, inside, 1, lost));
  ASSERT_NO_FATAL_FAILURE(ExpireAndReconnect(*cut, log, states, 1));

  auto writer_lock = SharedLock::Create(*other, path);
  ASSERT_TRUE(writer_lock.ok());
  auto writer = (*writer_lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(writer.ok()) << "the lost reader's node is gone: " << writer.status();

  EXPECT_FALSE(mutex.try_lock_shared()) << "joined past a writer elsewhere";
  EXPECT_TRUE(absl::IsDeadlineExceeded(mutex.status())) << mutex.status();
  EXPECT_TRUE(NodesOf(admin(), path, cut->session_id()).empty());
  EXPECT_FALSE(mutex.try_lock_shared_for(std::chrono::milliseconds(300)))
      << "got in past a writer elsewhere";
  EXPECT_TRUE(absl::IsDeadlineExceeded(mutex.status())) << mutex.status();
  EXPECT_TRUE(NodesOf(admin(), path, cut->session_id()).empty())
      << "try_lock_shared_for left its queue node behind";
  ASSERT_TRUE(writer->Release().ok());

  // B (this thread): a fresh node.
  ASSERT_TRUE(mutex.try_lock_shared()) << mutex.status();
  const std::vector<std::string> live_nodes = NodesOf(admin(), path, cut->session_id());
  ASSERT_EQ(live_nodes.size(), 1u);
  // C (another thread) joins B's hold.
  auto c = std::async(std::launch::async, [&] { return mutex.try_lock_shared(); });
  ASSERT_TRUE(testing::Ready(c));
  ASSERT_TRUE(c.get()) << mutex.status();
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()), live_nodes) << "C joins B's node";
  lost[0]->Finish();  // the lost reader
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()), live_nodes);
  EXPECT_FALSE(WriterElsewhereGetsIn(*other, path)) << "beside B and C";
  mutex.unlock_shared();  // B
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()), live_nodes);
  EXPECT_FALSE(WriterElsewhereGetsIn(*other, path)) << "beside C";
  auto c_out = std::async(std::launch::async, [&] { mutex.unlock_shared(); });
  ASSERT_TRUE(testing::Ready(c_out));
  EXPECT_TRUE(NodesOf(admin(), path).empty()) << absl::StrJoin(NodesOf(admin(), path), ", ");
  ASSERT_TRUE(mutex.try_lock()) << mutex.status();
  mutex.unlock();
}

// Promise (std_lock.h): lock_shared() returns only holding ("Returning from
// lock() without the lock would let the caller run unprotected"), and
// "unlocks by the readers of the lost hold never delete" the fresh node; a
// reader acquiring keeps try_lock_shared() out ("false at once ... if one
// ... is acquiring"). The lost reader unlocks while the next reader's
// lock_shared() is queued behind a writer elsewhere; once that writer lets
// go the next reader holds, through a node the unlock did not touch.
TEST_F(Review48Test, LostReaderUnlocksWhileTheNextReaderIsQueued) {
  auto cut = NewSession();
  ASSERT_NE(cut, nullptr);
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  const std::string path = Path("rw");
  LockStateLog log;
  auto lock = SharedLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  StdSharedMutex mutex(**lock);
  testing::StateRecorder states(*cut);
  std::atomic<int> inside{0};
  std::vector<std::unique_ptr<Reader>> lost;
  ASSERT_NO_FATAL_FAILURE(StartReaders(mutex, inside, 1, lost));
  ASSERT_NO_FATAL_FAILURE(ExpireAndReconnect(*cut, log, states, 1));
  auto writer_lock = SharedLock::Create(*other, path);
  ASSERT_TRUE(writer_lock.ok());
  auto writer = (*writer_lock)->AcquireWrite(absl::Seconds(10));
  ASSERT_TRUE(writer.ok()) << writer.status();

  auto next = std::make_unique<Reader>(mutex, inside);  // queues behind the writer
  ASSERT_TRUE(Eventually(
      [&] { return NodesOf(admin(), path, cut->session_id()).size() == 1; }, absl::Seconds(30)))
      << "the next reader's queue node";
  const std::vector<std::string> queued = NodesOf(admin(), path, cut->session_id());
  EXPECT_FALSE(mutex.try_lock_shared()) << "joined while another reader is acquiring";
  EXPECT_TRUE(absl::IsDeadlineExceeded(mutex.status())) << mutex.status();
  lost[0]->Finish();
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()), queued)
      << "the lost reader's unlock touched the queued reader's node";
  ASSERT_TRUE(writer->Release().ok());
  absl::Status held = next->WaitHolds();
  ASSERT_TRUE(held.ok()) << held;
  EXPECT_EQ(NodesOf(admin(), path, cut->session_id()), queued);
  EXPECT_FALSE(WriterElsewhereGetsIn(*other, path)) << "beside the next reader";
  EXPECT_FALSE(mutex.try_lock()) << "a local writer beside the next reader";
  next->Finish();
  EXPECT_TRUE(next->unlock_status().ok()) << next->unlock_status();
  EXPECT_TRUE(NodesOf(admin(), path).empty()) << absl::StrJoin(NodesOf(admin(), path), ", ");
}

// Promise (recipes/README.md): "An OK acquisition is HELD when it returns";
// std_lock.h: lock_shared() throws LockError rather than return without the
// lock. A reader calls lock_shared() the moment the old hold reads LOST,
// before the session's next generation is connected: it either throws, or
// returns with its node of the current session on the server and a writer
// elsewhere kept out.
TEST_F(Review48Test, LockSharedBetweenLossAndReconnectReturnsOnlyHolding) {
  auto cut = NewSession();
  ASSERT_NE(cut, nullptr);
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  const std::string path = Path("rw");
  LockStateLog log;
  auto lock = SharedLock::Create(*cut, path, log.Options());
  ASSERT_TRUE(lock.ok()) << lock.status();
  StdSharedMutex mutex(**lock);
  testing::StateRecorder states(*cut);
  std::atomic<int> inside{0};
  std::vector<std::unique_ptr<Reader>> lost;
  ASSERT_NO_FATAL_FAILURE(StartReaders(mutex, inside, 1, lost));
  ASSERT_TRUE(testing::ExpireSession(*cut).ok());
  ASSERT_TRUE(log.WaitFor(LockState::kLost)) << log.Seen();
  bool holds = true;
  try {
    mutex.lock_shared();
  } catch (const LockError& e) {
    holds = false;
    RecordProperty("threw", e.status().ToString());
  }
  if (holds) {
    EXPECT_EQ(NodesOf(admin(), path, cut->session_id()).size(), 1u)
        << "lock_shared() returned, but no node of the current session holds";
    EXPECT_FALSE(WriterElsewhereGetsIn(*other, path)) << "beside the returned reader";
    lost[0]->Finish();
    EXPECT_EQ(NodesOf(admin(), path, cut->session_id()).size(), 1u);
    mutex.unlock_shared();
  } else {
    lost[0]->Finish();
  }
  ASSERT_TRUE(states.WaitFor(SessionState::kConnected, 2).has_value());
  EXPECT_TRUE(NodesOf(admin(), path).empty()) << absl::StrJoin(NodesOf(admin(), path), ", ");
  ASSERT_TRUE(mutex.try_lock()) << mutex.status();
  mutex.unlock();
}

}  // namespace
}  // namespace zkr
