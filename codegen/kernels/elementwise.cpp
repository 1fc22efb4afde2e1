// Fused elementwise kernels: one invocation per output element.
//
// Shapes are static, so coordinates and broadcast strides are baked into the GLSL as constants:
// the driver sees plain integer arithmetic with literal divisors.
//
// Every op of the group is evaluated in a "frame": a shape with the group's element count whose
// coordinates are decoded from the invocation index. An op whose result has all the elements uses
// its own shape (so reshape views inside the group re-index nothing: element gid of a view is
// element gid of its operand); a smaller op that a consumer broadcasts is evaluated in its
// consumer's frame. Operands read from memory broadcast against the frame of the op reading them.
#include <map>
#include <set>

#include "codegen/fusion_expr.h"
#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {

std::vector<EmittedKernel> emit_elementwise(const DispatchGroup& group, const KernelContext& ctx,
                                            std::vector<ScratchTensor>&) {
  const ir::Value* result = group.ops.empty() ? group.inputs.at(0) : group.ops.back()->result();
  const std::string out_tensor = group.ops.empty() ? group.copy_to : ctx.tensor(result);
  const Shape& out_shape = result->type.shape;
  const DType out_type = result->type.dtype;
  std::string what = group.ops.empty() ? "copy to '" + out_tensor + "'" : group.ops.back()->describe();
  int64_t total = shape_numel(out_shape);
  check(total <= int64_t(UINT32_MAX), what, ": ", total,
        " elements exceed 32-bit indexing (at most 4294967295)");

  EmittedKernel k;
  k.kernel = group.ops.empty() ? "copy" : "elementwise";
  k.strategy = "one invocation per element";
  std::set<DType> types{out_type};
  std::string buffers, coords, body;

  // Frames, from the result backwards (see the file comment).
  // Every op but the last has its one user inside the group (that is why it fused), found here
  // once rather than by scanning the graph per op.
  std::map<const ir::Value*, const ir::Op*> user_in_group;
  for (const ir::Op* op : group.ops)
    for (const ir::Value* v : op->operands) user_in_group.try_emplace(v, op);
  std::map<const ir::Op*, Shape> frame;
  for (size_t i = group.ops.size(); i-- > 0;) {
    const ir::Op* op = group.ops[i];
    const ir::Value* r = op->result();
    if (i + 1 == group.ops.size() || r->type.numel() == total) frame[op] = r->type.shape;
    else frame[op] = frame.at(user_in_group.at(r));
  }
  std::map<Shape, std::string> frame_prefix;  // coordinates decoded once per distinct frame
  auto coordinates = [&](const Shape& f) {
    auto [it, fresh] = frame_prefix.try_emplace(f, cat("f", frame_prefix.size(), "_"));
    if (fresh) {
      coords += cat("  uint ", it->second, "rem = gid;\n");
      for (size_t d = f.size(); d-- > 0;) {
        if (d == 0) coords += cat("  uint ", it->second, "0 = ", it->second, "rem;\n");
        else coords += cat("  uint ", it->second, d, " = ", it->second, "rem % ", f[d], "u; ", it->second,
                           "rem /= ", f[d], "u;\n");
      }
    }
    return it->second;
  };

  std::map<const ir::Value*, std::string> instance;  // bound inputs
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    const ir::Value* v = group.inputs[i];
    require_storable(v->type.dtype, ctx.target, what);
    types.insert(v->type.dtype);
    instance[v] = cat("in", i);
    buffers += glsl_buffer(uint32_t(i), v->type.dtype, false, instance[v]);
    k.bindings.push_back({ctx.tensor(v), false});
  }
  // A load of input v as seen from frame f, one variable per distinct index expression.
  std::map<std::pair<const ir::Value*, std::string>, std::string> loads;
  auto load = [&](const ir::Value* v, const Shape& f) {
    std::string index = v->type.numel() == total ? "gid" : broadcast_index(v->type.shape, f, coordinates(f));
    auto [it, fresh] = loads.try_emplace({v, index}, cat("x", loads.size()));
    if (fresh) {
      std::string e = cat(instance.at(v), ".data[", index, "]");
      if (v->type.dtype == DType::boolean) e = "(" + e + " != uint8_t(0))";
      else e = glsl_compute_type(v->type.dtype) + "(" + e + ")";
      std::string type = v->type.dtype == DType::boolean ? "bool" : glsl_compute_type(v->type.dtype);
      body += cat("  ", type, " ", it->second, " = ", e, ";\n");
    }
    return it->second;
  };
  require_storable(out_type, ctx.target, what);

  // Local names (v0, v1, ...) rather than IR value ids, so identical chains emit identical GLSL and
  // share one compiled kernel through the SPIR-V cache.
  std::map<const ir::Value*, std::string> names;
  int next_local = 0;
  for (const ir::Op* op : group.ops) {
    const ir::Value* r = op->result();
    auto arg = [&](int i) {
      const ir::Value* v = op->operand(i);
      auto it = names.find(v);
      return it != names.end() ? it->second : load(v, frame.at(op));
    };
    if (is_view_op(op->kind)) {  // same element, another shape
      names[r] = arg(0);
      continue;
    }
    DType t = r->type.dtype;
    std::vector<std::string> args;
    for (int i = 0; i < op->num_operands(); ++i) args.push_back(arg(i));
    std::string e = elementwise_expr(*op, args);
    types.insert(t);
    names[r] = cat("v", next_local++);
    // Bool values live in GLSL bools inside the chain (loads compare the stored byte with 0).
    std::string type = t == DType::boolean ? "bool" : glsl_compute_type(t);
    body += cat("  ", type, " ", names[r], " = ", e, ";\n");
    k.flops += double(total);
  }

  uint32_t out_binding = uint32_t(group.inputs.size());
  buffers += glsl_buffer(out_binding, out_type, true, "result");
  k.bindings.push_back({out_tensor, true});
  std::string value = group.ops.empty() ? load(result, out_shape) : names.at(result);
  // A bool is stored as the byte 0 or 1.
  if (out_type == DType::boolean) value = "(" + value + " ? 1u : 0u)";
  body += cat("  result.data[gid] = ", glsl_storage_type(out_type), "(", value, ");\n");

  uint32_t wg = fit_workgroup_size_x(256, ctx.target);
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(total), wg, ctx.target, what);
  k.push_constants = {uint32_t(total)};
  k.glsl = instantiate_shader("elementwise", {{"EXTENSIONS", glsl_extensions(types)},
                                              {"WG_SIZE", std::to_string(wg)},
                                              {"BUFFERS", buffers},
                                              {"MATH", elementwise_math(types)},
                                              {"BODY", coords + body}});
  for (const ir::Value* v : group.inputs) k.bytes += double(v->type.size_bytes());
  k.bytes += double(result->type.size_bytes());
  k.tiles["elements"] = total;
  return {k};
}

}  // namespace vkc::codegen::kernels
