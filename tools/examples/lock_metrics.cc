// Example: counting a lock's waits, holds and handoffs into your own metrics
// through the session observer (zkrecipes/observer.h).
//
// `Metrics` stands for whatever metrics library you use (Prometheus,
// StatsD, ...): counters and a latency histogram. `LockMetrics` is the whole
// adapter — an Observer that turns each event into a metric update. Four
// workers (each its own session, as separate processes would be) take turns
// on one lock; at the end the metrics are printed in Prometheus' text format
// and checked against what the workers did.
//
//   lock_metrics_example [ZK_CONNECT]    (default: starts an embedded server)
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "zkrecipes/zkrecipes.h"

#include "example_server.h"

// A stand-in for a metrics library: named counters and histograms (count,
// sum and buckets in milliseconds). Thread-safe.
class Metrics {
 public:
  void Add(const std::string& counter, double value = 1) {
    absl::MutexLock lock(&mu_);
    counters_[counter] += value;
  }
  void Observe(const std::string& histogram, absl::Duration value) {
    const double ms = absl::ToDoubleMilliseconds(value);
    absl::MutexLock lock(&mu_);
    Histogram& h = histograms_[histogram];
    ++h.count;
    h.sum_ms += ms;
    for (size_t i = 0; i < kBucketsMs.size(); ++i) {
      if (ms <= kBucketsMs[i]) ++h.buckets[i];
    }
  }
  double Counter(const std::string& name) {
    absl::MutexLock lock(&mu_);
    return counters_[name];
  }
  int Count(const std::string& histogram) {
    absl::MutexLock lock(&mu_);
    return histograms_[histogram].count;
  }
  void Print() {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, value] : counters_) std::printf("%s %g\n", name.c_str(), value);
    for (const auto& [name, h] : histograms_) {
      for (size_t i = 0; i < kBucketsMs.size(); ++i) {
        std::printf("%s_bucket{le=\"%g\"} %d\n", name.c_str(), kBucketsMs[i], h.buckets[i]);
      }
      std::printf("%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n", name.c_str(), h.count,
                  name.c_str(), h.sum_ms, name.c_str(), h.count);
    }
  }

 private:
  static constexpr std::array<double, 5> kBucketsMs = {1, 5, 25, 100, 500};
  struct Histogram {
    int count = 0;
    double sum_ms = 0;
    std::array<int, kBucketsMs.size()> buckets{};
  };
  absl::Mutex mu_;
  std::map<std::string, double> counters_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Histogram> histograms_ ABSL_GUARDED_BY(mu_);
};

// The adapter. It runs on each session's dispatcher thread: it only updates
// metrics, which is quick. One instance may serve several sessions.
class LockMetrics : public zkr::Observer {
 public:
  explicit LockMetrics(Metrics& metrics) : metrics_(metrics) {}
  void OnGranted(const zkr::AcquisitionGranted& e) override {
    metrics_.Add("zkr_lock_acquired_total");
    metrics_.Observe("zkr_lock_wait_ms", e.waited);
  }
  void OnAcquireFailed(const zkr::AcquisitionFailed&) override {
    metrics_.Add("zkr_lock_failed_total");
  }
  void OnHandoff(const zkr::Handoff& e) override {
    metrics_.Add(e.granted ? "zkr_lock_handoffs_total" : "zkr_lock_wakeups_without_grant_total");
  }
  void OnReleased(const zkr::Released& e) override {
    metrics_.Add("zkr_lock_released_total");
    metrics_.Observe("zkr_lock_hold_ms", e.held);
  }
  void OnLost(const zkr::HoldLost&) override { metrics_.Add("zkr_lock_lost_total"); }
  void OnSessionState(const zkr::SessionStateChange& e) override {
    if (e.to == zkr::SessionState::kSuspended) metrics_.Add("zkr_session_suspended_total");
    if (e.from == zkr::SessionState::kSuspended) {
      metrics_.Observe("zkr_session_suspended_ms", e.lasted);
    }
  }
  void OnRetry(const zkr::Retry&) override { metrics_.Add("zkr_retries_total"); }

 private:
  Metrics& metrics_;
};

int main(int argc, char** argv) {
  std::unique_ptr<zkr::testing::ZooKeeperServer> server;  // unless one is named
  absl::StatusOr<std::string> connected = ConnectOrStartServer(argc, argv, &server);
  if (!connected.ok()) return std::fprintf(stderr, "%s\n", connected.status().ToString().c_str()), 1;
  const std::string connect = *connected;
  Metrics metrics;
  auto observer = std::make_shared<LockMetrics>(metrics);
  constexpr int kWorkers = 4;
  constexpr int kRounds = 5;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      zkr::SessionOptions options;
      options.connect = connect;
      options.observer = observer;  // the only line the metrics need
      auto session = zkr::Session::Connect(options);
      if (!session.ok()) return metrics.Add("example_errors_total");
      auto lock = zkr::ExclusiveLock::Create(**session, "/examples/metrics-lock");
      for (int i = 0; lock.ok() && i < kRounds; ++i) {
        auto guard = (*lock)->Acquire(absl::Seconds(30));
        if (!guard.ok()) return metrics.Add("example_errors_total");
        absl::SleepFor(absl::Milliseconds(5));  // the work done under the lock
      }
      // Closing the session runs its observer's last events.
    });
  }
  for (auto& worker : workers) worker.join();
  metrics.Print();
  const int expected = kWorkers * kRounds;
  const bool consistent = metrics.Counter("zkr_lock_acquired_total") == expected &&
                          metrics.Counter("zkr_lock_released_total") == expected &&
                          metrics.Count("zkr_lock_wait_ms") == expected &&
                          metrics.Count("zkr_lock_hold_ms") == expected &&
                          metrics.Counter("example_errors_total") == 0;
  std::printf("%d acquisitions counted (expected %d): %s\n",
              static_cast<int>(metrics.Counter("zkr_lock_acquired_total")), expected,
              consistent ? "consistent" : "INCONSISTENT");
  return consistent ? 0 : 1;
}
