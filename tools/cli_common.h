// Shared plumbing for the command-line tools: argument scanning and the error contract
// (exit code 0 on success, 1 with a one-line "TOOL: error: ..." message on any user error; no
// crash, no stack trace).
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support/tensor.h"

namespace vkc::cli {

// Runs body() and maps every exception to the one-line error contract. Returns the exit code.
// First tunes glibc's allocator for compiling (support/allocator_tuning.h).
int run_tool(const char* tool, const std::function<int()>& body);

// A minimal flag scanner: "--flag VALUE", "--flag=VALUE", boolean "--flag", positionals.
class Args {
 public:
  Args(int argc, char** argv);
  bool flag(const std::string& name);                                // consumes --name
  std::string value(const std::string& name, const std::string& fallback = "");  // consumes
  std::vector<std::string> values(const std::string& name);           // repeated --name X
  std::vector<std::string> positionals();                              // what is left
  // Throws a usage error naming any flag nobody consumed.
  void finish() const;
  // For a flag that acts alone (--list-devices): throws a usage error naming any other argument,
  // consumed or not, which that flag would otherwise silently ignore.
  void require_alone(const std::string& name) const;
  // The same, except arguments consumed already (--device INDEX read before): for --self-test.
  void require_alone_but_consumed(const std::string& name) const;

 private:
  std::vector<std::string> args_;
  std::vector<bool> used_;
};

// "name=path.npy" -> {name, path}; error names the argument.
std::pair<std::string, std::string> split_assignment(const std::string& arg, const std::string& flag);

// Numbers from flags, parsed strictly: the whole text, no sign or space the grammar lacks, within
// [lo, hi] (so no value wraps when narrowed), finite for doubles. Errors are usage errors naming
// the flag, never an exception from std::sto*.
int64_t parse_int(const std::string& text, const std::string& flag,
                  int64_t lo = std::numeric_limits<int64_t>::min(),
                  int64_t hi = std::numeric_limits<int64_t>::max());
double parse_double(const std::string& text, const std::string& flag,
                    double lo = std::numeric_limits<double>::lowest(),
                    double hi = std::numeric_limits<double>::max());

// "NAME=1,3,224,224" (repeatable flag values) -> {NAME: shape}; errors name the flag.
std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& values);

// Output file name for a tensor name: characters outside [A-Za-z0-9_.-] become '_'.
std::string safe_file_name(const std::string& tensor_name);

// One file stem per tensor name, in order: safe_file_name(), plus "_2", "_3", ... where an earlier
// name already took it ('a/b' and 'a_b' both sanitize to a_b), so no output overwrites another.
// Deterministic: the first name keeps the plain stem.
std::vector<std::string> unique_file_names(const std::vector<std::string>& tensor_names);

// Creates DIR when missing and checks that a file can be written there, so that a bad
// --output-dir fails at once with a usage error instead of after the whole run.
void prepare_output_dir(const std::string& dir, const std::string& flag);

}  // namespace vkc::cli
