// The fixture of the zkr tests that check "never two CMDs at once" with the
// ledger (tests/support/cli_ledger.h): CMDs that stamp File("ledger"), waits
// for their stamps, the overlap check, a proxy for partitions, zkr started
// with SIGHUP ignored, and the clean-up of a queue whose holders were cut off.
//
// The hang bounds are the suite's own (LedgerBounds): a suite whose CMDs stop
// slowly (the default --grace, a CMD that takes 3 s) waits longer than one
// whose CMDs obey at once; no suite's bound is loosened by sharing this.
#ifndef ZKRECIPES_TESTS_SUPPORT_CLI_LEDGER_FIXTURE_H_
#define ZKRECIPES_TESTS_SUPPORT_CLI_LEDGER_FIXTURE_H_

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/cli_ledger.h"
#include "tests/support/cli_process.h"
#include "zkrecipes/testing/tcp_proxy.h"

namespace zkr {
namespace testing {

// How long a ledger suite waits before it calls a wait a hang.
struct LedgerBounds {
  absl::Duration stamps;   // for a CMD's first stamps (WaitForRuns, WaitForStamps)
  absl::Duration cleanup;  // for the nodes of killed processes to go (CleanUp)
};

class CliLedgerTest : public CliTest {
 protected:
  explicit CliLedgerTest(LedgerBounds bounds) : bounds_(bounds) {}

  std::string Ledger() const { return File("ledger"); }
  // A CMD stamping the ledger as `name` (LedgerCommand).
  std::vector<std::string> Stamping(const std::string& name, OnTerm on_term, int stamps = -1,
                                    const std::string& also_ignore = "") {
    return LedgerCommand(Ledger(), name, on_term, stamps, also_ignore);
  }
  // The number of runs of `name` in the ledger.
  int Runs(const std::string& name) { return LedgerRunsOf(ReadFile(Ledger()), name + "-"); }
  // The number of stamps of all runs of `name`.
  int Stamps(const std::string& name) {
    int n = 0;
    for (const auto& [run, stamps] : LedgerRuns(ReadFile(Ledger()))) {
      if (absl::StartsWith(run, name + "-")) n += stamps.stamps;
    }
    return n;
  }
  // Waits (bounded) until `name` has stamped in `runs` runs; fails early if
  // `owner` exits.
  bool WaitForRuns(const std::string& name, Process& owner, int runs = 1) {
    WaitUntil([&] { return Runs(name) >= runs || owner.Exited(); }, bounds_.stamps);
    return Runs(name) >= runs;
  }
  // Waits (bounded) until `name` has stamped `stamps` times; fails early if
  // `owner` exits.
  bool WaitForStamps(const std::string& name, Process& owner, int stamps = 1) {
    WaitUntil([&] { return Stamps(name) >= stamps || owner.Exited(); }, bounds_.stamps);
    return Stamps(name) >= stamps;
  }
  // The shell pid of `name`'s first run, or -1.
  pid_t CmdPid(const std::string& name) {
    for (const auto& [run, s] : LedgerRuns(ReadFile(Ledger()))) {
      if (!absl::StartsWith(run, name + "-")) continue;
      int pid = 0;
      if (absl::SimpleAtoi(run.substr(name.size() + 1), &pid)) return pid;
    }
    return -1;
  }
  // No two runs overlap in the ledger.
  void ExpectNoOverlap() {
    std::string overlaps;
    EXPECT_EQ(LedgerOverlaps(ReadFile(Ledger()), &overlaps), 0)
        << overlaps << Everyone() << "ledger:\n" << ReadFile(Ledger());
  }
  // What every process printed, for failure messages.
  std::string Everyone() {
    std::string text;
    for (auto& process : processes_) absl::StrAppend(&text, process->Describe(), "\n");
    return text;
  }
  // The most runs that were running at once (their [first, last] intersect).
  int MaxConcurrent() {
    std::vector<std::pair<int64_t, int>> events;
    for (const auto& [name, run] : LedgerRuns(ReadFile(Ledger()))) {
      events.push_back({run.first, +1});
      events.push_back({run.last, -1});
    }
    // At one instant, starts before ends: touching intervals count as overlapping.
    std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    int now = 0, most = 0;
    for (const auto& [t, d] : events) most = std::max(most, now += d);
    return most;
  }
  // A proxy to the embedded server, for partitions (null without one).
  std::unique_ptr<TcpProxy> Proxy() {
    if (SharedServer() == nullptr) return nullptr;
    auto proxy = TcpProxy::Start("127.0.0.1", SharedServer()->client_port());
    return proxy.ok() ? std::move(*proxy) : nullptr;
  }
  // Starts `argv` (not zkr itself: a wrapper that execs it).
  Process& Started(const std::vector<std::string>& argv) {
    const int n = static_cast<int>(processes_.size());
    processes_.push_back(std::make_unique<Process>(argv, File(absl::StrCat("p", n, ".out")),
                                                   File(absl::StrCat("p", n, ".err"))));
    return *processes_.back();
  }
  // `zkr <args>` started with SIGHUP ignored, as nohup(1) does.
  Process& ZkrIgnoringHangup(std::vector<std::string> args) {
    args.insert(args.begin() + 1, absl::StrCat("--zk=", connect_));
    return Started(Concat({"sh", "-c", "trap '' HUP; exec \"$0\" \"$@\"", binary_}, args));
  }
  // Ends every process still running, waits for their nodes to go (their
  // sessions expire) and deletes the queue directory `path`.
  void CleanUp(const std::string& path) {
    for (auto& process : processes_) process->KillGroup();
    EXPECT_TRUE(WaitForChildren(path, 0, bounds_.cleanup)) << "nodes stayed under " << path;
    ExpectEmptyAndDelete(path);
  }
  // The revocation request node under `path` ("<node>.revoke"), or "".
  std::string RequestNode(const std::string& path) {
    for (const std::string& child : Children(path)) {
      if (absl::EndsWith(child, ".revoke")) return absl::StrCat(path, "/", child);
    }
    return "";
  }
  // Whether the request under `path` was marked (forced: data version > 0).
  bool RequestMarked(const std::string& path) {
    const std::string request = RequestNode(path);
    if (request.empty()) return false;
    auto stat = admin().Exists(request);
    return stat.ok() && stat->has_value() && (*stat)->version > 0;
  }
  bool StderrHas(Process& p, const std::string& text) {
    return absl::StrContains(p.Stderr(), text);
  }

 private:
  const LedgerBounds bounds_;
};

// The two sets of bounds the ledger suites were written with (neither is
// loosened to the other): the first suites' (cli_overlap_test) ...
inline constexpr LedgerBounds kLedgerBounds = {absl::Seconds(20), absl::Seconds(30)};
// ... and the review's (issue 32), whose scenarios wait out more grace
// periods and session expiries.
inline constexpr LedgerBounds kLedgerBoundsLong = {absl::Seconds(30), absl::Seconds(40)};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_CLI_LEDGER_FIXTURE_H_
