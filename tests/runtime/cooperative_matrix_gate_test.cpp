// The cooperative-matrix gate (runtime/cooperative_matrix_gate.h, issue 22 item 4): its cache
// key and file, the verdict cache's round trip (damaged files ignored), the decision that codegen
// follows, the precompiled kernels built into the library, and on the live device what the gate
// says: nothing to test on lavapipe; on a GPU with cooperative matrices (the GPU machine) every
// offered form measured once, cached, then read back.
#include "runtime/cooperative_matrix_gate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "module/cache_dir.h"
#include "module/device_fit.h"
#include "module/module_file.h"
#include "runtime_fixture.h"

namespace vkc::rt::test {
namespace {

namespace fs = std::filesystem;

GateKey sample_key() { return {"00112233445566778899aabbccddeeff", 0x2260000u, "KHR", kGateShape, 32}; }

// A fresh directory per test, removed afterwards.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& name)
      : path((fs::temp_directory_path() / ("vkc-gate-" + name + "-" + std::to_string(::getpid()))).string()) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(CooperativeMatrixGate, KeyNamesEveryPartAndEachPartChangesTheFile) {
  const GateKey k = sample_key();
  EXPECT_EQ(gate_key_text(k),
            "device 00112233445566778899aabbccddeeff driver 36044800 KHR 16x16x16 f16*f16+f32 subgroup 32");
  const std::string file = gate_file_name(k);
  EXPECT_EQ(file, gate_file_name(sample_key()));  // stable
  EXPECT_EQ(file.size(), 16u + 5u);             // 64-bit hash in hex + ".json"
  std::vector<GateKey> changed(5, k);
  changed[0].device_uuid[0] = 'f';
  changed[1].driver_version += 1;
  changed[2].form = "NV";
  changed[3].shape = "16x8x16 f16*f16+f32";
  changed[4].subgroup_size = 64;
  for (const GateKey& c : changed) EXPECT_NE(gate_file_name(c), file) << gate_key_text(c);
}

TEST(CooperativeMatrixGate, VerdictNamesRoundTrip) {
  for (GateVerdict v : {GateVerdict::ok, GateVerdict::wrong, GateVerdict::slower, GateVerdict::failed, GateVerdict::not_tested})
    EXPECT_EQ(parse_gate_verdict(gate_verdict_name(v)), v);
  EXPECT_FALSE(parse_gate_verdict("fine").has_value());
}

TEST(CooperativeMatrixGate, ResultJsonRoundTripsAndDamageIsRejected) {
  GateResult r;
  r.key = sample_key();
  r.verdict = GateVerdict::slower;
  r.coopmat_ms = 1.25;
  r.simt_ms = 0.5;
  r.detail = "x";
  const std::string text = gate_result_json(r);
  std::optional<GateResult> back = parse_gate_result(text, r.key);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->verdict, GateVerdict::slower);
  EXPECT_EQ(back->coopmat_ms, 1.25);
  EXPECT_EQ(back->simt_ms, 0.5);
  EXPECT_EQ(back->detail, "x");
  EXPECT_TRUE(back->cached);
  EXPECT_EQ(describe(*back), "KHR 16x16x16 f16*f16+f32, subgroup 32: slower (tensor cores 1.250 ms, SIMT 0.500 ms): x [cached]");

  GateKey other = r.key;
  other.driver_version = 7;
  EXPECT_FALSE(parse_gate_result(text, other).has_value()) << "a file for another key";
  EXPECT_FALSE(parse_gate_result(text.substr(0, text.size() / 2), r.key).has_value()) << "truncated";
  EXPECT_FALSE(parse_gate_result("", r.key).has_value());
  EXPECT_FALSE(parse_gate_result("[1]", r.key).has_value());
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  EXPECT_FALSE(parse_gate_result(edited("\"slower\"", "\"fast\""), r.key).has_value()) << "unknown verdict";
  EXPECT_FALSE(parse_gate_result(edited("1.25", "-1.25"), r.key).has_value()) << "negative time";
  EXPECT_FALSE(parse_gate_result(edited("1.25", "\"1.25\""), r.key).has_value()) << "time not a number";
  EXPECT_TRUE(parse_gate_result(edited("1.25", "2.5"), r.key).has_value());  // the edits themselves parse
}

TEST(CooperativeMatrixGate, CacheFileRoundTripDamagedFileIgnoredThenRewritten) {
  TempDir dir("cache");
  GateResult r;
  r.key = sample_key();
  r.verdict = GateVerdict::ok;
  r.coopmat_ms = 0.2;
  r.simt_ms = 1.4;
  EXPECT_FALSE(load_gate_result(dir.path, r.key).has_value()) << "nothing stored yet";
  ASSERT_TRUE(store_gate_result(dir.path, r));
  const std::string file = dir.path + "/" + gate_file_name(r.key);
  ASSERT_TRUE(fs::exists(file));
  std::optional<GateResult> back = load_gate_result(dir.path, r.key);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->verdict, GateVerdict::ok);
  EXPECT_EQ(back->simt_ms, 1.4);
  { std::ofstream(file, std::ios::trunc) << "{\"key\": \"dev"; }
  EXPECT_FALSE(load_gate_result(dir.path, r.key).has_value()) << "a damaged file reads as absent";
  ASSERT_TRUE(store_gate_result(dir.path, r));
  EXPECT_TRUE(load_gate_result(dir.path, r.key).has_value()) << "and is rewritten by the next run";
  // No cache directory: nothing read, nothing written.
  EXPECT_FALSE(store_gate_result("", r));
  EXPECT_FALSE(load_gate_result("", r.key).has_value());
}

