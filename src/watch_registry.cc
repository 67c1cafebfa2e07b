#include "src/watch_registry.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace zkr {
namespace internal {

void WatchRegistry::Limit(size_t max_bytes, size_t path_overhead) {
  absl::MutexLock lock(&mu_);
  max_bytes_ = max_bytes;
  path_overhead_ = path_overhead;
}

size_t WatchRegistry::watched_bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

size_t WatchRegistry::watched_places() const {
  absl::MutexLock lock(&mu_);
  return PlacesHeld();
}

size_t WatchRegistry::PlacesHeld() const {
  size_t places = per_place_.size();
  for (const Place& place : removing_) places += per_place_.contains(place) ? 0 : 1;
  return places;
}

absl::StatusOr<uintptr_t> WatchRegistry::Register(const std::string& path, bool child,
                                                  ZkClient::WatchFn watch) {
  if (!watch) return 0;
  static std::atomic<uintptr_t> next_watch_id{1};  // unique in the process
  Place place{path, child};
  absl::MutexLock lock(&mu_);
  if (!Held(place)) {
    const size_t cost = Cost(place);
    if (bytes_ + cost > max_bytes_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "watch on ", path, ": this session's watches would take ", bytes_ + cost,
          " bytes of the packet that sets them again after a reconnect, past its limit of ",
          max_bytes_, " (SessionOptions::max_request_bytes, the server's jute.maxbuffer; ",
          PlacesHeld(), " places are watched): wait on fewer places per session"));
    }
    bytes_ += cost;
  }
  const uintptr_t id = next_watch_id.fetch_add(1, std::memory_order_relaxed);
  auto count = per_place_.try_emplace(std::move(place), 0).first;
  ++count->second;
  watches_.emplace(id, Entry{std::move(watch), &count->first});
  return id;
}

void WatchRegistry::Uncount(const Place& place) {
  if (!Held(place)) bytes_ -= Cost(place);
}

std::optional<WatchRegistry::Place> WatchRegistry::Erase(
    absl::flat_hash_map<uintptr_t, Entry>::iterator it, bool removal_sent) {
  auto count = per_place_.find(*it->second.place);
  watches_.erase(it);
  if (count == per_place_.end() || --count->second > 0) return std::nullopt;
  Place place = count->first;
  per_place_.erase(count);
  if (removal_sent) {
    removing_.insert(place);
  } else {
    Uncount(place);
  }
  return place;
}

std::optional<WatchRegistry::Place> WatchRegistry::Replied(uintptr_t id, bool set) {
  if (id == 0) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto it = watches_.find(id);
  if (it == watches_.end()) return std::nullopt;
  if (set && !it->second.cancelled) {
    it->second.armed = true;
    return std::nullopt;
  }
  // Given up while the request was in flight: the server has it only if set.
  std::optional<Place> remove = Erase(it, /*removal_sent=*/set);
  if (!set) return std::nullopt;
  return remove;
}

std::optional<WatchRegistry::Place> WatchRegistry::Cancel(uintptr_t id) {
  if (id == 0) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto it = watches_.find(id);
  if (it == watches_.end()) return std::nullopt;  // fired, or never set
  if (!it->second.armed) {                        // the reply decides (Replied)
    it->second.cancelled = true;
    it->second.fn = nullptr;
    return std::nullopt;
  }
  return Erase(it, /*removal_sent=*/true);
}

ZkClient::WatchFn WatchRegistry::Fire(uintptr_t id) {
  absl::MutexLock lock(&mu_);
  auto it = watches_.find(id);
  if (it == watches_.end()) return nullptr;
  ZkClient::WatchFn watch = std::move(it->second.fn);
  Erase(it, /*removal_sent=*/false);  // the C client forgets a watch that fired
  return watch;
}

bool WatchRegistry::Armed(uintptr_t id) const {
  absl::MutexLock lock(&mu_);
  auto it = watches_.find(id);
  return it != watches_.end() && it->second.armed;
}

std::vector<std::string> WatchRegistry::WaitedPaths() const {
  std::vector<std::string> paths;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, watch] : watches_) {
      if (!watch.cancelled) paths.push_back(watch.place->path);
    }
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

void WatchRegistry::RemovalLost(const Place& place) {
  absl::MutexLock lock(&mu_);
  if (!closed_) removals_to_resend_.insert(place);
}

void WatchRegistry::RemovalDone(const Place& place) {
  absl::MutexLock lock(&mu_);
  if (removing_.erase(place) > 0) Uncount(place);
}

std::vector<WatchRegistry::Place> WatchRegistry::TakeRemovalsToResend() {
  std::vector<Place> places;
  absl::MutexLock lock(&mu_);
  for (const Place& place : removals_to_resend_) {
    // A watch of ours is back on that place: the server's one is wanted.
    if (!per_place_.contains(place)) {
      places.push_back(place);
    } else {
      removing_.erase(place);  // still counted: it is ours again
    }
  }
  removals_to_resend_.clear();
  return places;
}

void WatchRegistry::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  watches_.clear();
  per_place_.clear();
  removals_to_resend_.clear();
  removing_.clear();
  bytes_ = 0;
}

}  // namespace internal
}  // namespace zkr
