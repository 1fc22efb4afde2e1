// The compiled-module format: what vk-compile writes and the runtime loads.
//
// A module directory holds manifest.json, one .spv per dispatch and constants.bin. The manifest is
// the single description of the module: tensors and where their bytes live, the memory plan, and
// each dispatch with its bindings, push/specialization constants, grid and workgroup memory.
// docs/module-format.md documents every field.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "module/precision.h"
#include "module/spirv_usage.h"
#include "module/target_limits.h"
#include "support/error.h"
#include "support/tensor.h"

namespace vkc {

// 2: dispatches record what they need of a device ("requires"). Version 1 manifests still load:
// their usage is read from their .spv files (docs/module-format.md, "Versioning").
// 3: a view may start inside its storage ("view_offset": slices and in-place concats, which is how
// a tensor larger than maxStorageBufferRange is bound piece by piece, issue #25). Older manifests
// have no such views and still load; an older vkc must refuse a version 3 module, since it would
// bind every view at offset 0.
inline constexpr int kModuleFormatVersion = 3;
inline constexpr int kOldestModuleFormatVersion = 1;

enum class TensorRole { Input, Output, Constant, Intermediate };
const char* tensor_role_name(TensorRole r);

// Where a tensor's bytes live at run time. Inputs and outputs each get their own buffer; constants
// live at `offset` in the constants buffer; intermediates at `offset` in the arena. A view
// (reshape) names the tensor whose bytes it shares in `view_of` and has no storage of its own.
struct TensorDesc {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  TensorRole role = TensorRole::Intermediate;
  uint64_t offset = 0;      // constants/arena only
  std::string view_of;      // non-empty for views
  uint64_t view_offset = 0;  // views: where in view_of's bytes this one starts
  uint64_t size_bytes() const { return uint64_t(shape_numel(shape)) * dtype_size(dtype); }
};

struct BindingDesc {
  uint32_t binding = 0;  // descriptor set 0
  std::string tensor;
  bool writes = false;
};

struct SpecConstant {
  uint32_t id = 0;
  uint32_t value = 0;  // 32-bit pattern (int, uint or float bits)
};

struct DispatchDesc {
  std::string name;                  // unique, also the .spv file stem
  std::string kernel;                // kernel template ("elementwise", "conv_direct", ...)
  std::string strategy;              // planner's choice, for reports
  std::vector<std::string> ops;      // IR ops fused into this dispatch (descriptions)
  std::string spv;                   // file name inside the module directory
  // content_hash of the .spv bytes as 16 hex digits, checked at load. Written since issue #24;
  // empty in older manifests, which still load (see load_spirv in manifest.cpp for why).
  std::string spv_hash;
  std::string entry_point = "main";
  std::vector<BindingDesc> bindings;
  std::vector<uint32_t> push_constants;  // 32-bit words, offset 0
  std::vector<SpecConstant> spec_constants;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  std::array<uint32_t, 3> workgroup_count{1, 1, 1};
  uint32_t workgroup_memory_bytes = 0;   // from the plan, checked against the SPIR-V
  // What else the dispatch needs of a device, recorded since format version 2 ("requires" in the
  // manifest; module/device_fit.h checks it). The binding ranges and push-constant bytes need no
  // field: they follow from `bindings` and `push_constants`.
  // The device's subgroup sizes must lie in [subgroup_sizes[0], subgroup_sizes[1]]; {0, 0}: any.
  // Set by kernels that rely on a subgroup size (tensor-core GEMM, subgroup-ranked sorts).
  std::array<uint32_t, 2> subgroup_sizes{0, 0};
  // The pipeline is created with this subgroup size (VkPipelineShaderStageRequiredSubgroupSizeCreateInfo);
  // 0: the driver picks. Recorded where a kernel relies on one size S (subgroup_sizes {S, S}) and the
  // target's size varies with S among its sizes (TargetLimits::subgroup_size_control), e.g. the
  // tensor-core GEMM planned for wave32 on AMD RDNA3. Optional in the manifest: an older vkc ignores
  // it and, finding subgroup_sizes {S, S} narrower than the device's range, refuses the module.
  uint32_t required_subgroup_size = 0;
  // Read from the .spv when compiling; an empty version means not recorded (format version 1), and
  // the device check then reads it from the .spv at load.
  SpirvUsage spirv;
  std::map<std::string, int64_t> tiles;  // planner parameters, for reports
  double flops = 0;
  double bytes = 0;                      // minimum bytes moved through device memory
  std::string notes;                     // fusion decisions and fallbacks, for reports
};

struct Manifest {
  int format_version = kModuleFormatVersion;
  // vkc's version that wrote the module (support/version.h), informational: compatibility is
  // format_version's. Empty in manifests written before it was recorded.
  std::string vkc_version;
  TargetLimits target;
  std::string source;                // what it was compiled from (file name), informational
  // The precision it was compiled in (optional in the JSON, absent: fp32); informational: the
  // tensors' dtypes say what each binding holds.
  Precision precision = Precision::fp32;
  std::vector<TensorDesc> tensors;
  std::vector<std::string> inputs;   // tensor names, in graph order
  std::vector<std::string> outputs;
  uint64_t arena_bytes = 0;
  uint64_t constants_bytes = 0;
  std::string constants_file = "constants.bin";
  std::vector<DispatchDesc> dispatches;

