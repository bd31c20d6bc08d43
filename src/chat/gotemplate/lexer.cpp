#include "chat/gotemplate/lexer.h"

#include <utf8proc.h>

#include "chat/gotemplate/fmt.h"
#include "core/utf8.h"

namespace sinter::chat::gotemplate {
namespace {

constexpr char32_t kEof = static_cast<char32_t>(-1);
constexpr std::string_view kLeftDelim = "{{";
constexpr std::string_view kRightDelim = "}}";
constexpr std::string_view kLeftComment = "/*";
constexpr std::string_view kRightComment = "*/";
constexpr size_t kTrimMarkerLen = 2;  // "- " or " -"
constexpr std::string_view kSpaceChars = " \t\r\n";

bool is_space(char32_t r) { return r == ' ' || r == '\t' || r == '\r' || r == '\n'; }

bool is_alphanumeric(char32_t r) {
  if (r == '_') return true;
  if (r < 0x80) return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9');
  if (r == kEof || r > 0x10FFFF) return false;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(r))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND: return true;
    default: return false;
  }
}

bool has_left_trim_marker(std::string_view s) { return s.size() >= 2 && s[0] == '-' && is_space(s[1]); }
bool has_right_trim_marker(std::string_view s) { return s.size() >= 2 && is_space(s[0]) && s[1] == '-'; }

size_t right_trim_length(std::string_view s) {
  size_t end = s.find_last_not_of(kSpaceChars);
  return end == std::string_view::npos ? s.size() : s.size() - end - 1;
}

size_t left_trim_length(std::string_view s) {
  size_t start = s.find_first_not_of(kSpaceChars);
  return start == std::string_view::npos ? s.size() : start;
}

ItemType keyword(std::string_view word) {
  if (word == ".") return ItemType::kDot;
  if (word == "block") return ItemType::kBlock;
  if (word == "break") return ItemType::kBreak;
  if (word == "continue") return ItemType::kContinue;
  if (word == "define") return ItemType::kDefine;
  if (word == "else") return ItemType::kElse;
  if (word == "end") return ItemType::kEnd;
  if (word == "if") return ItemType::kIf;
  if (word == "range") return ItemType::kRange;
  if (word == "nil") return ItemType::kNil;
  if (word == "template") return ItemType::kTemplate;
  if (word == "with") return ItemType::kWith;
  return ItemType::kError;
}

// "%#U" of fmt: U+0041 'A'.
std::string sharp_u(char32_t r) {
  char tmp[16];
  std::snprintf(tmp, sizeof tmp, "U+%04X", static_cast<unsigned>(r));
  std::string out = tmp;
  if (go_is_print(r)) {
    out += " '";
    utf8_append(&out, r);
    out += "'";
  }
  return out;
}

}  // namespace

std::string item_description(const Item& item) {
  if (item.type == ItemType::kEof) return "EOF";
  if (item.type == ItemType::kError) return item.val;
  if (item.type > ItemType::kKeyword) return "<" + item.val + ">";
  // %.10q... for long values: the first ten runes quoted.
  size_t runes = 0, cut = 0;
  for (size_t pos = 0; pos < item.val.size() && runes < 11; ++runes) {
    if (runes == 10) cut = pos;
    utf8_decode(item.val, &pos);
  }
  if (runes > 10 && cut > 0) return go_quote(item.val.substr(0, cut)) + "...";
  return go_quote(item.val);
}

char32_t Lexer::next() {
  if (pos_ >= input_.size()) {
    at_eof_ = true;
    return kEof;
  }
  size_t p = pos_;
  char32_t r = utf8_decode(input_, &p);
  pos_ = p;
  if (r == '\n') ++line_;
  return r;
}

void Lexer::backup() {
  if (at_eof_ || pos_ == 0) return;
  // utf8.DecodeLastRuneInString
  size_t end = pos_;
  size_t start = end - 1;
  if (static_cast<unsigned char>(input_[start]) >= 0x80) {
    size_t limit = end >= 4 ? end - 4 : 0;
    while (start > limit && (static_cast<unsigned char>(input_[start]) & 0xC0) == 0x80) --start;
    size_t p = start;
    utf8_decode(input_, &p);
    if (p != end) start = end - 1;
  }
  if (input_[start] == '\n') --line_;
  pos_ = start;
}

char32_t Lexer::peek() {
  char32_t r = next();
  backup();
  return r;
}

void Lexer::emit(ItemType type) {
  items_.push_back(Item{type, start_, std::string(input_.substr(start_, pos_ - start_)), start_line_});
  start_ = pos_;
  start_line_ = line_;
}

void Lexer::ignore() {
  for (size_t i = start_; i < pos_; ++i) {
    if (input_[i] == '\n') ++line_;
  }
  start_ = pos_;
  start_line_ = line_;
}

