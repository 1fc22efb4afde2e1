// The textual IR (.vkir): MLIR-like, one op per line, exact print -> parse -> print round trip.
//
//   graph @main(%x: tensor<1x2x3xf32>, %w: tensor<2x2x2xf32>) {
//     %y = conv "c1" (%x, %w) {filter_layout = "CWF", input_layout = "NWC", output_layout = "NWC"} : tensor<1x2x2xf32>
//     %v, %i = topk (%y) {k = 1} : tensor<1x2x1xf32>, tensor<1x2x1xi64>
//     return %y as "out", %i
//   }
//
// docs/ir-text-format.md gives the grammar.
#pragma once

#include <string>

#include "ir/graph.h"

namespace vkc::ir {

std::string print_graph(const Graph& graph);

// The same text with every tensor of more than a few elements (dense_hex in print_graph) written
// as `digest<"HEX">`, a hash of its bytes: what a cache key needs (api/module_cache.h) at a small
// fraction of the cost of printing the weights. Not parseable.
std::string print_graph_digest(const Graph& graph);

// Parses text; `filename` is used in messages ("file:line:col: expected ..."). Throws vkc::Error.
// The result is verified (verify_graph) before it is returned.
Graph parse_graph(const std::string& text, const std::string& filename = "<input>");
Graph parse_graph_file(const std::string& path);

}  // namespace vkc::ir
