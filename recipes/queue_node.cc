#include "recipes/queue_node.h"

#include <unistd.h>

#include <algorithm>
#include <climits>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace zkr {
namespace internal {
namespace {

// "-?[0-9]+" exactly (SimpleAtoi alone would also take "+5" and " 5").
bool IsSignedDecimal(absl::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.empty() || text.size() > 19) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

// "S<k>of<N>" with 1 <= k <= N <= kMaxLeases.
bool ParseLeaseMarker(absl::string_view marker, int* weight, int* leases) {
  if (marker.size() < 4 || marker.front() != 'S') return false;
  marker.remove_prefix(1);
  const size_t of = marker.find("of");
  if (of == absl::string_view::npos) return false;
  absl::string_view k = marker.substr(0, of), n = marker.substr(of + 2);
  auto digits = [](absl::string_view text) {
    return !text.empty() && text.size() <= 7 && text.front() != '0' &&
           std::all_of(text.begin(), text.end(), absl::ascii_isdigit);
  };
  if (!digits(k) || !digits(n) || !absl::SimpleAtoi(k, weight) || !absl::SimpleAtoi(n, leases)) {
    return false;
  }
  return *weight <= *leases && *leases <= kMaxLeases;
}

}  // namespace

std::optional<QueueNode> ParseQueueNode(absl::string_view name) {
  // The last "-R-", "-W-" or "-S<k>of<N>-" followed by an integer.
  for (size_t at = name.rfind('-'); at != absl::string_view::npos && at >= 2;
       at = name.rfind('-', at - 1)) {
    const size_t before = name.rfind('-', at - 1);
    if (before == absl::string_view::npos) continue;
    const absl::string_view marker = name.substr(before + 1, at - before - 1);
    QueueNode node;
    if (marker == "R" || marker == "W") {
      node.mode = marker == "R" ? NodeMode::kRead : NodeMode::kWrite;
    } else if (ParseLeaseMarker(marker, &node.weight, &node.leases)) {
      node.mode = NodeMode::kLease;
    } else {
      continue;
    }
    int64_t sequence = 0;
    absl::string_view digits = name.substr(at + 1);
    if (!IsSignedDecimal(digits) || !absl::SimpleAtoi(digits, &sequence) ||
        sequence < INT32_MIN || sequence > INT32_MAX) {
      return std::nullopt;  // the suffix after the last marker must be the sequence
    }
    if (before == 0) return std::nullopt;  // empty participant
    node.name = std::string(name);
    node.participant = std::string(name.substr(0, before));
    node.sequence = static_cast<int32_t>(sequence);
    return node;
  }
  return std::nullopt;
}

int64_t SequenceOffset(int32_t sequence, int32_t origin) {
  return static_cast<int32_t>(static_cast<uint32_t>(sequence) - static_cast<uint32_t>(origin));
}

bool SequenceBefore(int32_t a, int32_t b) { return SequenceOffset(a, b) < 0; }

std::string NewParticipantId(absl::string_view label) {
  char host[256] = {0};
  if (label.empty()) {
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
      std::snprintf(host, sizeof(host), "unknown-host");
    }
    label = host;
  }
  std::string safe(label);
  for (char& c : safe) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != '_') c = '_';
  }
  static thread_local absl::BitGen random;
  return absl::StrFormat("%s_%d_%016x", safe, getpid(), absl::Uniform<uint64_t>(random));
}

std::string NodePrefix(absl::string_view participant, NodeMode mode, int weight, int leases) {
  switch (mode) {
    case NodeMode::kRead: return absl::StrCat(participant, "-R-");
    case NodeMode::kWrite: return absl::StrCat(participant, "-W-");
    case NodeMode::kLease: return absl::StrCat(participant, "-S", weight, "of", leases, "-");
  }
  return "";
}

std::vector<QueueNode> ParseQueue(const std::vector<std::string>& children, int32_t origin) {
  std::vector<QueueNode> nodes;
  nodes.reserve(children.size());
  for (const std::string& child : children) {
    if (std::optional<QueueNode> node = ParseQueueNode(child)) nodes.push_back(std::move(*node));
  }
  std::sort(nodes.begin(), nodes.end(), [origin](const QueueNode& a, const QueueNode& b) {
    int64_t oa = SequenceOffset(a.sequence, origin), ob = SequenceOffset(b.sequence, origin);
    return oa != ob ? oa < ob : a.name < b.name;
  });
  return nodes;
}

}  // namespace internal
}  // namespace zkr
