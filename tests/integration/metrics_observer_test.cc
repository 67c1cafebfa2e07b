// The metrics observer hook (zkrecipes/observer.h; not LeaderObserver, see
// leader_observer_test.cc) against a real server: every
// event kind, with the values it carries, on the dispatcher thread.
//   queued, handoff, granted, released  WaiterIsQueuedHandedOffGrantedAndReleased
//   (uncontended: position 0, no handoff) AFreeLockIsGrantedAtTheHead
//   acquire failed                      FailedAttemptsSayWhy
//   lost (node deleted / session lost)  ADeletedNodeIsLostNotReleased,
//   session states, with durations      ASessionLossIsReportedWithTheStates
//   retries, with the reason            ADisconnectIsReportedAsStatesAndRetries
//   election terms                      ElectionTermsBeginAndEndWithTheirReason
//   semaphore participants              ASemaphoreLeaseIsReportedWithItsWeight
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "src/session_access.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/observer.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/shared_lock.h"

namespace zkr {
namespace {

using testing::ProxiedZkTest;
using testing::ZkTest;

using Event = std::variant<AcquisitionQueued, Handoff, AcquisitionGranted, AcquisitionFailed,
                           Released, HoldLost, SessionStateChange, Retry, TermBegan, TermEnded>;

// Keeps every event with the thread it arrived on; a test waits, bounded,
// for the events it expects.
class Recorder : public Observer {
 public:
  void OnQueued(const AcquisitionQueued& e) override { Add(e); }
  void OnHandoff(const Handoff& e) override { Add(e); }
  void OnGranted(const AcquisitionGranted& e) override { Add(e); }
  void OnAcquireFailed(const AcquisitionFailed& e) override { Add(e); }
  void OnReleased(const Released& e) override { Add(e); }
  void OnLost(const HoldLost& e) override { Add(e); }
  void OnSessionState(const SessionStateChange& e) override { Add(e); }
  void OnRetry(const Retry& e) override { Add(e); }
  void OnTermBegan(const TermBegan& e) override { Add(e); }
  void OnTermEnded(const TermEnded& e) override { Add(e); }

  // The events of type T seen so far.
  template <typename T>
  std::vector<T> All() {
    absl::MutexLock lock(&mu_);
    std::vector<T> found;
    for (const Event& event : events_) {
      if (const T* e = std::get_if<T>(&event)) found.push_back(*e);
    }
    return found;
  }
  // Waits (up to 20 s) until `n` events of type T that `match` have come.
  template <typename T>
  std::vector<T> Await(size_t n, std::function<bool(const T&)> match = nullptr) {
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      size_t seen = 0;
      for (const Event& event : events_) {
        const T* e = std::get_if<T>(&event);
        if (e != nullptr && (match == nullptr || match(*e))) ++seen;
      }
      return seen >= n;
    };
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(20));
    }
    std::vector<T> found;
    for (const T& e : All<T>()) {
      if (match == nullptr || match(e)) found.push_back(e);
    }
    return found;
  }
  // The arrival index of the first event of type T (-1: none yet), for
  // order checks.
  template <typename T>
  int IndexOfFirst() {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < events_.size(); ++i) {
      if (std::holds_alternative<T>(events_[i])) return static_cast<int>(i);
    }
    return -1;
  }
  // The threads events arrived on.
  std::vector<std::thread::id> threads() {
    absl::MutexLock lock(&mu_);
    return threads_;
  }

 private:
  void Add(Event event) {
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(event));
    threads_.push_back(std::this_thread::get_id());
  }
  absl::Mutex mu_;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> threads_ ABSL_GUARDED_BY(mu_);
};

// The thread `session`'s callbacks run on.
std::thread::id DispatcherThread(Session& session) {
  absl::Notification done;
  std::thread::id id;
  session.ExistsAsync("/", [&](absl::StatusOr<std::optional<Stat>>) {
    id = std::this_thread::get_id();
    done.Notify();
  });
  done.WaitForNotification();
  return id;
}

std::string NameOf(const std::string& path) { return path.substr(path.rfind('/') + 1); }

