// The syntax tree of a parsed template: expressions and statements, each with the location of the
// token that started it (for error messages). Node kinds follow Jinja2's nodes.py.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja/errors.h"
#include "chat/jinja/value.h"

namespace sinter::chat::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class ExprKind {
  kLiteral,      // 1, 'a', true, none
  kName,         // x
  kList,         // [a, b]
  kTuple,        // (a, b) or a, b
  kDict,         // {k: v}
  kGetAttr,      // x.name
  kGetItem,      // x[i]
  kSlice,        // start:stop:step, only as the index of kGetItem
  kCall,         // f(a, k=v)
  kFilter,       // x | name(args)
  kTest,         // x is name(args)
  kNot,          // not x
  kNegate,       // -x
  kPlus,         // +x
  kBinary,       // x + y, x and y ...
  kConcat,       // x ~ y ~ z
  kCompare,      // x < y == z, x in y
  kConditional,  // a if b else c
  kNamespaceRef  // ns.attr as the target of {% set %}
};

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow, kAnd, kOr };
enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn };

struct Expr {
  Expr(ExprKind k, SourceLocation w) : kind(k), where(w) {}
  virtual ~Expr() = default;
  ExprKind kind;
  SourceLocation where;
};

struct LiteralExpr : Expr {
  LiteralExpr(SourceLocation w, Value v) : Expr(ExprKind::kLiteral, w), value(std::move(v)) {}
  Value value;
};

struct NameExpr : Expr {
  NameExpr(SourceLocation w, std::string n) : Expr(ExprKind::kName, w), name(std::move(n)) {}
  std::string name;
};

// kList and kTuple.
struct SequenceExpr : Expr {
  SequenceExpr(ExprKind k, SourceLocation w) : Expr(k, w) {}
  std::vector<ExprPtr> items;
};

struct DictExpr : Expr {
  explicit DictExpr(SourceLocation w) : Expr(ExprKind::kDict, w) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};

struct GetAttrExpr : Expr {
  GetAttrExpr(SourceLocation w, ExprPtr o, std::string n)
      : Expr(ExprKind::kGetAttr, w), object(std::move(o)), name(std::move(n)) {}
  ExprPtr object;
  std::string name;
};

struct GetItemExpr : Expr {
  GetItemExpr(SourceLocation w, ExprPtr o, ExprPtr i)
      : Expr(ExprKind::kGetItem, w), object(std::move(o)), index(std::move(i)) {}
  ExprPtr object;
  ExprPtr index;
};

struct SliceExpr : Expr {
  explicit SliceExpr(SourceLocation w) : Expr(ExprKind::kSlice, w) {}
  ExprPtr start, stop, step;  // each may be null
};

struct CallArguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
  ExprPtr star_args;    // *args
  ExprPtr star_kwargs;  // **kwargs
};

struct CallExpr : Expr {
  CallExpr(SourceLocation w, ExprPtr c) : Expr(ExprKind::kCall, w), callee(std::move(c)) {}
  ExprPtr callee;
  CallArguments args;
};

// A filter application; `input` is null in `{% filter f %}` and `{% set x | f %}` (the body).
struct FilterExpr : Expr {
  FilterExpr(SourceLocation w, ExprPtr in, std::string n)
      : Expr(ExprKind::kFilter, w), input(std::move(in)), name(std::move(n)) {}
  ExprPtr input;
  std::string name;
  CallArguments args;
};

struct TestExpr : Expr {
  TestExpr(SourceLocation w, ExprPtr in, std::string n)
      : Expr(ExprKind::kTest, w), input(std::move(in)), name(std::move(n)) {}
  ExprPtr input;
  std::string name;
  CallArguments args;
};

// kNot, kNegate, kPlus.
struct UnaryExpr : Expr {
  UnaryExpr(ExprKind k, SourceLocation w, ExprPtr o) : Expr(k, w), operand(std::move(o)) {}
  ExprPtr operand;
};

struct BinaryExpr : Expr {
  BinaryExpr(SourceLocation w, BinaryOp o, ExprPtr l, ExprPtr r)
      : Expr(ExprKind::kBinary, w), op(o), left(std::move(l)), right(std::move(r)) {}
  BinaryOp op;
  ExprPtr left, right;
};

struct ConcatExpr : Expr {
  explicit ConcatExpr(SourceLocation w) : Expr(ExprKind::kConcat, w) {}
  std::vector<ExprPtr> parts;
};

