// SIMD128 kernels for MLX's quantization modes (affine 2-8 bits, mxfp4, mxfp8, nvfp4) and UQFF's
// F8Q8. Operation order is reference/mlx_quants.cpp's and reference/uqff_f8q8.cpp's:
//   affine  w = (s * float(q)) + b          mxfp4/nvfp4  w = E2M1[q] * s   (nvfp4 global: see there)
//   mxfp8   w = e4m3(q) * e8m0(s)           F8Q8         w = float(q) * (e4m3fn(d) / 448)
// At the end, the f16 kernels of affine 4 and 8 bits, mxfp4 and nvfp4 (f16_util.h).
#include "../kernel_api.h"
#include "f16_out.h"
#include "f16_util.h"
#include "simd_util.h"

namespace ws {
namespace kernels {

using namespace simd128;

namespace {

// ---- affine: unpacking `bits`-wide codes from the LSB-first bitstream ----
//
// 4 and 8 bits are whole nibbles and bytes (AffineGroup's specializations below). The other
// widths: every code of a 16-element unit (2*bits bytes) lies inside a 16-bit window starting at
// byte (bits*i)/8 of the unit, at bit offset (bits*i)%8 (offset + bits <= 15). A byte shuffle puts
// each element's window in its own u16 lane; multiplying lane i by 2^(16-bits-offset_i) moves its
// code to the top of the lane (bits above fall off) and a shift right by 16-bits leaves the code.
// One shuffle, one multiply and one shift per 8 codes.
template <int B>
struct Unpack {
  static constexpr int kOff(int i) { return (B * i) % 8; }
  static constexpr int kByte(int i) { return (B * i) / 8; }
  static constexpr int16_t kMul(int i) { return int16_t(1 << (16 - B - kOff(i))); }
  // The multipliers, read through a volatile once per call. Seen as constants, LLVM turns the
  // multiply by per-lane powers of two into a per-lane shift, which wasm SIMD lacks and its
  // backend scalarizes (eight scalar shifts per vector, a quarter of the speed).
  static v128_t multipliers() {
    static volatile int16_t table[8] = {kMul(0), kMul(1), kMul(2), kMul(3), kMul(4), kMul(5), kMul(6), kMul(7)};
    return wasm_i16x8_make(table[0], table[1], table[2], table[3], table[4], table[5], table[6], table[7]);
  }
  // The 8 codes of elements 8h..8h+7 of the unit starting at byte u of v; m = multipliers().
  template <int u, int h>
  static v128_t codes(v128_t v, v128_t m) {
    constexpr int o = u + B * h;
    const v128_t w = wasm_i8x16_shuffle(v, v, o + kByte(0), o + kByte(0) + 1, o + kByte(1), o + kByte(1) + 1, o + kByte(2),
                                        o + kByte(2) + 1, o + kByte(3), o + kByte(3) + 1, o + kByte(4), o + kByte(4) + 1,
                                        o + kByte(5), o + kByte(5) + 1, o + kByte(6), o + kByte(6) + 1, o + kByte(7),
                                        o + kByte(7) + 1);
    return wasm_u16x8_shr(wasm_i16x8_mul(w, m), 16 - B);
  }
};

// 4 codes (u32 lanes) -> y[0..4) = s * q + b: the reference's (s * float(q)) + bias.
inline void store_affine4(float* y, v128_t q, v128_t s, v128_t b) {
  wasm_v128_store(y, wasm_f32x4_add(wasm_f32x4_mul(s, wasm_f32x4_convert_i32x4(q)), b));
}
// 8 codes (u16 lanes) -> y[0..8).
inline void store_affine8(float* y, v128_t q, v128_t s, v128_t b) {
  store_affine4(y, u16_lanes<0>(q), s, b);
  store_affine4(y + 4, u16_lanes<1>(q), s, b);
}
// 16 codes (u8 lanes) -> y[0..16).
inline void store_affine16(float* y, v128_t q, v128_t s, v128_t b) {
  store_affine4(y, u8_lanes<0>(q), s, b);
  store_affine4(y + 4, u8_lanes<1>(q), s, b);
  store_affine4(y + 8, u8_lanes<2>(q), s, b);
  store_affine4(y + 12, u8_lanes<3>(q), s, b);
}

// One group of G elements at p. Units of 16 codes are 2*B bytes; one 16-byte load serves
// 16/(2B) of them. The last load of a group may reach past the group (see reach()).
template <int B, int G>
struct AffineGroup {
  static constexpr int kUnitBytes = 2 * B;
  static constexpr int kPerLoad = 16 / kUnitBytes;
  static constexpr int kUnits = G / 16;
  // 2-bit groups of 32 are two units (8 bytes) where a load would serve four: one 8-byte load.
  static constexpr bool kHalfLoad = kUnits < kPerLoad;
  static_assert(kHalfLoad ? (B == 2 && kUnits == 2) : kUnits % kPerLoad == 0, "unit layout");
  // Bytes from the group's start that its loads touch.
  static constexpr size_t reach() { return kHalfLoad ? 8 : size_t(kUnits - kPerLoad) * kUnitBytes + 16; }
  static constexpr size_t kBytes = size_t(G) * B / 8;

  struct Ctx {
    v128_t m;  // Unpack<B>::multipliers()
  };
  static Ctx prepare() { return {Unpack<B>::multipliers()}; }

