#include "tools/zkr/plain_text.h"

#include "absl/strings/str_format.h"
#include "src/utf8.h"

namespace zkr {
namespace cli {

std::string EscapeEach(absl::string_view text,
                       absl::FunctionRef<bool(int32_t code, std::string* out)> escape) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const int32_t code = internal::DecodeUtf8(text, &pos);
    if (code < 0) {  // malformed: each of its bytes
      for (size_t i = start; i < pos; ++i) {
        absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(text[i]));
      }
    } else if (!escape(code, &out)) {
      out.append(text.data() + start, pos - start);
    }
  }
  return out;
}

std::string PlainText(absl::string_view bytes) {
  return EscapeEach(bytes, [](int32_t code, std::string* out) {
    if (code == '\\') {
      *out += "\\\\";
    } else if (code == '\n') {
      *out += "\\n";
    } else if (code == '\t') {
      *out += "\\t";
    } else if (code == '\r') {
      *out += "\\r";
    } else if (IsControlCharacter(code) && code < 0x80) {
      absl::StrAppendFormat(out, "\\x%02x", code);
    } else if (IsControlCharacter(code)) {
      absl::StrAppendFormat(out, "\\u%04x", code);
    } else {
      return false;
    }
    return true;
  });
}

}  // namespace cli
}  // namespace zkr
