#include "tools/zkr/stderr_writer.h"

#include <errno.h>
#include <unistd.h>

#include <cstdint>
#include <deque>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace zkr {
namespace cli {
namespace {

constexpr size_t kMaxQueuedBytes = size_t{1} << 20;

struct Writer {
  absl::Mutex mu;
  std::deque<std::string> queue ABSL_GUARDED_BY(mu);
  size_t queued_bytes ABSL_GUARDED_BY(mu) = 0;
  uint64_t dropped ABSL_GUARDED_BY(mu) = 0;   // lines refused since the last report
  uint64_t accepted ABSL_GUARDED_BY(mu) = 0;  // lines queued so far
  uint64_t done ABSL_GUARDED_BY(mu) = 0;      // of those, written (or given up)
};

// What write(2) takes of `text`; gives up on an error other than EINTR
// (EPIPE, EBADF: nobody will read it).
void WriteAll(absl::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(STDERR_FILENO, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
}

void Drain(Writer* writer) {
  for (;;) {
    std::string line;
    uint64_t dropped;
    {
      absl::MutexLock lock(&writer->mu);
      auto ready = [writer]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(writer->mu) {
        return !writer->queue.empty() || writer->dropped > 0;
      };
      writer->mu.Await(absl::Condition(&ready));
      dropped = std::exchange(writer->dropped, 0);
      if (!writer->queue.empty()) {
        line = std::move(writer->queue.front());
        writer->queue.pop_front();
        writer->queued_bytes -= line.size();
      }
    }
    if (dropped > 0) {
      WriteAll(absl::StrFormat("zkr: %d lines for stderr were dropped (it could not be written)\n",
                               dropped));
    }
    if (!line.empty()) WriteAll(line);
    absl::MutexLock lock(&writer->mu);
    if (!line.empty()) ++writer->done;
  }
}

// Never destroyed: the detached writer may still be writing as the process
// exits.
Writer& TheWriter() {
  static Writer* const writer = [] {
    auto* created = new Writer;
    std::thread(Drain, created).detach();
    return created;
  }();
  return *writer;
}

}  // namespace

void WriteStderr(std::string text) {
  if (text.empty()) return;
  Writer& writer = TheWriter();
  absl::MutexLock lock(&writer.mu);
  if (writer.queued_bytes + text.size() > kMaxQueuedBytes) {
    ++writer.dropped;
    return;
  }
  writer.queued_bytes += text.size();
  writer.queue.push_back(std::move(text));
  ++writer.accepted;
}

bool FlushStderr(absl::Duration bound) {
  Writer& writer = TheWriter();
  absl::MutexLock lock(&writer.mu);
  const uint64_t target = writer.accepted;
  auto written = [&writer, target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(writer.mu) {
    return writer.done >= target;
  };
  return writer.mu.AwaitWithTimeout(absl::Condition(&written), bound);
}

}  // namespace cli
}  // namespace zkr
