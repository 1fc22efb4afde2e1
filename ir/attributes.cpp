#include "ir/attributes.h"

namespace vkc::ir {

AttrKind attr_kind(const Attribute& a) { return static_cast<AttrKind>(a.index()); }

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Bool: return "bool";
    case AttrKind::Ints: return "int list";
    case AttrKind::Floats: return "float list";
    case AttrKind::IntsList: return "list of int lists";
    case AttrKind::Tensor: return "tensor";
  }
  return "?";
}

}  // namespace vkc::ir
