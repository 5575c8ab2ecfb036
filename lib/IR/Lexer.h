//===- Lexer.h - Tokens of the .uop text format -----------------*- C++ -*-===//
// Splits .uop text into tokens; newlines are tokens because each statement is one line.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tgc {

enum class Tok : uint8_t {
  Eof,
  Newline,
  Ssa,    // %name
  Ident,  // f32, add, weights, true, inf
  Int,    // -12
  Float,  // 1.5, -2e3, -inf
  String, // "text"
  Equal,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Less,
  Greater,
  Error, // text holds the message
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text; // identifier/SSA name without '%', decoded string, number spelling, or error message
  int line = 0;
  int col = 0;
  int64_t intValue = 0;
  double floatValue = 0;
};

class Lexer {
public:
  Lexer(std::string_view text, int firstLine = 1) : text_(text), line_(firstLine) {}
  Token next();

private:
  Token make(Tok kind, int col, std::string text = {});
  Token lexNumber(int col);
  Token lexString(int col);
  Token lexWord(int col, bool ssa);
  void skipSpaceAndComments();
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  int col() const { return int(pos_ - lineStart_) + 1; }

  std::string_view text_;
  size_t pos_ = 0;
  size_t lineStart_ = 0;
  int line_;
};

std::string_view tokName(Tok t);

} // namespace tgc
