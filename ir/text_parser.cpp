// parse_graph: the reading half of the textual IR (grammar in docs/ir-text-format.md).
//
// A recursive-descent parser over the on-demand lexer. The grammar has no recursive productions
// (lists nest at most two deep, constants are flat), so hostile input cannot drive it into deep
// recursion. Every syntax error names file:line:col and what was expected; semantic checks beyond
// syntax (shapes, operand counts, attribute values) are left to verify_graph, whose messages carry
// each op's location.
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

#include "ir/text_format.h"
#include "ir/text_lexer.h"
#include "ir/verifier.h"
#include "support/error.h"
#include "support/file_io.h"
#include "support/half.h"

namespace vkc::ir {
namespace {

using text::Tok;
using text::Token;

const char* tok_name(Tok kind) {
  switch (kind) {
    case Tok::End: return "end of input";
    case Tok::Ident: return "an identifier";
    case Tok::ValueName: return "a value name (%name)";
    case Tok::GraphName: return "a graph name (@name)";
    case Tok::Int: return "an integer";
    case Tok::Float: return "a float";
    case Tok::String: return "a string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::Less: return "'<'";
    case Tok::Greater: return "'>'";
    case Tok::Comma: return "','";
    case Tok::Colon: return "':'";
    case Tok::Equal: return "'='";
  }
  return "?";
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& filename, const ExternalLookup& external)
      : lex_(text, filename), external_(external) {
    cur_ = lex_.next();
  }

  Graph parse() {
    graph_.source = lex_.filename();
    expect_keyword("graph", "at the start of the file");
    graph_.name = expect(Tok::GraphName, "after 'graph'").value;
    parse_inputs();
    expect(Tok::LBrace, "to open the graph body");
    while (!is_keyword("return")) {
      if (cur_.kind != Tok::ValueName)
        fail_here("expected an op ('%result = ...') or 'return'");
      parse_op();
    }
    parse_return();
    expect(Tok::RBrace, "to close the graph body");
    if (cur_.kind != Tok::End) fail_here("expected end of input after the graph");
    verify_graph(graph_);
    return std::move(graph_);
  }

 private:
  // ---- token helpers ----------------------------------------------------------------------

  [[noreturn]] void fail_at(const Token& tok, const std::string& message) const {
    lex_.fail(tok.line, tok.col, message);
  }
  // "expected X ..., found 'y'" at the current token.
  [[noreturn]] void fail_here(const std::string& expected) const {
    fail_at(cur_, cat(expected, ", found ", text::describe(cur_)));
  }

  Token advance() {
    Token t = std::move(cur_);
    cur_ = lex_.next();
    return t;
  }
  bool is_keyword(std::string_view word) const {
    return cur_.kind == Tok::Ident && cur_.spelling == word;
  }
  bool accept(Tok kind) {
    if (cur_.kind != kind) return false;
    advance();
    return true;
  }
  Token expect(Tok kind, const std::string& context) {
    if (cur_.kind != kind) fail_here(cat("expected ", tok_name(kind), " ", context));
    return advance();
  }
  void expect_keyword(std::string_view word, const std::string& context) {
    if (!is_keyword(word)) fail_here(cat("expected '", word, "' ", context));
    advance();
  }

  // ---- types and values -------------------------------------------------------------------

  TensorType parse_type(const std::string& context) {
    if (!is_keyword("tensor")) fail_here(cat("expected a tensor type ", context));
    // The lexer stands right after "tensor": read the type body there, then refill cur_.
    TensorType type = lex_.scan_tensor_type_body();
    cur_ = lex_.next();
    return type;
  }

  void define(const Token& name_tok, Value* v) {
    auto [it, inserted] = values_.emplace(name_tok.value, v);
    if (!inserted) fail_at(name_tok, cat("value ", name_tok.spelling, " is already defined"));
    v->name = name_tok.value;
  }

  Value* use(const std::string& context) {
    Token tok = expect(Tok::ValueName, context);
    auto it = values_.find(tok.value);
    if (it == values_.end()) fail_at(tok, cat("use of undefined value ", tok.spelling));
    return it->second;
  }

  // ---- graph structure --------------------------------------------------------------------

  void parse_inputs() {
    expect(Tok::LParen, "after the graph name");
    if (accept(Tok::RParen)) return;
    do {
      Token name = expect(Tok::ValueName, "for a graph input");
      expect(Tok::Colon, "after graph input name");
      TensorType type = parse_type("for graph input");
      define(name, graph_.add_input(name.value, std::move(type)));
    } while (accept(Tok::Comma));
    expect(Tok::RParen, "after graph inputs");
  }

