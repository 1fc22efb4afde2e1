// Helpers for the hostile-input suite: every bad input must end in a vkc::Error whose message is
// one line and names what was wrong; these capture that message.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "support/error.h"

namespace vkc::hostile {

// The vkc::Error message `f` throws, "(no error)" if it returns (common/test_util.h).
using test::error_of;

// Absolute path of tests/hostile/data/<name>.
std::string data_path(const std::string& name);
std::vector<uint8_t> read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);

// A fresh empty directory under the build tree for one test.
std::string scratch_dir(const std::string& name);

// Result of running a command line through /bin/sh.
struct CommandResult {
  int exit_code = -1;   // -1 when the process died of a signal
  int signal = 0;       // the signal, else 0
  std::string stderr_text;
};
CommandResult run_command(const std::string& command_line);
int count_lines(const std::string& text);

}  // namespace vkc::hostile
