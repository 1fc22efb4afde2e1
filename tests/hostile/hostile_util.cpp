#include "hostile/hostile_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace vkc::hostile {

std::string data_path(const std::string& name) { return std::string(VKC_SOURCE_DIR) + "/tests/hostile/data/" + name; }

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::string scratch_dir(const std::string& name) {
  // CTest runs test cases as parallel processes: the pid keeps their directories apart.
  std::filesystem::path dir =
      std::filesystem::path(VKC_BINARY_DIR) / "hostile-scratch" / (name + "." + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

CommandResult run_command(const std::string& command_line) {
  // stderr goes to a file: the contract under test is "exactly one line on stderr".
  std::string err_file = scratch_dir("command") + "/stderr.txt";
  int status = std::system((command_line + " >/dev/null 2>" + err_file).c_str());
  CommandResult r;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    // /bin/sh reports a child killed by signal N as exit status 128 + N.
    if (r.exit_code > 128) r.signal = r.exit_code - 128;
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  std::vector<uint8_t> err = read_bytes(err_file);
  r.stderr_text.assign(err.begin(), err.end());
  return r;
}

int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

}  // namespace vkc::hostile
