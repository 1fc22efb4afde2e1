// The import driver: model -> graph inputs (with pinned dims) -> nodes in order through the op
// importers -> graph outputs under their ONNX names. Every unsupported node is collected and
// reported in one error at the end, so a user sees the whole list at once.
#include "onnx/importer.h"

#include <filesystem>
#include <map>
#include <set>

#include "ir/rank_limit.h"
#include "ir/verifier.h"
#include "onnx/import_context.h"
#include "onnx/model_reader.h"
#include "onnx/tensor_proto.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

constexpr int64_t kMinOpset = 1;   // older models import where each node's form is known
constexpr int64_t kMaxOpset = 21;

std::string shape_hint(const std::string& name, size_t rank) {
  std::string dims;
  for (size_t i = 0; i < rank; ++i) dims += i ? ",D" + std::to_string(i) : "D0";
  return cat("--input-shape ", name, "=", dims);
}

// The IR type of a graph input: ONNX dims, with dynamic ones pinned by options.input_shapes.
ir::TensorType input_type(const ImportContext& ctx, const ::onnx::ValueInfoProto& in,
                          const ImportOptions& options, std::vector<std::string>& problems) {
  const std::string& name = in.name();
  if (!in.type().has_tensor_type()) {
    problems.push_back(cat("graph input '", name, "': only tensor inputs are supported"));
    return {};
  }
  const auto& tt = in.type().tensor_type();
  std::optional<DType> dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype) {
    problems.push_back(cat("graph input '", name, "': element type ",
                           onnx_dtype_name(tt.elem_type()), " is not supported"));
    return {};
  }
  auto pin = options.input_shapes.find(name);
  check(tt.has_shape() || pin != options.input_shapes.end(), ctx.model_path, ": input '", name,
        "' has no shape; pin it with --input-shape ", name, "=D0,D1,...");
  if (!tt.has_shape()) return {*dtype, pin->second};
  const auto& dims = tt.shape().dim();
  if (dims.size() > ir::kMaxRank) {
    problems.push_back(cat("graph input '", name, "' has rank ", dims.size(), ", at most ", ir::kMaxRank,
                           " is supported"));
    return {};
  }
  Shape shape;
  for (int i = 0; i < dims.size(); ++i) {
    const auto& d = dims[i];
    bool is_static = d.has_dim_value() && d.dim_value() >= 0;
    if (pin != options.input_shapes.end()) {
      check(pin->second.size() == size_t(dims.size()), ctx.model_path, ": --input-shape ", name,
            " has rank ", pin->second.size(), ", the model's input has rank ", dims.size());
      int64_t p = pin->second[size_t(i)];
      check(!is_static || d.dim_value() == p, ctx.model_path, ": --input-shape ", name, " dim ",
            i, " is ", p, ", the model fixes it to ", d.dim_value());
      shape.push_back(p);
      continue;
    }
    check(is_static, ctx.model_path, ": input '", name, "' dim ", i,
          d.has_dim_param() ? cat(" ('", d.dim_param(), "')") : std::string(),
          " is dynamic; pin it with ", shape_hint(name, size_t(dims.size())));
    shape.push_back(d.dim_value());
  }
  return {*dtype, shape};
}

// Graph outputs must be op results of their own (the module names its output tensors), so an
// output that is a graph input, a constant or already another output goes through a view.
ir::Value* own_output_value(ir::Graph& g, ir::Value* v, const std::set<ir::Value*>& taken,
                            const ir::Location& loc) {
  bool needs_view = !v->producer || taken.count(v);
  if (!needs_view) return v;
  return g.add_op(ir::OpKind::Reshape, {v}, {{"shape", v->type.shape}}, "output_view", loc)
      ->result();
}

// A node named in messages about several nodes: its name, or its position when it has none (two
// unnamed nodes of one op type would otherwise read the same).
std::string node_label(const ::onnx::NodeProto& node, int index) {
  return node.name().empty() ? cat("node #", index, " (", node.op_type(), ")")
                             : cat("node '", node.name(), "' (", node.op_type(), ")");
}

