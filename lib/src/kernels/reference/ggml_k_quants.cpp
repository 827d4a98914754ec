// Reference kernels for GGML's K-quants: 256-element super-blocks with packed sub-block scales
// (FORMATS.md §6; ggml's dequantize_row_q2_K .. _q8_K).
//
// Rounding: each output is formed exactly as ggml forms it. The sub-block scale is d·sc (an fp16
// times an integer below 64: exact), the value is that times a small integer (still exact), and
// where there is a minimum, dmin·m is subtracted last — the one rounding step. Q8_K differs: its
// d is a float32, so d·q (q an int8) rounds once. The build does not contract a·b - c into an FMA.
#include "../kernel_api.h"
#include "ggml_blocks.h"

namespace ws {
namespace kernels {

using ggml::fp16_at;

namespace {

// Q4_K / Q5_K: eight 6-bit (scale, min) pairs packed into 12 bytes. Pairs 0..3 are the low six
// bits of bytes 0..3 (scales) and 4..7 (mins); pairs 4..7 keep their low four bits in bytes 8..11
// (scale in the low nibble, min in the high one) and their top two bits in the spare top bits of
// bytes 0..3 (scales) and 4..7 (mins).
inline void k4_scale_min(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

}  // namespace

// {u8 scales[16]; u8 qs[64]; fp16 d; fp16 dmin}. Each scales byte serves 16 values: low nibble
// scale, high nibble min. The 2-bit quants are interleaved: within each 128-value half, byte l of
// its 32 qs bytes carries values l, l+32, l+64, l+96 at shifts 0, 2, 4, 6.
void ref::Q2_K(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 84) {
    const uint8_t* scales = src;
    const float d = fp16_at(src + 80);
    const float dmin = fp16_at(src + 82);
    int is = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = src + 16 + 32 * half;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part) {  // the two 16-value runs sharing this shift
          const uint8_t sc = scales[is++];
          const float dl = d * float(sc & 0x0F);
          const float ml = dmin * float(sc >> 4);
          for (int l = 0; l < 16; ++l) *dst++ = dl * float((q[16 * part + l] >> shift) & 3) - ml;
        }
      }
    }
  }
}

// {u8 hmask[32]; u8 qs[64]; u8 scales[12]; fp16 d}. Quants are 2 low bits (laid out as Q2_K)
// plus a high bit in hmask: value l of the run at shift 2j in half h has hmask[l] bit 4h+j; a
// clear bit means 4 is subtracted (q in -4..3). Sixteen 6-bit signed scales (stored +32): low
// nibbles in bytes 0..7 (scales 0..7 low, 8..15 high nibble), top two bits in bytes 8..11
// (scale i uses byte 8 + i%4 at shift 2·(i/4)).
void ref::Q3_K(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 110) {
    const uint8_t* hmask = src;
    const uint8_t* sb = src + 96;
    const float d = fp16_at(src + 108);
    int scale[16];
    for (int i = 0; i < 16; ++i) {
      const int lo4 = i < 8 ? (sb[i] & 0x0F) : (sb[i - 8] >> 4);
      const int hi2 = (sb[8 + i % 4] >> (2 * (i / 4))) & 3;
      scale[i] = (lo4 | (hi2 << 4)) - 32;
    }
    int is = 0;
    uint8_t m = 1;  // the hmask bit of the current run: one bit per (half, shift)
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = src + 32 + 32 * half;
      for (int shift = 0; shift < 8; shift += 2, m = uint8_t(m << 1)) {
        for (int part = 0; part < 2; ++part) {
          const float dl = d * float(scale[is++]);
          for (int l = 16 * part; l < 16 * part + 16; ++l) {
            const int v = ((q[l] >> shift) & 3) - ((hmask[l] & m) ? 0 : 4);
            *dst++ = dl * float(v);
          }
        }
      }
    }
  }
}

