// chaos_load: the busy system under the chaos nemesis (chaos_test.cc).
//
// Of --sessions sessions, the last --semaphore_sessions take one of the
// --permits permits of the semaphore <root>/semaphore in turn (hold 5-20
// ms), and the others cycle the exclusive locks <root>/lock-0 ..
// <root>/lock-<locks-1> (session i on lock i % locks); --candidates more
// sessions take turns as leader of <root>/election (join, lead ~100 ms,
// leave, join again). All connect straight to the ensemble, so that the
// nemesis's faults hit a busy ensemble rather than an idle one. Every 250 ms
// it appends to the ledger
//
//   LOAD <t_ns> <sections> <terms> <semaphore sections>
//
// the lock critical sections, leadership terms and semaphore critical
// sections completed so far, from which the checker derives the rate
// before, during and after each fault. Each semaphore hold is logged too,
// for the checker's rule (i) (never more untold holders than permits):
//
//   SENTER <holder> <token> <t_ns> <permits>   after the grant
//   SEXIT <holder> <token> <t_ns> <told>       before the release; told = 1
//                                              if the hold was reported
//                                              SUSPENDED/LOST meanwhile
//
// The locks and the election are checked by the chaos workers' rules.
//
// Every --heap_period_s seconds it appends its live malloc heap, which only
// the process itself can read (the sampler reads its RSS from outside), for
// the checker's rule (j):
//
//   HEAP <t_ns> <pid> load <live heap KiB> <arena KiB>
//
// (live: glibc's mallinfo2() uordblks + hblkhd, the bytes allocated and not
// freed, in arenas and in mmapped chunks; arena: the bytes the arenas hold
// from the system). Chunks cached in glibc's per-thread tcache count as
// allocated: with ~340 threads, "live" may rise a little while the caches
// fill. --malloc_arena_max=N (mallopt M_ARENA_MAX, before any thread
// starts) bounds glibc's malloc arenas, 8 per core by default.
//
// With --heap_log=FILE it also appends, every --heap_period_s seconds, one
// CSV row of its own memory in detail:
//
//   t_ns,rss_kib,in_use_kib,mmapped_kib,arena_kib,free_kib,arenas,
//   rss_brk_kib,rss_arena_heaps_kib,rss_stacks_kib,rss_other_anon_kib,
//   rss_file_kib,threads,fds,sections,terms,sem_sections
//
// in_use, mmapped, arena and free are glibc's mallinfo2() (uordblks, hblkhd,
// arena, fordblks: allocated bytes, bytes in mmapped chunks, bytes the
// arenas hold from the system, free bytes inside them; summed over every
// arena), arenas the number of malloc arenas (malloc_info's <heap> entries).
// The rss_* split VmRSS by mapping (/proc/self/smaps): the main arena's
// [heap], the other arenas' heaps (anonymous mappings at a 64 MiB boundary,
// glibc's HEAP_MAX_SIZE), thread stacks (anonymous read-write mappings of
// the default stack size less its guard page), other anonymous mappings
// (large mmapped chunks), and files (the binary and its libraries).
//
// SIGTERM/SIGINT: stop, release, leave, close every session, exit 0.
//
// Usage: chaos_load --zk=HOSTS --root=/path --ledger=FILE [--sessions=64]
//          [--locks=16] [--semaphore_sessions=8] [--permits=4]
//          [--candidates=4] [--session_timeout_ms=3000]
//          [--heap_period_s=10] [--heap_log=FILE] [--malloc_arena_max=0]
#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gflags/gflags.h"
#include "tests/chaos/ledger.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/leader_election.h"
#include "zkrecipes/semaphore.h"
#include "zkrecipes/session.h"

DEFINE_string(zk, "", "the ensemble's connect string");
DEFINE_string(root, "", "the path under which the load's locks and election live");
DEFINE_string(ledger, "", "the chaos run's ledger, to which LOAD lines are appended");
DEFINE_int32(sessions, 64, "sessions cycling the locks");
DEFINE_int32(locks, 16, "lock paths the sessions share");
DEFINE_int32(semaphore_sessions, 8, "of --sessions, those taking the semaphore's permits");
DEFINE_int32(permits, 4, "the semaphore's permits");
DEFINE_int32(candidates, 4, "sessions taking turns as leader");
DEFINE_int32(session_timeout_ms, 3000, "the sessions' timeout");
DEFINE_string(heap_log, "", "if set, a CSV to which the load's RSS and malloc heap are appended");
DEFINE_int32(heap_period_s, 10, "seconds between two HEAP lines (and rows of --heap_log)");
DEFINE_int32(malloc_arena_max, 0, "if > 0, glibc's malloc arenas are at most this many");

