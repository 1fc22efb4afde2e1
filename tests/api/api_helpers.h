// Shared pieces of the public-API tests: one Device per test binary, a fixture that fails a test
// on any validation message, small models, and scratch directories.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "vkc/graph.h"
#include "vkc/vkc.h"

namespace vkc::api_test {

// Created once (device creation with validation is slow on lavapipe); VKC_DEVICE / VKC_VALIDATION
// are honoured.
Device& shared_device();

class ApiTest : public ::testing::Test {
 protected:
  Device& device() { return shared_device(); }
  void SetUp() override { device().clear_validation_messages(); }
  void TearDown() override;
};

// A fresh, empty directory under the build tree for this test.
std::string scratch_dir(const std::string& name);

// out = relu(x * 2 + b) over f32[n]; `b` a constant, so the module has constants.
ir::Graph small_graph(int64_t n = 64);
// A chain of `length` adds that cannot fuse: x1 = x0 + x0, x[i+1] = x[i] + x[i-1], so every
// intermediate has two users; the last two are outputs. Compiles to `length` dispatches.
ir::Graph unfusable_chain(int length, int64_t n = 256);

HostTensor iota_f32(const Shape& shape, double scale = 0.01);

}  // namespace vkc::api_test
