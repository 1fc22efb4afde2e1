// Test helper: builds small ONNX models with the protobuf API and writes them to a scratch dir.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "onnx/importer.h"
#include "onnx/onnx_proto.h"
#include "support/error.h"
#include "support/tensor.h"

namespace vkc::test {

class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset = 17) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("g");
  }

  ::onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  ::onnx::ModelProto& proto() { return model_; }

  // dims: >= 0 static, -1 dynamic (named dim_param "N").
  void input(const std::string& name, const std::vector<int64_t>& dims, int elem = 1) {
    fill_value_info(graph().add_input(), name, dims, elem);
  }
  // dims: a number is static, anything else a symbolic dim of that name ("batch", "seq").
  void input_symbolic(const std::string& name, const std::vector<std::string>& dims, int elem = 1) {
    auto* v = graph().add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const std::string& d : dims) {
      auto* dim = shape->add_dim();
      if (!d.empty() && d.find_first_not_of("0123456789") == std::string::npos) dim->set_dim_value(std::stoll(d));
      else dim->set_dim_param(d);
    }
  }
  void output(const std::string& name, int elem = 1) {
    auto* v = graph().add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }
  ::onnx::TensorProto* initializer(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<float>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return t;
  }
  ::onnx::TensorProto* initializer_i64(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return t;
  }
  ::onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }
  static void attr_int(::onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_float(::onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr_ints(::onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr_string(::onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  // Writes dir/model.onnx (dir is created) and returns its path.
  std::string write(const std::string& dir) const {
    std::filesystem::create_directories(dir);
    std::string path = dir + "/model.onnx";
    std::ofstream out(path, std::ios::binary);
    model_.SerializeToOstream(&out);
    return path;
  }

 private:
  static void fill_value_info(::onnx::ValueInfoProto* v, const std::string& name,
                              const std::vector<int64_t>& dims, int elem) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
      else dim->set_dim_param("N");
    }
  }
  ::onnx::ModelProto model_;
};

// The scratch directories this process made, removed when it exits (every CTest case is its own
// process, so /tmp does not fill up run after run); VKC_KEEP_SCRATCH=1 keeps them to look at.
struct ScratchDirs {
  std::vector<std::filesystem::path> dirs;
  ~ScratchDirs() {
    if (std::getenv("VKC_KEEP_SCRATCH")) return;
    std::error_code ec;
    for (const auto& d : dirs) std::filesystem::remove_all(d, ec);
  }
};

// The vkc::Error importing `path` gives, checked to be one line, or "(no error)".
inline std::string import_error(const std::string& path, const onnx::ImportOptions& options = {}) {
  try {
    onnx::import_model(path, options);
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  }
  return "(no error)";
}

// A fresh scratch directory per test.
inline std::string scratch_dir(const std::string& test) {
  static ScratchDirs made;
  auto dir = std::filesystem::temp_directory_path() /
             ("vkc_onnx_" + std::to_string(::getpid()) + "_" + test);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  made.dirs.push_back(dir);
  return dir.string();
}

}  // namespace vkc::test
