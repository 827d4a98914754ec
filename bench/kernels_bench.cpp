// ws-bench-kernels: dequantization throughput per format, scalar reference vs SIMD128, and f16
// output against f32 output.
//
// GB/s is bytes of f32 output per second (10^9 bytes). Two input sizes:
//   chunk  64 KiB of stored bytes (rounded down to whole blocks): one streaming piece, the output
//          stays in cache. Kernels called directly; the "deq" columns go through
//          ws::Dequantizer::decode (validation on for GGML blocks; companion formats validate
//          once per tensor at init, left out here) with f32 and with f16 output, in 10^9 elements
//          per second, and their ratio f16/f32. memset of the same output size beside it: the
//          store bandwidth the kernels share.
//   big    64 MiB of stored bytes: memory-bound. Both kernels, and memset of the same output size
//          in the same run; simd/memset is the fraction of store bandwidth the kernel reaches.
//          All three write the same output buffer, faulted in before timing (no first-touch page
//          faults in any of them). memset only writes; a kernel also reads its input, so
//          "copy" (memcpy of the input into the output, memset of the rest: the same bytes read
//          and written, no arithmetic) is the kernel's own ceiling, and simd/cpy how close it is.
// A `*` marks a missed target on the six benchmark formats (Q4_0, Q8_0, Q4_K, Q6_K, MLX affine
// 4-bit, BF16): chunk simd/ref >= 2 natively and >= 4 under wasm; big simd/memset >= 0.80; and on
// the f16 ratio (issue #18): >= 1.0 for Q4_0, Q4_K, IQ4_NL, MXFP4, NVFP4, MLX affine 4-bit, MLX
// mxfp4 and nvfp4, >= 0.6 for Q8_0, Q6_K, Q5_K, MLX affine 8-bit and BF16 (-> F16).
//
//   ws-bench-kernels [--filter SUBSTR]... [--no-big] [--big-targets-only] [--min-time S]
//                    [--chunk BYTES] [--big BYTES]
//   ws-bench-kernels --profile FORMAT [--impl ref|simd] [--size chunk|big] [--calls N]
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "host_info.h"
#include "kernel_api.h"
#include "measure.h"
#include "table_format.h"
#include "fp_convert.h"
#include "simd128/f16_out.h"
#include "weightstream/dequant.h"