TEST(CooperativeMatrixGate, CodegenUsesAFormOnlyWhereItsVerdictAllows) {
  TargetLimits device;
  device.cooperative_matrix_khr = true;
  device.cooperative_matrix_nv = true;
  for (const char* form : {"KHR", "NV"})
    for (GateVerdict v : {GateVerdict::ok, GateVerdict::wrong, GateVerdict::slower, GateVerdict::failed, GateVerdict::not_tested}) {
      SCOPED_TRACE(std::string(form) + " " + gate_verdict_name(v));
      GateResult r;
      r.key = sample_key();
      r.key.form = form;
      r.verdict = v;
      TargetLimits t = gated_limits(device, {r});
      const bool allowed = v == GateVerdict::ok || v == GateVerdict::not_tested;
      EXPECT_EQ(std::string(form) == "KHR" ? t.cooperative_matrix_khr : t.cooperative_matrix_nv, allowed);
      EXPECT_TRUE(std::string(form) == "KHR" ? t.cooperative_matrix_nv : t.cooperative_matrix_khr) << "the other form is untouched";
    }
  EXPECT_TRUE(gated_limits(device, {}).cooperative_matrix_khr) << "no verdict: the advertisement rules";
}

// The kernels compiled into the library at build time: a float16 matmul per form and size, for
// the nvidia profile at least (subgroup 32), each a valid module declaring its form only.
TEST(CooperativeMatrixGate, PrecompiledKernelsLoadAndDeclareTheirForm) {
  std::vector<std::string> names;
  for (const auto& [name, bytes] : gate_kernel_modules()) {
    SCOPED_TRACE(name);
    names.push_back(name);
    ModuleImage m = unpack_module_file(std::vector<uint8_t>(bytes.begin(), bytes.end()), name);
    const bool small = name.size() > 6 && name.substr(name.size() - 6) == "/small";
    const int64_t n = small ? 256 : 2048;
    for (const char* t : {"a", "b", "y"}) {
      EXPECT_EQ(m.manifest.tensor(t).dtype, DType::f16);
      EXPECT_EQ(m.manifest.tensor(t).shape, (Shape{n, n}));
    }
    ASSERT_EQ(m.manifest.dispatches.size(), 1u);
    const DispatchDesc& d = m.manifest.dispatches[0];
    const bool simt = name.find("/simt/") != std::string::npos, khr = name.find("/khr/") != std::string::npos;
    EXPECT_EQ(d.kernel, simt ? "matmul_tiled" : "matmul_coopmat");
    const auto& caps = d.spirv.capabilities;
    auto has = [&](const char* c) { return std::find(caps.begin(), caps.end(), c) != caps.end(); };
    EXPECT_EQ(has("CooperativeMatrixKHR"), !simt && khr);
    EXPECT_EQ(has("CooperativeMatrixNV"), !simt && !khr);
  }
  for (const char* form : {"simt", "khr", "nv"})
    for (const char* size : {"small", "large"})
      EXPECT_NE(std::find(names.begin(), names.end(), std::string("nvidia/") + form + "/" + size), names.end())
          << "nvidia/" << form << "/" << size;
}

class CooperativeMatrixGateDevice : public RuntimeFixture {};

// Where the device offers no cooperative matrix there is nothing to gate: no verdict, nothing
// cached, and the limits to compile for equal the device's.
TEST_F(CooperativeMatrixGateDevice, NoCooperativeMatrixNoVerdict) {
  TempDir dir("none");
  TargetLimits t = ctx().limits();
  t.cooperative_matrix_khr = t.cooperative_matrix_nv = false;
  EXPECT_TRUE(gate_device(0, "00", 1, t, dir.path).empty());
  EXPECT_FALSE(fs::exists(dir.path));
  if (ctx().limits().cooperative_matrix_khr || ctx().limits().cooperative_matrix_nv) return;
  EXPECT_TRUE(ctx().cooperative_matrix_gate().empty());
  EXPECT_FALSE(ctx().compile_limits().cooperative_matrix_khr);
  EXPECT_FALSE(ctx().compile_limits().cooperative_matrix_nv);
}

