// Einsum, lowered at import to reduce_sum, transpose, reshape views and one matmul: the
// contraction forms PyTorch exports ("bhid,bhjd->bhij", "bij,bjk->bik", "ij,jk->ik",
// "bnd,dk->bnk", permutations "ij->ji", sums "ij->i", "i,i->"). Each letter of two operands is
// a batch letter (both operands and the output), a contracted letter (both operands, not the
// output), a free letter of one operand (it and the output) or a summed letter (one operand
// only: reduced first). The operands become [batch, free, contracted] / [batch, contracted, free]
// matrices (a matmul transpose flag instead of a transpose where the operand's order allows),
// the matmul result [batch, free_a, free_b] is permuted to the output's order. Ellipses,
// repeated letters in one operand (diagonals), more than two operands and letters whose dims
// differ (broadcasting) are refused with the node and the equation named.
#include <algorithm>
#include <map>
#include <string>

#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;
using Ints = std::vector<int64_t>;

struct Term {
  std::string letters;
  ir::Value* value = nullptr;
  int64_t dim(char c) const { return value->type.shape[letters.find(c)]; }
};

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

ir::Value* permute(NodeContext& n, ir::Value* v, const std::string& from, const std::string& to) {
  Ints perm;
  for (char c : to) perm.push_back(int64_t(from.find(c)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int64_t(i);
  return identity ? v : n.emit(K::Transpose, {v}, {{"perm", perm}});
}

// Sums the letters of `t` that `keep` does not contain.
void sum_out(NodeContext& n, Term& t, const std::string& keep) {
  Ints axes;
  std::string left;
  for (size_t i = 0; i < t.letters.size(); ++i) {
    if (has(keep, t.letters[i])) left += t.letters[i];
    else axes.push_back(int64_t(i));
  }
  if (axes.empty()) return;
  t.value = n.emit(K::ReduceSum, {t.value}, {{"axes", axes}, {"keepdims", false}});
  t.letters = left;
}

int64_t product(const Term& t, const std::string& letters) {
  int64_t p = 1;
  for (char c : letters) p *= t.dim(c);
  return p;
}

// `order` is `letters` in the order they appear in `t`.
std::string in_order_of(const Term& t, const std::string& letters) {
  std::string s;
  for (char c : t.letters)
    if (has(letters, c)) s += c;
  return s;
}

void import_einsum(NodeContext& n) {
  std::string eq;
  for (char c : n.attrs.get_string("equation", "")) if (c != ' ') eq += c;
  auto refuse = [&](const std::string& why) { n.unsupported(cat("equation '", eq, "': ", why)); };
  if (eq.find("...") != std::string::npos) refuse("ellipses are not supported");
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow), out;
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back({lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (int(terms.size()) != n.num_inputs()) refuse(cat(terms.size(), " operands for ", n.num_inputs(), " inputs"));
  if (terms.size() > 2) refuse("more than two operands are not supported");
  std::map<char, int> count;
  for (size_t i = 0; i < terms.size(); ++i) {
    Term& t = terms[i];
    t.value = n.input(int(i));
    for (char c : t.letters) {
      if (!std::isalpha(static_cast<unsigned char>(c))) refuse(cat("'", c, "' is not a letter"));
      if (std::count(t.letters.begin(), t.letters.end(), c) > 1)
        refuse(cat("letter '", c, "' repeats in operand ", i, " (diagonals are not supported)"));
      ++count[c];
    }
    if (int64_t(t.letters.size()) != t.value->type.rank())
      refuse(cat("operand ", i, " has ", t.letters.size(), " letters for rank ", t.value->type.rank()));
  }
  if (arrow == std::string::npos) {
    for (auto [c, k] : count)
      if (k == 1) out += c;  // implicit output: the letters seen once, alphabetically
  } else {
    out = eq.substr(arrow + 2);
    for (char c : out)
      if (!count.count(c) || std::count(out.begin(), out.end(), c) > 1)
        refuse(cat("output letter '", c, "' is not an operand letter, or repeats"));
  }
  if (terms.size() == 1) {
    sum_out(n, terms[0], out);
    return n.set_output(0, permute(n, terms[0].value, terms[0].letters, out));
  }
  Term& a = terms[0];
  Term& b = terms[1];
  // Letters of one operand that neither the other nor the output has are summed first.
  sum_out(n, a, b.letters + out);
  sum_out(n, b, a.letters + out);
  std::string batch, contracted, free_a, free_b;
  for (char c : a.letters) {
    if (has(b.letters, c)) {
      if (a.dim(c) != b.dim(c))
        refuse(cat("letter '", c, "' is ", a.dim(c), " in operand 0 and ", b.dim(c), " in operand 1"));
      (has(out, c) ? batch : contracted) += c;
    } else {
      free_a += c;
    }
  }
  free_b = in_order_of(b, out);
  for (char c : batch) free_b.erase(std::remove(free_b.begin(), free_b.end(), c), free_b.end());
  batch = in_order_of(a, batch);
  contracted = in_order_of(a, contracted);
  free_a = in_order_of(a, free_a);
  int64_t m = product(a, free_a), k = product(a, contracted), nn = product(b, free_b);
  Shape bshape;
  for (char c : batch) bshape.push_back(a.dim(c));
  auto matrix = [&](const Shape& two) {
    Shape s = bshape;
    s.insert(s.end(), two.begin(), two.end());
    return s;
  };
  // A as [batch, M, K], or [batch, K, M] with transpose_a when that is its order already.
  bool ta = a.letters == batch + contracted + free_a && !free_a.empty() && !contracted.empty();
  ir::Value* av = ta ? a.value : permute(n, a.value, a.letters, batch + free_a + contracted);
  av = n.reshape(av, ta ? matrix({k, m}) : matrix({m, k}));
  bool tb = b.letters == batch + free_b + contracted && !free_b.empty() && !contracted.empty();
  ir::Value* bv = tb ? b.value : permute(n, b.value, b.letters, batch + contracted + free_b);
  bv = n.reshape(bv, tb ? matrix({nn, k}) : matrix({k, nn}));
  ir::Value* prod = n.emit(K::MatMul, {av, bv}, {{"transpose_a", ta}, {"transpose_b", tb}});
  std::string letters = batch + free_a + free_b;
  Shape full = bshape;
  for (char c : free_a) full.push_back(a.dim(c));
  for (char c : free_b) full.push_back(b.dim(c));
  n.set_output(0, permute(n, n.reshape(prod, full), letters, out));
}

}  // namespace

void register_einsum_importers(std::map<std::string, OpImporter>& r) { r["Einsum"] = import_einsum; }

}  // namespace vkc::onnx
