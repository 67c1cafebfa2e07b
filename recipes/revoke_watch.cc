#include "recipes/revoke_watch.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/zk_status.h"

namespace zkr {
namespace internal {

constexpr absl::string_view kRevokeSuffix = ".revoke";
constexpr absl::string_view kTimeoutKey = "session_timeout_ms=";

std::string RevokeRequestPath(absl::string_view node_path) {
  return absl::StrCat(node_path, kRevokeSuffix);
}

bool IsRevokeRequest(absl::string_view child, std::string* node) {
  if (child.size() <= kRevokeSuffix.size() || !absl::EndsWith(child, kRevokeSuffix)) return false;
  if (node != nullptr) *node = std::string(child.substr(0, child.size() - kRevokeSuffix.size()));
  return true;
}

constexpr absl::string_view kGraceKey = "revoke_grace_ms=";

std::string RevokeRequestData(absl::string_view reason, absl::Duration grace) {
  if (grace == absl::InfiniteDuration()) return std::string(reason);
  // A grace already past forces at once, as 0 does: the holder is told 0.
  grace = std::max(grace, absl::ZeroDuration());
  return absl::StrCat(kGraceKey, absl::ToInt64Milliseconds(grace), "\n", reason);
}

std::pair<std::string, absl::Duration> ParseRevokeRequestData(absl::string_view data) {
  // Only the first line: the reason is free text.
  const size_t end = data.find('\n');
  absl::string_view first = data.substr(0, end);
  int64_t ms;
  if (end == absl::string_view::npos || !absl::ConsumePrefix(&first, kGraceKey) ||
      !absl::SimpleAtoi(first, &ms) || ms < 0) {
    return {std::string(data), absl::InfiniteDuration()};
  }
  return {std::string(data.substr(end + 1)), absl::Milliseconds(ms)};
}

std::string PublishSessionTimeout(absl::Duration timeout) {
  return absl::StrCat(kTimeoutKey, absl::ToInt64Milliseconds(timeout), "\n");
}

std::optional<absl::Duration> PublishedSessionTimeout(absl::string_view data) {
  std::optional<absl::Duration> published;
  // The last such line: the library appends it after the caller's text.
  for (absl::string_view line : absl::StrSplit(data, '\n')) {
    int64_t ms;
    if (absl::ConsumePrefix(&line, kTimeoutKey) && absl::SimpleAtoi(line, &ms) && ms > 0) {
      published = absl::Milliseconds(ms);
    }
  }
  return published;
}

std::shared_ptr<RevokeWatch> RevokeWatch::Start(std::shared_ptr<SessionCore> core,
                                                uint64_t generation, std::string node_path,
                                                absl::Duration basis, OnRequest on_request,
                                                OnForced on_forced) {
  auto watch = std::make_shared<RevokeWatch>(std::move(core), generation,
                                             RevokeRequestPath(node_path), basis,
                                             std::move(on_request), std::move(on_forced));
  watch->StartCovered();  // in its holder's reservation (QueueEntry)
  return watch;
}

bool RevokeWatch::MayHold(absl::Duration now, absl::Duration lease) const {
  absl::MutexLock lock(&state_mu_);
  return !forced_ && (sure_ || now < basis_ + lease);
}

void RevokeWatch::Refresh() {
  std::shared_ptr<ZkClient> client = Client(generation_);
  if (client == nullptr) return;  // the session moved on: the hold is lost
  {
    absl::MutexLock lock(&state_mu_);
    if (forced_) return;
  }
  std::weak_ptr<RevokeWatch> weak = std::static_pointer_cast<RevokeWatch>(shared_from_this());
  const absl::Duration sent = core().clock().Monotonic();
  KeepWatch(generation_, client->Exists(
                        path(),
                        [weak, sent](const WatchEvent& event) {
                          if (auto self = weak.lock()) self->OnEvent(event, sent);
                        },
                        [weak, sent](absl::StatusOr<Stat> stat) {
                          if (auto self = weak.lock()) self->OnArmed(stat, sent);
                        }));
}

void RevokeWatch::OnArmed(const absl::StatusOr<Stat>& stat, absl::Duration sent) {
  if (stopped()) return;
  if (stat.ok() && stat->version > 0) return Forced();  // marked before we looked
  if (stat.ok() || absl::IsNotFound(stat.status())) {
    bool tell;
    {
      absl::MutexLock lock(&state_mu_);
      sure_ = true;  // set: a mark from now on is heard before any later answer
      basis_ = std::max(basis_, sent);
      // Once per request (a re-arming after a reconnect sees it again).
      tell = stat.ok() && on_request_ && stat->czxid != told_czxid_;
      if (tell) told_czxid_ = stat->czxid;
    }
    if (tell) ReadRequest();
    return;
  }
  // Not set: MayHold() stays bounded by the basis meanwhile.
  if (IsRetryable(stat.status())) RetryWhenConnected(generation_, stat.status());
}

void RevokeWatch::OnEvent(const WatchEvent& event, absl::Duration sent) {
  // The request's data changed: the force mark. Handled on the event, before
  // any answer the server sent after it.
  if (event.type == WatchEvent::Type::kDataChanged) return Forced();
  {
    // Created or deleted: the arming sent at `sent`, and every request
    // answered before this event, was processed before that, so before any
    // mark of the request there is now.
    const absl::Duration heard = core().HeardInOrder();  // on the completion thread: in order
    absl::MutexLock lock(&state_mu_);
    sure_ = false;
    basis_ = std::max({basis_, sent, heard});
  }
  RefreshIfLive();
}

void RevokeWatch::Forced() {
  {
    absl::MutexLock lock(&state_mu_);
    if (forced_) return;
    forced_ = true;
  }
  Stop();  // nothing more to hear; a watch set on the marked request would stay
  on_forced_();
}

void RevokeWatch::ReadRequest() {
  std::shared_ptr<ZkClient> client = Client(generation_);
  if (client == nullptr || stopped()) return;
  std::weak_ptr<RevokeWatch> weak = std::static_pointer_cast<RevokeWatch>(shared_from_this());
  client->Get(path(), nullptr, [weak](absl::StatusOr<NodeData> request) {
    auto self = weak.lock();
    if (self == nullptr || self->stopped()) return;
    // Gone again before we read it: still a request that was made.
    self->on_request_(request.ok() ? request->data : std::string());
  });
}

}  // namespace internal
}  // namespace zkr
