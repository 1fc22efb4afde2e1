// The validation layer is only useful if its messages fail the run. These plant deterministic
// validation errors in otherwise valid modules and check that the program refuses to load or to
// run, with the layer's message in one line.
#include <gtest/gtest.h>

#include <memory>

#include "codegen/compiler.h"
#include "common/gpu_harness.h"
#include "hostile/hostile_util.h"
#include "ir/text_format.h"

namespace vkc::hostile {
namespace {

ModuleImage compile_example(rt::Context& ctx, const std::string& example, ir::Graph& graph) {
  codegen::CompileOptions o;
  o.target = ctx.limits();
  graph = ir::parse_graph_file(test::source_path("examples/" + example));
  return codegen::compile_graph(graph, o);
}

// Loads and runs `m`; returns the error (or "(no error)") and the layer's messages, which are
// cleared so the shared context stays usable for the next test.
std::pair<std::string, std::vector<std::string>> load_and_run(rt::Context& ctx, const ModuleImage& m,
                                                              const std::map<std::string, HostTensor>& inputs) {
  ctx.clear_validation_messages();
  std::unique_ptr<rt::Program> program;
  std::string failure = error_of([&] { program = std::make_unique<rt::Program>(ctx, m); });
  if (program) failure = error_of([&] { program->execute(inputs); });
  std::vector<std::string> messages = ctx.validation_messages();
  ctx.clear_validation_messages();
  return {failure, messages};
}

// The manifest claims that a dispatch only reads a tensor its shader writes, so the runtime
// leaves out the barrier before the next dispatch that reads it: a read-after-write hazard that
// synchronization validation reports.
TEST(HostileValidation, MissingBarrierIsASynchronizationError) {
  rt::Context& ctx = test::shared_context();
  if (!ctx.validation_enabled()) GTEST_SKIP() << "needs VKC_VALIDATION=1";
  ir::Graph g;
  ModuleImage m = compile_example(ctx, "small_convnet.vkir", g);
  bool planted = false;
  auto& dispatches = m.manifest.dispatches;
  for (size_t i = 0; i + 1 < dispatches.size() && !planted; ++i)
    for (BindingDesc& b : dispatches[i].bindings) {
      if (!b.writes) continue;
      for (const BindingDesc& r : dispatches[i + 1].bindings)
        if (!r.writes && r.tensor == b.tensor) planted = true;
      if (planted) {
        b.writes = false;
        break;
      }
    }
  ASSERT_TRUE(planted) << "no dispatch feeds the next one directly in small_convnet";

  auto [failure, messages] = load_and_run(ctx, m, test::random_inputs(g, 1));
  ASSERT_FALSE(messages.empty()) << "the layer saw no hazard; load/run said: " << failure;
  EXPECT_NE(failure, "(no error)") << "a validation error did not fail the program";
  EXPECT_EQ(failure.find('\n'), std::string::npos) << failure;
  EXPECT_NE(failure.find("Vulkan validation error"), std::string::npos) << failure;
}

// The same module unmodified runs clean: the error above comes from the planted fault alone.
TEST(HostileValidation, UnmodifiedModuleRunsClean) {
  rt::Context& ctx = test::shared_context();
  ir::Graph g;
  ModuleImage m = compile_example(ctx, "small_convnet.vkir", g);
  auto [failure, messages] = load_and_run(ctx, m, test::random_inputs(g, 1));
  EXPECT_EQ(failure, "(no error)");
  EXPECT_TRUE(messages.empty()) << messages.front();
}

// A descriptor-set layout that lacks a binding the shader writes is a validation error at
// vkCreateComputePipelines; the runtime must refuse the module before recording any command
// buffer with that pipeline (the validation layer crashed when it did).
TEST(HostileValidation, BindingMissingFromTheLayoutFailsAtLoad) {
  rt::Context& ctx = test::shared_context();
  if (!ctx.validation_enabled()) GTEST_SKIP() << "needs VKC_VALIDATION=1";
  ir::Graph g;
  ModuleImage m = compile_example(ctx, "topk.vkir", g);
  m.manifest.dispatches.at(0).bindings.pop_back();  // the shader still uses it
  auto [failure, messages] = load_and_run(ctx, m, test::random_inputs(g, 1));
  ASSERT_FALSE(messages.empty()) << failure;
  EXPECT_NE(failure.find("Vulkan validation error"), std::string::npos) << failure;
}

}  // namespace
}  // namespace vkc::hostile
