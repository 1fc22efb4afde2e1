#include "codegen/storage_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/slice_geometry.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen {

TensorDesc& StoragePlan::tensor(const std::string& name) {
  for (TensorDesc& t : tensors)
    if (t.name == name) return t;
  throw Error("internal: storage plan has no tensor '" + name + "'");
}

namespace {

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// Tensor names: graph input/output names as given (they are the user's API), others derived from
// the value's name or id, made unique.
class Namer {
 public:
  std::string claim(const std::string& wanted) {
    std::string base;
    for (char c : wanted) base += is_identifier_char(c) ? c : '_';
    if (base.empty()) base = "t";
    // Suffixes tried for this base before were taken, and names are never released, so the search
    // resumes where it stopped: many values wanting one name cost linear time, not quadratic.
    std::string name = base;
    int& i = next_suffix_[base];
    if (i > 0) name = base + "_" + std::to_string(i);
    while (used_.count(name)) name = base + "_" + std::to_string(++i);
    used_.insert(name);
    return name;
  }
  void reserve(const std::string& exact, const std::string& what) {
    check(used_.insert(exact).second, "duplicate ", what, " name '", exact, "'");
  }

 private:
  std::set<std::string> used_;
  std::map<std::string, int> next_suffix_;  // base -> the suffix the last claim of it ended on
};

// Placed arena tensors by live range (dispatch indices), answering "which share a dispatch with
// [first, last]" without scanning every placed tensor (that scan made arena placement quadratic in
// the number of dispatches, issue 24 item 11). The answer is those live at `first` (a segment tree
// over dispatch indices holds each range in O(log n) nodes; a point query walks one root-to-leaf
// path) and those starting inside (first, last] (ordered by start): no tensor is in both.
class LiveIndex {
 public:
  explicit LiveIndex(int span) : span_(std::max(span, 1)), nodes_(4 * size_t(span_)) {}

  void add(int first, int last, size_t id) {
    insert(1, 0, span_ - 1, first, last, id);
    starts_.emplace(first, id);
  }

  template <typename F>
  void for_each_overlapping(int first, int last, F&& visit) const {
    for (int node = 1, lo = 0, hi = span_ - 1;;) {
      for (size_t id : nodes_[size_t(node)]) visit(id);
      if (lo == hi) break;
      int mid = lo + (hi - lo) / 2;
      if (first <= mid) node = 2 * node, hi = mid;
      else node = 2 * node + 1, lo = mid + 1;
    }
    for (auto it = starts_.upper_bound(first); it != starts_.end() && it->first <= last; ++it) visit(it->second);
  }

 private:
  void insert(int node, int lo, int hi, int first, int last, size_t id) {
    if (last < lo || hi < first) return;
    if (first <= lo && hi <= last) {
      nodes_[size_t(node)].push_back(id);
      return;
    }
    int mid = lo + (hi - lo) / 2;
    insert(2 * node, lo, mid, first, last, id);
    insert(2 * node + 1, mid + 1, hi, first, last, id);
  }

  int span_;
  std::vector<std::vector<size_t>> nodes_;  // segment tree, root 1: ranges covering each node's span
  std::multimap<int, size_t> starts_;       // first dispatch -> placed id
};

}  // namespace

std::optional<int64_t> contiguous_run_offset(const Shape& shape, const std::vector<int64_t>& start,
                                             const std::vector<int64_t>& extent) {
  int partial = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (extent[d] != shape[d]) partial = int(d);
  for (int d = 0; d < partial; ++d)
    if (extent[size_t(d)] != 1) return std::nullopt;
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + start[d];
  return offset;
}

std::optional<uint64_t> contiguous_slice_offset(const ir::Op& slice) {
  const Shape& in = slice.operand(0)->type.shape;
  const Shape& out = slice.result()->type.shape;
  if (slice.result()->type.numel() == 0) return std::nullopt;
  std::vector<int64_t> begin(in.size(), 0);
  for (const ir::SlicedAxis& s : ir::sliced_axes(slice, in)) {
    if (s.step != 1) return std::nullopt;
    begin[s.axis] = s.start;
  }
  std::optional<int64_t> run = contiguous_run_offset(in, begin, out);
  if (!run) return std::nullopt;
  return uint64_t(*run) * dtype_size(slice.result()->type.dtype);
}

namespace {

// Where each value's bytes are: `offset` bytes into the storage of `root`.
struct Place {
  const ir::Value* root = nullptr;
  uint64_t offset = 0;
};

// Storage classes with offsets: links from a value to the value whose bytes hold it.
class Placement {
 public:
  void link(const ir::Value* v, const ir::Value* into, uint64_t offset) { parent_[v] = {into, offset}; }
  Place find(const ir::Value* v) const {
    Place p{v, 0};
    for (auto it = parent_.find(p.root); it != parent_.end(); it = parent_.find(p.root)) {
      p.offset += it->second.offset;
      p.root = it->second.root;
    }
    return p;
  }

