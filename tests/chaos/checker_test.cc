// The chaos suite's checker (tests/chaos/checker.h) on hand-written
// ledgers: what is a violation (two untold writers, a cut-off holder not told
// first, tokens, epochs, an observer's late report, a clock step, a watch
// leak, a semaphore over its permits, RSS or descriptors growing) and what
// is only counted, and the per-fault and per-minute summaries.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/chaos/checker.h"
#include "tests/chaos/ledger.h"
#include "tests/chaos/parameters.h"
#include "tests/chaos/plot.h"

namespace zkr {
namespace chaos {

// For gtest's messages.
void PrintTo(const Violation& v, std::ostream* out) { *out << v.t << ": " << v.text; }

namespace {

Report CheckLines(const std::vector<std::string>& lines) {
  std::vector<Entry> entries;
  for (const std::string& line : lines) {
    std::optional<Entry> entry = ParseEntry(line);
    EXPECT_TRUE(entry.has_value()) << line;
    if (entry.has_value()) entries.push_back(*entry);
  }
  return Checker(entries).Check();
}

TEST(ChaosCheckerTest, TwoUntoldWritersOverlappingIsAViolation) {
  Report r = CheckLines({"ENTER 1 W 10 100", "ACCEPT 1 W 10 1 110",
                         "EXIT 1 W 10 200", "ENTER 2 W 20 150",
                         "ACCEPT 2 W 20 2 160", "EXIT 2 W 20 250"});
  EXPECT_EQ(r.plain_overlaps, 1);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_THAT(r.violations[0].text, ::testing::HasSubstr("overlap"));
}

TEST(ChaosCheckerTest, AnOverlapWithAToldHolderIsCountedNotAViolation) {
  Report r =
      CheckLines({"ENTER 1 W 10 100", "SUSPECT 1 180 lock SUSPENDED",
                  "REFUSE 1 W 10 20 190", "EXIT 1 W 10 200", "ENTER 2 W 20 150",
                  "ACCEPT 2 W 20 1 160", "EXIT 2 W 20 250"});
  EXPECT_THAT(r.violations, ::testing::IsEmpty());
  EXPECT_EQ(r.plain_overlaps, 1);
  EXPECT_EQ(r.stale_overlapping, 1);
  EXPECT_EQ(r.stale_overlapping_refused, 1);
  EXPECT_EQ(r.stale_refused, 1);
  // A SUSPECT outside the interval does not count.
  r = CheckLines({"ENTER 1 W 10 100", "EXIT 1 W 10 200",
                  "SUSPECT 1 201 lock LOST", "ENTER 2 W 20 150",
                  "EXIT 2 W 20 250"});
  EXPECT_EQ(r.violations.size(), 1u);
}

TEST(ChaosCheckerTest, ACutOffHolderMustBeToldBeforeAnotherBegins) {
  // Cut off at 120 (process running): told at 180, before the other began
  // at 190 — counted, not a violation.
  Report r = CheckLines({"ENTER 1 W 10 100", "NEMESIS 120 partition_worker begin 1",
                         "SUSPECT 1 180 lock SUSPENDED", "ENTER 2 W 20 190",
                         "EXIT 1 W 10 200", "NEMESIS 210 partition_worker end 1",
                         "EXIT 2 W 20 250"});
  EXPECT_THAT(r.violations, ::testing::IsEmpty());
  // Told only after the other began: a violation, though told in its interval.
  r = CheckLines({"ENTER 1 W 10 100", "NEMESIS 120 partition_worker begin 1",
                  "ENTER 2 W 20 150", "SUSPECT 1 180 lock SUSPENDED", "EXIT 1 W 10 200",
                  "NEMESIS 210 partition_worker end 1", "EXIT 2 W 20 250"});
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_THAT(r.violations[0].text, ::testing::HasSubstr("cut off"));
}

TEST(ChaosCheckerTest, ReadersMayOverlapReadersButNotWriters) {
  EXPECT_TRUE(CheckLines({"ENTER 1 R 10 100", "EXIT 1 R 10 200",
                          "ENTER 2 R 11 150", "EXIT 2 R 11 250"})
                  .violations.empty());
  EXPECT_EQ(CheckLines({"ENTER 1 R 10 100", "EXIT 1 R 10 200",
                        "ENTER 2 W 11 150", "EXIT 2 W 11 250"})
                .violations.size(),
            1u);
}

TEST(ChaosCheckerTest, TokensMustIncreaseAndUntoldHoldersMustNotBeRefused) {
  // A later untold writer with a lower token.
  EXPECT_EQ(CheckLines({"ENTER 1 W 20 100", "EXIT 1 W 20 200",
                        "ENTER 2 W 10 300", "EXIT 2 W 10 400"})
                .violations.size(),
            1u);
  // An untold holder refused by the fence.
  EXPECT_EQ(CheckLines(
                {"ENTER 1 W 20 100", "REFUSE 1 W 20 30 150", "EXIT 1 W 20 200"})
                .violations.size(),
            1u);
  // The fence accepting a lower write token after a higher one, or a write
  // below a read.
  EXPECT_FALSE(
      CheckLines({"ENTER 1 W 20 100", "ACCEPT 1 W 20 1 150", "EXIT 1 W 20 200",
                  "ENTER 2 W 10 300", "SUSPECT 2 310 lock LOST",
                  "ACCEPT 2 W 10 2 350", "EXIT 2 W 10 400"})
          .violations.empty());
  EXPECT_FALSE(
      CheckLines({"ENTER 1 R 20 100", "ACCEPT 1 R 20 0 150", "EXIT 1 R 20 200",
                  "ENTER 2 W 10 300", "SUSPECT 2 310 lock LOST",
                  "ACCEPT 2 W 10 1 350", "EXIT 2 W 10 400"})
          .violations.empty());
}

TEST(ChaosCheckerTest, HoldsEndByExitOrKill) {
  EXPECT_EQ(CheckLines({"ENTER 1 W 20 100"}).violations.size(), 1u);
  Report r = CheckLines({"ENTER 1 W 20 100", "NEMESIS 150 kill_worker begin 1",
                         "NEMESIS 160 kill_worker end 1", "ENTER 2 W 30 3000",
                         "EXIT 2 W 30 3100"});
  EXPECT_THAT(r.violations, ::testing::IsEmpty());
  EXPECT_EQ(r.killed_holds, 1);
}

TEST(ChaosCheckerTest, LeadershipIsOnePerEpochAndExclusiveAmongUntoldLeaders) {
  EXPECT_FALSE(CheckLines({"LEADER 1 7 100", "UNLEAD 1 7 200", "LEADER 2 7 300",
                           "UNLEAD 2 7 400"})
                   .violations.empty());
  EXPECT_FALSE(CheckLines({"LEADER 1 7 100", "UNLEAD 1 7 200", "LEADER 2 9 150",
                           "UNLEAD 2 9 400"})
                   .violations.empty());
  EXPECT_TRUE(CheckLines({"LEADER 1 7 100", "SUSPECT 1 160 leader SUSPENDED",
                          "UNLEAD 1 7 200", "LEADER 2 9 150", "UNLEAD 2 9 400"})
                  .violations.empty());
  EXPECT_FALSE(CheckLines({"LEADER 1 9 100", "UNLEAD 1 9 200", "LEADER 2 7 300",
                           "UNLEAD 2 7 400"})
                   .violations.empty());
}

// (h) Reporting epoch 7 up to a session timeout after its term ended is
// fine (its node may live that long); later is a violation, unless a fault
// aimed at the observer lay in between. Reports are counted, and terms seen
// taken over.
TEST(ChaosCheckerTest, AnObserverMustNotReportALeaderDeposedLongerThanASessionTimeout) {
  const int64_t ended = 1'000'000'000;
  const int64_t within = ended + absl::ToInt64Nanoseconds(kSessionTimeout + kExpiryTick) - 1;
  const int64_t beyond = ended + absl::ToInt64Nanoseconds(kSessionTimeout + kExpiryTick) + 1;
  Report fine = CheckLines({"LEADER 1 7 100", absl::StrCat("UNLEAD 1 7 ", ended),
                            absl::StrCat("OBSERVE 2 7 1 ", within), "MEMBERS 2 3 150"});
  EXPECT_TRUE(fine.violations.empty());
  EXPECT_EQ(fine.observer_reports, 1);
  EXPECT_EQ(fine.observed_terms, 1);
  EXPECT_EQ(fine.member_reports, 1);
  Report stale = CheckLines({"LEADER 1 7 100", absl::StrCat("UNLEAD 1 7 ", ended),
                             absl::StrCat("OBSERVE 2 7 1 ", beyond)});
  ASSERT_EQ(stale.violations.size(), 1u);
  EXPECT_NE(stale.violations[0].text.find("(h)"), std::string::npos);
  Report paused = CheckLines({"LEADER 1 7 100", absl::StrCat("UNLEAD 1 7 ", ended),
                              absl::StrCat("NEMESIS ", ended - 10, " pause_worker begin 2"),
                              absl::StrCat("NEMESIS ", ended + 10, " pause_worker end 2"),
                              absl::StrCat("OBSERVE 2 7 1 ", beyond)});
  EXPECT_TRUE(paused.violations.empty());
  // Without quorum no session expires: counted from the fault's end.
  Report no_quorum = CheckLines({"LEADER 1 7 100", absl::StrCat("UNLEAD 1 7 ", ended),
                                 absl::StrCat("NEMESIS ", ended - 10, " lose_quorum begin 2"),
                                 absl::StrCat("NEMESIS ", beyond - 5, " lose_quorum end 2"),
                                 absl::StrCat("OBSERVE 3 7 1 ", beyond)});
  EXPECT_TRUE(no_quorum.violations.empty());
  // Nobody, or an epoch that never led: nothing to judge.
  EXPECT_TRUE(CheckLines({absl::StrCat("OBSERVE 2 0 0 ", beyond), "OBSERVE 2 5 1 100"})
                  .violations.empty());
}

TEST(ChaosCheckerTest, AClockStepMustNeitherStretchNorShortenTheLease) {
  // The lease left is the same before and after, less the time the reads
  // took: fine, either way.
  Report r = CheckLines({"STEP 1 100 3600 2500 2500 renewed=0 elapsed_ms=1",
                         "STEP 1 200 -3600 2400 2340 renewed=0 elapsed_ms=61"});
  EXPECT_THAT(r.violations, ::testing::IsEmpty());
  EXPECT_EQ(r.clock_steps, 2);
  // Stretched by the step back... or cut short by the step forward.
  r = CheckLines({"STEP 1 100 -3600 2500 3602500 renewed=0 elapsed_ms=1"});
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_THAT(r.violations[0].text, ::testing::HasSubstr("stretched"));
  r = CheckLines({"STEP 1 100 3600 2500 -3597500 renewed=0 elapsed_ms=1"});
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_THAT(r.violations[0].text, ::testing::HasSubstr("shortened"));
  EXPECT_EQ(CheckLines({"STEP 1 100 3600 2500 2400 renewed=0 elapsed_ms=5"}).violations.size(),
            1u);
  // Renewed by an answer between the reads: it may grow, not shrink.
  EXPECT_THAT(CheckLines({"STEP 1 100 3600 2500 3000 renewed=1 elapsed_ms=1"}).violations,
              ::testing::IsEmpty());
  EXPECT_EQ(CheckLines({"STEP 1 100 3600 2500 1000 renewed=1 elapsed_ms=1"}).violations.size(),
            1u);
  // No lease to keep (not connected): nothing to check.
  EXPECT_THAT(CheckLines({"STEP 1 100 3600 -5 -5 renewed=0 elapsed_ms=1"}).violations,
              ::testing::IsEmpty());
}

TEST(ChaosCheckerTest, AHolderCutOffAfterAClockStepMustBeToldBeforeAnotherBegins) {
  // Its clock an hour behind, then cut off: still believing at 190 when the
  // other begins — its lease was stretched by the step.
  Report r = CheckLines({"ENTER 1 W 10 100", "STEP 1 105 -3600 2500 2500 renewed=0 elapsed_ms=1",
                         "NEMESIS 120 clock_step_worker begin 1", "ENTER 2 W 20 190",
                         "SUSPECT 1 195 lock LOST", "EXIT 1 W 10 200",
                         "NEMESIS 210 clock_step_worker end 1", "EXIT 2 W 20 250"});
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_THAT(r.violations[0].text, ::testing::HasSubstr("cut off"));
  EXPECT_EQ(r.by_fault["clock_step_worker"].violations, 1);
}

TEST(ChaosCheckerTest, AWatchOnAMissingPathSeenTwiceIsALeak) {
  const WatchListing first = {{"/r/lock/gone", {"0x1"}},
                              {"/r/lock/fired-since", {"0x2"}},
                              {"/r/lock/here", {"0x3"}}};
  const WatchListing second = {{"/r/lock/gone", {"0x1"}}, {"/r/lock/here", {"0x3"}}};
  auto exists = [](const std::string& path) { return path == "/r/lock/here"; };
  EXPECT_THAT(LeakedWatches(first, second, exists),
              ::testing::ElementsAre("/r/lock/gone (sessions 0x1)"));
  EXPECT_THAT(LeakedWatches(second, second, [](const std::string&) { return true; }),
              ::testing::IsEmpty());
}

TEST(ChaosCheckerTest, EachFaultKindIsSummarizedWithTheLoadAroundIt) {
  // Two faults; the load's counters every 1 s (times in ns). The first
  // fault (3 s .. 5 s) halves the load; a violation falls in the second's
  // span.
  std::vector<std::string> lines;
  int64_t sections = 0;
  for (int s = 0; s <= 12; ++s) {
    lines.push_back(absl::StrCat("LOAD ", s * 1'000'000'000LL, " ", sections, " ", s, " ", 2 * s));
    sections += (s >= 3 && s < 5) ? 50 : 100;
  }
  for (int w = 0; w < kWorkers; ++w) {
    lines.push_back(absl::StrCat("ENTER ", w, " R ", 10 + w, " 5500000000"));
    lines.push_back(absl::StrCat("EXIT ", w, " R ", 10 + w, " 5600000000"));
  }
  lines.push_back("NEMESIS 3000000000 kill_member begin 1");
  lines.push_back("NEMESIS 5000000000 kill_member end 1");
  lines.push_back("NEMESIS 8000000000 lose_quorum begin 0");
  lines.push_back("NEMESIS 9000000000 lose_quorum end 0");
  lines.push_back("ENTER 1 W 5 8500000000");  // a token gone backwards
  lines.push_back("EXIT 1 W 5 8600000000");
  Report r = CheckLines(lines);
  ASSERT_EQ(r.by_fault.size(), 2u);
  const FaultSummary& killed = r.by_fault["kill_member"];
  EXPECT_EQ(killed.count, 1);
  EXPECT_EQ(killed.violations, 0);
  EXPECT_EQ(killed.slowest_recovery_ns, 500'000'000);
  EXPECT_DOUBLE_EQ(killed.sections_before, 100);
  EXPECT_DOUBLE_EQ(killed.sections_during, 50);
  EXPECT_DOUBLE_EQ(killed.sections_after, 100);
  EXPECT_DOUBLE_EQ(killed.terms_during, 1);
  EXPECT_DOUBLE_EQ(killed.sem_during, 2);
  EXPECT_EQ(r.by_fault["lose_quorum"].violations, 1);
}

TEST(ChaosCheckerTest, NoMoreSemaphoreHoldersThanPermitsAmongUntoldHolders) {
  // Two permits; holders 0 and 1 hold 100..300, holder 2 enters at 200:
  // three untold holders at once.
  Report r = CheckLines({"SENTER 0 10 100 2", "SENTER 1 11 120 2", "SENTER 2 12 200 2",
                         "SEXIT 2 12 250 0", "SEXIT 0 10 300 0", "SEXIT 1 11 300 0"});
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_THAT(r.violations[0].text, ::testing::HasSubstr("(i) semaphore"));
  EXPECT_EQ(r.violations[0].t, 200);
  EXPECT_EQ(r.sem_sections, 3);
  EXPECT_EQ(r.sem_most_at_once, 3);
  // The same with holder 0 told SUSPENDED/LOST during its hold: it no
  // longer counts (the server may have handed its permit on).
  r = CheckLines({"SENTER 0 10 100 2", "SENTER 1 11 120 2", "SENTER 2 12 200 2",
                  "SEXIT 2 12 250 0", "SEXIT 0 10 300 1", "SEXIT 1 11 300 0"});
  EXPECT_THAT(r.violations, ::testing::IsEmpty());
  EXPECT_EQ(r.sem_told, 1);
  EXPECT_EQ(r.sem_most_at_once, 2);
  // One leaves before the next enters: fine.
  r = CheckLines({"SENTER 0 10 100 2", "SENTER 1 11 120 2", "SEXIT 1 11 199 0",
                  "SENTER 2 12 200 2", "SEXIT 2 12 250 0", "SEXIT 0 10 300 0"});
  EXPECT_THAT(r.violations, ::testing::IsEmpty());
}

TEST(ChaosCheckerTest, SamplesArePerMinuteAndRssAndDescriptorsMustStayFlat) {
  // 40 minutes of samples every 10 s (two workers and the load, and the
  // load's live heap), the workers' and the load's critical sections per
  // minute.
  auto run = [](int64_t last_rss_kib, int64_t last_fds, int64_t last_heap_kib = 20000) {
    std::vector<std::string> lines;
    const int64_t minute = 60'000'000'000LL;
    int64_t load_sections = 0, sem_sections = 0;
    for (int m = 0; m < 40; ++m) {
      for (int tick = 0; tick < 6; ++tick) {
        const int64_t t = m * minute + tick * 10'000'000'000LL;
        const bool last = m >= 30;
        lines.push_back(absl::StrCat("SAMPLE ", t, " 101 worker 1000 10"));
        lines.push_back(absl::StrCat("SAMPLE ", t, " 102 worker 1000 10"));
        lines.push_back(absl::StrCat("SAMPLE ", t, " 200 load ", last ? last_rss_kib : 50000, " ",
                                     last ? last_fds : 200));
        lines.push_back(absl::StrCat("HEAP ", t + 2, " 200 load ", last ? last_heap_kib : 20000,
                                     " 30000"));
        load_sections += 100;
        sem_sections += 10;
        lines.push_back(absl::StrCat("LOAD ", t + 1, " ", load_sections, " 0 ", sem_sections));
      }
      lines.push_back(absl::StrCat("ENTER 0 W ", m + 1, " ", m * minute + 5));
      lines.push_back(absl::StrCat("EXIT 0 W ", m + 1, " ", m * minute + 6));
    }
    return CheckLines(lines);
  };
  Report flat = run(54000, 208);  // +8% and +8 descriptors: flat
  EXPECT_THAT(flat.violations, ::testing::IsEmpty());
  ASSERT_EQ(flat.minutes.size(), 40u);
  EXPECT_EQ(flat.minutes[5].worker_rss_kib, 2000);
  EXPECT_EQ(flat.minutes[5].worker_fds, 20);
  EXPECT_EQ(flat.minutes[5].load_rss_kib, 50000);
  EXPECT_EQ(flat.minutes[5].worker_sections, 1);
  EXPECT_EQ(flat.minutes[5].load_sections, 600);
  EXPECT_EQ(flat.minutes[5].sem_sections, 60);
  EXPECT_EQ(flat.minutes[5].load_heap_kib, 20000);
  EXPECT_TRUE(flat.flatness_judged);
  EXPECT_THAT(flat.flatness, ::testing::Contains(::testing::HasSubstr("the load's live heap")));
  // The live heap grown 12% with RSS flat: a leak the allocator hides.
  Report heap_grown = run(50000, 200, 22400);
  ASSERT_EQ(heap_grown.violations.size(), 1u);
  EXPECT_THAT(heap_grown.violations[0].text, ::testing::HasSubstr("(j) the load's live heap"));
  EXPECT_TRUE(run(50000, 200, 21800).violations.empty());  // +9%: flat
  Report grown = run(56000, 200);  // +12% RSS
  ASSERT_EQ(grown.violations.size(), 1u);
  EXPECT_THAT(grown.violations[0].text, ::testing::HasSubstr("(j) the load's RSS"));
  Report leaking = run(50000, 209);  // +9 descriptors
  ASSERT_EQ(leaking.violations.size(), 1u);
  EXPECT_THAT(leaking.violations[0].text, ::testing::HasSubstr("(j) the load's descriptors"));
  // Under 30 minutes of samples: not judged.
  Report short_run = CheckLines({"SAMPLE 0 200 load 100 10", "SAMPLE 60000000000 200 load 900 90"});
  EXPECT_FALSE(short_run.flatness_judged);
  EXPECT_THAT(short_run.violations, ::testing::IsEmpty());
}

// The plot's PNG, checked without the encoder's own code: chunk CRCs by a
// bitwise CRC-32, the zlib trailer by a plain Adler-32 of the expected
// scanlines, and the stream inflated by python3's zlib where python3 is
// installed.
uint32_t BitwiseCrc32(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

uint32_t Get32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         uint32_t{static_cast<unsigned char>(s[at + 3])};
}

struct DecodedPng {
  uint32_t width = 0, height = 0;
  std::string idat;  // the zlib stream
};

// Walks the chunks, checking each CRC.
DecodedPng WalkPng(const std::string& png) {
  DecodedPng d;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::vector<std::string> types;
  size_t at = 8;
  while (at + 12 <= png.size()) {
    const uint32_t length = Get32(png, at);
    const std::string body = png.substr(at + 4, 4 + length);
    EXPECT_EQ(Get32(png, at + 8 + length), BitwiseCrc32(body)) << "chunk " << body.substr(0, 4);
    types.push_back(body.substr(0, 4));
    if (types.back() == "IHDR") {
      d.width = Get32(body, 4);
      d.height = Get32(body, 8);
      EXPECT_EQ(body.substr(12, 5), std::string("\x08\x03\x00\x00\x00", 5));
    }
    if (types.back() == "IDAT") d.idat += body.substr(4);
    at += 12 + length;
  }
  EXPECT_EQ(at, png.size());
  EXPECT_THAT(types, ::testing::ElementsAre("IHDR", "PLTE", "IDAT", "IEND"));
  return d;
}

// The scanlines python3's zlib inflates from `stream`; nullopt without
// python3.
std::optional<std::string> InflateWithPython(const std::string& stream) {
  if (std::system("python3 -c '' 2>/dev/null") != 0) return std::nullopt;
  const std::string base = ::testing::TempDir() + "plot_test_" + std::to_string(getpid());
  std::ofstream(base + ".z", std::ios::binary) << stream;
  const std::string command = "python3 -c 'import zlib,sys; open(sys.argv[2],\"wb\").write("
                              "zlib.decompress(open(sys.argv[1],\"rb\").read()))' " +
                              base + ".z " + base + ".raw";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(base + ".raw", std::ios::binary);
  std::stringstream raw;
  raw << in.rdbuf();
  std::remove((base + ".z").c_str());
  std::remove((base + ".raw").c_str());
  return raw.str();
}

TEST(ChaosPlotTest, EncodesAValidPngWhoseStreamInflatesToTheScanlines) {
  // Runs, rows repeating the one above, and literals of every size of code.
  const int w = 37, h = 23;
  std::vector<Color> palette(256);
  std::vector<uint8_t> pixels;
  std::string scanlines;
  for (int y = 0; y < h; ++y) {
    scanlines.push_back(0);
    for (int x = 0; x < w; ++x) {
      const uint8_t v = y < 8 ? (x / 5 + y / 3) % 6 : y < 16 ? (x * 7 + y * 13) % 256 : 5;
      pixels.push_back(v);
      scanlines.push_back(static_cast<char>(v));
    }
  }
  const std::string png = EncodePng(w, h, palette, pixels);
  const DecodedPng d = WalkPng(png);
  EXPECT_EQ(d.width, 37u);
  EXPECT_EQ(d.height, 23u);
  ASSERT_GE(d.idat.size(), 6u);
  EXPECT_EQ((static_cast<unsigned char>(d.idat[0]) * 256 + static_cast<unsigned char>(d.idat[1])) % 31,
            0);
  uint32_t a = 1, b = 0;
  for (unsigned char c : scanlines) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  EXPECT_EQ(Get32(d.idat, d.idat.size() - 4), (b << 16) | a);
  if (std::optional<std::string> raw = InflateWithPython(d.idat)) {
    EXPECT_EQ(*raw, scanlines);
  } else {
    std::printf("python3 not installed: the stream was checked by its Adler-32 only\n");
  }
}

TEST(ChaosPlotTest, PlotsTheMinutes) {
  std::vector<Minute> minutes(61);
  for (int m = 0; m < 61; ++m) {
    minutes[m] = Minute{80000 + m, 160, 150000, 220, 900, 60000 - 50 * m, 9000};
  }
  minutes[7].load_rss_kib = -1;  // a minute without samples: a gap
  const std::string png = PlotMinutes(minutes);
  const DecodedPng d = WalkPng(png);
  EXPECT_EQ(d.width, 760u);
  EXPECT_EQ(d.height, 600u);
  if (std::optional<std::string> raw = InflateWithPython(d.idat)) {
    EXPECT_EQ(raw->size(), 600u * 761u);
  }
  EXPECT_LT(png.size(), 200'000u) << "the committed plot should stay small";
}

}  // namespace
}  // namespace chaos
}  // namespace zkr
