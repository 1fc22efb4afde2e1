// print_graph: the writing half of the textual IR (grammar in docs/ir-text-format.md).
//
// Everything is printed so that parse_graph reads back exactly the same graph and printing that
// again gives identical text: floats in shortest round-trip form, always with a '.' or exponent so
// they read back as floats, and value names made unique.
#include <charconv>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "ir/text_format.h"
#include "ir/text_lexer.h"
#include "support/content_hash.h"
#include "support/half.h"

namespace vkc::ir {
namespace {

// Constants with more elements than this are printed as dense_hex (raw bytes), which is compact
// and bit exact; smaller ones as readable element lists.
constexpr int64_t kMaxListedElements = 64;

// Adds ".0" where the shortest form looks like an integer ("1" -> "1.0"), so the parser can tell
// an Int attribute from a Float one.
std::string mark_float(std::string s) {
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

template <typename T>
std::string format_floating(T v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  return mark_float(std::string(buf, ec == std::errc() ? end : buf));
}

std::string join_ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string format_element(const HostTensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::f32: return format_floating(t.as<float>()[i]);
    case DType::f16: return format_floating(half_to_float(t.as<uint16_t>()[i]));
    case DType::boolean: return t.as<uint8_t>()[i] ? "true" : "false";
    default: return std::to_string(t.get_i64(i));
  }
}

// How tensors of more than kMaxListedElements print: as hex, as a digest (not parseable), or as
// an offset into bytes kept beside the text.
struct LargeTensors {
  bool digest = false;
  ExternalConstants* external = nullptr;
};

std::string format_tensor(const TensorPtr& t, const LargeTensors& large) {
  if (!t) return "null";  // only in graphs the verifier would reject; the parser rejects it too
  std::string s;
  if (t->numel() > kMaxListedElements && large.digest) {
    const std::vector<uint8_t>& b = t->bytes();
    s = "digest<\"" + content_digest_hex(b.data(), b.size()) + "\">";
  } else if (t->numel() > kMaxListedElements && large.external) {
    const std::vector<uint8_t>& b = t->bytes();
    s = "dense_at<" + std::to_string(large.external->place(b.data(), b.size())) + ">";
  } else if (t->numel() > kMaxListedElements) {
    static const char* digits = "0123456789abcdef";
    s = "dense_hex<\"";
    for (uint8_t b : t->bytes()) s += {digits[b >> 4], digits[b & 15]};
    s += "\">";
  } else {
    s = "dense<[";
    for (int64_t i = 0; i < t->numel(); ++i) s += (i ? ", " : "") + format_element(*t, i);
    s += "]>";
  }
  return s + " : " + TensorType{t->dtype(), t->shape()}.str();
}

std::string format_attribute(const Attribute& a, const LargeTensors& large) {
  switch (attr_kind(a)) {
    case AttrKind::Int: return std::to_string(std::get<int64_t>(a));
    case AttrKind::Float: return format_floating(std::get<double>(a));
    case AttrKind::String: return text::quote_string(std::get<std::string>(a));
    case AttrKind::Bool: return std::get<bool>(a) ? "true" : "false";
    case AttrKind::Ints: return join_ints(std::get<std::vector<int64_t>>(a));
    case AttrKind::Floats: {
      const auto& v = std::get<std::vector<double>>(a);
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + format_floating(v[i]);
      return s + "]";
    }
    case AttrKind::IntsList: {
      const auto& v = std::get<IntsList>(a);
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + join_ints(v[i]);
      return s + "]";
    }
    case AttrKind::Tensor: return format_tensor(std::get<TensorPtr>(a), large);
  }
  return "?";
}

// Gives every value a unique printed name: its own name when that is an identifier not taken yet,
// else the next number. Numbers never collide with identifiers (those cannot start with a digit),
// and because the parser keeps "%3" as the name "3" (not an identifier), printing a parsed graph
// numbers the same values in the same order again.
class ValueNames {
 public:
  std::string operator()(const Value* v) {
    if (v == nullptr) return "%<null>";
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string name;
    if (text::is_identifier(v->name) && taken_.insert(v->name).second) name = "%" + v->name;
    else name = "%" + std::to_string(next_number_++);
    names_.emplace(v, name);
    return name;
  }

 private:
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_set<std::string> taken_;
  int next_number_ = 0;
};

std::string print_op(const Op& op, ValueNames& names, const LargeTensors& large) {
  std::string s = "  ";
  for (size_t i = 0; i < op.results.size(); ++i) s += (i ? ", " : "") + names(op.results[i]);
  s += " = " + std::string(op_name(op.kind));
  if (!op.name.empty()) s += " " + text::quote_string(op.name);
  if (!op.operands.empty()) {
    s += " (";
    for (size_t i = 0; i < op.operands.size(); ++i) s += (i ? ", " : "") + names(op.operands[i]);
    s += ")";
  }
  if (!op.attrs.empty()) {
    s += " {";
    bool first = true;
    for (const auto& [name, value] : op.attrs) {  // AttrMap is ordered: names print sorted
      s += (first ? "" : ", ") + name + " = " + format_attribute(value, large);
      first = false;
    }
    s += "}";
  }
  s += " : ";
  for (size_t i = 0; i < op.results.size(); ++i)
    s += (i ? ", " : "") + (op.results[i] ? op.results[i]->type.str() : std::string("?"));
  return s + "\n";
}

std::string print(const Graph& graph, const LargeTensors& large) {
  ValueNames names;
  std::string s = "graph @";
  s += text::is_identifier(graph.name) ? graph.name : text::quote_string(graph.name);
  s += "(";
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value* in = graph.inputs()[i];
    s += (i ? ", " : "") + names(in) + ": " + (in ? in->type.str() : std::string("?"));
  }
  s += ") {\n";
  // Name every result before printing any use, so a name follows the definition order.
  for (const Op* op : graph.ops())
    for (const Value* r : op->results) names(r);
  for (const Op* op : graph.ops()) s += print_op(*op, names, large);
  s += "  return";
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const GraphOutput& out = graph.outputs()[i];
    s += (i ? ", " : " ") + names(out.value) + " as " + text::quote_string(out.name);
  }
  return s + "\n}\n";
}

}  // namespace

std::string print_graph(const Graph& graph) { return print(graph, {}); }
std::string print_graph(const Graph& graph, ExternalConstants& external) { return print(graph, {false, &external}); }
std::string print_graph_digest(const Graph& graph) { return print(graph, {true, nullptr}); }

}  // namespace vkc::ir
