// weightstream — dequantization: stored tensor bytes in, f32 or f16 out, chunk by chunk.
//
//   ws::DequantSpec spec;
//   spec.format = ws::QuantFormat::Q4_K;   // or from quant_format_from_ggml(t.type, dialect, ...)
//   spec.elements = t.element_count();
//   ws::Dequantizer d;
//   if (d.init(spec) != ws::Status::Ok) ...;
//   // for every TensorBytes span of the tensor, possibly several output pieces per span:
//   size_t used = 0;
//   while (used < span.size) {
//     size_t in_used, out_bytes;
//     d.decode(span.data + used, span.size - used, &in_used, out, sizeof out, &out_bytes);
//     used += in_used;  // out[0, out_bytes) holds the next values, in element order
//   }
//
// Every format has two implementations sharing one table: a portable scalar reference (the
// formulas of FORMATS.md, the oracle) and SIMD128 (wasm_simd128.h; natively through SIMDe). Both
// give bit-identical output. Nothing allocates; the decoder carries at most one partial block.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/dtype.h"
#include "weightstream/ggml_types.h"
#include "weightstream/status.h"

namespace ws {

#define WS_QUANT_FORMAT_LIST(X)                                                                    \
  /* element-wise */                                                                               \
  X(F32) X(F16) X(BF16) X(F8_E4M3) X(F8_E5M2) X(F8_E8M0)                                            \
  /* GGML blocks (self-contained) */                                                               \
  X(Q4_0) X(Q4_1) X(Q5_0) X(Q5_1) X(Q8_0) X(Q2_K) X(Q3_K) X(Q4_K) X(Q5_K) X(Q6_K) X(Q8_K)          \
  X(IQ4_NL) X(IQ4_XS) X(TQ1_0) X(TQ2_0) X(MXFP4) X(NVFP4) X(Q1_0) X(Q2_0)                          \
  X(IQ1_S) X(IQ1_M) X(IQ2_XXS) X(IQ2_XS) X(IQ2_S) X(IQ3_XXS) X(IQ3_S)                              \
  /* BitNet I2_S (x86 layout): 128-element groups of 32 bytes; the f32 scale is given in the spec */ \
  X(I2_S)                                                                                          \
  /* packed weights with companion scale tensors (MLX, Ollama, UQFF Afq/Mxfp4) */                  \
  X(MlxAffine) X(MlxMxfp4) X(MlxMxfp8) X(MlxNvfp4)                                                 \
  /* UQFF F8Q8: 33-byte blocks {e4m3 d; i8 qs[32]} */                                              \
  X(F8Q8)                                                                                          \
  /* Hub FP8 (quant_method "fp8"): F8_E4M3/F8_E5M2 weights times a scale per 2-D block */           \
  X(Fp8Block)                                                                                      \
  /* compressed-tensors pack-quantized: ints packed along a row into I32 words, scales, zero points */ \
  X(CtPacked)                                                                                      \
  /* GPTQ (AutoGPTQ / GPTQModel qweight, transposed to logical rows): int32 words of 32/bits codes */ \
  X(GptqPacked)                                                                                    \
  /* bitsandbytes 4-bit (NF4 / FP4): packed codes, high nibble first, an absmax per block */         \
  X(Bnb4)                                                                                          \
  /* bitsandbytes 8-bit (LLM.int8): I8 rows times their SCB / 127 */                               \
  X(BnbInt8)

enum class QuantFormat : uint8_t {
#define WS_QF_ENUM(name) name,
  WS_QUANT_FORMAT_LIST(WS_QF_ENUM)
#undef WS_QF_ENUM
      Count_
};
constexpr uint32_t kQuantFormatCount = static_cast<uint32_t>(QuantFormat::Count_);

// Output values. Every format is decoded to f32 first (the formulas of FORMATS.md, reference and
// SIMD128 bit-identical); F16 output is that f32 rounded once to binary16, round to nearest even
// (the SIMD128 kernels of many formats write it directly, with the same bits):
//   - |x| that rounds to >= 65520 becomes +-inf (F16's largest finite is 65504);
//   - below 2^-14 the result is an f16 subnormal, rounded (2^-25 and less becomes +-0; signed
//     zeros keep their sign);
//   - inf stays inf; NaN stays a quiet NaN with its sign and the top 10 bits of its payload.
// F16 asked as F16 is the exception: the stored halves, bit for bit (a signalling NaN stays one),
// as F32 asked as F32 is the stored floats.
// inf and NaN in the output: with `validate` on (the default) blocks whose fp16 scales are inf
// or NaN, or whose E8M0 scale is 0xFF, are rejected before decoding, so finite stored values give
// finite f32 output. With validate off they are decoded as IEEE arithmetic has it (inf * q = inf,
// inf * 0 = NaN); the sign of a NaN that arithmetic creates is the platform's (x86 and wasm
// differ), the NaN-ness is not. Element-wise inputs (F16/BF16/F32/F8) convert exactly, inf and
// NaN included; BF16 -> F16 rounds as above.
// BF16 output is the same f32 rounded once to bfloat16, round to nearest even as torch's
// c10/util/BFloat16.h round_to_nearest_even and ggml's ggml_compute_fp32_to_bf16 do (add 0x7FFF
// plus the lowest kept bit, keep the top 16 bits): values past bf16's largest finite become inf,
// inf stays inf, f32 subnormals round like any other value (bf16 has f32's exponent range). NaN
// stays a quiet NaN with its sign and the top 7 bits of its payload (the top 16 bits with the
// quiet bit 0x0040 set: ggml's rule, as F16 output keeps NaNs; torch writes every NaN as
// 0x7FC0). BF16 asked as BF16 is the stored halves, bit for bit.
enum class OutType : uint8_t { F32, F16, BF16 };
// Bytes of one output value: 4 for F32, 2 for F16 and BF16.
inline uint32_t out_type_bytes(OutType t) { return t == OutType::F32 ? 4 : 2; }
// "f32", "f16", "bf16"; and back (false for other names).
const char* out_type_name(OutType t);
bool out_type_from_name(const char* name, OutType* out);
enum class KernelImpl : uint8_t { Auto, Reference, Simd128 };

struct QuantFormatInfo {
  const char* name = "?";
  uint32_t block_elems = 0;  // elements per block (companion formats: per group, from the spec)
  uint32_t block_bytes = 0;  // stored bytes per block (companion formats: 0, from the spec)
  bool companion = false;    // needs scales (and biases) given in the spec
};

QuantFormatInfo quant_format_info(QuantFormat f);
const char* quant_format_name(QuantFormat f);
bool quant_format_from_name(const char* name, QuantFormat* out);
// The format that decodes a GGML type (GGUF tensors); false for types with nothing to decode
// (I8..I64, F64, TL1/TL2, I8_S, Q8_1).
bool quant_format_from_ggml(uint32_t ggml_type, GgmlDialect dialect, QuantFormat* out);
// Element-wise safetensors dtypes: F32, F16, BF16, F8_E4M3, F8_E5M2, F8_E8M0.
bool quant_format_from_dtype(DType dtype, QuantFormat* out);

struct DequantSpec {
  QuantFormat format = QuantFormat::F32;
  OutType out = OutType::F32;
  KernelImpl impl = KernelImpl::Auto;
  // Logical elements of the tensor: a multiple of the block/group size, except F8Q8, whose
  // writer (mistral.rs f8q8 `from_weight`) pads the flattened weight to whole 32-value blocks:
  // ceil(elements / 32) blocks are read and the last block's values past `elements` dropped.
  uint64_t elements = 0;

