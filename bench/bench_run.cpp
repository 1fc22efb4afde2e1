#include "bench/bench_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "support/error.h"

namespace vkc::bench {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Timing time_program(rt::Program& program, const std::vector<DeviceInputs>& sets, int warmup, int runs,
                    int min_runs, double budget_s) {
  using Clock = std::chrono::steady_clock;
  // Outputs stay on the device: downloading hundreds of MiB per run would dominate the lease.
  std::set<std::string> outputs(program.manifest().outputs.begin(), program.manifest().outputs.end());
  rt::ExecuteOptions profiled;
  profiled.profile = true;
  // Warm up for `warmup` runs and at least kWarmupSeconds: on the H200 (2026-11-24) a case's
  // GPU times kept dropping in steps through its first ~0.1-0.3 s of runs (sort 2^24: 8.4 ms for
  // 8 runs, 5.5 ms for 13, then 3.3 ms), so a count of warm-up runs alone timed the slow phase.
  constexpr double kWarmupSeconds = 0.5;
  const auto warm_start = Clock::now();
  for (int i = 0; i < warmup || (std::chrono::duration<double>(Clock::now() - warm_start).count() < kWarmupSeconds &&
                                  i < 5000);
       ++i) {
    program.submit({}, sets[size_t(i) % sets.size()], outputs, profiled);
    program.wait();
  }
  Timing t;
  std::map<std::string, std::vector<double>> per_dispatch;
  const auto start = Clock::now();
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    program.submit({}, sets[size_t(i) % sets.size()], outputs, profiled);
    program.wait();
    auto t1 = Clock::now();
    double sum = 0;
    for (const rt::DispatchProfile& d : program.last_profile()) {
      sum += d.ms;
      per_dispatch[d.name].push_back(d.ms);
    }
    t.gpu_ms.push_back(sum);
    t.wall_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (i + 1 >= min_runs && std::chrono::duration<double>(t1 - start).count() > budget_s) break;
  }
  t.median_ms = median(t.gpu_ms);
  t.min_ms = *std::min_element(t.gpu_ms.begin(), t.gpu_ms.end());
  t.max_ms = *std::max_element(t.gpu_ms.begin(), t.gpu_ms.end());
  t.wall_median_ms = median(t.wall_ms);
  for (const DispatchDesc& d : program.manifest().dispatches) t.dispatches.emplace_back(d.name, median(per_dispatch[d.name]));
  return t;
}

HostTensor random_tensor(DType dtype, const Shape& shape, uint64_t seed) {
  check(dtype == DType::f32 || dtype == DType::f16 || dtype == DType::u8 || dtype == DType::i8,
        "bench: random inputs are f32, f16, u8 or i8 only");
  if (dtype == DType::u8 || dtype == DType::i8) {  // the f32 values in [-1, 1) spread over the range
    HostTensor f = random_tensor(DType::f32, shape, seed);
    HostTensor q(dtype, shape);
    const double offset = dtype == DType::u8 ? 128 : 0;
    for (int64_t i = 0; i < f.numel(); ++i) q.set_i64(i, int64_t(std::floor(f.get_f64(i) * 128 + offset)));
    return q;
  }
  if (dtype == DType::f16) {  // the f32 values rounded to f16
    HostTensor f = random_tensor(DType::f32, shape, seed);
    HostTensor h(dtype, shape);
    for (int64_t i = 0; i < f.numel(); ++i) h.set_f64(i, f.get_f64(i));
    return h;
  }
  HostTensor t(dtype, shape);
  // splitmix64: fast and good enough for benchmark data; 24 random bits per float keeps values
  // distinct enough that ties in topk/sort are rare (and handled by the checks anyway).
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  float* p = t.as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[i] = float(int64_t(z >> 40) - (int64_t(1) << 23)) * (1.0f / float(1 << 23));
  }
  return t;
}

HostTensor iota_tensor(DType dtype, const Shape& shape) {
  HostTensor t(dtype, shape);
  const int64_t last = shape.empty() ? 1 : shape.back();
  for (int64_t i = 0; i < t.numel(); ++i) t.set_i64(i, i % last);
  return t;
}

}  // namespace vkc::bench