  void parse_op() {
    std::vector<Token> result_names;
    do {
      result_names.push_back(expect(Tok::ValueName, "for an op result"));
    } while (accept(Tok::Comma));
    expect(Tok::Equal, "after op results");

    Token op_tok = expect(Tok::Ident, "for the op name");
    std::optional<OpKind> kind = parse_op_name(op_tok.spelling);
    if (!kind) fail_at(op_tok, cat("unknown op '", op_tok.spelling, "'"));
    const OpSchema& schema = op_schema(*kind);
    int n_results = int(result_names.size());
    if (n_results < schema.min_results || (schema.max_results >= 0 && n_results > schema.max_results))
      fail_at(result_names[0], cat(schema.name, " has ", schema.min_results,
                                   schema.max_results == schema.min_results ? "" : " or more",
                                   " result(s), found ", n_results));

    std::string node_name;
    if (cur_.kind == Tok::String) node_name = advance().value;

    std::vector<Value*> operands;
    if (accept(Tok::LParen) && !accept(Tok::RParen)) {
      do {
        operands.push_back(use("for an operand"));
      } while (accept(Tok::Comma));
      expect(Tok::RParen, "after operands");
    }

    AttrMap attrs;
    if (cur_.kind == Tok::LBrace) attrs = parse_attr_dict(schema);

    Token colon = expect(Tok::Colon, "before result types");
    std::vector<TensorType> types;
    do {
      types.push_back(parse_type("for an op result"));
    } while (accept(Tok::Comma));
    if (types.size() != result_names.size())
      fail_at(colon, cat(schema.name, " names ", result_names.size(), " result(s) but gives ",
                         types.size(), " result type(s)"));

    Location loc{lex_.filename(), op_tok.line, op_tok.col};
    Op* op = graph_.add_op_typed(*kind, std::move(operands), std::move(attrs), std::move(types),
                                 std::move(node_name), std::move(loc));
    for (size_t i = 0; i < result_names.size(); ++i) define(result_names[i], op->results[i]);
  }

  void parse_return() {
    advance();  // 'return'
    if (cur_.kind == Tok::RBrace) return;
    do {
      graph_.add_output(use("for a graph output"));  // default name unless 'as' gives one
      if (is_keyword("as")) {
        advance();
        // Set directly: add_output would replace an empty name, and `as ""` must read back as "".
        graph_.outputs().back().name = expect(Tok::String, "for the output name after 'as'").value;
      }
    } while (accept(Tok::Comma));
  }

  // ---- attributes -------------------------------------------------------------------------

  AttrMap parse_attr_dict(const OpSchema& schema) {
    advance();  // '{'
    AttrMap attrs;
    if (accept(Tok::RBrace)) return attrs;
    do {
      Token name = expect(Tok::Ident, "for an attribute name");
      const AttrSpec* spec = nullptr;
      for (const AttrSpec& a : schema.attrs)
        if (a.name == name.spelling) spec = &a;
      if (spec == nullptr)
        fail_at(name, cat(schema.name, " has no attribute '", name.spelling, "'"));
      if (attrs.count(name.spelling))
        fail_at(name, cat("attribute '", name.spelling, "' is given twice"));
      expect(Tok::Equal, cat("after attribute name '", name.spelling, "'"));
      std::string what = cat("for attribute '", name.spelling, "' of ", schema.name);
      attrs.emplace(name.spelling, parse_attr_value(spec->kind, what));
    } while (accept(Tok::Comma));
    expect(Tok::RBrace, "after attributes");
    return attrs;
  }

  Attribute parse_attr_value(AttrKind kind, const std::string& what) {
    switch (kind) {
      case AttrKind::Int: return parse_int(what);
      case AttrKind::Float:
        // An integer literal stays an Int (the verifier and getters accept it for a float), so
        // a graph holding alpha = 1 prints back as written.
        if (cur_.kind == Tok::Int) return parse_int(what);
        return parse_double(what);
      case AttrKind::String: return expect(Tok::String, what).value;
      case AttrKind::Bool: return parse_bool(what);
      case AttrKind::Ints: return parse_list<int64_t>(what, [&] { return parse_int(what); });
      case AttrKind::Floats: return parse_list<double>(what, [&] { return parse_double(what); });
      case AttrKind::IntsList:
        return parse_list<std::vector<int64_t>>(what, [&] {
          return parse_list<int64_t>(what, [&] { return parse_int(what); });
        });
      case AttrKind::Tensor: return parse_dense(what);
    }
    fail_here("internal: unknown attribute kind");
  }