  // Companion formats. MlxAffine: bits 2,3,4,5,6,8, group 32/64/128, scales and biases one per
  // group in scale_dtype (BF16, F16 or F32). MlxMxfp4/MlxMxfp8: group 32, scales U8 E8M0.
  // MlxNvfp4: group 16, scales U8 E4M3, optional global scale.
  uint32_t bits = 0;
  uint32_t group = 0;
  DType scale_dtype = DType::BF16;
  const uint8_t* scales = nullptr;  // all groups' scales, in group order (the whole tensor)
  const uint8_t* biases = nullptr;
  // nvfp4 (MLX): output times global_scale / (448 * 6). Ollama: output times global_scale.
  // I2_S: the tensor's f32 scale (from its 32-byte tail). Used when has_global_scale.
  bool has_global_scale = false;
  float global_scale = 1.0f;
  bool global_scale_is_ollama = false;

  // Reject invalid block data (fp16 scales that are inf/NaN; E8M0 0xFF where it means NaN)
  // with InvalidBlockData at the block's offset, as ggml's row validation does.
  bool validate = true;
  uint64_t input_offset = 0;   // absolute file offset of the tensor's first stored byte
  uint64_t scales_offset = 0;  // absolute file offset of the scales tensor (for errors)

  // Fp8Block (the Hub's FP8 checkpoints): a [rows, row_elems] weight of `element_dtype`
  // (F8_E4M3 or F8_E5M2) and one scale per block_rows x block_cols block, in `scales`, a
  // row-major ceil(rows / block_rows) x ceil(row_elems / block_cols) grid of scale_dtype (F32,
  // BF16, F16, F8_E8M0, or U8 holding a UE8M0 exponent). Value = f32(fp8) * f32(scale): per
  // tensor is one block of the whole weight, per channel blocks of [1, row_elems]. `group` is
  // not read: the decoder picks its own unit (a power of two dividing both row_elems and
  // block_cols, at most 256).
  DType element_dtype = DType::F8_E4M3;
  uint64_t row_elems = 0;
  uint64_t block_rows = 0, block_cols = 0;
  // MlxNvfp4, NVIDIA ModelOpt's rule (modelopt/torch/quantization/qtensor/nvfp4_tensor.py
  // NVFP4QTensor.dequantize): the global scale (`weight_scale_2`) multiplies the block scale as
  // stored, w = E2M1 * (e4m3(s) * global_scale) — MLX's order without its / 2688. A global
  // scale that is zero, inf or NaN is InvalidBlockData at global_scale_offset (with validate).
  bool global_scale_is_modelopt = false;
  // MlxNvfp4, compressed-tensors' rule (nvfp4-pack-quantized; neuralmagic/compressed-tensors
  // quantization/lifecycle/forward.py _dequantize: scale = scale.to(f32) / global_scale, then
  // x_q * scale): the global scale (`weight_global_scale`) divides the block scale,
  // w = E2M1 * (e4m3(s) / global_scale), each step rounded once in f32. Zero, inf or NaN is
  // InvalidBlockData at global_scale_offset (with validate), as ModelOpt's.
  bool global_scale_divides = false;
  uint64_t global_scale_offset = 0;  // absolute file offset of the global scale (for errors)
  // CtPacked (compressed-tensors `pack-quantized`, lib/src/kernels/ct_packed.h): a [rows,
  // row_elems] weight of `bits`-bit integers (bits 1..8, 32 / bits of them to a little-endian I32
  // word, the first in the low bits), one scale of scale_dtype (F32, BF16, F16) per `group`
  // columns of a row (group = row_elems: per channel), one scale row per `block_rows` rows (1;
  // rows: per tensor); zero points (`biases`, optional: symmetric) I32 words packed the same way
  // down the rows, [ceil(rows / (32 / bits)), row_elems / group], or, with element_dtype I8,
  // unpacked int8 [rows, row_elems / group] (older files). row_elems and group are multiples of
  // 32 / bits.

