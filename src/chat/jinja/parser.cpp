#include "chat/jinja/parser.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "chat/jinja/builtins.h"

namespace sinter::chat::jinja {
namespace {

// Statement tags Jinja2 knows but sinter does not implement (template inheritance and loading
// need a loader; Hugging Face templates are single strings).
bool is_unsupported_tag(std::string_view name) {
  for (std::string_view tag : {"block", "extends", "include", "import", "from", "autoescape"}) {
    if (name == tag) return true;
  }
  return false;
}

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

  bool at_end_token(const EndTokens& end_tokens) const {
    for (std::string_view name : end_tokens) {
      if (at_name(name)) return true;
    }
    return false;
  }

  Result<Body> subparse(const EndTokens& end_tokens) {
    DepthGuard guard(&depth_, 1);
    SINTER_TRY(check_depth());
    if (!end_tokens.empty()) end_token_stack_.push_back(end_tokens);
    auto result = subparse_body(end_tokens);
    if (!end_tokens.empty()) end_token_stack_.pop_back();
    return result;
  }

  Result<Body> subparse_body(const EndTokens& end_tokens) {
    Body body;
    while (true) {
      const Token& token = current();
      switch (token.type) {
        case TokenType::kData:
          body.push_back(std::make_unique<TextStmt>(token.where, token.text));
          advance();
          break;
        case TokenType::kVariableBegin: {
          advance();
          SourceLocation where = current().where;
          SINTER_ASSIGN(ExprPtr expr, parse_tuple(false, true, {}, false));
          SINTER_TRY(expect_type(TokenType::kVariableEnd, "end of print statement"));
          body.push_back(std::make_unique<OutputStmt>(where, std::move(expr)));
          break;
        }
        case TokenType::kBlockBegin: {
          advance();
          if (!end_tokens.empty() && at_end_token(end_tokens)) return body;
          SINTER_ASSIGN(StmtPtr statement, parse_statement());
          if (statement) body.push_back(std::move(statement));
          SINTER_TRY(expect_type(TokenType::kBlockEnd, "end of statement block"));
          break;
        }
        case TokenType::kEof: return body;
        default: return fail(concat("unexpected ", describe_token(token)));
      }
    }
  }

  // Jinja2's message for an unknown tag or a premature end of the template.
  Error fail_unknown_tag(const std::string* name) const {
    std::string message = name ? "Encountered unknown tag '" + *name + "'." : "Unexpected end of template.";
    if (!end_token_stack_.empty()) {
      std::string looking;
      for (std::string_view token : end_token_stack_.back()) {
        if (!looking.empty()) looking += " or ";
        looking += "'" + std::string(token) + "'";
      }
      bool expected_elsewhere = false;
      if (name) {
        for (const auto& tokens : end_token_stack_) {
          for (std::string_view token : tokens) expected_elsewhere = expected_elsewhere || token == *name;
        }
      }
      message += expected_elsewhere
                     ? " You probably made a nesting mistake. Jinja is expecting this tag, but "
                       "currently looking for " +
                           looking + "."
                     : " Jinja was looking for the following tags: " + looking + ".";
    }
    if (!tag_stack_.empty())
      message += " The innermost block that needs to be closed is '" + tag_stack_.back() + "'.";
    return fail(message);
  }

  Result<Body> parse_statements(const EndTokens& end_tokens, bool drop_needle) {
    skip_op(":");
    SINTER_TRY(expect_type(TokenType::kBlockEnd, "end of statement block"));
    SINTER_ASSIGN(Body body, subparse(end_tokens));
    if (current().type == TokenType::kEof) {
      end_token_stack_.push_back(end_tokens);
      Error error = fail_unknown_tag(nullptr);
      end_token_stack_.pop_back();
      return error;
    }
    if (drop_needle) advance();
    return body;
  }

