//===- Lexer.cpp - Tokens of the .uop text format ---------------*- C++ -*-===//
// Hand-written, byte-oriented, total: every input gives tokens or Error tokens, never a crash.
//===----------------------------------------------------------------------===//

#include "IR/Lexer.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tgc {

std::string_view tokName(Tok t) {
  switch (t) {
  case Tok::Eof:
    return "end of input";
  case Tok::Newline:
    return "end of line";
  case Tok::Ssa:
    return "value name";
  case Tok::Ident:
    return "identifier";
  case Tok::Int:
    return "integer";
  case Tok::Float:
    return "float";
  case Tok::String:
    return "string";
  case Tok::Equal:
    return "'='";
  case Tok::LParen:
    return "'('";
  case Tok::RParen:
    return "')'";
  case Tok::LBracket:
    return "'['";
  case Tok::RBracket:
    return "']'";
  case Tok::LBrace:
    return "'{'";
  case Tok::RBrace:
    return "'}'";
  case Tok::Comma:
    return "','";
  case Tok::Colon:
    return "':'";
  case Tok::Less:
    return "'<'";
  case Tok::Greater:
    return "'>'";
  case Tok::Error:
    return "invalid token";
  }
  return "token";
}

static bool isWordStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool isDigit(char c) { return c >= '0' && c <= '9'; }
static bool isWordChar(char c) { return isWordStart(c) || isDigit(c) || c == '.'; }

Token Lexer::make(Tok kind, int col, std::string text) {
  Token t;
  t.kind = kind;
  t.text = std::move(text);
  t.line = line_;
  t.col = col;
  return t;
}

void Lexer::skipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '/' && peek(1) == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n')
        ++pos_;
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  skipSpaceAndComments();
  int c0 = col();
  if (pos_ >= text_.size())
    return make(Tok::Eof, c0);
  char c = text_[pos_];
  if (c == '\n') {
    Token t = make(Tok::Newline, c0);
    ++pos_;
    ++line_;
    lineStart_ = pos_;
    return t;
  }
  if (isDigit(c) || (c == '-' && (isDigit(peek(1)) || (peek(1) == 'i' && peek(2) == 'n' && peek(3) == 'f'))))
    return lexNumber(c0);
  if (c == '"')
    return lexString(c0);
  if (c == '%') {
    ++pos_;
    return lexWord(c0, true);
  }
  if (isWordStart(c))
    return lexWord(c0, false);
  ++pos_;
  switch (c) {
  case '=':
    return make(Tok::Equal, c0);
  case '(':
    return make(Tok::LParen, c0);
  case ')':
    return make(Tok::RParen, c0);
  case '[':
    return make(Tok::LBracket, c0);
  case ']':
    return make(Tok::RBracket, c0);
  case '{':
    return make(Tok::LBrace, c0);
  case '}':
    return make(Tok::RBrace, c0);
  case ',':
    return make(Tok::Comma, c0);
  case ':':
    return make(Tok::Colon, c0);
  case '<':
    return make(Tok::Less, c0);
  case '>':
    return make(Tok::Greater, c0);
  default:
    break;
  }
  unsigned char uc = static_cast<unsigned char>(c);
  if (uc >= 0x21 && uc < 0x7f)
    return make(Tok::Error, c0, std::string("unexpected character '") + c + "'");
  char buf[48];
  std::snprintf(buf, sizeof(buf), "unexpected byte 0x%02x", uc);
  return make(Tok::Error, c0, buf);
}

Token Lexer::lexWord(int col, bool ssa) {
  size_t begin = pos_;
  while (pos_ < text_.size() && isWordChar(text_[pos_]))
    ++pos_;
  if (pos_ == begin)
    return make(Tok::Error, col, ssa ? "expected a name after '%'" : "expected a word");
  return make(ssa ? Tok::Ssa : Tok::Ident, col, std::string(text_.substr(begin, pos_ - begin)));
}

Token Lexer::lexNumber(int col) {
  size_t begin = pos_;
  if (text_[pos_] == '-')
    ++pos_;
  if (peek() == 'i') { // -inf
    pos_ += 3;
    Token t = make(Tok::Float, col, "-inf");
    t.floatValue = -std::numeric_limits<double>::infinity();
    return t;
  }
  bool isFloat = false;
  while (isDigit(peek()))
    ++pos_;
  if (peek() == '.') {
    isFloat = true;
    ++pos_;
    while (isDigit(peek()))
      ++pos_;
  }
  if (peek() == 'e' || peek() == 'E') {
    size_t save = pos_;
    ++pos_;
    if (peek() == '+' || peek() == '-')
      ++pos_;
    if (isDigit(peek())) {
      isFloat = true;
      while (isDigit(peek()))
        ++pos_;
    } else {
      pos_ = save;
    }
  }
  std::string spelling(text_.substr(begin, pos_ - begin));
  if (isWordChar(peek()))
    return make(Tok::Error, col, "invalid number '" + spelling + std::string(1, peek()) + "'");
  Token t = make(isFloat ? Tok::Float : Tok::Int, col, spelling);
  if (isFloat) {
    // strtod gives the correctly rounded double; overflow gives inf, which is what the text says.
    t.floatValue = std::strtod(spelling.c_str(), nullptr);
    return t;
  }
  auto res = std::from_chars(spelling.data(), spelling.data() + spelling.size(), t.intValue);
  if (res.ec == std::errc::result_out_of_range) {
    // allow unsigned 64-bit spellings (u64 constants) by wrapping
    uint64_t u = 0;
    auto ures = std::from_chars(spelling.data(), spelling.data() + spelling.size(), u);
    if (ures.ec != std::errc())
      return make(Tok::Error, col, "integer '" + spelling + "' is out of range");
    t.intValue = int64_t(u);
  }
  return t;
}

Token Lexer::lexString(int col) {
  ++pos_; // opening quote
  std::string out;
  while (pos_ < text_.size()) {
    char c = text_[pos_++];
    if (c == '"')
      return make(Tok::String, col, std::move(out));
    if (c == '\n') {
      --pos_;
      return make(Tok::Error, col, "unterminated string");
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    char e = peek();
    ++pos_;
    switch (e) {
    case 'n':
      out += '\n';
      break;
    case 't':
      out += '\t';
      break;
    case '"':
    case '\\':
      out += e;
      break;
    case 'x': {
      auto hex = [](char h) { return isDigit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : -1; };
      int hi = hex(peek());
      int lo = hex(peek(1));
      if (hi < 0 || lo < 0)
        return make(Tok::Error, col, "invalid \\x escape in string");
      pos_ += 2;
      out += char(hi * 16 + lo);
      break;
    }
    default:
      if (pos_ > text_.size())
        pos_ = text_.size();
      return make(Tok::Error, col, "invalid escape in string");
    }
  }
  return make(Tok::Error, col, "unterminated string");
}

} // namespace tgc
