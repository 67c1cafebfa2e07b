// How zkr shows a queue participant to people: its host and pid (from a
// zkr node's name, "<host>_<pid>_<random>-..."), its mode, its age.
// Shared by zkr inspect and zkr ls.
#ifndef ZKRECIPES_TOOLS_ZKR_PARTICIPANT_TEXT_H_
#define ZKRECIPES_TOOLS_ZKR_PARTICIPANT_TEXT_H_

#include <string>

#include "absl/time/time.h"
#include "zkrecipes/inspect.h"

namespace zkr {
namespace cli {

// The host of a zkr participant ("-" for a peer's: Curator's and Kazoo's
// names are random uuids).
std::string HostOf(const QueueEntryInfo& e);
// Its pid ("-" where not known).
std::string PidOf(const QueueEntryInfo& e);
// "R", "W", "M" (a double barrier's member) or "S2/4" (2 of 4 leases).
std::string ModeOf(const QueueEntryInfo& e);
// How long its node has existed, to a tenth of a second ("12.3s", "1m2.5s").
std::string AgeOf(const QueueEntryInfo& e, absl::Time now);

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_PARTICIPANT_TEXT_H_
