// Reference kernels for MLX's quantization modes (FORMATS.md §2; also Ollama blobs §3 and UQFF
// Afq/Mxfp4 layers §4): packed weights with one companion scale (and bias) per group.
//
// A block is one group. Group b of a call is group ctx.first_block + b of the tensor; its scale
// sits at spec.scales + (ctx.first_block + b) * scale_size (bias likewise), so the kernels work
// on any run of whole groups the Dequantizer hands them.
//
// Operation order, all in f32 with no fused multiply-add (lib is built with -ffp-contract=off);
// the SIMD128 kernels must do exactly these roundings, in this order:
//   MlxAffine  w = (s * float(q)) + b            s, b: the group's scale and bias, exact in f32
//   MlxMxfp4   w = E2M1[nibble] * e8m0(s)         MLX E8M0: 0 -> 2^-127, 0xFF -> +inf
//   MlxMxfp8   w = e4m3(byte) * e8m0(s)           MLX E4M3: 0x7F/0xFF -> ±480
//   MlxNvfp4   no global scale:  w = E2M1[nibble] * e4m3(s)
//              MLX global scale: g = global_scale / 2688.0f (once per call; 2688 = 448 * 6),
//                                w = E2M1[nibble] * (e4m3(s) * g)
//              Ollama:           w = (E2M1[nibble] * e4m3(s)) * global_scale
//              ModelOpt:         g = global_scale (weight_scale_2), then as MLX's
//              compressed-tensors: w = E2M1[nibble] * (e4m3(s) / global_scale) (the division
//                                rounded once in f32, then the product: forward.py _dequantize)
// Every product but the affine ones and the global scales is exact or overflows to inf (E2M1
// values have 2 significant bits, E4M3 4, E8M0 is a power of two), so only those round.
// With validate = false an E8M0 0xFF scale reads +inf and E2M1 ±0 times it gives a NaN; its sign
// and payload are the platform's default NaN (x86: negative quiet NaN).
#include <string.h>

#include "../fp_convert.h"
#include "../kernel_api.h"

namespace ws {
namespace kernels {

namespace {

// FP4 E2M1: bit 3 is the sign, so 0x8 is -0.0 (as MLX's table has it).
const float kE2M1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                         -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// A companion value of an affine group (scale or bias), stored little-endian in `dtype`.
float companion_value(const uint8_t* p, DType dtype) {
  if (dtype == DType::F32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  uint16_t h = uint16_t(p[0] | (p[1] << 8));
  return dtype == DType::F16 ? fp16_to_f32(h) : bf16_to_f32_bits(h);
}

}  // namespace

void ref::MlxAffine(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const DequantSpec& spec = *ctx.spec;
  const uint32_t bits = spec.bits, group = spec.group;
  const uint32_t mask = (1u << bits) - 1;
  const size_t scale_size = spec.scale_dtype == DType::F32 ? 4 : 2;
  const size_t block_bytes = size_t(group) * bits / 8;
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint64_t g = ctx.first_block + b;
    const float s = companion_value(spec.scales + g * scale_size, spec.scale_dtype);
    const float bias = companion_value(spec.biases + g * scale_size, spec.scale_dtype);
    // The group's bytes are one LSB-first bitstream (little-endian words, element 0 in the low
    // bits): feed bytes into the low end of an accumulator and take `bits` at a time. A group
    // holds group * bits bits, a whole number of bytes, so nothing past the block is read.
    const uint8_t* p = src + b * block_bytes;
    uint32_t acc = 0, have = 0;
    for (uint32_t i = 0; i < group; ++i) {
      while (have < bits) {
        acc |= uint32_t(*p++) << have;
        have += 8;
      }
      const uint32_t q = acc & mask;
      acc >>= bits;
      have -= bits;
      const float sq = s * float(q);
      dst[i] = sq + bias;
    }
    dst += group;
  }
}

void ref::MlxMxfp4(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const uint8_t* scales = ctx.spec->scales + ctx.first_block;
  for (size_t b = 0; b < n_blocks; ++b) {
    const float s = e8m0_to_f32(scales[b]);
    const uint8_t* q = src + b * 16;
    for (int j = 0; j < 16; ++j) {  // low nibble first
      dst[2 * j] = kE2M1[q[j] & 15] * s;
      dst[2 * j + 1] = kE2M1[q[j] >> 4] * s;
    }
    dst += 32;
  }
}

void ref::MlxMxfp8(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const uint8_t* scales = ctx.spec->scales + ctx.first_block;
  for (size_t b = 0; b < n_blocks; ++b) {
    const float s = e8m0_to_f32(scales[b]);
    const uint8_t* q = src + b * 32;
    for (int j = 0; j < 32; ++j) dst[j] = e4m3_to_f32(q[j]) * s;
    dst += 32;
  }
}

void ref::MlxNvfp4(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext& ctx) {
  const DequantSpec& spec = *ctx.spec;
  const uint8_t* scales = spec.scales + ctx.first_block;
  const bool mlx_global = spec.has_global_scale && !spec.global_scale_is_ollama;
  const bool ollama_global = spec.has_global_scale && spec.global_scale_is_ollama;
  // Used only for mlx_global; ModelOpt's global scale multiplies as stored.
  const float g = spec.global_scale_is_modelopt ? spec.global_scale : spec.global_scale / 2688.0f;
  const bool divides = spec.global_scale_divides;  // compressed-tensors': the stored scale divided
  for (size_t b = 0; b < n_blocks; ++b) {
    float s = e4m3_to_f32(scales[b]);
    if (mlx_global) s = divides ? s / spec.global_scale : s * g;
    const uint8_t* q = src + b * 8;
    for (int j = 0; j < 8; ++j) {  // low nibble first
      float lo = kE2M1[q[j] & 15] * s;
      float hi = kE2M1[q[j] >> 4] * s;
      if (ollama_global) {
        lo = lo * spec.global_scale;
        hi = hi * spec.global_scale;
      }
      dst[2 * j] = lo;
      dst[2 * j + 1] = hi;
    }
    dst += 16;
  }
}

}  // namespace kernels
}  // namespace ws
