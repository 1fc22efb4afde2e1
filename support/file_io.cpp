#include "support/file_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

MappedFile::MappedFile(const std::string& path, uint64_t limit) {
  struct stat st {};
  check(::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode), path, ": no such file");
  check(uint64_t(st.st_size) <= limit, path, ": file is ", st.st_size, " bytes, more than the limit of ", limit);
  size_ = size_t(st.st_size);
  if (size_ == 0) return;  // mmap refuses zero bytes; there is nothing to map
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0, path, ": cannot open the file (", std::strerror(errno), ")");
  data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int mmap_errno = errno;
  ::close(fd);
  if (data_ == MAP_FAILED) {
    data_ = nullptr;
    throw Error(cat(path, ": cannot map the file (", std::strerror(mmap_errno), ")"));
  }
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

void write_text_file(const std::string& path, const std::string& text) {
  write_file(path, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace vkc
