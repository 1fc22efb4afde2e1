// Indexing and data movement (issue 23): Gather, GatherElements, GatherND, ScatterND,
// ScatterElements (and the deprecated Scatter) become the IR ops of the same names, with indices
// fed at run time; Split, Tile, DepthToSpace, SpaceToDepth, Trilu and OneHot are lowered here
// into existing IR ops (slices, reshape views, broadcast, transpose, select, gather); Range with
// constant operands folds to a constant. docs/ops.md, "ONNX lowerings", says which op becomes what.
#include <algorithm>
#include <cmath>

#include "ir/rank_limit.h"
#include "onnx/import_context.h"
#include "onnx/tensor_proto.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;
using Ints = std::vector<int64_t>;

// Gather along `axis`. Constant indices are checked (ONNX makes an out-of-range one an error) and
// keep the folding path: on constant data the result is computed here (the Shape -> Gather chains
// of static reshapes), on computed data one index is a slice. Other indices become the IR gather,
// which resolves them at run time (out of range: zeros, docs/ops.md).
void import_gather(NodeContext& n) {
  ir::Value* data = n.input(0);
  ir::Value* indices = n.input(1);
  int64_t rank = data->type.rank();
  int64_t axis = normalize_axis(n.attrs.get_int("axis", 0), rank, "axis");
  int64_t dim = data->type.shape[size_t(axis)];
  const HostTensor* idx = constant_data(indices);
  if (idx) {
    if (!is_integer(idx->dtype())) n.unsupported("indices must be integers");
    for (int64_t i = 0; i < idx->numel(); ++i) {
      int64_t v = idx->get_i64(i);
      if (v < -dim || v >= dim) n.unsupported(cat("index ", v, " is out of range for dim ", dim));
    }
    if (idx->numel() == 1 && !constant_data(data)) {
      int64_t i = idx->get_i64(0);
      if (i < 0) i += dim;
      Shape out_shape(data->type.shape.begin(), data->type.shape.begin() + axis);
      out_shape.insert(out_shape.end(), idx->shape().begin(), idx->shape().end());
      out_shape.insert(out_shape.end(), data->type.shape.begin() + axis + 1, data->type.shape.end());
      ir::Value* piece = n.emit(K::Slice, {data}, {{"starts", Ints{i}}, {"ends", Ints{i + 1}}, {"axes", Ints{axis}}});
      return n.set_output(0, n.reshape(piece, out_shape));
    }
    if (idx->dtype() != DType::i64 && idx->dtype() != DType::i32) {
      HostTensor wide(DType::i64, idx->shape());
      for (int64_t i = 0; i < idx->numel(); ++i) wide.set_i64(i, idx->get_i64(i));
      indices = n.constant(std::move(wide));
    }
  }
  n.set_output(0, n.emit(K::Gather, {data, indices}, {{"axis", axis}}));
}

void import_gather_elements(NodeContext& n) {
  ir::Value* data = n.input(0);
  int64_t axis = normalize_axis(n.attrs.get_int("axis", 0), data->type.rank(), "axis");
  n.set_output(0, n.emit(K::GatherElements, {data, n.input(1)}, {{"axis", axis}}));
}

void import_gather_nd(NodeContext& n) {
  n.set_output(0, n.emit(K::GatherND, {n.input(0), n.input(1)},
                         {{"batch_dims", n.attrs.get_int("batch_dims", 0)}}));
}

void import_scatter_nd(NodeContext& n) {
  std::string reduction = n.attrs.get_string("reduction", "none");
  n.set_output(0, n.emit(K::ScatterND, {n.input(0), n.input(1), n.input(2)}, {{"reduction", reduction}}));
}

// ScatterElements, and Scatter (opsets 9-10), its earlier name.
void import_scatter_elements(NodeContext& n) {
  ir::Value* data = n.input(0);
  int64_t axis = normalize_axis(n.attrs.get_int("axis", 0), data->type.rank(), "axis");
  std::string reduction = n.attrs.get_string("reduction", "none");
  n.set_output(0, n.emit(K::ScatterElements, {data, n.input(1), n.input(2)},
                         {{"axis", axis}, {"reduction", reduction}}));
}