class MetricsObserverTest : public ZkTest {
 protected:
  std::unique_ptr<Session> ObservedSession(SessionOptions options) {
    options.observer = recorder_;
    return NewSession(std::move(options));
  }
  std::unique_ptr<Session> ObservedSession() { return ObservedSession(Options()); }
  void ExpectAllOnDispatcher(Session& session) {
    const std::thread::id dispatcher = DispatcherThread(session);
    for (std::thread::id id : recorder_->threads()) EXPECT_EQ(id, dispatcher);
  }
  // A hold of the exclusive lock `name` by another, unobserved session.
  absl::StatusOr<LockGuard> HoldElsewhere(absl::string_view name) {
    other_ = NewSession();
    absl::StatusOr<std::unique_ptr<ExclusiveLock>> lock = ExclusiveLock::Create(*other_, Path(name));
    if (!lock.ok()) return lock.status();
    other_lock_ = *std::move(lock);
    return other_lock_->Acquire(absl::Seconds(10));
  }
  // Removes a recipe's directory; fails if a participant's node is left.
  void RemoveDirectory(absl::string_view name) {
    EXPECT_TRUE(admin().Delete(Path(name)).ok()) << "something left under " << Path(name);
  }
  std::shared_ptr<Recorder> recorder_ = std::make_shared<Recorder>();
  std::unique_ptr<Session> other_;  // HoldElsewhere's
  std::unique_ptr<ExclusiveLock> other_lock_;
};

TEST_F(MetricsObserverTest, WaiterIsQueuedHandedOffGrantedAndReleased) {
  auto observed = ObservedSession();
  absl::StatusOr<LockGuard> held = HoldElsewhere("lock");
  ASSERT_TRUE(held.ok()) << held.status();
  auto lock = ExclusiveLock::Create(*observed, Path("lock"));
  ASSERT_TRUE(lock.ok());

  absl::StatusOr<LockGuard> mine;
  std::thread waiter([&] { mine = (*lock)->Acquire(absl::Seconds(20)); });
  const std::vector<AcquisitionQueued> queued = recorder_->Await<AcquisitionQueued>(1);
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].position, 1) << "one holder ahead";
  EXPECT_EQ(queued[0].who.path, Path("lock"));
  EXPECT_EQ(queued[0].who.kind, AcquisitionKind::kWrite);
  EXPECT_TRUE(recorder_->All<AcquisitionGranted>().empty()) << "granted while held elsewhere";
  const std::string holder_node = NameOf(held->node_path());
  ASSERT_TRUE(held->Release().ok());
  waiter.join();
  ASSERT_TRUE(mine.ok()) << mine.status();

  const std::vector<Handoff> handoffs = recorder_->Await<Handoff>(1);
  ASSERT_EQ(handoffs.size(), 1u);
  EXPECT_EQ(handoffs[0].from, holder_node);
  EXPECT_TRUE(handoffs[0].granted) << "the only blocker went: held without listing again";
  EXPECT_GT(handoffs[0].watched, absl::ZeroDuration());
  const std::vector<AcquisitionGranted> granted = recorder_->Await<AcquisitionGranted>(1);
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].who.node, NameOf(mine->node_path()));
  EXPECT_EQ(granted[0].who.node, queued[0].who.node);
  EXPECT_EQ(granted[0].position, 1);
  EXPECT_EQ(granted[0].handoffs, 1);
  EXPECT_GE(granted[0].waited, handoffs[0].watched);

  const absl::Duration hold = absl::Milliseconds(50);
  absl::SleepFor(hold);  // a hold of a known least length, not a synchronisation
  ASSERT_TRUE(mine->Release().ok());
  const std::vector<Released> released = recorder_->Await<Released>(1);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].who.node, granted[0].who.node);
  EXPECT_GE(released[0].held, hold);
  EXPECT_GE(released[0].deleting, absl::ZeroDuration());
  EXPECT_LT(recorder_->IndexOfFirst<AcquisitionQueued>(), recorder_->IndexOfFirst<Handoff>());
  EXPECT_LT(recorder_->IndexOfFirst<Handoff>(), recorder_->IndexOfFirst<AcquisitionGranted>());
  EXPECT_LT(recorder_->IndexOfFirst<AcquisitionGranted>(), recorder_->IndexOfFirst<Released>());
  EXPECT_TRUE(recorder_->All<HoldLost>().empty());
  EXPECT_TRUE(recorder_->All<AcquisitionFailed>().empty());
  ExpectAllOnDispatcher(*observed);
  RemoveDirectory("lock");
}

