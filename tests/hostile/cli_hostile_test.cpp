// The command-line contract on hostile inputs: vk-compile and vk-run exit with code 1 and exactly
// one line on stderr, never a signal (an abort, a sanitizer report or a crash).
#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <fstream>

#include "hostile/hostile_util.h"

namespace vkc::hostile {
namespace {

std::string tool(const std::string& name) { return std::string(VKC_BINARY_DIR) + "/tools/" + name; }

// dir/relu.vkir: y = relu(x) for a 2x3 f32 x; returns its path.
std::string write_relu_model(const std::string& dir) {
  std::string model = dir + "/relu.vkir";
  std::ofstream(model) << "graph @g(%x: tensor<2x3xf32>) {\n  %y = relu (%x) : tensor<2x3xf32>\n  return %y as \"y\"\n}\n";
  return model;
}

// Compiles `model` to `out` (a directory or .vkcm) for lavapipe's profile.
void compile_for_lavapipe(const std::string& model, const std::string& out) {
  CommandResult built = run_command(tool("vk-compile") + " " + model + " -o " + out + " --target lavapipe");
  ASSERT_EQ(built.exit_code, 0) << built.stderr_text;
}

// Returns the result so that a test can also check what the line says.
CommandResult expect_one_line_error(const std::string& command_line) {
  SCOPED_TRACE(command_line);
  CommandResult r = run_command(command_line);
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << ": " << r.stderr_text;
  EXPECT_EQ(r.exit_code, 1) << r.stderr_text;
  EXPECT_EQ(count_lines(r.stderr_text), 1) << r.stderr_text;
  return r;
}

TEST(HostileCli, CompileRefusesEveryBadIrFile) {
  std::string out = scratch_dir("cli-compile");
  for (const char* f : {"truncated_body.vkir", "truncated_type.vkir", "unterminated_string.vkir", "unknown_op.vkir",
                        "undefined_value.vkir", "redefined_value.vkir", "binary_garbage.vkir",
                        "dim_overflows_int64.vkir", "constant_count_overflow.vkir", "constant_absurd_size.vkir",
                        "conv3d_wrong_filter.vkir", "rank_7.vkir"})
    expect_one_line_error(tool("vk-compile") + " " + data_path(f) + " -o " + out + "/m --target lavapipe");
}

TEST(HostileCli, CompileRefusesBadOnnx) {
  std::string out = scratch_dir("cli-onnx");
  // onnx_newline_in_output_name.onnx: a name holding a newline must still give one line.
  for (const char* f : {"truncated.onnx", "absurd_length.onnx", "absurd_dims.onnx", "unsupported_ops.onnx",
                        "onnx_newline_in_output_name.onnx"})
    expect_one_line_error(tool("vk-compile") + " " + data_path(f) + " -o " + out + "/m --target lavapipe");
}

TEST(HostileCli, RunRefusesBadNpyAndBadModules) {
  std::string dir = scratch_dir("cli-run");
  std::string model = write_relu_model(dir);
  compile_for_lavapipe(model, dir + "/mod");
  for (const char* f : {"truncated_data.npy", "bad_magic.npy"})
    expect_one_line_error(tool("vk-run") + " " + dir + "/mod --input x=" + data_path(f));

  // A manifest whose .spv points outside the module directory.
  std::vector<uint8_t> bytes = read_bytes(dir + "/mod/manifest.json");
  std::string json(bytes.begin(), bytes.end());
  size_t at = json.find("\"spv\": \"");
  ASSERT_NE(at, std::string::npos);
  at += 8;
  json.replace(at, json.find('"', at) - at, "../x.spv");
  std::ofstream(dir + "/mod/manifest.json", std::ios::trunc) << json;
  expect_one_line_error(tool("vk-run") + " " + dir + "/mod --random-inputs 1");
  expect_one_line_error(tool("vk-run") + " " + dir + "/no-such-module --random-inputs 1");
}

// Errors about the whole graph (not one op) name the file too, as the op errors do: the file that
// holds the problem must be findable from the one line alone.
TEST(HostileCli, GraphLevelErrorsNameTheFile) {
  std::string dir = scratch_dir("cli-graph-errors");
  struct Case {
    const char* file;
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"no_outputs.vkir", "  %y = relu (%x) : tensor<2xf32>\n  return\n", "graph 'g' has no outputs"},
      {"duplicate_output.vkir", "  %y = relu (%x) : tensor<2xf32>\n  return %y as \"y\", %y as \"y\"\n",
       "duplicate graph output name 'y'"},
      {"output_named_like_input.vkir", "  %y = relu (%x) : tensor<2xf32>\n  return %y as \"x\"\n",
       "graph output 'x' has the same name as a graph input"},
  };
  for (const Case& c : cases) {
    std::string path = dir + "/" + c.file;
    std::ofstream(path) << "graph @g(%x: tensor<2xf32>) {\n" << c.body << "}\n";
    std::string err =
        expect_one_line_error(tool("vk-compile") + " " + path + " -o " + dir + "/m --target lavapipe").stderr_text;
    EXPECT_NE(err.find(path + ": " + c.message), std::string::npos) << err;
  }
  // A 1-D sort of 2^30 f32 = 4 GiB, above lavapipe's 2^27-byte maxStorageBufferRange, and not
  // splittable into pieces there (every result element depends on every input element, and its
  // blocks would be more than the 64 the range split sorts by blocks). vk-run refuses it before
  // it makes 4 GiB of random inputs.
  std::string big = dir + "/above_max_storage_buffer_range.vkir";
  std::ofstream(big) << "graph @g(%x: tensor<1073741824xf32>) {\n  %y = sort (%x) : tensor<1073741824xf32>\n"
                        "  return %y as \"y\"\n}\n";
  std::string err =
      expect_one_line_error(tool("vk-compile") + " " + big + " -o " + dir + "/m --target lavapipe").stderr_text;
  EXPECT_NE(err.find("sort (" + big + ":2:8)"), std::string::npos) << err;
  EXPECT_NE(err.find("maxStorageBufferRange"), std::string::npos) << err;
  EXPECT_NE(err.find("cannot be split"), std::string::npos) << err;