  // GptqPacked (GPTQ's qweight / qzeros / scales / g_idx; lib/src/kernels/gptq_packed.h): a
  // logical [rows, row_elems] weight (row_elems = in_features) whose input stream is the
  // qweight's int32 words in logical-row order — word r of row o is qweight[r][o], the stored
  // [in * bits / 32, out] matrix read down its column o (the loader transposes the words). Word r
  // holds the codes of inputs r * (32 / bits) + j in bits j * bits, low first; with `bits` 3 a
  // block is 3 words holding 32 codes, code k at bit 3k of the three read as one little-endian
  // bit string (codes 10 and 21 straddle words). `bits` 2, 3, 4 or 8;
  // `scales` [gptq_groups, rows] in scale_dtype (F16, BF16 or F32); `gptq_zeros` the int32
  // qzeros [gptq_groups, rows * bits / 32] (packed as qweight's blocks along the rows), each lane
  // read as an unsigned code plus
  // gptq_zero_add (1 for checkpoint_format "gptq", 0 for "gptq_v2"); `gptq_g_idx` int32
  // [row_elems], the group of each input (null: input / group). Value = f32(scale) *
  // f32(q - zero), one multiplication. A g_idx value outside [0, gptq_groups) is
  // QuantGroupIndexOutOfRange at its byte (gptq_g_idx_offset), with or without validate.
  // CtPacked with ct_int8 (bits 8): the words are int8 values as stored (compressed-tensors'
  // naive- / int-quantized weights, two's complement), not offset by 2^(bits-1).
  bool ct_int8 = false;
  // CtPacked takes gptq_g_idx too: compressed-tensors' weight_g_idx (activation ordering), the
  // group of each column, -1 anywhere meaning column order (ct_packed.h).
  uint32_t gptq_groups = 0;
  uint32_t gptq_zero_add = 0;
  const uint8_t* gptq_zeros = nullptr;
  const uint8_t* gptq_g_idx = nullptr;
  uint64_t gptq_g_idx_offset = 0;
  // AWQ (issue #28; AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM.from_linear): the qzeros
  // words hold their 8 outputs in AWQ's interleave (lane j holds output 8c + AWQ_ORDER[j],
  // AWQ_ORDER = 0,2,4,6,1,3,5,7; awq/utils/packing_utils.py), so the zero of output o is lane
  // AWQ_REVERSE_ORDER[o % 8] = 0,4,1,5,2,6,3,7 of word o / 8. bits 4 only; zero_add 0.
  bool gptq_awq_zeros = false;
  // AWQ GEMV (AutoAWQ awq/modules/linear/gemv.py WQLinear_GEMV.from_linear): qzeros and scales
  // are row-major by output — qzeros [rows, gptq_zero_words], group g of row o in lane g % 8 of
  // word g / 8 (natural order), scales [rows, gptq_zero_words * 8] — padded past gptq_groups.
  // 0: the [gptq_groups, rows] layout above. bits 4 only; zero_add 0.
  uint32_t gptq_zero_words = 0;
  // Set by the Dequantizer (not by callers): g_idx is null or input / group everywhere, so a
  // run of `group` inputs shares one scale and zero.
  bool gptq_g_idx_is_groups = false;

