// conv_transpose phase by phase. With stride s, output o of a transposed conv gathers input
// i = (o + pad_begin - k) / s only from the taps k with k = (o + pad_begin) mod s (mod s): the
// other taps land between input samples. Gathering over every tap (as a plain implicit GEMM
// does) multiplies zeros for all but one tap in s per dim, 3/4 of the work at stride 2 in 2-D.
// Split the outputs by their phase r = (o + pad_begin) mod s instead, and each phase is an
// ordinary conv: output q of phase r (o = first(r) + s*q) reads input q + base(r) - j through
// tap r + s*j, j < ceil(K / s). The GEMM kernels run the phases as extra groups of one dispatch
// (codegen/kernels/conv_phase_fns.h); rows past a phase's last output and taps past the kernel
// read zero and store nothing.
//
// Applies to conv_transpose with dilation 1 and some stride above 1 (other dilations would need
// a tap step of s / gcd(s, d); they keep the gather over every tap).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/conv_geometry.h"

namespace vkc::codegen {

struct ConvPhases {
  bool on = false;
  int64_t count = 1;               // phases: the product of the strides
  std::vector<int64_t> positions;  // per spatial dim: outputs per phase, ceil(O / s)
  std::vector<int64_t> taps;       // per spatial dim: taps per phase, ceil(K / s)
};

ConvPhases conv_phases(const ir::ConvGeometry& g);

}  // namespace vkc::codegen
