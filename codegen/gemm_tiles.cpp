#include "codegen/gemm_tiles.h"

#include "support/error.h"

namespace vkc::codegen {

std::string SimtTile::str() const {
  return cat(tm, "x", tn, "x", tk, " tile, ", rm, "x", rn, " per invocation", stages > 1 ? cat(", ", stages, " stages") : "");
}

namespace {
// Bytes of one copy of A's tile, of B's, and of the accumulator scratch (see CoopTile).
uint32_t a_tile_bytes(const CoopTile& c) {
  // Rows padded by 16 bytes: 8 float16 values or 16 int8 values.
  const uint32_t pad = c.int8() ? 16 : 8, bytes = c.int8() ? 1 : 2;
  return bytes * (c.a_kfast ? c.tm * (c.tk + pad) : c.tk * (c.tm + pad));
}
uint32_t b_tile_bytes(const CoopTile& c) {
  const uint32_t pad = c.int8() ? 16 : 8, bytes = c.int8() ? 1 : 2;
  return bytes * (c.b_kfast ? c.tn * (c.tk + pad) : c.tk * (c.tn + pad));
}
uint32_t scratch_bytes(const CoopTile& c) { return 4 * c.fm * c.fn * c.wm * c.wn; }
}  // namespace

bool CoopTile::c_scratch_in_a_tiles() const { return vec == 8 && stages * a_tile_bytes(*this) >= scratch_bytes(*this); }

uint32_t CoopTile::workgroup_memory_bytes() const {
  return stages * (a_tile_bytes(*this) + b_tile_bytes(*this)) * (split ? 2 : 1) + (split ? 4 : 0) +
         (c_scratch_in_a_tiles() ? 0 : scratch_bytes(*this));
}

std::string CoopTile::str() const {
  return cat(tm, "x", tn, "x", tk, int8() ? " int8" : split ? " fp16x3" : " fp16", " tensor cores, ", wm, "x", wn, " subgroups, ",
             vec == 8 || vec == 16 ? "16-byte" : "2-byte", " staging loads",
             default_fragment() ? "" : cat(", ", fm, "x", fn, "x", fk, " fragments"),
             stages > 1 ? cat(", ", stages, " stages") : "");
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
