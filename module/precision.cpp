#include "module/precision.h"

#include "support/error.h"

namespace vkc {

const char* precision_name(Precision p) {
  return p == Precision::fp16 ? "fp16" : p == Precision::fp16x3 ? "fp16x3" : "fp32";
}

Precision parse_precision(const std::string& text, const std::string& what) {
  if (text == "fp32") return Precision::fp32;
  if (text == "fp16") return Precision::fp16;
  if (text == "fp16x3") return Precision::fp16x3;
  throw Error(cat(what, ": unknown precision '", text, "' (expected fp32, fp16 or fp16x3)"));
}

}  // namespace vkc
