// Op attributes: a small typed dictionary, printed in name order so text output is deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "support/tensor.h"

namespace vkc::ir {

enum class AttrKind { Int, Float, String, Bool, Ints, Floats, IntsList, Tensor };

// IntsList holds reassociation groups ([[0, 1], [2]]); Tensor holds constant data.
using IntsList = std::vector<std::vector<int64_t>>;
using TensorPtr = std::shared_ptr<const HostTensor>;
using Attribute = std::variant<int64_t, double, std::string, bool, std::vector<int64_t>,
                               std::vector<double>, IntsList, TensorPtr>;

AttrKind attr_kind(const Attribute& a);
const char* attr_kind_name(AttrKind k);

using AttrMap = std::map<std::string, Attribute>;

}  // namespace vkc::ir
