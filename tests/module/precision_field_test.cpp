// The manifest's optional "precision" (issue 22): written only for fp16, read back, absent means
// fp32, and an unknown value is a one-line error naming the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "module/manifest.h"
#include "support/error.h"

namespace vkc {
namespace {

Manifest tiny(Precision p) {
  Manifest m;
  m.target.name = "lavapipe";
  m.precision = p;
  m.tensors = {{"x", DType::f32, {4}, TensorRole::Input, 0, ""}, {"y", DType::f32, {4}, TensorRole::Output, 0, ""}};
  m.inputs = {"x"};
  m.outputs = {"y"};
  DispatchDesc d;
  d.name = "d0";
  d.spv = "d0.spv";
  d.bindings = {{0, "x", false}, {1, "y", true}};
  m.dispatches = {d};
  return m;
}

TEST(PrecisionField, Fp16RoundTripsAndFp32IsAbsent) {
  const std::string f16 = manifest_to_json(tiny(Precision::fp16));
  EXPECT_EQ(nlohmann::json::parse(f16)["precision"], "fp16");
  EXPECT_EQ(manifest_from_json(f16).precision, Precision::fp16);
  const std::string f32 = manifest_to_json(tiny(Precision::fp32));
  EXPECT_FALSE(nlohmann::json::parse(f32).contains("precision"));
  EXPECT_EQ(manifest_from_json(f32).precision, Precision::fp32);
}

TEST(PrecisionField, UnknownValueIsRefusedNamingTheField) {
  nlohmann::json j = nlohmann::json::parse(manifest_to_json(tiny(Precision::fp16)));
  j["precision"] = "fp8";
  try {
    manifest_from_json(j.dump(), "mod/manifest.json");
    FAIL() << "accepted precision fp8";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "mod/manifest.json.precision: unknown precision 'fp8' (expected fp32, fp16 or fp16x3)");
  }
  j["precision"] = 16;
  EXPECT_THROW(manifest_from_json(j.dump(), "mod/manifest.json"), Error);
}

TEST(PrecisionField, ParsePrecision) {
  EXPECT_EQ(parse_precision("fp32", "x"), Precision::fp32);
  EXPECT_EQ(parse_precision("fp16", "x"), Precision::fp16);
  EXPECT_THROW(parse_precision("FP16", "x"), Error);
  EXPECT_STREQ(precision_name(Precision::fp16), "fp16");
}

}  // namespace
}  // namespace vkc