  Result<StmtPtr> parse_statement() {
    const Token& token = current();
    if (token.type != TokenType::kName) return fail("tag name expected");
    std::string tag = token.text;
    SourceLocation where = token.where;
    if (is_unsupported_tag(tag)) return fail_unsupported(tag);
    static constexpr std::string_view kTags[] = {"for",  "if",    "set",   "macro",    "call",      "filter",
                                                 "with", "print", "break", "continue", "generation"};
    bool known = false;
    for (std::string_view t : kTags) known = known || t == tag;
    if (!known) return fail_unknown_tag(&tag);
    tag_stack_.push_back(tag);
    auto result = parse_tag(tag, where);
    tag_stack_.pop_back();
    return result;
  }

  Error fail_unsupported(const std::string& tag) const {
    return Error(ErrorCode::kUnsupported, concat("line ", current().where.line, ", column ",
                                                 current().where.column, ": not supported by sinter: the '",
                                                 tag, "' tag (templates are rendered standalone)"));
  }

  Result<StmtPtr> parse_tag(const std::string& tag, SourceLocation where) {
    if (tag == "for") return parse_for();
    if (tag == "if") return parse_if();
    if (tag == "set") return parse_set();
    if (tag == "macro") return parse_macro();
    if (tag == "call") return parse_call_block();
    if (tag == "filter") return parse_filter_block();
    if (tag == "with") return parse_with();
    if (tag == "print") {
      advance();
      auto tuple = std::make_unique<SequenceExpr>(ExprKind::kTuple, where);
      while (current().type != TokenType::kBlockEnd) {
        if (!tuple->items.empty()) SINTER_TRY(expect_op(","));
        SINTER_ASSIGN(ExprPtr item, parse_expression(true));
        tuple->items.push_back(std::move(item));
      }
      // {% print a, b %} prints each expression in turn.
      auto body = std::make_unique<ScopeStmt>(where);
      for (auto& item : tuple->items)
        body->body.push_back(std::make_unique<OutputStmt>(where, std::move(item)));
      return StmtPtr(std::move(body));
    }
    if (tag == "break" || tag == "continue") {
      advance();
      if (loop_depth_ == 0) return fail_at(where, "'" + tag + "' outside loop");
      return std::make_unique<Stmt>(tag == "break" ? StmtKind::kBreak : StmtKind::kContinue, where);
    }
    // Hugging Face's {% generation %} marks assistant text for training masks; it renders its body.
    advance();
    auto scope = std::make_unique<ScopeStmt>(where);
    SoftFrame inner(&soft_, false);
    SINTER_ASSIGN(scope->body, parse_statements({"endgeneration"}, true));
    return StmtPtr(std::move(scope));
  }

  Result<StmtPtr> parse_for() {
    auto node = std::make_unique<ForStmt>(advance().where);
    SINTER_ASSIGN(node->target, parse_assign_target(true, false, {"in"}, false));
    if (!skip_name("in")) return expected("in");
    SINTER_ASSIGN(node->iterable, parse_tuple(false, false, {"recursive"}, false));
    SoftFrame inner(&soft_, false);
    if (skip_name("if")) {
      SINTER_ASSIGN(node->filter, parse_expression(true));
    }
    node->recursive = skip_name("recursive");
    ++loop_depth_;
    auto body = parse_statements({"endfor", "else"}, false);
    --loop_depth_;
    if (!body) return std::move(body).error();
    node->body = std::move(body).value();
    if (advance().text == "else") {
      SINTER_ASSIGN(node->otherwise, parse_statements({"endfor"}, true));
    }
    return StmtPtr(std::move(node));
  }

  Result<StmtPtr> parse_if() {
    auto node = std::make_unique<IfStmt>(advance().where);
    SoftFrame soft(&soft_, true);
    while (true) {
      SINTER_ASSIGN(ExprPtr test, parse_tuple(false, false, {}, false));
      SINTER_ASSIGN(Body body, parse_statements({"elif", "else", "endif"}, false));
      node->branches.emplace_back(std::move(test), std::move(body));
      const Token& token = advance();
      if (token.text == "elif") continue;
      if (token.text == "else") {
        SINTER_ASSIGN(node->otherwise, parse_statements({"endif"}, true));
      }
      break;
    }
    return StmtPtr(std::move(node));
  }