// ONNX is SSA: every value name has one writer. A second writer would silently replace the
// first node's result in the name table (and the first node would be dropped as dead), so two
// nodes writing one name, or a node writing a graph input's or initializer's name, is refused.
void check_single_writer(const std::string& path, const ::onnx::GraphProto& gp) {
  std::map<std::string, std::string> writer;  // value name -> what defines it
  for (const auto& in : gp.input()) writer.emplace(in.name(), cat("graph input '", in.name(), "'"));
  for (const auto& init : gp.initializer())
    writer.emplace(init.name(), cat("initializer '", init.name(), "'"));
  for (int n = 0; n < gp.node_size(); ++n) {
    const ::onnx::NodeProto& node = gp.node(n);
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;  // an omitted optional output
      auto [it, fresh] = writer.emplace(out, node_label(node, n));
      check(fresh, path, ": ", node_label(node, n), " writes '", out, "', which ", it->second,
            it->second.starts_with("node") ? " also writes" : " already defines",
            "; every value name must have one writer");
    }
  }
}

}  // namespace

ir::Graph import_model(const std::string& path, const ImportOptions& options) {
  ::onnx::ModelProto model = read_model_proto(path);
  int64_t opset = default_opset_version(model);
  check(opset >= kMinOpset && opset <= kMaxOpset, path, ": default-domain opset ", opset,
        " is not supported (supported: ", kMinOpset, " to ", kMaxOpset, ")");
  const ::onnx::GraphProto& gp = model.graph();

  ir::Graph graph;
  graph.source = path;
  ImportContext ctx{graph, path, std::filesystem::path(path).parent_path().string(), opset,
                    ir::Location{path, 0, 0}, {}, {}, {}, {}, {}, 0};
  for (const auto& init : gp.initializer()) ctx.initializers[init.name()] = &init;
  check(gp.sparse_initializer_size() == 0, path, ": sparse initializers are not supported");
  check_single_writer(path, gp);
  for (const auto& out : gp.output()) {
    ctx.graph_output_names.insert(out.name());
    ++ctx.use_counts[out.name()];
  }
  for (const auto& node : gp.node())
    for (const std::string& in : node.input()) ++ctx.use_counts[in];
  auto is_graph_input = [&](const std::string& name) {
    for (const auto& in : gp.input())
      if (in.name() == name && !ctx.initializers.count(name)) return true;
    return false;
  };
  for (const auto& [name, shape] : options.input_shapes)
    check(is_graph_input(name), path, ": --input-shape names '", name, "', which is not a graph input");
  for (const auto& [name, value] : options.constant_inputs)
    check(is_graph_input(name), path, ": constant input '", name, "' is not a graph input");

  std::vector<std::string> problems;
  for (const auto& in : gp.input()) {
    // Old exporters list initializers as inputs too; they are constants, never graph inputs.
    if (ctx.initializers.count(in.name())) continue;
    auto bound = options.constant_inputs.find(in.name());
    if (bound != options.constant_inputs.end()) {
      ctx.values[in.name()] = graph.add_constant(bound->second);
      continue;
    }
    ir::TensorType type = input_type(ctx, in, options, problems);
    ctx.values[in.name()] = graph.add_input(in.name(), type);
  }

  // Values produced by nodes that failed: their consumers are skipped (they would only repeat
  // the same failure) unless their own op type is unknown too.
  std::set<std::string> poisoned;
  size_t input_problems = problems.size();  // the graph inputs' own problems: never resolved by values
  size_t value_problems = 0;                // nodes that failed only for want of an input's value
  for (const ::onnx::NodeProto& node : gp.node()) {
    NodeContext nc(ctx, node);
    const int64_t requests_before = ctx.value_requests;
    auto fail = [&](const std::string& reason) {
      if (ctx.value_requests > requests_before) ++value_problems;
      problems.push_back(cat(nc.label(), ": ", reason));
      for (const std::string& o : node.output()) poisoned.insert(o);
    };
    bool domain_ok = node.domain().empty() || node.domain() == "ai.onnx";
    const OpImporter* importer = domain_ok ? find_importer(node.op_type()) : nullptr;
    bool upstream_failed = false;
    for (const std::string& i : node.input()) upstream_failed |= poisoned.count(i) != 0;
    if (!importer) {
      fail(domain_ok ? std::string("op type is not supported")
                     : cat("domain '", node.domain(), "' is not supported"));
      continue;
    }
    if (upstream_failed) {
      for (const std::string& o : node.output()) poisoned.insert(o);
      continue;
    }
    try {
      (*importer)(nc);
      std::vector<std::string> unread = nc.attrs.unread();
      if (!unread.empty()) {
        std::string list;
        for (const std::string& a : unread) list += (list.empty() ? "'" : ", '") + a + "'";
        fail(cat("attribute ", list, " is not supported"));
        continue;
      }
      for (int i = 0; i < node.output_size(); ++i) {
        if (nc.output_used(i) && !ctx.values.count(node.output(i)))
          throw Unsupported{cat("output ", i, " ('", node.output(i), "') is not supported")};
        // Named here, at the ONNX node, rather than later by the verifier at an IR op.
        auto made = ctx.values.find(node.output(i));
        if (made != ctx.values.end() && made->second->type.rank() > ir::kMaxRank)
          throw Unsupported{cat("output '", node.output(i), "' has rank ", made->second->type.rank(), ", at most ",
                                ir::kMaxRank, " is supported")};
      }
    } catch (const Unsupported& u) {
      fail(u.reason);
    } catch (const Error& e) {
      fail(e.what());
    }
  }
  if (!problems.empty()) {
    std::string list;
    for (const std::string& p : problems) list += (list.empty() ? "" : "; ") + p;
    std::string message = cat(path, ": cannot import ", problems.size(), " item", problems.size() == 1 ? "" : "s",
                              ": ", list);
    // Nodes after the ones that failed were skipped, so once the values are bound another import
    // may still find problems; those are reported then.
    if (input_problems == 0 && value_problems == problems.size())
      throw InputValuesNeeded(message, {ctx.values_needed.begin(), ctx.values_needed.end()});
    throw Error(message);
  }

  std::set<ir::Value*> taken;
  for (const auto& out : gp.output()) {
    ir::Value* v = ctx.value(out.name());
    check(v != nullptr, path, ": graph output '", out.name(), "' is not produced by any node");
    v = own_output_value(graph, v, taken, ctx.loc);
    taken.insert(v);
    graph.add_output(v, out.name());
  }
  graph.remove_dead_ops();
  ir::verify_graph(graph);
  return graph;
}

