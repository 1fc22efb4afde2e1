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

}  // namespace

void register_contraction_importers(std::map<std::string, OpImporter>& r) {
  r["Gemm"] = import_gemm;
  r["MatMul"] = import_matmul;
}

}  // namespace vkc::onnx