  template <int u0>
  static void units_from(v128_t v, float* y, v128_t s, v128_t b, const Ctx& c) {
    using U = Unpack<B>;
    store_affine8(y + 0, U::template codes<u0, 0>(v, c.m), s, b);
    store_affine8(y + 8, U::template codes<u0, 1>(v, c.m), s, b);
  }

  static void run(const uint8_t* p, float* y, v128_t s, v128_t b, const Ctx& c) {
    if (kHalfLoad) {
      const v128_t v = wasm_v128_load64_zero(p);
      units_from<0>(v, y, s, b, c);
      units_from<(kHalfLoad ? kUnitBytes : 0)>(v, y + 16, s, b, c);
      return;
    }
    for (int u = 0; u < kUnits; u += kPerLoad) {
      const v128_t v = wasm_v128_load(p + u * kUnitBytes);
      float* yu = y + 16 * u;
      units_from<0>(v, yu, s, b, c);
      if (kPerLoad > 1) units_from<(kPerLoad > 1 ? kUnitBytes : 0)>(v, yu + 16, s, b, c);
      if (kPerLoad > 2) units_from<(kPerLoad > 2 ? 2 * kUnitBytes : 0)>(v, yu + 32, s, b, c);
      if (kPerLoad > 3) units_from<(kPerLoad > 3 ? 3 * kUnitBytes : 0)>(v, yu + 48, s, b, c);
    }
  }
};

// 4 bits: a byte holds codes 2j (low nibble) and 2j+1 (high); interleaving the nibble vectors
// byte-wise puts 16 codes in element order.
template <int G>
struct AffineGroup<4, G> {
  static constexpr size_t kBytes = G / 2;
  static constexpr size_t reach() { return kBytes; }
  struct Ctx {};
  static Ctx prepare() { return {}; }
  static void run(const uint8_t* p, float* y, v128_t s, v128_t b, const Ctx&) {
    for (size_t k = 0; k < kBytes; k += 16, y += 32) {
      const v128_t v = wasm_v128_load(p + k);
      const v128_t lo = lo_nibbles(v), hi = hi_nibbles(v);
      store_affine16(y, wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), s, b);
      store_affine16(y + 16, wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), s, b);
    }
  }
};

// 8 bits: one byte per code.
template <int G>
struct AffineGroup<8, G> {
  static constexpr size_t kBytes = G;
  static constexpr size_t reach() { return kBytes; }
  struct Ctx {};
  static Ctx prepare() { return {}; }
  static void run(const uint8_t* p, float* y, v128_t s, v128_t b, const Ctx&) {
    for (size_t k = 0; k < kBytes; k += 16) store_affine16(y + k, wasm_v128_load(p + k), s, b);
  }
};

// A group's companion value (scale or bias) in its dtype.
inline float companion(const uint8_t* base, uint64_t g, DType dt) {
  if (dt == DType::F32) {
    float f;
    memcpy(&f, base + g * 4, 4);
    return f;
  }
  const uint16_t h = load_u16(base + g * 2);
  return dt == DType::F16 ? fp16_to_f32(h) : bf16_to_f32_bits(h);
}

template <int B, int G>
void affine(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  using A = AffineGroup<B, G>;
  const DequantSpec& spec = *ctx.spec;
  const typename A::Ctx c = A::prepare();
  for (size_t b = 0; b < n; ++b) {
    const uint64_t g = ctx.first_block + b;
    const v128_t s = wasm_f32x4_splat(companion(spec.scales, g, spec.scale_dtype));
    const v128_t bias = wasm_f32x4_splat(companion(spec.biases, g, spec.scale_dtype));
    const uint8_t* p = src + b * A::kBytes;
    if constexpr (A::reach() > A::kBytes) {
      if (b + 1 == n) {
        // The last group's loads would read past the caller's input: decode it from a copy.
        alignas(16) uint8_t pad[A::reach()] = {};
        memcpy(pad, p, A::kBytes);
        A::run(pad, dst + b * G, s, bias, c);
        continue;
      }
    }
    A::run(p, dst + b * G, s, bias, c);
  }
}

template <int B>
void affine_bits(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  switch (ctx.spec->group) {
    case 32: affine<B, 32>(src, n, dst, ctx); break;
    case 64: affine<B, 64>(src, n, dst, ctx); break;
    default: affine<B, 128>(src, n, dst, ctx); break;
  }
}

// ---- FP4 / FP8 ----

// E2M1 values are bf16 numbers (two significant bits): their f32 bits are a 16-bit pattern
// shifted up by 16. Two byte tables give the pattern's high and low byte for each nibble,
// bit 3 = sign (0x8 is -0.0, as MLX's table has it).
inline v128_t e2m1_bf16_hi() {
  return wasm_i8x16_const(0x00, 0x3F, 0x3F, 0x3F, 0x40, 0x40, 0x40, 0x40, -0x80, -0x41, -0x41, -0x41, -0x40, -0x40, -0x40,
                          -0x40);
}
inline v128_t e2m1_bf16_lo() {
  return wasm_i8x16_const(0x00, 0x00, -0x80, -0x40, 0x00, 0x40, -0x80, -0x40, 0x00, 0x00, -0x80, -0x40, 0x00, 0x40, -0x80,
                          -0x40);
}

// 16 nibble codes (one per byte) -> 16 E2M1 values times s, stored at y[0..16); with kTwice, then
// times t (Ollama's global scale: a second rounding).
template <bool kTwice = false>
inline void store_e2m1_x16(float* y, v128_t nib, v128_t s, v128_t t = v128_t()) {
  const v128_t hi = wasm_i8x16_swizzle(e2m1_bf16_hi(), nib), lo = wasm_i8x16_swizzle(e2m1_bf16_lo(), nib);
  const v128_t w0 = wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t w1 = wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const v128_t z = wasm_i32x4_splat(0);
  v128_t v[4] = {wasm_f32x4_mul(wasm_i16x8_shuffle(z, w0, 0, 8, 1, 9, 2, 10, 3, 11), s),
                 wasm_f32x4_mul(wasm_i16x8_shuffle(z, w0, 4, 12, 5, 13, 6, 14, 7, 15), s),
                 wasm_f32x4_mul(wasm_i16x8_shuffle(z, w1, 0, 8, 1, 9, 2, 10, 3, 11), s),
                 wasm_f32x4_mul(wasm_i16x8_shuffle(z, w1, 4, 12, 5, 13, 6, 14, 7, 15), s)};
  for (int k = 0; k < 4; ++k) wasm_v128_store(y + 4 * k, kTwice ? wasm_f32x4_mul(v[k], t) : v[k]);
}

// Nibbles of 8 bytes in element order (low nibble first): element 2j = low nibble of byte j.
inline v128_t nibbles_interleaved_lo(v128_t q) {
  const v128_t l = lo_nibbles(q), h = hi_nibbles(q);
  return wasm_i8x16_shuffle(l, h, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}
inline v128_t nibbles_interleaved_hi(v128_t q) {
  const v128_t l = lo_nibbles(q), h = hi_nibbles(q);
  return wasm_i8x16_shuffle(l, h, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}

// MLX's E8M0 scale (e8m0_to_f32) of four groups, one byte per u32 lane: 2^(s-127), 0 -> 2^-127
// (the subnormal 0x00400000), 0xFF -> +inf (s<<23 is already 0x7F800000).
inline v128_t e8m0_x4(v128_t s) {
  return wasm_v128_bitselect(splat_u32(0x00400000u), wasm_i32x4_shl(s, 23), wasm_i32x4_eq(s, wasm_i32x4_splat(0)));
}

// MLX's E4M3 (e4m3_to_f32), one byte per u32 lane: no NaN (0x7F is 480).
inline v128_t e4m3_x4(v128_t x) {
  return wasm_v128_or(e4m3_magnitude(wasm_v128_and(x, splat_u32(0x7F))), wasm_i32x4_shl(wasm_v128_and(x, splat_u32(0x80)), 24));
}

inline v128_t load4_u8_as_u32(const uint8_t* p) { return u8_lanes<0>(wasm_v128_load32_zero(p)); }

}  // namespace

namespace simd {

static void MlxAffine_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  switch (ctx.spec->bits) {
    case 2: affine_bits<2>(src, n, dst, ctx); break;
    case 3: affine_bits<3>(src, n, dst, ctx); break;
    case 4: affine_bits<4>(src, n, dst, ctx); break;
    case 5: affine_bits<5>(src, n, dst, ctx); break;
    case 6: affine_bits<6>(src, n, dst, ctx); break;
    default: affine_bits<8>(src, n, dst, ctx); break;
  }
}

static void MlxMxfp4_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const uint8_t* scales = ctx.spec->scales + ctx.first_block;
  auto group = [&](size_t b, v128_t s) {
    const v128_t q = wasm_v128_load(src + b * 16);
    store_e2m1_x16(dst + b * 32, nibbles_interleaved_lo(q), s);
    store_e2m1_x16(dst + b * 32 + 16, nibbles_interleaved_hi(q), s);
  };
  size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    const v128_t s = e8m0_x4(load4_u8_as_u32(scales + b));
    group(b + 0, lane_splat<0>(s));
    group(b + 1, lane_splat<1>(s));
    group(b + 2, lane_splat<2>(s));
    group(b + 3, lane_splat<3>(s));
  }
  for (; b < n; ++b) group(b, wasm_f32x4_splat(e8m0_to_f32(scales[b])));
}