  Result<StmtPtr> parse_set() {
    SourceLocation where = advance().where;
    SINTER_ASSIGN(ExprPtr target, parse_assign_target(true, false, {}, true));
    if (skip_op("=")) {
      SINTER_ASSIGN(ExprPtr value, parse_tuple(false, true, {}, false));
      return StmtPtr(std::make_unique<SetStmt>(where, std::move(target), std::move(value)));
    }
    auto node = std::make_unique<SetBlockStmt>(where);
    node->target = std::move(target);
    SoftFrame inner(&soft_, false);
    SINTER_ASSIGN(node->filter, parse_filter(nullptr, false));
    SINTER_ASSIGN(node->body, parse_statements({"endset"}, true));
    return StmtPtr(std::move(node));
  }

  Status parse_signature(MacroStmt* node) {
    SINTER_TRY(expect_op("("));
    while (!at_op(")")) {
      if (!node->parameters.empty()) SINTER_TRY(expect_op(","));
      MacroParameter parameter;
      SINTER_ASSIGN(parameter.name, expect_name());
      if (skip_op("=")) {
        SINTER_ASSIGN(parameter.default_value, parse_expression(true));
      } else if (!node->parameters.empty() && node->parameters.back().default_value) {
        return fail("non-default argument follows default argument");
      }
      node->parameters.push_back(std::move(parameter));
    }
    return expect_op(")");
  }

  // A macro body: loops outside it do not count for break/continue, and its uses of varargs,
  // kwargs and caller are recorded.
  Result<Body> parse_macro_body(MacroStmt* node, std::string_view end_tag) {
    SoftFrame inner(&soft_, false);
    int saved_loop_depth = loop_depth_;
    loop_depth_ = 0;
    macro_stack_.push_back(node);
    auto body = parse_statements({end_tag}, true);
    macro_stack_.pop_back();
    loop_depth_ = saved_loop_depth;
    return body;
  }

  Result<StmtPtr> parse_macro() {
    auto node = std::make_unique<MacroStmt>(StmtKind::kMacro, advance().where);
    SoftFrame inner(&soft_, false);
    SINTER_ASSIGN(node->name, expect_name());
    SINTER_TRY(parse_signature(node.get()));
    SINTER_ASSIGN(node->body, parse_macro_body(node.get(), "endmacro"));
    return StmtPtr(std::move(node));
  }

  Result<StmtPtr> parse_call_block() {
    auto node = std::make_unique<CallBlockStmt>(advance().where);
    node->name = "caller";
    if (at_op("(")) SINTER_TRY(parse_signature(node.get()));
    SourceLocation where = current().where;
    SINTER_ASSIGN(node->call, parse_expression(true));
    if (node->call->kind != ExprKind::kCall) return fail_at(where, "expected call");
    SINTER_ASSIGN(node->body, parse_macro_body(node.get(), "endcall"));
    return StmtPtr(std::move(node));
  }

  Result<StmtPtr> parse_filter_block() {
    auto node = std::make_unique<FilterBlockStmt>(advance().where);
    SoftFrame inner(&soft_, false);
    SINTER_ASSIGN(node->filter, parse_filter(nullptr, true));
    SINTER_ASSIGN(node->body, parse_statements({"endfilter"}, true));
    return StmtPtr(std::move(node));
  }

  Result<StmtPtr> parse_with() {
    auto node = std::make_unique<WithStmt>(advance().where);
    while (current().type != TokenType::kBlockEnd) {
      if (!node->assignments.empty()) SINTER_TRY(expect_op(","));
      SINTER_ASSIGN(ExprPtr target, parse_assign_target(true, false, {}, false));
      SINTER_TRY(expect_op("="));
      SINTER_ASSIGN(ExprPtr value, parse_expression(true));
      node->assignments.emplace_back(std::move(target), std::move(value));
    }
    SoftFrame inner(&soft_, false);
    SINTER_ASSIGN(node->body, parse_statements({"endwith"}, true));
    return StmtPtr(std::move(node));
  }

  static bool can_assign(const Expr& target) {
    if (target.kind == ExprKind::kName || target.kind == ExprKind::kNamespaceRef) return true;
    if (target.kind != ExprKind::kTuple) return false;
    for (const auto& item : static_cast<const SequenceExpr&>(target).items) {
      if (!can_assign(*item)) return false;
    }
    return true;
  }

