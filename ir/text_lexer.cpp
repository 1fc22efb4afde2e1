#include "ir/text_lexer.h"

#include <charconv>
#include <limits>

#include "ir/rank_limit.h"
#include "support/error.h"

namespace vkc::ir::text {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_alpha(c) || is_digit(c) || c == '.'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A byte as it appears in messages: printable ASCII as itself, anything else as \xHH, so messages
// stay on one line whatever the input holds.
std::string show_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  static const char* digits = "0123456789abcdef";
  return std::string("\\x") + digits[u >> 4] + digits[u & 15];
}

}  // namespace

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_alpha(s[0])) return false;
  for (char c : s)
    if (!is_ident_char(c)) return false;
  return true;
}

std::string quote_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f) out += show_byte(c);
    else out += c;  // printable ASCII and UTF-8 bytes pass through
  }
  return out + "\"";
}

std::string describe(const Token& tok) {
  if (tok.kind == Tok::End) return "end of input";
  constexpr size_t kMaxShown = 32;
  std::string shown;
  for (size_t i = 0; i < tok.spelling.size() && i < kMaxShown; ++i) shown += show_byte(tok.spelling[i]);
  if (tok.spelling.size() > kMaxShown) shown += "...";
  return "'" + shown + "'";
}

Lexer::Lexer(std::string_view text, std::string filename)
    : text_(text), filename_(std::move(filename)) {}

void Lexer::fail(int line, int col, const std::string& message) const {
  throw Error(cat(filename_, ":", line, ":", col, ": ", message));
}

char Lexer::peek(size_t ahead) const {
  return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
}