  // Bnb4 (bitsandbytes Params4bit, lib/src/kernels/bnb4.h): `elements` values packed two a byte,
  // element 2i in the HIGH nibble of byte i; value = code[nibble] * absmax[e / group] in f32,
  // code the NF4 table (bnb_fp4 false) or the FP4 one. `group` is the blocksize (a power of two,
  // 32..4096); `elements` must be even. scale_dtype F32: `scales` holds the absmax floats.
  // scale_dtype U8 (double quantization): `scales` holds one code byte per absmax, and absmax[j]
  // = f32(f32(nested_code[q[j]] * nested_absmax[j / nested_group]) + nested_offset), two f32
  // roundings (no fused multiply-add), nested_code F32[256], nested_absmax F32.
  bool bnb_fp4 = false;
  const uint8_t* nested_absmax = nullptr;
  const uint8_t* nested_code = nullptr;
  uint32_t nested_group = 0;
  float nested_offset = 0.0f;
  uint64_t nested_absmax_offset = 0;  // absolute file offsets of the two (for errors)
  uint64_t nested_code_offset = 0;
  // BnbInt8 (bitsandbytes Int8Params, lib/src/kernels/bnb_int8.h): a [rows, row_elems] I8
  // weight and `scales` F32 [rows] (SCB); value = f32(f32(q) * SCB[r]) * f32(1 / 127's constant),
  // two f32 roundings (int8_vectorwise_dequant). `row_elems` as for Fp8Block; `group` not read.
};

class Dequantizer {
 public:
  // Checks the spec (format known, sizes consistent, companions present, bits/group allowed).
  Status init(const DequantSpec& spec);

  // Consumes stored bytes from `in` (any piece size) and writes whole values into `out`
  // (out_cap bytes, at least one block's output: 256 values for K-quants) in element order.
  // Decodes as many whole blocks as fit in both; a block split across pieces is carried. (The
  // last block of a padded F8Q8 tensor writes only its values within `elements`.)
  // Alignment: `in` may have any alignment; `out` must be aligned to the output type (4 bytes
  // for F32, 2 for F16), and 16 bytes is recommended (the SIMD128 kernels write 16-byte
  // vectors: an unaligned `out` works but splits stores across cache lines; 2 bytes for BF16). Natively on x86,
  // a call writing >= 8 MiB of f32 to a 16-byte aligned `out` uses non-temporal stores (the
  // output bypasses the cache; about twice the memory bandwidth), smaller ones regular stores.
  Status decode(const uint8_t* in, size_t in_size, size_t* in_used, void* out, size_t out_cap,
                size_t* out_written);

  bool done() const { return elements_done_ == spec_.elements; }
  uint64_t elements_done() const { return elements_done_; }
  // Stored bytes the whole tensor takes.
  uint64_t input_bytes() const { return input_bytes_; }
  // Bytes of output one block produces (the smallest useful out_cap).
  size_t block_output_bytes() const;
  KernelImpl impl() const { return impl_; }
  const Error& error() const { return error_; }

 private:
  Status fail(Status s, uint64_t offset);
  Status init_fp8_block(const DequantSpec& spec);
  Status init_ct_packed(const DequantSpec& spec);
  Status ct_g_idx_check(const DequantSpec& spec);
  Status init_gptq(const DequantSpec& spec);
  Status init_bnb4(const DequantSpec& spec);
  Status init_bnb_int8(const DequantSpec& spec);
  // Decodes n_blocks whole blocks to dst; *out_bytes = the bytes written (less than n_blocks
  // blocks' output when they end with a padded last block).
  Status run(const uint8_t* src, size_t n_blocks, uint8_t* dst, size_t* out_bytes);
  void decode_blocks(const uint8_t* src, size_t n_blocks, uint8_t* dst, uint64_t first_block);
  void decode_padded_block(const uint8_t* src, uint8_t* dst, uint64_t block, size_t out_bytes);
  void decode_via_tile(const uint8_t* src, size_t n_blocks, uint8_t* dst, uint64_t first_block);
  // Output bytes of block `b` (a padded last block's are fewer), and how many of the blocks from
  // `b` on fit in `room` output bytes.
  size_t output_of_block(uint64_t b) const;
  size_t blocks_fitting(uint64_t b, size_t room) const;

  DequantSpec spec_;
  Error error_;
  KernelImpl impl_ = KernelImpl::Reference;
  uint32_t block_elems_ = 0, block_bytes_ = 0;
  uint64_t input_bytes_ = 0;
  uint64_t total_blocks_ = 0;
  uint32_t tail_elems_ = 0;  // values of a padded last block within the tensor; 0: no padding
  uint64_t blocks_done_ = 0;
  uint64_t elements_done_ = 0;
  uint64_t consumed_ = 0;
  void (*kernel_)() = nullptr;  // the chosen kernel, as a generic function pointer
  uint32_t carry_size_ = 0;
  alignas(16) uint8_t carry_[512];  // one partial block (the largest block is Q8_K's 292 bytes)
};

// One-shot: a whole tensor's stored bytes to values.
Status dequantize(const DequantSpec& spec, const void* in, size_t in_bytes, void* out, size_t out_bytes,
                  Error* error);

// Conversions (exact; f32 -> f16 rounds to nearest even, overflow gives inf, NaN stays NaN with
// its sign and is quiet).
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
// f32 -> bf16 as BF16 output rounds (see OutType).
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t b);
// BF16 -> F16 for GPUs without bf16: exact where F16 can hold the value, else rounded (RNE).
void bf16_to_f16(const uint16_t* in, size_t n, uint16_t* out);

}  // namespace ws
