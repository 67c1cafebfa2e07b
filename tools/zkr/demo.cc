// `zkr demo`: a guided tour of the recipes on a real ZooKeeper server — the
// herd-free read/write queue (who waits on whom, one watch per handoff), a
// short contention run checked by a ledger, a semaphore shared by workers,
// and a leader election whose leader is killed and replaced.
#include "tools/zkr/demo.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "src/macros.h"
#include "tools/zkr/common.h"
#include "tools/zkr/ledger.h"
#include "zkrecipes/inspect.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace cli {
namespace {

// Thread-safe timeline printer: "   +12.3ms  who        what".
class Timeline {
 public:
  void Say(absl::string_view who, absl::string_view what) {
    absl::MutexLock lock(&mu_);
    absl::PrintF("%+9.1fms  %-10s %s\n", absl::ToDoubleMilliseconds(absl::Now() - start_), who,
                 what);
    std::fflush(stdout);
  }
  void Section(absl::string_view title) {
    absl::MutexLock lock(&mu_);
    absl::PrintF("\n== %s\n", title);
    std::fflush(stdout);
  }

 private:
  absl::Mutex mu_;
  absl::Time start_ = absl::Now();
};

// Data watches fired, counted by the embedded server (mntr), or -1 without
// one: by deletes, and by the data change of a writer's marked release
// (its waiter sees that instead of the delete).
int64_t DataWatchTriggers(testing::ZooKeeperServer* server) {
  if (server == nullptr) return -1;
  auto text = server->FourLetterWord("mntr");
  if (!text.ok()) return -1;
  const int64_t deleted = testing::MntrValue(*text, "zk_sum_node_deleted_watch_count");
  const int64_t changed = testing::MntrValue(*text, "zk_sum_node_changed_watch_count");
  return deleted < 0 || changed < 0 ? -1 : deleted + changed;
}

// Destroyed bottom-up: the lock (cancels a pending attempt), the session
// (draining its callbacks), then what the callbacks touch.
struct Participant {
  std::string name;  // "W1", "R2", ...
  bool write;
  absl::Notification acquired;
  std::optional<LockGuard> guard;
  std::unique_ptr<Session> session;
  std::unique_ptr<SharedLock> lock;
};


class Demo {
 public:
  Demo(Timeline& timeline, std::string connect, testing::ZooKeeperServer* server)
      : timeline_(timeline), connect_(std::move(connect)), server_(server) {}

  absl::StatusOr<std::unique_ptr<Session>> Connect() {
    SessionOptions options;
    options.connect = connect_;
    options.session_timeout = absl::Seconds(6);
    options.log_level = ClientLogLevel::kError;
    return Session::Connect(options);
  }

  absl::Status SessionBasics() {
    timeline_.Section("1. A session: one per process, shared by every recipe");
    auto session = Connect();
    if (!session.ok()) return session.status();
    timeline_.Say("session",
                  absl::StrFormat("connected: id 0x%x, timeout %s, lease valid for %s",
                                  (*session)->session_id(),
                                  absl::FormatDuration((*session)->negotiated_timeout()),
                                  absl::FormatDuration((*session)->valid_until() - absl::Now())));
    absl::Status bad = (*session)->Create("no-leading-slash", "", CreateMode::kPersistent).status();
    timeline_.Say("session", absl::StrCat("bad input gets a clear error: ", bad.ToString()));
    return absl::OkStatus();
  }

