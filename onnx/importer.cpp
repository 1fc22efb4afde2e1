// Placeholder until the ONNX importer lands (issue "ONNX import").
#include "onnx/importer.h"

#include "support/error.h"

namespace vkc::onnx {

ir::Graph import_model(const std::string& path, const ImportOptions&) {
  throw Error(cat(path, ": ONNX import is not available in this build yet"));
}

}  // namespace vkc::onnx