  const TensorDesc& tensor(const std::string& name) const;  // throws vkc::Error if absent
  const TensorDesc* find_tensor(const std::string& name) const;
  // Follows view_of links to the tensor that owns the storage.
  const TensorDesc& storage_of(const std::string& name) const;
};

// A module written in another format_version than this vkc reads. The message says whether the
// writer was older or newer and how to recompile; Module::load_or_recompile (vk-run --recompile)
// catches this type to recompile from the source graph the module carries.
class FormatVersionError : public Error {
 public:
  using Error::Error;
};

// The one-line refusal of a manifest whose format_version is `version` (absent: nullopt), written
// by vkc `written_by` ("" when unknown); `what` names the file, `module` the module's path in the
// commands it suggests ("" for a placeholder).
std::string format_version_refusal(std::optional<int> version, const std::string& written_by,
                                   const std::string& what, const std::string& module = "");

// JSON text <-> Manifest. Parsing validates structure and cross-references (bindings name known
// tensors, views resolve without cycles, storage ranges lie inside the arena/constants, .spv names
// stay inside the module directory) and throws vkc::Error with the JSON path on failure; a
// format_version other than kModuleFormatVersion (or none) throws FormatVersionError first.
// manifest_to_json writes this vkc's version as vkc_version.
std::string manifest_to_json(const Manifest& m);
Manifest manifest_from_json(const std::string& text, const std::string& what = "manifest.json",
                            const std::string& module = "");

// A module in memory: the manifest, each dispatch's SPIR-V words and the constants bytes.
struct ModuleImage {
  Manifest manifest;
  std::map<std::string, std::vector<uint32_t>> spirv;  // by DispatchDesc::spv
  std::vector<uint8_t> constants;
};

// The manifest with each dispatch's spv_hash filled in from module.spirv; the module writers
// (directory and .vkcm) record these so a damaged .spv is caught at load.
Manifest manifest_with_spirv_hashes(const ModuleImage& module);
// Checks one .spv file's bytes before they can reach a driver: whole 32-bit words, the SPIR-V
// header (magic number, version 1.0-1.6, schema 0), every instruction's word count inside the
// file, and the manifest's spv_hash when it has one. `what` names the file in the one-line error.
std::vector<uint32_t> load_spirv(const std::vector<uint8_t>& bytes, const DispatchDesc& d,
                                 const std::string& what);

void write_module_dir(const std::string& dir, const ModuleImage& module);
ModuleImage read_module_dir(const std::string& dir);

}  // namespace vkc
