// --stats: a one-line summary, on stderr at exit, of what zkr's session
// observed (zkrecipes/observer.h): acquisitions and how long they waited and
// were held, handoffs, losses, election terms, suspensions and retries.
//
//   zkr lock: stats: acquired=1 failed=0 waited=1.2ms position=0 handoffs=0
//     held=2.01s released=1 lost=0 terms=0 led=0 suspended=0 suspended_for=0
//     sessions_lost=0 retries=0
// (one line; durations as absl::FormatDuration).
#ifndef ZKRECIPES_TOOLS_ZKR_STATS_H_
#define ZKRECIPES_TOOLS_ZKR_STATS_H_

#include <memory>
#include <string>

#include "zkrecipes/observer.h"

namespace zkr {
namespace cli {

class SessionStats;

// Declare it before the session: it prints when it goes, after the session
// (whose destruction runs the observer's last events).
class StatsLine {
 public:
  // `what`: the subcommand ("lock"). Reports only with --stats.
  explicit StatsLine(std::string what);
  ~StatsLine();
  StatsLine(const StatsLine&) = delete;
  StatsLine& operator=(const StatsLine&) = delete;

  // The observer for SessionOptions::observer; null without --stats.
  std::shared_ptr<Observer> observer() const;

 private:
  const std::string what_;
  std::shared_ptr<SessionStats> stats_;
};

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_STATS_H_
