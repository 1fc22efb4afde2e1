// Conv, ConvTranspose, ConvInteger and the pools. ONNX's NC+spatial layouts are the IR defaults, so only
// window attributes need mapping; auto_pad is resolved to explicit pads here.
#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

Shape spatial_dims(const ir::Value* x, const std::string& what) {
  if (x->type.rank() < 3 || x->type.rank() > 5)
    throw Unsupported{cat(what, " has rank ", x->type.rank(), "; only 1-D to 3-D windows are supported")};
  return Shape(x->type.shape.begin() + 2, x->type.shape.end());
}

std::vector<int64_t> ones(size_t n) { return std::vector<int64_t>(n, 1); }

void check_kernel_shape(NodeContext& n, const std::vector<int64_t>& kernel) {
  std::vector<int64_t> declared = n.attrs.get_ints("kernel_shape", kernel);
  if (declared != kernel) n.unsupported("kernel_shape does not match the weights");
}

void import_conv(NodeContext& n) {
  ir::Value* x = n.input(0);
  ir::Value* w = n.input(1);
  ir::AttrMap attrs = conv_attrs(n, x, w);
  std::vector<ir::Value*> operands{x, w};
  if (n.has_input(2)) operands.push_back(n.input(2));
  n.set_output(0, n.emit(K::Conv, operands, attrs));
}

// The window every conv form reads: input spatial dims, weight taps (checked against the input's
// rank), strides and dilations (ONNX defaults 1).
struct ConvWindow {
  Shape in;
  std::vector<int64_t> kernel, strides, dilations;
};

ConvWindow read_conv_window(NodeContext& n, ir::Value* x, ir::Value* w) {
  ConvWindow c;
  c.in = spatial_dims(x, "input");
  size_t s = c.in.size();
  if (w->type.rank() != int64_t(s) + 2) n.unsupported("weights rank does not match the input");
  c.kernel.assign(w->type.shape.begin() + 2, w->type.shape.end());
  check_kernel_shape(n, c.kernel);
  c.strides = n.attrs.get_ints("strides", ones(s));
  c.dilations = n.attrs.get_ints("dilations", ones(s));
  return c;
}

// ConvInteger: x_zero_point (input 2) per tensor, w_zero_point (input 3) per tensor or per output
// channel; absent ones are 0 of the operand's type.
void import_conv_integer(NodeContext& n) {
  ir::Value* x = n.input(0);
  ir::Value* w = n.input(1);
  ir::AttrMap attrs = conv_attrs(n, x, w);
  ir::Value* xz = n.has_input(2) ? n.input(2) : integer_zero_point(n, x->type.dtype);
  ir::Value* wz = n.has_input(3) ? n.input(3) : integer_zero_point(n, w->type.dtype);
  n.set_output(0, n.emit(K::ConvInteger, {x, w, xz, wz}, attrs));
}

void import_conv_transpose(NodeContext& n) {
  ir::Value* x = n.input(0);
  ir::Value* w = n.input(1);
  auto [in, kernel, strides, dilations] = read_conv_window(n, x, w);
  size_t s = in.size();
  std::vector<int64_t> output_padding = n.attrs.get_ints("output_padding", std::vector<int64_t>(s, 0));
  std::vector<int64_t> output_shape = n.attrs.get_ints("output_shape");
  std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads = n.attrs.get_ints("pads", std::vector<int64_t>(2 * s, 0));
  if (output_shape.size() == s + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != s) n.unsupported("output_shape has the wrong rank");
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (same && output_shape.empty())  // SAME: the output is in * stride
    for (size_t i = 0; i < s; ++i) output_shape.push_back(in[i] * strides[i]);
  if (auto_pad == "VALID") pads.assign(2 * s, 0);
  else if (auto_pad != "NOTSET" && !same) n.unsupported(cat("auto_pad '", auto_pad, "' is not supported"));
  // A requested output_shape becomes explicit pads: the excess of the full scatter is cropped
  // (SAME_UPPER puts the odd unit at the end; SAME_LOWER and plain output_shape at the
  // beginning), and a shortfall extends the end, like output_padding, with bias-only positions.
  if (!output_shape.empty()) {
    pads.assign(2 * s, 0);
    for (size_t i = 0; i < s; ++i) {
      int64_t full = strides[i] * (in[i] - 1) + output_padding[i] + dilations[i] * (kernel[i] - 1) + 1;
      int64_t total = full - output_shape[i];
      if (total < 0) {
        output_padding[i] -= total;
        continue;
      }
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[s + i] = total - pads[i];
    }
  }
  if (pads.size() != 2 * s) n.unsupported("pads has the wrong length");
  ir::AttrMap attrs{{"strides", strides}, {"dilations", dilations}, {"pads", pads},
                    {"output_padding", output_padding}, {"groups", n.attrs.get_int("group", 1)}};
  std::vector<ir::Value*> operands{x, w};
  if (n.has_input(2)) operands.push_back(n.input(2));
  n.set_output(0, n.emit(K::ConvTranspose, operands, attrs));
}

