// Chains of index maps composed into one strided view (codegen/strided_view.h), checked against
// the reference interpreter: the chain applied to a tensor holding each element's own index must
// give offset + sum(c[d] * strides[d]) at every coordinate c; reshapes that strides cannot express
// are refused.
#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "codegen/strided_view.h"
#include "ir/interpreter.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

using K = ir::OpKind;
using Ints = std::vector<int64_t>;

// Builds `chain` on an input of `shape`, composes its ops, and compares with the interpreter.
// Returns whether the chain composed.
bool composes_like_the_reference(const Shape& shape,
                                 const std::function<ir::Value*(ir::Graph&, ir::Value*)>& chain) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, shape});
  ir::Value* y = chain(g, x);
  g.add_output(y, "y");
  std::vector<const ir::Op*> ops;
  for (const ir::Op* op : g.ops()) ops.push_back(op);
  std::optional<StridedView> composed = compose_index_maps(shape, ops);
  if (!composed) return false;
  const StridedView& view = *composed;
  HostTensor in(DType::f32, shape);
  for (int64_t i = 0; i < in.numel(); ++i) in.set_f64(i, double(i));
  const HostTensor out = ir::interpret(g, {{"x", in}}).at("y");
  EXPECT_EQ(view.shape, out.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rem = i, index = view.offset;
    for (size_t d = view.shape.size(); d-- > 0;) {
      index += (rem % view.shape[d]) * view.strides[d];
      rem /= view.shape[d];
    }
    EXPECT_EQ(out.get_f64(i), double(index)) << "element " << i;
  }
  return true;
}

ir::Value* op(ir::Graph& g, K kind, ir::Value* x, ir::AttrMap attrs) { return g.add_op(kind, {x}, std::move(attrs))->result(); }

TEST(StridedView, SliceReshapeTransposeBroadcast) {
  // A joined q/k/v product's middle part, split into heads, heads first, repeated for a batch.
  EXPECT_TRUE(composes_like_the_reference({2, 3, 32}, [](ir::Graph& g, ir::Value* x) {
    x = op(g, K::Slice, x, {{"starts", Ints{8}}, {"ends", Ints{24}}, {"axes", Ints{2}}});
    x = op(g, K::Reshape, x, {{"shape", Ints{2, 3, 4, 4}}});
    x = op(g, K::Transpose, x, {{"perm", Ints{0, 2, 1, 3}}});
    return op(g, K::Broadcast, x, {{"shape", Ints{2, 2, 4, 3, 4}}});
  }));
}

TEST(StridedView, ReversalsNegativeStepsAndDimsOfOne) {
  EXPECT_TRUE(composes_like_the_reference({3, 7, 5}, [](ir::Graph& g, ir::Value* x) {
    x = op(g, K::Reverse, x, {{"axes", Ints{0, 2}}});
    x = op(g, K::Slice, x, {{"starts", Ints{5, 1}}, {"ends", Ints{0, 5}}, {"axes", Ints{1, 2}}, {"steps", Ints{-2, 1}}});
    x = op(g, K::Reshape, x, {{"shape", Ints{1, 3, 1, 3, 4, 1}}});
    return op(g, K::Transpose, x, {{"perm", Ints{4, 1, 0, 2, 3, 5}}});
  }));
  // rotate_half's halves swapped (reshape, reverse) and merged again: the merge of a reversed
  // dim with the one inside it is not a strided view.
  EXPECT_FALSE(composes_like_the_reference({2, 8}, [](ir::Graph& g, ir::Value* x) {
    x = op(g, K::Reshape, x, {{"shape", Ints{2, 2, 4}}});
    x = op(g, K::Reverse, x, {{"axes", Ints{1}}});
    return op(g, K::Reshape, x, {{"shape", Ints{2, 8}}});
  }));
}

TEST(StridedView, ReshapesMergeOnlyContiguousDims) {
  // Split and merged back in place: a view.
  EXPECT_TRUE(composes_like_the_reference({4, 6}, [](ir::Graph& g, ir::Value* x) {
    x = op(g, K::Reshape, x, {{"shape", Ints{2, 2, 3, 2}}});
    x = op(g, K::Transpose, x, {{"perm", Ints{1, 0, 2, 3}}});
    return op(g, K::Reshape, x, {{"shape", Ints{2, 2, 6}}});  // merges the two inner dims, contiguous
  }));
  // Merged although not contiguous (a slice's stride lies between them), then split apart again:
  // the merged dim is carried as its parts in between. ViT's q, k and v read from the joined
  // [S, B, 3E] projection: [S, B, E] sliced, [S, B * H, D], [B * H, S, D], [B, H, S, D].
  EXPECT_TRUE(composes_like_the_reference({5, 2, 3 * 12}, [](ir::Graph& g, ir::Value* x) {
    x = op(g, K::Slice, x, {{"starts", Ints{12}}, {"ends", Ints{24}}, {"axes", Ints{2}}});
    x = op(g, K::Reshape, x, {{"shape", Ints{5, 2 * 3, 4}}});
    x = op(g, K::Transpose, x, {{"perm", Ints{1, 0, 2}}});
    return op(g, K::Reshape, x, {{"shape", Ints{2, 3, 5, 4}}});
  }));
  // A merged dim split at another boundary than its parts' (extent 6 = 2 x 3 read as 3 x 2): the
  // inner part (3) is cut at 2, which is not a whole number of its steps.
  EXPECT_FALSE(composes_like_the_reference({2, 5, 3}, [](ir::Graph& g, ir::Value* x) {
    x = op(g, K::Transpose, x, {{"perm", Ints{1, 0, 2}}});
    x = op(g, K::Reshape, x, {{"shape", Ints{5, 6}}});
    return op(g, K::Reshape, x, {{"shape", Ints{5, 3, 2}}});
  }));
  // Merged and split again at a boundary inside a part: fine where the extents divide.
  EXPECT_TRUE(composes_like_the_reference({4, 3, 6}, [](ir::Graph& g, ir::Value* x) {
    x = op(g, K::Transpose, x, {{"perm", Ints{1, 0, 2}}});
    x = op(g, K::Reshape, x, {{"shape", Ints{3, 4 * 6}}});
    x = op(g, K::Reshape, x, {{"shape", Ints{3, 2, 2, 2, 3}}});
    return op(g, K::Transpose, x, {{"perm", Ints{4, 1, 0, 2, 3}}});
  }));
  // A slice of a merged dim whose parts do not merge: refused.
  EXPECT_FALSE(composes_like_the_reference({4, 6}, [](ir::Graph& g, ir::Value* x) {
    x = op(g, K::Transpose, x, {{"perm", Ints{1, 0}}});
    x = op(g, K::Reshape, x, {{"shape", Ints{24}}});
    return op(g, K::Slice, x, {{"starts", Ints{2}}, {"ends", Ints{10}}, {"axes", Ints{0}}});
  }));
  // Transposed, then the swapped dims merged: not a view.
  EXPECT_FALSE(composes_like_the_reference({4, 6}, [](ir::Graph& g, ir::Value* x) {
    x = op(g, K::Transpose, x, {{"perm", Ints{1, 0}}});
    return op(g, K::Reshape, x, {{"shape", Ints{24}}});
  }));
}

}  // namespace
}  // namespace vkc::codegen
