// ws-make-samples — writes a safetensors file the way the reference writer does
// (huggingface/safetensors `serialize`, FORMATS.md §1): tensors sorted by dtype in descending enum
// order then by name, stored back to back from offset 0; compact JSON with "__metadata__" first and
// the tensors in offset order; header padded with spaces to a multiple of 8.
//
// Deliberately independent of lib/: the samples test the reader, so they must not be produced by
// the code under test.
#pragma once

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

namespace samplegen {

// The dtypes the samples use, with their position in the reference crate's Dtype enum (the sort
// key of the reference writer) and their size.
enum class SampleDtype { F16, BF16, F32 };
const char* dtype_name(SampleDtype t);
int dtype_enum_order(SampleDtype t);
uint32_t dtype_bytes(SampleDtype t);

struct SampleTensor {
  std::string name;
  SampleDtype dtype = SampleDtype::F32;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> data;  // little-endian element bytes, element count × dtype size
};

// Appends `s` as a JSON string the way serde_json writes it (", \ and control characters escaped;
// everything else, including non-ASCII, verbatim).
void append_json_string(std::string* out, const std::string& s);

// The complete file. `metadata` may be empty (then "__metadata__" is omitted, as the reference
// writer does for None); std::map keeps its keys in a fixed order.
std::vector<uint8_t> serialize_safetensors(std::vector<SampleTensor> tensors,
                                           const std::map<std::string, std::string>& metadata);

}  // namespace samplegen
