// The recursive-descent parser behind parse_template() (parser.h), shared by parser.cpp
// (statements) and parser_expressions.cpp (expressions). It follows Jinja2's parser.py method
// for method, so that templates parse, and fail to parse, as they do in Jinja2.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/builtins.h"
#include "chat/jinja/lexer.h"
#include "chat/jinja/parser.h"

namespace sinter::chat::jinja {

class Parser {
 public:
  Parser(std::vector<Token> tokens, const ParseLimits& limits)
      : tokens_(std::move(tokens)), limits_(limits) {}

  Result<Body> parse() {
    SINTER_ASSIGN(Body body, subparse({}));
    if (current().type != TokenType::kEof) return fail(concat("unexpected ", describe_token(current())));
    if (!pending_.empty()) return pending_.front();
    return body;
  }

 private:
  // --- the token stream ---------------------------------------------------------------------
  const Token& current() const { return tokens_[pos_]; }
  const Token& look() const { return tokens_[pos_ + 1 < tokens_.size() ? pos_ + 1 : pos_]; }
  const Token& advance() {
    const Token& token = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return token;
  }
  static bool is_op(const Token& token, std::string_view op) {
    return token.type == TokenType::kOperator && token.text == op;
  }
  static bool is_name(const Token& token, std::string_view name) {
    return token.type == TokenType::kName && token.text == name;
  }
  bool at_op(std::string_view op) const { return is_op(current(), op); }
  bool at_name(std::string_view name) const { return is_name(current(), name); }
  bool skip_op(std::string_view op) {
    if (!at_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!at_name(name)) return false;
    advance();
    return true;
  }

  Error fail(const std::string& message) const { return syntax_error(current().where, message); }
  Error fail_at(SourceLocation where, const std::string& message) const {
    return syntax_error(where, message);
  }

  Error expected(const std::string& what) const {
    if (current().type == TokenType::kEof)
      return fail(concat("unexpected end of template, expected '", what, "'."));
    return fail(concat("expected token '", what, "', got '", describe_token(current()), "'"));
  }
  Status expect_op(std::string_view op) {
    if (!skip_op(op)) return expected(std::string(op));
    return ok_status();
  }
  Status expect_type(TokenType type, const char* description) {
    if (current().type != type) return expected(description);
    advance();
    return ok_status();
  }
  Result<std::string> expect_name() {
    if (current().type != TokenType::kName) return expected("name");
    return advance().text;
  }

  // Counts the height of the tree being built (recursion plus operator chains such as a.b.c or
  // a+b+c), so that evaluating and destroying it cannot exhaust the C++ stack.
  struct DepthGuard {
    // `levels`: 1 where the parser recurses, 0 where it only chains operators in a loop.
    DepthGuard(int* depth, int levels) : depth_(depth) {
      for (int i = 0; i < levels; ++i) bump();
    }
    ~DepthGuard() { *depth_ -= count_; }
    void bump() {
      ++*depth_;
      ++count_;
    }
    int* depth_;
    int count_ = 0;
  };
  Status grow(DepthGuard* guard) {
    guard->bump();
    return check_depth();
  }
  Status check_depth() const {
    if (depth_ > limits_.max_nesting)
      return fail(
          concat("template nested too deeply (more than ", std::to_string(limits_.max_nesting), " levels)"));
    return ok_status();
  }

  // --- statements ---------------------------------------------------------------------------
  using EndTokens = std::vector<std::string_view>;

  bool at_end_token(const EndTokens& end_tokens) const;

  Result<Body> subparse(const EndTokens& end_tokens);

  Result<Body> subparse_body(const EndTokens& end_tokens);

  // Jinja2's message for an unknown tag or a premature end of the template.
  Error fail_unknown_tag(const std::string* name) const;

  Result<Body> parse_statements(const EndTokens& end_tokens, bool drop_needle);

  Result<StmtPtr> parse_statement();

  Error fail_unsupported(const std::string& tag) const;

  Result<StmtPtr> parse_tag(const std::string& tag, SourceLocation where);

  Result<StmtPtr> parse_for();

  Result<StmtPtr> parse_if();

  Result<StmtPtr> parse_set();

  Status parse_signature(MacroStmt* node);

  // A macro body: loops outside it do not count for break/continue, and its uses of varargs,
  // kwargs and caller are recorded.
  Result<Body> parse_macro_body(MacroStmt* node, std::string_view end_tag);

  Result<StmtPtr> parse_macro();

  Result<StmtPtr> parse_call_block();

  Result<StmtPtr> parse_filter_block();

  Result<StmtPtr> parse_with();

  static bool can_assign(const Expr& target);

  static std::string node_type_name(const Expr& expr);

  Result<ExprPtr> parse_assign_target(bool with_tuple, bool name_only, const EndTokens& extra_end,
                                      bool with_namespace);

  // --- expressions --------------------------------------------------------------------------
  Result<ExprPtr> parse_expression(bool with_condexpr) {
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  Result<ExprPtr> parse_condexpr();

  Result<ExprPtr> parse_or();

  Result<ExprPtr> parse_and();

  Result<ExprPtr> parse_not();

  Result<ExprPtr> parse_compare();

  Result<ExprPtr> parse_math1();

  Result<ExprPtr> parse_concat();

  Result<ExprPtr> parse_math2();

  Result<ExprPtr> parse_pow();

  Result<ExprPtr> parse_unary(bool with_filter);

  Result<ExprPtr> parse_primary();

  bool is_tuple_end(const EndTokens& extra_end) const;

  // A comma-separated tuple, or a single expression when there is no comma. `simplified` parses
  // only primaries (assignment targets).
  Result<ExprPtr> parse_tuple(bool simplified, bool with_condexpr, const EndTokens& extra_end,
                              bool explicit_parentheses);

  Result<ExprPtr> parse_list();

  Result<ExprPtr> parse_dict();

  Result<ExprPtr> parse_postfix(ExprPtr node);

  Result<ExprPtr> parse_filter_expr(ExprPtr node);

  Result<ExprPtr> parse_subscript(ExprPtr node);

  Result<ExprPtr> parse_subscribed();

  Result<CallArguments> parse_call_args();

  Result<ExprPtr> parse_call(ExprPtr node);

  Result<std::string> parse_dotted_name();

  // Jinja2 rejects an unknown filter or test when it compiles the template, except inside an
  // `if` statement or a conditional expression (a "soft frame"), where it fails only if reached.
  void check_builtin(BuiltinStatus status, const char* kind, const std::string& name, SourceLocation where);

  // Sets soft_ for the lifetime of the object, restoring it after.
  struct SoftFrame {
    SoftFrame(bool* soft, bool value) : soft_(soft), saved_(*soft) { *soft = value; }
    ~SoftFrame() { *soft_ = saved_; }
    bool* soft_;
    bool saved_;
  };

  Result<ExprPtr> parse_filter(ExprPtr node, bool start_inline);

  Result<ExprPtr> parse_test(ExprPtr node);

  std::vector<Token> tokens_;
  ParseLimits limits_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
  std::vector<EndTokens> end_token_stack_;
  std::vector<std::string> tag_stack_;
  std::vector<MacroStmt*> macro_stack_;
  bool soft_ = false;
  std::vector<Error> pending_;  // unknown filters and tests outside soft frames
};

}  // namespace sinter::chat::jinja
