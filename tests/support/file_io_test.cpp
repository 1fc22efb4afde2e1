// read_file (support/file_io.h): a regular file is read in one call of the size stat reports, and
// what stat cannot size (a FIFO, /proc) is still read to its end. MappedFile maps the same bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "support/error.h"
#include "support/file_io.h"

namespace vkc {
namespace {

std::string temp_dir() {
  std::string dir = (std::filesystem::temp_directory_path() / ("vkc_file_io_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(ReadFile, RegularFilesOfEverySizeComeBackByteForByte) {
  const std::string dir = temp_dir();
  std::mt19937 rng(7);
  for (size_t n : {size_t(0), size_t(1), size_t(4095), size_t(1) << 20, (size_t(3) << 20) + 5}) {
    std::vector<uint8_t> bytes(n);
    for (uint8_t& b : bytes) b = uint8_t(rng());
    const std::string path = dir + "/f" + std::to_string(n);
    write_file(path, bytes.data(), bytes.size());
    EXPECT_EQ(read_file(path), bytes) << n;
  }
  std::filesystem::remove_all(dir);
}

TEST(ReadFile, UnsizedFilesAreReadToTheirEnd) {
  // /proc files are regular with st_size 0.
  const std::vector<uint8_t> status = read_file("/proc/self/status");
  EXPECT_NE(std::string(status.begin(), status.end()).find("Name:"), std::string::npos);

  const std::string dir = temp_dir();
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<uint8_t> sent(200000);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = uint8_t(i * 31 + 7);
  std::thread writer([&] { write_file(fifo, sent.data(), sent.size()); });
  const std::vector<uint8_t> got = read_file(fifo);
  writer.join();
  EXPECT_EQ(got, sent);
  std::filesystem::remove_all(dir);
}

TEST(ReadFile, MissingFilesAndDirectoriesAreOneLineErrors) {
  const std::string dir = temp_dir();
  for (const std::string& path : {dir + "/absent", dir}) {
    try {
      read_file(path);
      ADD_FAILURE() << path << " was read";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_EQ(what.rfind(path, 0), 0u) << what;
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(MappedFile, MapsWhatReadFileReadsAndRefusesWhatItCannot) {
  const std::string dir = temp_dir();
  std::vector<uint8_t> bytes(100003);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 13 + 5);
  write_file(dir + "/f", bytes.data(), bytes.size());
  {
    const MappedFile m(dir + "/f", bytes.size());
    ASSERT_EQ(m.size(), bytes.size());
    EXPECT_EQ(std::vector<uint8_t>(m.data(), m.data() + m.size()), bytes);
  }
  write_file(dir + "/empty", nullptr, 0);
  EXPECT_EQ(MappedFile(dir + "/empty", 0).size(), 0u);
  auto error = [](const std::string& path, uint64_t limit) {
    try {
      MappedFile m(path, limit);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("mapped");
  };
  EXPECT_EQ(error(dir + "/f", bytes.size() - 1), dir + "/f: file is 100003 bytes, more than the limit of 100002");
  EXPECT_EQ(error(dir + "/absent", 10), dir + "/absent: no such file");
  EXPECT_EQ(error(dir, 10), dir + ": no such file");  // a directory is not a regular file
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkc
