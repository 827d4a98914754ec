// libFuzzer target: every dequantization decoder, differentially. The fuzzer chooses the format,
// its parameters (output type, validation, bits, group, scale dtype, global scale), the element
// count, two chunkings and the bytes. The tensor is decoded with KernelImpl::Reference and with
// KernelImpl::Simd128 (each with its own chunking of input and output room): init and decode
// status, error offset and every output bit must be identical (NaN compared by "is NaN" and sign;
// for Q4_1, Q5_1 and MLX affine, whose values add two products that may both be NaN, IEEE leaves
// that sign open, so any NaN matches — the same rule as tests/kernels/simd_differential_test.cpp).
//
// Input: [0] format, [1] flags, [2] bits, [3] group, [4..5] blocks, [6..9] chunk seed A,
// [10..13] chunk seed B, [14..17] global scale (f32 bits), then the data bytes, the scales and
// the biases (zero-filled where the input runs out). GptqPacked: its geometry from [2], [3],
// seed A and the flags, then the data, scales and qzeros, and one byte per g_idx entry (present
// when bit 0 of [14] is set).
#include <math.h>

#include "common.h"

namespace {

struct Decoded {
  ws::Status init = ws::Status::Ok;
  ws::Status status = ws::Status::Ok;
  uint64_t error_offset = 0;
  std::vector<uint8_t> out;
};

Decoded decode(ws::DequantSpec spec, ws::KernelImpl impl, const uint8_t* in, size_t in_size, uint64_t seed) {
  Decoded r;
  spec.impl = impl;
  ws::Dequantizer d;
  r.init = d.init(spec);
  if (r.init != ws::Status::Ok) {
    WS_CHECK(d.error().code == r.init);
    return r;
  }
  WS_CHECK(d.impl() == impl, int(d.impl()), int(impl));
  WS_CHECK(d.input_bytes() == in_size, d.input_bytes(), in_size);
  const size_t elem = spec.out == ws::OutType::F16 ? 2 : 4;
  const size_t block_out = d.block_output_bytes();
  WS_CHECK(block_out > 0 && block_out % elem == 0, block_out);
  wsfuzz::Chunker ch(seed);
  wsfuzz::Rng rng{seed ^ 0x5555};
  size_t used = 0;
  size_t stalls = 0;
  while (!d.done()) {
    size_t piece = ch.next(in_size - used);
    size_t cap = block_out * size_t(1 + rng.below(8)) + size_t(rng.below(4)) * elem;
    // Exactly-sized copies: ASan sees any read past the piece or write past the room.
    uint8_t* p = static_cast<uint8_t*>(malloc(piece ? piece : 1));
    if (piece) memcpy(p, in + used, piece);
    uint8_t* o = static_cast<uint8_t*>(malloc(cap));
    size_t in_used = 0, out_written = 0;
    ws::Status s = d.decode(p, piece, &in_used, o, cap, &out_written);
    WS_CHECK(in_used <= piece, in_used, piece);
    WS_CHECK(out_written <= cap && out_written % elem == 0, out_written, cap);
    r.out.insert(r.out.end(), o, o + out_written);
    free(p);
    free(o);
    used += in_used;
    if (s != ws::Status::Ok) {
      WS_CHECK(d.error().code == s);
      WS_CHECK(s == ws::Status::InvalidBlockData, int(s));
      r.status = s;
      r.error_offset = d.error().offset;
      break;
    }
    if (in_used == 0 && out_written == 0) {
      // No progress is allowed only for an empty piece (the chunker's odd empty one), and not
      // forever: the input is all there once used == in_size.
      WS_CHECK(piece == 0, piece, used);
      WS_CHECK(++stalls < 64, stalls, used);
    } else {
      stalls = 0;
    }
  }
  if (r.status == ws::Status::Ok) {
    WS_CHECK(used == in_size, used, in_size);
    WS_CHECK(r.out.size() == spec.elements * elem, r.out.size(), spec.elements * elem);
    WS_CHECK(d.elements_done() == spec.elements);
  }
  return r;
}

bool nan_sign_strict(ws::QuantFormat f) {
  return f != ws::QuantFormat::Q4_1 && f != ws::QuantFormat::Q5_1 && f != ws::QuantFormat::MlxAffine;
}

void compare(const Decoded& a, const Decoded& b, ws::OutType out, bool strict) {
  size_t n = a.out.size() < b.out.size() ? a.out.size() : b.out.size();
  if (out == ws::OutType::F32) {
    for (size_t i = 0; i + 4 <= n; i += 4) {
      uint32_t x, y;
      memcpy(&x, &a.out[i], 4);
      memcpy(&y, &b.out[i], 4);
      if (x == y) continue;
      bool xn = (x & 0x7FFFFFFFu) > 0x7F800000u, yn = (y & 0x7FFFFFFFu) > 0x7F800000u;
      if (xn && yn && (!strict || (x >> 31) == (y >> 31))) continue;
      fprintf(stderr, "f32 element %zu: reference 0x%08x simd128 0x%08x\n", i / 4, x, y);
      abort();
    }
  } else {
    for (size_t i = 0; i + 2 <= n; i += 2) {
      uint16_t x, y;
      memcpy(&x, &a.out[i], 2);
      memcpy(&y, &b.out[i], 2);
      if (x == y) continue;
      bool xn = (x & 0x7FFF) > 0x7C00, yn = (y & 0x7FFF) > 0x7C00;
      if (xn && yn && (!strict || (x >> 15) == (y >> 15))) continue;
      fprintf(stderr, "f16 element %zu: reference 0x%04x simd128 0x%04x\n", i / 2, x, y);
      abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 18) return 0;
  ws::DequantSpec spec;
  spec.format = static_cast<ws::QuantFormat>(data[0] % ws::kQuantFormatCount);
  const uint8_t flags = data[1];
  spec.out = (flags & 1) ? ws::OutType::F16 : ws::OutType::F32;
  spec.validate = (flags & 2) != 0;
  // 0 none, 1 MLX, 2 Ollama, 3 none (MlxNvfp4: compressed-tensors', the global scale dividing)
  const uint32_t global = (flags >> 2) & 3;
  const ws::DType scale_dtypes[4] = {ws::DType::BF16, ws::DType::F16, ws::DType::F32, ws::DType::U8};
  spec.scale_dtype = scale_dtypes[(flags >> 4) & 3];
  const bool odd_elements = (flags & 0x40) != 0;  // an element count that is not whole blocks
  const uint32_t bits_choice[8] = {2, 3, 4, 5, 6, 8, 1, 7};
  spec.bits = bits_choice[data[2] & 7];
  const uint32_t group_choice[8] = {32, 64, 128, 0, 16, 32, 64, 48};
  spec.group = group_choice[data[3] & 7];
  uint32_t blocks = (uint32_t(data[4]) | uint32_t(data[5]) << 8) % 64;
  const uint8_t shape_a = data[2], shape_b = data[3];  // FP8's block shape (bits and group unused there)
  uint32_t seed_a, seed_b, gbits;
  memcpy(&seed_a, data + 6, 4);
  memcpy(&seed_b, data + 10, 4);
  memcpy(&gbits, data + 14, 4);
  data += 18;
  size -= 18;

  const ws::QuantFormatInfo info = ws::quant_format_info(spec.format);
  uint32_t block_elems = info.block_elems;
  if (spec.format == ws::QuantFormat::MlxAffine && spec.group) block_elems = spec.group;
  if (block_elems == 0) block_elems = 1;
  spec.elements = uint64_t(blocks) * block_elems + (odd_elements ? 1 + (seed_a % 7) : 0);
  if (spec.format == ws::QuantFormat::Fp8Block) {
    // A [rows, cols] FP8 weight over a ceil grid of blocks (any sizes, ragged edges; the decoder
    // picks its unit from cols and the block's columns).
    spec.row_elems = 1 + shape_a % 80;
    spec.block_rows = 1 + shape_b % 9;
    spec.block_cols = 1 + (seed_a >> 8) % 90;
    spec.element_dtype = (flags & 0x80) ? ws::DType::F8_E5M2 : ws::DType::F8_E4M3;
    spec.elements = uint64_t(blocks % 17) * spec.row_elems + (odd_elements ? 1 : 0);
  }
  if (spec.format == ws::QuantFormat::GptqPacked) {
    // GPTQ: [rows, row_elems] in words of 32/bits codes; zeros packed by rows; a g_idx (from the
    // input, any group up to one past the last) or none; v1 or v2 zero points.
    const uint32_t per = (spec.bits == 2 || spec.bits == 4 || spec.bits == 8) ? 32 / spec.bits : 8;
    spec.row_elems = uint64_t(per) * (1 + shape_a % 12);
    spec.elements = uint64_t(per) * (1 + shape_b % 3) * spec.row_elems + (odd_elements ? 1 : 0);
    spec.gptq_groups = 1 + (seed_a >> 8) % 5;
    spec.gptq_zero_add = (flags & 0x80) ? 1 : 0;
    // AWQ's zero lanes (issue #28: the 0,4,1,5,2,6,3,7 lane of each output) at 4 bits.
    spec.gptq_awq_zeros = spec.bits == 4 && (seed_a & 0x10000u) != 0;
  }
  const bool bnb4 = spec.format == ws::QuantFormat::Bnb4;
  if (bnb4) {
    // bitsandbytes 4-bit: blocksizes 32..4096 (48: not a power of two), an even element count
    // (odd: refused), F32 absmax or U8 codes with the nested absmax (per 256) and code.
    spec.group = (shape_b & 8) ? 48 : 32u << (shape_b & 7);
    spec.elements = uint64_t(blocks) * 2 * (1 + shape_a % 64) + (odd_elements ? 1 : 0);
    spec.bnb_fp4 = (flags & 0x80) != 0;
    if (spec.scale_dtype != ws::DType::U8) spec.scale_dtype = ws::DType::F32;
    spec.nested_group = 256;
    memcpy(&spec.nested_offset, &gbits, 4);
  }
  if (spec.format == ws::QuantFormat::BnbInt8) {  // rows of any length, an F32 SCB per row
    spec.row_elems = 1 + shape_a % 80;
    spec.elements = uint64_t(blocks % 17) * spec.row_elems + (odd_elements ? 1 : 0);
    spec.scale_dtype = ws::DType::F32;
  }
  bool ct_zero_points = false;
  if (spec.format == ws::QuantFormat::CtPacked) {
    // compressed-tensors pack-quantized: rows of whole I32 words (32 / bits values each), groups
    // of whole words dividing the row, a scale row per row (or one scale: flag 0x80), zero points
    // packed down the rows when the global-scale choice is 1.
    const uint32_t pf = 32 / spec.bits, words_row = 1 + shape_b % 12;
    uint32_t d = 1 + (seed_a >> 8) % words_row;
    while (words_row % d) --d;
    spec.row_elems = uint64_t(words_row) * pf;
    spec.group = (words_row / d) * pf;
    const uint64_t rows = blocks % 17;
    spec.block_rows = (flags & 0x80) ? (rows ? rows : 1) : 1;
    spec.elements = rows * spec.row_elems + (odd_elements ? 1 : 0);
    ct_zero_points = global == 1;
  } else if (global == 1 || global == 2 || spec.format == ws::QuantFormat::I2_S) {
    spec.has_global_scale = (global != 3) || spec.format == ws::QuantFormat::I2_S;
    spec.global_scale_is_ollama = global == 2;
    memcpy(&spec.global_scale, &gbits, 4);
  } else if (global == 3 && spec.format == ws::QuantFormat::MlxNvfp4) {
    spec.has_global_scale = true;
    spec.global_scale_divides = true;
    memcpy(&spec.global_scale, &gbits, 4);
  }

  // Companions: one scale (and bias) per group, exactly as many bytes as the spec implies.
  std::vector<uint8_t> scales, biases, zeros, gidx;
  if (spec.format == ws::QuantFormat::GptqPacked) {
    const uint32_t per = (spec.bits == 2 || spec.bits == 4 || spec.bits == 8) ? 32 / spec.bits : 8;
    const uint64_t rows = spec.elements / spec.row_elems;
    const size_t sb = spec.scale_dtype == ws::DType::F32 ? 4 : spec.scale_dtype == ws::DType::U8 ? 1 : 2;
    scales.assign(size_t(spec.gptq_groups * rows) * sb, 0);
    zeros.assign(size_t(spec.gptq_groups * ((rows + per - 1) / per)) * 4, 0);
    if (gbits & 1) gidx.assign(size_t(spec.row_elems) * 4, 0);
  } else if (info.companion) {
    size_t sb = 1;
    if (spec.format == ws::QuantFormat::MlxAffine)
      sb = spec.scale_dtype == ws::DType::F32 ? 4 : spec.scale_dtype == ws::DType::U8 ? 1 : 2;
    size_t groups = size_t(spec.elements / block_elems);
    if (spec.format == ws::QuantFormat::Fp8Block) {  // the grid, in the scale dtype
      const uint64_t rows = spec.elements / spec.row_elems;
      groups = size_t(((rows + spec.block_rows - 1) / spec.block_rows) *
                      ((spec.row_elems + spec.block_cols - 1) / spec.block_cols));
      sb = spec.scale_dtype == ws::DType::F32 ? 4 : spec.scale_dtype == ws::DType::U8 ? 1 : 2;
    }
    if (spec.format == ws::QuantFormat::CtPacked) {  // scale rows x groups, zero-point words
      const uint64_t rows = spec.elements / spec.row_elems, pf = 32 / spec.bits, g = spec.row_elems / spec.group;
      groups = size_t(((rows + spec.block_rows - 1) / spec.block_rows) * g);
      sb = spec.scale_dtype == ws::DType::F32 ? 4 : spec.scale_dtype == ws::DType::U8 ? 1 : 2;
      if (ct_zero_points) biases.assign(((rows + pf - 1) / pf) * g * 4, 0);
    }
    if (spec.format == ws::QuantFormat::BnbInt8) {
      groups = size_t(spec.elements / spec.row_elems);
      sb = 4;
    }
    if (bnb4) {  // one absmax per blocksize values (the last block may be partial)
      groups = size_t((spec.elements + spec.group - 1) / spec.group);
      sb = spec.scale_dtype == ws::DType::U8 ? 1 : 4;
    }
    scales.assign(groups * sb ? groups * sb : 1, 0);  // never empty: data() must be non-null
    if (spec.format == ws::QuantFormat::MlxAffine) biases.assign(scales.size(), 0);
  }

  // Data size: what the reference decoder says the tensor takes (init decides validity alone).
  ws::Dequantizer probe;
  // Bnb4 nested: the nested absmax (one f32 per 256 absmax) and the 256-entry code, sized before
  // the probe (init refuses a nested spec without them, which left nested data unfuzzed).
  std::vector<uint8_t> nested_absmax, nested_code;
  if (bnb4 && spec.scale_dtype == ws::DType::U8) {
    nested_absmax.assign(4 * ((scales.size() + 255) / 256), 0);
    nested_code.assign(4 * 256, 0);
  }
  ws::DequantSpec probe_spec = spec;
  probe_spec.scales = scales.empty() ? nullptr : scales.data();
  probe_spec.biases = biases.empty() ? nullptr : biases.data();
  probe_spec.gptq_zeros = zeros.empty() ? nullptr : zeros.data();
  probe_spec.gptq_g_idx = gidx.empty() ? nullptr : gidx.data();
  probe_spec.nested_absmax = nested_absmax.empty() ? nullptr : nested_absmax.data();
  probe_spec.nested_code = nested_code.empty() ? nullptr : nested_code.data();
  probe_spec.validate = false;
  probe_spec.impl = ws::KernelImpl::Reference;
  size_t in_size = 0;
  if (probe.init(probe_spec) == ws::Status::Ok) in_size = size_t(probe.input_bytes());
  if (in_size > (1u << 20)) return 0;
  // Bytes: data, scales, biases from the input, zeros after it runs out.
  std::vector<uint8_t> in(in_size, 0);
  size_t take = 0;
  auto fill = [&](std::vector<uint8_t>& v) {
    size_t n = v.size() < size - take ? v.size() : size - take;
    if (n) memcpy(v.data(), data + take, n);
    take += n;
  };
  fill(in);
  fill(scales);
  fill(biases);
  fill(zeros);
  // g_idx: one input byte per entry, a group of the scales or one past them.
  for (size_t i = 0; i + 4 <= gidx.size(); i += 4) {
    const uint32_t g = take < size ? data[take++] % (spec.gptq_groups + 1) : 0;
    memcpy(&gidx[i], &g, 4);
  }
  fill(nested_absmax);
  fill(nested_code);
  // Companions in exactly-sized heap copies (ASan catches reads past them).
  uint8_t* sc = nullptr;
  uint8_t* bi = nullptr;
  if (!scales.empty()) {
    sc = static_cast<uint8_t*>(malloc(scales.size()));
    memcpy(sc, scales.data(), scales.size());
  }
  if (!biases.empty()) {
    bi = static_cast<uint8_t*>(malloc(biases.size()));
    memcpy(bi, biases.data(), biases.size());
  }
  spec.scales = sc;
  spec.biases = bi;
  uint8_t* ze = nullptr;
  uint8_t* gi = nullptr;
  if (!zeros.empty()) {
    ze = static_cast<uint8_t*>(malloc(zeros.size()));
    memcpy(ze, zeros.data(), zeros.size());
  }
  if (!gidx.empty()) {
    gi = static_cast<uint8_t*>(malloc(gidx.size()));
    memcpy(gi, gidx.data(), gidx.size());
  }
  spec.gptq_zeros = ze;
  spec.gptq_g_idx = gi;
  uint8_t* na = nullptr;
  uint8_t* nc = nullptr;
  if (!nested_absmax.empty()) {
    na = static_cast<uint8_t*>(malloc(nested_absmax.size()));
    memcpy(na, nested_absmax.data(), nested_absmax.size());
    nc = static_cast<uint8_t*>(malloc(nested_code.size()));
    memcpy(nc, nested_code.data(), nested_code.size());
    spec.nested_absmax = na;
    spec.nested_code = nc;
  }

  Decoded ref = decode(spec, ws::KernelImpl::Reference, in.data(), in.size(), seed_a | uint64_t(seed_b) << 32);
  Decoded simd = decode(spec, ws::KernelImpl::Simd128, in.data(), in.size(), seed_b | uint64_t(seed_a) << 32);
  WS_CHECK(ref.init == simd.init, int(ref.init), int(simd.init));
  WS_CHECK(ref.status == simd.status, int(ref.status), int(simd.status));
  WS_CHECK(ref.error_offset == simd.error_offset, ref.error_offset, simd.error_offset);
  if (ref.status == ws::Status::Ok) WS_CHECK(ref.out.size() == simd.out.size(), ref.out.size(), simd.out.size());
  compare(ref, simd, spec.out, nan_sign_strict(spec.format));
  if (ref.status != ws::Status::Ok)
    WS_CHECK(ref.error_offset <= in.size() + scales.size() + nested_absmax.size() + nested_code.size(), ref.error_offset,
             in.size());

  // The one-shot API agrees with the streamed reference.
  // Open finding dequant-zero-elements: dequantize() of a 0-element tensor (0 bytes in, 0 out)
  // fails with OutputTooSmall where the streamed decoder is done at once.
  const bool skip_one_shot = spec.elements == 0 && wsfuzz::open_finding_allowed("dequant-zero-elements");
  if (ref.init == ws::Status::Ok && spec.elements <= (1u << 18) && !skip_one_shot) {
    const size_t elem = spec.out == ws::OutType::F16 ? 2 : 4;
    std::vector<uint8_t> whole(size_t(spec.elements) * elem);
    ws::Error err;
    ws::DequantSpec s1 = spec;
    s1.impl = ws::KernelImpl::Reference;
    ws::Status st = ws::dequantize(s1, in.data(), in.size(), whole.data(), whole.size(), &err);
    if (st != ref.status)
      fprintf(stderr, "one-shot dequantize: %s, streamed: %s (%llu elements)\n", ws::status_name(st),
              ws::status_name(ref.status), (unsigned long long)spec.elements);
    WS_CHECK(st == ref.status, int(st), int(ref.status));
    if (st == ws::Status::Ok) {
      Decoded w;
      w.out = whole;
      compare(ref, w, spec.out, nan_sign_strict(spec.format));
    }
  }
  free(sc);
  free(bi);
  free(ze);
  free(gi);
  free(na);
  free(nc);
  return 0;
}