OpImporter pool(K kind) {
  return [kind](NodeContext& n) {
    ir::Value* x = n.input(0);
    Shape in = spatial_dims(x, "input");
    size_t s = in.size();
    // storage_order only changes the Indices output (row- or column-major flat indices).
    int64_t storage_order = n.attrs.get_int("storage_order", 0);
    bool with_indices = kind == K::MaxPool && n.output_used(1);
    std::vector<int64_t> kernel = n.attrs.get_ints("kernel_shape");
    if (kernel.size() != s) n.unsupported("kernel_shape is missing or has the wrong rank");
    std::vector<int64_t> strides = n.attrs.get_ints("strides", ones(s));
    std::vector<int64_t> dilations = n.attrs.get_ints("dilations", ones(s));
    std::vector<int64_t> pads = resolve_auto_pad(n.attrs.get_string("auto_pad", "NOTSET"), in,
                                                 kernel, strides, dilations, n.attrs.get_ints("pads"));
    ir::AttrMap attrs{{"kernel", kernel}, {"strides", strides}, {"dilations", dilations},
                      {"pads", pads}, {"ceil_mode", n.attrs.get_int("ceil_mode", 0) != 0}};
    if (kind == K::AvgPool) attrs["count_include_pad"] = n.attrs.get_int("count_include_pad", 0) != 0;
    if (with_indices) {
      attrs["storage_order"] = storage_order;
      std::vector<ir::Value*> r = n.emit_multi(K::MaxPoolWithIndices, {x}, attrs);
      n.set_output(0, r[0]);
      n.set_output(1, r[1]);
      return;
    }
    n.set_output(0, n.emit(kind, {x}, attrs));
  };
}

OpImporter global_pool(K kind) {
  return [kind](NodeContext& n) {
    ir::Value* x = n.input(0);
    spatial_dims(x, "input");
    n.set_output(0, n.emit(kind, {x}, {{"global", true}}));
  };
}

}  // namespace

// Conv's window attributes (shared with ConvInteger and QLinearConv).
ir::AttrMap conv_attrs(NodeContext& n, ir::Value* x, ir::Value* w) {
  auto [in, kernel, strides, dilations] = read_conv_window(n, x, w);
  std::vector<int64_t> pads = resolve_auto_pad(n.attrs.get_string("auto_pad", "NOTSET"), in, kernel,
                                               strides, dilations, n.attrs.get_ints("pads"));
  return {{"strides", strides}, {"dilations", dilations}, {"pads", pads}, {"groups", n.attrs.get_int("group", 1)}};
}

void register_conv_importers(std::map<std::string, OpImporter>& r) {
  r["Conv"] = import_conv;
  r["ConvTranspose"] = import_conv_transpose;
  r["ConvInteger"] = import_conv_integer;
  r["MaxPool"] = pool(K::MaxPool);
  r["AveragePool"] = pool(K::AvgPool);
  r["GlobalAveragePool"] = global_pool(K::AvgPool);
  r["GlobalMaxPool"] = global_pool(K::MaxPool);
}

}  // namespace vkc::onnx