// Split: one slice per output. Sizes come from the 'split' attribute (opset < 13), the constant
// 'split' input (opset 13+), or are equal parts of the output count (opset 18 num_outputs: the
// last part may be smaller).
void import_split(NodeContext& n) {
  ir::Value* x = n.input(0);
  int64_t axis = normalize_axis(n.attrs.get_int("axis", 0), x->type.rank(), "axis");
  int64_t dim = x->type.shape[size_t(axis)];
  int64_t parts = n.num_outputs();
  Ints sizes;
  if (n.opset() < 13) sizes = n.attrs.get_ints("split");
  else if (n.has_input(1)) sizes = n.constant_ints(1, "split");
  if (n.attrs.has("num_outputs")) {
    int64_t num = n.attrs.get_int("num_outputs", parts);
    if (!sizes.empty()) n.unsupported("both 'split' and 'num_outputs' are given");
    if (num != parts) n.unsupported(cat("num_outputs is ", num, ", the node has ", parts, " outputs"));
  }
  if (sizes.empty()) {
    if (parts < 1) n.unsupported("no outputs");
    int64_t chunk = (dim + parts - 1) / parts;
    if (!n.attrs.has("num_outputs") && dim % parts != 0)
      n.unsupported(cat("dim ", axis, " (", dim, ") does not split into ", parts, " equal parts"));
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  }
  if (int64_t(sizes.size()) != parts)
    n.unsupported(cat("split has ", sizes.size(), " entries, the node has ", parts, " outputs"));
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) n.unsupported(cat("split entry ", i, " is ", sizes[i], ", expected >= 0"));
    start += sizes[i];
  }
  if (start != dim) n.unsupported(cat("split sums to ", start, ", dim ", axis, " is ", dim));
  start = 0;
  for (int64_t i = 0; i < parts; ++i) {
    int64_t end = start + sizes[size_t(i)];
    if (n.output_used(int(i)))
      n.set_output(int(i), n.emit(K::Slice, {x}, {{"starts", Ints{start}}, {"ends", Ints{end}}, {"axes", Ints{axis}},
                                                  {"steps", Ints{1}}}));
    start = end;
  }
}

// Tile(x, repeats) = broadcast of x viewed as [.., 1, d_k, ..] (a 1 before every repeated dim) to
// [.., r_k, d_k, ..], viewed as [.., r_k * d_k, ..]: one broadcast kernel, the reshapes are views
// (one broadcast per repeated dim where the interleaved view would exceed the rank limit).
void import_tile(NodeContext& n) {
  ir::Value* x = n.input(0);
  Ints repeats = n.constant_ints(1, "repeats");
  const Shape& s = x->type.shape;
  if (repeats.size() != s.size())
    n.unsupported(cat("repeats has ", repeats.size(), " entries, the input has rank ", s.size()));
  Shape view, wide, out;
  for (size_t d = 0; d < s.size(); ++d) {
    if (repeats[d] < 0) n.unsupported(cat("repeats entry ", d, " is ", repeats[d], ", expected >= 0"));
    if (repeats[d] != 1) {
      view.push_back(1);
      wide.push_back(repeats[d]);
    }
    view.push_back(s[d]);
    wide.push_back(s[d]);
    out.push_back(s[d] * repeats[d]);
  }
  if (out == s) return n.set_output(0, n.reshape(x, s));
  if (int64_t(view.size()) <= ir::kMaxRank) {
    ir::Value* b = n.emit(K::Broadcast, {n.reshape(x, view)}, {{"shape", wide}});
    return n.set_output(0, n.reshape(b, out));
  }
  // Beyond the rank limit: one broadcast per repeated dim, each over the view [A, 1, B].
  Shape cur = s;
  ir::Value* v = x;
  for (size_t d = 0; d < s.size(); ++d) {
    if (repeats[d] == 1) continue;
    int64_t a = 1, b = 1;
    for (size_t i = 0; i < d; ++i) a *= cur[i];
    for (size_t i = d; i < s.size(); ++i) b *= cur[i];
    v = n.emit(K::Broadcast, {n.reshape(v, {a, 1, b})}, {{"shape", Shape{a, repeats[d], b}}});
    cur[d] *= repeats[d];
  }
  n.set_output(0, n.reshape(v, out));
}

