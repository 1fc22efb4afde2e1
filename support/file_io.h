// Whole-file reads and writes with one-line errors naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkc {

std::vector<uint8_t> read_file(const std::string& path);
std::string read_text_file(const std::string& path);
void write_file(const std::string& path, const uint8_t* data, size_t size);
void write_text_file(const std::string& path, const std::string& text);

// A regular file's bytes mapped read-only, for a large file that is only parsed once (an ONNX
// model): no buffer to allocate and fill, and what a parser skips is never read from disk. At most
// `limit` bytes; errors name the file. A file cut short by another process while mapped faults, as
// with any mapped file (llama.cpp's and ONNX Runtime's model loading share this).
class MappedFile {
 public:
  MappedFile(const std::string& path, uint64_t limit);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace vkc