namespace zkr {
namespace chaos {
namespace {

std::atomic<bool> stopping{false};
std::atomic<int64_t> sections{0};
std::atomic<int64_t> terms{0};
std::atomic<int64_t> sem_sections{0};

// A connected session, retrying while the ensemble is unavailable; null once
// stopping.
std::unique_ptr<Session> ConnectUntilStopped() {
  SessionOptions options;
  options.connect = FLAGS_zk;
  options.session_timeout = absl::Milliseconds(FLAGS_session_timeout_ms);
  options.connect_timeout = absl::Seconds(10);
  options.log_level = ClientLogLevel::kError;
  while (!stopping) {
    absl::StatusOr<std::unique_ptr<Session>> session = Session::Connect(options);
    if (session.ok()) return std::move(*session);
    absl::SleepFor(absl::Milliseconds(200));
  }
  return nullptr;
}

// One session cycling one lock: hold ~1 ms, then pause 10-50 ms.
void CycleLock(int index) {
  std::unique_ptr<Session> session = ConnectUntilStopped();
  if (session == nullptr) return;
  auto lock = ExclusiveLock::Create(*session, absl::StrCat(FLAGS_root, "/lock-", index % FLAGS_locks));
  if (!lock.ok()) {
    std::fprintf(stderr, "chaos_load: %s\n", lock.status().ToString().c_str());
    return;
  }
  absl::BitGen random;
  while (!stopping) {
    absl::StatusOr<LockGuard> guard = (*lock)->Acquire(absl::Milliseconds(500));
    if (guard.ok()) {
      absl::SleepFor(absl::Milliseconds(1));
      if (guard->Release().ok()) ++sections;
    } else if (!absl::IsDeadlineExceeded(guard.status())) {
      absl::SleepFor(absl::Milliseconds(50));  // the ensemble is down: back off
    }
    absl::SleepFor(absl::Milliseconds(absl::Uniform(random, 10, 50)));
  }
}

// One session taking one of the semaphore's permits in turn: hold 5-20 ms,
// then pause 10-50 ms; each hold logged (SENTER/SEXIT) with whether it was
// told SUSPENDED/LOST.
void CycleSemaphore(int holder) {
  std::unique_ptr<Session> session = ConnectUntilStopped();
  if (session == nullptr) return;
  // Set by a state change of the current hold; none is delivered once its
  // Release() has returned (lock_options.h), so it is reset before each.
  auto told = std::make_shared<std::atomic<bool>>(false);
  LockOptions options;
  options.on_state_change = [told](LockState state) {
    if (state == LockState::kSuspended || state == LockState::kLost) *told = true;
  };
  auto semaphore =
      Semaphore::Create(*session, FLAGS_root + "/semaphore", FLAGS_permits, options);
  if (!semaphore.ok()) {
    std::fprintf(stderr, "chaos_load: %s\n", semaphore.status().ToString().c_str());
    return;
  }
  absl::BitGen random;
  while (!stopping) {
    *told = false;
    absl::StatusOr<LockGuard> guard = (*semaphore)->Acquire(1, absl::Milliseconds(500));
    if (guard.ok()) {
      const int64_t token = guard->fencing_token();
      AppendLine(FLAGS_ledger,
                 absl::StrCat("SENTER ", holder, " ", token, " ", NowNs(), " ", FLAGS_permits));
      absl::SleepFor(absl::Milliseconds(absl::Uniform(random, 5, 20)));
      const bool was_told = *told || guard->state() != LockState::kHeld;
      AppendLine(FLAGS_ledger,
                 absl::StrCat("SEXIT ", holder, " ", token, " ", NowNs(), " ", was_told ? 1 : 0));
      if (guard->Release().ok()) ++sem_sections;
    } else if (!absl::IsDeadlineExceeded(guard.status())) {
      absl::SleepFor(absl::Milliseconds(50));  // the ensemble is down: back off
    }
    absl::SleepFor(absl::Milliseconds(absl::Uniform(random, 10, 50)));
  }
}

// One candidate taking turns as leader: join, lead ~100 ms, leave.
void TakeTurns(int index) {
  std::unique_ptr<Session> session = ConnectUntilStopped();
  if (session == nullptr) return;
  ElectionOptions options;
  options.id = absl::StrCat("load-", index);
  auto election = LeaderElection::Create(*session, FLAGS_root + "/election", options);
  if (!election.ok()) {
    std::fprintf(stderr, "chaos_load: %s\n", election.status().ToString().c_str());
    return;
  }
  while (!stopping) {
    if (!(*election)->Join().ok()) {
      absl::SleepFor(absl::Milliseconds(50));
      continue;
    }
    absl::Status led = absl::DeadlineExceededError("not yet");
    while (!stopping && absl::IsDeadlineExceeded(led)) {
      led = (*election)->AwaitLeadership(absl::Milliseconds(500));
    }
    if (led.ok()) {
      absl::SleepFor(absl::Milliseconds(100));
      ++terms;
    } else if (!stopping) {
      absl::SleepFor(absl::Milliseconds(50));  // the ensemble is down: back off
    }
    (void)(*election)->Leave();
  }
}

// The HEAP line for the ledger and, if `csv` is given, one row of
// --heap_log (see the top of this file).
std::string HeapLine(std::string* csv) {
  const struct mallinfo2 info = mallinfo2();
  auto kib = [](size_t bytes) { return static_cast<int64_t>(bytes >> 10); };
  std::string line = absl::StrCat("HEAP ", NowNs(), " ", getpid(), " load ",
                                  kib(info.uordblks + info.hblkhd), " ", kib(info.arena));
  if (csv == nullptr) return line;
  // malloc_info's XML has one <heap nr="N"> per arena.
  int64_t arenas = 0;
  {
    char* text = nullptr;
    size_t size = 0;
    if (std::FILE* out = open_memstream(&text, &size)) {
      malloc_info(0, out);
      std::fclose(out);
      for (const char* p = text; (p = std::strstr(p, "<heap nr=")) != nullptr; ++p) ++arenas;
      std::free(text);
    }
  }
  // VmRSS by mapping.
  size_t stack_bytes = 8 << 20;
  {
    pthread_attr_t attr;
    if (pthread_getattr_default_np(&attr) == 0) {
      (void)pthread_attr_getstacksize(&attr, &stack_bytes);
      pthread_attr_destroy(&attr);
    }
    if (stack_bytes == 0) stack_bytes = 8 << 20;
  }
  constexpr uint64_t kArenaHeapAlign = 64 << 20;  // glibc's HEAP_MAX_SIZE on 64-bit
  int64_t rss_brk = 0, rss_arena_heaps = 0, rss_stacks = 0, rss_other_anon = 0, rss_file = 0;
  {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    int64_t* bucket = nullptr;
    while (std::getline(smaps, line)) {
      unsigned long long begin = 0, end = 0;
      char perms[8] = {0};
      int path_at = 0;
      if (std::sscanf(line.c_str(), "%llx-%llx %7s %*s %*s %*s %n", &begin, &end, perms,
                      &path_at) >= 3 &&
          line.find(':') > line.find(' ')) {  // a mapping's header, not "Rss: ..."
        const std::string path = path_at > 0 ? line.substr(path_at) : "";
        const bool anon_rw = path.empty() && std::strncmp(perms, "rw", 2) == 0;
        const uint64_t length = end - begin;
        if (path == "[heap]") {
          bucket = &rss_brk;
        } else if (anon_rw && begin % kArenaHeapAlign == 0 && length <= kArenaHeapAlign) {
          bucket = &rss_arena_heaps;
        } else if (anon_rw && (length == stack_bytes || length + 4096 == stack_bytes)) {
          bucket = &rss_stacks;
        } else if (path.empty() || path[0] == '[') {
          bucket = &rss_other_anon;
        } else {
          bucket = &rss_file;
        }
        continue;
      }
      long long kib = 0;
      if (bucket != nullptr && std::sscanf(line.c_str(), "Rss: %lld kB", &kib) == 1) {
        *bucket += kib;
      }
    }
  }
  int64_t rss = -1, threads = -1;
  {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      long long v = 0;
      if (std::sscanf(line.c_str(), "VmRSS: %lld kB", &v) == 1) rss = v;
      if (std::sscanf(line.c_str(), "Threads: %lld", &v) == 1) threads = v;
    }
  }
  // Open descriptors as the sampler counts them from outside: without the
  // one opendir holds while reading.
  int64_t fds = -1;
  if (DIR* dir = opendir("/proc/self/fd")) {
    int64_t entries = 0;
    while (struct dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ++entries;
    }
    closedir(dir);
    fds = entries - 1;
  }
  *csv = absl::StrCat(NowNs(), ",", rss, ",", kib(info.uordblks), ",", kib(info.hblkhd), ",",
                      kib(info.arena), ",", kib(info.fordblks), ",", arenas, ",", rss_brk, ",",
                      rss_arena_heaps, ",", rss_stacks, ",", rss_other_anon, ",", rss_file, ",",
                      threads, ",", fds, ",", sections.load(), ",", terms.load(), ",",
                      sem_sections.load());
  return line;
}

int Run(const sigset_t& signals) {
  std::vector<std::thread> threads;
  const int lock_sessions = FLAGS_sessions - FLAGS_semaphore_sessions;
  for (int i = 0; i < lock_sessions; ++i) threads.emplace_back(CycleLock, i);
  for (int i = 0; i < FLAGS_semaphore_sessions; ++i) threads.emplace_back(CycleSemaphore, i);
  for (int i = 0; i < FLAGS_candidates; ++i) threads.emplace_back(TakeTurns, i);
  std::thread reporter([] {
    while (!stopping) {
      AppendLine(FLAGS_ledger, absl::StrCat("LOAD ", NowNs(), " ", sections.load(), " ",
                                            terms.load(), " ", sem_sections.load()));
      absl::SleepFor(absl::Milliseconds(250));
    }
  });
  if (!FLAGS_heap_log.empty()) {
    AppendLine(FLAGS_heap_log,
               "t_ns,rss_kib,in_use_kib,mmapped_kib,arena_kib,free_kib,arenas,rss_brk_kib,"
               "rss_arena_heaps_kib,rss_stacks_kib,rss_other_anon_kib,rss_file_kib,threads,fds,"
               "sections,terms,sem_sections");
  }
  std::thread heap_logger([] {
    while (!stopping) {
      std::string csv;
      AppendLine(FLAGS_ledger, HeapLine(FLAGS_heap_log.empty() ? nullptr : &csv));
      if (!csv.empty()) AppendLine(FLAGS_heap_log, csv);
      // In short steps, so that a stop is not held up by a whole period.
      for (int i = 0; i < FLAGS_heap_period_s * 10 && !stopping; ++i) {
        absl::SleepFor(absl::Milliseconds(100));
      }
    }
  });
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  stopping = true;
  for (std::thread& thread : threads) thread.join();
  reporter.join();
  heap_logger.join();
  return 0;
}

}  // namespace
}  // namespace chaos
}  // namespace zkr

