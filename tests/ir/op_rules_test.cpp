// Walks every op kind of ir/ops.def and checks the IR layer's facts for it: a shape rule, a
// reference, elementwise math where the op is elementwise, and a line in docs/ops.md. The tables
// are complete by static_assert; this catches what a compile-time check cannot (a null entry, an op
// nobody documented).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/test_util.h"
#include "ir/op_rules.h"
#include "ir/op_table.h"

namespace vkc::ir {
namespace {

bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

// `word` appears in `text` delimited by non-identifier characters ("exp" does not match "expand").
bool contains_word(const std::string& text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    bool starts = at == 0 || !word_char(text[at - 1]);
    size_t end = at + word.size();
    if (starts && (end == text.size() || !word_char(text[end]))) return true;
  }
  return false;
}

TEST(OpRules, TablesCoverTheSameOpsAsTheSchema) {
  ASSERT_EQ(all_op_kinds().size(), kNumOpKinds);
  for (size_t i = 0; i < kNumOpKinds; ++i) {
    EXPECT_EQ(all_op_kinds()[i], kAllOpKinds[i]);
    EXPECT_EQ(op_name(kAllOpKinds[i]), kOpNames[i]);
    EXPECT_EQ(op_schema(kAllOpKinds[i]).category, kOpCategories[i]);
  }
}

TEST(OpRules, EveryOpHasAShapeRuleAndAReference) {
  for (OpKind k : all_op_kinds()) {
    SCOPED_TRACE(op_name(k));
    EXPECT_NE(op_rules(k).shape, nullptr);
    EXPECT_NE(op_rules(k).reference, nullptr);
  }
}

TEST(OpRules, ElementwiseMathIsNamedPerOp) {
  for (OpKind k : all_op_kinds()) {
    SCOPED_TRACE(op_name(k));
    const ElementwiseMath& m = op_rules(k).math;
    OpCategory c = op_schema(k).category;
    bool unary_math = c == OpCategory::Unary && k != OpKind::Cast;
    EXPECT_EQ(m.unary != nullptr, unary_math);
    EXPECT_EQ(m.binary != nullptr, c == OpCategory::Binary);
    EXPECT_EQ(m.binary_exact != nullptr, c == OpCategory::Binary);
    EXPECT_TRUE(unary_math || (m.unary_exact == nullptr && !m.signed_ints));
    // An exact integer path is only reachable for ops that accept integers.
    EXPECT_TRUE(m.unary_exact == nullptr || m.signed_ints);
  }
}

TEST(OpRules, EveryOpIsDocumented) {
  std::ifstream in(test::source_path("docs/ops.md"));
  ASSERT_TRUE(in) << "cannot read docs/ops.md";
  std::stringstream text;
  text << in.rdbuf();
  for (OpKind k : all_op_kinds())
    EXPECT_TRUE(contains_word(text.str(), op_name(k))) << op_name(k) << " is not in docs/ops.md";
}

}  // namespace
}  // namespace vkc::ir