namespace wsbench {
namespace {

using ws::DType;
using ws::QuantFormat;

#if defined(__EMSCRIPTEN__)
constexpr double kChunkTarget = 4.0;
constexpr const char* kPlatform = "wasm SIMD128";
#else
constexpr double kChunkTarget = 2.0;
constexpr const char* kPlatform = "native (SIMDe)";
#endif
constexpr double kBigTarget = 0.80;

struct Row {
  QuantFormat format;
  uint32_t bits = 0, group = 0;
  DType scale_dtype = DType::BF16;
  bool target = false;  // one of the six benchmark formats
  bool global_divides = false;  // MlxNvfp4 with compressed-tensors' dividing weight_global_scale
  std::string name;
  double f16_target = 0;  // chunk deq f16/f32 in elements/s; 0: none
};

// The f16/f32 targets of issue #18.
double f16_target_of(const Row& r) {
  switch (r.format) {
    case QuantFormat::Q4_0: case QuantFormat::Q4_K: case QuantFormat::IQ4_NL: case QuantFormat::MXFP4:
    case QuantFormat::NVFP4: case QuantFormat::MlxMxfp4: case QuantFormat::MlxNvfp4:
      return 1.0;
    case QuantFormat::Q8_0: case QuantFormat::Q6_K: case QuantFormat::Q5_K: case QuantFormat::BF16:
      return 0.6;
    case QuantFormat::MlxAffine:
      return r.bits == 4 ? 1.0 : r.bits == 8 ? 0.6 : 0;
    default:
      return 0;
  }
}

std::vector<Row> all_rows() {
  std::vector<Row> rows;
  auto add = [&](QuantFormat f, bool target) {
    Row r;
    r.format = f;
    r.target = target;
    r.name = ws::quant_format_name(f);
    rows.push_back(r);
  };
  auto affine = [&](uint32_t bits, uint32_t group, DType dt, bool target) {
    Row r;
    r.format = QuantFormat::MlxAffine;
    r.bits = bits;
    r.group = group;
    r.scale_dtype = dt;
    r.target = target;
    r.name = "mlx-b" + std::to_string(bits) + "-g" + std::to_string(group) + "-" +
             (dt == DType::F32 ? "f32" : dt == DType::F16 ? "f16" : "bf16");
    rows.push_back(r);
  };
  // The six targets first.
  add(QuantFormat::Q4_0, true);
  add(QuantFormat::Q8_0, true);
  add(QuantFormat::Q4_K, true);
  add(QuantFormat::Q6_K, true);
  for (uint32_t g : {32u, 64u, 128u})
    for (DType dt : {DType::BF16, DType::F16, DType::F32}) affine(4, g, dt, true);
  add(QuantFormat::BF16, true);
  // Then the rest, in the priority order.
  for (QuantFormat f : {QuantFormat::F16, QuantFormat::F32, QuantFormat::Q4_1, QuantFormat::Q5_0, QuantFormat::Q5_1,
                        QuantFormat::Q2_K, QuantFormat::Q3_K, QuantFormat::Q5_K, QuantFormat::IQ4_NL, QuantFormat::IQ4_XS,
                        QuantFormat::MXFP4, QuantFormat::NVFP4, QuantFormat::TQ2_0, QuantFormat::Q1_0, QuantFormat::Q2_0})
    add(f, false);
  for (uint32_t bits : {2u, 3u, 5u, 6u, 8u}) affine(bits, 64, DType::BF16, false);
  // The Hub's FP8 (DeepSeek-V3 / Qwen3 FP8): F8_E4M3 rows of 2048 values, one scale per 128 x 128
  // block (F32, as transformers' FP8Linear; BF16 as other writers cast it).
  for (DType dt : {DType::F32, DType::BF16}) {
    Row r;
    r.format = QuantFormat::Fp8Block;
    r.scale_dtype = dt;
    r.name = std::string("fp8-block-128-") + (dt == DType::F32 ? "f32" : "bf16");
    rows.push_back(r);
  }
  // compressed-tensors pack-quantized W4A16 (llm-compressor's preset): 4-bit ints, 8 to an I32
  // word along rows of 2048, group 128, BF16 scales, packed zero points (asymmetric).
  {
    Row r;
    r.format = QuantFormat::CtPacked;
    r.bits = 4;
    r.group = 128;
    r.name = "ct-w4-g128-zp-bf16";
    rows.push_back(r);
  }
  // GPTQ (AutoGPTQ / GPTQModel exports): 4-bit codes, groups of 128 along rows of 4096 inputs,
  // f16 scales and v1 zero points, g_idx = input / group (desc_act false, the common export).
  {
    Row r;
    r.format = QuantFormat::GptqPacked;
    r.bits = 4;
    r.group = 128;
    r.scale_dtype = DType::F16;
    r.name = "gptq-b4-g128";
    rows.push_back(r);
  }
  // bitsandbytes 4-bit NF4 (unsloth's *-bnb-4bit uploads): blocksize 64, f32 absmax, and with
  // double quantization (U8 absmax codes, a nested absmax per 256 and the 256-entry code).
  for (bool nested : {false, true}) {
    Row r;
    r.format = QuantFormat::Bnb4;
    r.group = 64;
    r.scale_dtype = nested ? DType::U8 : DType::F32;
    r.name = std::string("bnb-nf4-b64-") + (nested ? "nested" : "f32");
    rows.push_back(r);
  }
  {  // bitsandbytes 8-bit (LLM.int8): I8 rows of 4096 values, an F32 SCB per row
    Row r;
    r.format = QuantFormat::BnbInt8;
    r.scale_dtype = DType::F32;
    r.name = "bnb-int8-row";
    rows.push_back(r);
  }
  for (QuantFormat f : {QuantFormat::MlxMxfp4, QuantFormat::MlxMxfp8, QuantFormat::MlxNvfp4, QuantFormat::F8_E4M3,
                        QuantFormat::F8_E5M2, QuantFormat::F8_E8M0, QuantFormat::Q8_K, QuantFormat::TQ1_0, QuantFormat::I2_S,
                        QuantFormat::F8Q8, QuantFormat::IQ2_XXS, QuantFormat::IQ2_XS, QuantFormat::IQ2_S,
                        QuantFormat::IQ3_XXS, QuantFormat::IQ3_S, QuantFormat::IQ1_S, QuantFormat::IQ1_M}) {
    add(f, false);
    if (f == QuantFormat::MlxNvfp4) {  // beside it: compressed-tensors nvfp4-pack-quantized
      Row r;
      r.format = f;
      r.global_divides = true;
      r.name = "ct-nvfp4-global-div";
      rows.push_back(r);
    }
  }
  for (Row& r : rows) r.f16_target = f16_target_of(r);
  return rows;
}

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// A plausible weight-scale fp16: 2^-10 .. 2^-4, random mantissa and sign (never subnormal, inf
// or NaN: real checkpoints' scales are normal numbers, and subnormals would time the CPU's
// microcode assists rather than the kernels).
uint16_t scale_f16(Rng& r) {
  uint64_t x = r.next();
  return uint16_t(((x & 1) << 15) | ((5 + (x >> 1) % 7) << 10) | ((x >> 8) & 0x3FF));
}
float scale_f32(Rng& r) {
  float f = ws::f16_to_f32(scale_f16(r));
  return f;
}

// The tensor a row decodes: stored bytes and its companions, with realistic scale fields.
struct Tensor {
  ws::DequantSpec spec;
  std::vector<uint8_t> data, scales, biases;
  std::vector<uint8_t> zeros, gidx;  // GptqPacked
  std::vector<uint8_t> nested_absmax, nested_code;  // Bnb4 with double quantization
  size_t blocks = 0, block_bytes = 0, block_elems = 0;
};

Tensor make_tensor(const Row& row, size_t input_bytes, uint64_t seed) {
  Tensor t;
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(row.format);
  t.block_elems = e.info.block_elems;
  t.block_bytes = e.info.block_bytes;
  if (row.format == QuantFormat::MlxAffine) {
    t.block_elems = row.group;
    t.block_bytes = row.group * row.bits / 8;
  }
  // Fp8Block: the decoder's unit for rows of 2048 and 128-column blocks is 128 values; whole rows.
  constexpr size_t kFp8Cols = 2048, kFp8Block = 128;
  if (row.format == QuantFormat::Fp8Block) t.block_elems = t.block_bytes = kFp8Block;
  constexpr size_t kInt8Cols = 4096;
  if (row.format == QuantFormat::BnbInt8) t.block_elems = t.block_bytes = 256;  // the unit of 4096-value rows
  if (row.format == QuantFormat::Bnb4) {  // the decoder's unit for blocksize 64: one absmax block
    t.block_elems = row.group;
    t.block_bytes = row.group / 2;
  }
  t.blocks = std::max<size_t>(1, input_bytes / t.block_bytes);
  if (row.format == QuantFormat::Fp8Block) t.blocks = std::max<size_t>(1, t.blocks / 16) * 16;
  // CtPacked: one I32 word (8 values) a block; whole rows of 2048 values (256 words).
  constexpr size_t kCtCols = 2048;
  if (row.format == QuantFormat::CtPacked) {
    t.block_elems = 32 / row.bits;
    t.block_bytes = 4;
    t.blocks = std::max<size_t>(1, input_bytes / 4 / (kCtCols / t.block_elems)) * (kCtCols / t.block_elems);
  }
  // GptqPacked: words of 8 codes, rows of 4096 inputs (512 words), 8 rows a qzeros word.
  constexpr size_t kGptqIn = 4096;
  if (row.format == QuantFormat::GptqPacked) {
    t.block_elems = 8;
    t.block_bytes = 4;
    t.blocks = std::max<size_t>(1, input_bytes / 4 / (kGptqIn / 8 * 8)) * (kGptqIn / 8 * 8);
  }
  if (row.format == QuantFormat::BnbInt8) t.blocks = std::max<size_t>(1, t.blocks / 16) * 16;  // whole rows
  t.data.resize(t.blocks * t.block_bytes);
  Rng r{seed};
  for (size_t i = 0; i < t.data.size(); i += 8) {
    uint64_t x = r.next();
    memcpy(&t.data[i], &x, std::min<size_t>(8, t.data.size() - i));
  }
  for (size_t b = 0; b < t.blocks; ++b) {
    uint8_t* blk = &t.data[b * t.block_bytes];
    for (uint8_t f = 0; f < e.n_fp16_fields; ++f) {
      uint16_t h = scale_f16(r);
      memcpy(blk + e.fp16_fields[f], &h, 2);
    }
    if (e.e8m0_field >= 0) blk[e.e8m0_field] = uint8_t(118 + r.next() % 12);
    switch (row.format) {
      case QuantFormat::F32: {
        float f = scale_f32(r) * float(int(r.next() % 2001) - 1000);
        memcpy(blk, &f, 4);
        break;
      }
      case QuantFormat::F16: {
        uint16_t h = scale_f16(r);
        memcpy(blk, &h, 2);
        break;
      }
      case QuantFormat::BF16: {
        uint32_t u;
        float f = scale_f32(r);
        memcpy(&u, &f, 4);
        uint16_t h = uint16_t(u >> 16);
        memcpy(blk, &h, 2);
        break;
      }
      case QuantFormat::F8_E4M3:
        if ((blk[0] & 0x7F) == 0x7F) blk[0] ^= 1;  // not NaN
        break;
      case QuantFormat::Fp8Block:
        for (size_t k = 0; k < t.block_bytes; ++k)
          if ((blk[k] & 0x7F) == 0x7F) blk[k] ^= 1;  // E4M3FN's NaN: not what a writer stores
        break;
      case QuantFormat::F8_E8M0:
        blk[0] = uint8_t(110 + r.next() % 30);
        break;
      case QuantFormat::NVFP4:
        for (int k = 0; k < 4; ++k) blk[k] = uint8_t(0x28 + r.next() % 0x20);  // UE4M3 ~ 2^-2..2^1
        break;
      case QuantFormat::Q8_K: {
        float f = scale_f32(r);
        memcpy(blk, &f, 4);
        break;
      }
      case QuantFormat::IQ1_M: {  // the fp16 super-scale is the top nibbles of the scales words
        uint16_t h = scale_f16(r);
        for (int k = 0; k < 4; ++k) {
          uint16_t w;
          memcpy(&w, blk + 48 + 2 * k, 2);
          w = uint16_t((w & 0x0FFF) | (((h >> (4 * k)) & 15) << 12));
          memcpy(blk + 48 + 2 * k, &w, 2);
        }
        break;
      }
      case QuantFormat::F8Q8:
        blk[0] = uint8_t(0x30 + r.next() % 0x30);  // E4M3 0.5 .. 240
        break;
      default:
        break;
    }
  }
  ws::DequantSpec& s = t.spec;
  s.format = row.format;
  s.bits = row.bits;
  s.group = row.group;
  s.scale_dtype = row.scale_dtype;
  s.elements = uint64_t(t.blocks) * t.block_elems;
  if (row.format == QuantFormat::Fp8Block) {
    const uint64_t rows = s.elements / kFp8Cols, grid = (rows + kFp8Block - 1) / kFp8Block * (kFp8Cols / kFp8Block);
    const size_t sb = row.scale_dtype == DType::F32 ? 4 : 2;
    t.scales.resize(grid * sb);
    for (uint64_t g = 0; g < grid; ++g) {
      const float f = scale_f32(r);
      uint32_t u;
      memcpy(&u, &f, 4);
      if (sb == 4) memcpy(&t.scales[g * 4], &u, 4);
      else {
        const uint16_t h = uint16_t(u >> 16);
        memcpy(&t.scales[g * 2], &h, 2);
      }
    }
    s.scales = t.scales.data();
    s.row_elems = kFp8Cols;
    s.block_rows = s.block_cols = kFp8Block;
    s.element_dtype = DType::F8_E4M3;
  } else if (row.format == QuantFormat::CtPacked) {
    const uint64_t rows = s.elements / kCtCols, groups = kCtCols / row.group;
    t.scales.resize(rows * groups * 2);
    for (uint64_t g = 0; g < rows * groups; ++g) {
      const float f = scale_f32(r);
      uint32_t u;
      memcpy(&u, &f, 4);
      const uint16_t h = uint16_t(u >> 16);
      memcpy(&t.scales[g * 2], &h, 2);
    }
    const uint32_t pf = 32 / row.bits;
    t.biases.resize((rows + pf - 1) / pf * groups * 4);
    for (uint8_t& b : t.biases) b = uint8_t(r.next());
    s.scales = t.scales.data();
    s.biases = t.biases.data();
    s.row_elems = kCtCols;
    s.block_rows = 1;
  } else if (row.format == QuantFormat::GptqPacked) {
    const uint64_t rows = s.elements / kGptqIn, groups = kGptqIn / row.group;
    t.scales.resize(groups * rows * 2);
    for (uint64_t g = 0; g < groups * rows; ++g) {
      const uint16_t h = scale_f16(r);
      memcpy(&t.scales[g * 2], &h, 2);
    }
    t.zeros.resize(groups * rows / 8 * 4);
    for (size_t i = 0; i < t.zeros.size(); ++i) t.zeros[i] = uint8_t(r.next());
    t.gidx.resize(kGptqIn * 4);
    for (uint32_t i = 0; i < kGptqIn; ++i) {
      const uint32_t g = i / row.group;
      memcpy(&t.gidx[4 * i], &g, 4);
    }
    s.scales = t.scales.data();
    s.row_elems = kGptqIn;
    s.gptq_groups = uint32_t(groups);
    s.gptq_zero_add = 1;
    s.gptq_zeros = t.zeros.data();
    s.gptq_g_idx = t.gidx.data();
    s.gptq_g_idx_is_groups = true;  // what Dequantizer::init finds (the kernels are called directly)
  } else if (row.format == QuantFormat::BnbInt8) {
    const size_t rows = size_t(s.elements / kInt8Cols);
    t.scales.resize(rows * 4);
    for (size_t g = 0; g < rows; ++g) {
      const float f = scale_f32(r);
      memcpy(&t.scales[g * 4], &f, 4);
    }
    s.scales = t.scales.data();
    s.row_elems = kInt8Cols;
  } else if (row.format == QuantFormat::Bnb4) {
    const bool nested = row.scale_dtype == DType::U8;
    t.scales.resize(t.blocks * (nested ? 1 : 4));
    for (size_t g = 0; g < t.blocks; ++g) {
      if (nested) {
        t.scales[g] = uint8_t(r.next());
      } else {
        const float f = scale_f32(r);
        memcpy(&t.scales[g * 4], &f, 4);
      }
    }
    if (nested) {
      t.nested_absmax.resize(4 * ((t.blocks + 255) / 256));
      for (size_t j = 0; j < t.nested_absmax.size() / 4; ++j) {
        const float f = scale_f32(r);
        memcpy(&t.nested_absmax[4 * j], &f, 4);
      }
      t.nested_code.resize(4 * 256);
      for (size_t k = 0; k < 256; ++k) {
        const float f = float(int(k) - 128) / 128.0f;
        memcpy(&t.nested_code[4 * k], &f, 4);
      }
      s.nested_absmax = t.nested_absmax.data();
      s.nested_code = t.nested_code.data();
      s.nested_group = 256;
      s.nested_offset = 0.01f;
    }
    s.scales = t.scales.data();
  } else if (e.info.companion) {
    const size_t sb = row.format == QuantFormat::MlxAffine ? (row.scale_dtype == DType::F32 ? 4 : 2) : 1;
    t.scales.resize(t.blocks * sb);
    if (row.format == QuantFormat::MlxAffine) t.biases.resize(t.blocks * sb);
    for (size_t g = 0; g < t.blocks; ++g) {
      if (row.format == QuantFormat::MlxAffine) {
        for (std::vector<uint8_t>* v : {&t.scales, &t.biases}) {
          float f = scale_f32(r);
          if (row.scale_dtype == DType::F32) {
            memcpy(&(*v)[g * 4], &f, 4);
          } else if (row.scale_dtype == DType::F16) {
            uint16_t h = ws::f32_to_f16(f);
            memcpy(&(*v)[g * 2], &h, 2);
          } else {
            uint32_t u;
            memcpy(&u, &f, 4);
            uint16_t h = uint16_t(u >> 16);
            memcpy(&(*v)[g * 2], &h, 2);
          }
        }
      } else if (row.format == QuantFormat::MlxNvfp4 && row.global_divides) {
        // compressed-tensors' scales are g * amax_block / 6 with g = 448 * 6 / amax: up to 448.
        t.scales[g] = uint8_t(0x58 + r.next() % 0x26);
      } else if (row.format == QuantFormat::MlxNvfp4) {
        t.scales[g] = uint8_t(0x28 + r.next() % 0x20);
      } else {
        t.scales[g] = uint8_t(118 + r.next() % 12);
      }
    }
    s.scales = t.scales.data();
    s.biases = t.biases.empty() ? nullptr : t.biases.data();
  }
  if (row.format == QuantFormat::I2_S) {
    s.has_global_scale = true;
    s.global_scale = 0.75f;
  }
  if (row.global_divides) {  // a weight_global_scale as generate_gparam makes it (448 * 6 / amax)
    s.has_global_scale = true;
    s.global_scale = 2688.0f / 0.7431f;
    s.global_scale_divides = true;
  }
  return t;
}

struct Options {
  std::vector<std::string> filters;
  bool big = true;
  bool big_targets_only = false;
  size_t chunk = 64 * 1024;
  size_t big_bytes = 64u << 20;
  MeasureOptions chunk_measure;
  MeasureOptions big_measure;
  std::string profile;
  std::string impl = "simd";
  std::string size = "chunk";
  uint64_t calls = 1000;
};

bool selected(const Options& o, const Row& r) {
  if (o.filters.empty()) return true;
  for (const std::string& f : o.filters)
    if (r.name.find(f) != std::string::npos) return true;
  return false;
}

double gbps(uint64_t bytes, double s) { return double(bytes) / 1e9 / s; }

// An output buffer aligned to a cache line. Allocators differ (Emscripten's malloc returns 8-byte
// aligned blocks, where every fourth 16-byte store splits a cache line); the benchmark measures
// the kernels, so every configuration gets the same 64-byte aligned destination. The Dequantizer
// writes wherever the caller points it: callers should give it 16-byte aligned output.
template <class T>
struct AlignedBuf {
  std::vector<T> storage;
  T* p = nullptr;
  explicit AlignedBuf(size_t n) : storage(n + 64 / sizeof(T)) {
    p = storage.data();
    while (reinterpret_cast<uintptr_t>(p) % 64) ++p;
  }
  T* data() { return p; }
};

// One decode call through the Dequantizer (a fresh one: init is per tensor). Validation as a
// caller would have it (GGML blocks checked per call, companion scales once per tensor at init,
// left out here), or off (check_row's random inputs have inf/NaN scales).
void decode_once(const Tensor& t, ws::OutType out, void* dst, size_t dst_bytes, bool validate = true) {
  ws::DequantSpec spec = t.spec;
  spec.impl = ws::KernelImpl::Simd128;
  spec.out = out;
  spec.validate = validate && !ws::kernels::format_entry(spec.format).info.companion;
  ws::Dequantizer d;
  if (d.init(spec) != ws::Status::Ok) abort();
  size_t in_used = 0, written = 0;
  if (d.decode(t.data.data(), t.data.size(), &in_used, dst, dst_bytes, &written) != ws::Status::Ok || !d.done()) abort();
}

struct Result {
  bool mismatch = false;  // the two kernels disagreed on this row's inputs (see check_row)
  double ref = 0, simd = 0, memset = 0;  // GB/s of f32 output; memset: same output size, in cache
  double deq32 = 0, deq16 = 0, deqbf = 0;  // 10^9 elements per second through the Dequantizer
  bool has_big = false;
  double big_ref = 0, big_simd = 0, big_memset = 0, big_copy = 0;
};

// Bit patterns equal, or both NaN (arithmetic NaN signs are the platform's business, and
// under wasm not even deterministic).
bool same_values(const float* a, const float* b, size_t n, size_t* first) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t x, y;
    memcpy(&x, a + i, 4);
    memcpy(&y, b + i, 4);
    if (x == y || (((x & 0x7FFFFFFFu) > 0x7F800000u) && ((y & 0x7FFFFFFFu) > 0x7F800000u))) continue;
    *first = i;
    return false;
  }
  return true;
}