  // The same graph compiled for a bigger profile: vk-run refuses it on lavapipe (the limits it
  // lacks), and --recompile fails on maxStorageBufferRange; both lines name the module.
  std::string module = dir + "/big_for_nvidia";
  CommandResult built = run_command(tool("vk-compile") + " " + big + " -o " + module + " --target nvidia");
  ASSERT_EQ(built.exit_code, 0) << built.stderr_text;
  err = expect_one_line_error(tool("vk-run") + " " + module + " --random-inputs 1").stderr_text;
  EXPECT_NE(err.find(module + ": module compiled for target 'nvidia'"), std::string::npos) << err;
  err = expect_one_line_error(tool("vk-run") + " " + module + " --random-inputs 1 --recompile").stderr_text;
  EXPECT_NE(err.find(module + ": "), std::string::npos) << err;
  EXPECT_NE(err.find("maxStorageBufferRange"), std::string::npos) << err;
}

// vk-conformance shares the flag parser: tolerances must be finite, non-negative numbers.
TEST(HostileCli, ConformanceRefusesBadTolerances) {
  std::string dir = scratch_dir("cli-conformance");
  for (const char* flags : {"--rtol nan", "--rtol -1", "--atol inf", "--atol 1e999", "--rtol 1x"})
    expect_one_line_error(tool("vk-conformance") + " " + dir + " " + flags);
}

// Issue #24 item 9: NumPy's defaults, float64 (np.random.rand) saved Fortran-order (a.T), used to
// be refused by --input. vk-run converts both, says so in one note line each, and computes with
// the right values: relu of [[-1, 2, -3], [4, -5, 6]] given column by column as float64.
TEST(HostileCli, RunConvertsFloat64AndFortranOrderInputs) {
  std::string dir = scratch_dir("cli-npy-convert");
  std::string model = write_relu_model(dir);
  compile_for_lavapipe(model, dir + "/mod");
  const std::string header = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }";
  std::string padded = header + std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
  const uint8_t prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(padded.size()), 0};
  const double column_major[6] = {-1, 4, 2, -5, -3, 6};
  // Sized up front and filled with memcpy: GCC 12 -O3 warns (-Warray-bounds, a false positive) on
  // vector::insert from string iterators (as in npy_hostile_test.cpp).
  std::vector<uint8_t> bytes(sizeof prefix + padded.size() + sizeof column_major);
  std::memcpy(bytes.data(), prefix, sizeof prefix);
  std::memcpy(bytes.data() + sizeof prefix, padded.data(), padded.size());
  std::memcpy(bytes.data() + sizeof prefix + padded.size(), column_major, sizeof column_major);
  write_bytes(dir + "/x.npy", bytes);
  CommandResult r = run_command(tool("vk-run") + " " + dir + "/mod --input x=" + dir + "/x.npy --output-dir " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("vk-run: note: " + dir + "/x.npy: Fortran-order array reordered to C order\n"),
            std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("vk-run: note: " + dir + "/x.npy: float64 converted to f32\n"), std::string::npos)
      << r.stderr_text;
  std::vector<uint8_t> out = read_bytes(dir + "/out/y.npy");
  ASSERT_GE(out.size(), 24u);
  float y[6];
  std::memcpy(y, out.data() + out.size() - 24, 24);
  const float expected[6] = {0, 2, 0, 4, 0, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], expected[i]) << i;
}

// Issue #24 item 8: a cut-off .spv reached the driver (VK_ERROR_UNKNOWN). vk-run now names the
// file and exits 1 before any GPU work, for a module directory and for a .vkcm.
TEST(HostileCli, RunRefusesATruncatedSpv) {
  std::string dir = scratch_dir("cli-truncated-spv");
  std::string model = write_relu_model(dir);
  for (const char* out : {"/mod", "/mod.vkcm"}) compile_for_lavapipe(model, dir + out);
  std::string spv;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/mod"))
    if (e.path().extension() == ".spv") spv = e.path().string();
  ASSERT_FALSE(spv.empty());
  std::vector<uint8_t> bytes = read_bytes(spv);
  bytes.resize(bytes.size() / 8 * 4);  // half, in whole words
  write_bytes(spv, bytes);
  bytes = read_bytes(dir + "/mod.vkcm");
  bytes.resize(bytes.size() - 64);
  write_bytes(dir + "/mod.vkcm", bytes);
  for (const std::string& bad : {spv, dir + "/mod.vkcm"}) {
    std::string command = tool("vk-run") + " " + (bad == spv ? dir + "/mod" : bad) + " --random-inputs 1";
    expect_one_line_error(command);
    std::string message = run_command(command).stderr_text;
    EXPECT_NE(message.find(bad + ": "), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace vkc::hostile
