// The two files a chaos_worker writes (chaos_worker.cc): the shared ledger,
// one write(2) per line on an O_APPEND file so lines of different processes
// never interleave, and the fenced resource, read and written under its
// flock(2). Used from the worker's threads; each object is used by one
// thread at a time.
#ifndef ZKRECIPES_TESTS_CHAOS_CHAOS_WORKER_FILES_H_
#define ZKRECIPES_TESTS_CHAOS_CHAOS_WORKER_FILES_H_

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace zkr {
namespace chaos {

// The shared ledger.
class LedgerFile {
 public:
  explicit LedgerFile(const std::string& path)
      : fd_(open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                 0644)) {}
  LedgerFile(const LedgerFile&) = delete;
  LedgerFile& operator=(const LedgerFile&) = delete;
  ~LedgerFile() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  // One write(2) per line: O_APPEND makes each an atomic append.
  void Append(std::string line) const {
    line.push_back('\n');
    ssize_t n;
    do {
      n = write(fd_, line.data(), line.size());
    } while (n < 0 && errno == EINTR);
  }

 private:
  const int fd_;
};

// The resource's state, "<highest write token> <highest read token> <write
// seq>", read and written under its flock(2), held for this object's
// lifetime.
class ResourceFile {
 public:
  explicit ResourceFile(const std::string& path)
      : fd_(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) return;
    while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
    char buffer[128] = {0};
    ssize_t n = pread(fd_, buffer, sizeof(buffer) - 1, 0);
    if (n > 0) {
      std::vector<absl::string_view> parts =
          absl::StrSplit(absl::string_view(buffer, static_cast<size_t>(n)), ' ',
                         absl::SkipWhitespace());
      if (parts.size() >= 3) {
        (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(parts[0]),
                               &highest_write_);
        (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(parts[1]),
                               &highest_read_);
        (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(parts[2]), &seq_);
      }
    }
  }
  ResourceFile(const ResourceFile&) = delete;
  ResourceFile& operator=(const ResourceFile&) = delete;
  ~ResourceFile() {
    if (fd_ >= 0) close(fd_);  // drops the flock
  }
  bool ok() const { return fd_ >= 0; }
  int64_t highest_write() const { return highest_write_; }
  int64_t highest_read() const { return highest_read_; }
  int64_t seq() const { return seq_; }
  void Store(int64_t highest_write, int64_t highest_read, int64_t seq) {
    highest_write_ = highest_write;
    highest_read_ = highest_read;
    seq_ = seq;
    std::string text =
        absl::StrCat(highest_write, " ", highest_read, " ", seq, "\n");
    if (pwrite(fd_, text.data(), text.size(), 0) ==
        static_cast<ssize_t>(text.size())) {
      (void)ftruncate(fd_, static_cast<off_t>(text.size()));
    }
  }

 private:
  const int fd_;
  int64_t highest_write_ = 0;
  int64_t highest_read_ = 0;
  int64_t seq_ = 0;
};

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_CHAOS_WORKER_FILES_H_
