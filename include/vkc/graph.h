// The tensor IR, for programs that build models in C++ and compile them with Module::compile:
// vkc::ir::Graph (add_input, add_constant, add_op, add_output) and the op kinds of ir/ops.def.
// Programs that load modules or .vkir/.onnx files do not need this header.
#pragma once

#include "ir/graph.h"
