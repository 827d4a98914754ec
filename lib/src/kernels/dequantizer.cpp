// The streaming dequantizer: chunking, one carried partial block, validation, f16 output.
#include <string.h>

#include "bnb4.h"
#include "bnb_int8.h"
#include "ct_packed.h"
#include "fp8_block.h"
#include "fp_convert.h"
#include "gptq_packed.h"
#include "kernel_api.h"
#if !defined(WS_KERNELS_REFERENCE_ONLY)
#include "simd128/f16_out.h"
#endif
#include "weightstream/dequant.h"

namespace ws {

namespace {

// f16 and bf16 output of the reference kernels, and of SIMD128 formats without an f16 kernel, goes
// through an f32 tile on the stack: 256 values for the formats whose block has more than 128 (a
// K-quant block), 128 for the others, so that a microcontroller's 2 KB stack holds a bf16 decode
// under the model loader and a caller (the Cortex-M4F loader image converts an FP8 model to bf16
// within 1,864 bytes of stack; with 256 values it took 2,152). (A 2048-value tile for the SIMD128 kernels measured no
// faster: the row conversion, not the kernel calls, is bf16 output's cost.)
constexpr size_t kTileElems = 256;
constexpr size_t kSmallTileElems = 128;
// The largest block a format with a padded last block has (F8Q8: 32 values).
constexpr size_t kPaddedBlockElems = 32;

bool fp16_is_finite(uint16_t h) { return (h & 0x7C00) != 0x7C00; }

uint32_t scale_bytes(DType d) { return d == DType::F32 ? 4 : 2; }

// The index of the first of `count` companion scales of `dtype` that no decoder may multiply by
// (F32/BF16/F16 inf or NaN; the E8M0 / UE8M0 NaN 0xFF), or `count` when all are finite: the
// whole-array check Fp8Block, CtPacked and GptqPacked make once at init with `validate`.
uint64_t first_bad_scale(const uint8_t* scales, uint64_t count, DType dtype) {
  const uint32_t sb = kernels::fp8_scale_bytes(dtype);
  for (uint64_t i = 0; i < count; ++i) {
    bool bad;
    if (sb == 1) {
      bad = scales[i] == 0xFF;
    } else if (sb == 2) {
      const uint16_t h = uint16_t(scales[2 * i] | scales[2 * i + 1] << 8);
      bad = dtype == DType::F16 ? !fp16_is_finite(h) : (h & 0x7F80) == 0x7F80;
    } else {
      uint32_t u;
      memcpy(&u, scales + 4 * i, 4);
      bad = (u & 0x7F800000u) == 0x7F800000u;
    }
    if (bad) return i;
  }
  return count;
}

}  // namespace

Status Dequantizer::fail(Status s, uint64_t offset) {
  error_ = Error();
  error_.code = s;
  error_.offset = offset;
  return s;
}

size_t Dequantizer::block_output_bytes() const { return size_t(block_elems_) * out_type_bytes(spec_.out); }

// Fp8Block (fp8_block.h): the geometry from the spec, the decoder's unit, and, with `validate`,
// every scale of the grid finite (F32/BF16/F16) or not the E8M0 NaN 0xFF, checked once here.
Status Dequantizer::init_fp8_block(const DequantSpec& spec) {
  const uint32_t sb = kernels::fp8_scale_bytes(spec.scale_dtype);
  const bool dtype_ok = spec.element_dtype == DType::F8_E4M3 || spec.element_dtype == DType::F8_E5M2;
  if (!dtype_ok || sb == 0 || !spec.scales || spec.row_elems == 0 || spec.block_rows == 0 || spec.block_cols == 0 ||
      spec.elements % spec.row_elems != 0)
    return fail(Status::InvalidQuantParams, spec.input_offset);
  const uint64_t rows = spec.elements / spec.row_elems;
  const uint64_t grid = ((rows + spec.block_rows - 1) / spec.block_rows) *
                        ((spec.row_elems + spec.block_cols - 1) / spec.block_cols);
  spec_.group = kernels::fp8_block_unit(spec.row_elems, spec.block_cols);
  block_elems_ = spec_.group;
  block_bytes_ = spec_.group;
  if (!spec.validate) return Status::Ok;
  const uint64_t bad = first_bad_scale(spec.scales, grid, spec.scale_dtype);
  return bad < grid ? fail(Status::InvalidBlockData, spec.scales_offset + bad * sb) : Status::Ok;
}

// CtPacked's weight_g_idx (ct_packed.h), always checked (a group past the scales would read past
// them): -1 anywhere is column order (compressed-tensors' is_column_order; g_idx unused); else
// every value a group of the row's scales and no group holding more than group_size columns
// (so each holds exactly that many, the only case in which compressed-tensors' argsort regrouping
// gives every column the group g_idx names), else QuantGroupIndexOutOfRange at the value's byte.
// spec_.gptq_g_idx_is_groups: g_idx unused or column order anyway.
Status Dequantizer::ct_g_idx_check(const DequantSpec& spec) {
  const uint8_t* gi = spec.gptq_g_idx;
  const uint64_t cols = spec.row_elems, groups = cols / spec.group;
  for (uint64_t i = 0; i < cols; ++i)
    if (kernels::gptq_le32(gi + 4 * i) == 0xFFFFFFFFu) return Status::Ok;
  bool in_order = true;
  // Columns per group, counted 64 groups a pass (a small fixed buffer: no allocation).
  for (uint64_t base = 0; base < groups; base += 64) {
    uint32_t held[64] = {};
    for (uint64_t i = 0; i < cols; ++i) {
      const uint32_t g = kernels::gptq_le32(gi + 4 * i);
      if (g >= groups) return fail(Status::QuantGroupIndexOutOfRange, spec.gptq_g_idx_offset + 4 * i);
      if (g != i / spec.group) in_order = false;
      if (g >= base && g - base < 64 && ++held[g - base] > spec.group)
        return fail(Status::QuantGroupIndexOutOfRange, spec.gptq_g_idx_offset + 4 * i);
    }
  }
  spec_.gptq_g_idx_is_groups = in_order;
  return Status::Ok;
}

// CtPacked (ct_packed.h): the geometry from the spec (the unit one I32 word), and, with `validate`,
// every scale finite, checked once here.
Status Dequantizer::init_ct_packed(const DequantSpec& spec) {
  const uint32_t sb = kernels::ct_scale_bytes(spec.scale_dtype);
  const uint32_t pf = kernels::ct_pack_factor(spec.bits);
  if (spec.bits < 1 || spec.bits > 8 || sb == 0 || !spec.scales || spec.row_elems == 0 || spec.group == 0 ||
      spec.block_rows == 0 || spec.row_elems % pf != 0 || spec.group % pf != 0 || spec.row_elems % spec.group != 0 ||
      spec.elements % spec.row_elems != 0 || (spec.ct_int8 && spec.bits != 8))
    return fail(Status::InvalidQuantParams, spec.input_offset);
  const uint64_t rows = spec.elements / spec.row_elems;
  const uint64_t count = ((rows + spec.block_rows - 1) / spec.block_rows) * (spec.row_elems / spec.group);
  spec_.group = spec.group;
  block_elems_ = pf;
  block_bytes_ = 4;
  spec_.gptq_g_idx_is_groups = true;
  if (spec.gptq_g_idx && ct_g_idx_check(spec) != Status::Ok) return error_.code;
  if (!spec.validate) return Status::Ok;
  const uint64_t bad = first_bad_scale(spec.scales, count, spec.scale_dtype);
  return bad < count ? fail(Status::InvalidBlockData, spec.scales_offset + bad * sb) : Status::Ok;
}

// GptqPacked (gptq_packed.h): the geometry from the spec; every g_idx value a group of the scales
// (always: a group past them would read past the companions), and, with `validate`, every
// scale finite — checked once here.
Status Dequantizer::init_gptq(const DequantSpec& spec) {
  const uint32_t sb = kernels::fp8_scale_bytes(spec.scale_dtype);
  const bool bits_ok = spec.bits == 2 || spec.bits == 3 || spec.bits == 4 || spec.bits == 8;
  const bool dtype_ok = spec.scale_dtype == DType::F16 || spec.scale_dtype == DType::BF16 || spec.scale_dtype == DType::F32;
  if (!bits_ok || !dtype_ok || !spec.scales || !spec.gptq_zeros || spec.row_elems == 0 || spec.gptq_groups == 0 ||
      (!spec.gptq_g_idx && spec.group == 0) || spec.gptq_zero_add > 1 || spec.elements % spec.row_elems != 0 ||
      (spec.gptq_awq_zeros && spec.bits != 4) ||  // AWQ's interleave is of 8 lanes
      (spec.gptq_zero_words && (spec.bits != 4 || spec.gptq_awq_zeros || spec.gptq_zero_words < (spec.gptq_groups + 7) / 8)))
    return fail(Status::InvalidQuantParams, spec.input_offset);
  const uint32_t per = kernels::gptq_block_values(spec.bits);
  const uint64_t rows = spec.elements / spec.row_elems;
  // Rows hold whole blocks (a word; 3 for 3 bits); qzeros pack the rows (output features) in
  // whole blocks too.
  if (spec.row_elems % per != 0 || rows % per != 0) return fail(Status::InvalidQuantParams, spec.input_offset);
  block_elems_ = per;
  block_bytes_ = 4 * kernels::gptq_block_words(spec.bits);
  bool groups = true;
  if (spec.gptq_g_idx) {
    for (uint64_t i = 0; i < spec.row_elems; ++i) {
      const uint32_t g = kernels::gptq_le32(spec.gptq_g_idx + 4 * i);
      if (g >= spec.gptq_groups) return fail(Status::QuantGroupIndexOutOfRange, spec.gptq_g_idx_offset + 4 * i);
      if (spec.group == 0 || g != i / spec.group) groups = false;
    }
  } else if ((spec.row_elems + spec.group - 1) / spec.group > spec.gptq_groups) {
    return fail(Status::InvalidQuantParams, spec.input_offset);
  }
  spec_.gptq_g_idx_is_groups = groups;
  if (!spec.validate) return Status::Ok;
  // AWQ GEMV: every stored scale, the padding too (from_linear leaves it zero).
  const uint64_t n = spec.gptq_zero_words ? rows * spec.gptq_zero_words * 8 : uint64_t(spec.gptq_groups) * rows;
  const uint64_t bad = first_bad_scale(spec.scales, n, spec.scale_dtype);
  return bad < n ? fail(Status::InvalidBlockData, spec.scales_offset + bad * sb) : Status::Ok;
}

// Bnb4 (bnb4.h): a blocksize bitsandbytes writes (a power of two, 32..4096), an even element
// count, the absmax there (F32, or U8 codes with the nested absmax, code and offset), the unit;
// with `validate`, every stored f32 (absmax, or nested absmax and code) finite, checked once here
// (a non-finite nested offset, a number of the quant state, is no parameter a writer made).
Status Dequantizer::init_bnb4(const DequantSpec& spec) {
  const uint64_t bs = spec.group;
  const bool bs_ok = bs >= 32 && bs <= 4096 && (bs & (bs - 1)) == 0;
  const bool nested = spec.scale_dtype == DType::U8;
  const uint64_t ng = spec.nested_group;
  const bool nested_ok = !nested || (spec.nested_absmax && spec.nested_code && ng != 0 && (ng & (ng - 1)) == 0);
  if (!bs_ok || spec.elements % 2 != 0 || !spec.scales || (spec.scale_dtype != DType::F32 && !nested) || !nested_ok)
    return fail(Status::InvalidQuantParams, spec.input_offset);
  spec_.group = uint32_t(bs);  // the blocksize; the unit below
  block_elems_ = kernels::bnb4_unit(spec.elements, bs);
  if (block_elems_ == 0) return fail(Status::InvalidQuantParams, spec.input_offset);
  block_bytes_ = block_elems_ / 2;
  if (!spec.validate) return Status::Ok;
  const uint64_t blocks = (spec.elements + bs - 1) / bs;
  if (!nested) {
    const uint64_t bad = first_bad_scale(spec.scales, blocks, DType::F32);
    return bad < blocks ? fail(Status::InvalidBlockData, spec.scales_offset + 4 * bad) : Status::Ok;
  }
  uint32_t off;
  memcpy(&off, &spec.nested_offset, 4);
  if ((off & 0x7F800000u) == 0x7F800000u) return fail(Status::InvalidQuantParams, spec.input_offset);
  const uint64_t nested_blocks = (blocks + ng - 1) / ng;
  const uint64_t bad_absmax = first_bad_scale(spec.nested_absmax, nested_blocks, DType::F32);
  if (bad_absmax < nested_blocks) return fail(Status::InvalidBlockData, spec.nested_absmax_offset + 4 * bad_absmax);
  const uint64_t bad_code = first_bad_scale(spec.nested_code, 256, DType::F32);
  return bad_code < 256 ? fail(Status::InvalidBlockData, spec.nested_code_offset + 4 * bad_code) : Status::Ok;
}

// BnbInt8 (bnb_int8.h): rows of row_elems values, an F32 SCB per row; the unit; with `validate`,
// every SCB finite.
Status Dequantizer::init_bnb_int8(const DequantSpec& spec) {
  if (!spec.scales || spec.scale_dtype != DType::F32 || spec.row_elems == 0 || spec.elements % spec.row_elems != 0)
    return fail(Status::InvalidQuantParams, spec.input_offset);
  block_elems_ = block_bytes_ = kernels::bnb_int8_unit(spec.row_elems);
  if (!spec.validate) return Status::Ok;
  const uint64_t rows = spec.elements / spec.row_elems;
  const uint64_t bad = first_bad_scale(spec.scales, rows, DType::F32);
  return bad < rows ? fail(Status::InvalidBlockData, spec.scales_offset + 4 * bad) : Status::Ok;
}

Status Dequantizer::init(const DequantSpec& spec) {
  *this = Dequantizer();
  spec_ = spec;
  if (static_cast<uint32_t>(spec.format) >= kQuantFormatCount) return fail(Status::UnsupportedFormat, 0);
  if (spec.out != OutType::F32 && spec.out != OutType::F16 && spec.out != OutType::BF16)
    return fail(Status::InvalidQuantParams, spec.input_offset);
  const kernels::FormatEntry& e = kernels::format_entry(spec.format);
  block_elems_ = e.info.block_elems;
  block_bytes_ = e.info.block_bytes;

  // Companion formats: geometry from the spec, and the companions must be there.
  switch (spec.format) {
    case QuantFormat::MlxAffine: {
      bool bits_ok = spec.bits == 2 || spec.bits == 3 || spec.bits == 4 || spec.bits == 5 ||
                     spec.bits == 6 || spec.bits == 8;
      bool group_ok = spec.group == 32 || spec.group == 64 || spec.group == 128;
      bool dtype_ok = spec.scale_dtype == DType::BF16 || spec.scale_dtype == DType::F16 ||
                      spec.scale_dtype == DType::F32;
      if (!bits_ok || !group_ok || !dtype_ok || !spec.scales || !spec.biases)
        return fail(Status::InvalidQuantParams, spec.input_offset);
      block_elems_ = spec.group;
      block_bytes_ = spec.group * spec.bits / 8;
      break;
    }
    case QuantFormat::MlxMxfp4:
    case QuantFormat::MlxMxfp8:
    case QuantFormat::MlxNvfp4:
      if ((spec.group != 0 && spec.group != block_elems_) || !spec.scales)
        return fail(Status::InvalidQuantParams, spec.input_offset);
      spec_.group = block_elems_;
      if (spec.global_scale_is_modelopt || spec.global_scale_divides) {
        // ModelOpt NVFP4 always has its weight_scale_2, compressed-tensors' nvfp4 its
        // weight_global_scale; zero (all values 0 where the writer divided by it, inf or NaN
        // where the reader divides), inf or NaN is no scale a writer made.
        if (spec.format != QuantFormat::MlxNvfp4 || !spec.has_global_scale || spec.global_scale_is_ollama ||
            (spec.global_scale_is_modelopt && spec.global_scale_divides))
          return fail(Status::InvalidQuantParams, spec.input_offset);
        uint32_t gb;
        memcpy(&gb, &spec.global_scale, 4);
        if (spec.validate && ((gb & 0x7F800000u) == 0x7F800000u || (gb & 0x7FFFFFFFu) == 0))
          return fail(Status::InvalidBlockData, spec.global_scale_offset);
      }
      break;
    case QuantFormat::I2_S:
      if (!spec.has_global_scale) return fail(Status::InvalidQuantParams, spec.input_offset);
      break;
    case QuantFormat::Fp8Block:
      if (init_fp8_block(spec) != Status::Ok) return error_.code;
      break;
    case QuantFormat::CtPacked:
      if (init_ct_packed(spec) != Status::Ok) return error_.code;
      break;
    case QuantFormat::GptqPacked:
      if (init_gptq(spec) != Status::Ok) return error_.code;
      break;
    case QuantFormat::Bnb4:
      if (init_bnb4(spec) != Status::Ok) return error_.code;
      break;
    case QuantFormat::BnbInt8:
      if (init_bnb_int8(spec) != Status::Ok) return error_.code;
      break;
    default:
      break;
  }
  // F8Q8 alone pads its last block (mistral.rs pads the flattened weight to whole blocks and
  // drops the decoded tail); every other format holds whole blocks of the tensor's values.
  uint64_t blocks = spec.elements / block_elems_;
  if (spec.elements % block_elems_ != 0) {
    if (spec.format != QuantFormat::F8Q8 || block_elems_ > kPaddedBlockElems)
      return fail(Status::InvalidQuantParams, spec.input_offset);
    tail_elems_ = uint32_t(spec.elements % block_elems_);
    ++blocks;
  }
  total_blocks_ = blocks;
  if (__builtin_mul_overflow(blocks, uint64_t(block_bytes_), &input_bytes_))
    return fail(Status::InvalidQuantParams, spec.input_offset);
  if (block_bytes_ > sizeof(carry_)) return fail(Status::UnsupportedFormat, spec.input_offset);

  kernels::BlockKernel k = nullptr;
  switch (spec.impl) {
    case KernelImpl::Reference: k = e.reference; impl_ = KernelImpl::Reference; break;
    case KernelImpl::Simd128: k = e.simd128; impl_ = KernelImpl::Simd128; break;
    case KernelImpl::Auto:
      k = e.simd128 ? e.simd128 : e.reference;
      impl_ = e.simd128 ? KernelImpl::Simd128 : KernelImpl::Reference;
      break;
  }
  if (!k) return fail(Status::UnsupportedFormat, spec.input_offset);
  kernel_ = reinterpret_cast<void (*)()>(k);  // cast back to BlockKernel before the call

  // Companion scales are whole arrays: check them once, up front (Fp8Block's grid, CtPacked's and
  // GptqPacked's scales, Bnb4's absmax, BnbInt8's SCB: above).
  if (spec.validate && e.info.companion && spec.format != QuantFormat::Fp8Block &&
      spec.format != QuantFormat::CtPacked && spec.format != QuantFormat::GptqPacked &&
      spec.format != QuantFormat::Bnb4 && spec.format != QuantFormat::BnbInt8) {
    for (uint64_t g = 0; g < blocks; ++g) {
      bool bad;
      uint32_t sb = 1;
      if (spec.format == QuantFormat::MlxAffine) {
        sb = scale_bytes(spec.scale_dtype);
        uint16_t h;
        memcpy(&h, spec.scales + g * sb, 2);
        if (spec.scale_dtype == DType::F16) bad = !fp16_is_finite(h);
        else if (spec.scale_dtype == DType::BF16) bad = (h & 0x7F80) == 0x7F80;
        else {
          uint32_t u;
          memcpy(&u, spec.scales + g * 4, 4);
          bad = (u & 0x7F800000u) == 0x7F800000u;
        }
      } else if (spec.format == QuantFormat::MlxNvfp4) {
        bad = (spec.scales[g] & 0x7F) == 0x7F;  // E4M3 NaN
      } else {
        bad = spec.scales[g] == 0xFF;  // E8M0 NaN
      }
      if (bad) {
        fail(Status::InvalidBlockData, spec.scales_offset + g * sb);
        return error_.code;
      }
    }
  }
  return Status::Ok;
}

namespace {

// The fp16 and E8M0 scale checks of n blocks as one OR, without a branch per block: bit 15 of
// (h & 0x7C00) + 0x400 is set exactly for an all-ones exponent (inf or NaN), bit 8 of e + 1
// exactly for e = 0xFF. Real data is valid, so this pass is the whole validation cost; only a
// set bit sends the caller to the exact per-block loop for the first offending byte. (The
// per-block loop with its early exits ran at a fraction of the SIMD128 kernels' speed.)
bool scales_may_be_invalid(const kernels::FormatEntry& e, const uint8_t* src, size_t n_blocks, size_t bb) {
  uint32_t acc = 0;
  auto f16_bad = [](const uint8_t* p) -> uint32_t {
    uint16_t h;
    memcpy(&h, p, 2);
    return ((uint32_t(h) & 0x7C00u) + 0x400u) & 0x8000u;
  };
  // The field offsets as loop constants: one or two fields is every format with fp16 scales.
  if (e.n_fp16_fields == 1) {
    const size_t f0 = e.fp16_fields[0];
    for (size_t b = 0; b < n_blocks; ++b) acc |= f16_bad(src + b * bb + f0);
  } else if (e.n_fp16_fields == 2) {
    const size_t f0 = e.fp16_fields[0], f1 = e.fp16_fields[1];
    for (size_t b = 0; b < n_blocks; ++b) acc |= f16_bad(src + b * bb + f0) | f16_bad(src + b * bb + f1);
  }
  if (e.e8m0_field >= 0) {
    const size_t f = size_t(e.e8m0_field);
    for (size_t b = 0; b < n_blocks; ++b) acc |= (uint32_t(src[b * bb + f]) + 1u) & 0x100u;
  }
  return acc != 0;
}

}  // namespace

size_t Dequantizer::output_of_block(uint64_t b) const {
  const size_t value_bytes = out_type_bytes(spec_.out);
  return tail_elems_ != 0 && b + 1 == total_blocks_ ? size_t(tail_elems_) * value_bytes : block_output_bytes();
}

size_t Dequantizer::blocks_fitting(uint64_t b, size_t room) const {
  const uint64_t left = total_blocks_ - b;
  uint64_t n = room / block_output_bytes();
  if (n >= left) return size_t(left);
  // A padded last block needs only its own values' room.
  if (tail_elems_ != 0 && n + 1 == left && room - n * block_output_bytes() >= output_of_block(total_blocks_ - 1)) ++n;
  return size_t(n);
}

// Whole blocks' values: f32 straight into dst; f16 straight from a SIMD128 f16 kernel where the
// format has one, else through decode_via_tile(). Inlined into run(), its one caller, as the loop was
// before it had a name: no frame of its own on the stack.
__attribute__((always_inline)) inline void Dequantizer::decode_blocks(const uint8_t* src, size_t n_blocks, uint8_t* dst, uint64_t first_block) {
  kernels::BlockKernel k = reinterpret_cast<kernels::BlockKernel>(kernel_);
  if ((spec_.format == QuantFormat::F16 && spec_.out == OutType::F16) ||
      (spec_.format == QuantFormat::BF16 && spec_.out == OutType::BF16)) {
    // F16 asked as f16 is the stored bytes, as F32 asked as f32 is: a signalling NaN stays one
    // (through f32 it would come out quiet), whichever kernel family was asked for. BF16 as bf16
    // likewise.
    memcpy(dst, src, n_blocks * 2);
    return;
  }
  if (spec_.out == OutType::F32) {
    kernels::KernelContext ctx{&spec_, first_block};
    k(src, n_blocks, reinterpret_cast<float*>(dst), ctx);
    return;
  }
#if !defined(WS_KERNELS_REFERENCE_ONLY)
  // SIMD128 kernels with f16 output of their own write straight into dst.
  if (impl_ == KernelImpl::Simd128 && spec_.out == OutType::F16) {
    const kernels::BlockKernelF16 k16 = kernels::format_entry(spec_.format).simd128_f16;
    if (k16) {
      kernels::KernelContext ctx{&spec_, first_block};
      k16(src, n_blocks, reinterpret_cast<uint16_t*>(dst), ctx);
      return;
    }
  }
#endif
  decode_via_tile(src, n_blocks, dst, first_block);
}

// f16 / bf16 through an f32 tile of N values on the stack: the f32 kernel, then the row
// conversion. Out of line, so that only these decodes pay for the tile (run() and
// decode_blocks() are on every decode's stack; the Cortex-M4F firmware, which decodes f32,
// measured run()'s frame at 1,152 bytes with it inline). `per_tile` blocks fit N values.
namespace {
template <size_t N>
__attribute__((noinline)) void decode_through_tile(kernels::BlockKernel k, const DequantSpec& spec, KernelImpl impl,
                                                   size_t block_elems, size_t block_bytes, const uint8_t* src,
                                                   size_t n_blocks, uint8_t* dst, uint64_t first_block) {
  alignas(16) float tile[N];
  const size_t per_tile = block_elems >= N ? 1 : N / block_elems;
  uint16_t* out = reinterpret_cast<uint16_t*>(dst);
  for (size_t b = 0; b < n_blocks;) {
    size_t nb = n_blocks - b < per_tile ? n_blocks - b : per_tile;
    // Blocks larger than the tile (none today) would need splitting; init() keeps them out.
    kernels::KernelContext ctx{&spec, first_block + b};
    k(src + b * block_bytes, nb, tile, ctx);
    size_t n = nb * block_elems;
#if !defined(WS_KERNELS_REFERENCE_ONLY)
    if (impl == KernelImpl::Simd128) {
      // Bit-identical to the scalar loops below, ~10x faster.
      if (spec.out == OutType::F16) kernels::simd128::f32_to_f16_row(tile, n, out);
      else kernels::simd128::f32_to_bf16_row(tile, n, out);
      out += n;
      b += nb;
      continue;
    }
#else
    (void)impl;
#endif
    if (spec.out == OutType::F16) {
      for (size_t i = 0; i < n; ++i) out[i] = kernels::f32_to_fp16(tile[i]);
    } else {
      for (size_t i = 0; i < n; ++i) out[i] = kernels::f32_to_bf16_rne(tile[i]);
    }
    out += n;
    b += nb;
  }
}
}  // namespace

void Dequantizer::decode_via_tile(const uint8_t* src, size_t n_blocks, uint8_t* dst, uint64_t first_block) {
  kernels::BlockKernel k = reinterpret_cast<kernels::BlockKernel>(kernel_);
  if (block_elems_ > kSmallTileElems)
    decode_through_tile<kTileElems>(k, spec_, impl_, block_elems_, block_bytes_, src, n_blocks, dst, first_block);
  else
    decode_through_tile<kSmallTileElems>(k, spec_, impl_, block_elems_, block_bytes_, src, n_blocks, dst, first_block);
}

// Out of line, so that only a padded tensor's last block pays for its 128-byte bounce buffer on
// the stack (the microcontroller build measures the stack high-water of every decode). f16 values
// are rounded one by one: the scalar rounding is the SIMD row's, bit for bit.
__attribute__((noinline)) void Dequantizer::decode_padded_block(const uint8_t* src, uint8_t* dst, uint64_t block,
                                                                size_t out_bytes) {
  alignas(16) float values[kPaddedBlockElems];
  kernels::KernelContext ctx{&spec_, block};
  reinterpret_cast<kernels::BlockKernel>(kernel_)(src, 1, values, ctx);
  if (spec_.out == OutType::F32) {
    memcpy(dst, values, out_bytes);
    return;
  }
  for (size_t i = 0; i < out_bytes / 2; ++i) {
    const uint16_t h = spec_.out == OutType::F16 ? kernels::f32_to_fp16(values[i]) : kernels::f32_to_bf16_rne(values[i]);
    memcpy(dst + 2 * i, &h, 2);
  }
}

Status Dequantizer::run(const uint8_t* src, size_t n_blocks, uint8_t* dst, size_t* out_bytes) {
  const kernels::FormatEntry& e = kernels::format_entry(spec_.format);
  // The exact loop runs when a block-level check exists (IQ1_M, Q8_K) or the fast pass saw a
  // bad scale; it reports the first invalid field's byte offset.
  if (spec_.validate && (e.check_block || ((e.n_fp16_fields || e.e8m0_field >= 0) &&
                                           scales_may_be_invalid(e, src, n_blocks, block_bytes_)))) {
    for (size_t b = 0; b < n_blocks; ++b) {
      const uint8_t* blk = src + b * block_bytes_;
      uint64_t at = spec_.input_offset + (blocks_done_ + b) * block_bytes_;
      for (uint8_t f = 0; f < e.n_fp16_fields; ++f) {
        uint16_t h;
        memcpy(&h, blk + e.fp16_fields[f], 2);
        if (!fp16_is_finite(h)) return fail(Status::InvalidBlockData, at + e.fp16_fields[f]);
      }
      if (e.e8m0_field >= 0 && blk[e.e8m0_field] == 0xFF) return fail(Status::InvalidBlockData, at + e.e8m0_field);
      if (e.check_block) {
        int32_t bad = e.check_block(blk);
        if (bad >= 0) return fail(Status::InvalidBlockData, at + uint32_t(bad));
      }
    }
  }
  // A padded last block is decoded into a tile and only its values within the tensor kept.
  const bool padded_last = tail_elems_ != 0 && blocks_done_ + n_blocks == total_blocks_;
  const size_t whole = padded_last ? n_blocks - 1 : n_blocks;
  decode_blocks(src, whole, dst, blocks_done_);
  *out_bytes = whole * block_output_bytes();
  if (padded_last) {
    const size_t tail = output_of_block(total_blocks_ - 1);
    decode_padded_block(src + whole * block_bytes_, dst + *out_bytes, blocks_done_ + whole, tail);
    *out_bytes += tail;
  }
  blocks_done_ += n_blocks;
  elements_done_ = padded_last ? spec_.elements : elements_done_ + uint64_t(n_blocks) * block_elems_;
  return Status::Ok;
}

Status Dequantizer::decode(const uint8_t* in, size_t in_size, size_t* in_used, void* out, size_t out_cap,
                           size_t* out_written) {
  *in_used = 0;
  *out_written = 0;
  if (error_.code != Status::Ok) return error_.code;
  if (!kernel_) return fail(Status::UsageError, 0);
  if (done()) return Status::Ok;  // nothing left (a zero-element tensor): no output room needed
  if (out_cap < output_of_block(blocks_done_)) return fail(Status::OutputTooSmall, spec_.input_offset + consumed_);
  uint8_t* dst = static_cast<uint8_t*>(out);
  size_t used = 0, written = 0;

  // A block begun in an earlier piece.
  if (carry_size_ != 0) {
    size_t take = block_bytes_ - carry_size_;
    if (take > in_size) take = in_size;
    memcpy(carry_ + carry_size_, in, take);
    carry_size_ += uint32_t(take);
    used += take;
    consumed_ += take;
    if (carry_size_ < block_bytes_) {
      *in_used = used;
      return Status::Ok;
    }
    size_t n_out = 0;
    Status s = run(carry_, 1, dst, &n_out);
    if (s != Status::Ok) return s;
    carry_size_ = 0;
    written += n_out;
  }
  // Whole blocks straight from the input, as many as the output holds.
  size_t n = (in_size - used) / block_bytes_;
  const size_t fit = blocks_fitting(blocks_done_, out_cap - written);
  if (n > fit) n = fit;
  if (n != 0) {
    size_t n_out = 0;
    Status s = run(in + used, n, dst + written, &n_out);
    if (s != Status::Ok) return s;
    used += n * size_t(block_bytes_);
    consumed_ += n * uint64_t(block_bytes_);
    written += n_out;
  }
  // A tail shorter than a block: carry it, if the tensor still needs it.
  size_t rest = in_size - used;
  if (rest != 0 && rest < block_bytes_ && blocks_done_ < total_blocks_) {
    memcpy(carry_, in + used, rest);
    carry_size_ = uint32_t(rest);
    used += rest;
    consumed_ += rest;
  }
  *in_used = used;
  *out_written = written;
  return Status::Ok;
}

Status dequantize(const DequantSpec& spec, const void* in, size_t in_bytes, void* out, size_t out_bytes,
                  Error* error) {
  Dequantizer d;
  Status s = d.init(spec);
  if (s == Status::Ok && (in_bytes != d.input_bytes() ||
                          out_bytes < spec.elements * out_type_bytes(spec.out)))
    s = Status::InvalidQuantParams;
  if (s == Status::Ok) {
    size_t in_used = 0, out_written = 0;
    s = d.decode(static_cast<const uint8_t*>(in), in_bytes, &in_used, out, out_bytes, &out_written);
  }
  if (error) {
    *error = d.error();
    if (error->code == Status::Ok && s != Status::Ok) error->code = s;
  }
  return s;
}

float f16_to_f32(uint16_t h) { return kernels::fp16_to_f32(h); }
uint16_t f32_to_f16(float f) { return kernels::f32_to_fp16(f); }
uint16_t f32_to_bf16(float f) { return kernels::f32_to_bf16_rne(f); }

const char* out_type_name(OutType t) {
  return t == OutType::F32 ? "f32" : t == OutType::F16 ? "f16" : t == OutType::BF16 ? "bf16" : "?";
}

bool out_type_from_name(const char* name, OutType* out) {
  static const OutType kAll[] = {OutType::F32, OutType::F16, OutType::BF16};
  for (OutType t : kAll) {
    if (strcmp(name, out_type_name(t)) == 0) {
      *out = t;
      return true;
    }
  }
  return false;
}
float bf16_to_f32(uint16_t b) { return kernels::bf16_to_f32_bits(b); }

void bf16_to_f16(const uint16_t* in, size_t n, uint16_t* out) {
  // BF16 -> F32 is exact, so this rounds once (to nearest even).
  for (size_t i = 0; i < n; ++i) out[i] = kernels::f32_to_fp16(kernels::bf16_to_f32_bits(in[i]));
}

}  // namespace ws
