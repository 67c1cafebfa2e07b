// UTF-8 for text that crosses to ZooKeeper (paths, node names) or to JSON.
// Pure functions, thread-safe.
#ifndef ZKRECIPES_SRC_UTF8_H_
#define ZKRECIPES_SRC_UTF8_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace zkr {
namespace internal {

// The code point of the UTF-8 sequence at text[*pos], advancing *pos past
// it. A sequence is well formed as RFC 3629 says: no overlong form, no
// surrogate, nothing above U+10FFFF. On a malformed one returns -1 and
// advances past its maximal well-formed prefix (at least one byte), so that
// each malformed sequence counts once. REQUIRES: *pos < text.size().
int32_t DecodeUtf8(absl::string_view text, size_t* pos);

// Whether all of `text` is well-formed UTF-8.
bool IsValidUtf8(absl::string_view text);

// `text` with each malformed sequence replaced by U+FFFD.
std::string ToValidUtf8(absl::string_view text);

// Appends the UTF-8 encoding of `code` (at most U+10FFFF).
void AppendUtf8(int32_t code, std::string* out);

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_UTF8_H_
