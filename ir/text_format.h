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

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "ir/graph.h"

namespace vkc::ir {

std::string print_graph(const Graph& graph);

// Bytes kept beside the text: a module's source graph refers to its weights by offset
// (`dense_at<OFFSET> : type`) instead of writing them out in hex at twice their size, and the
// module writer can point at a copy it already holds (api/source_graph.h).
class ExternalConstants {
 public:
  virtual ~ExternalConstants() = default;
  // The offset at which `size` bytes equal to `data` will be found again.
  virtual uint64_t place(const uint8_t* data, size_t size) = 0;
};
// print_graph with every tensor that would print as dense_hex placed in `external` instead.
std::string print_graph(const Graph& graph, ExternalConstants& external);
// The parser's side: the `size` bytes at `offset`, or nullptr where they do not exist.
using ExternalLookup = std::function<const uint8_t*(uint64_t offset, uint64_t size)>;

// The same text with every tensor of more than a few elements (dense_hex in print_graph) written
// as `digest<"HEX">`, a hash of its bytes: what a cache key needs (api/module_cache.h) at a small
// fraction of the cost of printing the weights. Not parseable.
std::string print_graph_digest(const Graph& graph);

// Parses text; `filename` is used in messages ("file:line:col: expected ..."). Throws vkc::Error.
// The result is verified (verify_graph) before it is returned.
// `external` resolves dense_at; without it, dense_at is an error naming the line.
Graph parse_graph(const std::string& text, const std::string& filename = "<input>",
                  const ExternalLookup& external = nullptr);
Graph parse_graph_file(const std::string& path);

}  // namespace vkc::ir