TEST_F(MetricsObserverTest, AFreeLockIsGrantedAtTheHead) {
  auto observed = ObservedSession();
  auto lock = SharedLock::Create(*observed, Path("rw"));
  ASSERT_TRUE(lock.ok());
  {
    absl::StatusOr<LockGuard> read = (*lock)->AcquireRead(absl::Seconds(10));
    ASSERT_TRUE(read.ok()) << read.status();
  }
  const std::vector<AcquisitionGranted> granted = recorder_->Await<AcquisitionGranted>(1);
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].who.kind, AcquisitionKind::kRead);
  EXPECT_EQ(granted[0].position, 0);
  EXPECT_EQ(granted[0].handoffs, 0);
  EXPECT_EQ(recorder_->Await<Released>(1).size(), 1u);
  EXPECT_EQ(recorder_->Await<AcquisitionQueued>(1)[0].position, 0);
  EXPECT_TRUE(recorder_->All<Handoff>().empty());
  RemoveDirectory("rw");
}

TEST_F(MetricsObserverTest, FailedAttemptsSayWhy) {
  auto observed = ObservedSession();
  absl::StatusOr<LockGuard> held = HoldElsewhere("lock");
  ASSERT_TRUE(held.ok()) << held.status();
  auto lock = ExclusiveLock::Create(*observed, Path("lock"));
  ASSERT_TRUE(lock.ok());

  EXPECT_TRUE(absl::IsDeadlineExceeded((*lock)->TryAcquire().status()));
  const absl::Duration timeout = absl::Milliseconds(300);
  EXPECT_TRUE(absl::IsDeadlineExceeded((*lock)->Acquire(timeout).status()));
  const std::vector<AcquisitionFailed> failed = recorder_->Await<AcquisitionFailed>(2);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_TRUE(absl::IsDeadlineExceeded(failed[0].status)) << failed[0].status;
  EXPECT_TRUE(failed[0].who.node.empty()) << "a try-acquire of a held lock creates no node";
  EXPECT_TRUE(absl::IsDeadlineExceeded(failed[1].status)) << failed[1].status;
  EXPECT_FALSE(failed[1].who.node.empty()) << "the timed-out attempt had queued";
  EXPECT_GE(failed[1].waited, timeout);
  EXPECT_EQ(recorder_->Await<AcquisitionQueued>(1).size(), 1u) << "only the second queued";
  EXPECT_TRUE(recorder_->All<AcquisitionGranted>().empty());
  ASSERT_TRUE(held->Release().ok());
  RemoveDirectory("lock");
}

TEST_F(MetricsObserverTest, ADeletedNodeIsLostNotReleased) {
  auto observed = ObservedSession();
  LockOptions options;
  options.own_node_watch_delay = absl::ZeroDuration();
  auto lock = ExclusiveLock::Create(*observed, Path("lock"), options);
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE(admin().Delete(held->node_path()).ok());
  const std::vector<HoldLost> lost = recorder_->Await<HoldLost>(1);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_FALSE(lost[0].session_lost) << "the node was deleted; the session lives";
  EXPECT_EQ(lost[0].who.node, NameOf(held->node_path()));
  EXPECT_GT(lost[0].held, absl::ZeroDuration());
  EXPECT_TRUE(held->Release().ok());
  // A release after the loss reports nothing more: a grant ends once.
  ASSERT_TRUE(observed->Exists(root()).ok());  // a round trip, then the dispatcher's queue
  DispatcherThread(*observed);
  EXPECT_TRUE(recorder_->All<Released>().empty());
  RemoveDirectory("lock");
}

