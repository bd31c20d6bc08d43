// A port of the structure of Go's parse.go. Go's parser reports errors by panicking; here a
// private exception does the same inside this file and parse_template turns it into an Error.
#include "chat/gotemplate/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "chat/gotemplate/fmt.h"
#include "chat/gotemplate/lexer.h"
#include "chat/gotemplate/strconv.h"
#include "core/utf8.h"

namespace sinter::chat::gotemplate {
namespace {

struct ParseFailure {
  std::string message;
};

class Parser {
 public:
  Parser(Lexer* lexer, std::shared_ptr<Tree> tree, TreeSet* set, const ParseOptions* options, int depth)
      : lex_(lexer), tree_(std::move(tree)), set_(set), options_(options), depth_(depth) {
    vars_.push_back("$");
    var_counts_["$"] = 1;
  }

  void parse();
  void parse_definition();
  void add();

 private:
  Item next();
  void backup() { ++peek_count_; }
  void backup2(Item t1) {
    token_[1] = std::move(t1);
    peek_count_ = 2;
  }
  void backup3(Item t2, Item t1) {
    token_[1] = std::move(t1);
    token_[2] = std::move(t2);
    peek_count_ = 3;
  }
  Item peek();
  Item next_non_space();
  Item peek_non_space();
  [[noreturn]] void errorf(const std::string& message) const;
  [[noreturn]] void unexpected(const Item& token, const std::string& context) const;
  Item expect(ItemType expected, const std::string& context);

  NodePtr make(NodeType type, size_t pos) const {
    auto n = std::make_shared<Node>();
    n->type = type;
    n->pos = pos;
    n->tree = tree_.get();
    return n;
  }
  NodePtr new_variable(size_t pos, const std::string& name) const;
  NodePtr new_field(size_t pos, const std::string& name) const;
  NodePtr new_number(const Item& token) const;

  std::pair<NodePtr, NodePtr> item_list();
  NodePtr text_or_action();
  NodePtr action();
  NodePtr break_or_continue(NodeType type, const Item& token);
  NodePtr pipeline(const std::string& context, ItemType end);
  void check_pipeline(const Node& pipe, const std::string& context) const;
  NodePtr parse_control(NodeType type, bool allow_else_if, const std::string& context);
  NodePtr else_control();
  NodePtr block_control();
  NodePtr template_control();
  std::string parse_template_name(const Item& token, const std::string& context) const;
  NodePtr command();
  NodePtr operand();
  NodePtr term();
  NodePtr use_var(size_t pos, const std::string& name) const;
  void push_var(const std::string& name) {
    vars_.push_back(name);
    ++var_counts_[name];
  }
  void pop_vars(size_t n) {
    while (vars_.size() > n) {
      --var_counts_[vars_.back()];
      vars_.pop_back();
    }
  }
  void enter() {
    if (++depth_ > options_->max_depth) errorf("template nesting too deep");
  }

