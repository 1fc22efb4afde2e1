// The complete example of docs/api.md: compile a model, ship it as one file, load it, run it
// synchronously and asynchronously, chain executions through device tensors, profile, and check
// against the reference interpreter. Uses only <vkc/vkc.h>.
//
//   vkc-consumer WORK_DIR
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <vkc/vkc.h>

int main(int argc, char** argv) try {
  const std::string work = argc > 1 ? argv[1] : "vkc-consumer-work";
  std::filesystem::create_directories(work);

  // A model in the IR text format (docs/ir-text-format.md); .onnx files work the same way.
  std::ofstream(work + "/model.vkir") << "graph @demo(%x: tensor<1024xf32>) {\n"
                                         "  %r = relu (%x) : tensor<1024xf32>\n"
                                         "  %y = add (%r, %x) : tensor<1024xf32>\n"
                                         "  return %y as \"y\"\n"
                                         "}\n";

  // 1. Pick a device: the best one, or VKC_DEVICE=<index or name>.
  vkc::Device device;
  std::printf("device: %s (%s), %u bytes of shared memory\n", device.info().name.c_str(),
              device.info().type.c_str(), device.limits().max_shared_memory_bytes);

  // 2. Compile for it and ship as one file; later runs just load the file.
  vkc::Module::compile(work + "/model.vkir", device).save(work + "/model.vkcm");
  vkc::Module module = vkc::Module::load(work + "/model.vkcm");

  // 3. A session: pipelines (cached on disk), constants, arena. Then run.
  vkc::Session session(device, module);
  vkc::HostTensor x(vkc::DType::f32, {1024});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, std::sin(double(i)));
  vkc::Outputs out = session.run({{{"x", x}}});
  const vkc::HostTensor& y = out.at("y");

  // 4. Asynchronous: submit returns at once; wait() delivers the outputs.
  vkc::Execution pending = session.submit({{{"x", y}}});
  vkc::HostTensor y2 = pending.wait().at("y");

  // 5. Device tensors: keep an output on the GPU and feed it to the next execution.
  vkc::RunOptions keep;
  keep.keep_on_device = {"y"};
  keep.profile = true;
  vkc::DeviceTensor on_gpu = session.run({{{"x", x}}}, keep).device.at("y");
  vkc::HostTensor y2_chained = session.run(vkc::Inputs().set("x", on_gpu)).at("y");
  for (const vkc::DispatchTiming& t : session.last_profile())
    std::printf("  %-24s %8.3f ms %8.2f GB/s\n", t.name.c_str(), t.ms, t.gbps);

  // 6. Check against the float64 reference interpreter (the module carries its source graph).
  vkc::HostTensor ref1 = module.reference({{"x", x}}).at("y");
  vkc::HostTensor ref = module.reference({{"x", ref1}}).at("y");
  double worst = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    worst = std::fmax(worst, std::fabs(y2.get_f64(i) - ref.get_f64(i)));
    worst = std::fmax(worst, std::fabs(y2_chained.get_f64(i) - ref.get_f64(i)));
  }
  std::printf("max |vkc - reference| = %.3g\n", worst);
  return worst < 1e-5 ? 0 : 1;
} catch (const vkc::Error& e) {  // every vkc failure: one line naming what went wrong
  std::fprintf(stderr, "vkc-consumer: error: %s\n", e.what());
  return 1;
}
