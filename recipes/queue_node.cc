#include "recipes/queue_node.h"

#include <algorithm>
#include <climits>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/process_identity.h"

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

// Curator's protected prefix: "_c_" and a canonical UUID (8-4-4-4-12 hex)
// and '-' (Curator's ProtectedUtils.isProtectedZNode).
bool HasCuratorProtectedPrefix(absl::string_view name) {
  constexpr size_t kLength = 3 + 36 + 1;
  if (name.size() <= kLength || !absl::StartsWith(name, "_c_") || name[kLength - 1] != '-') {
    return false;
  }
  const absl::string_view uuid = name.substr(3, 36);
  for (size_t i = 0; i < uuid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uuid[i] != '-' : !absl::ascii_isxdigit(uuid[i])) return false;
  }
  return true;
}

// Kazoo's contender pattern: "(__lock__|__rlock__)(-?\d{10})$".
bool MatchesKazooLock(absl::string_view name) {
  for (absl::string_view marker : {absl::string_view("__lock__"), absl::string_view("__rlock__")}) {
    for (size_t digits : {size_t{10}, size_t{11}}) {
      if (name.size() < marker.size() + digits) continue;
      absl::string_view tail = name.substr(name.size() - digits);
      if (digits == 11 && tail.front() != '-') continue;
      if (digits == 11) tail.remove_prefix(1);
      if (std::all_of(tail.begin(), tail.end(), absl::ascii_isdigit) &&
          name.substr(name.size() - digits - marker.size(), marker.size()) == marker) {
        return true;
      }
    }
  }
  return false;
}

// A sequence suffix of `dialect`: Kazoo's exactly 10 digits (9 after '-');
// otherwise a signed decimal that fits in 32 bits.
std::optional<int32_t> ParseSequence(absl::string_view digits, Dialect dialect) {
  if (dialect == Dialect::kKazoo &&
      digits.size() != (absl::StartsWith(digits, "-") ? size_t{11} : size_t{10})) {
    return std::nullopt;
  }
  int64_t sequence = 0;
  if (!IsSignedDecimal(digits) || !absl::SimpleAtoi(digits, &sequence) || sequence < INT32_MIN ||
      sequence > INT32_MAX) {
    return std::nullopt;
  }
  return static_cast<int32_t>(sequence);
}

}  // namespace

std::string SequenceSuffix(int32_t sequence) {
  // "%010d" (Java's too: a sign takes a digit's place), without a format
  // string's parse: every grant and listing names nodes with it.
  const bool negative = sequence < 0;
  uint32_t magnitude = negative ? 0u - static_cast<uint32_t>(sequence) : sequence;
  char digits[10];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  const int zeros = std::max(0, 10 - count - (negative ? 1 : 0));
  std::string suffix;
  suffix.reserve(11);
  if (negative) suffix.push_back('-');
  suffix.append(zeros, '0');
  while (count > 0) suffix.push_back(digits[--count]);
  return suffix;
}

std::optional<int32_t> ParseSequenceSuffix(absl::string_view suffix) {
  std::optional<int32_t> sequence = ParseSequence(suffix, Dialect::kZkr);
  if (!sequence.has_value() || SequenceSuffix(*sequence) != suffix) return std::nullopt;
  return sequence;
}

std::optional<int32_t> SequenceAfter(absl::string_view name, absl::string_view prefix) {
  if (!absl::StartsWith(name, prefix)) return std::nullopt;
  return ParseSequenceSuffix(name.substr(prefix.size()));
}

NodeScheme SchemeFor(Dialect dialect, QueueKind kind) {
  switch (dialect) {
    case Dialect::kZkr: return NodeScheme();
    case Dialect::kCurator:
      switch (kind) {
        case QueueKind::kSharedLock: return {dialect, "-__READ__", "-__WRIT__"};
        case QueueKind::kExclusiveLock: return {dialect, "", "-lock-"};
        case QueueKind::kElection: return {dialect, "", "-latch-"};
      }
      break;
    case Dialect::kKazoo: return {dialect, "__rlock__", "__lock__"};
  }
  return NodeScheme();
}

