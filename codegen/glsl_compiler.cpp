#include "codegen/glsl_compiler.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include "codegen/spirv_env.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

// glslang keeps process-wide tables (symbol tables, pool allocators) that must be set up once
// before any TShader exists; after that, separate TShader/TProgram objects may compile on
// separate threads.
void init_glslang_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    glslang::InitializeProcess();
    std::atexit([] { glslang::FinalizeProcess(); });
  });
}

struct Env {
  glslang::EShTargetClientVersion client;
  glslang::EShTargetLanguageVersion spirv;
};

// Vulkan 1.1 guarantees SPIR-V 1.3, Vulkan 1.2 SPIR-V 1.5 (codegen/spirv_env.h says why 1.2 is the cap).
Env env_for(const TargetLimits& t) {
  if (kernel_vulkan_minor(t) == 1) return {glslang::EShTargetVulkan_1_1, glslang::EShTargetSpv_1_3};
  return {glslang::EShTargetVulkan_1_2, glslang::EShTargetSpv_1_5};
}

// The first line of the log that says ERROR (glslang prefixes each diagnostic), else the first
// non-empty line; the message must stay on one line.
std::string first_error_line(const std::string& log) {
  std::string fallback;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(pos, end - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.rfind("ERROR:", 0) == 0) return line;
    if (fallback.empty() && !line.empty()) fallback = line;
    pos = end + 1;
  }
  return fallback.empty() ? "(no diagnostic from glslang)" : fallback;
}

// VKC_DUMP_SHADERS=dir writes each kernel's GLSL (and, on failure, glslang's full log) there: the
// one-line error cannot carry the whole log, and the source is generated, so this is the only way
// to see what the compiler was given.
void dump(const std::string& kernel_name, const std::string& suffix, const std::string& text) {
  const char* dir = std::getenv("VKC_DUMP_SHADERS");
  if (dir == nullptr || *dir == '\0') return;
  std::string file = kernel_name;
  for (char& c : file)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  std::ofstream(std::string(dir) + "/" + file + suffix) << text;
}

}  // namespace

std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& kernel_name,
                                   const TargetLimits& target) {
  init_glslang_once();
  const Env env = env_for(target);
  dump(kernel_name, ".comp", source);

  glslang::TShader shader(EShLangCompute);
  const char* text = source.c_str();
  const int length = static_cast<int>(source.size());
  const char* file_name = kernel_name.c_str();
  shader.setStringsWithLengthsAndNames(&text, &length, &file_name, 1);
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, env.client);
  shader.setEnvTarget(glslang::EShTargetSpv, env.spirv);
  const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);

  auto fail = [&](const std::string& log) -> Error {
    dump(kernel_name, ".log", log);
    return Error(cat("internal: kernel '", kernel_name, "' failed to compile: ",
                     first_error_line(log)));
  };
  if (!shader.parse(GetDefaultResources(), 450, false, messages))
    throw fail(std::string(shader.getInfoLog()) + shader.getInfoDebugLog());

  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages))
    throw fail(std::string(program.getInfoLog()) + program.getInfoDebugLog());

  std::vector<uint32_t> spirv;
  spv::SpvBuildLogger logger;
  glslang::SpvOptions options;
  options.disableOptimizer = true;  // SPIRV-Tools runs separately (optimize_spirv)
  options.validate = false;         // validate_spirv does this with the target's environment
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv, &logger, &options);
  std::string messages_out = logger.getAllMessages();
  if (spirv.empty() || messages_out.find("error:") != std::string::npos)
    throw fail(messages_out.empty() ? "ERROR: glslang produced no SPIR-V" : messages_out);
  return spirv;
}

}  // namespace vkc::codegen
