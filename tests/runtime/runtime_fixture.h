// Shared pieces of the runtime tests: one Context per test binary (creating one with the
// validation layer costs ~0.1-0.5 s) and a fixture that fails a test on any validation message.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "runtime/runtime.h"

namespace vkc::rt::test {

// The context every runtime test uses (device and validation from VKC_DEVICE / VKC_VALIDATION).
Context& shared_context();

class RuntimeFixture : public ::testing::Test {
 protected:
  Context& ctx() { return shared_context(); }
  void SetUp() override { ctx().clear_validation_messages(); }
  void TearDown() override {
    std::vector<std::string> messages = ctx().validation_messages();
    EXPECT_TRUE(messages.empty()) << messages.size() << " validation message(s), first: " << messages.front();
    ctx().clear_validation_messages();
  }
};

// c = a OP b (OP 0: add, 1: multiply) over `n` floats: the checked-in binary_op.comp kernel.
DispatchDesc binary_op_dispatch(const std::string& name, const std::string& a, const std::string& b,
                                const std::string& c, uint32_t n, uint32_t op, uint32_t workgroup = 64);
std::vector<uint32_t> binary_op_spirv();

TensorDesc tensor_desc(const std::string& name, Shape shape, TensorRole role, uint64_t offset = 0,
                       const std::string& view_of = "");

// out = a + b, all f32[n]; targets the context's own limits.
ModuleImage add_module(const TargetLimits& target, uint32_t n);

}  // namespace vkc::rt::test
