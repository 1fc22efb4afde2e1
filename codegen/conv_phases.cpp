#include "codegen/conv_phases.h"

#include "support/int_math.h"

namespace vkc::codegen {

ConvPhases conv_phases(const ir::ConvGeometry& g) {
  ConvPhases p;
  if (!g.transposed) return p;
  bool strided = false;
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i) {
    if (g.dilations[i] != 1) return p;
    strided = strided || g.strides[i] > 1;
  }
  if (!strided) return p;
  p.on = true;
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i) {
    p.count *= g.strides[i];
    p.positions.push_back(ceil_div(g.out_spatial[i], g.strides[i]));
    p.taps.push_back(ceil_div(g.kernel[i], g.strides[i]));
  }
  return p;
}

}  // namespace vkc::codegen
