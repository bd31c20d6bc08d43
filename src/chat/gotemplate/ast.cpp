#include "chat/gotemplate/ast.h"

#include "chat/gotemplate/fmt.h"

namespace sinter::chat::gotemplate {
namespace {

void write(const Node& n, std::string* out);

void write_pipe(const Node& p, std::string* out) {
  if (!p.decl.empty()) {
    for (size_t i = 0; i < p.decl.size(); ++i) {
      if (i > 0) *out += ", ";
      write(*p.decl[i], out);
    }
    *out += " := ";
  }
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    if (i > 0) *out += " | ";
    write(*p.nodes[i], out);
  }
}

void write(const Node& n, std::string* out) {
  switch (n.type) {
    case NodeType::kText: *out += n.text; return;
    case NodeType::kComment: *out += "{{" + n.text + "}}"; return;
    case NodeType::kAction:
      *out += "{{";
      write_pipe(*n.pipe, out);
      *out += "}}";
      return;
    case NodeType::kPipe: write_pipe(n, out); return;
    case NodeType::kCommand:
      for (size_t i = 0; i < n.nodes.size(); ++i) {
        if (i > 0) *out += ' ';
        if (n.nodes[i]->type == NodeType::kPipe) {
          *out += '(';
          write_pipe(*n.nodes[i], out);
          *out += ')';
        } else {
          write(*n.nodes[i], out);
        }
      }
      return;
    case NodeType::kIdentifier: *out += n.text; return;
    case NodeType::kVariable:
      for (size_t i = 0; i < n.ident.size(); ++i) {
        if (i > 0) *out += '.';
        *out += n.ident[i];
      }
      return;
    case NodeType::kDot: *out += '.'; return;
    case NodeType::kNil: *out += "nil"; return;
    case NodeType::kField:
      for (const auto& id : n.ident) *out += "." + id;
      return;
    case NodeType::kChain:
      if (n.operand->type == NodeType::kPipe) {
        *out += '(';
        write(*n.operand, out);
        *out += ')';
      } else {
        write(*n.operand, out);
      }
      for (const auto& id : n.ident) *out += "." + id;
      return;
    case NodeType::kBool: *out += n.boolean ? "true" : "false"; return;
    case NodeType::kNumber:
    case NodeType::kString: *out += n.text; return;
    case NodeType::kEnd: *out += "{{end}}"; return;
    case NodeType::kElse: *out += "{{else}}"; return;
    case NodeType::kBreak: *out += "{{break}}"; return;
    case NodeType::kContinue: *out += "{{continue}}"; return;
    case NodeType::kList:
      for (const auto& child : n.nodes) write(*child, out);
      return;
    case NodeType::kIf:
    case NodeType::kRange:
    case NodeType::kWith:
      *out += n.type == NodeType::kIf ? "{{if " : n.type == NodeType::kRange ? "{{range " : "{{with ";
      write_pipe(*n.pipe, out);
      *out += "}}";
      write(*n.list, out);
      if (n.else_list) {
        *out += "{{else}}";
        write(*n.else_list, out);
      }
      *out += "{{end}}";
      return;
    case NodeType::kTemplate:
      *out += "{{template " + go_quote(n.text);
      if (n.pipe) {
        *out += ' ';
        write_pipe(*n.pipe, out);
      }
      *out += "}}";
      return;
  }
}

}  // namespace

std::string Node::to_string() const {
  std::string out;
  write(*this, &out);
  return out;
}

NodePtr Node::copy() const {
  auto n = std::make_shared<Node>(*this);
  for (auto& child : n->nodes) child = child->copy();
  for (auto& d : n->decl) d = d->copy();
  if (n->pipe) n->pipe = n->pipe->copy();
  if (n->list) n->list = n->list->copy();
  if (n->else_list) n->else_list = n->else_list->copy();
  // A chain's operand is shared, as in Go's ChainNode.Copy.
  return n;
}

}  // namespace sinter::chat::gotemplate
