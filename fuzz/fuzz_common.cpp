#include "fuzz_common.h"

#include <cstdio>
#include <cstdlib>

namespace vkc::fuzz {

void fail(const std::string& what) {
  std::fprintf(stderr, "vkc fuzz property violated: %s\n", what.c_str());
  std::abort();
}

void check_error_message(const std::string& message) {
  if (message.empty()) fail("vkc::Error with an empty message");
  if (message.find('\n') != std::string::npos) fail("multi-line vkc::Error: " + message);
}

}  // namespace vkc::fuzz