  absl::Status HerdFreeQueue(const std::string& path) {
    timeline_.Section("2. The read/write queue: who waits on whom (herd-free)");
    timeline_.Say("demo", "six participants, each with its own session, arrive in this order:");
    timeline_.Say("demo", "W1 R2 R3 W4 R5 R6  (W = writer, R = reader)");
    std::vector<std::unique_ptr<Participant>> queue;
    for (const char* name : {"W1", "R2", "R3", "W4", "R5", "R6"}) {
      auto p = std::make_unique<Participant>();
      p->name = name;
      p->write = name[0] == 'W';
      auto session = Connect();
      if (!session.ok()) return session.status();
      p->session = std::move(*session);
      LockOptions options;
      options.purpose = absl::StrCat("demo participant ", name);
      options.watch_own_node = false;  // show only the queue's own watches
      auto lock = SharedLock::Create(*p->session, path, options);
      if (!lock.ok()) return lock.status();
      p->lock = std::move(*lock);
      Participant* raw = p.get();
      auto done = [this, raw](absl::StatusOr<LockGuard> guard) {
        if (!guard.ok()) {
          timeline_.Say(raw->name, absl::StrCat("failed: ", guard.status().ToString()));
          return;
        }
        raw->guard.emplace(std::move(*guard));
        timeline_.Say(raw->name, absl::StrCat("ACQUIRED ", raw->write ? "write" : "read",
                                              " lock (fencing token ",
                                              raw->guard->fencing_token(), ")"));
        raw->acquired.Notify();
      };
      if (p->write) {
        p->lock->AcquireWriteAsync(done);
      } else {
        p->lock->AcquireReadAsync(done);
      }
      // Arrive one after the other so the order is the one shown.
      for (int i = 0; i < 500; ++i) {
        auto entries = InspectQueue(*p->session, path);
        if (entries.ok() && entries->size() == queue.size() + 1) break;
        absl::SleepFor(absl::Milliseconds(2));
      }
      queue.push_back(std::move(p));
    }
    absl::SleepFor(absl::Milliseconds(100));  // let the waiters set their watches
    if (!queue.front()->acquired.WaitForNotificationWithTimeout(absl::Seconds(20))) {
      return absl::DeadlineExceededError("W1 never acquired");
    }
    ZKR_RETURN_IF_ERROR(ShowQueue(path, queue));

    // Release in queue order; each release lets in exactly those who can go
    // now, and the server counts the watch notifications it sent.
    const std::vector<std::vector<int>> lets_in = {{1, 2}, {}, {3}, {4, 5}, {}, {}};
    for (size_t i = 0; i < queue.size(); ++i) {
      Participant& p = *queue[i];
      const int64_t before = DataWatchTriggers(server_);
      timeline_.Say(p.name, "releases");
      ZKR_RETURN_IF_ERROR(p.guard->Release());
      for (int next : lets_in[i]) {
        if (!queue[next]->acquired.WaitForNotificationWithTimeout(absl::Seconds(20))) {
          return absl::DeadlineExceededError(absl::StrCat(queue[next]->name, " never acquired"));
        }
      }
      const int64_t after = DataWatchTriggers(server_);
      if (before >= 0) {
        ++releases_;
        watch_events_ += after - before;
        timeline_.Say("server", absl::StrCat("watch notifications sent for ", p.name,
                                             "'s release: ", after - before));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ShowQueue(const std::string& path,
                         const std::vector<std::unique_ptr<Participant>>& queue) {
    auto entries = InspectQueue(*queue.front()->session, path);
    if (!entries.ok()) return entries.status();
    for (size_t i = 0; i < entries->size() && i < queue.size(); ++i) {
      const QueueEntryInfo& e = (*entries)[i];
      std::string watched = e.watches;
      for (size_t j = 0; j < entries->size(); ++j) {
        if ((*entries)[j].name == e.watches) watched = queue[j]->name;
      }
      timeline_.Say(queue[i]->name,
                    e.holds ? absl::StrCat("holds        (node ", ShortNodeName(e.name), ")")
                            : absl::StrCat("waits on ", watched, "  (node ", ShortNodeName(e.name),
                                           ", one watch on ", ShortNodeName(e.watches), ")"));
    }
    timeline_.Say("demo",
                  "readers watch the last writer before them, writers their predecessor;");
    timeline_.Say("demo", "nobody watches the whole directory, so a release wakes only those who can go.");
    return absl::OkStatus();
  }

  absl::Status Contention(const std::string& path) {
    timeline_.Section("3. Contention: 8 sessions x 25 acquisitions, checked by a ledger");
    constexpr int kWorkers = 8, kRounds = 25;
    Ledger ledger;
    std::vector<std::thread> threads;
    std::atomic<int> errors{0};
    std::vector<std::unique_ptr<Session>> sessions;
    for (int i = 0; i < kWorkers; ++i) {
      auto session = Connect();
      if (!session.ok()) return session.status();
      sessions.push_back(std::move(*session));
    }
    absl::Time start = absl::Now();
    for (int i = 0; i < kWorkers; ++i) {
      threads.emplace_back([&, i] {
        auto lock = SharedLock::Create(*sessions[i], path);
        if (!lock.ok()) return (void)++errors;
        for (int round = 0; round < kRounds; ++round) {
          const bool write = (round + i) % 4 == 0;
          auto guard = write ? (*lock)->AcquireWrite(absl::Seconds(30))
                             : (*lock)->AcquireRead(absl::Seconds(30));
          if (!guard.ok()) {
            ++errors;
            continue;
          }
          ledger.Enter(write);
          absl::SleepFor(absl::Microseconds(200));  // the critical section's work
          ledger.Leave(write);
          if (!guard->Release().ok()) ++errors;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    Ledger::Summary s = ledger.summary();
    timeline_.Say("ledger", absl::StrFormat(
                                "%d acquisitions (%d write, %d read) in %s; max concurrent readers %d; "
                                "writer exclusivity violations %d; errors %d",
                                s.entries, s.writes, s.entries - s.writes,
                                absl::FormatDuration(absl::Trunc(absl::Now() - start,
                                                                 absl::Milliseconds(1))),
                                s.max_readers, s.violations, errors.load()));
    summary_ = s;
    if (s.violations != 0 || errors != 0) return absl::InternalError("the ledger saw a violation");
    return absl::OkStatus();
  }

  absl::Status SharedPool(const std::string& path) {
    timeline_.Section("4. A semaphore: 6 workers share 2 connections (zkr::Semaphore)");
    constexpr int kWorkers = 6, kRounds = 5, kLeases = 2;
    std::vector<std::unique_ptr<Session>> sessions;
    for (int i = 0; i < kWorkers; ++i) {
      auto session = Connect();
      if (!session.ok()) return session.status();
      sessions.push_back(std::move(*session));
    }
    std::atomic<int> in_use{0}, most{0}, over{0}, errors{0};
    std::atomic<bool> shown{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < kWorkers; ++i) {
      threads.emplace_back([&, i] {
        auto pool = Semaphore::Create(*sessions[i], path, kLeases);
        if (!pool.ok()) return (void)++errors;
        for (int round = 0; round < kRounds; ++round) {
          auto lease = (*pool)->Acquire(1, absl::Seconds(30));
          if (!lease.ok()) {
            ++errors;
            continue;
          }
          const int now = in_use.fetch_add(1) + 1;
          if (now > kLeases) ++over;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          // Once, with the pool full and workers queued: who waits on whom.
          if (now == kLeases && !shown.exchange(true)) ShowPool(*sessions[i], path);
          absl::SleepFor(absl::Milliseconds(5));  // the connection's work
          in_use.fetch_sub(1);
          if (!lease->Release().ok()) ++errors;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    timeline_.Say("ledger", absl::StrFormat("%d leases taken; at most %d in use at once (of %d); "
                                            "over the limit %d times; errors %d",
                                            kWorkers * kRounds, most.load(), kLeases,
                                            over.load(), errors.load()));
    if (over != 0 || errors != 0) return absl::InternalError("the semaphore's ledger saw a violation");
    return absl::OkStatus();
  }

  void ShowPool(Session& session, const std::string& path) {
    auto queue = InspectQueue(session, path);
    if (!queue.ok()) return;
    for (const QueueEntryInfo& e : *queue) {
      std::string waits = "holds a lease";
      if (!e.holds && e.watching.size() > 1) {
        waits = absl::StrCat("first waiter: watches all ", e.watching.size(),
                             " before it (any release lets it in)");
      } else if (!e.holds && !e.watching.empty()) {
        waits = absl::StrCat("waits on ", ShortNodeName(e.watching.back()), " only");
      }
      timeline_.Say("inspect", absl::StrCat(ShortNodeName(e.name), ": ", waits));
    }
  }

  absl::Status Election(const std::string& path) {
    timeline_.Section("5. Leader election: the leader's session dies, the next one takes over");
    // Members in this order so the election goes first, then the session
    // (draining its callbacks), and only then what the callbacks touch.
    struct Candidate {
      std::string id;
      absl::Notification led;  // its on_change reported kLeader
      std::unique_ptr<Session> session;
      std::unique_ptr<LeaderElection> election;
    };
    std::vector<std::unique_ptr<Candidate>> candidates;
    for (const char* id : {"replica-a", "replica-b", "replica-c"}) {
      auto c = std::make_unique<Candidate>();
      c->id = id;
      auto session = Connect();
      if (!session.ok()) return session.status();
      c->session = std::move(*session);
      ElectionOptions options;
      options.id = id;
      options.rejoin_after_loss = false;
      Candidate* raw = c.get();
      options.on_change = [this, raw](Leadership l) {
        timeline_.Say(raw->id, absl::StrCat("is now ", LeadershipName(l),
                                            l == Leadership::kLeader
                                                ? absl::StrCat(" (epoch ", raw->election->epoch(), ")")
                                                : ""));
        if (l == Leadership::kLeader && !raw->led.HasBeenNotified()) raw->led.Notify();
      };
      auto election = LeaderElection::Create(*c->session, path, options);
      if (!election.ok()) return election.status();
      c->election = std::move(*election);
      ZKR_RETURN_IF_ERROR(c->election->Join());
      // Queue one after the other so the order is the one shown.
      for (int i = 0; i < 500; ++i) {
        auto queued = c->election->Participants();
        if (queued.ok() && queued->size() == candidates.size() + 1) break;
        absl::SleepFor(absl::Milliseconds(2));
      }
      candidates.push_back(std::move(c));
    }
    if (!candidates[0]->led.WaitForNotificationWithTimeout(absl::Seconds(10))) {
      return absl::DeadlineExceededError("no leader elected");
    }
    auto participants = candidates[1]->election->Participants();
    if (participants.ok()) {
      timeline_.Say("observer", absl::StrCat("queue: ", absl::StrJoin(*participants, " <- ")));
    }
    for (int round = 0; round < 2; ++round) {
      Candidate& leader = *candidates[round];
      timeline_.Say("demo", absl::StrCat("closing ", leader.id,
                                         "'s session (as when its process dies)"));
      absl::Time killed = absl::Now();
      leader.session->Close();  // the server deletes its node at once
      Candidate& next = *candidates[round + 1];
      if (!next.led.WaitForNotificationWithTimeout(absl::Seconds(20))) {
        return absl::DeadlineExceededError(absl::StrCat(next.id, " never took over"));
      }
      timeline_.Say("demo", absl::StrCat("failover (close -> new leader's callback) took ",
                                         absl::FormatDuration(absl::Trunc(
                                             absl::Now() - killed, absl::Microseconds(100)))));
    }
    (void)candidates[2]->election->Leave();
    return absl::OkStatus();
  }

  void PrintSummary() {
    timeline_.Section("Summary");
    timeline_.Say("summary", absl::StrFormat(
                                 "%d acquisitions, max concurrent readers %d, writer exclusivity %s",
                                 summary_.entries, summary_.max_readers,
                                 summary_.violations == 0 ? "held" : "VIOLATED"));
    if (releases_ > 0) {
      timeline_.Say("summary", absl::StrFormat("watch notifications per release: %.2f "
                                               "(%d releases woke %d waiters; only those who could go)",
                                               double(watch_events_) / releases_, releases_,
                                               watch_events_));
    }
  }

 private:
  Timeline& timeline_;
  const std::string connect_;
  testing::ZooKeeperServer* const server_;
  Ledger::Summary summary_;
  int releases_ = 0;
  int watch_events_ = 0;
};

}  // namespace

int RunDemo(const std::string& connect_flag) {
  Timeline timeline;
  std::unique_ptr<testing::ZooKeeperServer> server;
  std::string connect = connect_flag;
  if (connect.empty()) {
    timeline.Say("demo", "starting an embedded ZooKeeper server (Debian's package) ...");
    auto started = testing::ZooKeeperServer::Start();
    if (!started.ok()) {
      timeline.Say("demo", absl::StrCat("FAILED: ", started.status().ToString()));
      return 1;
    }
    server = std::move(*started);
    connect = server->connect_string();
    timeline.Say("server", absl::StrCat("serving on ", connect));
  }
  const std::string root = absl::StrCat("/zkr-demo-", getpid());
  Demo demo(timeline, connect, server.get());
  absl::Status status = demo.SessionBasics();
  if (status.ok()) status = demo.HerdFreeQueue(root + "/locks/orders");
  if (status.ok()) status = demo.Contention(root + "/locks/stress");
  if (status.ok()) status = demo.SharedPool(root + "/pools/db");
  if (status.ok()) status = demo.Election(root + "/election");
  if (status.ok()) demo.PrintSummary();
  if (!status.ok()) timeline.Say("demo", absl::StrCat("FAILED: ", status.ToString()));
  if (server != nullptr) {
    server.reset();
    timeline.Say("server", "stopped; its directory removed");
  }
  return status.ok() ? 0 : 1;
}

}  // namespace cli
}  // namespace zkr
