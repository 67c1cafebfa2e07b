#include "src/utf8.h"

namespace zkr {
namespace internal {

int32_t DecodeUtf8(absl::string_view text, size_t* pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[*pos + i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) {
    ++*pos;
    return lead;
  }
  size_t length = 0;
  uint8_t low = 0x80, high = 0xBF;  // where the second byte must lie
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong form
    if (lead == 0xED) high = 0x9F;  // no surrogate
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // no overlong form
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    ++*pos;
    return -1;
  }
  int32_t code = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    const bool fits = *pos + i < text.size() && byte(i) >= (i == 1 ? low : 0x80) &&
                      byte(i) <= (i == 1 ? high : 0xBF);
    if (!fits) {
      *pos += i;
      return -1;
    }
    code = (code << 6) | (byte(i) & 0x3F);
  }
  *pos += length;
  return code;
}

bool IsValidUtf8(absl::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    if (DecodeUtf8(text, &pos) < 0) return false;
  }
  return true;
}

std::string ToValidUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    if (DecodeUtf8(text, &pos) < 0) {
      AppendUtf8(0xFFFD, &out);
    } else {
      out.append(text.data() + start, pos - start);
    }
  }
  return out;
}

void AppendUtf8(int32_t code, std::string* out) {
  if (code < 0x80) {
    *out += static_cast<char>(code);
  } else if (code < 0x800) {
    *out += static_cast<char>(0xC0 | (code >> 6));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    *out += static_cast<char>(0xE0 | (code >> 12));
    *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (code >> 18));
    *out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

}  // namespace internal
}  // namespace zkr
