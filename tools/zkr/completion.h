// `zkr --bash-completion`: a bash completion script for zkr, made from the
// flag table (tools/zkr/flags.h), so it completes exactly what zkr takes:
// subcommands, each subcommand's flags and action words, the values of flags
// that have a fixed set ("--mode=read|write|exclusive"), and after "--" the
// command and its files. The package installs it as
// /usr/share/bash-completion/completions/zkr.
#ifndef ZKRECIPES_TOOLS_ZKR_COMPLETION_H_
#define ZKRECIPES_TOOLS_ZKR_COMPLETION_H_

#include <string>

namespace zkr {
namespace cli {

std::string BashCompletion();

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_COMPLETION_H_