TEST_F(MetricsObserverTest, ElectionTermsBeginAndEndWithTheirReason) {
  auto observed = ObservedSession();
  auto other = NewSession();
  auto election = LeaderElection::Create(*observed, Path("election"));
  auto rival = LeaderElection::Create(*other, Path("election"));
  ASSERT_TRUE(election.ok() && rival.ok());
  ASSERT_TRUE((*election)->Join().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  const int64_t first_epoch = (*election)->epoch();
  ASSERT_TRUE((*rival)->Join().ok());
  // Join() returns before the rival's node is on the server: wait for it, so
  // that Yield() queues behind it.
  for (int i = 0; i < 2000; ++i) {
    auto children = admin().GetChildren(Path("election"));
    if (children.ok() && children->size() == 2) break;
    absl::SleepFor(absl::Milliseconds(5));  // polling the server, not deciding
  }
  ASSERT_TRUE((*election)->Yield().ok());
  ASSERT_TRUE((*rival)->AwaitLeadership(absl::Seconds(10)).ok());
  ASSERT_TRUE((*rival)->Leave().ok());
  ASSERT_TRUE((*election)->AwaitLeadership(absl::Seconds(10)).ok());
  const int64_t second_epoch = (*election)->epoch();
  ASSERT_TRUE((*election)->Leave().ok());

  const std::vector<TermBegan> began = recorder_->Await<TermBegan>(2);
  const std::vector<TermEnded> ended = recorder_->Await<TermEnded>(2);
  ASSERT_EQ(began.size(), 2u);
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(began[0].epoch, first_epoch);
  EXPECT_EQ(began[0].path, Path("election"));
  EXPECT_EQ(ended[0].epoch, first_epoch);
  EXPECT_EQ(ended[0].why, TermEnded::Why::kYielded);
  EXPECT_EQ(began[1].epoch, second_epoch);
  EXPECT_GT(began[1].waited, absl::ZeroDuration()) << "waited behind the rival";
  EXPECT_EQ(ended[1].why, TermEnded::Why::kLeft);
  EXPECT_GT(ended[1].lasted, absl::ZeroDuration());
  EXPECT_TRUE(recorder_->All<AcquisitionGranted>().empty())
      << "an election reports terms, not acquisitions";
  ExpectAllOnDispatcher(*observed);
  RemoveDirectory("election");
}

TEST_F(MetricsObserverTest, ASemaphoreLeaseIsReportedWithItsWeight) {
  auto observed = ObservedSession();
  auto pool = Semaphore::Create(*observed, Path("pool"), 3);
  ASSERT_TRUE(pool.ok()) << pool.status();
  {
    absl::StatusOr<LockGuard> lease = (*pool)->Acquire(2, absl::Seconds(10));
    ASSERT_TRUE(lease.ok()) << lease.status();
  }
  const std::vector<AcquisitionGranted> granted = recorder_->Await<AcquisitionGranted>(1);
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].who.kind, AcquisitionKind::kLease);
  EXPECT_EQ(granted[0].who.weight, 2);
  EXPECT_EQ(recorder_->Await<Released>(1).size(), 1u);
  RemoveDirectory("pool");
}

class MetricsObserverDisconnectTest : public ProxiedZkTest {};