struct CompareExpr : Expr {
  CompareExpr(SourceLocation w, ExprPtr f) : Expr(ExprKind::kCompare, w), first(std::move(f)) {}
  ExprPtr first;
  struct Operand {
    CompareOp op;
    ExprPtr value;
    SourceLocation where;
  };
  std::vector<Operand> rest;
};

struct ConditionalExpr : Expr {
  explicit ConditionalExpr(SourceLocation w) : Expr(ExprKind::kConditional, w) {}
  ExprPtr test, then, otherwise;  // otherwise may be null (gives Undefined)
};

struct NamespaceRefExpr : Expr {
  NamespaceRefExpr(SourceLocation w, std::string n, std::string a)
      : Expr(ExprKind::kNamespaceRef, w), name(std::move(n)), attribute(std::move(a)) {}
  std::string name;
  std::string attribute;
};

enum class StmtKind {
  kText,    // template data
  kOutput,  // {{ expr }}
  kIf,
  kFor,
  kSet,       // {% set target = expr %}
  kSetBlock,  // {% set target %}...{% endset %}
  kMacro,
  kCallBlock,    // {% call macro() %}...{% endcall %}
  kFilterBlock,  // {% filter f %}...{% endfilter %}
  kWith,
  kBreak,
  kContinue,
  kScope,  // a body in a scope of its own: Hugging Face's {% generation %}, {% print a, b %}
};

struct Stmt {
  Stmt(StmtKind k, SourceLocation w) : kind(k), where(w) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  SourceLocation where;
};

struct TextStmt : Stmt {
  TextStmt(SourceLocation w, std::string t) : Stmt(StmtKind::kText, w), text(std::move(t)) {}
  std::string text;
};

struct OutputStmt : Stmt {
  OutputStmt(SourceLocation w, ExprPtr e) : Stmt(StmtKind::kOutput, w), expr(std::move(e)) {}
  ExprPtr expr;
};

struct IfStmt : Stmt {
  explicit IfStmt(SourceLocation w) : Stmt(StmtKind::kIf, w) {}
  std::vector<std::pair<ExprPtr, Body>> branches;  // if, elif, elif ...
  Body otherwise;
};

struct ForStmt : Stmt {
  explicit ForStmt(SourceLocation w) : Stmt(StmtKind::kFor, w) {}
  ExprPtr target;  // a name or a tuple of targets
  ExprPtr iterable;
  ExprPtr filter;  // `for x in xs if cond`; may be null
  Body body;
  Body otherwise;  // rendered when nothing was iterated
  bool recursive = false;
};

struct SetStmt : Stmt {
  SetStmt(SourceLocation w, ExprPtr t, ExprPtr v)
      : Stmt(StmtKind::kSet, w), target(std::move(t)), value(std::move(v)) {}
  ExprPtr target;  // name, tuple of names, or namespace reference
  ExprPtr value;
};

struct SetBlockStmt : Stmt {
  explicit SetBlockStmt(SourceLocation w) : Stmt(StmtKind::kSetBlock, w) {}
  ExprPtr target;
  ExprPtr filter;  // a FilterExpr chain applied to the body, or null
  Body body;
};

struct MacroParameter {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct MacroStmt : Stmt {
  MacroStmt(StmtKind k, SourceLocation w) : Stmt(k, w) {}
  std::string name;  // "caller" for a call block
  std::vector<MacroParameter> parameters;
  Body body;
  // Which of Jinja2's implicit variables the body refers to: a macro accepts extra positional
  // (keyword) arguments only when its body uses `varargs` (`kwargs`).
  bool uses_varargs = false;
  bool uses_kwargs = false;
  bool uses_caller = false;
};

struct CallBlockStmt : MacroStmt {
  explicit CallBlockStmt(SourceLocation w) : MacroStmt(StmtKind::kCallBlock, w) {}
  ExprPtr call;  // a CallExpr
};

struct FilterBlockStmt : Stmt {
  explicit FilterBlockStmt(SourceLocation w) : Stmt(StmtKind::kFilterBlock, w) {}
  ExprPtr filter;  // FilterExpr chain whose innermost input is null
  Body body;
};

struct WithStmt : Stmt {
  explicit WithStmt(SourceLocation w) : Stmt(StmtKind::kWith, w) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> assignments;
  Body body;
};

struct ScopeStmt : Stmt {
  explicit ScopeStmt(SourceLocation w) : Stmt(StmtKind::kScope, w) {}
  Body body;
};

}  // namespace sinter::chat::jinja