  static std::string node_type_name(const Expr& expr) {
    switch (expr.kind) {
      case ExprKind::kLiteral: return "const";
      case ExprKind::kList: return "list";
      case ExprKind::kTuple: return "tuple";
      case ExprKind::kDict: return "dict";
      case ExprKind::kGetAttr: return "getattr";
      case ExprKind::kGetItem: return "getitem";
      case ExprKind::kCall: return "call";
      default: return "expression";
    }
  }

  Result<ExprPtr> parse_assign_target(bool with_tuple, bool name_only, const EndTokens& extra_end,
                                      bool with_namespace) {
    SourceLocation where = current().where;
    ExprPtr target;
    if (with_namespace && current().type == TokenType::kName && is_op(look(), ".")) {
      std::string name = advance().text;
      advance();
      SINTER_ASSIGN(std::string attribute, expect_name());
      target = std::make_unique<NamespaceRefExpr>(where, std::move(name), std::move(attribute));
    } else if (name_only) {
      SINTER_ASSIGN(std::string name, expect_name());
      target = std::make_unique<NameExpr>(where, std::move(name));
    } else if (with_tuple) {
      SINTER_ASSIGN(target, parse_tuple(true, true, extra_end, false));
    } else {
      SINTER_ASSIGN(target, parse_primary());
    }
    if (!can_assign(*target)) return fail_at(where, "can't assign to '" + node_type_name(*target) + "'");
    return target;
  }