int main(int argc, char** argv) {
  gflags::SetUsageMessage("the chaos suite's background load (see chaos_load.cc)");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_zk.empty() || FLAGS_root.empty() || FLAGS_ledger.empty() || FLAGS_sessions < 0 ||
      FLAGS_locks <= 0 || FLAGS_candidates < 0 || FLAGS_session_timeout_ms <= 0 ||
      FLAGS_semaphore_sessions < 0 || FLAGS_semaphore_sessions > FLAGS_sessions ||
      FLAGS_permits <= 0 || FLAGS_heap_period_s <= 0 || FLAGS_malloc_arena_max < 0) {
    std::fprintf(stderr,
                 "chaos_load: --zk, --root and --ledger are required; --sessions and "
                 "--candidates >= 0, 0 <= --semaphore_sessions <= --sessions, --locks, "
                 "--permits, --session_timeout_ms and --heap_period_s > 0, --malloc_arena_max >= 0\n");
    return 2;
  }
  // Before any thread allocates (arenas are made for threads as they
  // contend), so that the bound holds from the start.
  if (FLAGS_malloc_arena_max > 0 && mallopt(M_ARENA_MAX, FLAGS_malloc_arena_max) != 1) {
    std::fprintf(stderr, "chaos_load: mallopt(M_ARENA_MAX, %d) failed\n", FLAGS_malloc_arena_max);
    return 2;
  }
  // Block the stop signals in every thread (threads inherit the mask); the
  // main thread takes them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return zkr::chaos::Run(signals);
}