// The precompiled tensor-core kernels do not fit a device without cooperative matrices (the fit
// check refuses them cleanly). A device that claims the KHR form at a subgroup size no kernel was
// built for (64 here; the profiles give kernels for 32, 16 and 8) gets "not tested", and the
// advertisement rules; nothing is cached for that.
TEST_F(CooperativeMatrixGateDevice, KernelsThatDoNotFitGiveNotTested) {
  if (ctx().limits().cooperative_matrix_khr) GTEST_SKIP() << "the device has cooperative matrices";
  for (const auto& [name, bytes] : gate_kernel_modules()) {
    if (name.find("/simt/") != std::string::npos) continue;
    ModuleImage m = unpack_module_file(std::vector<uint8_t>(bytes.begin(), bytes.end()), name);
    EXPECT_FALSE(unmet_usage(m, ctx().limits()).empty()) << name;
  }
  TempDir dir("claimed");
  TargetLimits claimed = ctx().limits();
  claimed.cooperative_matrix_khr = true;
  claimed.subgroup_size = claimed.min_subgroup_size = claimed.max_subgroup_size = 64;
  std::vector<GateResult> r = gate_device(ctx().device_info().index, "00", 1, claimed, dir.path);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].verdict, GateVerdict::not_tested);
  EXPECT_EQ(r[0].detail, "no precompiled kernel for subgroup size " + std::to_string(claimed.subgroup_size));
  EXPECT_FALSE(fs::exists(dir.path));
}

// The gate's exactness check, on the SIMT kernel that every device runs: exact on the live
// device, and a single wrong element is caught and named.
TEST_F(CooperativeMatrixGateDevice, SimtKernelIsExactAndAWrongElementIsCaught) {
  for (const auto& [name, bytes] : gate_kernel_modules()) {
    if (name != "nvidia/simt/small") continue;
    ModuleImage m = unpack_module_file(std::vector<uint8_t>(bytes.begin(), bytes.end()), name);
    std::vector<std::string> unmet = unmet_usage(m, ctx().limits());
    ASSERT_TRUE(unmet.empty()) << unmet.front();
    std::map<std::string, HostTensor> in = gate_inputs(256);
    Program p(ctx(), m);
    ExecuteOptions poison;
    poison.poison_outputs = true;
    HostTensor y = p.execute(in, poison).at("y");
    EXPECT_EQ(gate_mismatch(in, y, 1), "");
    y.set_f64(256 * 7 + 3, y.get_f64(256 * 7 + 3) + 1);
    EXPECT_EQ(gate_mismatch(in, y, 1).rfind("256^3 product: y[7,3] = ", 0), 0u) << gate_mismatch(in, y, 1);
    return;
  }
  FAIL() << "no nvidia/simt/small kernel";
}

// The GPU machine: every form the device offers is measured on first use (exact, faster than the
// SIMT kernel on an H100/H200), cached under <cache>/gate/, and read back by the next context.
TEST(CooperativeMatrixGateGpu, VerdictsMeasuredOnceThenCached) {
  TempDir dir("gpu");
  ::setenv("VKC_CACHE_DIR", dir.path.c_str(), 1);
  ContextOptions o;
  Context first(o);
  if (!first.limits().cooperative_matrix_khr && !first.limits().cooperative_matrix_nv) {
    ::unsetenv("VKC_CACHE_DIR");
    GTEST_SKIP() << "no cooperative matrix on " << first.device_info().name << " (the GPU machine runs this)";
  }
  const size_t forms = size_t(first.limits().cooperative_matrix_khr) + size_t(first.limits().cooperative_matrix_nv);
  ASSERT_EQ(first.cooperative_matrix_gate().size(), forms);
  for (const GateResult& r : first.cooperative_matrix_gate()) {
    SCOPED_TRACE(describe(r));
    EXPECT_EQ(r.verdict, GateVerdict::ok);
    EXPECT_FALSE(r.cached);
    EXPECT_GT(r.coopmat_ms, 0);
    EXPECT_LT(r.coopmat_ms, r.simt_ms);
    EXPECT_TRUE(fs::exists(cache_dir(kGateCacheKind) + "/" + gate_file_name(r.key)));
    std::cout << "gate: " << describe(r) << "\n";
  }
  EXPECT_EQ(first.compile_limits().cooperative_matrix_khr, first.limits().cooperative_matrix_khr);
  Context second(o);
  ASSERT_EQ(second.cooperative_matrix_gate().size(), forms);
  for (const GateResult& r : second.cooperative_matrix_gate()) EXPECT_TRUE(r.cached) << describe(r);
  ::unsetenv("VKC_CACHE_DIR");
}

}  // namespace
}  // namespace vkc::rt::test
