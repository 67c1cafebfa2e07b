// The chaos run's shared ledger: one line per event, appended by the workers
// (see chaos_worker.cc for the line formats) and by the nemesis. This file
// parses the lines, follows the ledger as it grows and appends the
// nemesis's own lines. Ledger times are nanoseconds since the Unix epoch.
// Thread-safety: ParseEntry, AppendLine, NowNs and Ms are safe from any
// thread; a LedgerReader is not thread-safe (one thread at a time).
#ifndef ZKRECIPES_TESTS_CHAOS_LEDGER_H_
#define ZKRECIPES_TESTS_CHAOS_LEDGER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zkr {
namespace chaos {

// One ledger line, parsed.
struct Entry {
  std::string line;
  std::string kind;
  int worker = -1;     // -1 for the nemesis
  int64_t t = 0;       // ns since the epoch
  bool write = false;  // ENTER/EXIT/ACCEPT/REFUSE/AFAIL
  int64_t token = 0;   // token, or epoch for leader and OBSERVE lines
  // MEMBERS: the number of members listed.
  int64_t seq = 0;     // ACCEPT/LACCEPT
  std::string what;    // SUSPECT: lock|leader; NEMESIS: fault kind
  std::string detail;  // SUSPECT: why; NEMESIS: begin|end; AFAIL: code
  int target = -1;     // NEMESIS
  // ACCEPT/REFUSE: the guard still said held() with lease left.
  bool vouched = false;
  // STEP: the wall-clock step (s) and the lease left just before and just
  // after it (ms); whether an answer renewed the lease in between; how long
  // the reads took (ms, rounded up).
  int64_t step_s = 0, lease_before_ms = 0, lease_after_ms = 0, elapsed_ms = 0;
  bool renewed = false;
  // LOAD: the background load's lock critical sections, leader terms and
  // semaphore critical sections so far (the last absent in older ledgers).
  int64_t sections = 0, terms = 0, sem_sections = 0;
  // SENTER: the semaphore's permits (worker = the load's holder, token = its
  // fencing token); SEXIT: whether the holder was told SUSPENDED/LOST.
  int64_t permits = 0;
  bool told = false;
  // SAMPLE: a process's pid, resident set (KiB) and open descriptors; `what`
  // says whose (worker|load).
  int64_t pid = 0, rss_kib = 0, fds = 0;
  // HEAP: the load's live malloc heap (allocated bytes, in arenas and in
  // mmapped chunks) and the bytes its arenas hold from the system (KiB);
  // `pid` and `what` (load) as for SAMPLE.
  int64_t heap_kib = 0, arena_kib = 0;
};

// Parses one ledger line; nullopt if malformed.
std::optional<Entry> ParseEntry(const std::string& line);

// Reads the ledger as it grows.
class LedgerReader {
 public:
  explicit LedgerReader(std::string path) : path_(std::move(path)) {}

  // New complete lines since the last call (malformed ones counted).
  std::vector<Entry> Poll();
  const std::vector<std::string>& malformed() const { return malformed_; }

 private:
  const std::string path_;
  size_t offset_ = 0;
  std::string partial_;
  std::vector<std::string> malformed_;
};

// Appends the nemesis's own lines to the ledger (one write(2) each).
void AppendLine(const std::string& file, const std::string& text);

// The ledger's time now.
int64_t NowNs();
// A ledger duration for messages: "<n> ms".
std::string Ms(int64_t ns);

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_LEDGER_H_
