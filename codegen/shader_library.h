// GLSL kernel templates from shaders/, embedded into the binary at build time.
#pragma once

#include <string>
#include <vector>

namespace vkc::codegen {

// The text of shaders/NAME.comp (or .glsl); throws vkc::Error "internal: no shader template NAME".
const std::string& shader_source(const std::string& name);
std::vector<std::string> shader_names();

// Specializes a template: every "${KEY}" is replaced by its value; an unknown or leftover key is a
// compiler bug and throws vkc::Error naming the template and the key.
std::string instantiate_shader(const std::string& name,
                               const std::vector<std::pair<std::string, std::string>>& values);
// The same for template text that is not in the library (exposed for tests); `name` is for errors.
std::string instantiate_template(const std::string& name, const std::string& text,
                                 const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace vkc::codegen
