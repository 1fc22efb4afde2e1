// The memory preflight's arithmetic (module/memory_footprint.h): what a module allocates at load,
// and which allocation or total a device's memory refuses.
#include <gtest/gtest.h>

#include <cstdint>

#include "module/memory_footprint.h"

namespace vkc {
namespace {

Manifest manifest() {
  Manifest m;
  m.tensors = {{"x", DType::u8, {10}, TensorRole::Input, 0, ""},
               {"x2", DType::u8, {2, 5}, TensorRole::Input, 0, "x"},  // a view: no buffer of its own
               {"y", DType::f32, {1000}, TensorRole::Output, 0, ""},
               {"e", DType::f32, {0}, TensorRole::Output, 0, ""},
               {"t", DType::f32, {100}, TensorRole::Intermediate, 0, ""}};
  m.constants_bytes = 6;
  m.arena_bytes = 5000;
  return m;
}

TEST(MemoryFootprint, AllocationsAsTheRuntimeMakesThem) {
  std::vector<DeviceAllocation> a = module_allocations(manifest());
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0].what, "input 'x'");
  EXPECT_EQ(a[0].bytes, 12u);  // whole words
  EXPECT_EQ(a[1].what, "output 'y'");
  EXPECT_EQ(a[1].bytes, 4000u);
  EXPECT_EQ(a[2].bytes, 4u);  // an empty tensor still gets one word
  EXPECT_EQ(a[3].what, "constants");
  EXPECT_EQ(a[3].bytes, 8u);
  EXPECT_EQ(a[4].what, "arena");
  EXPECT_EQ(a[4].bytes, 5000u);
  MemoryFootprint f = memory_footprint(a);
  EXPECT_EQ(f.total, 12u + 4000u + 4u + 8u + 5000u);
  EXPECT_EQ(f.largest.what, "arena");
  EXPECT_EQ(f.largest.bytes, 5000u);
}

TEST(MemoryFootprint, Misfits) {
  std::vector<DeviceAllocation> a = module_allocations(manifest());
  const uint64_t total = memory_footprint(a).total;  // 9024
  EXPECT_EQ(device_memory_misfit(a, 0, total, 5000), "");
  EXPECT_EQ(device_memory_misfit(a, 0, 0, 0), "");  // limits unknown: not checked
  EXPECT_EQ(device_memory_misfit(a, 0, total, 4999),
            "arena needs 5000 bytes in one allocation, the device allows 4999 (maxMemoryAllocationSize)");
  EXPECT_EQ(device_memory_misfit(a, 0, total - 1, 0),
            "its buffers need 9024 bytes of device memory (largest: arena, 5000 bytes), the device's memory heap "
            "has 9023 bytes");
  EXPECT_EQ(device_memory_misfit(a, 1, total, 0),
            "its buffers need 9024 bytes of device memory (largest: arena, 5000 bytes) beside 1 bytes in use, the "
            "device's memory heap has 9024 bytes");
  // 400 outputs of 100 MB against a 24 GiB heap: refused by the sum, not by any one buffer.
  std::vector<DeviceAllocation> outputs(400, DeviceAllocation{"output 'o'", 100000000});
  EXPECT_NE(device_memory_misfit(outputs, 0, 24ull << 30, 4ull << 30).find("40000000000 bytes"), std::string::npos);
  // Sums near the top of uint64 do not wrap around into a fit.
  std::vector<DeviceAllocation> huge{{"a", UINT64_MAX / 2}, {"b", UINT64_MAX / 2}};
  EXPECT_NE(device_memory_misfit(huge, UINT64_MAX / 2, UINT64_MAX - 5, 0), "");
}

}  // namespace
}  // namespace vkc
