// Op kinds and their schema (operand/result counts and the attributes each op accepts).
//
// The attribute schema is data, not code: the verifier checks every op's attributes against it
// generically (unknown name, wrong kind, missing required), the text parser uses it to know the kind
// of each attribute, and ops read attributes with defaults taken from the same table.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/attributes.h"

namespace vkc::ir {

enum class OpKind {
#define OP(kind, name, cat, a, b, c, d) kind,
#include "ir/ops.def"
#undef OP
};

enum class OpCategory {
  Source, Conv, Contraction, Reshape, DataMovement, Unary, Binary, Ternary, Quant, Reduction,
  Normalize, Pool, Sort, Attention
};

struct AttrSpec {
  std::string_view name;
  AttrKind kind;
  bool required = false;
  // Default for optional attributes; std::monostate-like "no default" is modelled as nullopt.
  std::optional<Attribute> default_value;
};

struct OpSchema {
  OpKind kind;
  std::string_view name;
  OpCategory category;
  int min_operands, max_operands;  // max -1: unbounded
  int min_results, max_results;
  std::vector<AttrSpec> attrs;
  // Optional operand names for messages ("input", "filter", "bias"); extra operands are numbered.
  std::vector<std::string_view> operand_names;
};

const OpSchema& op_schema(OpKind kind);
std::string_view op_name(OpKind kind);
std::optional<OpKind> parse_op_name(std::string_view name);
const std::vector<OpKind>& all_op_kinds();
bool is_elementwise(OpKind kind);  // Unary, Binary, Ternary and Quant categories

}  // namespace vkc::ir
