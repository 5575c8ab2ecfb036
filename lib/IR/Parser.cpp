//===- Parser.cpp - Reading .uop text into UOps -----------------*- C++ -*-===//
// A recursive-descent parser over one statement per line; on an error it reports and skips to the next line.
//===----------------------------------------------------------------------===//

#include "IR/Parser.h"

#include "IR/Infer.h"
#include "IR/Lexer.h"
#include "IR/Sugar.h"
#include "IR/SymbolicDims.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace tgc {

std::optional<DType> parseDTypeName(std::string_view text) {
  if (auto s = scalarFromName(text))
    return DType(*s);
  // vector spelling: <scalar>x<lanes>, e.g. f32x4
  size_t x = text.rfind('x');
  if (x == std::string_view::npos || x == 0 || x + 1 >= text.size())
    return std::nullopt;
  auto s = scalarFromName(text.substr(0, x));
  if (!s || *s == Scalar::Void)
    return std::nullopt;
  int lanes = 0;
  for (char c : text.substr(x + 1)) {
    if (c < '0' || c > '9' || lanes > 1024)
      return std::nullopt;
    lanes = lanes * 10 + (c - '0');
  }
  if (lanes < 2 || lanes > 1024)
    return std::nullopt;
  return DType(*s, uint16_t(lanes), AddrSpace::None);
}

std::vector<Chunk> splitInputFile(std::string_view text) {
  std::vector<Chunk> chunks;
  Chunk cur{"", 1};
  int line = 1;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    bool last = end == std::string_view::npos;
    std::string_view l = text.substr(pos, last ? std::string_view::npos : end - pos);
    std::string_view trimmed = l;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\r' || trimmed.back() == '\t'))
      trimmed.remove_suffix(1);
    if (trimmed == "// -----") {
      chunks.push_back(std::move(cur));
      cur = Chunk{"", line + 1};
    } else {
      cur.text += l;
      if (!last)
        cur.text += '\n';
    }
    if (last)
      break;
    pos = end + 1;
    ++line;
  }
  chunks.push_back(std::move(cur));
  return chunks;
}

namespace {

constexpr int kMaxArgDepth = 32;

class Parser {
public:
  Parser(Context &ctx, std::string_view text, const std::string &file, DiagEngine &diags, int firstLine)
      : ctx_(ctx), lex_(text, firstLine), diags_(diags), file_(file), errorsAtStart_(diags.errorCount()) {
    module_.fileName = file;
    advance();
  }

  std::optional<Module> run();

private:
  struct Statement {
    Loc loc;
    std::string name;
    Op op = Op::Noop;
    Loc opLoc;
    std::vector<const UOp *> src;
    Arg arg;
    Arg tag;
    std::optional<DType> dtype;
    std::optional<Shape> shape;
    std::vector<const UOp *> dimVars; // per axis of `shape` when one is a variable, else empty
    Loc typeLoc;
  };

  void advance() { tok_ = lex_.next(); }
  Loc here() const { return Loc{file_, tok_.line, tok_.col}; }
  bool error(const Loc &loc, std::string msg) {
    diags_.error(loc, std::move(msg));
    return false;
  }
  bool errorHere(std::string msg) {
    if (tok_.kind == Tok::Error)
      return error(here(), tok_.text);
    return error(here(), std::move(msg));
  }
  bool expect(Tok kind, const char *what) {
    if (tok_.kind != kind)
      return errorHere(std::string("expected ") + what + ", found " + describe(tok_));
    advance();
    return true;
  }
  static std::string describe(const Token &t) {
    switch (t.kind) {
    case Tok::Ident: return "'" + t.text + "'";
    case Tok::Ssa: return "'%" + t.text + "'";
    case Tok::Int:
    case Tok::Float: return "'" + t.text + "'";
    default: return std::string(tokName(t.kind));
    }
  }
  void skipLine() {
    while (tok_.kind != Tok::Newline && tok_.kind != Tok::Eof)
      advance();
  }

  bool parseDirective();
  bool parseStatement();
  bool parseOperands(Statement &st);
  bool parseArg(Arg &out, int depth);
  bool parseIdentArg(Arg &out);
  bool parseType(Statement &st);
  bool parseDType(DType &out);
  bool parseShape(Shape &out, std::vector<const UOp *> &vars);
  bool build(Statement &st);
  void locateNew(const UOp *u, const Loc &loc, int depth);
  static void roundConstLiteral(Statement &st, DType dtype);
  void warnUnreachable();
  bool bindVariable(const UOp *u, const Statement &st);

