// The one place that includes libonnx's generated protobuf classes (ONNX_ML variant, namespace
// ::onnx), so every importer file sees the same configuration.
#pragma once

#include <onnx/onnx_pb.h>
