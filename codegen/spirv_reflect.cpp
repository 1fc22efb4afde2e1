// Facts read back from emitted SPIR-V: workgroup (shared) memory use and the workgroup size.
//
// Why read them from the binary rather than from the planner's own numbers: the planner's numbers
// are what we meant to emit; these are what glslang and the optimizer actually produced, so the
// module records (and tests check) the real footprint, including specialization overrides.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include <spirv/unified1/spirv.hpp>

#include "codegen/spirv_tools.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen {
namespace {

using SpecValues = std::vector<std::pair<uint32_t, uint32_t>>;

struct Inst {
  spv::Op op;
  std::vector<uint32_t> w;  // operand words (everything after the opcode word)
};

// The parts of a module that size and constant evaluation need, indexed by result id.
class Module {
 public:
  explicit Module(const std::vector<uint32_t>& words) {
    if (words.size() < 5 || words[0] != spv::MagicNumber)
      throw Error("internal: malformed SPIR-V: bad header (not a SPIR-V module)");
    for (size_t i = 5; i < words.size();) {
      const uint32_t count = words[i] >> 16;
      if (count == 0 || i + count > words.size())
        throw Error(cat("internal: malformed SPIR-V: bad instruction length at word ", i));
      Inst in{static_cast<spv::Op>(words[i] & 0xffffu),
              std::vector<uint32_t>(words.begin() + i + 1, words.begin() + i + count)};
      index(in);
      i += count;
    }
  }

  std::map<uint32_t, Inst> defs;                   // types and constants by result id
  std::vector<Inst> variables;                     // module-scope and function OpVariables
  std::vector<Inst> entry_points, modes;           // OpEntryPoint, OpExecutionMode(Id)
  std::map<uint32_t, uint32_t> spec_id;            // constant id -> SpecId
  std::map<uint32_t, uint32_t> array_stride;       // type id -> ArrayStride
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> member_offset;  // (struct, member) -> Offset
  std::optional<uint32_t> workgroup_size_id;       // constant decorated BuiltIn WorkgroupSize

  const Inst& def(uint32_t id) const {
    auto it = defs.find(id);
    if (it == defs.end()) throw Error(cat("internal: malformed SPIR-V: no type or constant %", id));
    return it->second;
  }

 private:
  void need(const Inst& in, size_t n) const {
    if (in.w.size() < n)
      throw Error(cat("internal: malformed SPIR-V: opcode ", static_cast<uint32_t>(in.op),
                      " has too few operands"));
  }

  void index(Inst& in) {
    switch (in.op) {
      case spv::OpDecorate: {
        need(in, 2);
        const uint32_t target = in.w[0];
        const auto deco = static_cast<spv::Decoration>(in.w[1]);
        if (deco == spv::DecorationSpecId && in.w.size() >= 3) spec_id[target] = in.w[2];
        if (deco == spv::DecorationArrayStride && in.w.size() >= 3) array_stride[target] = in.w[2];
        if (deco == spv::DecorationBuiltIn && in.w.size() >= 3 &&
            in.w[2] == static_cast<uint32_t>(spv::BuiltInWorkgroupSize))
          workgroup_size_id = target;
        break;
      }
      case spv::OpMemberDecorate:
        need(in, 3);
        if (static_cast<spv::Decoration>(in.w[2]) == spv::DecorationOffset && in.w.size() >= 4)
          member_offset[{in.w[0], in.w[1]}] = in.w[3];
        break;
      case spv::OpEntryPoint: entry_points.push_back(std::move(in)); break;
      case spv::OpExecutionMode:
      case spv::OpExecutionModeId: modes.push_back(std::move(in)); break;
      case spv::OpVariable: need(in, 3); variables.push_back(std::move(in)); break;
      // Types: the result id is the first operand.
      case spv::OpTypeBool: case spv::OpTypeInt: case spv::OpTypeFloat: case spv::OpTypeVector:
      case spv::OpTypeMatrix: case spv::OpTypeArray: case spv::OpTypeRuntimeArray:
      case spv::OpTypeStruct: case spv::OpTypePointer:
        need(in, 1);
        defs[in.w[0]] = std::move(in);
        break;
      // Constants: result type, then result id.
      case spv::OpConstant: case spv::OpConstantTrue: case spv::OpConstantFalse:
      case spv::OpConstantNull: case spv::OpConstantComposite: case spv::OpSpecConstant:
      case spv::OpSpecConstantTrue: case spv::OpSpecConstantFalse:
      case spv::OpSpecConstantComposite: case spv::OpSpecConstantOp:
        need(in, 2);
        defs[in.w[1]] = std::move(in);
        break;
      default: break;
    }
  }
};

// Evaluates integer (and boolean) constants, specialization constants with their overrides, and
// the simple integer OpSpecConstantOp forms glslang emits for expressions like `N * 2`.
class Evaluator {
 public:
  Evaluator(const Module& m, const SpecValues& spec) : m_(m) {
    for (const auto& [id, value] : spec) overrides_[id] = value;
  }

