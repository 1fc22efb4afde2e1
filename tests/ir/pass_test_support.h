// Test helpers for graph passes: op counts, and a pass run on a text graph whose outputs must keep
// their values (the reference interpreter on both graphs, inputs sin(a * i + b)).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace vkc::ir {

inline int count_ops(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Op* op : g.ops()) n += op->kind == kind;
  return n;
}

// `text`'s graph after `pass`, verified, with every output within `tolerance` of the original
// graph's (0: bit for bit; NaN where the original has NaN).
inline Graph pass_keeping_values(const std::string& text, const Pass& pass, double tolerance) {
  Graph before = parse_graph(text), after = parse_graph(text);
  PassManager pm;
  pm.add(pass);
  pm.run(after);
  verify_graph(after);
  std::map<std::string, HostTensor> inputs;
  for (const Value* v : before.inputs()) {
    HostTensor t(v->type.dtype, v->type.shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, std::sin(0.7 * double(i) + 0.3));
    inputs.emplace(v->name, std::move(t));
  }
  std::map<std::string, HostTensor> want = interpret(before, inputs), got = interpret(after, inputs);
  EXPECT_EQ(want.size(), got.size());
  for (const auto& [name, w] : want) {
    const HostTensor& o = got.at(name);
    EXPECT_EQ(o.shape(), w.shape()) << name;
    for (int64_t i = 0; i < w.numel() && o.shape() == w.shape(); ++i) {
      if (std::isnan(w.get_f64(i))) EXPECT_TRUE(std::isnan(o.get_f64(i))) << name << "[" << i << "]";
      else EXPECT_NEAR(o.get_f64(i), w.get_f64(i), tolerance) << name << "[" << i << "]";
    }
  }
  return after;
}

}  // namespace vkc::ir
