#include "runtime_fixture.h"

#include "binary_op_spv.h"

namespace vkc::rt::test {

namespace {

// Owns the shared context and destroys it after the last test (while the loader is still loaded,
// which static destruction would not guarantee).
class ContextEnvironment : public ::testing::Environment {
 public:
  Context& get() {
    if (!context_) context_ = std::make_unique<Context>();
    return *context_;
  }
  void TearDown() override { context_.reset(); }

 private:
  std::unique_ptr<Context> context_;
};

ContextEnvironment* const environment =
    static_cast<ContextEnvironment*>(::testing::AddGlobalTestEnvironment(new ContextEnvironment));

}  // namespace

Context& shared_context() { return environment->get(); }

DispatchDesc binary_op_dispatch(const std::string& name, const std::string& a, const std::string& b,
                                const std::string& c, uint32_t n, uint32_t op, uint32_t workgroup) {
  DispatchDesc d;
  d.name = name;
  d.kernel = "binary_op";
  d.spv = "binary_op.spv";
  d.bindings = {{0, a, false}, {1, b, false}, {2, c, true}};
  d.push_constants = {n};
  d.spec_constants = {{0, workgroup}, {1, op}};
  d.workgroup_size = {workgroup, 1, 1};
  d.workgroup_count = {(n + workgroup - 1) / workgroup, 1, 1};
  d.flops = n;
  d.bytes = 12.0 * n;
  return d;
}

std::vector<uint32_t> binary_op_spirv() {
  return std::vector<uint32_t>(std::begin(kBinaryOpSpv), std::end(kBinaryOpSpv));
}

TensorDesc tensor_desc(const std::string& name, Shape shape, TensorRole role, uint64_t offset,
                       const std::string& view_of) {
  TensorDesc t;
  t.name = name;
  t.dtype = DType::f32;
  t.shape = std::move(shape);
  t.role = role;
  t.offset = offset;
  t.view_of = view_of;
  return t;
}

ModuleImage add_module(const TargetLimits& target, uint32_t n) {
  ModuleImage m;
  m.manifest.target = target;
  m.manifest.target.name = "test";
  m.manifest.tensors = {tensor_desc("a", {n}, TensorRole::Input), tensor_desc("b", {n}, TensorRole::Input),
                        tensor_desc("c", {n}, TensorRole::Output)};
  m.manifest.inputs = {"a", "b"};
  m.manifest.outputs = {"c"};
  m.manifest.dispatches = {binary_op_dispatch("add", "a", "b", "c", n, 0)};
  m.spirv["binary_op.spv"] = binary_op_spirv();
  return m;
}

}  // namespace vkc::rt::test
