#include "module/target_limits.h"

#include <algorithm>
#include <regex>

#include <nlohmann/json.hpp>

#include "module/json_exact.h"
#include "support/error.h"

namespace vkc {

bool is_coopmat_shape_name(const std::string& shape) {
  static const std::regex form(R"([1-9][0-9]{0,3}x[1-9][0-9]{0,3}x[1-9][0-9]{0,3} [a-z0-9]+\*[a-z0-9]+\+[a-z0-9]+(->[a-z0-9]+)?)");
  return std::regex_match(shape, form);
}

bool TargetLimits::offers_cooperative_matrix_shape(const std::string& shape) const {
  return std::find(cooperative_matrix_shapes.begin(), cooperative_matrix_shapes.end(), shape) !=
         cooperative_matrix_shapes.end();
}

std::string TargetLimits::coopmat_loop_shape() const {
  if (cooperative_matrix_khr) {
    if (cooperative_matrix_shapes.empty()) return kCoopMatLoopShape;
    for (const char* shape : kCoopMatLoopShapes)
      if (offers_cooperative_matrix_shape(shape)) return shape;
  }
  return cooperative_matrix_nv ? kCoopMatLoopShape : "";
}

std::vector<std::string> TargetLimits::unmet_by(const TargetLimits& d) const {
  std::vector<std::string> out;
  auto need = [&](const char* what, uint64_t have, uint64_t want) {
    if (have < want) out.push_back(cat(what, " ", have, " < ", want));
  };
  need("maxComputeSharedMemorySize", d.max_compute_shared_memory_size, max_compute_shared_memory_size);
  need("maxComputeWorkGroupInvocations", d.max_compute_work_group_invocations,
       max_compute_work_group_invocations);
  const char* axes[3] = {"maxComputeWorkGroupSize[0]", "maxComputeWorkGroupSize[1]",
                         "maxComputeWorkGroupSize[2]"};
  const char* counts[3] = {"maxComputeWorkGroupCount[0]", "maxComputeWorkGroupCount[1]",
                           "maxComputeWorkGroupCount[2]"};
  for (int i = 0; i < 3; ++i) {
    need(axes[i], d.max_compute_work_group_size[i], max_compute_work_group_size[i]);
    need(counts[i], d.max_compute_work_group_count[i], max_compute_work_group_count[i]);
  }
  need("maxStorageBufferRange", d.max_storage_buffer_range, max_storage_buffer_range);
  need("maxPushConstantsSize", d.max_push_constants_size, max_push_constants_size);
  need("maxPerStageDescriptorStorageBuffers", d.max_per_stage_descriptor_storage_buffers,
       max_per_stage_descriptor_storage_buffers);
  auto feature = [&](const char* what, bool have, bool want) {
    if (want && !have) out.push_back(cat(what, " not supported"));
  };
  feature("shaderFloat16", d.shader_float16, shader_float16);
  feature("shaderInt8", d.shader_int8, shader_int8);
  feature("shaderInt64", d.shader_int64, shader_int64);
  feature("storageBuffer16BitAccess", d.storage_buffer_16bit, storage_buffer_16bit);
  feature("storageBuffer8BitAccess", d.storage_buffer_8bit, storage_buffer_8bit);
  feature("subgroup arithmetic", d.subgroup_arithmetic, subgroup_arithmetic);
  feature("subgroup shuffle", d.subgroup_shuffle, subgroup_shuffle);
  feature("subgroup ballot", d.subgroup_ballot, subgroup_ballot);
  feature("VK_NV_cooperative_matrix", d.cooperative_matrix_nv, cooperative_matrix_nv);
  feature("VK_KHR_cooperative_matrix", d.cooperative_matrix_khr, cooperative_matrix_khr);
  feature("subgroupSizeControl for compute", d.subgroup_size_control, subgroup_size_control);
  // A plan that relies on one subgroup size needs exactly that size.
  if (subgroup_size != 0 && d.subgroup_size != 0 && d.subgroup_size != subgroup_size)
    out.push_back(cat("subgroup size ", d.subgroup_size, " != ", subgroup_size));
  return out;
}

void to_json(nlohmann::json& j, const TargetLimits& t) {
  j = nlohmann::json{
      {"name", t.name},
      {"description", t.description},
      {"vulkan_version", t.vulkan_version},
      {"max_compute_shared_memory_size", t.max_compute_shared_memory_size},
      {"max_compute_work_group_invocations", t.max_compute_work_group_invocations},
      {"max_compute_work_group_size", t.max_compute_work_group_size},
      {"max_compute_work_group_count", t.max_compute_work_group_count},
      {"subgroup_size", t.subgroup_size},
      {"min_subgroup_size", t.min_subgroup_size},
      {"max_subgroup_size", t.max_subgroup_size},
      {"subgroup_size_control", t.subgroup_size_control},
      {"max_storage_buffer_range", t.max_storage_buffer_range},
      {"max_memory_allocation_size", t.max_memory_allocation_size},
      {"max_push_constants_size", t.max_push_constants_size},
      {"min_storage_buffer_offset_alignment", t.min_storage_buffer_offset_alignment},
      {"max_per_stage_descriptor_storage_buffers", t.max_per_stage_descriptor_storage_buffers},
      {"compute_units", t.compute_units},
      {"vendor", vendor_name(t.vendor)},
      {"shader_float16", t.shader_float16},
      {"shader_int8", t.shader_int8},
      {"shader_int64", t.shader_int64},
      {"storage_buffer_16bit", t.storage_buffer_16bit},
      {"storage_buffer_8bit", t.storage_buffer_8bit},
      {"subgroup_arithmetic", t.subgroup_arithmetic},
      {"subgroup_shuffle", t.subgroup_shuffle},
      {"subgroup_ballot", t.subgroup_ballot},
      {"cooperative_matrix_nv", t.cooperative_matrix_nv},
      {"cooperative_matrix_khr", t.cooperative_matrix_khr},
      {"cooperative_matrix_shapes", t.cooperative_matrix_shapes},
  };
}


const char* vendor_name(Vendor v) {
  switch (v) {
    case Vendor::unknown: return "";
    case Vendor::nvidia: return "nvidia";
    case Vendor::amd: return "amd";
    case Vendor::intel: return "intel";
    case Vendor::arm: return "arm";
    case Vendor::qualcomm: return "qualcomm";
    case Vendor::mesa: return "mesa";
  }
  return "";
}

Vendor parse_vendor(const std::string& name) {
  for (Vendor v : {Vendor::unknown, Vendor::nvidia, Vendor::amd, Vendor::intel, Vendor::arm, Vendor::qualcomm,
                   Vendor::mesa})
    if (name == vendor_name(v)) return v;
  throw Error(cat("unknown vendor '", name, "' (expected nvidia, amd, intel, arm, qualcomm, mesa or \"\")"));
}

void from_json(const nlohmann::json& j, TargetLimits& t) {
  // Every key is optional (absent keys keep the Vulkan-minimum defaults); unknown keys are errors
  // so that a typo in a profile never silently falls back to a default.
  static const char* known[] = {"name", "description", "vulkan_version", "aliases", "sources",
                                "max_compute_shared_memory_size",
                                "max_compute_work_group_invocations", "max_compute_work_group_size",
                                "max_compute_work_group_count", "subgroup_size", "min_subgroup_size",
                                "max_subgroup_size", "subgroup_size_control", "max_storage_buffer_range", "max_memory_allocation_size",
                                "max_push_constants_size", "min_storage_buffer_offset_alignment",
                                "max_per_stage_descriptor_storage_buffers", "compute_units", "vendor", "shader_float16",
                                "shader_int8", "shader_int64", "storage_buffer_16bit",
                                "storage_buffer_8bit", "subgroup_arithmetic", "subgroup_shuffle", "subgroup_ballot",
                                "cooperative_matrix_nv", "cooperative_matrix_khr", "cooperative_matrix_shapes"};
  check(j.is_object(), "target limits must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok |= it.key() == k;
    check(ok, "unknown target-limit key '", it.key(), "'");
  }
  auto get = [&](const char* key, auto& field) {
    if (j.contains(key)) {
      bool ok = false;
      try {
        ok = get_exact(j.at(key), field);
      } catch (const nlohmann::json::exception&) {
      }
      check(ok, "target-limit key '", key, "' has the wrong type or is out of range");
    }
  };
  get("name", t.name);
  get("description", t.description);
  get("vulkan_version", t.vulkan_version);
  get("max_compute_shared_memory_size", t.max_compute_shared_memory_size);
  get("max_compute_work_group_invocations", t.max_compute_work_group_invocations);
  get("max_compute_work_group_size", t.max_compute_work_group_size);
  get("max_compute_work_group_count", t.max_compute_work_group_count);
  get("subgroup_size", t.subgroup_size);
  get("min_subgroup_size", t.min_subgroup_size);
  get("max_subgroup_size", t.max_subgroup_size);
  get("subgroup_size_control", t.subgroup_size_control);  // absent before issue 22: false
  get("max_storage_buffer_range", t.max_storage_buffer_range);
  get("max_memory_allocation_size", t.max_memory_allocation_size);  // absent before issue 25: 0
  get("max_push_constants_size", t.max_push_constants_size);
  get("min_storage_buffer_offset_alignment", t.min_storage_buffer_offset_alignment);
  get("max_per_stage_descriptor_storage_buffers", t.max_per_stage_descriptor_storage_buffers);
  get("compute_units", t.compute_units);  // absent in manifests written before it existed: 0
  std::string vendor;
  get("vendor", vendor);  // likewise: "" (unknown)
  t.vendor = parse_vendor(vendor);
  get("shader_float16", t.shader_float16);
  get("shader_int8", t.shader_int8);
  get("shader_int64", t.shader_int64);
  get("storage_buffer_16bit", t.storage_buffer_16bit);
  get("storage_buffer_8bit", t.storage_buffer_8bit);
  get("subgroup_arithmetic", t.subgroup_arithmetic);
  get("subgroup_shuffle", t.subgroup_shuffle);
  get("subgroup_ballot", t.subgroup_ballot);
  get("cooperative_matrix_nv", t.cooperative_matrix_nv);
  get("cooperative_matrix_khr", t.cooperative_matrix_khr);
  get("cooperative_matrix_shapes", t.cooperative_matrix_shapes);  // absent before issue 22: empty
  for (const std::string& shape : t.cooperative_matrix_shapes)
    check(is_coopmat_shape_name(shape), "target '", t.name, "': cooperative_matrix_shapes: '", shape,
          "' is not of the form \"16x16x16 f16*f16+f32\"");
  check(!t.cooperative_matrix_khr || t.cooperative_matrix_shapes.empty() ||
            std::any_of(std::begin(kCoopMatLoopShapes), std::end(kCoopMatLoopShapes),
                        [&](const char* s) { return t.offers_cooperative_matrix_shape(s); }),
        "target '", t.name, "': cooperative_matrix_khr is true but cooperative_matrix_shapes lists none of the "
        "float16 shapes vkc's loop runs (", kCoopMatLoopShapes[0], ", ", kCoopMatLoopShapes[1], ", ",
        kCoopMatLoopShapes[2], ", ", kCoopMatLoopShapes[3], ")");
  check(t.vulkan_version == "1.1" || t.vulkan_version == "1.2" || t.vulkan_version == "1.3",
        "target '", t.name, "': vulkan_version must be 1.1, 1.2 or 1.3, found ", t.vulkan_version);
}

}  // namespace vkc