// Before timing a row: both kernels on the row's benchmark input and on all-random bytes (inf
// and NaN scales included) must agree. The test suite checks this natively; this is the same
// check for the build being measured, which under wasm is the only one the wasm code gets.
bool check_row(const Row& row, const Tensor& t) {
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(row.format);
  Tensor raw = t;
  Rng r{77};
  for (uint8_t& b : raw.data) b = uint8_t(r.next());
  for (uint8_t& b : raw.scales) b = uint8_t(r.next());
  for (uint8_t& b : raw.biases) b = uint8_t(r.next());
  raw.spec.scales = raw.scales.empty() ? nullptr : raw.scales.data();
  raw.spec.biases = raw.biases.empty() ? nullptr : raw.biases.data();
  bool ok = true;
  const Tensor* inputs[] = {&t, &raw};
  for (const Tensor* x : inputs) {
    AlignedBuf<float> a(x->spec.elements), b(x->spec.elements);
    ws::kernels::KernelContext ctx{&x->spec, 0};
    e.reference(x->data.data(), x->blocks, a.data(), ctx);
    e.simd128(x->data.data(), x->blocks, b.data(), ctx);
    size_t i = 0;
    if (!same_values(a.data(), b.data(), x->spec.elements, &i)) {
      uint32_t va, vb;
      memcpy(&va, a.data() + i, 4);
      memcpy(&vb, b.data() + i, 4);
      fprintf(stderr, "%s: %s input: reference and SIMD128 differ at element %zu (0x%08x vs 0x%08x)\n",
              row.name.c_str(), x == &t ? "benchmark" : "random", i, va, vb);
      ok = false;
    }
    // f16 output: the f16 kernel (or the rounded tile) against the reference rounded.
    AlignedBuf<uint16_t> h(x->spec.elements);
    decode_once(*x, ws::OutType::F16, h.data(), x->spec.elements * 2, /*validate=*/false);
    for (i = 0; i < x->spec.elements; ++i) {
      const uint16_t want = ws::f32_to_f16(a.data()[i]), got = h.data()[i];
      if (got == want || ((got & 0x7FFF) > 0x7C00 && (want & 0x7FFF) > 0x7C00)) continue;
      fprintf(stderr, "%s: %s input: f16 output differs from the rounded reference at element %zu (0x%04x vs 0x%04x)\n",
              row.name.c_str(), x == &t ? "benchmark" : "random", i, got, want);
      ok = false;
      break;
    }
    // bf16 output (issue #29): the reference rounded (BF16 as BF16: the stored halves).
    decode_once(*x, ws::OutType::BF16, h.data(), x->spec.elements * 2, /*validate=*/false);
    for (i = 0; i < x->spec.elements; ++i) {
      uint16_t want = ws::f32_to_bf16(a.data()[i]);
      if (row.format == ws::QuantFormat::BF16) memcpy(&want, x->data.data() + 2 * i, 2);
      const uint16_t got = h.data()[i];
      if (got == want || ((got & 0x7FFF) > 0x7F80 && (want & 0x7FFF) > 0x7F80)) continue;
      fprintf(stderr, "%s: %s input: bf16 output differs from the rounded reference at element %zu (0x%04x vs 0x%04x)\n",
              row.name.c_str(), x == &t ? "benchmark" : "random", i, got, want);
      ok = false;
      break;
    }
  }
  return ok;
}

