#include "runtime/cooperative_matrix_gate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "module/cache_dir.h"
#include "module/device_fit.h"
#include "module/module_file.h"
#include "runtime/runtime.h"
#include "support/content_hash.h"
#include "support/error.h"
#include "support/version.h"

namespace vkc::rt {

namespace embedded {
const std::vector<std::pair<std::string, std::string>>& gate_kernel_files();
}

namespace {

using nlohmann::json;

constexpr int kTimedRuns = 5;

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

// Small integers, so that every product and sum is exact in float32 and the float16 result
// (|sum| <= 2048 with these ranges and sizes) is exact too: any difference is the driver's.
HostTensor integer_matrix(int64_t n, uint32_t seed, int range) {
  HostTensor t(DType::f16, {n, n});
  uint32_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.set_f64(i, double(int((s >> 16) % uint32_t(2 * range + 1)) - range));
  }
  return t;
}

// The best of several timed runs, in ms: GPU timestamps where the device has them, else wall time.
double time_program(Program& p, const std::map<std::string, HostTensor>& inputs) {
  ExecuteOptions profile;
  profile.profile = true;
  p.execute(inputs, profile);  // warm-up (first-use costs)
  double best = 0;
  for (int r = 0; r < kTimedRuns; ++r) {
    auto start = std::chrono::steady_clock::now();
    p.execute(inputs, profile);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!p.last_profile().empty()) {
      ms = 0;
      for (const DispatchProfile& d : p.last_profile()) ms += d.ms;
    }
    best = r == 0 ? ms : std::min(best, ms);
  }
  return best;
}

ModuleImage gate_module(const std::string& name) {
  for (const auto& [n, bytes] : gate_kernel_modules())
    if (n == name) return unpack_module_file(std::vector<uint8_t>(bytes.begin(), bytes.end()), "gate kernel " + name);
  throw Error("no gate kernel " + name);
}

// The profile whose precompiled kernels (form, SIMT, both sizes) all fit the device, and whose KHR
// kernels run the fragment shape the device's own plans will (Intel's 8x16x16, 8x8x16); "" if none.
std::string fitting_profile(const std::string& form, const TargetLimits& limits) {
  TargetLimits device = limits;
  for (const auto& [name, bytes] : gate_kernel_modules()) {
    const std::string suffix = "/" + form + "/small";
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string profile = name.substr(0, name.size() - suffix.size());
    if (form == "khr" && gate_module(name).manifest.target.coopmat_loop_shape() != device.coopmat_loop_shape()) continue;
    bool fits = true;
    for (const std::string& f : {form, std::string("simt")})
      for (const char* size : {"small", "large"})
        fits = fits && unmet_usage(gate_module(profile + "/" + f + "/" + size), device).empty();
    if (fits) return profile;
  }
  return "";
}

GateResult measure(uint32_t device_index, const GateKey& key, const TargetLimits& limits) {
  GateResult r;
  r.key = key;
  std::string form = key.form == "KHR" ? "khr" : "nv";
  const std::string profile = fitting_profile(form, limits);
  if (profile.empty()) {
    r.verdict = GateVerdict::not_tested;
    r.detail = "no precompiled kernel for subgroup size " + std::to_string(key.subgroup_size);
    return r;
  }
  try {
    ContextOptions o;
    o.device = std::to_string(device_index);
    o.validation = false;
    o.validation_from_env = false;
    o.cooperative_matrix_gate = false;
    Context ctx(o);
    ModuleImage small = gate_module(profile + "/" + form + "/small");
    const int64_t ns = small.manifest.tensor("a").shape.at(0);
    std::map<std::string, HostTensor> in = gate_inputs(ns);
    {
      Program p(ctx, small);
      r.detail = gate_mismatch(in, p.execute(in).at("y"), 1);
    }
    if (r.detail.empty()) {
      ModuleImage large = gate_module(profile + "/" + form + "/large");
      const int64_t nl = large.manifest.tensor("a").shape.at(0);
      in = gate_inputs(nl);
      Program coop(ctx, large);
      r.detail = gate_mismatch(in, coop.execute(in).at("y"), 61);
      if (r.detail.empty()) {
        r.coopmat_ms = time_program(coop, in);
        Program simt(ctx, gate_module(profile + "/simt/large"));
        r.simt_ms = time_program(simt, in);
      }
    }
    r.verdict = !r.detail.empty() ? GateVerdict::wrong : r.coopmat_ms < r.simt_ms ? GateVerdict::ok : GateVerdict::slower;
  } catch (const std::exception& e) {
    r.verdict = GateVerdict::failed;
    r.detail = e.what();
  }
  return r;
}

}  // namespace

