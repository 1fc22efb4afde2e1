// Shared by the fuzz targets: what counts as an acceptable refusal and how a violated property
// is reported.
#pragma once

#include <string>

namespace vkc::fuzz {

// Aborts with `what` on stderr: libFuzzer saves the input as a crash. Used for properties the
// code under test must keep (round trips, limits) that no sanitizer would notice.
[[noreturn]] void fail(const std::string& what);

// A vkc::Error is the documented way to refuse an input, and its text is what a user sees after
// "error: ", so it must be one non-empty line. Anything else is a failure.
void check_error_message(const std::string& message);

}  // namespace vkc::fuzz
