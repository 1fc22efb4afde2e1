// IEEE 754 binary16 <-> binary32 conversion (round to nearest even), for f16 host tensors.
#pragma once

#include <cstdint>

namespace vkc {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

}  // namespace vkc
