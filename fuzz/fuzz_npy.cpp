// libFuzzer target: the .npy reader (parse_npy). Properties: a one-line vkc::Error or a tensor
// whose byte size matches its shape, and serialize_npy -> parse_npy gives the same tensor back.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_common.h"
#include "support/error.h"
#include "support/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  std::vector<uint8_t> bytes(data, data + size);
  vkc::HostTensor tensor;
  try {
    tensor = vkc::parse_npy(bytes, "fuzz.npy");
  } catch (const vkc::Error& e) {
    vkc::fuzz::check_error_message(e.what());
    return 0;
  }
  // The tensor's data was copied out of an input of `size` bytes, so it cannot be larger.
  if (tensor.size_bytes() > size) vkc::fuzz::fail("tensor larger than the file it came from");
  vkc::HostTensor again;
  try {
    again = vkc::parse_npy(vkc::serialize_npy(tensor), "reserialized.npy");
  } catch (const vkc::Error& e) {
    vkc::fuzz::fail(std::string("serialize_npy output does not parse: ") + e.what());
  }
  if (again.dtype() != tensor.dtype() || again.shape() != tensor.shape() ||
      again.bytes() != tensor.bytes())
    vkc::fuzz::fail("serialize_npy -> parse_npy changed the tensor");
  return 0;
}
