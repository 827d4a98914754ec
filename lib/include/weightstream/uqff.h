// weightstream — UQFF facts (FORMATS.md §4; mistral.rs `mistralrs-quant/src/uqff`): the layer
// types behind `<key>.weight.format` tags, the `weight*` suffix set each type has, and the version
// this reader supports. The logical-model builder (conventions.h) applies them.
#pragma once

#include <stdint.h>

namespace ws {

// The tag values of `<key>.weight.format` (a U8 scalar).
enum class UqffType : uint8_t { Gguf = 0, Unquant = 1, Hqq = 2, Fp8 = 3, Afq = 4, F8Q8 = 5, Mxfp4 = 6 };
constexpr uint32_t kUqffTypeCount = 7;
const char* uqff_type_name(UqffType t);  // "gguf", "unquant", "hqq", "fp8", "afq", "f8q8", "mxfp4"

// Current writer 1.2.0: major must be 1, minor at most 2; any patch.
constexpr uint32_t kUqffMajor = 1;
constexpr uint32_t kUqffMaxMinor = 2;

// Every `weight*` suffix a UQFF layer may have (after `<key>`), bit i of a suffix set.
enum class UqffSuffix : uint8_t {
  Weight, Format, Dtype, Shape, Scales, Zeros, Bits, GroupSize, Axis, DequantWScale, DequantXScale,
  QuantScale, Biases, NumBlocks, OptimizationSteps, RoundZeros, ChannelWise,
};
constexpr uint32_t kUqffSuffixCount = 17;
const char* uqff_suffix(UqffSuffix s);  // ".weight", ".weight.format", ...

// The exact suffix set of a type. Hqq also admits `optional` (its serializer's later fields:
// optimization_steps, round_zeros, channel_wise); every other type has none.
uint32_t uqff_suffix_set(UqffType t);
uint32_t uqff_optional_suffixes(UqffType t);

}  // namespace ws
