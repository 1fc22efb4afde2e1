// libFuzzer target: the .vkir text parser (ir::parse_graph, which also verifies the graph).
// Properties: a vkc::Error with one line or a verified graph; and for a graph that parses, the
// documented exact round trip print -> parse -> print.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "ir/text_format.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Parsing is linear; large inputs only slow the search down without reaching new code.
  if (size > 16384) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string printed;
  try {
    vkc::ir::Graph graph = vkc::ir::parse_graph(text, "fuzz.vkir");
    printed = vkc::ir::print_graph(graph);
  } catch (const vkc::Error& e) {
    vkc::fuzz::check_error_message(e.what());
    return 0;
  }
  std::string reprinted;
  try {
    reprinted = vkc::ir::print_graph(vkc::ir::parse_graph(printed, "printed.vkir"));
  } catch (const vkc::Error& e) {
    vkc::fuzz::fail(std::string("printed graph does not parse back: ") + e.what() + "\n" + printed);
  }
  if (reprinted != printed)
    vkc::fuzz::fail("print -> parse -> print is not exact:\n" + printed + "\n---\n" + reprinted);
  return 0;
}
