// `vk-compile --report`: what each dispatch holds, how it was planned and what it costs.
#include <iomanip>
#include <sstream>

#include "codegen/compiler.h"

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
}  // namespace

std::string format_report(const Manifest& m) {
  std::ostringstream out;
  out << "target " << m.target.name << " (" << m.target.description << "): workgroup memory limit "
      << m.target.max_compute_shared_memory_size << " bytes, " << m.target.max_compute_work_group_invocations
      << " invocations\n";
  out << std::left << std::setw(22) << "dispatch" << std::setw(28) << "strategy" << std::setw(14)
      << "workgroup" << std::setw(18) << "wg memory/limit" << std::setw(12) << "GFLOP" << std::setw(12)
      << "MB" << "ops\n";
  for (const DispatchDesc& d : m.dispatches) {
    std::ostringstream wg, mem, gflop, mb;
    wg << d.workgroup_size[0] << "x" << d.workgroup_size[1] << "x" << d.workgroup_size[2];
    mem << d.workgroup_memory_bytes << "/" << m.target.max_compute_shared_memory_size;
    gflop << std::fixed << std::setprecision(3) << d.flops / 1e9;
    mb << std::fixed << std::setprecision(2) << d.bytes / 1e6;
    std::string ops;
    for (const std::string& op : d.ops) ops += (ops.empty() ? "" : " + ") + op;
    out << std::setw(22) << d.name << std::setw(28) << d.strategy << std::setw(14) << wg.str()
        << std::setw(18) << mem.str() << std::setw(12) << gflop.str() << std::setw(12) << mb.str() << ops
        << "\n";
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
  return out.str();
}

}  // namespace vkc::codegen