  template <typename T, typename ParseElement>
  std::vector<T> parse_list(const std::string& what, ParseElement element) {
    expect(Tok::LBracket, what);
    std::vector<T> out;
    if (accept(Tok::RBracket)) return out;
    do {
      out.push_back(element());
    } while (accept(Tok::Comma));
    expect(Tok::RBracket, "after list elements");
    return out;
  }

  int64_t parse_int(const std::string& what) {
    if (cur_.kind != Tok::Int) fail_here(cat("expected an integer ", what));
    return int_value(advance());
  }

  int64_t int_value(const Token& tok) const {
    int64_t v = 0;
    const std::string& s = tok.spelling;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size())
      fail_at(tok, cat("integer ", text::describe(tok), " does not fit in 64 bits"));
    return v;
  }

  double parse_double(const std::string& what) {
    if (cur_.kind != Tok::Int && cur_.kind != Tok::Float && !is_keyword("inf") && !is_keyword("nan"))
      fail_here(cat("expected a number ", what));
    return floating_value<double>(advance(), "a double");
  }

  template <typename T>
  T floating_value(const Token& tok, const char* type_name) const {
    if (tok.spelling == "inf") return std::numeric_limits<T>::infinity();
    if (tok.spelling == "-inf") return -std::numeric_limits<T>::infinity();
    if (tok.spelling == "nan") return std::numeric_limits<T>::quiet_NaN();
    T v{};
    const std::string& s = tok.spelling;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size())
      fail_at(tok, cat("number ", text::describe(tok), " is out of range for ", type_name));
    return v;
  }

  bool parse_bool(const std::string& what) {
    if (is_keyword("true") || is_keyword("false")) return advance().spelling == "true";
    fail_here(cat("expected true or false ", what));
  }

  // dense<[e0, e1, ...]> : tensor<...>, dense_hex<"bytes in hex"> : tensor<...> or
  // dense_at<offset> : tensor<...> (bytes kept beside the text)
  TensorPtr parse_dense(const std::string& what) {
    const bool hex = is_keyword("dense_hex"), at = is_keyword("dense_at");
    if (!hex && !at && !is_keyword("dense"))
      fail_here(cat("expected dense<[...]>, dense_hex<\"...\"> or dense_at<offset> ", what));
    Token start = advance();
    expect(Tok::Less, cat("after '", start.spelling, "'"));
    std::vector<Token> elements;
    Token data_tok;
    if (hex) {
      data_tok = expect(Tok::String, "with the constant's bytes in hex");
    } else if (at) {
      data_tok = expect(Tok::Int, "with the offset of the constant's bytes");
    } else {
      expect(Tok::LBracket, "to open the element list");
      if (cur_.kind != Tok::RBracket) {
        do {
          if (cur_.kind != Tok::Int && cur_.kind != Tok::Float && cur_.kind != Tok::Ident)
            fail_here("expected a constant element");
          elements.push_back(advance());
        } while (accept(Tok::Comma));
      }
      expect(Tok::RBracket, "after constant elements");
    }
    expect(Tok::Greater, "after constant data");
    expect(Tok::Colon, "before the constant's type");
    Token type_tok = cur_;
    TensorType type = parse_type("for the constant");
    int64_t numel = checked_numel(type.shape, type_tok);

    if (hex) return tensor_from_hex(data_tok, type, numel);
    if (at) return tensor_from_external(start, data_tok, type, numel);
    if (int64_t(elements.size()) != numel)
      fail_at(type_tok, cat("constant has ", elements.size(), " elements but its type ", type.str(),
                            " needs ", numel));
    auto t = std::make_shared<HostTensor>(type.dtype, type.shape);
    for (int64_t i = 0; i < numel; ++i) store_element(*t, i, elements[size_t(i)]);
    return t;
  }

  int64_t checked_numel(const Shape& shape, const Token& where) const {
    int64_t n = 1;
    for (int64_t d : shape) {
      if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
        fail_at(where, "constant's element count overflows 64 bits");
      n *= d;
    }
    return n;
  }

  TensorPtr tensor_from_hex(const Token& tok, const TensorType& type, int64_t numel) const {
    const std::string& hex = tok.value;
    int64_t elem = int64_t(dtype_size(type.dtype));
    // Compare without multiplying numel * elem, which could overflow for hostile shapes.
    if (int64_t(hex.size()) % (2 * elem) != 0 || int64_t(hex.size()) / (2 * elem) != numel)
      fail_at(tok, cat("dense_hex has ", hex.size(), " hex digits, type ", type.str(), " needs ",
                       numel, " elements of ", elem, " bytes (2 digits per byte)"));
    auto t = std::make_shared<HostTensor>(type.dtype, type.shape);
    auto nibble = [&](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      fail_at(tok, cat("dense_hex holds a non-hex character"));
    };
    for (size_t i = 0; i < t->size_bytes(); ++i) {
      uint8_t b = uint8_t(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
      if (type.dtype == DType::boolean && b > 1)
        fail_at(tok, cat("dense_hex bool element ", i, " is ", int(b), ", expected 0 or 1"));
      t->data()[i] = b;
    }
    return t;
  }

  TensorPtr tensor_from_external(const Token& start, const Token& offset_tok, const TensorType& type,
                                 int64_t numel) const {
    if (!external_)
      fail_at(start, "dense_at refers to constant bytes kept beside the text (a module's constants.bin and "
                     "source.bin), and this text was read without them");
    uint64_t offset = 0;
    const std::string& s = offset_tok.spelling;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), offset);
    if (ec != std::errc() || ptr != s.data() + s.size())
      fail_at(offset_tok, cat("dense_at offset ", text::describe(offset_tok), " is not a byte offset"));
    // Found before anything is allocated: a hostile type cannot ask for more than is there.
    const uint64_t elem = dtype_size(type.dtype);
    if (uint64_t(numel) > std::numeric_limits<uint64_t>::max() / elem)
      fail_at(offset_tok, "constant's byte count overflows 64 bits");
    const uint64_t size = uint64_t(numel) * elem;
    const uint8_t* bytes = external_(offset, size);
    if (!bytes)
      fail_at(offset_tok, cat("dense_at<", offset, ">: the ", size, " bytes of ", type.str(),
                              " lie outside the constant bytes kept beside the text"));
    auto t = std::make_shared<HostTensor>(type.dtype, type.shape);
    if (t->size_bytes()) std::memcpy(t->data(), bytes, t->size_bytes());
    if (type.dtype == DType::boolean)
      for (size_t i = 0; i < t->size_bytes(); ++i)
        if (t->data()[i] > 1)
          fail_at(offset_tok, cat("dense_at bool element ", i, " is ", int(t->data()[i]), ", expected 0 or 1"));
    return t;
  }

  void store_element(HostTensor& t, int64_t i, const Token& tok) const {
    DType dt = t.dtype();
    std::string dname(dtype_name(dt));
    bool numeric = tok.kind == Tok::Int || tok.kind == Tok::Float ||
                   (tok.kind == Tok::Ident && (tok.spelling == "inf" || tok.spelling == "nan"));
    if (dt == DType::boolean) {
      if (tok.kind != Tok::Ident || (tok.spelling != "true" && tok.spelling != "false"))
        fail_at(tok, cat("expected true or false for a bool constant element, found ",
                         text::describe(tok)));
      t.as<uint8_t>()[i] = tok.spelling == "true";
    } else if (is_float(dt)) {
      if (!numeric)
        fail_at(tok, cat("expected a number for an ", dname, " constant element, found ",
                         text::describe(tok)));
      float f = floating_value<float>(tok, "f32");
      if (dt == DType::f32) {
        t.as<float>()[i] = f;
      } else {
        uint16_t h = float_to_half(f);
        if (std::isfinite(f) && std::isinf(half_to_float(h)))
          fail_at(tok, cat("number ", text::describe(tok), " is out of range for f16"));
        t.as<uint16_t>()[i] = h;
      }
    } else {
      if (tok.kind != Tok::Int)
        fail_at(tok, cat("expected an integer for an ", dname, " constant element, found ",
                         text::describe(tok)));
      int64_t v = int_value(tok);
      int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
      if (dt == DType::i32) lo = INT32_MIN, hi = INT32_MAX;
      if (dt == DType::i8) lo = INT8_MIN, hi = INT8_MAX;
      if (dt == DType::u8) lo = 0, hi = UINT8_MAX;
      if (v < lo || v > hi)
        fail_at(tok, cat("integer ", text::describe(tok), " is out of range for ", dname));
      t.set_i64(i, v);
    }
  }

  text::Lexer lex_;
  const ExternalLookup& external_;
  Token cur_;
  Graph graph_;
  std::unordered_map<std::string, Value*> values_;
};

}  // namespace

Graph parse_graph(const std::string& text, const std::string& filename, const ExternalLookup& external) {
  return Parser(text, filename, external).parse();
}

Graph parse_graph_file(const std::string& path) { return parse_graph(read_text_file(path), path); }

}  // namespace vkc::ir
