// Typed access to a NodeProto's attributes. Every read is recorded so that the driver can report
// attributes an importer never looked at as unsupported, instead of silently ignoring them.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_proto.h"
#include "support/tensor.h"

namespace vkc::onnx {

// Thrown by importers for anything valid ONNX that vkc cannot express; the driver collects these
// into one message listing every unsupported node.
struct Unsupported {
  std::string reason;
};

class NodeAttributes {
 public:
  NodeAttributes(const ::onnx::NodeProto& node, std::string model_dir);

  bool has(const std::string& name) const;
  int64_t get_int(const std::string& name, int64_t fallback);
  double get_float(const std::string& name, double fallback);
  std::string get_string(const std::string& name, const std::string& fallback);
  std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> fallback = {});
  std::vector<double> get_floats(const std::string& name, std::vector<double> fallback = {});
  HostTensor get_tensor(const std::string& name);
  // Marks an attribute as handled without reading it (e.g. one whose value is implied).
  void ignore(const std::string& name) { read_.insert(name); }

  // Attributes present on the node that no importer code read.
  std::vector<std::string> unread() const;

 private:
  const ::onnx::AttributeProto* find(const std::string& name, int type);
  const ::onnx::NodeProto& node_;
  std::string model_dir_;
  std::set<std::string> read_;
};

}  // namespace vkc::onnx
