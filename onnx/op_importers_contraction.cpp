// Gemm and MatMul map one to one onto the IR's gemm and (numpy-semantics) matmul.
#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

void import_gemm(NodeContext& n) {
  n.attrs.ignore("broadcast");  // opset < 7: C always broadcasts in the IR
  ir::AttrMap attrs{{"alpha", n.attrs.get_float("alpha", 1.0)},
                    {"beta", n.attrs.get_float("beta", 1.0)},
                    {"transpose_a", n.attrs.get_int("transA", 0) != 0},
                    {"transpose_b", n.attrs.get_int("transB", 0) != 0}};
  std::vector<ir::Value*> operands{n.input(0), n.input(1)};
  if (n.has_input(2)) operands.push_back(n.input(2));
  n.set_output(0, n.emit(K::Gemm, operands, attrs));
}

void import_matmul(NodeContext& n) { n.set_output(0, n.emit(K::MatMul, {n.input(0), n.input(1)})); }

// MatMulInteger: a_zero_point (input 2) per tensor, b_zero_point (input 3) per tensor or per column;
// absent ones are 0 of the operand's type. 1-D operands are not supported.
void import_matmul_integer(NodeContext& n) {
  ir::Value* a = n.input(0);
  ir::Value* b = n.input(1);
  if (a->type.rank() < 2 || b->type.rank() < 2) n.unsupported("1-D operands are not supported");
  ir::Value* az = n.has_input(2) ? n.input(2) : integer_zero_point(n, a->type.dtype);
  ir::Value* bz = n.has_input(3) ? n.input(3) : integer_zero_point(n, b->type.dtype);
  if (az->type.numel() != 1) n.unsupported("a_zero_point per row is not supported (only per tensor)");
  n.set_output(0, n.emit(K::MatMulInteger, {a, b, az, bz}));
}

}  // namespace

void register_contraction_importers(std::map<std::string, OpImporter>& r) {
  r["Gemm"] = import_gemm;
  r["MatMul"] = import_matmul;
  r["MatMulInteger"] = import_matmul_integer;
}

}  // namespace vkc::onnx