void Lexer::error(std::string message) {
  items_.push_back(Item{ItemType::kError, start_, std::move(message), start_line_});
  state_ = State::kDone;
}

bool Lexer::accept(std::string_view valid) {
  char32_t r = next();
  if (r != kEof && r < 0x80 && valid.find(static_cast<char>(r)) != std::string_view::npos) return true;
  backup();
  return false;
}

void Lexer::accept_run(std::string_view valid) {
  while (true) {
    char32_t r = next();
    if (r == kEof || r >= 0x80 || valid.find(static_cast<char>(r)) == std::string_view::npos) break;
  }
  backup();
}

bool Lexer::at_right_delim(bool* trim) {
  std::string_view rest = input_.substr(pos_);
  if (has_right_trim_marker(rest) && rest.substr(kTrimMarkerLen).starts_with(kRightDelim)) {
    *trim = true;
    return true;
  }
  *trim = false;
  return rest.starts_with(kRightDelim);
}

bool Lexer::at_terminator() {
  char32_t r = peek();
  if (is_space(r)) return true;
  switch (r) {
    case kEof:
    case '.':
    case ',':
    case '|':
    case ':':
    case ')':
    case '(': return true;
    default: break;
  }
  return input_.substr(pos_).starts_with(kRightDelim);
}

Item Lexer::next_item() {
  while (items_.empty()) {
    switch (state_) {
      case State::kText: lex_text(); break;
      case State::kLeftDelim: lex_left_delim(); break;
      case State::kComment: lex_comment(); break;
      case State::kInsideAction: lex_inside_action(); break;
      case State::kRightDelim: lex_right_delim(); break;
      case State::kDone: return Item{ItemType::kEof, pos_, "", line_};
    }
  }
  Item item = std::move(items_.front());
  items_.pop_front();
  return item;
}

void Lexer::lex_text() {
  size_t x = input_.find(kLeftDelim, pos_);
  if (x != std::string_view::npos) {
    pos_ = x;
    size_t trim = 0;
    if (has_left_trim_marker(input_.substr(pos_ + kLeftDelim.size()))) {
      trim = right_trim_length(input_.substr(start_, pos_ - start_));
    }
    pos_ -= trim;
    if (pos_ > start_) {
      for (size_t i = start_; i < pos_; ++i) {
        if (input_[i] == '\n') ++line_;
      }
      emit(ItemType::kText);
    }
    pos_ += trim;
    ignore();
    state_ = State::kLeftDelim;
    return;
  }
  pos_ = input_.size();
  if (pos_ > start_) {
    for (size_t i = start_; i < pos_; ++i) {
      if (input_[i] == '\n') ++line_;
    }
    emit(ItemType::kText);
  }
  emit(ItemType::kEof);
  state_ = State::kDone;
}

void Lexer::lex_left_delim() {
  pos_ += kLeftDelim.size();
  bool trim = has_left_trim_marker(input_.substr(pos_));
  size_t after_marker = trim ? kTrimMarkerLen : 0;
  if (input_.substr(pos_ + after_marker).starts_with(kLeftComment)) {
    pos_ += after_marker;
    ignore();
    state_ = State::kComment;
    return;
  }
  emit(ItemType::kLeftDelim);
  pos_ += after_marker;
  ignore();
  paren_depth_ = 0;
  state_ = State::kInsideAction;
}

void Lexer::lex_comment() {
  pos_ += kLeftComment.size();
  size_t i = input_.find(kRightComment, pos_);
  if (i == std::string_view::npos) return error("unclosed comment");
  pos_ = i + kRightComment.size();
  bool trim = false;
  if (!at_right_delim(&trim)) return error("comment ends before closing delimiter");
  if (trim) pos_ += kTrimMarkerLen;
  pos_ += kRightDelim.size();
  if (trim) pos_ += left_trim_length(input_.substr(pos_));
  ignore();
  state_ = State::kText;
}

void Lexer::lex_right_delim() {
  bool trim = has_right_trim_marker(input_.substr(pos_));
  if (trim) {
    pos_ += kTrimMarkerLen;
    ignore();
  }
  pos_ += kRightDelim.size();
  emit(ItemType::kRightDelim);
  if (trim) {
    pos_ += left_trim_length(input_.substr(pos_));
    ignore();
  }
  state_ = State::kText;
}