namespace {

// A graph input or output as declared (its value info).
ModelInput declared(const std::string& path, const char* role, const ::onnx::ValueInfoProto& v) {
  check(v.type().has_tensor_type(), path, ": graph ", role, " '", v.name(), "': only tensors are supported");
  const auto& tt = v.type().tensor_type();
  std::optional<DType> dtype = dtype_from_onnx(tt.elem_type());
  check(dtype.has_value(), path, ": graph ", role, " '", v.name(), "': element type ", onnx_dtype_name(tt.elem_type()),
        " is not supported");
  ModelInput m{v.name(), *dtype, tt.has_shape(), {}, {}};
  if (tt.has_shape())
    for (const auto& d : tt.shape().dim()) {
      bool is_static = d.has_dim_value() && d.dim_value() >= 0;
      m.dims.push_back(is_static ? d.dim_value() : -1);
      m.symbols.push_back(!is_static && d.has_dim_param() ? d.dim_param() : std::string());
    }
  return m;
}

}  // namespace

ModelSignature read_model_signature_io(const std::string& path) {
  const ::onnx::ModelProto model = read_model_signature(path);
  const ::onnx::GraphProto& gp = model.graph();
  std::set<std::string> initializers;
  for (const auto& init : gp.initializer()) initializers.insert(init.name());
  ModelSignature sig;
  for (const auto& in : gp.input())
    if (!initializers.count(in.name())) sig.inputs.push_back(declared(path, "input", in));
  for (const auto& out : gp.output()) {
    // An output's declared type is informative only (the import infers it): one vkc cannot name
    // is listed as unknown rather than refused.
    const bool typed = out.type().has_tensor_type() && dtype_from_onnx(out.type().tensor_type().elem_type());
    if (typed) sig.outputs.push_back(declared(path, "output", out));
    else sig.outputs.push_back(ModelInput{out.name(), DType::f32, false, {}, {}, false});
  }
  return sig;
}

ModelMetadata read_model_metadata(const std::string& path) {
  const ::onnx::ModelProto model = read_model_signature(path);
  ModelMetadata m{model.producer_name(),    model.producer_version(), model.domain(),
                  model.doc_string(),       model.graph().name(),     model.graph().doc_string(),
                  model.model_version(),    {}};
  for (const auto& p : model.metadata_props()) m.custom[p.key()] = p.value();
  return m;
}

}  // namespace vkc::onnx
