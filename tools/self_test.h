// vk-run --self-test (issue 22 item 6): one command that prints a short report to paste into a
// bug report: vkc's version, the device and driver, the cooperative-matrix gate's verdicts
// (runtime/cooperative_matrix_gate.h), a conformance subset run on that device against the
// float64 reference interpreter, and a few timings.
#pragma once

#include <iosfwd>
#include <string>

namespace vkc::cli {

// Runs the self-test on `device` (index or name; "" as vk-run picks), with bounds-checked buffer
// access when asked (vk-run --robust). Returns 0 when every check
// passed, 1 otherwise (the report says which failed).
int run_self_test(const std::string& device, bool robust_buffer_access, std::ostream& out);

}  // namespace vkc::cli
