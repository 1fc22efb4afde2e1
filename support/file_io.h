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

}  // namespace vkc
