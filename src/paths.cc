#include "src/paths.h"

#include <cstdint>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/utf8.h"

namespace zkr {
namespace internal {
namespace {

// The characters ZooKeeper refuses in paths.
bool IsForbidden(int32_t c) {
  return c < 0 || c <= 0x1F || (c >= 0x7F && c <= 0x9F) ||
         (c >= 0xD800 && c <= 0xF8FF) || (c >= 0xFFF0 && c <= 0xFFFF);
}

absl::Status CheckCharacters(absl::string_view what, absl::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    size_t at = pos;
    int32_t c = DecodeUtf8(text, &pos);
    if (IsForbidden(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid ", what, " \"", absl::CHexEscape(text),
          "\": forbidden or malformed character at byte ", at));
    }
  }
  return absl::OkStatus();
}

bool IsHostCharacter(char c) {
  return absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '_';
}

absl::Status ValidateHostPort(absl::string_view connect, absl::string_view entry) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid connect string \"", connect, "\": \"", entry, "\" ", why));
  };
  size_t colon = entry.rfind(':');
  if (colon == absl::string_view::npos) return bad("has no :port");
  absl::string_view host = entry.substr(0, colon);
  absl::string_view port_text = entry.substr(colon + 1);
  int port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port < 1 || port > 65535) {
    return bad("has a port outside 1..65535");
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    for (char c : host.substr(1, host.size() - 2)) {
      if (!absl::ascii_isxdigit(c) && c != ':' && c != '.') return bad("is not a valid IPv6 literal");
    }
    return absl::OkStatus();
  }
  if (host.empty()) return bad("has an empty host");
  for (char c : host) {
    if (!IsHostCharacter(c)) return bad("has an invalid host name");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePath(absl::string_view path) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid path \"", absl::CHexEscape(path), "\": ", why));
  };
  if (path.empty()) return bad("empty");
  if (path.front() != '/') return bad("must start with '/'");
  if (path.size() == 1) return absl::OkStatus();
  if (path.back() == '/') return bad("must not end with '/'");
  for (absl::string_view segment : absl::StrSplit(path.substr(1), '/')) {
    if (segment.empty()) return bad("empty segment");
    if (segment == "." || segment == "..") return bad("relative segment");
  }
  return CheckCharacters("path", path);
}

absl::Status ValidateNodeName(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("invalid node name: empty");
  if (name.find('/') != absl::string_view::npos || name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid node name \"", absl::CHexEscape(name), "\": contains '/' or is relative"));
  }
  return CheckCharacters("node name", name);
}

absl::Status ValidateConnectString(absl::string_view connect) {
  if (connect.empty()) return absl::InvalidArgumentError("invalid connect string: empty");
  absl::string_view hosts = connect;
  size_t slash = connect.find('/');
  if (slash != absl::string_view::npos) {
    hosts = connect.substr(0, slash);
    absl::string_view chroot = connect.substr(slash);
    if (chroot == "/") {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid connect string \"", connect, "\": chroot \"/\""));
    }
    absl::Status chroot_status = ValidatePath(chroot);
    if (!chroot_status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid connect string \"", connect, "\": chroot: ", chroot_status.message()));
    }
  }
  for (absl::string_view entry : absl::StrSplit(hosts, ',')) {
    absl::Status status = ValidateHostPort(connect, entry);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

std::vector<std::string> AncestorsAndSelf(absl::string_view path) {
  std::vector<std::string> paths;
  for (size_t slash = path.find('/', 1); slash != absl::string_view::npos;
       slash = path.find('/', slash + 1)) {
    paths.emplace_back(path.substr(0, slash));
  }
  paths.emplace_back(path);
  return paths;
}

std::string ParentPath(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos || slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

absl::string_view NodeName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(absl::string_view parent, absl::string_view child) {
  if (parent == "/") return absl::StrCat("/", child);
  return absl::StrCat(parent, "/", child);
}

}  // namespace internal
}  // namespace zkr
