// libFuzzer target: the ONNX importer and the signature reader. onnx::import_model takes a path (external data lives next
// to the model), so each input is written to a private temporary file first. Properties: a
// one-line vkc::Error or a verified graph; never a protobuf abort, a signal or another exception.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_common.h"
#include "onnx/importer.h"
#include "support/error.h"

namespace {

// One directory per fuzzing process (libFuzzer -jobs/-workers run several at once), so an
// external-data reference in a fuzzed model can only name files inside it.
const std::string& model_path() {
  static const std::string path = [] {
    char dir[] = "/tmp/vkc-fuzz-onnx-XXXXXX";
    if (!mkdtemp(dir)) vkc::fuzz::fail("mkdtemp failed");
    return std::string(dir) + "/model.onnx";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  const std::string& path = model_path();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) vkc::fuzz::fail("cannot write " + path);
  if (size && std::fwrite(data, 1, size, f) != size) vkc::fuzz::fail("short write to " + path);
  std::fclose(f);
  try {
    vkc::onnx::import_model(path);
  } catch (const vkc::Error& e) {
    vkc::fuzz::check_error_message(e.what());
  }
  // The signature reader walks the same bytes by hand (ModelSession's inputs and outputs).
  try {
    vkc::onnx::read_model_signature_io(path);
  } catch (const vkc::Error& e) {
    vkc::fuzz::check_error_message(e.what());
  }
  return 0;
}
