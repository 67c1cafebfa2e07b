// What a session accepts: its options and the size of a request.
#include "src/session_limits.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "src/macros.h"
#include "src/paths.h"

namespace zkr {
namespace internal {
namespace {

// What a request carries besides its ops: the packet's length and header,
// a multi's end marker. And per op: its header, version, flags and the
// length fields of path and data. Generous, so that a write that passes
// the check also passes the server's.
constexpr size_t kRequestOverhead = 64;
constexpr size_t kOpOverhead = 32;
constexpr size_t kAclEntryOverhead = 16;  // perms and two length fields
constexpr size_t kMinRequestBytes = 1024;
// The SetWatches packet beside its paths: the request header (xid, type),
// the last zxid and the three lists' counts.
constexpr size_t kSetWatchesOverhead = 8 + 8 + 3 * 4;
// Each watched path in it: its length field.
constexpr size_t kWatchedPathOverhead = 4;

// The connect string's chroot, which the C client puts before every path.
size_t ChrootBytes(const SessionOptions& options) {
  const size_t chroot = options.connect.find('/');
  return chroot == std::string::npos ? 0 : options.connect.size() - chroot;
}
constexpr absl::Duration kMaxSessionTimeout = absl::Hours(24);
// The C client waits 2/3 of the requested timeout for a connection before the
// server has negotiated one: below a round trip or two it never connects.
// Servers raise anything below their minimum (two ticks, 4 s by default).
constexpr absl::Duration kMinSessionTimeout = absl::Milliseconds(100);

}  // namespace

absl::Status ValidateSessionOptions(const SessionOptions& options) {
  ZKR_RETURN_IF_ERROR(ValidateConnectString(options.connect));
  if (options.session_timeout < kMinSessionTimeout) {
    return absl::InvalidArgumentError(absl::StrCat(
        "session_timeout must be at least ", absl::FormatDuration(kMinSessionTimeout), ", got ",
        absl::FormatDuration(options.session_timeout)));
  }
  // The C client keeps it in int milliseconds and takes 2/3 of twice it;
  // servers cap it far lower (maxSessionTimeout, 40 s by default).
  if (options.session_timeout > kMaxSessionTimeout) {
    return absl::InvalidArgumentError(absl::StrCat(
        "session_timeout must be at most ", absl::FormatDuration(kMaxSessionTimeout), ", got ",
        absl::FormatDuration(options.session_timeout)));
  }
  if (options.connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "connect_timeout must be positive, got ", absl::FormatDuration(options.connect_timeout)));
  }
  if (!options.digest_auth.empty() && options.digest_auth.find(':') == std::string::npos) {
    return absl::InvalidArgumentError(
        "digest_auth must read \"user:password\" (the value has no ':')");
  }
  if (options.max_request_bytes < kMinRequestBytes) {
    return absl::InvalidArgumentError(absl::StrCat("max_request_bytes must be at least ",
                                                   kMinRequestBytes, ", got ",
                                                   options.max_request_bytes));
  }
  if (options.retry.max_attempts < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "retry.max_attempts must be at least 1, got ", options.retry.max_attempts));
  }
  return absl::OkStatus();
}

size_t OpBytes(const SessionOptions& options, const std::vector<Acl>& default_acl,
               size_t path_bytes, const std::vector<Acl>* acl) {
  // The C client sends the path with the connect string's chroot before it.
  size_t bytes = path_bytes + kOpOverhead + ChrootBytes(options);
  if (acl != nullptr) {
    for (const Acl& entry : acl->empty() ? default_acl : *acl) {
      bytes += entry.scheme.size() + entry.id.size() + kAclEntryOverhead;
    }
  }
  return bytes;
}

absl::Status CheckRequestSize(const SessionOptions& options, absl::string_view op,
                              absl::string_view path, size_t data_bytes) {
  const size_t bytes = data_bytes + kRequestOverhead;
  if (bytes <= options.max_request_bytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      op, " ", path, ": a request of about ", bytes,
      " bytes, over the server's packet limit of ", options.max_request_bytes,
      " bytes (SessionOptions::max_request_bytes, the server's jute.maxbuffer)"));
}

size_t WatchBytesLimit(const SessionOptions& options) {
  return options.max_request_bytes - kSetWatchesOverhead;
}

size_t WatchedPathOverhead(const SessionOptions& options) {
  return kWatchedPathOverhead + ChrootBytes(options);
}

size_t WatchReservationLimit(const SessionOptions& options) {
  const size_t limit = WatchBytesLimit(options);
  return limit - limit / 8;
}

}  // namespace internal
}  // namespace zkr