  // --- expressions --------------------------------------------------------------------------
  Result<ExprPtr> parse_expression(bool with_condexpr) {
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  Result<ExprPtr> parse_condexpr() {
    DepthGuard guard(&depth_, 0);
    SourceLocation where = current().where;
    size_t pending_mark = pending_.size();
    SINTER_ASSIGN(ExprPtr expr, parse_or());
    while (skip_name("if")) {
      SINTER_TRY(grow(&guard));
      pending_.erase(pending_.begin() + static_cast<long>(pending_mark), pending_.end());  // a soft frame
      SoftFrame soft(&soft_, true);
      auto node = std::make_unique<ConditionalExpr>(where);
      node->then = std::move(expr);
      SINTER_ASSIGN(node->test, parse_or());
      if (skip_name("else")) {
        SINTER_ASSIGN(node->otherwise, parse_condexpr());
      }
      expr = std::move(node);
      where = current().where;
    }
    return expr;
  }

  Result<ExprPtr> parse_or() {
    DepthGuard guard(&depth_, 0);
    SINTER_ASSIGN(ExprPtr left, parse_and());
    while (at_name("or")) {
      SINTER_TRY(grow(&guard));
      SourceLocation where = advance().where;
      SINTER_ASSIGN(ExprPtr right, parse_and());
      left = std::make_unique<BinaryExpr>(where, BinaryOp::kOr, std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_and() {
    DepthGuard guard(&depth_, 0);
    SINTER_ASSIGN(ExprPtr left, parse_not());
    while (at_name("and")) {
      SINTER_TRY(grow(&guard));
      SourceLocation where = advance().where;
      SINTER_ASSIGN(ExprPtr right, parse_not());
      left = std::make_unique<BinaryExpr>(where, BinaryOp::kAnd, std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_not() {
    if (at_name("not")) {
      DepthGuard guard(&depth_, 1);
      SINTER_TRY(check_depth());
      SourceLocation where = advance().where;
      SINTER_ASSIGN(ExprPtr operand, parse_not());
      return ExprPtr(std::make_unique<UnaryExpr>(ExprKind::kNot, where, std::move(operand)));
    }
    return parse_compare();
  }

  Result<ExprPtr> parse_compare() {
    SourceLocation where = current().where;
    SINTER_ASSIGN(ExprPtr expr, parse_math1());
    std::unique_ptr<CompareExpr> compare;
    while (true) {
      static constexpr std::pair<std::string_view, CompareOp> kOps[] = {
          {"==", CompareOp::kEq}, {"!=", CompareOp::kNe}, {"<", CompareOp::kLt},
          {"<=", CompareOp::kLe}, {">", CompareOp::kGt},  {">=", CompareOp::kGe}};
      std::optional<CompareOp> op;
      SourceLocation op_where = current().where;
      for (const auto& [spelling, value] : kOps) {
        if (at_op(spelling)) op = value;
      }
      if (op) {
        advance();
      } else if (skip_name("in")) {
        op = CompareOp::kIn;
      } else if (at_name("not") && is_name(look(), "in")) {
        advance();
        advance();
        op = CompareOp::kNotIn;
      } else {
        break;
      }
      SINTER_ASSIGN(ExprPtr operand, parse_math1());
      if (!compare) compare = std::make_unique<CompareExpr>(where, std::move(expr));
      compare->rest.push_back({*op, std::move(operand), op_where});
    }
    if (compare) return ExprPtr(std::move(compare));
    return expr;
  }

  Result<ExprPtr> parse_math1() {
    DepthGuard guard(&depth_, 0);
    SINTER_ASSIGN(ExprPtr left, parse_concat());
    while (at_op("+") || at_op("-")) {
      SINTER_TRY(grow(&guard));
      BinaryOp op = at_op("+") ? BinaryOp::kAdd : BinaryOp::kSub;
      SourceLocation where = advance().where;
      SINTER_ASSIGN(ExprPtr right, parse_concat());
      left = std::make_unique<BinaryExpr>(where, op, std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_concat() {
    SourceLocation where = current().where;
    SINTER_ASSIGN(ExprPtr first, parse_math2());
    if (!at_op("~")) return first;
    auto node = std::make_unique<ConcatExpr>(where);
    node->parts.push_back(std::move(first));
    while (skip_op("~")) {
      SINTER_ASSIGN(ExprPtr part, parse_math2());
      node->parts.push_back(std::move(part));
    }
    return ExprPtr(std::move(node));
  }

  Result<ExprPtr> parse_math2() {
    DepthGuard guard(&depth_, 0);
    SINTER_ASSIGN(ExprPtr left, parse_pow());
    while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
      SINTER_TRY(grow(&guard));
      BinaryOp op = at_op("*")    ? BinaryOp::kMul
                    : at_op("/")  ? BinaryOp::kDiv
                    : at_op("//") ? BinaryOp::kFloorDiv
                                  : BinaryOp::kMod;
      SourceLocation where = advance().where;
      SINTER_ASSIGN(ExprPtr right, parse_pow());
      left = std::make_unique<BinaryExpr>(where, op, std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_pow() {
    DepthGuard guard(&depth_, 0);
    SINTER_ASSIGN(ExprPtr left, parse_unary(true));
    while (at_op("**")) {
      SINTER_TRY(grow(&guard));
      SourceLocation where = advance().where;
      SINTER_ASSIGN(ExprPtr right, parse_unary(true));
      left = std::make_unique<BinaryExpr>(where, BinaryOp::kPow, std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> parse_unary(bool with_filter) {
    DepthGuard guard(&depth_, 1);
    SINTER_TRY(check_depth());
    SourceLocation where = current().where;
    ExprPtr node;
    if (at_op("-") || at_op("+")) {
      ExprKind kind = at_op("-") ? ExprKind::kNegate : ExprKind::kPlus;
      advance();
      SINTER_ASSIGN(ExprPtr operand, parse_unary(false));
      node = std::make_unique<UnaryExpr>(kind, where, std::move(operand));
    } else {
      SINTER_ASSIGN(node, parse_primary());
    }
    SINTER_ASSIGN(node, parse_postfix(std::move(node)));
    if (with_filter) {
      SINTER_ASSIGN(node, parse_filter_expr(std::move(node)));
    }
    return node;
  }

  Result<ExprPtr> parse_primary() {
    DepthGuard guard(&depth_, 1);
    SINTER_TRY(check_depth());
    const Token& token = current();
    SourceLocation where = token.where;
    switch (token.type) {
      case TokenType::kName: {
        std::string name = advance().text;
        if (name == "true" || name == "True")
          return ExprPtr(std::make_unique<LiteralExpr>(where, Value(true)));
        if (name == "false" || name == "False")
          return ExprPtr(std::make_unique<LiteralExpr>(where, Value(false)));
        if (name == "none" || name == "None")
          return ExprPtr(std::make_unique<LiteralExpr>(where, Value::none()));
        if (!macro_stack_.empty()) {
          MacroStmt* macro = macro_stack_.back();
          if (name == "varargs") macro->uses_varargs = true;
          if (name == "kwargs") macro->uses_kwargs = true;
          if (name == "caller") macro->uses_caller = true;
        }
        return ExprPtr(std::make_unique<NameExpr>(where, std::move(name)));
      }
      case TokenType::kString: {
        std::string text = advance().text;
        while (current().type == TokenType::kString) text += advance().text;  // 'a' 'b' is 'ab'
        return ExprPtr(std::make_unique<LiteralExpr>(where, Value(std::move(text))));
      }
      case TokenType::kInteger:
        return ExprPtr(std::make_unique<LiteralExpr>(where, Value(advance().integer)));
      case TokenType::kFloat: return ExprPtr(std::make_unique<LiteralExpr>(where, Value(advance().number)));
      case TokenType::kOperator:
        if (token.text == "(") {
          advance();
          SINTER_ASSIGN(ExprPtr inner, parse_tuple(false, true, {}, true));
          SINTER_TRY(expect_op(")"));
          return inner;
        }
        if (token.text == "[") return parse_list();
        if (token.text == "{") return parse_dict();
        break;
      default: break;
    }
    return fail(concat("unexpected '", describe_token(token), "'"));
  }

  bool is_tuple_end(const EndTokens& extra_end) const {
    const Token& token = current();
    if (token.type == TokenType::kVariableEnd || token.type == TokenType::kBlockEnd || is_op(token, ")"))
      return true;
    return at_end_token(extra_end);
  }

  // A comma-separated tuple, or a single expression when there is no comma. `simplified` parses
  // only primaries (assignment targets).
  Result<ExprPtr> parse_tuple(bool simplified, bool with_condexpr, const EndTokens& extra_end,
                              bool explicit_parentheses) {
    SourceLocation where = current().where;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) SINTER_TRY(expect_op(","));
      if (is_tuple_end(extra_end)) break;
      ExprPtr item;
      if (simplified) {
        SINTER_ASSIGN(item, parse_primary());
      } else {
        SINTER_ASSIGN(item, parse_expression(with_condexpr));
      }
      items.push_back(std::move(item));
      if (at_op(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items.front());
      if (!explicit_parentheses)
        return fail(concat("Expected an expression, got '", describe_token(current()), "'"));
    }
    auto tuple = std::make_unique<SequenceExpr>(ExprKind::kTuple, where);
    tuple->items = std::move(items);
    return ExprPtr(std::move(tuple));
  }

  Result<ExprPtr> parse_list() {
    auto node = std::make_unique<SequenceExpr>(ExprKind::kList, advance().where);
    while (!at_op("]")) {
      if (!node->items.empty()) SINTER_TRY(expect_op(","));
      if (at_op("]")) break;
      SINTER_ASSIGN(ExprPtr item, parse_expression(true));
      node->items.push_back(std::move(item));
    }
    SINTER_TRY(expect_op("]"));
    return ExprPtr(std::move(node));
  }

  Result<ExprPtr> parse_dict() {
    auto node = std::make_unique<DictExpr>(advance().where);
    while (!at_op("}")) {
      if (!node->items.empty()) SINTER_TRY(expect_op(","));
      if (at_op("}")) break;
      SINTER_ASSIGN(ExprPtr key, parse_expression(true));
      SINTER_TRY(expect_op(":"));
      SINTER_ASSIGN(ExprPtr value, parse_expression(true));
      node->items.emplace_back(std::move(key), std::move(value));
    }
    SINTER_TRY(expect_op("}"));
    return ExprPtr(std::move(node));
  }

  Result<ExprPtr> parse_postfix(ExprPtr node) {
    DepthGuard guard(&depth_, 0);
    while (true) {
      if (at_op(".") || at_op("[") || at_op("(")) SINTER_TRY(grow(&guard));
      if (at_op(".") || at_op("[")) {
        SINTER_ASSIGN(node, parse_subscript(std::move(node)));
      } else if (at_op("(")) {
        SINTER_ASSIGN(node, parse_call(std::move(node)));
      } else {
        return node;
      }
    }
  }

  Result<ExprPtr> parse_filter_expr(ExprPtr node) {
    DepthGuard guard(&depth_, 0);
    while (true) {
      if (at_op("|") || at_name("is") || at_op("(")) SINTER_TRY(grow(&guard));
      if (at_op("|")) {
        SINTER_ASSIGN(node, parse_filter(std::move(node), false));
      } else if (at_name("is")) {
        SINTER_ASSIGN(node, parse_test(std::move(node)));
      } else if (at_op("(")) {
        SINTER_ASSIGN(node, parse_call(std::move(node)));
      } else {
        return node;
      }
    }
  }

  Result<ExprPtr> parse_subscript(ExprPtr node) {
    const Token& token = advance();
    SourceLocation where = token.where;
    if (token.text == ".") {
      const Token& attribute = current();
      if (attribute.type == TokenType::kName) {
        std::string name = advance().text;
        return ExprPtr(std::make_unique<GetAttrExpr>(where, std::move(node), std::move(name)));
      }
      if (attribute.type != TokenType::kInteger) return fail("expected name or number");
      auto index = std::make_unique<LiteralExpr>(attribute.where, Value(advance().integer));
      return ExprPtr(std::make_unique<GetItemExpr>(where, std::move(node), std::move(index)));
    }
    std::vector<ExprPtr> args;
    while (!at_op("]")) {
      if (!args.empty()) SINTER_TRY(expect_op(","));
      SINTER_ASSIGN(ExprPtr arg, parse_subscribed());
      args.push_back(std::move(arg));
    }
    SINTER_TRY(expect_op("]"));
    ExprPtr index;
    if (args.size() == 1) {
      index = std::move(args.front());
    } else {
      auto tuple = std::make_unique<SequenceExpr>(ExprKind::kTuple, where);
      tuple->items = std::move(args);
      index = std::move(tuple);
    }
    return ExprPtr(std::make_unique<GetItemExpr>(where, std::move(node), std::move(index)));
  }

  Result<ExprPtr> parse_subscribed() {
    SourceLocation where = current().where;
    auto slice = std::make_unique<SliceExpr>(where);
    if (at_op(":")) {
      advance();
    } else {
      SINTER_ASSIGN(ExprPtr start, parse_expression(true));
      if (!at_op(":")) return start;
      advance();
      slice->start = std::move(start);
    }
    if (!at_op(":") && !at_op("]") && !at_op(",")) {
      SINTER_ASSIGN(slice->stop, parse_expression(true));
    }
    if (skip_op(":")) {
      if (!at_op("]") && !at_op(",")) {
        SINTER_ASSIGN(slice->step, parse_expression(true));
      }
    }
    return ExprPtr(std::move(slice));
  }

  Result<CallArguments> parse_call_args() {
    SourceLocation where = current().where;
    SINTER_TRY(expect_op("("));
    CallArguments args;
    bool require_comma = false;
    auto invalid = [&] { return fail_at(where, "invalid syntax for function call expression"); };
    while (!at_op(")")) {
      if (require_comma) {
        SINTER_TRY(expect_op(","));
        if (at_op(")")) break;
      }
      if (skip_op("*")) {
        if (args.star_args || args.star_kwargs) return invalid();
        SINTER_ASSIGN(args.star_args, parse_expression(true));
      } else if (skip_op("**")) {
        if (args.star_kwargs) return invalid();
        SINTER_ASSIGN(args.star_kwargs, parse_expression(true));
      } else if (current().type == TokenType::kName && is_op(look(), "=")) {
        if (args.star_kwargs) return invalid();
        std::string key = advance().text;
        advance();
        SINTER_ASSIGN(ExprPtr value, parse_expression(true));
        args.keyword.emplace_back(std::move(key), std::move(value));
      } else {
        if (args.star_args || args.star_kwargs || !args.keyword.empty()) return invalid();
        SINTER_ASSIGN(ExprPtr value, parse_expression(true));
        args.positional.push_back(std::move(value));
      }
      require_comma = true;
    }
    SINTER_TRY(expect_op(")"));
    return args;
  }

  Result<ExprPtr> parse_call(ExprPtr node) {
    SourceLocation where = node->where;
    auto call = std::make_unique<CallExpr>(where, std::move(node));
    SINTER_ASSIGN(call->args, parse_call_args());
    return ExprPtr(std::move(call));
  }

  Result<std::string> parse_dotted_name() {
    SINTER_ASSIGN(std::string name, expect_name());
    while (skip_op(".")) {
      SINTER_ASSIGN(std::string part, expect_name());
      name += "." + part;
    }
    return name;
  }

  // Jinja2 rejects an unknown filter or test when it compiles the template, except inside an
  // `if` statement or a conditional expression (a "soft frame"), where it fails only if reached.
  void check_builtin(BuiltinStatus status, const char* kind, const std::string& name, SourceLocation where) {
    if (status == BuiltinStatus::kSupported || soft_) return;
    if (status == BuiltinStatus::kUnknown) {
      pending_.push_back(
          Error(ErrorCode::kFormat, concat("line ", where.line, ", column ", where.column,
                                           ": TemplateAssertionError: No ", kind, " named '", name, "'.")));
    } else {
      pending_.push_back(
          Error(ErrorCode::kUnsupported, concat("line ", where.line, ", column ", where.column,
                                                ": not supported by sinter: the '", name, "' ", kind)));
    }
  }

  // Sets soft_ for the lifetime of the object, restoring it after.
  struct SoftFrame {
    SoftFrame(bool* soft, bool value) : soft_(soft), saved_(*soft) { *soft = value; }
    ~SoftFrame() { *soft_ = saved_; }
    bool* soft_;
    bool saved_;
  };

  Result<ExprPtr> parse_filter(ExprPtr node, bool start_inline) {
    DepthGuard guard(&depth_, 0);
    while (at_op("|") || start_inline) {
      SINTER_TRY(grow(&guard));
      if (!start_inline) advance();
      start_inline = false;
      SourceLocation where = current().where;
      SINTER_ASSIGN(std::string name, parse_dotted_name());
      check_builtin(filter_status(name), "filter", name, where);
      auto filter = std::make_unique<FilterExpr>(where, std::move(node), std::move(name));
      if (at_op("(")) {
        SINTER_ASSIGN(filter->args, parse_call_args());
      }
      node = std::move(filter);
    }
    return node;
  }

  Result<ExprPtr> parse_test(ExprPtr node) {
    SourceLocation where = advance().where;
    bool negated = skip_name("not");
    SourceLocation name_where = current().where;
    SINTER_ASSIGN(std::string name, parse_dotted_name());
    check_builtin(test_status(name), "test", name, name_where);
    auto test = std::make_unique<TestExpr>(where, std::move(node), std::move(name));
    const Token& token = current();
    if (at_op("(")) {
      SINTER_ASSIGN(test->args, parse_call_args());
    } else if ((token.type == TokenType::kName || token.type == TokenType::kString ||
                token.type == TokenType::kInteger || token.type == TokenType::kFloat || is_op(token, "[") ||
                is_op(token, "{")) &&
               !at_name("else") && !at_name("or") && !at_name("and")) {
      if (at_name("is")) return fail("You cannot chain multiple tests with is");
      SINTER_ASSIGN(ExprPtr arg, parse_primary());
      SINTER_ASSIGN(arg, parse_postfix(std::move(arg)));
      test->args.positional.push_back(std::move(arg));
    }
    if (negated) return ExprPtr(std::make_unique<UnaryExpr>(ExprKind::kNot, where, std::move(test)));
    return ExprPtr(std::move(test));
  }

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

}  // namespace

Result<Body> parse_template(std::string_view source, const LexerOptions& lexer_options,
                            const ParseLimits& limits) {
  SINTER_ASSIGN(std::vector<Token> tokens, tokenize(source, lexer_options));
  Parser parser(std::move(tokens), limits);
  return parser.parse();
}

}  // namespace sinter::chat::jinja
