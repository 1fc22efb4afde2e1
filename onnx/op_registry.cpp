// The op_type -> importer table, assembled from the per-family registration hooks.
#include "onnx/import_context.h"

namespace vkc::onnx {

const OpImporter* find_importer(const std::string& op_type) {
  static const std::map<std::string, OpImporter> table = [] {
    std::map<std::string, OpImporter> r;
    register_elementwise_importers(r);
    register_conv_importers(r);
    register_normalization_importers(r);
    register_contraction_importers(r);
    register_shape_importers(r);
    register_reduce_importers(r);
    register_quant_importers(r);
    register_folding_importers(r);
    register_resize_importers(r);
    register_logic_importers(r);  // issue 23, elementwise and logic group
    register_indexing_importers(r);  // issue 23, indexing and data movement group
    register_einsum_importers(r);    // issue 23, indexing and data movement group
    register_norm_reduce_importers(r);  // normalizations and reductions (issue 23)
    return r;
  }();
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace vkc::onnx
