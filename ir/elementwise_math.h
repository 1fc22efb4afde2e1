// The scalar semantics of the unary and binary elementwise ops, which the reference interpreter
// applies per element (ir/op_rules.cpp names each op's functions).
//
// Floats are computed in double and rounded once to the result type by the caller. Integers take an
// exact int64 path (the caller wraps to the element width on store) so that i64 values beyond 2^53
// and the truncating division are right.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace vkc::ir::math {

// Unary, in double. The op is passed for its attributes (alpha, min/max, approximate).
double neg(const Op& op, double x);
double abs(const Op& op, double x);
double relu(const Op& op, double x);
double leaky_relu(const Op& op, double x);
double clip(const Op& op, double x);
double sigmoid(const Op& op, double x);
double tanh(const Op& op, double x);
double exp(const Op& op, double x);
double log(const Op& op, double x);
double sqrt(const Op& op, double x);
double erf(const Op& op, double x);
double gelu(const Op& op, double x);
double hardswish(const Op& op, double x);

// Unary ops that stay exact on integers; the others go through double (their results are not
// integers in general, and the shape rule decides which dtypes they accept).
int64_t neg_i64(int64_t x);
int64_t abs_i64(int64_t x);
int64_t relu_i64(int64_t x);

// Binary, in double.
double add(double a, double b);
double sub(double a, double b);
double mul(double a, double b);
double div(double a, double b);
double max(double a, double b);
double min(double a, double b);
double pow(double a, double b);

// Binary, on integers: wrapping arithmetic through uint64 (signed overflow is UB in C++); the store
// to narrower types truncates to the element width, the two's complement wrap the GPU kernels also
// produce.
int64_t add_i64(int64_t a, int64_t b);
int64_t sub_i64(int64_t a, int64_t b);
int64_t mul_i64(int64_t a, int64_t b);
int64_t div_i64(int64_t a, int64_t b);
int64_t max_i64(int64_t a, int64_t b);
int64_t min_i64(int64_t a, int64_t b);
int64_t pow_i64(int64_t a, int64_t b);

}  // namespace vkc::ir::math