static void MlxMxfp8_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const uint8_t* scales = ctx.spec->scales + ctx.first_block;
  auto group = [&](size_t b, v128_t s) {
    for (int h = 0; h < 2; ++h) {
      v128_t f[4];
      e4m3x16_f32<false>(wasm_v128_load(src + b * 32 + 16 * h), f);
      float* y = dst + b * 32 + 16 * h;
      for (int k = 0; k < 4; ++k) wasm_v128_store(y + 4 * k, wasm_f32x4_mul(f[k], s));
    }
  };
  size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    const v128_t s = e8m0_x4(load4_u8_as_u32(scales + b));
    group(b + 0, lane_splat<0>(s));
    group(b + 1, lane_splat<1>(s));
    group(b + 2, lane_splat<2>(s));
    group(b + 3, lane_splat<3>(s));
  }
  for (; b < n; ++b) group(b, wasm_f32x4_splat(e8m0_to_f32(scales[b])));
}

static void MlxNvfp4_body(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  const DequantSpec& spec = *ctx.spec;
  const uint8_t* scales = spec.scales + ctx.first_block;
  const bool mlx_global = spec.has_global_scale && !spec.global_scale_is_ollama;
  const bool ollama_global = spec.has_global_scale && spec.global_scale_is_ollama;
  // 448 * 6, as the reference; ModelOpt's global scale as stored.
  const v128_t g = wasm_f32x4_splat(spec.global_scale_is_modelopt ? spec.global_scale : spec.global_scale / 2688.0f);
  const v128_t gs = wasm_f32x4_splat(spec.global_scale);
  // compressed-tensors' global scale divides the stored scale (IEEE division, as the reference).
  const bool divides = spec.global_scale_divides;
  auto global = [&](v128_t s) { return divides ? wasm_f32x4_div(s, gs) : wasm_f32x4_mul(s, g); };
  auto group = [&](size_t b, v128_t s) {
    const v128_t nib = nibbles_interleaved_lo(wasm_v128_load64_zero(src + b * 8));
    if (ollama_global) store_e2m1_x16<true>(dst + b * 16, nib, s, gs);
    else store_e2m1_x16(dst + b * 16, nib, s);
  };
  size_t b = 0;
  for (; b + 4 <= n; b += 4) {
    v128_t s = e4m3_x4(load4_u8_as_u32(scales + b));
    if (mlx_global) s = global(s);
    group(b + 0, lane_splat<0>(s));
    group(b + 1, lane_splat<1>(s));
    group(b + 2, lane_splat<2>(s));
    group(b + 3, lane_splat<3>(s));
  }
  for (; b < n; ++b) {
    v128_t s = wasm_f32x4_splat(e4m3_to_f32(scales[b]));
    if (mlx_global) s = global(s);
    group(b, s);
  }
}

