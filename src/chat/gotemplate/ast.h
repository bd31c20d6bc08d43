// The parse tree of Go's text/template (text/template/parse/node.go), as one node struct whose
// fields each node type uses a part of. Node::to_string() prints a node as Go's String() does;
// execution errors quote it ("executing \"\" at <.Foo>: ...").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sinter::chat::gotemplate {

enum class NodeType : uint8_t {
  kText,
  kAction,
  kBool,
  kChain,
  kCommand,
  kDot,
  kElse,  // only while parsing
  kEnd,   // only while parsing
  kField,
  kIdentifier,
  kIf,
  kList,
  kNil,
  kNumber,
  kPipe,
  kRange,
  kString,
  kTemplate,
  kVariable,
  kWith,
  kComment,
  kBreak,
  kContinue,
};

struct Tree;
struct Node;
using NodePtr = std::shared_ptr<Node>;

// A number literal with every interpretation Go gives it.
struct Number {
  bool is_int = false, is_uint = false, is_float = false, is_complex = false;
  int64_t int64 = 0;
  uint64_t uint64 = 0;
  double float64 = 0;
};

struct Node {
  NodeType type = NodeType::kText;
  size_t pos = 0;              // byte offset in the template text
  const Tree* tree = nullptr;  // the tree it was parsed in (for error positions)

  std::string text;                // Text; String (quoted form); Number; Identifier; Template name
  std::string value;               // String (unquoted)
  std::vector<std::string> ident;  // Field, Variable (first is "$name"), Chain fields
  bool boolean = false;            // Bool
  Number number;                   // Number
  std::vector<NodePtr> nodes;      // List items; Command args; Pipe commands
  std::vector<NodePtr> decl;       // Pipe: declared or assigned variables
  bool is_assign = false;          // Pipe: `=` rather than `:=`
  NodePtr pipe;                    // Action, If, Range, With, Template (may be null)
  NodePtr list, else_list;         // If, Range, With
  NodePtr operand;                 // Chain: the node the fields apply to

  std::string to_string() const;
  // Deep copy (what parse.Node.Copy does).
  NodePtr copy() const;
};

struct Tree {
  std::string name;
  std::shared_ptr<const std::string> text;  // the whole source
  NodePtr root;                             // a List
};

// The templates of one parse: the main one ("") and those from define/block.
using TreeSet = std::map<std::string, std::shared_ptr<Tree>>;

}  // namespace sinter::chat::gotemplate
