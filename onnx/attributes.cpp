#include "onnx/attributes.h"

#include "onnx/tensor_proto.h"
#include "support/error.h"

namespace vkc::onnx {

using AP = ::onnx::AttributeProto;

NodeAttributes::NodeAttributes(const ::onnx::NodeProto& node, std::string model_dir)
    : node_(node), model_dir_(std::move(model_dir)) {}

bool NodeAttributes::has(const std::string& name) const {
  for (const AP& a : node_.attribute())
    if (a.name() == name) return true;
  return false;
}

const AP* NodeAttributes::find(const std::string& name, int type) {
  for (const AP& a : node_.attribute()) {
    if (a.name() != name) continue;
    read_.insert(name);
    if (!a.ref_attr_name().empty())
      throw Unsupported{cat("attribute '", name, "' refers to a function attribute")};
    // Old exporters leave `type` unset; accept those when the expected field is populated.
    if (a.type() != AP::UNDEFINED && a.type() != type)
      throw Unsupported{cat("attribute '", name, "' has type ",
                            AP::AttributeType_Name(a.type()), ", expected ",
                            AP::AttributeType_Name(AP::AttributeType(type)))};
    return &a;
  }
  return nullptr;
}

int64_t NodeAttributes::get_int(const std::string& name, int64_t fallback) {
  const AP* a = find(name, AP::INT);
  return a ? a->i() : fallback;
}

double NodeAttributes::get_float(const std::string& name, double fallback) {
  const AP* a = find(name, AP::FLOAT);
  return a ? double(a->f()) : fallback;
}

std::string NodeAttributes::get_string(const std::string& name, const std::string& fallback) {
  const AP* a = find(name, AP::STRING);
  return a ? a->s() : fallback;
}

std::vector<int64_t> NodeAttributes::get_ints(const std::string& name,
                                              std::vector<int64_t> fallback) {
  const AP* a = find(name, AP::INTS);
  if (!a) return fallback;
  return {a->ints().begin(), a->ints().end()};
}

std::vector<double> NodeAttributes::get_floats(const std::string& name,
                                               std::vector<double> fallback) {
  const AP* a = find(name, AP::FLOATS);
  if (!a) return fallback;
  return {a->floats().begin(), a->floats().end()};
}

HostTensor NodeAttributes::get_tensor(const std::string& name) {
  const AP* a = find(name, AP::TENSOR);
  if (!a) throw Unsupported{cat("attribute '", name, "' is missing")};
  return tensor_from_proto(a->t(), model_dir_, cat("attribute '", name, "'"));
}

std::vector<std::string> NodeAttributes::unread() const {
  std::vector<std::string> names;
  for (const AP& a : node_.attribute())
    if (!read_.count(a.name())) names.push_back(a.name());
  return names;
}

}  // namespace vkc::onnx
