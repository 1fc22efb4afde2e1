// OpTable<Entry>: per-op facts as an array indexed by OpKind, filled by a constexpr builder.
//
// Each layer keeps its per-op facts (shape rule, reference, kernel, fusion, ...) in one such table
// instead of a switch with `default:`. The builder records which kinds were set; the table's owner
// writes `static_assert(kTable.complete())`, so an op added to ir/ops.def but missing from a table
// is a compile error rather than a runtime "not supported" (or, worse, a silently wrong default).
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string_view>

#include "ir/ops.h"

namespace vkc::ir {

inline constexpr size_t kNumOpKinds = 0
#define OP(kind, name, cat, a, b, c, d) +1
#include "ir/ops.def"
#undef OP
    ;

// The ops.def columns the builders need at compile time (op_schema() is built at run time).
inline constexpr std::array<OpCategory, kNumOpKinds> kOpCategories = {
#define OP(kind, name, cat, a, b, c, d) OpCategory::cat,
#include "ir/ops.def"
#undef OP
};

inline constexpr std::array<std::string_view, kNumOpKinds> kOpNames = {
#define OP(kind, name, cat, a, b, c, d) name,
#include "ir/ops.def"
#undef OP
};

inline constexpr std::array<OpKind, kNumOpKinds> kAllOpKinds = {
#define OP(kind, name, cat, a, b, c, d) OpKind::kind,
#include "ir/ops.def"
#undef OP
};

template <typename Entry>
class OpTable {
 public:
  constexpr void set(OpKind kind, const Entry& e) {
    size_t i = size_t(kind);
    // Setting a kind twice is a slip of the same kind as forgetting one: complete() rejects both.
    if (filled_[i]) duplicated_ = true;
    filled_[i] = true;
    entries_[i] = e;
  }
  constexpr void set(std::initializer_list<OpKind> kinds, const Entry& e) {
    for (OpKind k : kinds) set(k, e);
  }
  // Every kind set exactly once.
  constexpr bool complete() const {
    for (bool f : filled_)
      if (!f) return false;
    return !duplicated_;
  }

  constexpr const Entry& operator[](OpKind kind) const { return entries_[size_t(kind)]; }

 private:
  std::array<Entry, kNumOpKinds> entries_{};
  std::array<bool, kNumOpKinds> filled_{};
  bool duplicated_ = false;
};

}  // namespace vkc::ir
