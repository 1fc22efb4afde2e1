// One error type for every user-facing failure in vkc.
//
// Why one type: the CLIs turn any vkc::Error into a single line on stderr and exit code 1, so every
// layer (IR verifier, parser, planner, runtime) reports problems the same way. Messages are one line
// and name the file/node, op, operand and dim involved; they never contain a newline.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace vkc {

// Escapes control characters ("\n" -> "\\n", other bytes below 0x20 -> "\\xHH") so a message
// stays on one line whatever names from a model or file it quotes.
std::string one_line(const std::string& text);

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(one_line(message)) {}
};

// An Error about the inputs a caller gave an execution (an unknown or missing name, a dtype or
// shape that does not fit): language bindings raise it as their "bad argument" error (Python's
// ValueError), every other Error as a runtime error.
class InputError : public Error {
 public:
  using Error::Error;
};

// Builds a message from stream-able parts: throw Error(cat("conv '", name, "': bad dim ", d)).
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// Throws vkc::Error with the concatenated parts when `condition` is false.
template <typename... Parts>
void check(bool condition, const Parts&... parts) {
  if (!condition) throw Error(cat(parts...));
}

// Throws vkc::InputError with the concatenated parts when `condition` is false.
template <typename... Parts>
void check_input(bool condition, const Parts&... parts) {
  if (!condition) throw InputError(cat(parts...));
}

}  // namespace vkc
