// Normalized geometry of a slice op: the input coordinate each sliced axis starts at and its step.
//
// The code generator reads a slice in four places (the data-movement kernel, fused prologues,
// composed strided views, zero-copy views of the operand's bytes); they take the numbers from here
// so that they cannot disagree about ONNX Slice's start normalization. The reference interpreter
// (ir/interpreter_shape.cpp) keeps its own, written from the spec, to check them against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace vkc::ir {

struct SlicedAxis {
  size_t axis = 0;    // non-negative
  int64_t start = 0;  // the first input coordinate read along `axis`
  int64_t step = 1;   // non-zero
};

// One entry per entry of the attribute 'starts', for a verified slice whose operand has shape
// `in`: a negative axis or start counts from the end; the start then clamps to [0, dim] for a
// positive step and to [0, dim - 1] for a negative one, and is 0 on an empty dim. (The ends only
// shape the result, which the shape rule already computed.)
std::vector<SlicedAxis> sliced_axes(const Op& op, const Shape& in);

}  // namespace vkc::ir