  uint32_t scalar(uint32_t id, int depth = 0) const {
    if (depth > 64) throw Error("internal: malformed SPIR-V: constant expression too deep");
    const Inst& c = m_.def(id);
    switch (c.op) {
      case spv::OpConstant: return operand(c, 2);
      case spv::OpConstantTrue: return 1;
      case spv::OpConstantFalse: case spv::OpConstantNull: return 0;
      case spv::OpSpecConstant: return override_or(id, operand(c, 2));
      case spv::OpSpecConstantTrue: return override_or(id, 1) != 0;
      case spv::OpSpecConstantFalse: return override_or(id, 0) != 0;
      case spv::OpSpecConstantOp: return spec_op(c, depth);
      default:
        throw Error(cat("internal: SPIR-V constant %", id, " is not an integer scalar (opcode ",
                        static_cast<uint32_t>(c.op), ")"));
    }
  }

  std::vector<uint32_t> composite(uint32_t id) const {
    const Inst& c = m_.def(id);
    if (c.op != spv::OpConstantComposite && c.op != spv::OpSpecConstantComposite)
      throw Error(cat("internal: SPIR-V constant %", id, " is not a composite"));
    std::vector<uint32_t> out;
    for (size_t i = 2; i < c.w.size(); ++i) out.push_back(scalar(c.w[i]));
    return out;
  }

 private:
  static uint32_t operand(const Inst& c, size_t i) {
    if (c.w.size() <= i) throw Error("internal: malformed SPIR-V: constant without a value");
    return c.w[i];  // 64-bit constants: the low word, enough for sizes and counts
  }

  uint32_t override_or(uint32_t id, uint32_t fallback) const {
    auto sid = m_.spec_id.find(id);
    if (sid == m_.spec_id.end()) return fallback;
    auto ov = overrides_.find(sid->second);
    return ov == overrides_.end() ? fallback : ov->second;
  }

  uint32_t spec_op(const Inst& c, int depth) const {
    const auto op = static_cast<spv::Op>(operand(c, 2));
    auto arg = [&](size_t i) { return scalar(operand(c, 3 + i), depth + 1); };
    auto sarg = [&](size_t i) { return static_cast<int32_t>(arg(i)); };
    auto nonzero = [&](uint32_t v) {
      if (v == 0) throw Error("internal: SPIR-V specialization constant divides by zero");
      return v;
    };
    switch (op) {
      case spv::OpIAdd: return arg(0) + arg(1);
      case spv::OpISub: return arg(0) - arg(1);
      case spv::OpIMul: return arg(0) * arg(1);
      case spv::OpUDiv: return arg(0) / nonzero(arg(1));
      case spv::OpSDiv: return static_cast<uint32_t>(sarg(0) / static_cast<int32_t>(nonzero(arg(1))));
      case spv::OpUMod: return arg(0) % nonzero(arg(1));
      case spv::OpShiftLeftLogical: return arg(0) << (arg(1) & 31);
      case spv::OpShiftRightLogical: return arg(0) >> (arg(1) & 31);
      case spv::OpBitwiseAnd: return arg(0) & arg(1);
      case spv::OpBitwiseOr: return arg(0) | arg(1);
      case spv::OpUConvert: case spv::OpSConvert: case spv::OpBitcast: return arg(0);
      case spv::OpSelect: return arg(0) ? arg(1) : arg(2);
      default:
        throw Error(cat("internal: unsupported OpSpecConstantOp opcode ", static_cast<uint32_t>(op),
                        " in a size expression"));
    }
  }

