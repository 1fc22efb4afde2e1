// Tokens of the textual IR (.vkir), produced on demand for the parser in ir/text_parser.cpp.
//
// Tokens are lexed one at a time rather than up front because tensor types ("tensor<1x2xf32>")
// are not made of ordinary tokens: "1x2xf32" would otherwise split into a number and an odd
// identifier. The parser asks for them with scan_tensor_type_body() right after "tensor".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace vkc::ir::text {

enum class Tok {
  End,
  Ident,      // [A-Za-z_][A-Za-z0-9_.]*: keywords, op names, attribute names, true/false/inf/nan
  ValueName,  // %name or %123; value() is the part after '%'
  GraphName,  // @name or @"any string"; value() is the name
  Int,        // -?[0-9]+
  Float,      // -?[0-9]+ with '.' and/or an exponent, or -inf
  String,     // "..." with escapes; value() is the decoded string
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Less, Greater, Comma, Colon, Equal,
};

struct Token {
  Tok kind = Tok::End;
  std::string spelling;  // the source text, for messages (and numbers: what to convert)
  std::string value;     // decoded content for ValueName, GraphName and String
  int line = 1;
  int col = 1;
};

class Lexer {
 public:
  // Keeps a view of `text`: it must outlive the lexer.
  Lexer(std::string_view text, std::string filename);

  // The next token; Tok::End at end of input. Throws a positioned vkc::Error on bad bytes,
  // unterminated strings or malformed numbers.
  Token next();

  // Reads "<dims x ... x dtype>" starting exactly at the current position (no whitespace allowed
  // inside, as in "tensor<1x2xf32>"). Call right after the "tensor" identifier was returned.
  TensorType scan_tensor_type_body();

  // Throws vkc::Error "file:line:col: message".
  [[noreturn]] void fail(int line, int col, const std::string& message) const;
  const std::string& filename() const { return filename_; }

 private:
  void skip_space_and_comments();
  char peek(size_t ahead = 0) const;
  void bump();  // consumes one byte, tracking line and column
  Token lex_number(Token tok);
  Token lex_string(Token tok);
  std::string read_string_body(int line, int col);

  std::string_view text_;
  std::string filename_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

// True for names the printer may write as %name / @name: [A-Za-z_][A-Za-z0-9_.]*.
bool is_identifier(std::string_view s);

// How a token is shown in "found ..." parts of messages: "'foo'" (shortened, escaped) or
// "end of input".
std::string describe(const Token& tok);

// Quotes and escapes a string the way the lexer reads it back ("a\"b\\c\n", \xHH for control
// bytes).
std::string quote_string(std::string_view s);

}  // namespace vkc::ir::text
