#include "codegen/spirv_coopmat_khr.h"

#include <spirv-tools/libspirv.h>

#include <initializer_list>
#include <map>
#include <optional>

#include "support/error.h"

namespace vkc::codegen {
namespace {

// Core and NV opcodes (SPIR-V registry values; Debian's spirv-headers has these).
constexpr uint32_t kOpExtension = 10, kOpTypeInt = 21, kOpConstantTrue = 41, kOpConstantFalse = 42,
                   kOpConstant = 43, kOpSpecConstant = 50, kOpCapability = 17;
constexpr uint32_t kCapabilityCooperativeMatrixNV = 5357;
constexpr uint32_t kOpTypeCooperativeMatrixNV = 5358, kOpCooperativeMatrixLoadNV = 5359,
                   kOpCooperativeMatrixStoreNV = 5360, kOpCooperativeMatrixMulAddNV = 5361,
                   kOpCooperativeMatrixLengthNV = 5362;

struct Inst {
  uint32_t opcode = 0, type_id = 0, result_id = 0;
  std::vector<uint32_t> words;  // the whole instruction, first word included
};

struct MatrixType {
  uint32_t component = 0, scope = 0, rows = 0, columns = 0;
  std::optional<uint32_t> use;
};

// push_back loops rather than vector::insert: GCC 12's -Wstringop-overflow misfires on the inserts.
void append(std::vector<uint32_t>& to, std::initializer_list<uint32_t> words) {
  for (uint32_t w : words) to.push_back(w);
}
void append(std::vector<uint32_t>& to, const std::vector<uint32_t>& from, size_t first = 0) {
  for (size_t i = first; i < from.size(); ++i) to.push_back(from[i]);
}

std::vector<uint32_t> string_words(const std::string& s) {
  std::vector<uint32_t> w((s.size() + 4) / 4, 0u);  // NUL-terminated, padded to whole words
  for (size_t i = 0; i < s.size(); ++i) w[i / 4] |= uint32_t(uint8_t(s[i])) << (8 * (i % 4));
  return w;
}

std::string string_of(const std::vector<uint32_t>& words, size_t first) {
  std::string s;
  for (size_t i = first; i < words.size(); ++i)
    for (int b = 0; b < 4; ++b) {
      char c = char((words[i] >> (8 * b)) & 0xffu);
      if (c == '\0') return s;
      s += c;
    }
  return s;
}

std::vector<Inst> parse(const std::vector<uint32_t>& words, const std::string& kernel) {
  std::vector<Inst> insts;
  spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_2);
  spv_diagnostic diagnostic = nullptr;
  auto on_instruction = [](void* user, const spv_parsed_instruction_t* p) -> spv_result_t {
    auto* out = static_cast<std::vector<Inst>*>(user);
    out->push_back({p->opcode, p->type_id, p->result_id, std::vector<uint32_t>(p->words, p->words + p->num_words)});
    return SPV_SUCCESS;
  };
  spv_result_t r = spvBinaryParse(context, &insts, words.data(), words.size(), nullptr, on_instruction, &diagnostic);
  std::string message = diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error : "";
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  check(r == SPV_SUCCESS, "internal: kernel '", kernel, "': its SPIR-V does not parse for the cooperative matrix rewrite: ",
        message);
  return insts;
}

}  // namespace

