// A minimal JSON reader for tests (no JSON library is a Debian dependency of
// ours): parses one value strictly, so a test can prove output is valid JSON.
#ifndef ZKRECIPES_TESTS_SUPPORT_JSON_READER_H_
#define ZKRECIPES_TESTS_SUPPORT_JSON_READER_H_

#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "src/utf8.h"

namespace zkr {

namespace testing {

// ---- a minimal JSON reader (no JSON library is available) -------------------------

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> items;        // array elements, or object values
  std::vector<std::string> keys;  // object keys, parallel to `items`

  // The member `key` of an object, or null.
  const Json* Get(absl::string_view key) const {
    if (type != Type::kObject) return nullptr;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return &items[i];
    }
    return nullptr;
  }
};

class JsonReader {
 public:
  // The value `text` holds (surrounding whitespace allowed), or nullopt if it
  // is not exactly one JSON value.
  static std::optional<Json> Parse(absl::string_view text) {
    JsonReader reader(text);
    std::optional<Json> value = reader.Value();
    reader.SkipSpace();
    if (!value.has_value() || reader.pos_ != text.size()) return std::nullopt;
    return value;
  }

 private:
  explicit JsonReader(absl::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_]) != nullptr) ++pos_;
  }
  bool Consume(absl::string_view token) {
    SkipSpace();
    if (!absl::StartsWith(text_.substr(pos_), token)) return false;
    pos_ += token.size();
    return true;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  std::optional<Json> Value() {
    if (++depth_ > 64) return std::nullopt;
    std::optional<Json> value = ValueInner();
    --depth_;
    return value;
  }

  std::optional<Json> ValueInner() {
    Json value;
    SkipSpace();
    if (pos_ >= text_.size()) return std::nullopt;
    const char c = text_[pos_];
    if (Consume("null")) return value;
    if (Consume("true") || Consume("false")) {
      value.type = Json::Type::kBool;
      value.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
      return value;
    }
    if (c == '"') {
      std::optional<std::string> s = String();
      if (!s.has_value()) return std::nullopt;
      value.type = Json::Type::kString;
      value.string = *s;
      return value;
    }
    if (c == '[') {
      ++pos_;
      value.type = Json::Type::kArray;
      if (Consume("]")) return value;
      do {
        std::optional<Json> item = Value();
        if (!item.has_value()) return std::nullopt;
        value.items.push_back(std::move(*item));
      } while (Consume(","));
      if (!Consume("]")) return std::nullopt;
      return value;
    }
    if (c == '{') {
      ++pos_;
      value.type = Json::Type::kObject;
      if (Consume("}")) return value;
      do {
        if (!Peek('"')) return std::nullopt;
        std::optional<std::string> key = String();
        if (!key.has_value() || !Consume(":")) return std::nullopt;
        std::optional<Json> item = Value();
        if (!item.has_value()) return std::nullopt;
        value.keys.push_back(*key);
        value.items.push_back(std::move(*item));
      } while (Consume(","));
      if (!Consume("}")) return std::nullopt;
      return value;
    }
    // A number.
    const size_t start = pos_;
    while (pos_ < text_.size() && std::strchr("+-0123456789.eE", text_[pos_]) != nullptr) ++pos_;
    if (pos_ == start) return std::nullopt;
    value.type = Json::Type::kNumber;
    if (!absl::SimpleAtod(text_.substr(start, pos_ - start), &value.number)) return std::nullopt;
    return value;
  }

  // A string literal at pos_ (escapes decoded; \u only for ASCII).
  std::optional<std::string> String() {
    if (pos_ >= text_.size() || text_[pos_] != '"') return std::nullopt;
    ++pos_;
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return std::nullopt;
      if (static_cast<unsigned char>(c) >= 0x80) {  // must be a whole UTF-8 sequence
        const size_t start = --pos_;
        if (internal::DecodeUtf8(text_, &pos_) < 0) return std::nullopt;
        out.append(text_.data() + start, pos_ - start);
        continue;
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) return std::nullopt;
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          std::optional<int> code = Hex4();
          if (!code.has_value()) return std::nullopt;
          if (*code >= 0xd800 && *code < 0xdc00) {  // a surrogate pair
            if (!absl::StartsWith(text_.substr(pos_), "\\u")) return std::nullopt;
            pos_ += 2;
            std::optional<int> low = Hex4();
            if (!low.has_value() || *low < 0xdc00 || *low >= 0xe000) return std::nullopt;
            *code = 0x10000 + ((*code - 0xd800) << 10) + (*low - 0xdc00);
          } else if (*code >= 0xdc00 && *code < 0xe000) {
            return std::nullopt;
          }
          internal::AppendUtf8(*code, &out);
          break;
        }
        default:
          return std::nullopt;
      }
    }
    return std::nullopt;
  }

  // Four hex digits at pos_ (after "\\u").
  std::optional<int> Hex4() {
    if (pos_ + 4 > text_.size()) return std::nullopt;
    int code = 0;
    for (int i = 0; i < 4; ++i) {
      constexpr char kDigits[] = "0123456789abcdef";
      const char h = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_++])));
      const char* digit = h == '\0' ? nullptr : std::strchr(kDigits, h);
      if (digit == nullptr) return std::nullopt;
      code = code * 16 + static_cast<int>(digit - kDigits);
    }
    return code;
  }

  absl::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace testing
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_SUPPORT_JSON_READER_H_
