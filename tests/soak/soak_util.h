// Host-memory measurement for the soak tests.
#pragma once

#include <cstdint>

namespace vkc::soak {

// Resident set size of this process in KiB (VmRSS in /proc/self/status), 0 when unavailable.
int64_t resident_kib();

// True in builds with AddressSanitizer: its quarantine holds freed memory on purpose, so RSS
// growth there says nothing about leaks (LeakSanitizer checks those instead).
bool built_with_asan();

}  // namespace vkc::soak
