// The lexer of Go's text/template (text/template/parse/lex.go): text, actions between {{ and }},
// trim markers "{{- " and " -}}", comments {{/* */}}, and the tokens inside actions. It scans each
// byte a bounded number of times, so lexing is linear in the input.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

namespace sinter::chat::gotemplate {

enum class ItemType {
  kError,  // val is the message
  kBool,
  kChar,  // printable ASCII character (a comma and the like)
  kCharConstant,
  kComment,
  kComplex,
  kAssign,   // =
  kDeclare,  // :=
  kEof,
  kField,       // .Name
  kIdentifier,  // a function name
  kLeftDelim,
  kLeftParen,
  kNumber,
  kPipe,
  kRawString,
  kRightDelim,
  kRightParen,
  kSpace,
  kString,
  kText,
  kVariable,  // $ or $name
  // Keywords, after kKeyword.
  kKeyword,
  kBlock,
  kBreak,
  kContinue,
  kDot,
  kDefine,
  kElse,
  kEnd,
  kIf,
  kNil,
  kRange,
  kTemplate,
  kWith,
};

struct Item {
  ItemType type = ItemType::kEof;
  size_t pos = 0;
  std::string val;  // the token's text (for kError, the message)
  int line = 1;
};

// How Go's parser names a token in "unexpected X in Y" (item.String()).
std::string item_description(const Item& item);

class Lexer {
 public:
  explicit Lexer(std::string_view input) : input_(input) {}
  Item next_item();

 private:
  enum class State { kText, kLeftDelim, kComment, kInsideAction, kRightDelim, kDone };

  char32_t next();
  char32_t peek();
  void backup();
  void emit(ItemType type);
  void ignore();
  void error(std::string message);
  bool accept(std::string_view valid);
  void accept_run(std::string_view valid);
  bool at_right_delim(bool* trim);
  bool at_terminator();
  bool scan_number();

  void lex_text();
  void lex_left_delim();
  void lex_comment();
  void lex_right_delim();
  void lex_inside_action();
  void lex_space();
  void lex_identifier();
  void lex_field_or_variable(ItemType type);
  void lex_quote(char quote, ItemType type, const char* unterminated);
  void lex_raw_quote();
  void lex_number();

  std::string_view input_;
  size_t pos_ = 0;
  size_t start_ = 0;
  bool at_eof_ = false;
  size_t last_width_ = 0;
  int paren_depth_ = 0;
  int line_ = 1;
  int start_line_ = 1;
  State state_ = State::kText;
  std::deque<Item> items_;
};

}  // namespace sinter::chat::gotemplate