std::vector<uint32_t> cooperative_matrix_nv_to_khr(const std::vector<uint32_t>& nv_words, const std::string& kernel) {
  check(nv_words.size() >= 5, "internal: kernel '", kernel, "': SPIR-V shorter than its header");
  std::vector<Inst> insts = parse(nv_words, kernel);

  std::map<uint32_t, uint32_t> type_of;        // value id -> its type id
  std::map<uint32_t, bool> int_signed;         // OpTypeInt id -> signedness
  std::map<uint32_t, bool> bool_constant;      // OpConstantTrue/False id -> value
  std::map<uint32_t, uint32_t> spec_default;   // OpSpecConstant id -> default value
  std::map<uint32_t, MatrixType> matrices;     // OpTypeCooperativeMatrixNV id -> operands
  uint32_t u32_type = 0;
  bool any_nv = false;
  for (const Inst& in : insts) {
    if (in.result_id != 0 && in.type_id != 0) type_of[in.result_id] = in.type_id;
    switch (in.opcode) {
      case kOpTypeInt:
        int_signed[in.result_id] = in.words[3] != 0;
        if (in.words[2] == 32 && in.words[3] == 0 && u32_type == 0) u32_type = in.result_id;
        break;
      case kOpConstantTrue: bool_constant[in.result_id] = true; break;
      case kOpConstantFalse: bool_constant[in.result_id] = false; break;
      case kOpSpecConstant: spec_default[in.result_id] = in.words[3]; break;
      case kOpTypeCooperativeMatrixNV:
        matrices[in.result_id] = {in.words[2], in.words[3], in.words[4], in.words[5], std::nullopt};
        any_nv = true;
        break;
      default: break;
    }
  }
  if (!any_nv) return nv_words;

  // Each matrix type's role, from the operand slot it fills in the products.
  auto assign = [&](uint32_t type, uint32_t use, const char* role) {
    auto it = matrices.find(type);
    check(it != matrices.end(), "internal: kernel '", kernel, "': a cooperative matrix product's ", role,
          " is not a cooperative matrix");
    check(!it->second.use || *it->second.use == use, "internal: kernel '", kernel, "': cooperative matrix type %",
          type, " is used in two roles (", *it->second.use, " and ", use,
          "); give B its own type (a scope specialization constant, codegen/spirv_coopmat_khr.h)");
    it->second.use = use;
  };
  for (const Inst& in : insts)
    if (in.opcode == kOpCooperativeMatrixMulAddNV) {
      assign(type_of.at(in.words[3]), spv_khr::kMatrixA, "A");
      assign(type_of.at(in.words[4]), spv_khr::kMatrixB, "B");
      assign(type_of.at(in.words[5]), spv_khr::kMatrixAccumulator, "C");
      assign(in.words[1], spv_khr::kMatrixAccumulator, "result");
    }
  // A matrix in no product is filled, converted, scaled or stored: what KHR allows accumulators.
  for (auto& [id, m] : matrices)
    if (!m.use) m.use = spv_khr::kMatrixAccumulator;

  // The uint constants the KHR operands need, declared right before the first matrix type. Fresh
  // ones (SPIR-V allows equal constants), since the module's own may be declared after that type.
  std::map<uint32_t, uint32_t> u32_constants;  // value -> fresh OpConstant id
  uint32_t bound = nv_words[3];
  std::vector<uint32_t> preamble;
  if (u32_type == 0) {
    u32_type = bound++;
    append(preamble, {(4u << 16) | kOpTypeInt, u32_type, 32u, 0u});
  }
  auto u32 = [&](uint32_t value) {
    auto [it, fresh] = u32_constants.emplace(value, 0u);
    if (fresh) {
      it->second = bound++;
      append(preamble, {(4u << 16) | kOpConstant, u32_type, it->second, value});
    }
    return it->second;
  };
  for (auto& [id, m] : matrices) {
    u32(*m.use);
    // A scope given by a specialization constant (B's, see the header) becomes the plain constant.
    if (auto s = spec_default.find(m.scope); s != spec_default.end()) m.scope = u32(s->second);
  }
  auto layout = [&](uint32_t column_major_id) {
    auto it = bool_constant.find(column_major_id);
    check(it != bool_constant.end(), "internal: kernel '", kernel,
          "': a cooperative matrix load or store has a column-major operand that is not a constant bool");
    return u32(it->second ? spv_khr::kColumnMajor : spv_khr::kRowMajor);
  };
  // Layout constants are only known once the loads and stores are seen: create them first.
  for (const Inst& in : insts) {
    if (in.opcode == kOpCooperativeMatrixLoadNV) layout(in.words[5]);
    if (in.opcode == kOpCooperativeMatrixStoreNV) layout(in.words[4]);
  }

  std::vector<uint32_t> out{nv_words[0], nv_words[1], nv_words[2], nv_words[3], nv_words[4]};
  bool preamble_written = false;
  auto emit = [&](uint32_t opcode, const std::vector<uint32_t>& operands) {
    out.push_back(uint32_t(operands.size() + 1) << 16 | opcode);
    append(out, operands);
  };
  for (const Inst& in : insts) {
    const std::vector<uint32_t>& w = in.words;
    switch (in.opcode) {
      case kOpCapability:
        emit(kOpCapability, {w[1] == kCapabilityCooperativeMatrixNV ? spv_khr::kCapabilityCooperativeMatrixKHR : w[1]});
        break;
      case kOpExtension: {
        std::string name = string_of(w, 1);
        emit(kOpExtension, string_words(name == "SPV_NV_cooperative_matrix" ? "SPV_KHR_cooperative_matrix" : name));
        break;
      }
      case kOpTypeCooperativeMatrixNV: {
        if (!preamble_written) append(out, preamble);
        preamble_written = true;
        const MatrixType& m = matrices.at(w[1]);
        emit(spv_khr::kOpTypeCooperativeMatrixKHR, {w[1], m.component, m.scope, m.rows, m.columns, u32(*m.use)});
        break;
      }
      case kOpCooperativeMatrixLoadNV: {  // rt, r, pointer, stride, column major, [memory access...]
        std::vector<uint32_t> ops{w[1], w[2], w[3], layout(w[5]), w[4]};
        append(ops, w, 6);
        emit(spv_khr::kOpCooperativeMatrixLoadKHR, ops);
        break;
      }
      case kOpCooperativeMatrixStoreNV: {  // pointer, object, stride, column major, [memory access...]
        std::vector<uint32_t> ops{w[1], w[2], layout(w[4]), w[3]};
        append(ops, w, 5);
        emit(spv_khr::kOpCooperativeMatrixStoreKHR, ops);
        break;
      }
      case kOpCooperativeMatrixMulAddNV: {  // rt, r, A, B, C
        auto is_signed = [&](uint32_t matrix_type) {
          auto it = int_signed.find(matrices.at(matrix_type).component);
          return it != int_signed.end() && it->second;
        };
        uint32_t operands = (is_signed(type_of.at(w[3])) ? spv_khr::kASigned : 0u) |
                            (is_signed(type_of.at(w[4])) ? spv_khr::kBSigned : 0u) |
                            (is_signed(type_of.at(w[5])) ? spv_khr::kCSigned : 0u) |
                            (is_signed(w[1]) ? spv_khr::kResultSigned : 0u);
        std::vector<uint32_t> ops{w[1], w[2], w[3], w[4], w[5]};
        if (operands != 0) ops.push_back(operands);
        emit(spv_khr::kOpCooperativeMatrixMulAddKHR, ops);
        break;
      }
      case kOpCooperativeMatrixLengthNV:
        emit(spv_khr::kOpCooperativeMatrixLengthKHR, {w[1], w[2], w[3]});
        break;
      default: append(out, w);
    }
  }
  out[3] = bound;
  return out;
}

}  // namespace vkc::codegen