  const Module& m_;
  std::map<uint32_t, uint32_t> overrides_;  // SpecId -> value
};

// An alignment of 0 leaves the size as it is.
uint64_t aligned(uint64_t v, uint64_t a) { return a ? round_up(v, a) : v; }

struct Layout {
  uint64_t size = 0;
  uint64_t align = 1;
};

// std430-like natural layout: scalars align to their size, 2-vectors to twice the component,
// 3- and 4-vectors to four times it; arrays and structs use decorated strides/offsets if present.
Layout layout_of(const Module& m, const Evaluator& ev, uint32_t type, int depth = 0) {
  if (depth > 64) throw Error("internal: malformed SPIR-V: type nesting too deep");
  const Inst& t = m.def(type);
  auto sub = [&](uint32_t id) { return layout_of(m, ev, id, depth + 1); };
  switch (t.op) {
    case spv::OpTypeBool: return {4, 4};  // no defined size; measured as a 32-bit value
    case spv::OpTypeInt:
    case spv::OpTypeFloat: {
      const uint64_t bytes = t.w.size() > 1 ? t.w[1] / 8 : 4;
      return {bytes, bytes};
    }
    case spv::OpTypePointer: return {8, 8};  // physical-storage pointers are 64-bit
    case spv::OpTypeVector: {
      const Layout e = sub(t.w.at(1));
      const uint64_t n = t.w.at(2);
      return {e.size * n, e.align * (n == 2 ? 2 : 4)};
    }
    case spv::OpTypeMatrix: {
      const Layout col = sub(t.w.at(1));
      const uint64_t n = t.w.at(2);
      return {aligned(col.size, col.align) * n, col.align};
    }
    case spv::OpTypeArray: {
      const Layout e = sub(t.w.at(1));
      const uint64_t length = ev.scalar(t.w.at(2));
      auto stride = m.array_stride.find(type);
      const uint64_t s = stride != m.array_stride.end() ? stride->second : aligned(e.size, e.align);
      return {s * length, e.align};
    }
    case spv::OpTypeRuntimeArray:
      throw Error("internal: a Workgroup variable cannot hold a runtime-sized array");
    case spv::OpTypeStruct: {
      uint64_t end = 0, align = 1;
      for (uint32_t i = 1; i < t.w.size(); ++i) {
        const Layout mem = sub(t.w[i]);
        auto off = m.member_offset.find({type, i - 1});
        const uint64_t at = off != m.member_offset.end() ? off->second : aligned(end, mem.align);
        end = std::max(end, at + mem.size);
        align = std::max(align, mem.align);
      }
      return {aligned(end, align), align};
    }
    default:
      throw Error(cat("internal: cannot size SPIR-V type %", type, " (opcode ",
                      static_cast<uint32_t>(t.op), ")"));
  }
}

}  // namespace

uint32_t measure_workgroup_memory(const std::vector<uint32_t>& words, const SpecValues& spec_values) {
  const Module m(words);
  const Evaluator ev(m, spec_values);
  uint64_t total = 0;
  for (const Inst& v : m.variables) {
    // OpVariable: result type (a pointer), result id, storage class.
    if (static_cast<spv::StorageClass>(v.w[2]) != spv::StorageClassWorkgroup) continue;
    const Inst& ptr = m.def(v.w[0]);
    if (ptr.op != spv::OpTypePointer || ptr.w.size() < 3)
      throw Error(cat("internal: malformed SPIR-V: variable %", v.w[1], " is not a pointer"));
    total += layout_of(m, ev, ptr.w[2]).size;
  }
  if (total > UINT32_MAX) throw Error(cat("internal: workgroup memory of ", total, " bytes overflows"));
  return static_cast<uint32_t>(total);
}

std::array<uint32_t, 3> read_local_size(const std::vector<uint32_t>& words,
                                        const SpecValues& spec_values) {
  const Module m(words);
  const Evaluator ev(m, spec_values);
  auto three = [](const std::vector<uint32_t>& v, const char* what) {
    if (v.size() != 3) throw Error(cat("internal: SPIR-V ", what, " does not have 3 components"));
    return std::array<uint32_t, 3>{v[0], v[1], v[2]};
  };
  // The WorkgroupSize built-in, when present, takes precedence over any LocalSize mode (SPIR-V
  // spec, BuiltIn WorkgroupSize); glslang emits it for local_size_*_id.
  if (m.workgroup_size_id) return three(ev.composite(*m.workgroup_size_id), "WorkgroupSize");

  std::optional<uint32_t> entry;
  for (const Inst& e : m.entry_points)
    if (e.w.size() >= 2 && static_cast<spv::ExecutionModel>(e.w[0]) == spv::ExecutionModelGLCompute) {
      entry = e.w[1];
      break;
    }
  if (!entry) throw Error("internal: SPIR-V module has no GLCompute entry point");
  for (const Inst& mode : m.modes) {
    if (mode.w.size() < 5 || mode.w[0] != *entry) continue;
    const auto kind = static_cast<spv::ExecutionMode>(mode.w[1]);
    if (mode.op == spv::OpExecutionMode && kind == spv::ExecutionModeLocalSize)
      return {mode.w[2], mode.w[3], mode.w[4]};
    if (mode.op == spv::OpExecutionModeId && kind == spv::ExecutionModeLocalSizeId)
      return {ev.scalar(mode.w[2]), ev.scalar(mode.w[3]), ev.scalar(mode.w[4])};
  }
  throw Error("internal: SPIR-V compute entry point has no LocalSize");
}

}  // namespace vkc::codegen
