// Malformed, truncated and semantically wrong .vkir files (tests/hostile/data/*.vkir): each must be
// refused by parse_graph_file with one line naming the file, position and problem.
#include <gtest/gtest.h>

#include "hostile/hostile_util.h"
#include "ir/text_format.h"

namespace vkc::hostile {
namespace {

struct BadText {
  const char* file;
  const char* expected;  // a substring of the message
};

class HostileIrText : public ::testing::TestWithParam<BadText> {};

TEST_P(HostileIrText, RefusedWithOneLineNamingTheProblem) {
  const BadText& c = GetParam();
  std::string message = error_of([&] { ir::parse_graph_file(data_path(c.file)); });
  EXPECT_NE(message, "(no error)");
  EXPECT_NE(message.find(c.file), std::string::npos) << "message does not name the file: " << message;
  EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Files, HostileIrText,
    ::testing::Values(
        BadText{"truncated_body.vkir", "truncated_body.vkir:3:1: expected an op"},
        BadText{"truncated_type.vkir", "found end of input"},
        BadText{"unterminated_string.vkir", "unterminated string"},
        BadText{"unknown_op.vkir", "unknown op 'frobnicate'"},
        BadText{"undefined_value.vkir", "undefined value %z"},
        BadText{"redefined_value.vkir", "already defined"},
        BadText{"binary_garbage.vkir", "unexpected character"},
        BadText{"dim_overflows_int64.vkir", "too large"},
        BadText{"constant_count_overflow.vkir", "overflows"},
        // 4 TB of constant data promised by a 2-digit hex string: refused before allocating.
        BadText{"constant_absurd_size.vkir", "needs 1000000000000 elements"},
        // The 3-D regression conv with a filter of C = 2 for a 1-channel input: the message
        // names the op, the operand (filter) and the dim.
        BadText{"conv3d_wrong_filter.vkir", "conv 'conv3d'"},
        // Issue #24 item 10: the one rank limit (ir/rank_limit.h) at the 7th dim of %x's type.
        BadText{"rank_7.vkir", "rank_7.vkir:1:37: tensor type has rank 7, at most 6 is supported"}),
    [](const ::testing::TestParamInfo<BadText>& info) {
      std::string name = info.param.file;
      return name.substr(0, name.find('.'));
    });

TEST(HostileIrTextConv3d, WrongFilterNamesOpOperandAndDim) {
  std::string message = error_of([] { ir::parse_graph_file(data_path("conv3d_wrong_filter.vkir")); });
  EXPECT_NE(message.find("conv 'conv3d'"), std::string::npos) << message;
  EXPECT_NE(message.find("filter"), std::string::npos) << message;
  EXPECT_NE(message.find("dim 1"), std::string::npos) << message;
  EXPECT_NE(message.find("is 2"), std::string::npos) << message;
}

// Rank 6, the limit itself, parses (so the test above tests the limit, not any deep type).
TEST(HostileIrTextRank, RankSixIsAccepted) {
  ir::Graph g = ir::parse_graph("graph @r(%x: tensor<1x2x1x2x1x2xf32>) {\n  %y = relu (%x) : tensor<1x2x1x2x1x2xf32>\n"
                                "  return %y as \"y\"\n}\n",
                                "rank6.vkir");
  EXPECT_EQ(g.outputs()[0].value->type.rank(), 6);
}

// Every prefix of a valid file is either the whole file or refused with a vkc::Error: the parser
// never reads past the end, crashes or throws anything else on truncation.
TEST(HostileIrTextTruncation, EveryPrefixOfAValidFileIsRefused) {
  std::vector<uint8_t> bytes = read_bytes(std::string(VKC_SOURCE_DIR) + "/examples/small_convnet.vkir");
  std::string text(bytes.begin(), bytes.end());
  ASSERT_GT(text.size(), 100u);
  // The last closing brace (and the newline after it) end the graph; shorter prefixes must fail.
  size_t end = text.rfind('}');
  for (size_t n = 0; n < end; n += 7) {
    std::string message = error_of([&] { ir::parse_graph(text.substr(0, n), "prefix.vkir"); });
    EXPECT_NE(message, "(no error)") << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace vkc::hostile