// DepthToSpace / SpaceToDepth on NCHW: a reshape view, one transpose, a reshape view.
void import_depth_to_space(NodeContext& n) {
  ir::Value* x = n.input(0);
  int64_t b = n.attrs.get_int("blocksize", 0);
  if (x->type.rank() != 4) n.unsupported(cat("input has rank ", x->type.rank(), ", expected 4 (NCHW)"));
  int64_t N = x->type.shape[0], C = x->type.shape[1], H = x->type.shape[2], W = x->type.shape[3];
  if (b < 1 || C % (b * b) != 0)
    n.unsupported(cat("blocksize ", b, " does not divide the ", C, " channels into blocksize^2 groups"));
  int64_t c = C / (b * b);
  std::string mode = n.attrs.get_string("mode", "DCR");
  ir::Value* t;
  if (mode == "DCR")
    t = n.emit(K::Transpose, {n.reshape(x, {N, b, b, c, H, W})}, {{"perm", Ints{0, 3, 4, 1, 5, 2}}});
  else if (mode == "CRD")
    t = n.emit(K::Transpose, {n.reshape(x, {N, c, b, b, H, W})}, {{"perm", Ints{0, 1, 4, 2, 5, 3}}});
  else
    n.unsupported(cat("mode '", mode, "' is not supported (DCR or CRD)"));
  n.set_output(0, n.reshape(t, {N, c, H * b, W * b}));
}

void import_space_to_depth(NodeContext& n) {
  ir::Value* x = n.input(0);
  int64_t b = n.attrs.get_int("blocksize", 0);
  if (x->type.rank() != 4) n.unsupported(cat("input has rank ", x->type.rank(), ", expected 4 (NCHW)"));
  int64_t N = x->type.shape[0], C = x->type.shape[1], H = x->type.shape[2], W = x->type.shape[3];
  if (b < 1 || H % b != 0 || W % b != 0)
    n.unsupported(cat("blocksize ", b, " does not divide the spatial dims ", H, "x", W));
  ir::Value* t = n.emit(K::Transpose, {n.reshape(x, {N, C, H / b, b, W / b, b})}, {{"perm", Ints{0, 3, 5, 1, 2, 4}}});
  n.set_output(0, n.reshape(t, {N, C * b * b, H / b, W / b}));
}