static void F8Q8_body(const uint8_t* src, size_t n, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n; ++b) {
    const uint8_t* blk = src + b * 33;
    float* y = dst + b * 32;
    if ((blk[0] & 0x7F) == 0x7F) {
      // A NaN scale gives +NaN for the whole block (the reference writes it explicitly).
      const v128_t nan = splat_u32(0x7FC00000u);
      for (int k = 0; k < 32; k += 4) wasm_v128_store(y + k, nan);
      continue;
    }
    // d >= 2^-9 / 448 (or 0): d * 2^-24 is exact, so the scaled conversion applies.
    const v128_t d24 = scale24(wasm_f32x4_splat(e4m3fn_to_f32(blk[0]) / 448.0f));
    store_i8x16_scaled(y, wasm_v128_load(blk + 1), d24);
    store_i8x16_scaled(y + 16, wasm_v128_load(blk + 17), d24);
  }
}


// The exported kernels: each body through run_kernel (block bytes, block values).
void MlxAffine(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(MlxAffine_body, src, n, dst, ctx, size_t(ctx.spec->group) * ctx.spec->bits / 8, ctx.spec->group);
}
void MlxMxfp4(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(MlxMxfp4_body, src, n, dst, ctx, 16, 32);
}
void MlxMxfp8(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(MlxMxfp8_body, src, n, dst, ctx, 32, 32);
}
void MlxNvfp4(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(MlxNvfp4_body, src, n, dst, ctx, 8, 16);
}
void F8Q8(const uint8_t* src, size_t n, float* dst, const KernelContext& ctx) {
  run_kernel(F8Q8_body, src, n, dst, ctx, 33, 32);
}

// ---- f16 output ----

