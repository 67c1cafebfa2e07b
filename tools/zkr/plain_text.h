// Plain (non-JSON) output of text that other clients wrote: node data, ids,
// reasons. Escaped so that it cannot break the one-line formats (group list,
// inspect) or drive the terminal (ESC sequences).
#ifndef ZKRECIPES_TOOLS_ZKR_PLAIN_TEXT_H_
#define ZKRECIPES_TOOLS_ZKR_PLAIN_TEXT_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"

namespace zkr {
namespace cli {

// `bytes` for plain output, C-style escaped and reversible: backslash is
// "\\", newline "\n", tab "\t", carriage return "\r", every other C0 control
// and DEL "\xNN", a C1 control (U+0080..U+009F, e.g. U+009B, the 8-bit CSI)
// "\uNNNN", and each byte of a malformed UTF-8 sequence "\xNN". Everything
// else — printable ASCII and well-formed UTF-8 text such as "café" — is
// copied as is. (absl::CHexEscape would escape all non-ASCII text;
// absl::Utf8SafeCHexEscape passes malformed UTF-8 and C1 controls through.)
std::string PlainText(absl::string_view bytes);

// The one escaping walk of PlainText and JsonString: `text` by code point;
// `escape(code, &out)` appends the escape of a code point it escapes and
// returns true, or returns false to have it copied as is. Each byte of a
// malformed UTF-8 sequence becomes "\xNN".
std::string EscapeEach(absl::string_view text,
                       absl::FunctionRef<bool(int32_t code, std::string* out)> escape);

// Whether code point `code` is a control character that no output of ours
// shows raw: C0 (below U+0020), DEL and C1 (U+0080..U+009F). PlainText and
// JsonString escape exactly these (besides their own quoting characters).
inline bool IsControlCharacter(int32_t code) {
  return (code >= 0 && code < 0x20) || (code >= 0x7f && code <= 0x9f);
}

}  // namespace cli
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_ZKR_PLAIN_TEXT_H_