void run_row(const Row& row, const Options& o, Result* res) {
  const ws::kernels::FormatEntry& e = ws::kernels::format_entry(row.format);
  if (!e.reference || !e.simd128) {
    fprintf(stderr, "%s: missing kernel\n", row.name.c_str());
    return;
  }
  {
    Tensor t = make_tensor(row, o.chunk, 1234);
    res->mismatch = !check_row(row, t);
    const size_t out_bytes = size_t(t.spec.elements) * 4;
    AlignedBuf<float> out(t.spec.elements + 16);
    AlignedBuf<uint16_t> out16(t.spec.elements + 16);
    ws::kernels::KernelContext ctx{&t.spec, 0};
    std::vector<std::function<void()>> fns = {
        [&] { e.reference(t.data.data(), t.blocks, out.data(), ctx); },
        [&] { e.simd128(t.data.data(), t.blocks, out.data(), ctx); },
        [&] { decode_once(t, ws::OutType::F32, out.data(), out_bytes); },
        [&] { decode_once(t, ws::OutType::F16, out16.data(), out_bytes / 2); },
        [&] { memset(out.data(), 0x3C, out_bytes); },
        [&] { decode_once(t, ws::OutType::BF16, out16.data(), out_bytes / 2); },
    };
    std::vector<Timing> tm = measure(fns, o.chunk_measure);
    res->ref = gbps(out_bytes, tm[0].best_s);
    res->simd = gbps(out_bytes, tm[1].best_s);
    res->deq32 = double(t.spec.elements) / 1e9 / tm[2].best_s;
    res->deq16 = double(t.spec.elements) / 1e9 / tm[3].best_s;
    res->memset = gbps(out_bytes, tm[4].best_s);
    res->deqbf = double(t.spec.elements) / 1e9 / tm[5].best_s;
  }
  if (o.big && (!o.big_targets_only || row.target)) {
    Tensor t = make_tensor(row, o.big_bytes, 99);
    const size_t out_bytes = size_t(t.spec.elements) * 4;
    // One output buffer for every row, grown to the largest: under wasm, a fresh 0.1-1.8 GB
    // allocation per row grew the heap row after row and slowed every later row, memset too.
    static std::vector<float> big_out;
    if (big_out.size() < t.spec.elements + 16) big_out.resize(t.spec.elements + 16);
    struct {
      float* p;
      float* data() { return p; }
    } out{big_out.data()};
    while (reinterpret_cast<uintptr_t>(out.p) % 64) ++out.p;
    memset(out.data(), 0, out_bytes);  // fault the pages in before timing
    ws::kernels::KernelContext ctx{&t.spec, 0};
    std::vector<std::function<void()>> fns = {
        [&] { e.reference(t.data.data(), t.blocks, out.data(), ctx); },
        [&] { e.simd128(t.data.data(), t.blocks, out.data(), ctx); },
        [&] { memset(out.data(), 0x3C, out_bytes); },
        // The kernel's memory traffic without its arithmetic: read the input once, write the
        // output once (libc's copy and fill, their best stores).
        [&] {
          const size_t in_bytes = t.data.size();
          memcpy(out.data(), t.data.data(), in_bytes);
          memset(reinterpret_cast<uint8_t*>(out.data()) + in_bytes, 0x3C, out_bytes - in_bytes);
        },
    };
    std::vector<Timing> tm = measure(fns, o.big_measure);
    res->has_big = true;
    res->big_ref = gbps(out_bytes, tm[0].best_s);
    res->big_simd = gbps(out_bytes, tm[1].best_s);
    res->big_memset = gbps(out_bytes, tm[2].best_s);
    res->big_copy = gbps(out_bytes, tm[3].best_s);
  }
}