TEST_F(MetricsObserverDisconnectTest, ADisconnectIsReportedAsStatesAndRetries) {
  auto recorder = std::make_shared<Recorder>();
  SessionOptions options = ProxiedOptions();
  options.observer = recorder;
  options.session_timeout = absl::Seconds(10);  // room to reconnect to the same session
  options.retry.max_attempts = 1000;  // the read outlasts the cut
  options.retry.max_backoff = absl::Milliseconds(100);
  auto observed = NewSession(options);

  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  proxy_->ResetConnections();  // the client sees its connection end at once
  ASSERT_EQ(recorder->Await<SessionStateChange>(1, [](const SessionStateChange& e) {
              return e.to == SessionState::kSuspended;
            }).size(), 1u);
  absl::StatusOr<std::optional<Stat>> read;
  std::thread reader([&] { read = observed->Exists(root()); });
  auto lock = ExclusiveLock::Create(*observed, Path("lock"));
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held;
  std::thread acquirer([&] { held = (*lock)->Acquire(absl::Seconds(30)); });
  const std::vector<Retry> retries =
      recorder->Await<Retry>(1, [](const Retry& e) { return e.operation == "exists"; });
  const std::vector<Retry> steps = recorder->Await<Retry>(
      1, [](const Retry& e) { return absl::StartsWith(e.operation, "lock step "); });
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  reader.join();
  acquirer.join();
  EXPECT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE(held->Release().ok());
  ASSERT_GE(steps.size(), 1u) << "the lock's create was lost with the connection";
  EXPECT_EQ(steps[0].path, Path("lock"));
  EXPECT_EQ(steps[0].attempt, 1);
  EXPECT_TRUE(absl::IsUnavailable(steps[0].reason)) << steps[0].reason;
  EXPECT_EQ(steps[0].backoff, absl::ZeroDuration()) << "the engine waits for the connection";
  EXPECT_EQ(recorder->Await<AcquisitionGranted>(1).size(), 1u);
  ASSERT_GE(retries.size(), 1u);
  EXPECT_EQ(retries[0].operation, "exists");
  EXPECT_EQ(retries[0].path, root());
  EXPECT_EQ(retries[0].attempt, 1);
  EXPECT_TRUE(absl::IsUnavailable(retries[0].reason)) << retries[0].reason;
  EXPECT_GT(retries[0].backoff, absl::ZeroDuration());

  const std::vector<SessionStateChange> back =
      recorder->Await<SessionStateChange>(1, [](const SessionStateChange& e) {
        return e.to == SessionState::kReconnected;
      });
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].from, SessionState::kSuspended);
  EXPECT_EQ(back[0].generation, 1u);
  EXPECT_GT(back[0].lasted, absl::ZeroDuration()) << "how long it was suspended";
  EXPECT_TRUE(admin().Delete(Path("lock")).ok()) << "something left under the lock";
}

// A session expired while its client is cut off (how sessions expire in
// practice): the hold is lost with its session. Expired while the client
// is still connected, the client could reconnect to the session before the
// server closes it and read its node gone first: that order is not the
// one tested here.
TEST_F(MetricsObserverDisconnectTest, ASessionLossIsReportedWithTheStates) {
  auto recorder = std::make_shared<Recorder>();
  SessionOptions options = ProxiedOptions();
  options.observer = recorder;
  auto observed = NewSession(options);
  auto lock = ExclusiveLock::Create(*observed, Path("lock"));
  ASSERT_TRUE(lock.ok());
  absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(10));
  ASSERT_TRUE(held.ok()) << held.status();
  proxy_->SetMode(testing::TcpProxy::Mode::kBlackhole);
  proxy_->ResetConnections();
  const internal::SessionCore::Handle handle = internal::CoreOf(*observed)->current();
  ASSERT_TRUE(testing::ExpireSession(connect_, handle.client->session_id(),
                                     handle.client->password())
                  .ok());
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);

  const std::vector<HoldLost> lost = recorder->Await<HoldLost>(1);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_TRUE(lost[0].session_lost);
  auto is = [](SessionState from, SessionState to, uint64_t generation) {
    return std::function<bool(const SessionStateChange&)>([=](const SessionStateChange& e) {
      return e.from == from && e.to == to && e.generation == generation;
    });
  };
  EXPECT_EQ(recorder->Await<SessionStateChange>(
                1, is(SessionState::kConnecting, SessionState::kConnected, 1)).size(), 1u);
  const std::vector<SessionStateChange> expired = recorder->Await<SessionStateChange>(
      1, [](const SessionStateChange& e) { return e.to == SessionState::kLost; });
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].generation, 1u);
  EXPECT_GT(expired[0].lasted, absl::ZeroDuration()) << "time spent in " << SessionStateName(expired[0].from);
  EXPECT_EQ(recorder->Await<SessionStateChange>(
                1, is(SessionState::kLost, SessionState::kConnected, 2)).size(), 1u)
      << "the next generation";
  EXPECT_TRUE(held->Release().ok());
  const std::thread::id dispatcher = DispatcherThread(*observed);
  for (std::thread::id id : recorder->threads()) EXPECT_EQ(id, dispatcher);
  EXPECT_TRUE(admin().Delete(Path("lock")).ok()) << "something left under the lock";
}

}  // namespace
}  // namespace zkr
