// Hostile .onnx files: garbage, truncation, absurd length prefixes and dims, unsupported ops. The
// importer must answer each with one vkc::Error naming the file (never a protobuf abort, a
// std::bad_alloc or a signal). While the importer is a stub these only check that contract.
#include <gtest/gtest.h>

#include "hostile/hostile_util.h"
#include "onnx/importer.h"

namespace vkc::hostile {
namespace {

std::string import_error(const std::string& path) {
  std::string message = error_of([&] { onnx::import_model(path); });
  EXPECT_NE(message, "(no error)") << path;
  EXPECT_NE(message.find(path.substr(path.rfind('/') + 1)), std::string::npos) << "does not name the file: " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

TEST(HostileOnnx, Garbage) {
  std::string path = scratch_dir("onnx-garbage") + "/garbage.onnx";
  write_bytes(path, {0xff, 0xff, 0xff, 0xff, 0x0f, 'n', 'o', 't', 'o', 'n', 'n', 'x'});
  import_error(path);
}

TEST(HostileOnnx, Empty) {
  std::string path = scratch_dir("onnx-empty") + "/empty.onnx";
  write_bytes(path, {});
  import_error(path);
}

TEST(HostileOnnx, Truncated) { import_error(data_path("truncated.onnx")); }

// A length prefix of ~2^62 bytes in a 15-byte file.
TEST(HostileOnnx, AbsurdLengthPrefix) { import_error(data_path("absurd_length.onnx")); }

// An initializer of 2^40 x 2^40 floats backed by 4 bytes, and an input dim of 2^40.
TEST(HostileOnnx, AbsurdDims) { import_error(data_path("absurd_dims.onnx")); }

// Both unsupported nodes are listed in the one message (onnx/importer.h).
TEST(HostileOnnx, UnsupportedOpsAreListedTogether) {
  std::string m = import_error(data_path("unsupported_ops.onnx"));
  EXPECT_NE(m.find("FrobnicateV2"), std::string::npos) << m;
  EXPECT_NE(m.find("NonMaxSuppression"), std::string::npos) << m;
}

// Found by fuzz_onnx: a graph output named "\n" was quoted verbatim, giving a two-line error.
// Names from the model must be escaped in messages like any other file content.
TEST(HostileOnnx, ControlCharactersInNamesStayOnOneLine) { import_error(data_path("onnx_newline_in_output_name.onnx")); }

TEST(HostileOnnx, MissingFile) { import_error(data_path("no-such-model.onnx")); }

}  // namespace
}  // namespace vkc::hostile