void Lexer::lex_inside_action() {
  bool trim = false;
  if (at_right_delim(&trim)) {
    if (paren_depth_ == 0) {
      state_ = State::kRightDelim;
      return;
    }
    return error("unclosed left paren");
  }
  char32_t r = next();
  if (r == kEof) return error("unclosed action");
  if (is_space(r)) {
    backup();  // put the space back in case we have " -}}"
    return lex_space();
  }
  switch (r) {
    case '=': emit(ItemType::kAssign); return;
    case ':':
      if (next() != '=') return error("expected :=");
      emit(ItemType::kDeclare);
      return;
    case '|': emit(ItemType::kPipe); return;
    case '"': return lex_quote('"', ItemType::kString, "unterminated quoted string");
    case '`': return lex_raw_quote();
    case '$':
      if (at_terminator()) {
        emit(ItemType::kVariable);
        return;
      }
      return lex_field_or_variable(ItemType::kVariable);
    case '\'': return lex_quote('\'', ItemType::kCharConstant, "unterminated character constant");
    case '(':
      emit(ItemType::kLeftParen);
      ++paren_depth_;
      return;
    case ')':
      emit(ItemType::kRightParen);
      --paren_depth_;
      if (paren_depth_ < 0) return error("unexpected right paren " + sharp_u(r));
      return;
    default: break;
  }
  if (r == '.') {
    if (pos_ < input_.size()) {
      char c = input_[pos_];
      if (c < '0' || c > '9') return lex_field_or_variable(ItemType::kField);
    }
  }
  if (r == '.' || r == '+' || r == '-' || (r >= '0' && r <= '9')) {
    backup();
    return lex_number();
  }
  if (is_alphanumeric(r)) {
    backup();
    return lex_identifier();
  }
  if (r < 0x80 && r >= 0x20 && r < 0x7F) {
    emit(ItemType::kChar);
    return;
  }
  error("unrecognized character in action: " + sharp_u(r));
}

void Lexer::lex_space() {
  int spaces = 0;
  while (is_space(peek())) {
    next();
    ++spaces;
  }
  std::string_view from_last = input_.substr(pos_ - 1);
  if (has_right_trim_marker(from_last) && from_last.substr(kTrimMarkerLen).starts_with(kRightDelim)) {
    backup();  // before the space
    if (spaces == 1) {
      state_ = State::kRightDelim;  // on the delimiter: go right to it
      return;
    }
  }
  emit(ItemType::kSpace);
}

void Lexer::lex_identifier() {
  char32_t r = 0;
  do {
    r = next();
  } while (is_alphanumeric(r));
  backup();
  std::string_view word = input_.substr(start_, pos_ - start_);
  if (!at_terminator()) return error("bad character " + sharp_u(r));
  ItemType key = keyword(word);
  if (key != ItemType::kError && key > ItemType::kKeyword) {
    emit(key);
  } else if (word[0] == '.') {
    emit(ItemType::kField);
  } else if (word == "true" || word == "false") {
    emit(ItemType::kBool);
  } else {
    emit(ItemType::kIdentifier);
  }
}

void Lexer::lex_field_or_variable(ItemType type) {
  if (at_terminator()) {  // nothing interesting follows: "." or "$"
    emit(type == ItemType::kVariable ? ItemType::kVariable : ItemType::kDot);
    return;
  }
  char32_t r = 0;
  while (true) {
    r = next();
    if (!is_alphanumeric(r)) {
      backup();
      break;
    }
  }
  if (!at_terminator()) return error("bad character " + sharp_u(r));
  emit(type);
}

void Lexer::lex_quote(char quote, ItemType type, const char* unterminated) {
  while (true) {
    char32_t r = next();
    if (r == '\\') {
      char32_t escaped = next();
      if (escaped != kEof && escaped != '\n') continue;
      return error(unterminated);
    }
    if (r == kEof || r == '\n') return error(unterminated);
    if (r == static_cast<char32_t>(quote)) break;
  }
  emit(type);
}

void Lexer::lex_raw_quote() {
  while (true) {
    char32_t r = next();
    if (r == kEof) return error("unterminated raw quoted string");
    if (r == '`') break;
  }
  emit(ItemType::kRawString);
}

bool Lexer::scan_number() {
  accept("+-");
  std::string_view digits = "0123456789_";
  if (accept("0")) {
    if (accept("xX")) {
      digits = "0123456789abcdefABCDEF_";
    } else if (accept("oO")) {
      digits = "01234567_";
    } else if (accept("bB")) {
      digits = "01_";
    }
  }
  accept_run(digits);
  if (accept(".")) accept_run(digits);
  if (digits.size() == 11 && accept("eE")) {
    accept("+-");
    accept_run("0123456789_");
  }
  if (digits.size() == 23 && accept("pP")) {
    accept("+-");
    accept_run("0123456789_");
  }
  accept("i");
  if (is_alphanumeric(peek())) {
    next();
    return false;
  }
  return true;
}

void Lexer::lex_number() {
  auto bad = [&] { error("bad number syntax: " + go_quote(input_.substr(start_, pos_ - start_))); };
  if (!scan_number()) return bad();
  char32_t sign = peek();
  if (sign == '+' || sign == '-') {
    if (!scan_number() || input_[pos_ - 1] != 'i') return bad();
    emit(ItemType::kComplex);
  } else {
    emit(ItemType::kNumber);
  }
}

}  // namespace sinter::chat::gotemplate
