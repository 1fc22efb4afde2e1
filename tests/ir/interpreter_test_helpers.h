// Shared by the Interpreter* test suites: run one op through interpret() and read results.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/interpreter.h"
#include "support/tensor.h"

namespace vkc::test {

// Builds a graph with inputs x0, x1, ... (the given tensors' types), one op of `kind` with
// `attrs` and every result as an output, runs interpret() and returns the results in order.
inline std::vector<HostTensor> run_op_all(ir::OpKind kind, const std::vector<HostTensor>& inputs,
                                          ir::AttrMap attrs = {}) {
  ir::Graph g;
  std::vector<ir::Value*> operands;
  std::map<std::string, HostTensor> feed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = "x" + std::to_string(i);
    operands.push_back(g.add_input(name, ir::TensorType{inputs[i].dtype(), inputs[i].shape()}));
    feed.emplace(name, inputs[i]);
  }
  ir::Op* op = g.add_op(kind, operands, std::move(attrs), "under_test");
  for (size_t i = 0; i < op->results.size(); ++i) g.add_output(op->result(int(i)), "r" + std::to_string(i));
  std::map<std::string, HostTensor> out = ir::interpret(g, feed);
  std::vector<HostTensor> results;
  for (size_t i = 0; i < op->results.size(); ++i) results.push_back(out.at("r" + std::to_string(i)));
  return results;
}

inline HostTensor run_op(ir::OpKind kind, const std::vector<HostTensor>& inputs, ir::AttrMap attrs = {}) {
  return run_op_all(kind, inputs, std::move(attrs)).at(0);
}

inline std::vector<double> values_of(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_f64(i));
  return v;
}

inline std::vector<int64_t> ints_of(const HostTensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_i64(i));
  return v;
}

// Element-by-element check with NaN matching NaN; `tol` absolute.
inline void expect_values(const HostTensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  ASSERT_EQ(t.numel(), int64_t(expected.size())) << "shape " << shape_str(t.shape());
  for (size_t i = 0; i < expected.size(); ++i) {
    double a = t.get_f64(int64_t(i)), e = expected[i];
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << "element " << i << " is " << a << ", expected NaN";
    } else if (std::isinf(e)) {
      EXPECT_EQ(a, e) << "element " << i;
    } else {
      EXPECT_NEAR(a, e, tol) << "element " << i;
    }
  }
}

inline HostTensor typed(DType dtype, Shape shape, const std::vector<double>& values) {
  HostTensor t(dtype, std::move(shape));
  EXPECT_EQ(t.numel(), int64_t(values.size()));
  for (int64_t i = 0; i < t.numel() && i < int64_t(values.size()); ++i) t.set_f64(i, values[size_t(i)]);
  return t;
}

inline HostTensor ints(DType dtype, Shape shape, const std::vector<int64_t>& values) {
  HostTensor t(dtype, std::move(shape));
  EXPECT_EQ(t.numel(), int64_t(values.size()));
  for (int64_t i = 0; i < t.numel() && i < int64_t(values.size()); ++i) t.set_i64(i, values[size_t(i)]);
  return t;
}

}  // namespace vkc::test
