// vkc's own version (CMake's project version), recorded in the modules it writes and part of every
// on-disk cache key, so that an upgraded vkc never reuses what an older one left behind.
#pragma once

namespace vkc {

// "MAJOR.MINOR.PATCH", from project(vkc VERSION ...) in the top-level CMakeLists.txt.
const char* vkc_version();

}  // namespace vkc
