// Timing compiled modules on the device: GPU timestamps around each dispatch, inputs kept on the
// device and rotated between sets, outputs left on the device (no host round trip per run).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/runtime.h"

namespace vkc::bench {

using DeviceInputs = std::map<std::string, std::shared_ptr<rt::DeviceTensor>>;

struct Timing {
  std::vector<double> gpu_ms;   // per timed run: sum of the dispatches' timestamp intervals
  std::vector<double> wall_ms;  // per timed run: submit to fence, host clock (includes copies)
  double median_ms = 0, min_ms = 0, max_ms = 0, wall_median_ms = 0;
  // Median time of each dispatch over the timed runs, in dispatch order.
  std::vector<std::pair<std::string, double>> dispatches;
};

double median(std::vector<double> v);

// Runs `warmup` untimed executions (and more until 0.5 s have passed), then `runs` profiled ones;
// run i uses sets[i % sets.size()].
// Stops timing early once `budget_s` of wall time has passed and at least `min_runs` ran, so one
// pathologically slow kernel cannot eat the GPU lease (the JSON records how many ran).
Timing time_program(rt::Program& program, const std::vector<DeviceInputs>& sets, int warmup, int runs,
                    int min_runs, double budget_s);

// Benchmark inputs: f32 uniform in [-1, 1) from a fast generator (inputs reach 2^27 elements), and
// index payloads 0..n-1 along the last axis (sort's positions).
HostTensor random_tensor(DType dtype, const Shape& shape, uint64_t seed);
HostTensor iota_tensor(DType dtype, const Shape& shape);

}  // namespace vkc::bench
