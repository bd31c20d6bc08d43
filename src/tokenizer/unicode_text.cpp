#include "tokenizer/unicode_text.h"

#include <utf8proc.h>

#include <cstdlib>

#include "core/utf8.h"

namespace sinter {
namespace {

std::string map(std::string_view text, int options) {
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t length = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                               static_cast<utf8proc_ssize_t>(text.size()), &mapped,
                                               static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (length < 0) return std::string(text);
  std::string out(reinterpret_cast<const char*>(mapped), static_cast<size_t>(length));
  std::free(mapped);
  return out;
}

utf8proc_category_t category(uint32_t cp) { return utf8proc_category(static_cast<utf8proc_int32_t>(cp)); }

}  // namespace

std::string unicode_nfc(std::string_view text) {
  if (text.empty()) return {};
  return map(text, UTF8PROC_COMPOSE);
}

std::string unicode_nfd(std::string_view text) {
  if (text.empty()) return {};
  return map(text, UTF8PROC_DECOMPOSE);
}

bool unicode_is_punctuation(uint32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return true;
    default: return false;
  }
}

bool unicode_is_nonspacing_mark(uint32_t cp) { return category(cp) == UTF8PROC_CATEGORY_MN; }

bool unicode_is_other(uint32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN: return true;
    default: return false;
  }
}

void unicode_append_lowercase(std::string* out, uint32_t cp) {
  if (cp == 0x130) {  // the one common character whose full lowercase is two characters
    out->push_back('i');
    utf8_append(out, 0x307);
    return;
  }
  utf8_append(out, static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
}

}  // namespace sinter
