#include "api/api_helpers.h"

#include <filesystem>

namespace vkc::api_test {

Device& shared_device() {
  static Device device;
  return device;
}

void ApiTest::TearDown() {
  std::vector<std::string> messages = device().validation_messages();
  EXPECT_TRUE(messages.empty()) << messages.size() << " validation message(s), first: " << messages.front();
  device().clear_validation_messages();
}

std::string scratch_dir(const std::string& name) {
  namespace fs = std::filesystem;
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(VKC_BINARY_DIR) / "tests" / "api-scratch" /
                 (std::string(t ? t->test_suite_name() : "x") + "." + (t ? t->name() : "x") + "." + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

HostTensor iota_f32(const Shape& shape, double scale) {
  HostTensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, (double(i % 17) - 8) * scale);
  return t;
}

ir::Graph small_graph(int64_t n) {
  ir::Graph g;
  g.name = "small";
  ir::Value* x = g.add_input("x", {DType::f32, {n}});
  HostTensor two(DType::f32, {n}), bias(DType::f32, {n});
  for (int64_t i = 0; i < n; ++i) {
    two.set_f64(i, 2.0);
    bias.set_f64(i, double(i % 5) * 0.1 - 0.2);
  }
  ir::Value* y = g.add_op(ir::OpKind::Mul, {x, g.add_constant(two, "two")})->result();
  y = g.add_op(ir::OpKind::Add, {y, g.add_constant(bias, "bias")})->result();
  y = g.add_op(ir::OpKind::Relu, {y})->result();
  g.add_output(y, "y");
  return g;
}

ir::Graph unfusable_chain(int length, int64_t n) {
  ir::Graph g;
  g.name = "chain";
  ir::Value* prev = g.add_input("x", {DType::f32, {n}});
  ir::Value* cur = g.add_op(ir::OpKind::Add, {prev, prev}, {}, "add1")->result();
  for (int i = 2; i <= length; ++i) {
    ir::Value* next = g.add_op(ir::OpKind::Add, {cur, prev}, {}, "add" + std::to_string(i))->result();
    prev = cur;
    cur = next;
  }
  g.add_output(prev, "second_last");
  g.add_output(cur, "last");
  return g;
}

}  // namespace vkc::api_test
