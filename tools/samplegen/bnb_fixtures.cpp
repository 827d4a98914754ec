// ws-make-samples — bitsandbytes modules as bitsandbytes saves them (see bnb_fixtures.h).
//
// bitsandbytes (bitsandbytes-foundation/bitsandbytes, at 95f9af3):
// - 4-bit: nn/modules.py Linear4bit._save_to_state_dict saves the Params4bit data as `weight`
//   (quant_storage uint8: [ceil(n / 2), 1], the values flattened row-major, two a byte, the first
//   in the high nibble: backends/default/ops.py quantize_4bit `(q8[::2] << 4) | q8[1::2]`) and,
//   as `weight.<k>`, every item of functional.py QuantState.as_dict(packed=True): absmax (F32 per
//   blocksize values; with compress_statistics the U8 codes of quantize_blockwise(absmax - offset,
//   blocksize=256), so nested_absmax F32 per 256 blocks and nested_quant_map the signed
//   create_dynamic_map()), quant_map (get_4bit_type(quant_type): the NF4 list, or FP4's list
//   divided by its max, 12, in f32; its `-0` is the integer 0, so code 8 is +0.0 here), and
//   quant_state.bitsandbytes__<quant_type>: utils.py pack_dict_to_tensor, json.dumps of
//   {quant_type, blocksize, dtype, shape[, nested_blocksize, nested_dtype, nested_offset]} as
//   uint8.
// - 8-bit: nn/modules.py Linear8bitLt._save_to_state_dict saves `weight` (Int8Params CB, int8
//   [out, in], functional.py int8_vectorwise_quant: values in -127..127), `SCB` (F32 [out], the
//   rows' absmax) and `weight_format` torch.tensor(0, dtype=torch.uint8) ("row").
// The codes and scales are chosen here (the quantizer's rounding is its business); what is laid
// out is what those writers write for them. The nested_quant_map's 256 f32 bits are what
// functional.py create_dynamic_map(signed=True) returns, computed by bitsandbytes' own code
// (95f9af3) under Debian's torch 1.13 outside the repository (session 10, 2026-12-07).
#include "bnb_fixtures.h"

#include <string.h>

#include "prng.h"