  Lexer* lex_;
  std::shared_ptr<Tree> tree_;
  TreeSet* set_;
  const ParseOptions* options_;
  int depth_;
  Item token_[3];
  int peek_count_ = 0;
  std::vector<std::string> vars_;
  std::unordered_map<std::string, int> var_counts_;
  int action_line_ = 0;
  int range_depth_ = 0;
};

Item Parser::next() {
  if (peek_count_ > 0) {
    --peek_count_;
  } else {
    token_[0] = lex_->next_item();
  }
  return token_[peek_count_];
}

Item Parser::peek() {
  if (peek_count_ > 0) return token_[peek_count_ - 1];
  peek_count_ = 1;
  token_[0] = lex_->next_item();
  return token_[0];
}

Item Parser::next_non_space() {
  Item token;
  do {
    token = next();
  } while (token.type == ItemType::kSpace);
  return token;
}

Item Parser::peek_non_space() {
  Item token = next_non_space();
  backup();
  return token;
}

void Parser::errorf(const std::string& message) const {
  throw ParseFailure{concat("template: ", tree_->name, ":", token_[0].line, ": ", message)};
}

void Parser::unexpected(const Item& token, const std::string& context) const {
  if (token.type == ItemType::kError) {
    std::string extra;
    if (action_line_ != 0 && action_line_ != token.line) {
      extra = concat(" in action started at ", tree_->name, ":", action_line_);
      if (token.val.ends_with(" action")) extra = extra.substr(std::string(" in action").size());
    }
    errorf(token.val + extra);
  }
  errorf("unexpected " + item_description(token) + " in " + context);
}

Item Parser::expect(ItemType expected, const std::string& context) {
  Item token = next_non_space();
  if (token.type != expected) unexpected(token, context);
  return token;
}

NodePtr Parser::new_variable(size_t pos, const std::string& name) const {
  NodePtr n = make(NodeType::kVariable, pos);
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    n->ident.push_back(name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return n;
}

NodePtr Parser::new_field(size_t pos, const std::string& name) const {
  NodePtr n = new_variable(pos, name.substr(1));  // drop the leading period
  n->type = NodeType::kField;
  return n;
}

NodePtr Parser::new_number(const Item& token) const {
  NodePtr n = make(NodeType::kNumber, token.pos);
  n->text = token.val;
  const std::string& text = token.val;
  Number& num = n->number;
  if (token.type == ItemType::kCharConstant) {
    std::string decoded;
    size_t i = 1;
    if (text.size() < 2 || !go_unquote_char(text, &i, '\'', &decoded)) errorf("invalid syntax");
    if (text.substr(i) != "'") errorf("malformed character constant: " + text);
    size_t p = 0;
    char32_t r = decoded.size() == 1 ? static_cast<unsigned char>(decoded[0]) : utf8_decode(decoded, &p);
    num.is_int = num.is_uint = num.is_float = true;
    num.int64 = r;
    num.uint64 = r;
    num.float64 = r;
    return n;
  }
  if (token.type == ItemType::kComplex || (!text.empty() && text.back() == 'i')) {
    errorf("complex numbers are not supported: " + text);
  }
  uint64_t magnitude = 0;
  bool negative = false;
  bool underscores_ok = text.find('_') == std::string::npos || go_underscore_ok(text);
  if (underscores_ok && go_parse_integer(text, false, &magnitude, &negative)) {
    num.is_uint = true;
    num.uint64 = magnitude;
  }
  if (underscores_ok && go_parse_integer(text, true, &magnitude, &negative)) {
    bool fits = negative ? magnitude <= (uint64_t{1} << 63) : magnitude < (uint64_t{1} << 63);
    if (fits) {
      num.is_int = true;
      num.int64 = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
      if (num.int64 == 0) {
        num.is_uint = true;  // in case of -0
      }
    }
  }
  if (num.is_int) {
    num.is_float = true;
    num.float64 = static_cast<double>(num.int64);
  } else if (num.is_uint) {
    num.is_float = true;
    num.float64 = static_cast<double>(num.uint64);
  } else {
    double f = 0;
    if (go_parse_float(text, &f)) {
      if (text.find_first_of(".eEpP") == std::string::npos) errorf("integer overflow: " + go_quote(text));
      num.is_float = true;
      num.float64 = f;
      if (f >= -9223372036854775808.0 && f < 9223372036854775808.0 &&
          static_cast<double>(static_cast<int64_t>(f)) == f) {
        num.is_int = true;
        num.int64 = static_cast<int64_t>(f);
      }
      if (f >= 0 && f < 18446744073709551616.0 && static_cast<double>(static_cast<uint64_t>(f)) == f) {
        num.is_uint = true;
        num.uint64 = static_cast<uint64_t>(f);
      }
    }
  }
  if (!num.is_int && !num.is_uint && !num.is_float) errorf("illegal number syntax: " + go_quote(text));
  return n;
}

void Parser::parse() {
  tree_->root = make(NodeType::kList, peek().pos);
  while (peek().type != ItemType::kEof) {
    if (peek().type == ItemType::kLeftDelim) {
      Item delim = next();
      if (next_non_space().type == ItemType::kDefine) {
        auto definition = std::make_shared<Tree>();
        definition->name = "definition";  // until the name is known
        definition->text = tree_->text;
        Parser sub(lex_, definition, set_, options_, depth_);
        sub.parse_definition();
        continue;
      }
      backup2(delim);
    }
    NodePtr n = text_or_action();
    if (n->type == NodeType::kEnd || n->type == NodeType::kElse) errorf("unexpected " + n->to_string());
    tree_->root->nodes.push_back(n);
  }
}

void Parser::parse_definition() {
  const std::string context = "define clause";
  Item name = next_non_space();
  if (name.type != ItemType::kString && name.type != ItemType::kRawString) unexpected(name, context);
  std::string unquoted;
  if (!go_unquote(name.val, &unquoted)) errorf("invalid syntax");
  expect(ItemType::kRightDelim, context);
  tree_->name = unquoted;
  auto [list, end] = item_list();
  if (end->type != NodeType::kEnd) errorf("unexpected " + end->to_string() + " in " + context);
  tree_->root = list;
  add();
}

bool is_empty_tree(const NodePtr& n) {
  if (!n) return true;
  switch (n->type) {
    case NodeType::kComment: return true;
    case NodeType::kList:
      for (const auto& child : n->nodes) {
        if (!is_empty_tree(child)) return false;
      }
      return true;
    case NodeType::kText: return n->text.find_first_not_of(" \t\n\v\f\r") == std::string::npos;
    default: return false;
  }
}

void Parser::add() {
  auto found = set_->find(tree_->name);
  if (found == set_->end() || is_empty_tree(found->second->root)) {
    (*set_)[tree_->name] = tree_;
    return;
  }
  if (!is_empty_tree(tree_->root))
    errorf("template: multiple definition of template " + go_quote(tree_->name));
}

std::pair<NodePtr, NodePtr> Parser::item_list() {
  enter();
  NodePtr list = make(NodeType::kList, peek_non_space().pos);
  while (peek_non_space().type != ItemType::kEof) {
    NodePtr n = text_or_action();
    if (n->type == NodeType::kEnd || n->type == NodeType::kElse) {
      --depth_;
      return {list, n};
    }
    list->nodes.push_back(n);
  }
  errorf("unexpected EOF");
}

NodePtr Parser::text_or_action() {
  Item token = next_non_space();
  switch (token.type) {
    case ItemType::kText: {
      NodePtr n = make(NodeType::kText, token.pos);
      n->text = token.val;
      return n;
    }
    case ItemType::kLeftDelim: {
      action_line_ = token.line;
      NodePtr n = action();
      action_line_ = 0;
      return n;
    }
    case ItemType::kComment: {
      NodePtr n = make(NodeType::kComment, token.pos);
      n->text = token.val;
      return n;
    }
    default: unexpected(token, "input");
  }
}

NodePtr Parser::action() {
  Item token = next_non_space();
  switch (token.type) {
    case ItemType::kBlock: return block_control();
    case ItemType::kBreak: return break_or_continue(NodeType::kBreak, token);
    case ItemType::kContinue: return break_or_continue(NodeType::kContinue, token);
    case ItemType::kElse: return else_control();
    case ItemType::kEnd: return make(NodeType::kEnd, expect(ItemType::kRightDelim, "end").pos);
    case ItemType::kIf: return parse_control(NodeType::kIf, true, "if");
    case ItemType::kRange: return parse_control(NodeType::kRange, false, "range");
    case ItemType::kTemplate: return template_control();
    case ItemType::kWith: return parse_control(NodeType::kWith, false, "with");
    default: break;
  }
  backup();
  Item start = peek();
  NodePtr n = make(NodeType::kAction, start.pos);
  n->pipe = pipeline("command", ItemType::kRightDelim);
  return n;
}

NodePtr Parser::break_or_continue(NodeType type, const Item& token) {
  const std::string name = type == NodeType::kBreak ? "{{break}}" : "{{continue}}";
  Item after = next_non_space();
  if (after.type != ItemType::kRightDelim) unexpected(after, name);
  if (range_depth_ == 0) errorf(name + " outside {{range}}");
  return make(type, token.pos);
}

NodePtr Parser::pipeline(const std::string& context, ItemType end) {
  enter();
  Item start = peek_non_space();
  NodePtr pipe = make(NodeType::kPipe, start.pos);
  while (true) {  // declarations ("decls:" in Go)
    Item v = peek_non_space();
    if (v.type != ItemType::kVariable) break;
    next();
    Item after_variable = peek();
    Item following = peek_non_space();
    if (following.type == ItemType::kAssign || following.type == ItemType::kDeclare) {
      pipe->is_assign = following.type == ItemType::kAssign;
      next_non_space();
      pipe->decl.push_back(new_variable(v.pos, v.val));
      push_var(v.val);
    } else if (following.type == ItemType::kChar && following.val == ",") {
      next_non_space();
      pipe->decl.push_back(new_variable(v.pos, v.val));
      push_var(v.val);
      if (context == "range" && pipe->decl.size() < 2) {
        ItemType t = peek_non_space().type;
        if (t == ItemType::kVariable || t == ItemType::kRightDelim || t == ItemType::kRightParen) continue;
        errorf("range can only initialize variables");
      }
      errorf("too many declarations in " + context);
    } else if (after_variable.type == ItemType::kSpace) {
      backup3(v, after_variable);
    } else {
      backup2(v);
    }
    break;
  }
  while (true) {
    Item token = next_non_space();
    if (token.type == end) {
      check_pipeline(*pipe, context);
      --depth_;
      return pipe;
    }
    switch (token.type) {
      case ItemType::kBool:
      case ItemType::kCharConstant:
      case ItemType::kComplex:
      case ItemType::kDot:
      case ItemType::kField:
      case ItemType::kIdentifier:
      case ItemType::kNumber:
      case ItemType::kNil:
      case ItemType::kRawString:
      case ItemType::kString:
      case ItemType::kVariable:
      case ItemType::kLeftParen:
        backup();
        pipe->nodes.push_back(command());
        break;
      default: unexpected(token, context);
    }
  }
}

void Parser::check_pipeline(const Node& pipe, const std::string& context) const {
  if (pipe.nodes.empty()) errorf("missing value for " + context);
  for (size_t i = 1; i < pipe.nodes.size(); ++i) {
    switch (pipe.nodes[i]->nodes[0]->type) {
      case NodeType::kBool:
      case NodeType::kDot:
      case NodeType::kNil:
      case NodeType::kNumber:
      case NodeType::kString: errorf(concat("non executable command in pipeline stage ", i + 1));
      default: break;
    }
  }
}

NodePtr Parser::parse_control(NodeType type, bool allow_else_if, const std::string& context) {
  size_t vars_mark = vars_.size();
  NodePtr pipe = pipeline(context, ItemType::kRightDelim);
  if (type == NodeType::kRange) ++range_depth_;
  auto [list, next_node] = item_list();
  if (type == NodeType::kRange) --range_depth_;
  NodePtr else_list;
  if (next_node->type == NodeType::kElse) {
    if (allow_else_if && peek().type == ItemType::kIf) {
      // {{else if ...}}: an else list holding one nested if that consumes the {{end}}.
      next();
      else_list = make(NodeType::kList, next_node->pos);
      enter();
      else_list->nodes.push_back(parse_control(NodeType::kIf, true, "if"));
      --depth_;
    } else {
      NodePtr end;
      std::tie(else_list, end) = item_list();
      if (end->type != NodeType::kEnd) errorf("expected end; found " + end->to_string());
    }
  }
  pop_vars(vars_mark);
  NodePtr n = make(type, pipe->pos);
  n->pipe = pipe;
  n->list = list;
  n->else_list = else_list;
  return n;
}

NodePtr Parser::else_control() {
  Item p = peek_non_space();
  if (p.type == ItemType::kIf) return make(NodeType::kElse, p.pos);
  Item token = expect(ItemType::kRightDelim, "else");
  return make(NodeType::kElse, token.pos);
}

std::string Parser::parse_template_name(const Item& token, const std::string& context) const {
  if (token.type != ItemType::kString && token.type != ItemType::kRawString) unexpected(token, context);
  std::string name;
  if (!go_unquote(token.val, &name)) errorf("invalid syntax");
  return name;
}

NodePtr Parser::block_control() {
  const std::string context = "block clause";
  Item token = next_non_space();
  std::string name = parse_template_name(token, context);
  NodePtr pipe = pipeline(context, ItemType::kRightDelim);
  auto block = std::make_shared<Tree>();
  block->name = name;
  block->text = tree_->text;
  Parser sub(lex_, block, set_, options_, depth_);
  auto [list, end] = sub.item_list();
  if (end->type != NodeType::kEnd) errorf("unexpected " + end->to_string() + " in " + context);
  block->root = list;
  sub.add();
  NodePtr n = make(NodeType::kTemplate, token.pos);
  n->text = name;
  n->pipe = pipe;
  return n;
}

NodePtr Parser::template_control() {
  const std::string context = "template clause";
  Item token = next_non_space();
  std::string name = parse_template_name(token, context);
  NodePtr pipe;
  if (next_non_space().type != ItemType::kRightDelim) {
    backup();
    pipe = pipeline(context, ItemType::kRightDelim);
  }
  NodePtr n = make(NodeType::kTemplate, token.pos);
  n->text = name;
  n->pipe = pipe;
  return n;
}

NodePtr Parser::command() {
  NodePtr cmd = make(NodeType::kCommand, peek_non_space().pos);
  while (true) {
    peek_non_space();  // skip leading spaces
    NodePtr op = operand();
    if (op) cmd->nodes.push_back(op);
    Item token = next();
    if (token.type == ItemType::kSpace) continue;
    if (token.type == ItemType::kRightDelim || token.type == ItemType::kRightParen) {
      backup();
    } else if (token.type != ItemType::kPipe) {
      unexpected(token, "operand");
    }
    break;
  }
  if (cmd->nodes.empty()) errorf("empty command");
  return cmd;
}

NodePtr Parser::operand() {
  NodePtr node = term();
  if (!node) return nullptr;
  if (peek().type == ItemType::kField) {
    NodePtr chain = make(NodeType::kChain, peek().pos);
    chain->operand = node;
    while (peek().type == ItemType::kField) chain->ident.push_back(next().val.substr(1));
    switch (node->type) {
      case NodeType::kField: {
        std::string name = chain->to_string();
        return new_field(chain->pos, name);
      }
      case NodeType::kVariable: return new_variable(chain->pos, chain->to_string());
      case NodeType::kBool:
      case NodeType::kString:
      case NodeType::kNumber:
      case NodeType::kNil:
      case NodeType::kDot: errorf("unexpected . after term " + go_quote(node->to_string()));
      default: return chain;
    }
  }
  return node;
}

NodePtr Parser::term() {
  Item token = next_non_space();
  switch (token.type) {
    case ItemType::kIdentifier: {
      if (!options_->is_function(token.val)) errorf("function " + go_quote(token.val) + " not defined");
      NodePtr n = make(NodeType::kIdentifier, token.pos);
      n->text = token.val;
      return n;
    }
    case ItemType::kDot: return make(NodeType::kDot, token.pos);
    case ItemType::kNil: return make(NodeType::kNil, token.pos);
    case ItemType::kVariable: return use_var(token.pos, token.val);
    case ItemType::kField: return new_field(token.pos, token.val);
    case ItemType::kBool: {
      NodePtr n = make(NodeType::kBool, token.pos);
      n->boolean = token.val == "true";
      return n;
    }
    case ItemType::kCharConstant:
    case ItemType::kComplex:
    case ItemType::kNumber: return new_number(token);
    case ItemType::kLeftParen: return pipeline("parenthesized pipeline", ItemType::kRightParen);
    case ItemType::kString:
    case ItemType::kRawString: {
      NodePtr n = make(NodeType::kString, token.pos);
      n->text = token.val;
      if (!go_unquote(token.val, &n->value)) errorf("invalid syntax");
      return n;
    }
    default: break;
  }
  backup();
  return nullptr;
}

NodePtr Parser::use_var(size_t pos, const std::string& name) const {
  NodePtr v = new_variable(pos, name);
  auto found = var_counts_.find(v->ident[0]);
  if (found == var_counts_.end() || found->second == 0) errorf("undefined variable " + go_quote(v->ident[0]));
  return v;
}

}  // namespace

Result<TreeSet> parse_template(std::string_view source, const std::string& name,
                               const ParseOptions& options) {
  TreeSet set;
  auto text = std::make_shared<const std::string>(source);
  Lexer lexer(*text);
  auto tree = std::make_shared<Tree>();
  tree->name = name;
  tree->text = text;
  try {
    Parser parser(&lexer, tree, &set, &options, 0);
    parser.parse();
    parser.add();
  } catch (const ParseFailure& failure) {
    return Error(ErrorCode::kInvalidArgument, failure.message);
  }
  return set;
}

}  // namespace sinter::chat::gotemplate
