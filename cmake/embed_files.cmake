# vkc_embed_files(OUTPUT <cpp> NAMESPACE <ns> FUNCTION <fn> FILES <files...>)
# Generates a C++ source defining
#   const std::vector<std::pair<std::string, std::string>>& <ns>::<fn>();
# holding each file's base name and contents, regenerated whenever a file changes. Used for the
# GLSL templates in shaders/ and the target profiles in targets/, so the binaries need no data
# files at run time.
function(vkc_embed_files)
  cmake_parse_arguments(E "" "OUTPUT;NAMESPACE;FUNCTION" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${E_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${E_OUTPUT} -DNAMESPACE=${E_NAMESPACE}
            -DFUNCTION=${E_FUNCTION} "-DFILES=${E_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_files_run.cmake
    DEPENDS ${E_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_files_run.cmake
    COMMENT "Embedding ${E_FUNCTION}"
    VERBATIM)
endfunction()
