#include "api/source_graph.h"

#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "ir/text_format.h"
#include "module/module_file.h"
#include "support/error.h"
#include "support/file_io.h"

namespace vkc {

namespace {

// Places constants in the byte space constants.bin + source.bin: at an equal constant tensor of
// the module where there is one (compared byte for byte among those of the same size, which
// mismatch within a few bytes when they differ), else appended to source.bin at 8-byte alignment.
class SourcePlacer : public ir::ExternalConstants {
 public:
  SourcePlacer(const ModuleImage& image, std::vector<uint8_t>& data) : constants_(image.constants), data_(data) {
    for (const TensorDesc& t : image.manifest.tensors) {
      const uint64_t size = t.size_bytes();
      if (t.role == TensorRole::Constant && t.view_of.empty() && size > 0 && t.offset <= constants_.size() &&
          size <= constants_.size() - t.offset)
        by_size_[size].push_back(t.offset);
    }
  }

  uint64_t place(const uint8_t* bytes, size_t size) override {
    auto it = by_size_.find(size);
    if (it != by_size_.end())
      for (uint64_t offset : it->second)
        if (std::memcmp(at(offset), bytes, size) == 0) return offset;
    const uint64_t offset = constants_.size() + ((data_.size() + 7) & ~uint64_t(7));
    data_.resize(offset - constants_.size());
    data_.insert(data_.end(), bytes, bytes + size);
    by_size_[size].push_back(offset);  // the same bytes again (a tied weight) are stored once
    return offset;
  }

 private:
  const uint8_t* at(uint64_t offset) const {
    return offset < constants_.size() ? constants_.data() + offset : data_.data() + (offset - constants_.size());
  }

  const std::vector<uint8_t>& constants_;
  std::vector<uint8_t>& data_;
  std::map<uint64_t, std::vector<uint64_t>> by_size_;
};

}  // namespace

SourceFiles print_source(const ir::Graph& graph, const ModuleImage& image) {
  SourceFiles files;
  SourcePlacer placer(image, files.data);
  files.text = ir::print_graph(graph, placer);
  return files;
}

ir::Graph parse_source(const SourceFiles& files, const std::vector<uint8_t>& constants, const std::string& what) {
  const uint64_t c = constants.size(), d = files.data.size();
  auto lookup = [&](uint64_t offset, uint64_t size) -> const uint8_t* {
    if (offset <= c && size <= c - offset) return constants.data() + offset;
    if (offset >= c && offset - c <= d && size <= d - (offset - c)) return files.data.data() + (offset - c);
    return nullptr;  // beyond both, or across their boundary
  };
  return ir::parse_graph(files.text, what, lookup);
}

struct SourceGraph::State {
  std::shared_ptr<const ir::Graph> graph;  // null: only the files
  std::once_flag printed;
  SourceFiles files;
};

SourceGraph::SourceGraph(SourceFiles files) {
  if (files.text.empty()) return;
  state_ = std::make_shared<State>();
  state_->files = std::move(files);
}

SourceGraph::SourceGraph(ir::Graph graph) : state_(std::make_shared<State>()) {
  state_->graph = std::make_shared<const ir::Graph>(std::move(graph));
}

const SourceFiles& SourceGraph::files(const ModuleImage& image) const {
  check(present(), "internal: the module has no source graph");
  if (state_->graph) std::call_once(state_->printed, [&] { state_->files = print_source(*state_->graph, image); });
  return state_->files;
}

ir::Graph SourceGraph::graph(const ModuleImage& image) const {
  check(present(), "internal: the module has no source graph");
  return state_->graph ? state_->graph->clone() : parse_source(state_->files, image.constants, kSourceGraphFile);
}

std::optional<SourceFiles> read_source_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir + "/" + kSourceGraphFile, ec)) return std::nullopt;
  SourceFiles files;
  files.text = read_text_file(dir + "/" + kSourceGraphFile);
  if (fs::exists(dir + "/" + kSourceDataFile, ec)) files.data = read_file(dir + "/" + kSourceDataFile);
  return files;
}

std::optional<SourceFiles> source_from_sections(std::map<std::string, std::string>& sections) {
  auto text = sections.find(kSourceGraphFile);
  if (text == sections.end()) return std::nullopt;
  SourceFiles files;
  files.text = std::move(text->second);
  auto data = sections.find(kSourceDataFile);
  if (data != sections.end()) files.data.assign(data->second.begin(), data->second.end());
  return files;
}

void write_module_with_source(const std::string& path, const ModuleImage& image, const SourceGraph& source) {
  ModuleExtras extras;
  if (source.present()) {
    const SourceFiles& files = source.files(image);
    extras[kSourceGraphFile] = files.text;
    if (!files.data.empty()) extras[kSourceDataFile].assign(files.data.begin(), files.data.end());
  }
  if (has_module_file_extension(path)) {
    write_module_file(path, image, extras);
    return;
  }
  write_module_dir(path, image);
  for (const char* name : {kSourceGraphFile, kSourceDataFile}) {
    auto it = extras.find(name);
    if (it != extras.end()) {
      write_file(path + "/" + name, reinterpret_cast<const uint8_t*>(it->second.data()), it->second.size());
    } else {
      // Saved over an earlier module: its source graph must not pass for this one's.
      std::error_code ec;
      std::filesystem::remove(path + "/" + name, ec);
    }
  }
}

}  // namespace vkc
