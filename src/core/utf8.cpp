#include "core/utf8.h"

namespace sinter {

size_t utf8_sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xc2) return 0;  // continuation byte or overlong two-byte lead
  if (lead < 0xe0) return 2;
  if (lead < 0xf0) return 3;
  if (lead < 0xf5) return 4;
  return 0;
}

namespace {

// Second-byte ranges that exclude overlongs, surrogates and code points above U+10FFFF.
bool valid_second_byte(uint8_t lead, uint8_t second) {
  if ((second & 0xc0) != 0x80) return false;
  if (lead == 0xe0) return second >= 0xa0;
  if (lead == 0xed) return second < 0xa0;
  if (lead == 0xf0) return second >= 0x90;
  if (lead == 0xf4) return second < 0x90;
  return true;
}

}  // namespace

uint32_t utf8_decode(std::string_view text, size_t* pos) {
  const auto lead = static_cast<uint8_t>(text[*pos]);
  const size_t length = utf8_sequence_length(lead);
  if (length == 1) {
    ++*pos;
    return lead;
  }
  if (length == 0 || *pos + length > text.size() ||
      !valid_second_byte(lead, static_cast<uint8_t>(text[*pos + 1]))) {
    ++*pos;
    return 0xfffd;
  }
  uint32_t code_point = lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<uint8_t>(text[*pos + i]);
    if ((byte & 0xc0) != 0x80) {
      ++*pos;
      return 0xfffd;
    }
    code_point = code_point << 6 | (byte & 0x3f);
  }
  *pos += length;
  return code_point;
}

bool utf8_is_valid(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const uint32_t code_point = utf8_decode(text, &pos);
    if (code_point == 0xfffd && !(pos - start == 3 && text.substr(start, 3) == "\xef\xbf\xbd")) {
      return false;
    }
  }
  return true;
}

size_t utf8_incomplete_tail(std::string_view text) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  const size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto byte = static_cast<uint8_t>(text[n - back]);
    if ((byte & 0xc0) == 0x80) continue;  // continuation: keep looking for the lead
    const size_t length = utf8_sequence_length(byte);
    if (length > back) {
      if (back >= 2 && !valid_second_byte(byte, static_cast<uint8_t>(text[n - back + 1]))) return 0;
      return back;
    }
    return 0;
  }
  return 0;
}

void utf8_append(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

}  // namespace sinter