void Lexer::bump() {
  if (pos_ >= text_.size()) return;
  if (text_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

void Lexer::skip_space_and_comments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      bump();
    } else if (c == '/' && peek(1) == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') bump();
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  skip_space_and_comments();
  Token tok;
  tok.line = line_;
  tok.col = col_;
  if (pos_ >= text_.size()) return tok;
  char c = text_[pos_];
  auto single = [&](Tok kind) {
    tok.kind = kind;
    tok.spelling = std::string(1, c);
    bump();
    return tok;
  };
  switch (c) {
    case '(': return single(Tok::LParen);
    case ')': return single(Tok::RParen);
    case '{': return single(Tok::LBrace);
    case '}': return single(Tok::RBrace);
    case '[': return single(Tok::LBracket);
    case ']': return single(Tok::RBracket);
    case '<': return single(Tok::Less);
    case '>': return single(Tok::Greater);
    case ',': return single(Tok::Comma);
    case ':': return single(Tok::Colon);
    case '=': return single(Tok::Equal);
    case '"': return lex_string(tok);
    default: break;
  }
  if (is_digit(c) || c == '-') return lex_number(tok);
  if (is_alpha(c)) {
    size_t start = pos_;
    while (is_ident_char(peek())) bump();
    tok.kind = Tok::Ident;
    tok.spelling = std::string(text_.substr(start, pos_ - start));
    return tok;
  }
  if (c == '%') {
    size_t start = pos_;
    bump();
    while (is_ident_char(peek())) bump();
    tok.kind = Tok::ValueName;
    tok.spelling = std::string(text_.substr(start, pos_ - start));
    tok.value = tok.spelling.substr(1);
    bool numeric = !tok.value.empty();
    for (char d : tok.value) numeric = numeric && is_digit(d);
    if (!numeric && !is_identifier(tok.value))
      fail(tok.line, tok.col, cat("invalid value name ", describe(tok),
                                  ", expected %identifier or %number"));
    return tok;
  }
  if (c == '@') {
    bump();
    if (peek() == '"') {
      Token s = lex_string(Token{});
      tok.value = s.value;
      tok.spelling = "@" + s.spelling;
    } else {
      size_t start = pos_;
      while (is_ident_char(peek())) bump();
      tok.value = std::string(text_.substr(start, pos_ - start));
      tok.spelling = "@" + tok.value;
      if (!is_identifier(tok.value))
        fail(tok.line, tok.col, "expected a graph name (@identifier or @\"string\") after '@'");
    }
    tok.kind = Tok::GraphName;
    return tok;
  }
  fail(tok.line, tok.col, cat("unexpected character '", show_byte(c), "'"));
}

Token Lexer::lex_number(Token tok) {
  size_t start = pos_;
  if (peek() == '-') {
    bump();
    if (text_.substr(pos_, 3) == "inf" && !is_ident_char(peek(3))) {
      bump(), bump(), bump();
      tok.kind = Tok::Float;
      tok.spelling = "-inf";
      return tok;
    }
    if (!is_digit(peek()))
      fail(tok.line, tok.col, cat("expected a number after '-', found ",
                                  pos_ < text_.size() ? cat("'", show_byte(peek()), "'")
                                                      : std::string("end of input")));
  }
  bool is_float = false;
  while (is_digit(peek())) bump();
  if (peek() == '.') {
    is_float = true;
    bump();
    while (is_digit(peek())) bump();
  }
  if (peek() == 'e' || peek() == 'E') {
    is_float = true;
    bump();
    if (peek() == '+' || peek() == '-') bump();
    if (!is_digit(peek()))
      fail(tok.line, tok.col, cat("malformed number '", text_.substr(start, pos_ - start),
                                  "', expected exponent digits"));
    while (is_digit(peek())) bump();
  }
  if (is_ident_char(peek())) {
    while (is_ident_char(peek()) && pos_ - start < 40) bump();
    fail(tok.line, tok.col, cat("malformed number '", text_.substr(start, pos_ - start), "'"));
  }
  tok.kind = is_float ? Tok::Float : Tok::Int;
  tok.spelling = std::string(text_.substr(start, pos_ - start));
  return tok;
}

Token Lexer::lex_string(Token tok) {
  size_t start = pos_;
  tok.value = read_string_body(line_, col_);
  tok.kind = Tok::String;
  tok.spelling = std::string(text_.substr(start, pos_ - start));
  return tok;
}

std::string Lexer::read_string_body(int line, int col) {
  bump();  // opening quote
  std::string out;
  while (true) {
    if (pos_ >= text_.size() || peek() == '\n') fail(line, col, "unterminated string");
    char c = peek();
    auto u = static_cast<unsigned char>(c);
    if (c == '"') {
      bump();
      return out;
    }
    if (u < 0x20 || u == 0x7f)
      fail(line_, col_, cat("control character '", show_byte(c), "' in string, write it as \\xHH"));
    if (c != '\\') {
      out += c;
      bump();
      continue;
    }
    int esc_line = line_, esc_col = col_;
    bump();
    char e = peek();
    if (e == '"' || e == '\\') out += e;
    else if (e == 'n') out += '\n';
    else if (e == 't') out += '\t';
    else if (e == 'x') {
      int hi = hex_value(peek(1)), lo = hex_value(peek(2));
      if (hi < 0 || lo < 0) fail(esc_line, esc_col, "expected two hex digits after '\\x'");
      out += static_cast<char>(hi * 16 + lo);
      bump(), bump();
    } else {
      fail(esc_line, esc_col, cat("unknown escape '\\", show_byte(e),
                                  "' in string, expected \\\", \\\\, \\n, \\t or \\xHH"));
    }
    bump();
  }
}

TensorType Lexer::scan_tensor_type_body() {
  auto here_found = [&] {
    return pos_ >= text_.size() ? std::string("end of input") : cat("'", show_byte(peek()), "'");
  };
  if (peek() != '<') fail(line_, col_, cat("expected '<' after 'tensor', found ", here_found()));
  bump();
  TensorType type;
  while (is_digit(peek())) {
    int dim_line = line_, dim_col = col_;
    size_t start = pos_;
    while (is_digit(peek())) bump();
    int64_t dim = 0;
    std::string_view digits = text_.substr(start, pos_ - start);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), dim);
    if (ec != std::errc() || ptr != digits.data() + digits.size())
      fail(dim_line, dim_col, cat("dimension '", digits, "' is too large"));
    // Refused while lexing (ir/rank_limit.h), which also keeps hostile input from building huge
    // shapes; the remaining dims are only counted, to name the type's rank.
    if (type.shape.size() == size_t(kMaxRank)) {
      size_t rank = type.shape.size() + 1;
      for (size_t p = pos_; p < text_.size() && text_[p] == 'x' && p + 1 < text_.size() && is_digit(text_[p + 1]);) {
        ++rank;
        for (++p; p < text_.size() && is_digit(text_[p]);) ++p;
      }
      fail(dim_line, dim_col, cat("tensor type has rank ", rank, ", at most ", kMaxRank, " is supported"));
    }
    type.shape.push_back(dim);
    if (peek() != 'x')
      fail(line_, col_, cat("expected 'x' after dimension in tensor type, found ", here_found()));
    bump();
  }
  if (!is_alpha(peek()))
    fail(line_, col_, cat("expected a dimension or element type in tensor type, found ", here_found()));
  int dt_line = line_, dt_col = col_;
  size_t start = pos_;
  while (is_alpha(peek()) || is_digit(peek())) bump();
  std::string_view name = text_.substr(start, pos_ - start);
  std::optional<DType> dtype = parse_dtype(name);
  if (!dtype)
    fail(dt_line, dt_col, cat("unknown element type '", name.substr(0, 32),
                              "', expected f32, f16, i64, i32, i8, u8 or bool"));
  type.dtype = *dtype;
  if (peek() != '>') fail(line_, col_, cat("expected '>' to end tensor type, found ", here_found()));
  bump();
  return type;
}

}  // namespace vkc::ir::text