// Trilu keeps x[.., i, j] where j - i >= k (upper) or j - i <= k (lower), else 0: a select with a
// constant [N, M] mask (bool) that broadcasts over the leading dims.
void import_trilu(NodeContext& n) {
  ir::Value* x = n.input(0);
  if (x->type.rank() < 2) n.unsupported(cat("input has rank ", x->type.rank(), ", expected at least 2"));
  bool upper = n.attrs.get_int("upper", 1) != 0;
  int64_t k = 0;
  if (n.has_input(1)) {
    Ints kv = n.constant_ints(1, "k");
    if (kv.size() != 1) n.unsupported("k must hold one value");
    k = kv[0];
  }
  int64_t rows = x->type.shape[x->type.shape.size() - 2], cols = x->type.shape.back();
  HostTensor mask(DType::boolean, {rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask.set_i64(i * cols + j, upper ? (j - i >= k) : (j - i <= k));
  HostTensor zero(x->type.dtype, {});
  n.set_output(0, n.emit(K::Select, {n.constant(std::move(mask)), x, n.constant(std::move(zero))}));
}

// Range with constant start, limit and delta is a constant: element i is start + i * delta, for
// max(ceil((limit - start) / delta), 0) elements. Run-time operands are not supported yet.
void import_range(NodeContext& n) {
  const HostTensor& start = n.constant_input(0, "start");
  const HostTensor& limit = n.constant_input(1, "limit");
  const HostTensor& delta = n.constant_input(2, "delta");
  if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1)
    n.unsupported("start, limit and delta must be scalars");
  DType t = start.dtype();
  if (t == DType::boolean) n.unsupported("start has element type bool");
  HostTensor out;
  if (is_float(t)) {
    double s = start.get_f64(0), l = limit.get_f64(0), d = delta.get_f64(0);
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      n.unsupported("delta is 0 or an operand is not finite");
    double count = std::max(std::ceil((l - s) / d), 0.0);
    if (count > double(kMaxTensorBytes) / 4) n.unsupported("the range has too many elements");
    out = HostTensor(t, {int64_t(count)});
    for (int64_t i = 0; i < out.numel(); ++i) out.set_f64(i, s + double(i) * d);
  } else {
    int64_t s = start.get_i64(0), l = limit.get_i64(0), d = delta.get_i64(0);
    if (d == 0) n.unsupported("delta is 0");
    // In double: limit - start may overflow int64, and the count only has to be bounded.
    double count = std::max(std::ceil((double(l) - double(s)) / double(d)), 0.0);
    if (count > double(kMaxTensorBytes) / 8) n.unsupported("the range has too many elements");
    out = HostTensor(t, {int64_t(count)});
    for (int64_t i = 0; i < out.numel(); ++i) out.set_i64(i, s + i * d);
  }
  n.set_output(0, n.constant(std::move(out)));
}

// OneHot(indices, depth, values = [off, on]) = select(gather(eye(depth) as bool, indices), on, off),
// the new dim moved to `axis` by a transpose. Negative indices wrap once like ONNX's; any other out
// of range index gathers a row of false, i.e. all `off`, as ONNX specifies.
void import_one_hot(NodeContext& n) {
  ir::Value* indices = n.input(0);
  const HostTensor& depth_t = n.constant_input(1, "depth");
  const HostTensor& values = n.constant_input(2, "values");
  if (depth_t.numel() != 1) n.unsupported("depth must hold one value");
  if (values.numel() != 2) n.unsupported("values must hold two elements (off, on)");
  int64_t depth = is_float(depth_t.dtype()) ? int64_t(depth_t.get_f64(0)) : depth_t.get_i64(0);
  if (depth < 1 || depth > 65536) n.unsupported(cat("depth is ", depth, ", expected 1 to 65536"));
  int64_t out_rank = indices->type.rank() + 1;
  int64_t axis = normalize_axis(n.attrs.get_int("axis", -1), out_rank, "axis");
  if (indices->type.dtype != DType::i64 && indices->type.dtype != DType::i32)
    indices = n.emit(K::Cast, {indices}, {{"to", std::string("i64")}});
  HostTensor eye(DType::boolean, {depth, depth});
  for (int64_t i = 0; i < depth; ++i) eye.set_i64(i * depth + i, 1);
  ir::Value* hot = n.emit(K::Gather, {n.constant(std::move(eye)), indices}, {{"axis", int64_t(0)}});
  HostTensor off(values.dtype(), {}), on(values.dtype(), {});
  std::copy_n(values.data(), dtype_size(values.dtype()), off.data());
  std::copy_n(values.data() + dtype_size(values.dtype()), dtype_size(values.dtype()), on.data());
  ir::Value* out = n.emit(K::Select, {hot, n.constant(std::move(on)), n.constant(std::move(off))});
  if (axis != out_rank - 1) {
    Ints perm;
    for (int64_t d = 0; d < out_rank - 1; ++d) {
      if (d == axis) perm.push_back(out_rank - 1);
      perm.push_back(d);
    }
    out = n.emit(K::Transpose, {out}, {{"perm", perm}});
  }
  n.set_output(0, out);
}

}  // namespace

void register_indexing_importers(std::map<std::string, OpImporter>& r) {
  r["Gather"] = import_gather;
  r["GatherElements"] = import_gather_elements;
  r["GatherND"] = import_gather_nd;
  r["ScatterND"] = import_scatter_nd;
  r["ScatterElements"] = import_scatter_elements;
  r["Scatter"] = import_scatter_elements;
  r["Split"] = import_split;
  r["Tile"] = import_tile;
  r["DepthToSpace"] = import_depth_to_space;
  r["SpaceToDepth"] = import_space_to_depth;
  r["Trilu"] = import_trilu;
  r["Range"] = import_range;
  r["OneHot"] = import_one_hot;
}

}  // namespace vkc::onnx