  Context &ctx_;
  Lexer lex_;
  DiagEngine &diags_;
  std::string file_;
  int errorsAtStart_;
  Token tok_;
  Module module_;
  std::unordered_map<std::string, std::pair<const UOp *, Loc>> values_;
  std::unordered_map<std::string, const UOp *> variables_; // define_var nodes by variable name
  std::vector<std::pair<const UOp *, Statement>> statements_;
  const UOp *last_ = nullptr;
};

/// module ::= (directive | statement | empty-line)*
std::optional<Module> Parser::run() {
  while (tok_.kind != Tok::Eof) {
    bool ok = true;
    if (tok_.kind == Tok::Newline) {
      advance();
      continue;
    }
    if (tok_.kind == Tok::Ident && tok_.text == "weights")
      ok = parseDirective();
    else if (tok_.kind == Tok::Ssa)
      ok = parseStatement();
    else
      ok = errorHere("expected a statement ('%name = op ...') or a directive, found " + describe(tok_));
    if (!ok)
      skipLine();
  }
  if (diags_.errorCount() != errorsAtStart_)
    return std::nullopt;
  module_.root = last_;
  warnUnreachable();
  return std::move(module_);
}

/// directive ::= 'weights' string
bool Parser::parseDirective() {
  advance();
  if (tok_.kind != Tok::String)
    return errorHere("expected the weights file name as a string, found " + describe(tok_));
  module_.weightFiles.push_back(tok_.text);
  advance();
  if (tok_.kind != Tok::Newline && tok_.kind != Tok::Eof)
    return errorHere("expected end of line after the weights directive");
  return true;
}

/// statement ::= ssa '=' op ['(' [ssa (',' ssa)*] ')'] [arg] ['{' 'tag' '=' arg '}'] [':' type]
bool Parser::parseStatement() {
  Statement st;
  st.loc = here();
  st.name = tok_.text;
  advance();
  if (!expect(Tok::Equal, "'='"))
    return false;
  if (tok_.kind != Tok::Ident)
    return errorHere("expected an op name, found " + describe(tok_));
  st.opLoc = here();
  auto op = opFromName(tok_.text);
  if (!op)
    return errorHere("unknown op '" + tok_.text + "'");
  st.op = *op;
  advance();
  if (tok_.kind == Tok::LParen && !parseOperands(st))
    return false;
  bool hasArg =
      tok_.kind != Tok::LBrace && tok_.kind != Tok::Colon && tok_.kind != Tok::Newline && tok_.kind != Tok::Eof;
  if (hasArg && !parseArg(st.arg, 0))
    return false;
  if (tok_.kind == Tok::LBrace) {
    advance();
    if (tok_.kind != Tok::Ident || tok_.text != "tag")
      return errorHere("expected 'tag' in '{...}'");
    advance();
    if (!expect(Tok::Equal, "'='") || !parseArg(st.tag, 0) || !expect(Tok::RBrace, "'}'"))
      return false;
  }
  if (tok_.kind == Tok::Colon) {
    advance();
    st.typeLoc = here();
    if (!parseType(st))
      return false;
  }
  if (tok_.kind != Tok::Newline && tok_.kind != Tok::Eof)
    return errorHere("expected end of line, found " + describe(tok_));
  return build(st);
}

/// operands ::= '(' [ssa (',' ssa)*] ')'
bool Parser::parseOperands(Statement &st) {
  advance();
  if (tok_.kind == Tok::RParen) {
    advance();
    return true;
  }
  while (true) {
    if (tok_.kind != Tok::Ssa)
      return errorHere("expected an operand ('%name'), found " + describe(tok_));
    auto it = values_.find(tok_.text);
    if (it == values_.end())
      return errorHere("use of undefined value '%" + tok_.text + "'");
    st.src.push_back(it->second.first);
    advance();
    if (tok_.kind == Tok::RParen) {
      advance();
      return true;
    }
    if (!expect(Tok::Comma, "',' or ')'"))
      return false;
  }
}

/// arg ::= int | float | string | 'true' | 'false' | 'inf' | 'nan' | dtype | op | '[' [arg (',' arg)*] ']'
bool Parser::parseArg(Arg &out, int depth) {
  if (depth > kMaxArgDepth)
    return errorHere("arg nested too deeply");
  switch (tok_.kind) {
  case Tok::Int:
    out = Arg(tok_.intValue);
    advance();
    return true;
  case Tok::Float:
    out = Arg(tok_.floatValue);
    advance();
    return true;
  case Tok::String:
    out = Arg(tok_.text);
    advance();
    return true;
  case Tok::Ident: return parseIdentArg(out);
  case Tok::LBracket: {
    advance();
    Arg::Tuple items;
    while (tok_.kind != Tok::RBracket) {
      Arg item;
      if (!parseArg(item, depth + 1))
        return false;
      items.push_back(std::move(item));
      if (tok_.kind == Tok::RBracket)
        break;
      if (!expect(Tok::Comma, "',' or ']'"))
        return false;
    }
    advance();
    out = Arg(std::move(items));
    return true;
  }
  default: return errorHere("expected an arg (number, string, dtype, op or '[...]'), found " + describe(tok_));
  }
}

bool Parser::parseIdentArg(Arg &out) {
  const std::string &w = tok_.text;
  if (w == "true" || w == "false") {
    out = Arg(w == "true");
  } else if (w == "inf") {
    out = Arg(std::numeric_limits<double>::infinity());
  } else if (w == "nan") {
    out = Arg(std::numeric_limits<double>::quiet_NaN());
  } else if (w == "ptr") {
    DType d;
    if (!parseDType(d))
      return false;
    out = Arg(d);
    return true;
  } else if (auto d = parseDTypeName(w)) {
    out = Arg(*d);
  } else if (auto op = opFromName(w)) {
    out = Arg(*op);
  } else {
    return errorHere("unknown name '" + w + "' in arg (expected a dtype, an op, true, false, inf or nan)");
  }
  advance();
  return true;
}

/// type ::= dtype [shape]
bool Parser::parseType(Statement &st) {
  DType d;
  if (!parseDType(d))
    return false;
  st.dtype = d;
  if (tok_.kind == Tok::LBracket) {
    Shape s;
    if (!parseShape(s, st.dimVars))
      return false;
    st.shape = std::move(s);
  }
  return true;
}

/// dtype ::= scalar | scalar 'x' lanes | 'ptr' '<' dtype [',' ('global'|'local'|'reg')] '>'
bool Parser::parseDType(DType &out) {
  if (tok_.kind != Tok::Ident)
    return errorHere("expected a dtype, found " + describe(tok_));
  if (tok_.text != "ptr") {
    auto d = parseDTypeName(tok_.text);
    if (!d)
      return errorHere("unknown dtype '" + tok_.text + "'");
    out = *d;
    advance();
    return true;
  }
  advance();
  if (!expect(Tok::Less, "'<' after 'ptr'"))
    return false;
  DType pointee;
  if (tok_.kind == Tok::Ident && tok_.text == "ptr")
    return errorHere("pointers to pointers are not supported");
  if (!parseDType(pointee))
    return false;
  if (pointee.isVoid())
    return errorHere("pointer to void is not supported");
  AddrSpace as = AddrSpace::Global;
  if (tok_.kind == Tok::Comma) {
    advance();
    if (tok_.kind == Tok::Ident && tok_.text == "global")
      as = AddrSpace::Global;
    else if (tok_.kind == Tok::Ident && tok_.text == "local")
      as = AddrSpace::Local;
    else if (tok_.kind == Tok::Ident && tok_.text == "reg")
      as = AddrSpace::Reg;
    else
      return errorHere("expected an address space (global, local or reg), found " + describe(tok_));
    advance();
  }
  if (!expect(Tok::Greater, "'>'"))
    return false;
  out = pointee.ptr(as);
  return true;
}

/// shape ::= '[' [dim (',' dim)*] ']'     dim ::= int | variable name (of a define_var above)
bool Parser::parseShape(Shape &out, std::vector<const UOp *> &vars) {
  advance();
  while (tok_.kind != Tok::RBracket) {
    if (out.size() >= 64)
      return errorHere("too many dimensions (at most 64)");
    if (tok_.kind == Tok::Ident) {
      auto it = variables_.find(tok_.text);
      if (it == variables_.end())
        return errorHere("unknown variable '" + tok_.text + "' in shape (define it with define_var first)");
      if (it->second->dtype() != dt::Index)
        return errorHere("variable '" + tok_.text + "' must have dtype index to be a dimension");
      if (varMin(it->second) < 0)
        return errorHere("variable '" + tok_.text + "' may be negative, so it cannot be a dimension");
      vars.resize(out.size(), nullptr);
      vars.push_back(it->second);
      out.push_back(varMax(it->second));
    } else if (tok_.kind != Tok::Int) {
      return errorHere("expected a dimension (integer or variable), found " + describe(tok_));
    } else if (tok_.intValue < 0) {
      return errorHere("dimensions must not be negative");
    } else {
      out.push_back(tok_.intValue);
    }
    advance();
    if (tok_.kind == Tok::RBracket)
      break;
    if (!expect(Tok::Comma, "',' or ']'"))
      return false;
  }
  advance();
  if (!vars.empty())
    vars.resize(out.size(), nullptr);
  return true;
}

/// Float constants are written in decimal; like C's 0.1f, the literal is rounded to the constant's element dtype
/// (a vector constant has the value in every lane).
void Parser::roundConstLiteral(Statement &st, DType dtype) {
  DType e = dtype.element();
  if (st.op != Op::Const || !e.isFloat())
    return;
  if (st.arg.isInt())
    st.arg = Arg(roundToDType(double(st.arg.getInt()), e));
  else if (st.arg.isFloat())
    st.arg = Arg(roundToDType(st.arg.getFloat(), e));
}

/// u and the nodes below it without a location (those desugar made: at most 3 levels down) point at `loc`.
void Parser::locateNew(const UOp *u, const Loc &loc, int depth) {
  if (depth == 0 || ctx_.loc(u))
    return;
  ctx_.setLoc(u, loc);
  for (const UOp *s : u->src())
    locateNew(s, loc, depth - 1);
}

/// Infer what was not written, check what was, then make (or find) the node and bind its name.
bool Parser::build(Statement &st) {
  std::string err;
  DType dtype;
  if (st.dtype) {
    dtype = *st.dtype;
  } else {
    auto inferred = inferDType(st.op, st.src, st.arg, err);
    if (!inferred)
      return error(st.opLoc, err);
    dtype = *inferred;
  }
  roundConstLiteral(st, dtype);
  BuildErrorSite site;
  const UOp *u = buildNode(ctx_, st.op, st.src, st.arg, dtype, st.shape, err, &site, st.tag, st.dimVars);
  if (!u)
    return error(site == BuildErrorSite::Type ? st.typeLoc : st.opLoc, err);
  if (u->op() == Op::DefineVar && u->arg().isTuple() && !u->arg().getTuple().empty() &&
      u->arg().getTuple()[0].isString() && !bindVariable(u, st))
    return false;
  auto prev = values_.find(st.name);
  if (prev != values_.end()) {
    error(st.loc, "redefinition of '%" + st.name + "'");
    diags_.note(prev->second.second, "previous definition is here");
    return false;
  }
  locateNew(u, st.loc, 4);
  values_.emplace(st.name, std::make_pair(u, st.loc));
  statements_.emplace_back(u, st);
  last_ = u;
  return true;
}

/// A define_var's name can be used in shapes below it; one name, one variable.
bool Parser::bindVariable(const UOp *u, const Statement &st) {
  if (!checkDefineVarArg(u).empty())
    return true; // malformed: the verifier says why; shapes cannot name it
  auto [it, isNew] = variables_.emplace(varName(u), u);
  if (!isNew && it->second != u)
    return error(st.opLoc, "variable '" + varName(u) + "' is already defined with other bounds or dtype");
  return true;
}

void Parser::warnUnreachable() {
  if (!last_)
    return;
  std::unordered_set<const UOp *> live;
  for (const UOp *u : toposort(last_)) {
    live.insert(u);
    live.insert(u->dimVars().begin(), u->dimVars().end());
  }
  for (const auto &[u, st] : statements_)
    if (!live.count(u))
      diags_.warning(st.loc, "'%" + st.name + "' is not used by the result (the last statement); it is dropped");
}

} // namespace

std::optional<Module> parseModule(Context &ctx, std::string_view text, const std::string &fileName, DiagEngine &diags,
                                  int firstLine) {
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
    // a binary file (an .onnx, an .npy): one error instead of one per garbled line
    std::string_view head = text.substr(0, nul);
    int line = firstLine + int(std::count(head.begin(), head.end(), '\n'));
    size_t lineStart = head.rfind('\n');
    int col = int(nul - (lineStart == std::string_view::npos ? 0 : lineStart + 1)) + 1;
    diags.error(Loc{fileName, line, col}, "not a .uop text file: it contains a NUL byte");
    return std::nullopt;
  }
  int before = diags.errorCount();
  Parser p(ctx, text, fileName, diags, firstLine);
  std::optional<Module> m = p.run();
  if (diags.errorCount() != before)
    return std::nullopt;
  return m;
}

} // namespace tgc
