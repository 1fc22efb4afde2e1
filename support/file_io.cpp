#include "support/file_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

#include "support/error.h"

namespace vkc {

std::vector<uint8_t> read_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(cat(path, ": cannot open (", std::strerror(errno), ")"));
  check(!S_ISDIR(st.st_mode), path, ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  check(bool(in), path, ": cannot open");
  // One read of the size stat reported (a byte iterator took 0.25 s of a 340 MB module's load),
  // then whatever follows: pipes and /proc files report size 0, and a file may have grown.
  std::vector<uint8_t> data(size_t(st.st_size));
  in.read(reinterpret_cast<char*>(data.data()), std::streamsize(data.size()));
  data.resize(size_t(in.gcount()));
  if (in) data.insert(data.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  check(!in.bad(), path, ": read error");
  return data;
}

std::string read_text_file(const std::string& path) {
  std::vector<uint8_t> d = read_file(path);
  return std::string(d.begin(), d.end());
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  check(bool(out), path, ": cannot write (", std::strerror(errno), ")");
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  check(bool(out), path, ": write failed");
}

void write_text_file(const std::string& path, const std::string& text) {
  write_file(path, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace vkc
