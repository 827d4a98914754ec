// weightstream — Ollama's quantization types and its shape rule (FORMATS.md §3).
//
// Ollama blobs name a type in `__metadata__` ("quant_type", or "<tensor>.quant_type"); a blob
// imported from an MLX model converted before mlx-lm wrote `mode` has `.scale` companions and no
// type at all, and Ollama infers int4 / int8 and the group size from the shapes. Both rules are
// Ollama's (ollama x/quant/quant.go `Canonical` / `Params`, x/mlxrunner/model root.go
// `inferQuantTypeFromShapes`); LogicalModel::build_ollama() applies them.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/quant_params.h"

namespace ws {

enum class OllamaQuantType : uint8_t { Unknown, Int4, Int8, Nvfp4, Mxfp4, Mxfp8 };

// The type a quant_type string names, compared as Go's strings.ToUpper(strings.TrimSpace(s)):
// Unicode White_Space trimmed at both ends (ASCII \t \n \v \f \r space, U+0085, U+00A0, U+1680,
// U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), then upper-cased. Only two non-ASCII
// letters upper-case to ASCII (U+0131 dotless i -> I, U+017F long s -> S), so those are mapped
// and everything else compared byte for byte: exactly the strings Go maps onto the names.
// NVFP4, MXFP4, MXFP8; INT4 / FP4 / Q4 -> Int4; INT8 / FP8 / Q8 -> Int8; anything else (the empty
// string too) Unknown. Ollama falls back to 8-bit affine group 32 for an unknown non-empty type;
// weightstream rejects it (ConventionUnknownQuantType), a deliberate stricter rule.
OllamaQuantType ollama_quant_type(const char* s, size_t n);
const char* ollama_quant_type_name(OllamaQuantType t);  // "int4", ...; "unknown"

// Params: mode, bits and the type's default group (x/quant/quant.go Params): int4 affine 4-bit
// g64, int8 affine 8-bit g64, nvfp4 g16, mxfp4 g32, mxfp8 8-bit g32. Unknown: mode None.
QuantParams ollama_quant_params(OllamaQuantType t);

// The shape rule. weight_cols / scale_cols: the last dimensions of the packed U32 weight and of
// its `.scale`; hint: the quant_type string as stated (may be empty). With g4 = weight_cols * 8 /
// scale_cols and g8 = weight_cols * 4 / scale_cols (integer division):
//   g4 == 32 -> int4 g32; else g8 == 64 -> int8 g64;
//   else g4 == 64 && g8 == 32 -> the hint decides: it contains '8' -> int8 g32, '4' -> int4 g64;
//   then g4 in {16, 32, 64, 128} and g8 not -> int4 g4; g8 in the set and g4 not -> int8 g8;
//   else nothing (type Unknown, group 0).
// Zero dimensions give nothing (Ollama requires both > 0), as do dimensions above 2^60, where
// Go's int arithmetic would overflow.
struct OllamaInferred {
  OllamaQuantType type = OllamaQuantType::Unknown;
  uint32_t group = 0;
};
OllamaInferred ollama_infer_from_shapes(uint64_t weight_cols, uint64_t scale_cols, const char* hint, size_t hint_n);

}  // namespace ws
