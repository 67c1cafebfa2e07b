#include "src/watch_registry.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"

namespace zkr {
namespace internal {

std::string WatchRegistry::Key(const Place& place) {
  return absl::StrCat(place.child ? "c:" : "d:", place.path);
}

uintptr_t WatchRegistry::Register(const std::string& path, bool child, ZkClient::WatchFn watch) {
  if (!watch) return 0;
  static std::atomic<uintptr_t> next_watch_id{1};  // unique in the process
  const uintptr_t id = next_watch_id.fetch_add(1, std::memory_order_relaxed);
  Place place{path, child};
  absl::MutexLock lock(&mu_);
  ++per_place_[Key(place)];
  watches_.emplace(id, Entry{std::move(watch), std::move(place)});
  return id;
}

std::optional<WatchRegistry::Place> WatchRegistry::Erase(
    absl::flat_hash_map<uintptr_t, Entry>::iterator it) {
  Place place = std::move(it->second.place);
  auto count = per_place_.find(Key(place));
  watches_.erase(it);
  if (count == per_place_.end() || --count->second > 0) return std::nullopt;
  per_place_.erase(count);
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
  std::optional<Place> remove = Erase(it);
  // Given up while the request was in flight: the server has it only if set.
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
  return Erase(it);
}

ZkClient::WatchFn WatchRegistry::Fire(uintptr_t id) {
  absl::MutexLock lock(&mu_);
  auto it = watches_.find(id);
  if (it == watches_.end()) return nullptr;
  ZkClient::WatchFn watch = std::move(it->second.fn);
  Erase(it);
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
      if (!watch.cancelled) paths.push_back(watch.place.path);
    }
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

void WatchRegistry::RemovalLost(const Place& place) {
  absl::MutexLock lock(&mu_);
  if (!closed_) removals_to_resend_.emplace(Key(place), place);
}

std::vector<WatchRegistry::Place> WatchRegistry::TakeRemovalsToResend() {
  std::vector<Place> places;
  absl::MutexLock lock(&mu_);
  for (auto& [key, place] : removals_to_resend_) {
    // A watch of ours is back on that place: the server's one is wanted.
    if (!per_place_.contains(key)) places.push_back(std::move(place));
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
}

}  // namespace internal
}  // namespace zkr