std::map<std::string, HostTensor> gate_inputs(int64_t n) {
  // |a|, |b| <= 2 up to n = 512 (|sum| <= 2048), |a|, |b| <= 1 beyond (up to n = 2048).
  const int range = n <= 512 ? 2 : 1;
  return {{"a", integer_matrix(n, uint32_t(n) * 2 + 1, range)}, {"b", integer_matrix(n, uint32_t(n) * 2 + 2, range)}};
}

std::string gate_mismatch(const std::map<std::string, HostTensor>& inputs, const HostTensor& y, int64_t row_step) {
  const HostTensor& a = inputs.at("a");
  const HostTensor& b = inputs.at("b");
  const int64_t n = a.shape()[0];
  std::vector<double> bv(size_t(n * n));
  for (int64_t i = 0; i < n * n; ++i) bv[size_t(i)] = b.get_f64(i);
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i += row_step) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t k = 0; k < n; ++k) {
      const double av = a.get_f64(i * n + k);
      if (av == 0) continue;
      const double* br = &bv[size_t(k * n)];
      for (int64_t j = 0; j < n; ++j) row[size_t(j)] += av * br[j];
    }
    for (int64_t j = 0; j < n; ++j)
      if (y.get_f64(i * n + j) != row[size_t(j)]) {
        std::ostringstream s;
        s << n << "^3 product: y[" << i << "," << j << "] = " << y.get_f64(i * n + j) << ", expected " << row[size_t(j)];
        return s.str();
      }
  }
  return "";
}

const char* gate_verdict_name(GateVerdict v) {
  switch (v) {
    case GateVerdict::ok: return "ok";
    case GateVerdict::wrong: return "wrong";
    case GateVerdict::slower: return "slower";
    case GateVerdict::failed: return "failed";
    case GateVerdict::not_tested: return "not tested";
  }
  return "?";
}

std::optional<GateVerdict> parse_gate_verdict(const std::string& name) {
  for (GateVerdict v : {GateVerdict::ok, GateVerdict::wrong, GateVerdict::slower, GateVerdict::failed, GateVerdict::not_tested})
    if (name == gate_verdict_name(v)) return v;
  return std::nullopt;
}

std::string gate_key_text(const GateKey& k) {
  return "device " + k.device_uuid + " driver " + std::to_string(k.driver_version) + " " + k.form + " " + k.shape +
         " subgroup " + std::to_string(k.subgroup_size);
}

std::string gate_file_name(const GateKey& k) {
  const std::string text = gate_key_text(k) + " vkc " + vkc_version();
  return hash_hex(content_hash(text.data(), text.size())) + ".json";
}

std::string describe(const GateResult& r) {
  std::string s = r.key.form + " " + r.key.shape + ", subgroup " + std::to_string(r.key.subgroup_size) + ": " +
                  gate_verdict_name(r.verdict);
  if (r.coopmat_ms > 0 || r.simt_ms > 0)
    s += " (tensor cores " + fixed(r.coopmat_ms, 3) + " ms, SIMT " + fixed(r.simt_ms, 3) + " ms)";
  if (!r.detail.empty()) s += ": " + r.detail;
  if (r.cached) s += " [cached]";
  return s;
}

