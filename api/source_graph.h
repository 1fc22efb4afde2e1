// The graph a module was compiled from, as it travels with the module: source.vkir, the printed
// graph, and source.bin, the bytes of its large constants that the module's constants.bin does not
// already hold. The text's `dense_at<OFFSET>` counts through constants.bin first, then source.bin.
//
// Why: printed as hex, a model's weights doubled (ViT-B/16: 700 MB of text for 350 MB of weights,
// a .vkcm three times the ONNX file). Most weights reach constants.bin unchanged (a 12-layer
// BERT-style encoder: 255 of its 340 MB), so the source refers to those bytes where they already
// are, and only what the compiler changed (joined q/k/v weights, fp16 copies) is stored again.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "module/manifest.h"

namespace vkc {

// The source graph's constant bytes beside its text (source.vkir) in a module directory or .vkcm.
inline constexpr const char* kSourceDataFile = "source.bin";

struct SourceFiles {
  std::string text;           // source.vkir
  std::vector<uint8_t> data;  // source.bin (empty when every large constant is in constants.bin)
};

// Prints `graph` for a module whose constants.bin is `image.constants`: a large constant equal to a
// constant tensor of the manifest is referred to there, any other is appended to `data`.
SourceFiles print_source(const ir::Graph& graph, const ModuleImage& image);
// Parses the text back, resolving dense_at against `constants` (the module's constants.bin) and
// files.data. `what` names the text in errors.
ir::Graph parse_source(const SourceFiles& files, const std::vector<uint8_t>& constants, const std::string& what);

// The source graph a module holds: the files as loaded, or for a module compiled in this process
// the graph itself, printed only when saved (compiling and the module cache need only the graph).
class SourceGraph {
 public:
  SourceGraph() = default;
  explicit SourceGraph(SourceFiles files);  // no text: absent
  explicit SourceGraph(ir::Graph graph);

  bool present() const { return state_ != nullptr; }
  // Printed once (thread-safe) against the module's constants.
  const SourceFiles& files(const ModuleImage& image) const;
  ir::Graph graph(const ModuleImage& image) const;  // a copy: cloned, or parsed

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// source.vkir and source.bin from a module directory, or moved out of a .vkcm's sections (by
// name); nullopt when there is no source.vkir.
std::optional<SourceFiles> read_source_dir(const std::string& dir);
std::optional<SourceFiles> source_from_sections(std::map<std::string, std::string>& sections);
// Writes the module (directory, or one file when `path` ends in .vkcm) with its source graph when
// `source` is present: what Module::save and vk-compile write.
void write_module_with_source(const std::string& path, const ModuleImage& image, const SourceGraph& source);

}  // namespace vkc
