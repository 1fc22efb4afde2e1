// The two ceilings every case is measured against, taken through vkc kernels on the same device in
// the same run: copy bandwidth (bytes read + written per second) and fp32 FMA throughput.
#pragma once

#include <nlohmann/json.hpp>

#include "runtime/runtime.h"

namespace vkc::bench {

struct Peaks {
  double copy_gbps = 0;     // GB/s (1e9 bytes), read + written
  double fma_gflops = 0;    // GFLOP/s, 2 flops per FMA
  nlohmann::json detail;    // sizes, medians, per-run times
};

// `small`: sizes for a lavapipe plumbing check.
Peaks measure_peaks(rt::Context& ctx, bool small, int runs);

}  // namespace vkc::bench
