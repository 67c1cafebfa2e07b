#include "src/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace zkr {

using internal::DecodeUtf8;
using internal::IsValidUtf8;
using internal::ToValidUtf8;
using internal::AppendUtf8;
namespace {

TEST(Utf8Test, AcceptsWellFormedText) {
  for (const char* text : {"", "plain ascii", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                           "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf", "\x7f\x01"}) {
    EXPECT_TRUE(IsValidUtf8(text)) << text;
    EXPECT_EQ(ToValidUtf8(text), text);
  }
}

TEST(Utf8Test, ReplacesEachMalformedSequenceOnce) {
  const std::string kReplacement = "\xef\xbf\xbd";
  struct Case {
    std::string text;
    std::string valid;
  } cases[] = {
      {"caf\xe9", "caf" + kReplacement},                            // Latin-1
      {"\xc0\xaf", kReplacement + kReplacement},                     // overlong '/'
      {"\xe0\x80\xaf", kReplacement + kReplacement + kReplacement},  // overlong, 3 bytes
      {"\xed\xa0\x80", kReplacement + kReplacement + kReplacement},  // a surrogate
      {"\xf4\x90\x80\x80", kReplacement + kReplacement + kReplacement + kReplacement},  // > U+10FFFF
      {"a\xf0\x9f\x92", "a" + kReplacement},                         // truncated at the end
      {"\xf0\x9f\x92z", kReplacement + "z"},                         // truncated inside
      {"\x80\xbf", kReplacement + kReplacement},                     // lone continuations
      {"\xff", kReplacement},
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(IsValidUtf8(c.text)) << c.text;
    EXPECT_EQ(ToValidUtf8(c.text), c.valid) << c.text;
    EXPECT_TRUE(IsValidUtf8(ToValidUtf8(c.text)));
  }
}

TEST(Utf8Test, EncodesWhatItDecodes) {
  for (int32_t code : {0x41, 0xE9, 0x20AC, 0xFFFD, 0x1F600, 0x10FFFF}) {
    std::string text;
    AppendUtf8(code, &text);
    size_t pos = 0;
    EXPECT_EQ(DecodeUtf8(text, &pos), code);
    EXPECT_EQ(pos, text.size());
  }
}

}  // namespace
}  // namespace zkr
