// ONNX Einsum lowered at import (onnx/op_importers_einsum.cpp): the contraction forms PyTorch
// exports, checked against einsum computed here by its definition (a sum over every letter
// assignment) and on the device against the reference; unsupported forms are one-line errors
// naming the node and the equation. (Debian's ONNX node tests for Einsum use doubles, which vkc
// does not read, so these cases stand in for them.)
#include <gtest/gtest.h>

#include <map>

#include "common/gpu_harness.h"
#include "ir/interpreter.h"
#include "onnx/importer.h"
#include "onnx_model_builder.h"
#include "support/error.h"

namespace vkc::test {
namespace {

// out[o] = sum over the letters not in the output of prod_operands x[letters], in double.
HostTensor einsum_by_definition(const std::vector<std::string>& ins, const std::string& out,
                                const std::vector<HostTensor>& xs) {
  std::map<char, int64_t> dim;
  for (size_t i = 0; i < ins.size(); ++i)
    for (size_t j = 0; j < ins[i].size(); ++j) dim[ins[i][j]] = xs[i].shape()[j];
  std::string letters;
  for (auto [c, d] : dim) letters += c;
  Shape os;
  for (char c : out) os.push_back(dim[c]);
  std::vector<double> acc(size_t(shape_numel(os)), 0.0);
  int64_t total = 1;
  for (char c : letters) total *= dim[c];
  std::map<char, int64_t> at;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat;
    for (size_t i = letters.size(); i-- > 0;) {
      at[letters[i]] = rem % dim[letters[i]];
      rem /= dim[letters[i]];
    }
    double p = 1;
    for (size_t i = 0; i < ins.size(); ++i) {
      int64_t off = 0;
      for (char c : ins[i]) off = off * dim[c] + at[c];
      p *= xs[i].get_f64(off);
    }
    int64_t o = 0;
    for (char c : out) o = o * dim[c] + at[c];
    acc[size_t(o)] += p;
  }
  HostTensor r(DType::f32, os);
  for (size_t i = 0; i < acc.size(); ++i) r.set_f64(int64_t(i), acc[i]);
  return r;
}

struct EinsumCase {
  std::string equation;
  std::vector<Shape> shapes;
  std::vector<std::string> ins;  // the operands' letters
  std::string out;               // the output's letters (implicit forms spelled out)
};

TEST(OnnxEinsum, PyTorchContractionFormsMatchTheDefinition) {
  const EinsumCase cases[] = {
      {"bhid,bhjd->bhij", {{2, 3, 4, 5}, {2, 3, 6, 5}}, {"bhid", "bhjd"}, "bhij"},  // attention scores
      {"bhij,bhjd->bhid", {{2, 3, 4, 6}, {2, 3, 6, 5}}, {"bhij", "bhjd"}, "bhid"},  // attention values
      {"bij,bjk->bik", {{3, 4, 5}, {3, 5, 2}}, {"bij", "bjk"}, "bik"},
      {"ij,jk->ik", {{4, 5}, {5, 3}}, {"ij", "jk"}, "ik"},
      {"ij,jk", {{4, 5}, {5, 3}}, {"ij", "jk"}, "ik"},  // implicit output
      {"bnd,dk->bnk", {{2, 7, 4}, {4, 3}}, {"bnd", "dk"}, "bnk"},
      {"ij,kj->ik", {{4, 5}, {3, 5}}, {"ij", "kj"}, "ik"},      // rhs transposed
      {"ji,jk->ik", {{5, 4}, {5, 3}}, {"ji", "jk"}, "ik"},      // lhs transposed
      {"bid,bjd->bji", {{2, 4, 3}, {2, 5, 3}}, {"bid", "bjd"}, "bji"},  // output permuted
      {"ijk,jl->li", {{3, 4, 2}, {4, 5}}, {"ijk", "jl"}, "li"},  // k summed in the lhs only
      {"i,i->", {{6}, {6}}, {"i", "i"}, ""},                    // inner product
      {"i,j->ij", {{3}, {4}}, {"i", "j"}, "ij"},                // outer product
      {"ij->ji", {{3, 5}}, {"ij"}, "ji"},
      {"ij->i", {{3, 5}}, {"ij"}, "i"},
      {"bij->b", {{2, 3, 5}}, {"bij"}, "b"},
  };
  int k = 0;
  for (const EinsumCase& c : cases) {
    SCOPED_TRACE(c.equation);
    OnnxModel m(12);
    std::vector<std::string> names;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      names.push_back(cat("x", i));
      m.input(names.back(), c.shapes[i]);
    }
    OnnxModel::attr_string(m.node("Einsum", names, {"y"}, "e"), "equation", c.equation);
    m.output("y");
    ir::Graph g = onnx::import_model(m.write(scratch_dir(cat("onnx_einsum_", k++))));
    std::map<std::string, HostTensor> in = random_inputs(g, 40 + uint32_t(k));
    std::vector<HostTensor> xs;
    for (const std::string& n : names) xs.push_back(in.at(n));
    HostTensor expected = einsum_by_definition(c.ins, c.out, xs);
    HostTensor y = ir::interpret(g, in).at("y");
    Comparison cmp = compare(y, expected, 1e-5, 1e-6);
    EXPECT_TRUE(cmp.ok) << cmp.message;
    try {
      GpuRun run = run_on_gpu(g, in);
      EXPECT_TRUE(outputs_match(run, {{}, 1e-4, 1e-5, "", {}}));
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(OnnxEinsum, UnsupportedFormsNameTheNodeAndEquation) {
  const std::pair<std::string, std::string> cases[] = {
      {"ii->i", "letter 'i' repeats in operand 0 (diagonals are not supported)"},
      {"...ij,...jk->...ik", "ellipses are not supported"},
      {"ij,jk->iz", "output letter 'z' is not an operand letter, or repeats"},
  };
  for (const auto& [eq, why] : cases) {
    SCOPED_TRACE(eq);
    OnnxModel m(12);
    bool two = eq.find(',') != std::string::npos;
    m.input("a", {3, 3});
    if (two) m.input("b", {3, 3});
    OnnxModel::attr_string(m.node("Einsum", two ? std::vector<std::string>{"a", "b"} : std::vector<std::string>{"a"},
                                  {"y"}, "e"),
                           "equation", eq);
    m.output("y");
    std::string path = m.write(scratch_dir("onnx_einsum_bad"));
    try {
      onnx::import_model(path);
      ADD_FAILURE() << "imported";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                cat(path, ": cannot import 1 item: node 'e' (Einsum): equation '", eq, "': ", why));
    }
  }
}

}  // namespace
}  // namespace vkc::test
