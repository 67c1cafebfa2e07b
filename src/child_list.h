// ChildList: a directory's child names as the server listed them, kept in
// one buffer (the names back to back, and where each ends) rather than one
// string each. A listing of a deep queue is O(queue) names and every waiter
// reads one: as strings each name was a small allocation of its own, and
// those short-lived allocations spread the long-lived state of the waiters
// over many more pages (bench row 6, RSS per waiter). Read as string_views,
// valid while the list lives and is not added to.
//
// Converts from a std::vector<std::string> (tests, fakes) and back
// (ToVector, the public Session::GetChildren). Not synchronised.
#ifndef ZKRECIPES_SRC_CHILD_LIST_H_
#define ZKRECIPES_SRC_CHILD_LIST_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace zkr {
namespace internal {

class ChildList {
 public:
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = absl::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = absl::string_view;

    const_iterator() = default;
    absl::string_view operator*() const { return (*list_)[index_]; }
    const_iterator& operator++() { return ++index_, *this; }
    const_iterator operator++(int) { const_iterator before = *this; ++index_; return before; }
    const_iterator& operator--() { return --index_, *this; }
    const_iterator& operator+=(difference_type n) { return index_ += n, *this; }
    const_iterator operator+(difference_type n) const { return const_iterator(list_, index_ + n); }
    difference_type operator-(const_iterator other) const {
      return difference_type(index_) - difference_type(other.index_);
    }
    bool operator==(const_iterator other) const { return index_ == other.index_; }
    bool operator!=(const_iterator other) const { return index_ != other.index_; }

   private:
    friend class ChildList;
    const_iterator(const ChildList* list, size_t index) : list_(list), index_(index) {}
    const ChildList* list_ = nullptr;
    size_t index_ = 0;
  };

  ChildList() = default;
  ChildList(const std::vector<std::string>& names);  // NOLINT: implicit, as a vector reads
  ChildList(std::initializer_list<absl::string_view> names);

  // Room for `count` names of `bytes` in all.
  void Reserve(size_t count, size_t bytes);
  void Add(absl::string_view name);

  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  absl::string_view operator[](size_t index) const {
    const size_t begin = index == 0 ? 0 : ends_[index - 1];
    return absl::string_view(chars_).substr(begin, ends_[index] - begin);
  }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }
  bool Contains(absl::string_view name) const;
  std::vector<std::string> ToVector() const;

 private:
  std::string chars_;
  std::vector<uint32_t> ends_;  // where each name ends in chars_
};

// A listing as strings, for code that keeps names rather than reads them.
absl::StatusOr<std::vector<std::string>> AsVector(absl::StatusOr<ChildList> listed);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_CHILD_LIST_H_
