#include "tools/zkr/plain_text.h"

#include "absl/strings/str_format.h"
#include "src/utf8.h"

namespace zkr {
namespace cli {

std::string PlainText(absl::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t pos = 0; pos < bytes.size();) {
    const size_t start = pos;
    const int32_t code = internal::DecodeUtf8(bytes, &pos);
    if (code < 0) {  // malformed: each of its bytes
      for (size_t i = start; i < pos; ++i) {
        absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(bytes[i]));
      }
    } else if (code == '\\') {
      out += "\\\\";
    } else if (code == '\n') {
      out += "\\n";
    } else if (code == '\t') {
      out += "\\t";
    } else if (code == '\r') {
      out += "\\r";
    } else if (IsControlCharacter(code) && code < 0x80) {
      absl::StrAppendFormat(&out, "\\x%02x", code);
    } else if (IsControlCharacter(code)) {
      absl::StrAppendFormat(&out, "\\u%04x", code);
    } else {
      out.append(bytes.data() + start, pos - start);
    }
  }
  return out;
}

}  // namespace cli
}  // namespace zkr
