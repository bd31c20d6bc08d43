// Expressions: Jinja2's precedence climbing, from conditional expressions down to primaries,
// with postfix subscripts and calls, filters and tests.
#include <optional>
#include <string>
#include <vector>

#include "chat/jinja/parser_impl.h"

namespace sinter::chat::jinja {

Result<ExprPtr> Parser::parse_condexpr() {
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

Result<ExprPtr> Parser::parse_or() {
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

Result<ExprPtr> Parser::parse_and() {
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

Result<ExprPtr> Parser::parse_not() {
  if (at_name("not")) {
    DepthGuard guard(&depth_, 1);
    SINTER_TRY(check_depth());
    SourceLocation where = advance().where;
    SINTER_ASSIGN(ExprPtr operand, parse_not());
    return ExprPtr(std::make_unique<UnaryExpr>(ExprKind::kNot, where, std::move(operand)));
  }
  return parse_compare();
}

Result<ExprPtr> Parser::parse_compare() {
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

Result<ExprPtr> Parser::parse_math1() {
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

Result<ExprPtr> Parser::parse_concat() {
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

Result<ExprPtr> Parser::parse_math2() {
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

Result<ExprPtr> Parser::parse_pow() {
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

Result<ExprPtr> Parser::parse_unary(bool with_filter) {
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

Result<ExprPtr> Parser::parse_primary() {
  DepthGuard guard(&depth_, 1);
  SINTER_TRY(check_depth());
  const Token& token = current();
  SourceLocation where = token.where;
  switch (token.type) {
    case TokenType::kName: {
      std::string name = advance().text;
      if (name == "true" || name == "True") return ExprPtr(std::make_unique<LiteralExpr>(where, Value(true)));
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
    case TokenType::kInteger: return ExprPtr(std::make_unique<LiteralExpr>(where, Value(advance().integer)));
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

bool Parser::is_tuple_end(const EndTokens& extra_end) const {
  const Token& token = current();
  if (token.type == TokenType::kVariableEnd || token.type == TokenType::kBlockEnd || is_op(token, ")"))
    return true;
  return at_end_token(extra_end);
}

// A comma-separated tuple, or a single expression when there is no comma. `simplified` parses
// only primaries (assignment targets).
Result<ExprPtr> Parser::parse_tuple(bool simplified, bool with_condexpr, const EndTokens& extra_end,
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

Result<ExprPtr> Parser::parse_list() {
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

Result<ExprPtr> Parser::parse_dict() {
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

Result<ExprPtr> Parser::parse_postfix(ExprPtr node) {
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

Result<ExprPtr> Parser::parse_filter_expr(ExprPtr node) {
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

Result<ExprPtr> Parser::parse_subscript(ExprPtr node) {
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

Result<ExprPtr> Parser::parse_subscribed() {
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

Result<CallArguments> Parser::parse_call_args() {
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

Result<ExprPtr> Parser::parse_call(ExprPtr node) {
  SourceLocation where = node->where;
  auto call = std::make_unique<CallExpr>(where, std::move(node));
  SINTER_ASSIGN(call->args, parse_call_args());
  return ExprPtr(std::move(call));
}

Result<std::string> Parser::parse_dotted_name() {
  SINTER_ASSIGN(std::string name, expect_name());
  while (skip_op(".")) {
    SINTER_ASSIGN(std::string part, expect_name());
    name += "." + part;
  }
  return name;
}

// Jinja2 rejects an unknown filter or test when it compiles the template, except inside an
// `if` statement or a conditional expression (a "soft frame"), where it fails only if reached.
void Parser::check_builtin(BuiltinStatus status, const char* kind, const std::string& name,
                           SourceLocation where) {
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

Result<ExprPtr> Parser::parse_filter(ExprPtr node, bool start_inline) {
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

Result<ExprPtr> Parser::parse_test(ExprPtr node) {
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

}  // namespace sinter::chat::jinja
