#include "src/child_list.h"

#include <algorithm>

namespace zkr {
namespace internal {

ChildList::ChildList(const std::vector<std::string>& names) {
  size_t bytes = 0;
  for (const std::string& name : names) bytes += name.size();
  Reserve(names.size(), bytes);
  for (const std::string& name : names) Add(name);
}

ChildList::ChildList(std::initializer_list<absl::string_view> names) {
  for (absl::string_view name : names) Add(name);
}

void ChildList::Reserve(size_t count, size_t bytes) {
  ends_.reserve(count);
  chars_.reserve(bytes);
}

void ChildList::Add(absl::string_view name) {
  chars_.append(name.data(), name.size());
  ends_.push_back(static_cast<uint32_t>(chars_.size()));
}

bool ChildList::Contains(absl::string_view name) const {
  return std::find(begin(), end(), name) != end();
}

std::vector<std::string> ChildList::ToVector() const {
  std::vector<std::string> names;
  names.reserve(size());
  for (absl::string_view name : *this) names.emplace_back(name);
  return names;
}

absl::StatusOr<std::vector<std::string>> AsVector(absl::StatusOr<ChildList> listed) {
  if (!listed.ok()) return listed.status();
  return listed->ToVector();
}

}  // namespace internal
}  // namespace zkr
