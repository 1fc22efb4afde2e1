# `cmake --install` rules: the libraries (static), the public headers (include/vkc/) with the
# internal headers they include (support/, and ir/ for vkc/graph.h), the CLIs (tools/), a CMake
# package (find_package(vkc) -> vkc::vkc and the layer targets) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(VKC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/vkc)
install(TARGETS vkc vkc_codegen vkc_runtime vkc_onnx vkc_ir vkc_module vkc_support
        EXPORT vkcTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/vkc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Public headers include these as "support/tensor.h" etc.; targets add include/vkc to the path.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/support ${PROJECT_SOURCE_DIR}/ir
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/vkc
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def" PATTERN "passes" EXCLUDE)
install(EXPORT vkcTargets NAMESPACE vkc:: DESTINATION ${VKC_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vkcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vkcConfig.cmake INSTALL_DESTINATION ${VKC_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vkcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vkcConfig.cmake ${PROJECT_BINARY_DIR}/vkcConfigVersion.cmake
        DESTINATION ${VKC_INSTALL_CMAKEDIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/vkc.pc.in ${PROJECT_BINARY_DIR}/vkc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vkc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
