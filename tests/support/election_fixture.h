// The fixture of the election tests (election_test.cc,
// election_lifecycle_test.cc): candidates on their own sessions whose
// on_change reports go to a Ledger of leadership intervals (checked for
// overlap), waits on the queue and on the server's watch listing.
// Ledger::Record runs on each candidate's dispatcher thread.
#ifndef ZKRECIPES_TESTS_SUPPORT_ELECTION_FIXTURE_H_
#define ZKRECIPES_TESTS_SUPPORT_ELECTION_FIXTURE_H_

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/session.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace testing {

// path -> watching session ids ("0x..."), from the server's `wchp`.
inline WatchListing ParseWchp(const std::string& text) { return ParseWatchesByPath(text); }

inline std::string Hex(int64_t session_id) { return SessionIdHex(session_id); }

// Every leadership change every candidate reported through on_change, with
// the time it was reported (on the candidate's dispatcher thread).
class Ledger {
 public:
  struct Event {
    int who;
    Leadership leadership;
    int64_t epoch;  // election->epoch() when the callback ran (0 if no longer leading)
    absl::Time at;
  };
  struct Interval {
    int who;
    int64_t epoch;
    absl::Time start;
    absl::Time end;  // InfiniteFuture while still leading
    Leadership ended_by = Leadership::kLeader;  // the report that ended it
  };

  void Record(int who, Leadership leadership, int64_t epoch) {
    absl::MutexLock lock(&mu_);
    events_.push_back(Event{who, leadership, epoch, absl::Now()});
  }
  size_t size() {
    absl::MutexLock lock(&mu_);
    return events_.size();
  }
  std::vector<Event> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  // Waits (bounded) until `pred(events)` holds.
  bool WaitFor(const std::function<bool(const std::vector<Event>&)>& pred,
               absl::Duration timeout = absl::Seconds(30)) {
    absl::MutexLock lock(&mu_);
    auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pred(events_); };
    return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  }
  // Leadership intervals: from a kLeader report to that candidate's first
  // kSuspended/kNotLeader report after it.
  std::vector<Interval> Intervals() {
    std::vector<Interval> intervals;
    std::map<int, size_t> open;  // who -> index into intervals
    for (const Event& e : events()) {
      auto it = open.find(e.who);
      if (e.leadership == Leadership::kLeader) {
        if (it == open.end()) {
          open[e.who] = intervals.size();
          intervals.push_back(Interval{e.who, e.epoch, e.at, absl::InfiniteFuture()});
        }
      } else if (it != open.end()) {
        intervals[it->second].end = e.at;
        intervals[it->second].ended_by = e.leadership;
        open.erase(it);
      }
    }
    std::sort(intervals.begin(), intervals.end(),
              [](const Interval& a, const Interval& b) { return a.start < b.start; });
    return intervals;
  }

 private:
  absl::Mutex mu_;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
};

// How late one candidate may be told it lost leadership, relative to the
// next being told it won, and still count as one leadership at a time.
//
// The server orders the two: the old leader's connection is closed (forced
// expiry) or its own node is deleted (Leave, operator) before the next
// candidate can see that node gone. But both notices then travel through
// threads of this one process (C client I/O and completion threads, each
// session's dispatcher), and on a loaded 2-core host we measured the old
// leader's SUSPENDED notice arriving up to ~5 ms after the new leader's
// LEADER notice, in about 1 run in 40, with the old leader's own session
// event (completion thread) also up to ~1 ms late. That is notice latency,
// not a second leader: epochs (fencing tokens) are what make it harmless.
// A real double leadership lasts until the old session's loss is noticed
// (its lease: seconds), and the rounds test separately requires that each
// deposed leader was told SUSPENDED before NOT_LEADER.
constexpr absl::Duration kNoticeSlack = absl::Milliseconds(50);

// Each leadership interval ends before the next one starts (up to
// kNoticeSlack); returns how many overlapped at all, and logs them.
inline int ExpectNoOverlap(const std::vector<Ledger::Interval>& intervals) {
  int overlaps = 0;
  for (size_t i = 1; i < intervals.size(); ++i) {
    const Ledger::Interval& before = intervals[i - 1];
    const Ledger::Interval& after = intervals[i];
    if (before.end <= after.start) continue;
    ++overlaps;
    const std::string what = absl::StrCat(
        "candidate ", before.who, " (epoch ", before.epoch, ") was told ",
        LeadershipName(before.ended_by), " ", absl::FormatDuration(before.end - after.start),
        " after candidate ", after.who, " (epoch ", after.epoch, ") was told LEADER");
    EXPECT_LE(before.end - after.start, kNoticeSlack) << what;
    std::printf("notice latency: %s\n", what.c_str());
  }
  return overlaps;
}

// Makes `session` talk to the server so that its client learns of a forced
// expiry. Fire-and-forget: the reply does not matter, and a synchronous call
// here can hang for good (seen once in ~30 expiries: Session::Exists issued
// on the expiring generation's handle never completed after that handle was
// closed and the next generation connected; the completion was lost below
// Session, apparently in the C client's close of an expired handle).
inline void HearOfExpiry(Session& session, const std::string& path) {
  session.ExistsAsync(path, [](absl::StatusOr<std::optional<Stat>>) {});
}