namespace {

constexpr float kTwoPowMinus112 = 1.925929944387236e-34f;

// The affine fast path's conditions on a group's scale or bias, by its bits as f32 (f16_util.h):
// below `limit` (as f32 bits of the magnitude) so that 15s + b (255s + b) stays below 65536, and,
// if not zero, on a grid that prescaled stays on 2^-149: any f16 (last bit >= 2^-24); a bf16 from
// 2^-30 up (last bit 2^-37); an f32 from 2^-14 up, where also s·q (which rounds, for f32) is an
// f32 normal number prescaled.
inline bool affine_companion_ok(float v, DType dt, uint32_t limit) {
  const uint32_t a = f32_to_bits(v) & 0x7FFFFFFFu;
  const uint32_t floor_bits = dt == DType::F16 ? 0u : dt == DType::BF16 ? 0x30800000u : 0x38800000u;
  return a < limit && (a >= floor_bits || a == 0);
}

// Hoisted constants (f16_util.h) of the companion checks: the magnitude mask, the scale and bias
// limits and the grid floor less one (affine_companion_ok), the u16 widening index, the f16
// magnitude mask (0x7FFF).
struct CompanionConsts {
  v128_t abs, scale_limit, bias_limit, floor_less_one, u16_index, mag16;
};

// The companions of groups g..g+3 as f32 lanes.
inline v128_t companions4(const uint8_t* base, uint64_t g, DType dt, const CompanionConsts& k) {
  if (dt == DType::F32) return wasm_v128_load(base + 4 * g);
  const v128_t h = lookup16(wasm_v128_load64_zero(base + 2 * g), k.u16_index);
  return dt == DType::F16 ? f16x4_to_f32x4(h) : wasm_i32x4_shl(h, 16);
}

// affine_companion_ok on four values at once: all ones in the lanes that pass.
inline v128_t companions4_ok(v128_t v, v128_t limit, const CompanionConsts& k) {
  const v128_t a = wasm_v128_and(v, k.abs);
  return wasm_v128_and(wasm_i32x4_lt(a, limit),
                       wasm_v128_or(wasm_i32x4_gt(a, k.floor_less_one), wasm_i32x4_eq(a, wasm_i32x4_splat(0))));
}

// Groups of G values, kBytes stored bytes each: body(src, dst, s, b) writes one group from its
// prescaled scale and bias (splatted). Companions are converted and checked four groups at a
// time; a run of four with a group outside the fast path, and the last groups, go one by one.
// Scale limits as f32 bits: 15s + b (4 bits) or 255s + b (8 bits) below 65536 with |b| < 32768.
#if defined(__wasm_simd128__)
#define WS_AFFINE_GROUPS_NOINLINE __attribute__((noinline))
#else
#define WS_AFFINE_GROUPS_NOINLINE
#endif
template <int G, int kBytes, bool kF16, class Body>
WS_AFFINE_GROUPS_NOINLINE void affine_groups_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx,
                                                 uint32_t scale_limit, Body body) {
  const DequantSpec& spec = *ctx.spec;
  const DType dt = spec.scale_dtype;
  const v128_t prescale = hoisted(wasm_f32x4_splat(kTwoPowMinus112));
  const uint32_t floor_bits = dt == DType::F16 ? 0u : dt == DType::BF16 ? 0x30800000u : 0x38800000u;
  const CompanionConsts k{hoisted(splat_u32(0x7FFFFFFFu)), hoisted(splat_u32(scale_limit)), hoisted(splat_u32(0x47000000u)),
                          hoisted(splat_u32(floor_bits - 1)),
                          hoisted(wasm_i8x16_const(0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7, -1, -1)),
                          hoisted(splat_u32(0x7FFF))};
  auto one = [&](size_t b) {
    const uint64_t g = ctx.first_block + b;
    const float sc = companion(spec.scales, g, dt), bi = companion(spec.biases, g, dt);
    if (!affine_companion_ok(sc, dt, scale_limit) || !affine_companion_ok(bi, dt, 0x47000000u)) {
      decode_f16_via_f32(MlxAffine, src + kBytes * b, 1, kBytes, G, dst + G * b, KernelContext{ctx.spec, g});
      return;
    }
    body(src + kBytes * b, dst + G * b, wasm_f32x4_splat(sc * kTwoPowMinus112), wasm_f32x4_splat(bi * kTwoPowMinus112));
  };
  auto four = [&](size_t b, v128_t sp, v128_t bp) {
    body(src + kBytes * b, dst + G * b, lane_splat<0>(sp), lane_splat<0>(bp));
    body(src + kBytes * (b + 1), dst + G * (b + 1), lane_splat<1>(sp), lane_splat<1>(bp));
    body(src + kBytes * (b + 2), dst + G * (b + 2), lane_splat<2>(sp), lane_splat<2>(bp));
    body(src + kBytes * (b + 3), dst + G * (b + 3), lane_splat<3>(sp), lane_splat<3>(bp));
  };
  size_t b = 0;
  if (kF16) {
    // f16 companions need no conversion: prescaled, they are prescaled_f16 of their bits (four
    // at once), and the limits (powers of two) are checked on the magnitude bits, which order
    // as the values do (inf and NaN above every limit). The same values and decisions as the
    // f32 route below, in a third of the operations.
    const v128_t sign16 = hoisted(splat_u32(0x8000));
    const v128_t s_lim = hoisted(splat_u32(((scale_limit >> 23) - 112u) << 10)), b_lim = hoisted(splat_u32(30u << 10));
    for (; b + 4 <= n; b += 4) {
      const uint64_t g = ctx.first_block + b;
      const v128_t hs = lookup16(wasm_v128_load64_zero(spec.scales + 2 * g), k.u16_index);
      const v128_t hb = lookup16(wasm_v128_load64_zero(spec.biases + 2 * g), k.u16_index);
      const v128_t ms = wasm_v128_and(hs, k.mag16), mb = wasm_v128_and(hb, k.mag16);
      if (!wasm_i32x4_all_true(wasm_v128_and(wasm_i32x4_lt(ms, s_lim), wasm_i32x4_lt(mb, b_lim)))) {
        for (size_t j = 0; j < 4; ++j) one(b + j);
        continue;
      }
      four(b, wasm_v128_or(wasm_i32x4_shl(ms, 13), wasm_i32x4_shl(wasm_v128_and(hs, sign16), 16)),
           wasm_v128_or(wasm_i32x4_shl(mb, 13), wasm_i32x4_shl(wasm_v128_and(hb, sign16), 16)));
    }
  } else {
    for (; b + 4 <= n; b += 4) {
      const uint64_t g = ctx.first_block + b;
      const v128_t s4 = companions4(spec.scales, g, dt, k), b4 = companions4(spec.biases, g, dt, k);
      if (!wasm_i32x4_all_true(companions4_ok(s4, k.scale_limit, k)) || !wasm_i32x4_all_true(companions4_ok(b4, k.bias_limit, k))) {
        for (size_t j = 0; j < 4; ++j) one(b + j);
        continue;
      }
      four(b, wasm_f32x4_mul(s4, prescale), wasm_f32x4_mul(b4, prescale));
    }
  }
  for (; b < n; ++b) one(b);
}

