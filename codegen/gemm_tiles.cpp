#include "codegen/gemm_tiles.h"

#include "support/error.h"

namespace vkc::codegen {

std::string SimtTile::str() const {
  return cat(tm, "x", tn, "x", tk, " tile, ", rm, "x", rn, " per invocation", stages > 1 ? cat(", ", stages, " stages") : "");
}

uint32_t CoopTile::workgroup_memory_bytes() const {
  // Rows padded by 16 bytes: 8 float16 values or 16 int8 values.
  const uint32_t pad = int8() ? 16 : 8, bytes = int8() ? 1 : 2;
  uint32_t a = a_kfast ? tm * (tk + pad) : tk * (tm + pad);
  uint32_t b = b_kfast ? tn * (tk + pad) : tk * (tn + pad);
  return bytes * (a + b) + 4 * fm * fn * wm * wn;
}

std::string CoopTile::str() const {
  return cat(tm, "x", tn, "x", tk, int8() ? " int8" : " fp16", " tensor cores, ", wm, "x", wn, " subgroups, ",
             vec == 8 || vec == 16 ? "16-byte" : "2-byte", " staging loads",
             default_fragment() ? "" : cat(", ", fm, "x", fn, "x", fk, " fragments"));
}

uint32_t tile_m(const GemmTile& t) {
  return std::visit([](const auto& x) { return x.tm; }, t);
}
uint32_t tile_n(const GemmTile& t) {
  return std::visit([](const auto& x) { return x.tn; }, t);
}
uint32_t tile_k(const GemmTile& t) {
  return std::visit([](const auto& x) { return x.tk; }, t);
}
uint32_t invocations(const GemmTile& t) {
  return std::visit([](const auto& x) { return x.invocations(); }, t);
}
uint32_t workgroup_memory_bytes(const GemmTile& t) {
  return std::visit([](const auto& x) { return x.workgroup_memory_bytes(); }, t);
}
std::string describe(const GemmTile& t) {
  return std::visit([](const auto& x) { return x.str(); }, t);
}

}  // namespace vkc::codegen
