#include "core/utf8.h"

#include <gtest/gtest.h>

namespace sinter {
namespace {

TEST(Utf8, Validity) {
  EXPECT_TRUE(utf8_is_valid("hello"));
  EXPECT_TRUE(utf8_is_valid("h\xc3\xa9llo \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"));
  EXPECT_TRUE(utf8_is_valid("\xef\xbf\xbd"));          // U+FFFD itself
  EXPECT_FALSE(utf8_is_valid("\xc0\xaf"));             // overlong
  EXPECT_FALSE(utf8_is_valid("\xed\xa0\x80"));         // surrogate
  EXPECT_FALSE(utf8_is_valid("\xf4\x90\x80\x80"));     // above U+10FFFF
  EXPECT_FALSE(utf8_is_valid("\xe6\x97"));             // truncated
  EXPECT_FALSE(utf8_is_valid("\x80"));                 // lone continuation
}

TEST(Utf8, IncompleteTail) {
  EXPECT_EQ(utf8_incomplete_tail("abc"), 0u);
  EXPECT_EQ(utf8_incomplete_tail("ab\xe6"), 1u);
  EXPECT_EQ(utf8_incomplete_tail("ab\xe6\x97"), 2u);
  EXPECT_EQ(utf8_incomplete_tail("ab\xe6\x97\xa5"), 0u);
  EXPECT_EQ(utf8_incomplete_tail("\xf0\x9f\x98"), 3u);
  EXPECT_EQ(utf8_incomplete_tail("\xff"), 0u);  // invalid, not incomplete: nothing to wait for
}

TEST(Utf8, DecodeAndAppendRoundTrip) {
  for (uint32_t cp : {0x41u, 0xe9u, 0x65e5u, 0x1f600u, 0x10ffffu}) {
    std::string s;
    utf8_append(&s, cp);
    size_t pos = 0;
    EXPECT_EQ(utf8_decode(s, &pos), cp);
    EXPECT_EQ(pos, s.size());
  }
  size_t pos = 0;
  EXPECT_EQ(utf8_decode("\xff", &pos), 0xfffdu);
  EXPECT_EQ(pos, 1u);
}

}  // namespace
}  // namespace sinter