template <int G>
void affine4_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();  // constants hoisted (f16_util.h)
  const v128_t k[4] = {hoisted(wasm_f32x4_make(0, 2, 4, 6)), hoisted(wasm_f32x4_make(1, 3, 5, 7)),
                       hoisted(wasm_f32x4_make(8, 10, 12, 14)), hoisted(wasm_f32x4_make(9, 11, 13, 15))};
  // 15·2048 + 32768 < 65536.
  auto group = [&](const uint8_t* p, uint16_t* y, v128_t s, v128_t bias) {
    v128_t t[4];
    for (int i = 0; i < 4; ++i) t[i] = wasm_f32x4_add(wasm_f32x4_mul(s, k[i]), bias);
    const NibbleTable tab = table_from_prescaled(t, c);
    for (int j = 0; j < G / 2; j += 16) {
      const v128_t v = wasm_v128_load(p + j);
      const v128_t lo = nibbles_lo(v, c), hi = nibbles_hi(v, c);  // codes 2i and 2i+1
      store_codes(y + 2 * j, tab, wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
      store_codes(y + 2 * j + 16, tab, wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
    }
  };
  // f16 companions take their own loop (affine_groups_f16), a function of its own each.
  if (ctx.spec->scale_dtype == DType::F16) return affine_groups_f16<G, G / 2, true>(src, n, dst, ctx, 0x45000000u, group);
  affine_groups_f16<G, G / 2, false>(src, n, dst, ctx, 0x45000000u, group);
}

template <int G>
void affine8_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const F16Consts c = f16_consts();
  const v128_t lanes[4] = {hoisted(even_bytes_lanes(0)), hoisted(even_bytes_lanes(1)), hoisted(even_bytes_lanes(8)),
                           hoisted(even_bytes_lanes(9))};
  // 255·128 + 32768 < 65536.
  auto group = [&](const uint8_t* p, uint16_t* y, v128_t s, v128_t bias) {
    for (int j = 0; j < G; j += 16) {
      const v128_t v = wasm_v128_load(p + j);
      v128_t x[4];
      for (int k = 0; k < 4; ++k) x[k] = wasm_f32x4_add(wasm_f32x4_mul(s, wasm_f32x4_convert_i32x4(lookup16(v, lanes[k]))), bias);
      wasm_v128_store(y + j, halves_from_prescaled(x[0], x[1], c));
      wasm_v128_store(y + j + 8, halves_from_prescaled(x[2], x[3], c));
    }
  };
  if (ctx.spec->scale_dtype == DType::F16) return affine_groups_f16<G, G, true>(src, n, dst, ctx, 0x43000000u, group);
  affine_groups_f16<G, G, false>(src, n, dst, ctx, 0x43000000u, group);
}

}  // namespace

void MlxAffine_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const uint32_t bits = ctx.spec->bits, group = ctx.spec->group;
  if (bits == 4) {
    if (group == 32) return affine4_f16<32>(src, n, dst, ctx);
    if (group == 64) return affine4_f16<64>(src, n, dst, ctx);
    return affine4_f16<128>(src, n, dst, ctx);
  }
  if (bits == 8) {
    if (group == 32) return affine8_f16<32>(src, n, dst, ctx);
    if (group == 64) return affine8_f16<64>(src, n, dst, ctx);
    return affine8_f16<128>(src, n, dst, ctx);
  }
  // 2, 3, 5 and 6 bits: no f16 kernel of their own.
  decode_f16_via_f32(MlxAffine, src, n, size_t(group) * bits / 8, group, dst, ctx);
}

// E2M1 times 2^(s-127): exact, an f16 whose low byte is zero. The high bytes are E2M1's with
// (s - 127) added to the exponent field (bits 2..6); fast for s in 114..140 (0.5 * 2^(s-127)
// from 2^-14, 6 * 2^(s-127) below 65536).
void MlxMxfp4_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const uint8_t* scales = ctx.spec->scales + ctx.first_block;
  const F16Consts c = f16_consts();  // constants hoisted (f16_util.h)
  const v128_t hi_1 = hoisted(wasm_i8x16_const(0, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46, -0x80, -0x48, -0x44, -0x42,
                                               -0x40, -0x3E, -0x3C, -0x3A));  // the f16 high bytes of E2M1
  const v128_t nonzero = hoisted(wasm_i8x16_const(0, -1, -1, -1, -1, -1, -1, -1, 0, -1, -1, -1, -1, -1, -1, -1));
  for (size_t b = 0; b < n; ++b, src += 16, dst += 32) {
    const uint32_t e = scales[b];
    if (e - 114u > 26u) {
      decode_f16_via_f32(MlxMxfp4, src, 1, 16, 32, dst, KernelContext{ctx.spec, ctx.first_block + b});
      continue;
    }
    const v128_t hi = wasm_i8x16_add(hi_1, wasm_v128_and(splat_u8(uint8_t((e - 127u) << 2)), nonzero));
    const v128_t q = wasm_v128_load(src);
    const v128_t lo = nibbles_lo(q, c), hn = nibbles_hi(q, c);
    store_codes_hi(dst, hi, wasm_i8x16_shuffle(lo, hn, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), c);
    store_codes_hi(dst + 16, hi, wasm_i8x16_shuffle(lo, hn, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), c);
  }
}