std::string gate_result_json(const GateResult& r) {
  json j{{"key", gate_key_text(r.key)}, {"verdict", gate_verdict_name(r.verdict)},
         {"coopmat_ms", r.coopmat_ms},  {"simt_ms", r.simt_ms},
         {"detail", r.detail}};
  return j.dump(1) + "\n";
}

std::optional<GateResult> parse_gate_result(const std::string& text, const GateKey& expected) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto str = [&](const char* f) -> std::optional<std::string> {
    auto it = j.find(f);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto num = [&](const char* f) -> std::optional<double> {
    auto it = j.find(f);
    if (it == j.end() || !it->is_number() || it->get<double>() < 0) return std::nullopt;
    return it->get<double>();
  };
  std::optional<std::string> key = str("key"), verdict = str("verdict"), detail = str("detail");
  std::optional<double> coop = num("coopmat_ms"), simt = num("simt_ms");
  if (!key || *key != gate_key_text(expected) || !verdict || !detail || !coop || !simt) return std::nullopt;
  std::optional<GateVerdict> v = parse_gate_verdict(*verdict);
  if (!v) return std::nullopt;
  GateResult r;
  r.key = expected;
  r.verdict = *v;
  r.coopmat_ms = *coop;
  r.simt_ms = *simt;
  r.detail = *detail;
  r.cached = true;
  return r;
}

std::optional<GateResult> load_gate_result(const std::string& dir, const GateKey& key) {
  if (dir.empty()) return std::nullopt;
  std::ifstream in(dir + "/" + gate_file_name(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_gate_result(text, key);
}

bool store_gate_result(const std::string& dir, const GateResult& r) {
  if (dir.empty()) return false;
  const std::string text = gate_result_json(r);
  return write_cache_file(dir + "/" + gate_file_name(r.key), text.data(), text.size());
}

TargetLimits gated_limits(const TargetLimits& device, const std::vector<GateResult>& results) {
  TargetLimits t = device;
  for (const GateResult& r : results) {
    if (r.verdict == GateVerdict::ok || r.verdict == GateVerdict::not_tested) continue;
    if (r.key.form == "KHR") t.cooperative_matrix_khr = false;
    if (r.key.form == "NV") t.cooperative_matrix_nv = false;
  }
  return t;
}

const std::vector<std::pair<std::string, std::string>>& gate_kernel_modules() { return embedded::gate_kernel_files(); }

std::vector<GateResult> gate_device(uint32_t device_index, const std::string& device_uuid, uint32_t driver_version,
                                    const TargetLimits& limits, const std::string& cache_dir) {
  std::vector<GateResult> results;
  for (const char* form : {"KHR", "NV"}) {
    if (std::string(form) == "KHR" ? !limits.cooperative_matrix_khr : !limits.cooperative_matrix_nv) continue;
    // The shape the loop runs on this device (Intel: 8x16x16 or 8x8x16), which its kernels use.
    const std::string shape = std::string(form) == "KHR" && !limits.coopmat_loop_shape().empty()
                                  ? limits.coopmat_loop_shape() : std::string(kGateShape);
    GateKey key{device_uuid, driver_version, form, shape, limits.subgroup_size};
    if (std::optional<GateResult> cached = load_gate_result(cache_dir, key)) {
      results.push_back(*cached);
      continue;
    }
    try {
      results.push_back(measure(device_index, key, limits));
    } catch (const std::exception& e) {  // a damaged embedded kernel: a build fault, reported as such
      GateResult r;
      r.key = key;
      r.verdict = GateVerdict::failed;
      r.detail = e.what();
      results.push_back(r);
    }
    // "not tested" is not stored: it costs nothing to find again, and a vkc with kernels for
    // this subgroup size (its version is in the file name) would test anyway.
    if (results.back().verdict != GateVerdict::not_tested) store_gate_result(cache_dir, results.back());
  }
  return results;
}

}  // namespace vkc::rt