// One candidate: its own session and election; on_change goes to a ledger.
struct Candidate {
  int index = 0;
  std::string id;
  absl::Mutex mu;
  LeaderElection* live ABSL_GUARDED_BY(mu) = nullptr;  // null once being destroyed
  std::unique_ptr<Session> session;
  std::unique_ptr<LeaderElection> election;

  ~Candidate() {
    {
      absl::MutexLock lock(&mu);
      live = nullptr;
    }
    election.reset();
    session.reset();
  }
  // Leaves, then reads on its own session: ZooKeeper answers a session's
  // requests in order, so once this returns the node is gone on the server.
  absl::Status LeaveAndSync() {
    absl::Status status = election->Leave();
    (void)session->Exists(election->path());
    return status;
  }
};

class ElectionTest : public ZkTest {
 protected:
  std::unique_ptr<Candidate> NewCandidate(const std::string& path, int index, Ledger* ledger,
                                          ElectionOptions options = {}) {
    auto candidate = std::make_unique<Candidate>();
    candidate->index = index;
    candidate->id = absl::StrCat("candidate-", index);
    candidate->session = NewSession();
    if (candidate->session == nullptr) return nullptr;
    Candidate* raw = candidate.get();
    options.id = candidate->id;
    options.on_change = [raw, ledger, index](Leadership leadership) {
      int64_t epoch = 0;
      {
        absl::MutexLock lock(&raw->mu);
        if (raw->live != nullptr) epoch = raw->live->epoch();
      }
      if (ledger != nullptr) ledger->Record(index, leadership, epoch);
    };
    auto election = LeaderElection::Create(*candidate->session, path, std::move(options));
    EXPECT_TRUE(election.ok()) << election.status();
    if (!election.ok()) return nullptr;
    candidate->election = std::move(*election);
    absl::MutexLock lock(&raw->mu);
    raw->live = candidate->election.get();
    return candidate;
  }

  // Joins `path` with `n` candidates, one after the other (each node is on
  // the server before the next joins, so queue order = index order).
  std::vector<std::unique_ptr<Candidate>> JoinInOrder(const std::string& path, int n,
                                                      Ledger* ledger) {
    std::vector<std::unique_ptr<Candidate>> candidates;
    for (int i = 0; i < n; ++i) {
      candidates.push_back(NewCandidate(path, i, ledger));
      if (candidates.back() == nullptr) return {};
      EXPECT_TRUE(candidates.back()->election->Join().ok());
      if (!WaitForQueueSize(path, i + 1)) {
        ADD_FAILURE() << "candidate " << i << " never appeared in the queue";
        return {};
      }
    }
    return candidates;
  }

  // Polls the queue (bounded; no watches) until `pred` holds; returns it.
  std::vector<QueueEntryInfo> WaitForQueue(
      const std::string& path, const std::function<bool(const std::vector<QueueEntryInfo>&)>& pred,
      absl::Duration timeout = absl::Seconds(30)) {
    const absl::Time deadline = absl::Now() + timeout;
    std::vector<QueueEntryInfo> queue;
    while (absl::Now() < deadline) {
      auto read = InspectQueue(admin(), path);
      if (read.ok()) {
        queue = std::move(*read);
        if (pred(queue)) return queue;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    return queue;
  }
  bool WaitForQueueSize(const std::string& path, size_t n) {
    return WaitForQueue(path, [n](const std::vector<QueueEntryInfo>& q) {
             return q.size() == n;
           }).size() == n;
  }
  static std::vector<std::string> Ids(const std::vector<QueueEntryInfo>& queue) {
    std::vector<std::string> ids;
    for (const QueueEntryInfo& e : queue) ids.push_back(e.data);
    return ids;
  }

  // Waits (bounded) until the server's watches on the children of `path`
  // are exactly `expected`; returns what it saw last.
  WatchListing WaitForWatches(const std::string& path, const WatchListing& expected) {
    ZooKeeperServer* server = SharedServer();
    WatchListing listing;
    if (server == nullptr) {
      ADD_FAILURE() << "needs the embedded server's four-letter words";
      return listing;
    }
    for (int i = 0; i < 1000; ++i) {
      auto text = server->FourLetterWord("wchp");
      listing.clear();
      if (text.ok()) {
        for (auto& [watched, sessions] : ParseWchp(*text)) {
          if (absl::StartsWith(watched, path + "/")) listing[watched] = sessions;
        }
      }
      if (listing == expected) break;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return listing;
  }

  static int LeaderCount(const std::vector<std::unique_ptr<Candidate>>& candidates) {
    int leaders = 0;
    for (const auto& c : candidates) leaders += c->election->IsLeader() ? 1 : 0;
    return leaders;
  }

  // The election directory is a container; the server reaps it only every
  // minute or so, so remove it here (it must be empty).
  void RemoveDirectory(const std::string& path) {
    absl::Status status = admin().Delete(path);
    EXPECT_TRUE(status.ok() || absl::IsNotFound(status)) << status;
  }
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_ELECTION_FIXTURE_H_