NodeScheme DetectScheme(const ChildList& children) {
  const NodeScheme schemes[] = {
      NodeScheme(),
      SchemeFor(Dialect::kCurator, QueueKind::kSharedLock),
      SchemeFor(Dialect::kCurator, QueueKind::kExclusiveLock),
      SchemeFor(Dialect::kCurator, QueueKind::kElection),
      SchemeFor(Dialect::kKazoo, QueueKind::kSharedLock),
  };
  NodeScheme best;
  size_t best_count = 0;
  for (const NodeScheme& scheme : schemes) {
    const size_t count = std::count_if(children.begin(), children.end(), [&](absl::string_view c) {
      return ParseQueueNode(c, scheme).has_value();
    });
    if (count > best_count) {
      best = scheme;
      best_count = count;
    }
  }
  return best;
}

namespace {

// Ours: the last "-R-", "-W-" or "-S<k>of<N>-" followed by an integer.
std::optional<QueueKey> ParseZkrKey(absl::string_view name) {
  for (size_t at = name.rfind('-'); at != absl::string_view::npos && at >= 2;
       at = name.rfind('-', at - 1)) {
    const size_t before = name.rfind('-', at - 1);
    if (before == absl::string_view::npos) continue;
    const absl::string_view marker = name.substr(before + 1, at - before - 1);
    QueueKey key;
    if (marker == "R" || marker == "W") {
      key.mode = marker == "R" ? NodeMode::kRead : NodeMode::kWrite;
    } else if (ParseLeaseMarker(marker, &key.weight, &key.leases)) {
      key.mode = NodeMode::kLease;
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
    key.participant_size = before;
    key.sequence = static_cast<int32_t>(sequence);
    return key;
  }
  return std::nullopt;
}

// A dialect's: the last marker of either mode, followed by the sequence and
// nothing else.
std::optional<QueueKey> ParseDialectKey(absl::string_view name, const NodeScheme& scheme) {
  size_t at = absl::string_view::npos;
  NodeMode mode = NodeMode::kWrite;
  absl::string_view marker;
  for (NodeMode m : {NodeMode::kRead, NodeMode::kWrite}) {
    const absl::string_view candidate = m == NodeMode::kRead ? scheme.read_marker : scheme.write_marker;
    if (candidate.empty()) continue;
    const size_t found = name.rfind(candidate);
    if (found != absl::string_view::npos && (at == absl::string_view::npos || found > at)) {
      at = found;
      mode = m;
      marker = candidate;
    }
  }
  if (at == absl::string_view::npos) return std::nullopt;
  std::optional<int32_t> sequence = ParseSequence(name.substr(at + marker.size()), scheme.dialect);
  if (!sequence.has_value()) return std::nullopt;
  QueueKey key;
  key.mode = mode;
  key.sequence = *sequence;
  key.participant_size = at;
  return key;
}

std::optional<QueueNode> NodeOf(absl::string_view name, const std::optional<QueueKey>& key) {
  if (!key.has_value()) return std::nullopt;
  QueueNode node;
  node.name = std::string(name);
  node.participant = std::string(name.substr(0, key->participant_size));
  node.mode = key->mode;
  node.sequence = key->sequence;
  node.weight = key->weight;
  node.leases = key->leases;
  return node;
}

}  // namespace

std::optional<QueueKey> ParseQueueKey(absl::string_view name, const NodeScheme& scheme) {
  return scheme.dialect == Dialect::kZkr ? ParseZkrKey(name) : ParseDialectKey(name, scheme);
}

std::optional<QueueNode> ParseQueueNode(absl::string_view name, const NodeScheme& scheme) {
  return NodeOf(name, ParseQueueKey(name, scheme));
}

bool IsForeignNode(absl::string_view child, const NodeScheme& scheme) {
  if (scheme.dialect != Dialect::kZkr) return !ParseQueueNode(child, scheme).has_value();
  if (ParseQueueNode(child).has_value()) return false;
  return HasCuratorProtectedPrefix(child) || MatchesKazooLock(child);
}

std::string FirstForeignNode(const ChildList& children, const NodeScheme& scheme) {
  for (absl::string_view child : children) {
    if (IsForeignNode(child, scheme)) return std::string(child);
  }
  return "";
}

std::optional<QueueNode> ParseQueueNode(absl::string_view name) {
  return NodeOf(name, ParseZkrKey(name));
}

int64_t SequenceOffset(int32_t sequence, int32_t origin) {
  return static_cast<int32_t>(static_cast<uint32_t>(sequence) - static_cast<uint32_t>(origin));
}

bool SequenceBefore(int32_t a, int32_t b) { return SequenceOffset(a, b) < 0; }

std::string NewParticipantId(absl::string_view label) {
  if (label.empty()) label = HostName();
  static thread_local absl::BitGen random;
  return absl::StrFormat("%s_%d_%016x", SafeLabel(label), ProcessId(),
                         absl::Uniform<uint64_t>(random));
}

std::string SafeLabel(absl::string_view label) {
  std::string safe(label);
  for (char& c : safe) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return safe;
}

std::string NewParticipantId(Dialect dialect, absl::string_view label) {
  // Ours draws its own random part: nothing extra on the default path.
  if (dialect == Dialect::kZkr) return NewParticipantId(label);
  static thread_local absl::BitGen random;
  const uint64_t high = absl::Uniform<uint64_t>(random), low = absl::Uniform<uint64_t>(random);
  switch (dialect) {
    case Dialect::kZkr: break;
    case Dialect::kCurator: {
      // A version 4 UUID, as Java's UUID.randomUUID().toString().
      const uint64_t h = (high & ~uint64_t{0xF000}) | 0x4000;
      const uint64_t l = (low & ~(uint64_t{0x3} << 62)) | (uint64_t{0x2} << 62);
      return absl::StrFormat("_c_%08x-%04x-%04x-%04x-%012x", h >> 32, (h >> 16) & 0xFFFF,
                             h & 0xFFFF, l >> 48, l & 0xFFFFFFFFFFFF);
    }
    case Dialect::kKazoo: return absl::StrFormat("%016x%016x", high, low);
  }
  return NewParticipantId(label);
}

std::string NodePrefix(absl::string_view participant, NodeMode mode, int weight, int leases,
                       const NodeScheme& scheme) {
  if (scheme.dialect != Dialect::kZkr) {
    return absl::StrCat(participant, mode == NodeMode::kRead ? scheme.read_marker
                                                             : scheme.write_marker);
  }
  switch (mode) {
    case NodeMode::kRead: return absl::StrCat(participant, "-R-");
    case NodeMode::kWrite: return absl::StrCat(participant, "-W-");
    case NodeMode::kLease: return absl::StrCat(participant, "-S", weight, "of", leases, "-");
  }
  return "";
}

std::vector<QueueNode> ParseQueue(const ChildList& children, int32_t origin,
                                  const NodeScheme& scheme, std::string* foreign) {
  std::vector<QueueNode> nodes;
  nodes.reserve(children.size());
  for (absl::string_view child : children) {
    if (std::optional<QueueNode> node = ParseQueueNode(child, scheme)) {
      nodes.push_back(std::move(*node));
    } else if (foreign != nullptr && foreign->empty() && IsForeignNode(child, scheme)) {
      *foreign = std::string(child);
    }
  }
  std::sort(nodes.begin(), nodes.end(), [origin](const QueueNode& a, const QueueNode& b) {
    int64_t oa = SequenceOffset(a.sequence, origin), ob = SequenceOffset(b.sequence, origin);
    return oa != ob ? oa < ob : a.name < b.name;
  });
  return nodes;
}

}  // namespace internal

absl::string_view DialectName(Dialect dialect) {
  switch (dialect) {
    case Dialect::kZkr: return "zkr";
    case Dialect::kCurator: return "curator";
    case Dialect::kKazoo: return "kazoo";
  }
  return "?";
}

}  // namespace zkr