namespace samplegen {

namespace {

void put_f32(std::vector<uint8_t>* d, float v) {
  uint32_t b;
  memcpy(&b, &v, 4);
  for (int k = 0; k < 4; ++k) d->push_back(uint8_t(b >> (8 * k)));
}
void put_bits(std::vector<uint8_t>* d, uint32_t b) {
  for (int k = 0; k < 4; ++k) d->push_back(uint8_t(b >> (8 * k)));
}

// functional.py create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8), as f32 bits.
const uint32_t kDynamicMap[256] = {
    0xBF7E3333, 0xBF7A9999, 0xBF770000, 0xBF736666, 0xBF6FCCCC, 0xBF6C3333, 0xBF68999A, 0xBF650000,
    0xBF616666, 0xBF5DCCCC, 0xBF5A3333, 0xBF569999, 0xBF530000, 0xBF4F6666, 0xBF4BCCCC, 0xBF483333,
    0xBF44999A, 0xBF410000, 0xBF3D6667, 0xBF39CCCD, 0xBF363334, 0xBF32999A, 0xBF2F0000, 0xBF2B6667,
    0xBF27CCCD, 0xBF243333, 0xBF20999A, 0xBF1D0000, 0xBF196666, 0xBF15CCCD, 0xBF123334, 0xBF0E999A,
    0xBF0B0000, 0xBF076666, 0xBF03CCCD, 0xBF003333, 0xBEF93334, 0xBEF20000, 0xBEEACCCC, 0xBEE3999A,
    0xBEDC6666, 0xBED53332, 0xBECE0000, 0xBEC6CCCC, 0xBEBF999A, 0xBEB86666, 0xBEB13332, 0xBEAA0000,
    0xBEA2CCCC, 0xBE9B999A, 0xBE946666, 0xBE8D3334, 0xBE860000, 0xBE7D999A, 0xBE6F3334, 0xBE60CCCD,
    0xBE526666, 0xBE440000, 0xBE359999, 0xBE273333, 0xBE18CCCD, 0xBE0A6666, 0xBDF80000, 0xBDDB3334,
    0xBDC9EB85, 0xBDC428F5, 0xBDBE6667, 0xBDB8A3D7, 0xBDB2E148, 0xBDAD1EB8, 0xBDA75C28, 0xBDA1999A,
    0xBD9BD70A, 0xBD96147B, 0xBD9051EB, 0xBD8A8F5D, 0xBD84CCCD, 0xBD7E147A, 0xBD728F5D, 0xBD670A3D,
    0xBD5B851F, 0xBD500000, 0xBD447AE1, 0xBD38F5C3, 0xBD2D70A3, 0xBD21EB85, 0xBD166667, 0xBD0AE147,
    0xBCFEB852, 0xBCE7AE13, 0xBCD0A3D7, 0xBCB9999A, 0xBCA28F5C, 0xBC8B851F, 0xBC68F5C3, 0xBC3AE148,
    0xBC1F3B64, 0xBC160418, 0xBC0CCCCD, 0xBC039581, 0xBBF4BC6A, 0xBBE24DD3, 0xBBCFDF3B, 0xBBBD70A4,
    0xBBAB020D, 0xBB989374, 0xBB8624DD, 0xBB676C8A, 0xBB428F5C, 0xBB1DB22D, 0xBAF1A9FC, 0xBAA7EF9D,
    0xBA7765FF, 0xBA59E83E, 0xBA3C6A80, 0xBA1EECC1, 0xBA016F01, 0xB9C7E283, 0xB98CE705, 0xB923D70B,
    0xB8BA1F4B, 0xB88AEFB3, 0xB8378034, 0xB7B24206, 0xB70205FF, 0xB65A1A94, 0xB513A3B7, 0x00000000,
    0x3513A3B7, 0x365A1A94, 0x370205FF, 0x37B24206, 0x38378034, 0x388AEFB3, 0x38BA1F4B, 0x3923D70B,
    0x398CE705, 0x39C7E283, 0x3A016F01, 0x3A1EECC1, 0x3A3C6A80, 0x3A59E83E, 0x3A7765FF, 0x3AA7EF9D,
    0x3AF1A9FC, 0x3B1DB22D, 0x3B428F5C, 0x3B676C8A, 0x3B8624DD, 0x3B989374, 0x3BAB020D, 0x3BBD70A4,
    0x3BCFDF3B, 0x3BE24DD3, 0x3BF4BC6A, 0x3C039581, 0x3C0CCCCD, 0x3C160418, 0x3C1F3B64, 0x3C3AE148,
    0x3C68F5C3, 0x3C8B851F, 0x3CA28F5C, 0x3CB9999A, 0x3CD0A3D7, 0x3CE7AE13, 0x3CFEB852, 0x3D0AE147,
    0x3D166667, 0x3D21EB85, 0x3D2D70A3, 0x3D38F5C3, 0x3D447AE1, 0x3D500000, 0x3D5B851F, 0x3D670A3D,
    0x3D728F5D, 0x3D7E147A, 0x3D84CCCD, 0x3D8A8F5D, 0x3D9051EB, 0x3D96147B, 0x3D9BD70A, 0x3DA1999A,
    0x3DA75C28, 0x3DAD1EB8, 0x3DB2E148, 0x3DB8A3D7, 0x3DBE6667, 0x3DC428F5, 0x3DC9EB85, 0x3DDB3334,
    0x3DF80000, 0x3E0A6666, 0x3E18CCCD, 0x3E273333, 0x3E359999, 0x3E440000, 0x3E526666, 0x3E60CCCD,
    0x3E6F3334, 0x3E7D999A, 0x3E860000, 0x3E8D3334, 0x3E946666, 0x3E9B999A, 0x3EA2CCCC, 0x3EAA0000,
    0x3EB13332, 0x3EB86666, 0x3EBF999A, 0x3EC6CCCC, 0x3ECE0000, 0x3ED53332, 0x3EDC6666, 0x3EE3999A,
    0x3EEACCCC, 0x3EF20000, 0x3EF93334, 0x3F003333, 0x3F03CCCD, 0x3F076666, 0x3F0B0000, 0x3F0E999A,
    0x3F123334, 0x3F15CCCD, 0x3F196666, 0x3F1D0000, 0x3F20999A, 0x3F243333, 0x3F27CCCD, 0x3F2B6667,
    0x3F2F0000, 0x3F32999A, 0x3F363334, 0x3F39CCCD, 0x3F3D6667, 0x3F410000, 0x3F44999A, 0x3F483333,
    0x3F4BCCCC, 0x3F4F6666, 0x3F530000, 0x3F569999, 0x3F5A3333, 0x3F5DCCCC, 0x3F616666, 0x3F650000,
    0x3F68999A, 0x3F6C3333, 0x3F6FCCCC, 0x3F736666, 0x3F770000, 0x3F7A9999, 0x3F7E3333, 0x3F800000};

// functional.py get_4bit_type("nf4"): the list's floats in f32.
const float kNf4[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                        -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                        0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
                        0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};
// get_4bit_type("fp4"): [0, 0.0625, 8, 12, 4, 6, 2, 3, -0, -0.0625, -8, -12, -4, -6, -2, -3] / 12.
const float kFp4[16] = {0.0f, 0.0625f, 8.0f, 12.0f, 4.0f, 6.0f, 2.0f, 3.0f,
                        0.0f, -0.0625f, -8.0f, -12.0f, -4.0f, -6.0f, -2.0f, -3.0f};

constexpr float kNestedOffset = 0.03125f;  // a mean of the absmax (its repr is exact: "0.03125")

}  // namespace

std::string bnb4_state_json(const Bnb4Module& m) {
  std::string j = std::string("{\"quant_type\": \"") + (m.fp4 ? "fp4" : "nf4") + "\", \"blocksize\": " +
                  std::to_string(m.blocksize) + ", \"dtype\": \"bfloat16\", \"shape\": [" + std::to_string(m.out) +
                  ", " + std::to_string(m.in) + "]";
  if (m.nested) j += ", \"nested_blocksize\": 256, \"nested_dtype\": \"float32\", \"nested_offset\": 0.03125";
  return j + "}";
}

std::vector<RawTensor> bnb4_module_tensors(const Bnb4Module& m) {
  const uint64_t n = uint64_t(m.out) * m.in, blocks = (n + m.blocksize - 1) / m.blocksize;
  const uint64_t nested_blocks = (blocks + 255) / 256;
  const std::vector<uint8_t> r = xorshift32_bytes(size_t(n / 2 + blocks * 2 + nested_blocks), m.seed, 7);
  size_t at = 0;
  const std::string w = m.prefix + ".weight";
  RawTensor packed{w, "U8", {n / 2, 1}, {}};
  for (uint64_t i = 0; i < n / 2; ++i) packed.data.push_back(r[at++]);  // two codes a byte, high first
  std::vector<RawTensor> out = {packed};
  if (!m.nested) {
    RawTensor absmax{w + ".absmax", "F32", {blocks}, {}};
    for (uint64_t b = 0; b < blocks; ++b) put_f32(&absmax.data, float(16 + r[at++] % 240) / 256.0f);
    out.push_back(absmax);
  } else {
    RawTensor absmax{w + ".absmax", "U8", {blocks}, {}};
    for (uint64_t b = 0; b < blocks; ++b) absmax.data.push_back(uint8_t(128 + r[at++] % 128));  // non-negative codes
    out.push_back(absmax);
    RawTensor nested{w + ".nested_absmax", "F32", {nested_blocks}, {}};
    for (uint64_t b = 0; b < nested_blocks; ++b) put_f32(&nested.data, float(32 + r[at++] % 200) / 64.0f);
    out.push_back(nested);
    RawTensor map{w + ".nested_quant_map", "F32", {256}, {}};
    for (uint32_t bits : kDynamicMap) put_bits(&map.data, bits);
    out.push_back(map);
  }
  RawTensor qmap{w + ".quant_map", "F32", {16}, {}};
  for (int k = 0; k < 16; ++k) put_f32(&qmap.data, m.fp4 ? kFp4[k] / 12.0f : kNf4[k]);
  out.push_back(qmap);
  const std::string json = bnb4_state_json(m);
  RawTensor state{w + ".quant_state.bitsandbytes__" + (m.fp4 ? "fp4" : "nf4"), "U8", {json.size()},
                  std::vector<uint8_t>(json.begin(), json.end())};
  out.push_back(state);
  return out;
}

std::vector<RawTensor> bnb8_module_tensors(const std::string& prefix, uint32_t out, uint32_t in, uint32_t seed) {
  const std::vector<uint8_t> r = xorshift32_bytes(size_t(out) * in + out, seed, 7);
  size_t at = 0;
  RawTensor q{prefix + ".weight", "I8", {out, in}, {}};
  for (uint64_t i = 0; i < uint64_t(out) * in; ++i) q.data.push_back(uint8_t(int8_t(int(r[at++] % 255) - 127)));
  RawTensor scb{prefix + ".SCB", "F32", {out}, {}};
  for (uint32_t o = 0; o < out; ++o) put_f32(&scb.data, float(1 + r[at++] % 200) / 16.0f);
  RawTensor format{prefix + ".weight_format", "U8", {}, {0}};
  return {q, scb, format};
}

}  // namespace samplegen
