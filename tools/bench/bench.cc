#include "tools/bench/bench.h"

#include <unistd.h>
#include <zookeeper/zookeeper_version.h>

#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/bench/compare.h"
#include "tools/bench/stats.h"
#include "tools/bench/workloads.h"
#include "zkrecipes/testing/zookeeper_server.h"

namespace zkr {
namespace bench {
namespace {

std::string Json(const Result& r, const std::string& settings) {
  std::string out = absl::StrFormat(
      "{\"workload\":\"%s\",\"name\":\"%s\",\"p50_us\":%.1f,\"p99_us\":%.1f,\"ratio\":%.3f,"
      "\"target\":\"%s\",\"met\":%s,\"missed\":\"%s\"",
      r.id, r.name, r.p50_us, r.p99_us, r.ratio, r.target, r.met ? "true" : "false",
      absl::StrJoin(r.shortfalls, "; "));
  for (const auto& [name, value] : r.figures) absl::StrAppendFormat(&out, ",\"%s\":%.3f", name, value);
  absl::StrAppend(&out, ",\"settings\":", settings, "}");
  return out;
}

void PrintRow(const Result& r) {
  std::string figures;
  for (const auto& [name, value] : r.figures) {
    absl::StrAppendFormat(&figures, "%s%s=%.4g", figures.empty() ? "" : " ", name, value);
  }
  absl::PrintF("%-3s %-58s %9s %9s %7s  %-28s %s\n", r.id, r.name,
               r.p50_us > 0 ? absl::StrFormat("%.0fus", r.p50_us) : "-",
               r.p99_us > 0 ? absl::StrFormat("%.0fus", r.p99_us) : "-",
               r.ratio > 0 ? absl::StrFormat("%.2fx", r.ratio) : "-",
               r.target.empty() ? "" : absl::StrCat(r.target, r.met ? " (met)" : " (MISSED)"),
               figures + (r.shortfalls.empty()
                              ? ""
                              : absl::StrCat("  MISSED: ", absl::StrJoin(r.shortfalls, "; "))));
}

}  // namespace

int RunBench(const BenchOptions& options) {
  std::unique_ptr<testing::ZooKeeperServer> server;
  std::unique_ptr<testing::ZooKeeperEnsemble> ensemble;
  Context context;
  context.connect = options.connect;
  context.quick = options.quick;
  if (options.ensemble != 0) {
    if ((options.ensemble != 3 && options.ensemble != 5) || !options.connect.empty()) {
      std::fprintf(stderr, "zkr bench: --ensemble=%d: expected 3 or 5, and no --zk\n",
                   options.ensemble);
      return 2;
    }
    auto started = testing::ZooKeeperEnsemble::Start(options.ensemble);
    if (!started.ok()) {
      std::fprintf(stderr, "zkr bench: %s\n", std::string(started.status().message()).c_str());
      return 1;
    }
    ensemble = std::move(*started);
    context.connect = ensemble->connect_string();
  } else if (context.connect.empty()) {
    auto started = testing::ZooKeeperServer::Start();
    if (!started.ok()) {
      std::fprintf(stderr, "zkr bench: %s\n", std::string(started.status().message()).c_str());
      return 1;
    }
    server = std::move(*started);
    context.connect = server->connect_string();
  }
  context.root = absl::StrCat("/zkr-bench-", getpid());
  const std::string settings = absl::StrFormat(
      "{\"zookeeper_client\":\"%s\",\"server\":\"%s\",\"quick\":%s,\"cpus\":%d}",
      ZOO_VERSION,
      server != nullptr     ? "embedded, forceSync=no"
      : ensemble != nullptr ? absl::StrCat("loopback ensemble of ", options.ensemble)
                            : context.connect,
      options.quick ? "true" : "false",
      static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  if (!options.json) {
    absl::PrintF("zkr bench: ZooKeeper C client %s, server %s; ratios are to the raw C-client "
                 "floor measured in this run\n\n",
                 ZOO_VERSION,
                 server != nullptr     ? "embedded (loopback, forceSync=no)"
                 : ensemble != nullptr ? absl::StrCat("a loopback ensemble of ", options.ensemble,
                                                      " members (", context.connect, ")")
                                       : context.connect);
    absl::PrintF("%-3s %-58s %9s %9s %7s  %-28s %s\n", "#", "workload", "p50", "p99", "ratio",
                 "target", "figures");
  }
  using Workload = absl::StatusOr<std::vector<Result>> (*)(Context&);
  const std::pair<const char*, Workload> workloads[] = {
      {"1", RawFloor},       {"2", Uncontended}, {"3", Handoff},          {"4", MixedReadWrite},
      {"5", ManyLocks},      {"6", DeepQueue},   {"7", ElectionFailover}, {"8", OtherLibraries},
      {"9", SemaphoreContention},
  };
  std::vector<std::string> only = absl::StrSplit(options.only, ',', absl::SkipEmpty());
  bool all_met = true;
  for (const auto& [number, run] : workloads) {
    // The floor (1) is always measured: everything else is a ratio to it.
    // The comparison (8) runs only when asked for.
    const bool listed = std::find(only.begin(), only.end(), number) != only.end();
    if (std::string(number) == "8" ? !options.compare && !listed
                                   : !only.empty() && std::string(number) != "1" && !listed) {
      continue;
    }
    absl::StatusOr<std::vector<Result>> results = run(context);
    if (!results.ok()) {
      std::fprintf(stderr, "zkr bench: workload %s failed: %s\n", number,
                   std::string(results.status().message()).c_str());
      return 1;
    }
    for (Result& r : *results) {
      if (r.in_process) r.figures.push_back({"peak_rss_kib", double(PeakRssKib())});
      all_met &= r.met;
      if (options.json) {
        std::printf("%s\n", Json(r, settings).c_str());
      } else {
        PrintRow(r);
      }
      std::fflush(stdout);
    }
  }
  if (!options.json) {
    absl::PrintF("\n%s\n", all_met ? "all targets met"
                                   : "some targets MISSED (see the rows marked MISSED)");
  }
  return 0;
}

}  // namespace bench
}  // namespace zkr
