#include "support/version.h"

// Defined for this file only (support/CMakeLists.txt), so that a version bump recompiles one file.
#ifndef VKC_VERSION_STRING
#error "VKC_VERSION_STRING must be defined by the build (support/CMakeLists.txt)"
#endif

namespace vkc {

const char* vkc_version() { return VKC_VERSION_STRING; }

}  // namespace vkc