 private:
  std::map<const ir::Value*, Place> parent_;
};

uint64_t bytes_of(const ir::Value* v) { return uint64_t(v->type.size_bytes()); }

// The operands' offsets in a concat's result when they lie end to end; nullopt otherwise.
std::optional<std::vector<uint64_t>> end_to_end(const ir::Op& concat) {
  const Shape& out = concat.result()->type.shape;
  int64_t axis = concat.attr_int("axis");
  if (axis < 0) axis += int64_t(out.size());
  for (int64_t d = 0; d < axis; ++d)
    if (out[size_t(d)] != 1) return std::nullopt;
  std::vector<uint64_t> offsets;
  uint64_t at = 0;
  for (const ir::Value* v : concat.operands) {
    offsets.push_back(at);
    at += bytes_of(v);
  }
  return offsets;
}

}  // namespace

StoragePlan plan_storage(const ir::Graph& graph, uint64_t view_alignment) {
  auto aligned = [&](uint64_t offset) { return offset % view_alignment == 0; };
  StoragePlan plan;
  Namer names;
  for (const ir::Value* in : graph.inputs()) names.reserve(in->name, "graph input");
  for (const ir::GraphOutput& out : graph.outputs()) {
    bool is_input_name = false;
    for (const ir::Value* in : graph.inputs()) is_input_name |= in->name == out.name;
    check(!is_input_name, "graph output '", out.name, "' has the same name as a graph input");
    names.reserve(out.name, "graph output");
  }

  // Views first: a view's operand is defined before it, so one pass in definition order links
  // every reshape and contiguous slice to the bytes it names.
  Placement place;
  std::vector<const ir::Value*> live;  // every value, in definition order
  for (const ir::Value* in : graph.inputs()) live.push_back(in);
  for (const ir::Op* op : graph.ops()) {
    for (const ir::Value* r : op->results) live.push_back(r);
    if (is_view_op(op->kind)) {
      place.link(op->result(), op->operand(0), 0);
    } else if (op->kind == ir::OpKind::Slice) {
      std::optional<uint64_t> at = contiguous_slice_offset(*op);
      if (at && aligned(place.find(op->operand(0)).offset + *at)) {
        place.link(op->result(), op->operand(0), *at);
        plan.zero_copy.insert(op);
      }
    }
  }

  // Then in-place concats, in definition order (a concat's result may itself go into a later one).
  std::set<const ir::Value*> holds_output;  // class roots with a graph output among their values
  for (const ir::GraphOutput& out : graph.outputs()) holds_output.insert(place.find(out.value).root);
  for (const ir::Op* op : graph.ops()) {
    if (op->kind != ir::OpKind::Concat) continue;
    std::optional<std::vector<uint64_t>> offsets = end_to_end(*op);
    if (!offsets) continue;
    std::set<const ir::Value*> roots;
    bool ok = true;
    for (int i = 0; ok && i < op->num_operands(); ++i) {
      Place p = place.find(op->operand(i));
      const ir::Op* producer = p.root->producer;
      ok = p.offset == 0 && bytes_of(p.root) == bytes_of(op->operand(i)) && producer != nullptr &&
           producer->kind != ir::OpKind::Constant && !holds_output.count(p.root) &&
           roots.insert(p.root).second && aligned((*offsets)[size_t(i)]);
    }
    if (!ok) continue;
    for (int i = 0; i < op->num_operands(); ++i)
      place.link(place.find(op->operand(i)).root, op->result(), (*offsets)[size_t(i)]);
    plan.zero_copy.insert(op);
  }

  // Classes in definition order of their root, so the manifest is the same on every run (a map
  // keyed by pointers would order tensors by heap address). A concat's result is defined after
  // its operands: it becomes a class when its first value (in definition order) is seen.
  std::vector<std::pair<const ir::Value*, std::vector<const ir::Value*>>> members;
  std::map<const ir::Value*, size_t> class_index;
  std::map<const ir::Value*, Place> place_of;
  for (const ir::Value* v : live) {
    Place p = place.find(v);
    place_of[v] = p;
    auto [it, fresh] = class_index.try_emplace(p.root, members.size());
    if (fresh) members.push_back({p.root, {}});
    members[it->second].second.push_back(v);
  }

  // Which graph output (by index) owns each dispatch-produced class: one that is the whole of it.
  std::map<const ir::Value*, size_t> owner_output;
  std::vector<bool> needs_copy(graph.outputs().size(), false);
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ir::Value* v = graph.outputs()[i].value;
    const Place& p = place_of.at(v);
    bool src_is_input = p.root->producer == nullptr;
    bool src_is_constant = p.root->producer && p.root->producer->kind == ir::OpKind::Constant;
    bool whole = p.offset == 0 && bytes_of(v) == bytes_of(p.root);
    if (src_is_input || src_is_constant || !whole || owner_output.count(p.root)) needs_copy[i] = true;
    else owner_output[p.root] = i;
  }

  for (const ir::Value* in : graph.inputs()) plan.inputs.push_back(in->name);

  for (auto& [src, vals] : members) {
    std::string root;
    if (src->producer == nullptr) {
      root = src->name;
      plan.tensors.push_back({root, src->type.dtype, src->type.shape, TensorRole::Input, 0, ""});
      plan.tensor_of[src] = root;
    } else if (auto it = owner_output.find(src); it != owner_output.end()) {
      const ir::GraphOutput& out = graph.outputs()[it->second];
      root = out.name;
      plan.tensors.push_back({root, out.value->type.dtype, out.value->type.shape, TensorRole::Output, 0, ""});
      plan.tensor_of[out.value] = root;
    } else {
      bool constant = src->producer->kind == ir::OpKind::Constant;
      root = names.claim(src->name.empty() ? "t" + std::to_string(src->id) : src->name);
      plan.tensors.push_back({root, src->type.dtype, src->type.shape,
                              constant ? TensorRole::Constant : TensorRole::Intermediate, 0, ""});
      plan.tensor_of[src] = root;
      if (constant) plan.constant_source[root] = src;
    }
    for (const ir::Value* v : vals) {
      if (plan.tensor_of.count(v)) continue;
      std::string name = names.claim(v->name.empty() ? "t" + std::to_string(v->id) : v->name);
      TensorDesc view{name, v->type.dtype, v->type.shape, TensorRole::Intermediate, 0, root};
      view.view_offset = place_of.at(v).offset;
      plan.tensors.push_back(std::move(view));
      plan.tensor_of[v] = name;
    }
  }

  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ir::GraphOutput& out = graph.outputs()[i];
    plan.outputs.push_back(out.name);
    if (!needs_copy[i]) continue;
    plan.tensors.push_back({out.name, out.value->type.dtype, out.value->type.shape, TensorRole::Output, 0, ""});
    DispatchGroup copy;
    copy.inputs = {out.value};
    copy.copy_to = out.name;
    copy.notes = "graph output shares storage with an input, a constant or another output";
    plan.copy_groups.push_back(std::move(copy));
  }
  return plan;
}