// Profile mode: one kernel on one size, N calls, nothing else (for perf / callgrind).
__attribute__((noinline)) void profiled_calls(ws::kernels::BlockKernel k, const Tensor& t, float* out, uint64_t calls) {
  ws::kernels::KernelContext ctx{&t.spec, 0};
  for (uint64_t i = 0; i < calls; ++i) k(t.data.data(), t.blocks, out, ctx);
}

int profile(const Options& o) {
  for (const Row& row : all_rows()) {
    if (row.name != o.profile) continue;
    const ws::kernels::FormatEntry& e = ws::kernels::format_entry(row.format);
    Tensor t = make_tensor(row, o.size == "big" ? o.big_bytes : o.chunk, 7);
    AlignedBuf<float> out(t.spec.elements);
    profiled_calls(o.impl == "ref" ? e.reference : e.simd128, t, out.data(), o.calls);
    printf("%s %s %s: %llu calls done\n", row.name.c_str(), o.impl.c_str(), o.size.c_str(), (unsigned long long)o.calls);
    return 0;
  }
  fprintf(stderr, "no row named %s\n", o.profile.c_str());
  return 2;
}

// The f16 output step alone: the Dequantizer's per-value f32_to_fp16 against the SIMD128 row
// conversion (simd128/f16_out.h, same bits), on 64K random in-cache floats. GB/s of f32 input.
void f16_out_row(const Options& o) {
  const size_t n = 65536;
  AlignedBuf<float> in(n);
  AlignedBuf<uint16_t> out(n);
  Rng r{5};
  for (size_t i = 0; i < n; ++i) in.data()[i] = scale_f32(r) * float(int(r.next() % 2001) - 1000);
  std::vector<std::function<void()>> fns = {
      [&] {
        for (size_t i = 0; i < n; ++i) out.data()[i] = ws::kernels::f32_to_fp16(in.data()[i]);
      },
      [&] { ws::kernels::simd128::f32_to_f16_row(in.data(), n, out.data()); },
  };
  std::vector<Timing> tm = measure(fns, o.chunk_measure);
  printf("f32->f16 of 64K values (the deq f16-out step): per value %.2f GB/s, simd128::f32_to_f16_row %.2f GB/s\n",
         gbps(n * 4, tm[0].best_s), gbps(n * 4, tm[1].best_s));
}

