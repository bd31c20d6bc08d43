#include "chat/jinja/parser.h"

#include <initializer_list>
#include <string>
#include <vector>

#include "chat/jinja/parser_impl.h"

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

}  // namespace

bool Parser::at_end_token(const EndTokens& end_tokens) const {
  for (std::string_view name : end_tokens) {
    if (at_name(name)) return true;
  }
  return false;
}

Result<Body> Parser::subparse(const EndTokens& end_tokens) {
  DepthGuard guard(&depth_, 1);
  SINTER_TRY(check_depth());
  if (!end_tokens.empty()) end_token_stack_.push_back(end_tokens);
  auto result = subparse_body(end_tokens);
  if (!end_tokens.empty()) end_token_stack_.pop_back();
  return result;
}

Result<Body> Parser::subparse_body(const EndTokens& end_tokens) {
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
Error Parser::fail_unknown_tag(const std::string* name) const {
  std::string message = name ? "Encountered unknown tag '" + *name + "'." : "Unexpected end of template.";
  if (!end_token_stack_.empty()) {
    std::string looking;
    for (std::string_view token : end_token_stack_.back()) {
      if (!looking.empty()) looking += " or ";
      looking.append("'").append(token).append("'");  // (GCC 12 warns falsely on "'" + string&&)
    }
    bool expected_elsewhere = false;
    if (name) {
      for (const auto& tokens : end_token_stack_) {
        for (std::string_view token : tokens) expected_elsewhere = expected_elsewhere || token == *name;
      }
    }
    message += expected_elsewhere ? " You probably made a nesting mistake. Jinja is expecting this tag, but "
                                    "currently looking for " +
                                        looking + "."
                                  : " Jinja was looking for the following tags: " + looking + ".";
  }
  if (!tag_stack_.empty())
    message += " The innermost block that needs to be closed is '" + tag_stack_.back() + "'.";
  return fail(message);
}

Result<Body> Parser::parse_statements(const EndTokens& end_tokens, bool drop_needle) {
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

Result<StmtPtr> Parser::parse_statement() {
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

Error Parser::fail_unsupported(const std::string& tag) const {
  return Error(ErrorCode::kUnsupported,
               concat("line ", current().where.line, ", column ", current().where.column,
                      ": not supported by sinter: the '", tag, "' tag (templates are rendered standalone)"));
}

Result<StmtPtr> Parser::parse_tag(const std::string& tag, SourceLocation where) {
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

Result<StmtPtr> Parser::parse_for() {
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

Result<StmtPtr> Parser::parse_if() {
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

Result<StmtPtr> Parser::parse_set() {
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

Status Parser::parse_signature(MacroStmt* node) {
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
Result<Body> Parser::parse_macro_body(MacroStmt* node, std::string_view end_tag) {
  SoftFrame inner(&soft_, false);
  int saved_loop_depth = loop_depth_;
  loop_depth_ = 0;
  macro_stack_.push_back(node);
  auto body = parse_statements({end_tag}, true);
  macro_stack_.pop_back();
  loop_depth_ = saved_loop_depth;
  return body;
}

Result<StmtPtr> Parser::parse_macro() {
  auto node = std::make_unique<MacroStmt>(StmtKind::kMacro, advance().where);
  SoftFrame inner(&soft_, false);
  SINTER_ASSIGN(node->name, expect_name());
  SINTER_TRY(parse_signature(node.get()));
  SINTER_ASSIGN(node->body, parse_macro_body(node.get(), "endmacro"));
  return StmtPtr(std::move(node));
}

Result<StmtPtr> Parser::parse_call_block() {
  auto node = std::make_unique<CallBlockStmt>(advance().where);
  node->name = "caller";
  if (at_op("(")) SINTER_TRY(parse_signature(node.get()));
  SourceLocation where = current().where;
  SINTER_ASSIGN(node->call, parse_expression(true));
  if (node->call->kind != ExprKind::kCall) return fail_at(where, "expected call");
  SINTER_ASSIGN(node->body, parse_macro_body(node.get(), "endcall"));
  return StmtPtr(std::move(node));
}

Result<StmtPtr> Parser::parse_filter_block() {
  auto node = std::make_unique<FilterBlockStmt>(advance().where);
  SoftFrame inner(&soft_, false);
  SINTER_ASSIGN(node->filter, parse_filter(nullptr, true));
  SINTER_ASSIGN(node->body, parse_statements({"endfilter"}, true));
  return StmtPtr(std::move(node));
}

Result<StmtPtr> Parser::parse_with() {
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

bool Parser::can_assign(const Expr& target) {
  if (target.kind == ExprKind::kName || target.kind == ExprKind::kNamespaceRef) return true;
  if (target.kind != ExprKind::kTuple) return false;
  for (const auto& item : static_cast<const SequenceExpr&>(target).items) {
    if (!can_assign(*item)) return false;
  }
  return true;
}

std::string Parser::node_type_name(const Expr& expr) {
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

Result<ExprPtr> Parser::parse_assign_target(bool with_tuple, bool name_only, const EndTokens& extra_end,
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

Result<Body> parse_template(std::string_view source, const LexerOptions& lexer_options,
                            const ParseLimits& limits) {
  SINTER_ASSIGN(std::vector<Token> tokens, tokenize(source, lexer_options));
  Parser parser(std::move(tokens), limits);
  return parser.parse();
}

}  // namespace sinter::chat::jinja