// {fp16 d; fp16 dmin; u8 scales[12]; u8 qs[128]}. Four 64-value chunks; chunk c's 32 qs bytes
// give its first 32 values in the low nibbles (pair 2c) and the next 32 in the high nibbles
// (pair 2c+1). y = d·sc·q - dmin·m.
void ref::Q4_K(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 144) {
    const float d = fp16_at(src);
    const float dmin = fp16_at(src + 2);
    const uint8_t* scales = src + 4;
    const uint8_t* q = src + 16;
    for (int c = 0; c < 4; ++c, q += 32) {
      int sc, m;
      k4_scale_min(2 * c, scales, &sc, &m);
      const float d1 = d * float(sc), m1 = dmin * float(m);
      k4_scale_min(2 * c + 1, scales, &sc, &m);
      const float d2 = d * float(sc), m2 = dmin * float(m);
      for (int l = 0; l < 32; ++l) *dst++ = d1 * float(q[l] & 0x0F) - m1;
      for (int l = 0; l < 32; ++l) *dst++ = d2 * float(q[l] >> 4) - m2;
    }
  }
}

// {fp16 d; fp16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: Q4_K plus a fifth bit: value l of
// chunk c's low run adds 16 when bit 2c of qh[l] is set, its high run when bit 2c+1 is.
void ref::Q5_K(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 176) {
    const float d = fp16_at(src);
    const float dmin = fp16_at(src + 2);
    const uint8_t* scales = src + 4;
    const uint8_t* qh = src + 16;
    const uint8_t* ql = src + 48;
    for (int c = 0; c < 4; ++c, ql += 32) {
      int sc, m;
      k4_scale_min(2 * c, scales, &sc, &m);
      const float d1 = d * float(sc), m1 = dmin * float(m);
      k4_scale_min(2 * c + 1, scales, &sc, &m);
      const float d2 = d * float(sc), m2 = dmin * float(m);
      const uint8_t u1 = uint8_t(1u << (2 * c)), u2 = uint8_t(2u << (2 * c));
      for (int l = 0; l < 32; ++l) *dst++ = d1 * float((ql[l] & 0x0F) + ((qh[l] & u1) ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *dst++ = d2 * float((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
    }
  }
}

// {u8 ql[128]; u8 qh[64]; i8 scales[16]; fp16 d}. Per 128-value half (64 ql bytes, 32 qh bytes,
// 8 scales), l < 32: values l, l+32, l+64, l+96 take ql[l] low, ql[l+32] low, ql[l] high,
// ql[l+32] high as their low four bits and qh[l] bits 0-1, 2-3, 4-5, 6-7 as their top two;
// q - 32, scaled by scales[l/16 + 0, 2, 4, 6]. y = d·sc·q, multiplied in that order.
void ref::Q6_K(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 210) {
    const float d = fp16_at(src + 208);
    const uint8_t* ql = src;
    const uint8_t* qh = src + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(src + 192);
    for (int half = 0; half < 2; ++half, dst += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        dst[l] = d * float(sc[is + 0]) * float(q1);
        dst[l + 32] = d * float(sc[is + 2]) * float(q2);
        dst[l + 64] = d * float(sc[is + 4]) * float(q3);
        dst[l + 96] = d * float(sc[is + 6]) * float(q4);
      }
    }
  }
}

// {f32 d; i8 qs[256]; i16 bsums[16]}: y = d·q (rounds once: d has 24 significant bits). The
// bsums are block sums for dot products; dequantization ignores them.
void ref::Q8_K(const uint8_t* src, size_t n_blocks, float* dst, const KernelContext&) {
  for (size_t b = 0; b < n_blocks; ++b, src += 292, dst += 256) {
    const float d = bits_to_f32(ggml::le32(src));
    for (int j = 0; j < 256; ++j) dst[j] = d * float(int8_t(src[4 + j]));
  }
}

}  // namespace kernels
}  // namespace ws