int usage() {
  fprintf(stderr,
          "usage: ws-bench-kernels [--filter SUBSTR]... [--no-big] [--big-targets-only] [--min-time S]\n"
          "                        [--chunk BYTES] [--big BYTES]\n"
          "       ws-bench-kernels --profile ROW [--impl ref|simd] [--size chunk|big] [--calls N]\n");
  return 2;
}

}  // namespace
}  // namespace wsbench

int main(int argc, char** argv) {
  using namespace wsbench;
  Options o;
  o.chunk_measure.min_total_s = 0.15;
  o.chunk_measure.min_samples = 7;
  // Memory bandwidth on a shared VM wanders more than cache bandwidth: more samples.
  o.big_measure.min_total_s = 0.6;
  o.big_measure.min_samples = 5;
  o.big_measure.min_sample_s = 1e-3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool v = i + 1 < argc;
    if (a == "--filter" && v) o.filters.push_back(argv[++i]);
    else if (a == "--no-big") o.big = false;
    else if (a == "--big-targets-only") o.big_targets_only = true;
    else if (a == "--min-time" && v) o.chunk_measure.min_total_s = o.big_measure.min_total_s = atof(argv[++i]);
    else if (a == "--chunk" && v) o.chunk = size_t(strtoull(argv[++i], nullptr, 10));
    else if (a == "--big" && v) o.big_bytes = size_t(strtoull(argv[++i], nullptr, 10));
    else if (a == "--profile" && v) o.profile = argv[++i];
    else if (a == "--impl" && v) o.impl = argv[++i];
    else if (a == "--size" && v) o.size = argv[++i];
    else if (a == "--calls" && v) o.calls = strtoull(argv[++i], nullptr, 10);
    else return usage();
  }
  if (!o.profile.empty()) return profile(o);

  printf("ws-bench-kernels: %s, %s, %u logical CPUs\n", kPlatform, cpu_model().c_str(), logical_cpus());
  printf("GB/s = 10^9 bytes of f32 output per second; Ge/s = 10^9 elements per second (deq: through\n"
         "ws::Dequantizer, f32, f16 and bf16 output). chunk = %zu B of input, big = %zu B of input.\n"
         "Targets (`*` = missed): chunk simd/ref >= %.1f and big simd/memset >= %.2f on the six (T) formats;\n"
         "deq f16/f32 >= 1.0 for Q4_0, Q4_K, IQ4_NL, MXFP4, NVFP4, mlx-b4-*, MlxMxfp4, MlxNvfp4, >= 0.6 for Q8_0,\n"
         "Q6_K, Q5_K, mlx-b8-*, BF16.\n\n",
         o.chunk, o.big_bytes, kChunkTarget, kBigTarget);
  const char* head = "%-20s| %7s %7s %8s %7s %8s | %7s %7s %8s %8s | %7s %7s %7s %8s %7s %8s\n";
  printf(head, "", "chunk", "", "", "", "", "deq f32", "deq f16", "", "deq bf16", "big", "", "", "", "", "");
  printf(head, "format", "ref", "simd", "simd/ref", "memset", "simd/mem", "Ge/s", "Ge/s", "f16/f32", "Ge/s", "ref", "simd",
         "memset", "simd/mem", "copy", "simd/cpy");
  print_rule(20 + 1 + 8 * 5 + 3 + 8 * 4 + 3 + 8 * 6);
  fflush(stdout);
  int misses = 0, mismatches = 0, f16_misses = 0;
  for (const Row& row : all_rows()) {
    if (!selected(o, row)) continue;
    Result r;
    run_row(row, o, &r);
    const double ratio = r.simd / r.ref;
    const bool miss_chunk = row.target && ratio_missed(ratio, kChunkTarget);
    const double f16_ratio = r.deq16 / r.deq32;
    const bool miss_f16 = row.f16_target > 0 && ratio_missed(f16_ratio, row.f16_target);
    mismatches += r.mismatch;
    printf("%-20s| %7.2f %7.2f %8s %7.2f %8.2f | %7.2f %7.2f %8s %8.2f |",
           (row.name + (row.target ? " (T)" : "") + (r.mismatch ? " !=" : "")).c_str(), r.ref, r.simd,
           ratio_cell(ratio, miss_chunk).c_str(), r.memset, r.simd / r.memset, r.deq32, r.deq16,
           ratio_cell(f16_ratio, miss_f16).c_str(), r.deqbf);
    misses += miss_chunk;
    f16_misses += miss_f16;
    if (r.has_big) {
      const double mr = r.big_simd / r.big_memset;
      const bool miss_big = row.target && ratio_missed(mr, kBigTarget);
      misses += miss_big;
      printf(" %7.2f %7.2f %7.2f %8s %7.2f %8.2f\n", r.big_ref, r.big_simd, r.big_memset, ratio_cell(mr, miss_big).c_str(),
             r.big_copy, r.big_simd / r.big_copy);
    } else {
      printf(" %7s %7s %7s %8s %7s %8s\n", "-", "-", "-", "-", "-", "-");
    }
    fflush(stdout);
  }
  printf("\n%d missed target%s ((T) rows), %d missed f16/f32 target%s\n", misses, misses == 1 ? "" : "s", f16_misses,
         f16_misses == 1 ? "" : "s");
  f16_out_row(o);
  if (mismatches) {
    printf("%d row%s where reference and SIMD128 disagree (marked !=, details on stderr)\n", mismatches,
           mismatches == 1 ? "" : "s");
    return 1;
  }
  return 0;
}