// E2M1 times an E4M3 scale s: at most 2 x 4 significant bits, from 2^-10 to 6 * 480: an exact
// normal f16 (no exact path). Four groups at a time, the tables come from f16(|s|) and
// f16(1.5 |s|) (fp4_scale_pairs); codes 8..15 (and -0) carry the E2M1 sign, xor the scale's.
// Groups with a zero scale build their table from the eight magnitudes as prescaled f32
// products; every group under a global scale (the products round then: MLX E2M1 * (s * g),
// compressed-tensors E2M1 * (s / g), Ollama (E2M1 * s) * g) from the eight f32 products, each
// rounded to f16 in the vector (subnormal and overflowing halves included); only a NaN or
// infinite factor takes the exact path (runs of such groups one f32 tile at a time).
void MlxNvfp4_f16(const uint8_t* src, size_t n, uint16_t* dst, const KernelContext& ctx) {
  const DequantSpec& spec = *ctx.spec;
  const uint8_t* scales = spec.scales + ctx.first_block;
  const bool mlx_global = spec.has_global_scale && !spec.global_scale_is_ollama;
  // As the reference: once per call (ModelOpt's and compressed-tensors' as stored).
  const bool divides = spec.global_scale_divides;
  const float g = spec.global_scale_is_modelopt || divides ? spec.global_scale : spec.global_scale / 2688.0f;
  const float gs = spec.global_scale;
  const F16Consts c = f16_consts();  // constants hoisted (f16_util.h)
  const v128_t prescale = hoisted(wasm_f32x4_splat(kTwoPowMinus112));
  const v128_t abs_mask = hoisted(splat_u32(0x7FFFFFFFu));
  // Codes 0..7: E2M1 0, 0.5, 1, 1.5, 2, 3, 4, 6 from f16(|s|) (index 0) or f16(1.5 |s|) (8),
  // exponent steps -1..2 (4 per step in the high byte); codes 8..15 the same, negative.
  v128_t idx_lo[4], idx_hi[4];  // group k of four: its scale pair is 2k bytes further
  for (int k = 0; k < 4; ++k) {
    idx_lo[k] = hoisted(wasm_i8x16_add(wasm_i8x16_const(-128, 0, 0, 8, 0, 8, 0, 8, -128, 0, 0, 8, 0, 8, 0, 8), splat_u8(uint8_t(2 * k))));
    idx_hi[k] = hoisted(wasm_i8x16_add(wasm_i8x16_const(-128, 1, 1, 9, 1, 9, 1, 9, -128, 1, 1, 9, 1, 9, 1, 9), splat_u8(uint8_t(2 * k))));
  }
  const v128_t hi_add = wasm_i8x16_const(0, -4, 0, 0, 4, 4, 8, 8, -128, 124, -128, -128, -124, -124, -120, -120);
  const v128_t adds[2] = {hoisted(hi_add), hoisted(wasm_v128_xor(hi_add, splat_u8(0x80)))};  // by the scale's sign bit
  // The general variant: code c reads magnitude c & 7.
  const v128_t k_lo = wasm_f32x4_make(0, 0.5f, 1, 1.5f), k_hi = wasm_f32x4_make(2, 3, 4, 6);
  const v128_t mag_lo = wasm_i8x16_const(0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14);
  const v128_t mag_hi = wasm_i8x16_const(1, 3, 5, 7, 9, 11, 13, 15, 1, 3, 5, 7, 9, 11, 13, 15);
  const v128_t neg_codes = wasm_i8x16_const(0, 0, 0, 0, 0, 0, 0, 0, -128, -128, -128, -128, -128, -128, -128, -128);
  const uint32_t gsign = !spec.has_global_scale ? 0 : (f32_to_bits(mlx_global ? g : gs) >> 24) & 0x80;
  const v128_t ags = wasm_f32x4_splat(bits_to_f32(f32_to_bits(gs) & 0x7FFFFFFFu));  // |gs|, -0 included
  // One group from its table's eight magnitudes (u16 lanes of m) and its sign byte.
  auto group_from_magnitudes = [&](size_t b, v128_t m, uint32_t sign) {
    const NibbleTable t{lookup16(m, mag_lo), wasm_v128_or(lookup16(m, mag_hi), wasm_v128_xor(neg_codes, splat_u8(uint8_t(sign))))};
    const v128_t q = wasm_v128_load64_zero(src + 8 * b);
    store_codes(dst + 16 * b, t, wasm_i8x16_shuffle(nibbles_lo(q, c), nibbles_hi(q, c), 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
  };
  // Under a global scale the factor after E2M1 is an f32 that rounded: sg = s * g (MLX),
  // s / g (compressed-tensors), or, for Ollama, (E2M1 * s) * gs with E2M1 * s exact. The eight
  // magnitudes k * |sg| (k * |s| * |gs|) are the reference's f32 products, each rounded once to
  // f16 here by f16_bits: from 2^-14 up, prescaled by 2^-112 (exact there) and rounded in the
  // bits (65520 and up: inf); below, |v| + 0.5 rounds v to f16's subnormal grid 2^-24 in one IEEE
  // addition, the difference of the bits its mantissa. A NaN or infinite factor (a zero, inf or
  // NaN global scale with validate off; inf * 0 makes a NaN) takes the f32 kernel, exact.
  const v128_t half = hoisted(wasm_f32x4_splat(0.5f));
  const v128_t f16_min_normal = hoisted(wasm_f32x4_splat(6.103515625e-05f));  // 2^-14
  const v128_t f16_inf = hoisted(splat_u32(0x7C00u));
  auto f16_bits = [&](v128_t v) {
    const v128_t normal = wasm_u32x4_min(round_bits(wasm_f32x4_mul(v, prescale), c), f16_inf);
    const v128_t sub = wasm_i32x4_sub(wasm_f32x4_add(v, half), half);
    return wasm_v128_bitselect(sub, normal, wasm_f32x4_lt(v, f16_min_normal));
  };
  const bool gs_finite = (f32_to_bits(gs) & 0x7F800000u) != 0x7F800000u;
  auto factor_of = [&](float s) { return !mlx_global ? s * gs : divides ? s / g : s * g; };
  auto exact_path = [&](size_t b) {
    const uint32_t a = f32_to_bits(factor_of(e4m3_to_f32(scales[b]))) & 0x7FFFFFFFu;
    return a >= 0x7F800000u || (!mlx_global && !gs_finite);
  };
  // The general variant of group b.
  auto group_general = [&](size_t b) {
    const float s = e4m3_to_f32(scales[b]);
    const uint32_t sign = ((f32_to_bits(s) >> 24) & 0x80) ^ gsign;
    if (!spec.has_global_scale) {
      const v128_t as = wasm_f32x4_splat(bits_to_f32(f32_to_bits(s) & 0x7FFFFFFFu) * kTwoPowMinus112);
      group_from_magnitudes(b, wasm_u16x8_narrow_i32x4(wasm_u32x4_shr(wasm_f32x4_mul(k_lo, as), 13),
                                                       wasm_u32x4_shr(wasm_f32x4_mul(k_hi, as), 13)),
                            sign);
      return;
    }
    // (compressed-tensors: s / g, its sign s's xor g's as gsign has it.)
    v128_t lo, hi;
    if (mlx_global) {
      const v128_t as = wasm_f32x4_splat(bits_to_f32(f32_to_bits(factor_of(s)) & 0x7FFFFFFFu));
      lo = wasm_f32x4_mul(k_lo, as);
      hi = wasm_f32x4_mul(k_hi, as);
    } else {
      const v128_t as = wasm_f32x4_splat(bits_to_f32(f32_to_bits(s) & 0x7FFFFFFFu));
      lo = wasm_f32x4_mul(wasm_f32x4_mul(k_lo, as), ags);
      hi = wasm_f32x4_mul(wasm_f32x4_mul(k_hi, as), ags);
    }
    group_from_magnitudes(b, wasm_u16x8_narrow_i32x4(f16_bits(lo), f16_bits(hi)), sign);
  };
  // Four groups' codes in element order (a byte each) and their tables from the f16 pairs f
  // (fp4_scale_pairs' layout); sign_of(k): group k's sign byte (0 or 0x80).
  auto four_groups = [&](size_t b, v128_t f, uint32_t gsign7) {
    const v128_t q = wasm_v128_load(src + 8 * b), q2 = wasm_v128_load(src + 8 * b + 16);
    const v128_t l = nibbles_lo(q, c), h = nibbles_hi(q, c), l2 = nibbles_lo(q2, c), h2 = nibbles_hi(q2, c);
    const v128_t codes[4] = {wasm_i8x16_shuffle(l, h, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
                             wasm_i8x16_shuffle(l, h, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31),
                             wasm_i8x16_shuffle(l2, h2, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
                             wasm_i8x16_shuffle(l2, h2, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)};
    for (int k = 0; k < 4; ++k) {
      const NibbleTable t{lookup16(f, idx_lo[k]), wasm_i8x16_add(lookup16(f, idx_hi[k]), adds[(scales[b + k] >> 7) ^ gsign7])};
      store_codes(dst + 16 * (b + k), t, codes[k]);
    }
  };
  size_t b = 0;
  if (!spec.has_global_scale) {
    for (; b + 4 <= n; b += 4) {
      const v128_t s = wasm_f32x4_mul(wasm_v128_and(e4m3_x4(load4_u8_as_u32(scales + b)), abs_mask), prescale);
      if (wasm_v128_any_true(wasm_i32x4_eq(s, c.zero))) {
        for (size_t k = 0; k < 4; ++k) group_general(b + k);
        continue;
      }
      four_groups(b, fp4_scale_pairs(s, c), 0);
    }
  } else if (mlx_global) {
    // MLX, ModelOpt, compressed-tensors: the factor sg = s * g (s / g) of four groups at once, as
    // the reference rounds it. Where every |sg| is in [2^-13, 2^13), f16(|sg|) and f16(1.5 |sg|)
    // (rounded once from the exact prescaled values) give the tables by exponent steps as above:
    // 0.5 |sg| .. 6 |sg| are normal f16s, and each product's f32 and f16 roundings scale with it.
    const v128_t gv = wasm_f32x4_splat(g);
    const v128_t lo_lim = splat_u32(0x39000000u), hi_lim = splat_u32(0x46000000u);  // 2^-13, 2^13
    for (; b + 4 <= n; b += 4) {
      const v128_t s4 = e4m3_x4(load4_u8_as_u32(scales + b));
      const v128_t a4 = wasm_v128_and(divides ? wasm_f32x4_div(s4, gv) : wasm_f32x4_mul(s4, gv), abs_mask);
      if (!wasm_i32x4_all_true(wasm_v128_and(wasm_u32x4_ge(a4, lo_lim), wasm_u32x4_lt(a4, hi_lim)))) {
        for (size_t k = 0; k < 4; ++k) {
          if (exact_path(b + k)) decode_f16_via_f32(MlxNvfp4, src + 8 * (b + k), 1, 8, 16, dst + 16 * (b + k), KernelContext{ctx.spec, ctx.first_block + b + k});
          else group_general(b + k);
        }
        continue;
      }
      const v128_t x = wasm_f32x4_mul(a4, prescale);
      four_groups(b, wasm_u16x8_narrow_i32x4(round_bits(x, c), round_bits(wasm_f32x4_mul(x, c.one_and_half), c)), gsign >> 7);
    }
  }
  while (b < n) {
    if (!spec.has_global_scale || !exact_path(b)) {
      group_general(b++);
      continue;
    }
    size_t e = b + 1;
    while (e < n && exact_path(e)) ++e;
    decode_f16_via_f32(MlxNvfp4, src + 8 * b, e - b, 8, 16, dst + 16 * b, KernelContext{ctx.spec, ctx.first_block + b});
    b = e;
  }
}

}  // namespace simd
}  // namespace kernels
}  // namespace ws
