// `vk-compile --report`: what each dispatch holds, how it was planned and what it costs.
#include <algorithm>
#include <array>
#include <iomanip>
#include <sstream>
#include <vector>

#include "codegen/compiler.h"
#include "module/device_fit.h"
#include "module/memory_footprint.h"

namespace vkc::codegen {

namespace {
std::string human_bytes(double b) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1);
  if (b >= 1 << 30) s << b / (1 << 30) << " GiB";
  else if (b >= 1 << 20) s << b / (1 << 20) << " MiB";
  else if (b >= 1 << 10) s << b / (1 << 10) << " KiB";
  else s << std::setprecision(0) << b << " B";
  return s.str();
}

// What the dispatch's float tensors are stored as: "fp16", "fp32", "mixed" (e.g. the first kernel
// of an fp16 module, which reads the f32 input), or "-" when it binds no float tensor.
std::string dispatch_precision(const Manifest& m, const DispatchDesc& d) {
  bool f16 = false, f32 = false;
  for (const BindingDesc& b : d.bindings) {
    DType t = m.tensor(b.tensor).dtype;
    f16 |= t == DType::f16;
    f32 |= t == DType::f32;
  }
  return f16 && f32 ? "mixed" : f16 ? "fp16" : f32 ? "fp32" : "-";
}
}  // namespace

std::string format_report(const Manifest& m) {
  std::ostringstream out;
  out << "target " << m.target.name << " (" << m.target.description << "): workgroup memory limit "
      << m.target.max_compute_shared_memory_size << " bytes, " << m.target.max_compute_work_group_invocations
      << " invocations\n";
  if (m.precision != Precision::fp32) out << "precision " << precision_name(m.precision) << "\n";
  // Columns as wide as their longest cell plus two spaces, so long kernel and strategy names
  // ("d12_conv_depthwise_tiled", "packed 8-bit words, ...") never run into the next column.
  std::vector<std::array<std::string, 7>> rows{
      {"dispatch", "strategy", "precision", "workgroup", "wg memory/limit", "GFLOP", "MB"}};
  for (const DispatchDesc& d : m.dispatches) {
    std::ostringstream wg, mem, gflop, mb;
    wg << d.workgroup_size[0] << "x" << d.workgroup_size[1] << "x" << d.workgroup_size[2];
    mem << d.workgroup_memory_bytes << "/" << m.target.max_compute_shared_memory_size;
    gflop << std::fixed << std::setprecision(3) << d.flops / 1e9;
    mb << std::fixed << std::setprecision(2) << d.bytes / 1e6;
    rows.push_back({d.name, d.strategy, dispatch_precision(m, d), wg.str(), mem.str(), gflop.str(), mb.str()});
  }
  std::array<size_t, 7> width{};
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size() + 2);
  auto row = [&](const std::array<std::string, 7>& r) {
    for (size_t c = 0; c < r.size(); ++c) out << std::left << std::setw(int(width[c])) << r[c];
  };
  row(rows[0]);
  out << "ops\n";
  for (size_t i = 0; i < m.dispatches.size(); ++i) {
    const DispatchDesc& d = m.dispatches[i];
    std::string ops;
    for (const std::string& op : d.ops) ops += (ops.empty() ? "" : " + ") + op;
    row(rows[i + 1]);
    out << ops << "\n";
    if (!d.tiles.empty()) {
      out << "    tiles:";
      for (const auto& [k, v] : d.tiles) out << " " << k << "=" << v;
      out << "  grid " << d.workgroup_count[0] << "x" << d.workgroup_count[1] << "x" << d.workgroup_count[2]
          << "\n";
    }
    if (!d.notes.empty()) out << "    notes: " << d.notes << "\n";
  }
  uint64_t sum = 0;
  for (const TensorDesc& t : m.tensors)
    if (t.role == TensorRole::Intermediate && t.view_of.empty()) sum += t.size_bytes();
  out << m.dispatches.size() << " dispatches; arena peak " << human_bytes(double(m.arena_bytes))
      << " (intermediates total " << human_bytes(double(sum)) << "), constants "
      << human_bytes(double(m.constants_bytes)) << "\n";
  // As rt::Program allocates them; loading the module checks the same figures against the device.
  const MemoryFootprint f = memory_footprint(module_allocations(m));
  out << "device memory at load: " << human_bytes(double(f.total)) << " (" << f.total << " bytes); largest allocation: "
      << f.largest.what << ", " << human_bytes(double(f.largest.bytes)) << " (" << f.largest.bytes << " bytes)\n";
  out << requirements_summary(m) << "\n";
  return out.str();
}

}  // namespace vkc::codegen