uint64_t assign_arena_offsets(const std::vector<LiveRange>& ranges, uint64_t alignment,
                              std::map<std::string, uint64_t>& offsets, uint64_t page) {
  // Greedy by size (largest first): each tensor takes the lowest aligned offset that does not
  // overlap a placed tensor whose live range intersects its own. Simple and close to optimal for
  // the chain-like graphs CNNs produce.
  std::vector<const LiveRange*> order;
  for (const LiveRange& r : ranges) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const LiveRange* a, const LiveRange* b) { return a->bytes > b->bytes; });
  struct Placed {
    uint64_t begin, end;
  };
  std::vector<Placed> placed;
  int span = 0;
  for (const LiveRange& r : ranges) span = std::max(span, r.last + 1);
  LiveIndex live(span);
  uint64_t total = 0;
  auto align = [&](uint64_t x) { return round_up(x, alignment); };
  for (const LiveRange* r : order) {
    // The placed tensors whose live range intersects this one (the order does not matter: sorted).
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    live.for_each_overlapping(r->first, r->last, [&](size_t id) { busy.push_back({placed[id].begin, placed[id].end}); });
    std::sort(busy.begin(), busy.end());
    uint64_t size = std::max<uint64_t>(r->bytes, 4);
    uint64_t offset = 0;
    // Pages: multiples of the allocation size (aligned down); only where the arena may outgrow one.
    const uint64_t step = page >= alignment ? page / alignment * alignment : 0;
    for (bool moved = true; moved;) {
      moved = false;
      if (step != 0 && (size <= step ? offset % step + size > step : offset % step != 0)) offset = round_up(offset, step);
      for (auto [b, e] : busy)
        if (b < offset + size && e > offset) {
          offset = align(e);
          moved = true;
          break;
        }
    }
    live.add(r->first, r->last, placed.size());
    placed.push_back({offset, offset + size});
    offsets[r->tensor] = offset;
    total = std::max(total, offset + size);
  }
  return align(total);
}

}  // namespace vkc::codegen
