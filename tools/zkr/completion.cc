#include "tools/zkr/completion.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/zkr/flags.h"

namespace zkr {
namespace cli {
namespace {

// The words that may follow `zkr SUB`: its flags ("--path=", "--stats") and
// action words (group join|list, barrier set|remove|wait|enter).
std::string WordsOf(const std::string& sub) {
  std::set<std::string> words;
  for (const FlagRow& row : FlagRows()) {
    if (!Takes(row.takers, sub, "")) continue;
    words.insert(absl::StrCat("--", row.name, *row.value != '\0' ? "=" : ""));
  }
  words.insert("--help");
  std::vector<std::string> out(words.begin(), words.end());
  if (sub != "elect") {
    for (const std::string& mode : ModesOf(sub)) {
      if (!mode.empty()) out.push_back(mode);
    }
  }
  return absl::StrJoin(out, " ");
}

// The flags whose value is one of a fixed set ("read|write|exclusive"), and
// those whose value is a file.
std::map<std::string, std::string> ValuesOf() {
  std::map<std::string, std::string> values;
  for (const FlagRow& row : FlagRows()) {
    const std::string value = row.value;
    if (value == "FILE") {
      values[row.name] = "FILE";
    } else if (value.find('|') != std::string::npos) {
      values[row.name] = absl::StrJoin(absl::StrSplit(value, '|'), " ");
    }
  }
  return values;
}

}  // namespace

std::string BashCompletion() {
  std::string words = "_zkr_words() {\n  case \"$1\" in\n";
  absl::StrAppend(&words, "    \"\") echo \"", absl::StrJoin(SubcommandNames(), " "),
                  " --help --version\" ;;\n");
  for (const std::string& sub : SubcommandNames()) {
    absl::StrAppend(&words, "    ", sub, ") echo \"", WordsOf(sub), "\" ;;\n");
  }
  words += "  esac\n}\n";
  std::string values = "_zkr_values() {\n  case \"$1\" in\n";
  for (const auto& [name, choices] : ValuesOf()) {
    absl::StrAppend(&values, "    --", name, ") echo \"", choices, "\" ;;\n");
  }
  values += "  esac\n}\n";
  return absl::StrCat(
      "# bash completion for zkr, made by `zkr --bash-completion` from zkr's flag table.\n",
      words, values, R"bash(_zkr() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
  local sub="" flag="" i word
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    if [ "$word" = "--" ]; then
      # CMD: a command first, then its files.
      if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
        COMPREPLY=($(compgen -c -- "$cur" | sort -u))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      return 0
    fi
    case "$word" in
      -*|=) ;;
      *) [ -z "$sub" ] && [ "${COMP_WORDS[i-1]}" != "=" ] && sub="$word" ;;
    esac
  done
  # bash splits "--mode=re" into "--mode" "=" "re".
  if [ "$cur" = "=" ]; then
    flag="$prev"
    cur=""
  elif [ "$prev" = "=" ]; then
    flag="${COMP_WORDS[COMP_CWORD-2]}"
  fi
  if [ -n "$flag" ]; then
    local values
    values="$(_zkr_values "$flag")"
    if [ "$values" = "FILE" ]; then
      COMPREPLY=($(compgen -f -- "$cur"))
    elif [ -n "$values" ]; then
      COMPREPLY=($(compgen -W "$values" -- "$cur"))
    fi
    return 0
  fi
  COMPREPLY=($(compgen -W "$(_zkr_words "$sub")" -- "$cur"))
  # "--path=" takes its value right after the "=".
  if [ ${#COMPREPLY[@]} -eq 1 ] && [ "${COMPREPLY[0]%=}" != "${COMPREPLY[0]}" ]; then
    compopt -o nospace 2>/dev/null
  fi
  return 0
}
complete -F _zkr zkr
)bash");
}

}  // namespace cli
}  // namespace zkr
