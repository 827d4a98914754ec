// ws-make-samples — UQFF fixtures (FORMATS.md §4): a mistral.rs-style UQFF directory with two
// shards (`model-0.uqff`, `model-1.uqff`, the first holding the version tensors 1.2.0) and a
// `residual.safetensors`, with a layer of every supported type (Gguf Q4_0/Q8_0/Q4_K, Unquant, Afq
// 4-bit and 3-bit, F8Q8, Mxfp4), plus malformed variants of it, one per reject rule. Written
// independently of lib/, byte by byte; every file is ordered as the reference safetensors writer
// orders it (dtype descending, then name), so a layer's U8 `.weight` precedes its `.weight.format`.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "convention_fixtures.h"
#include "sample_set.h"

namespace samplegen {

struct UqffFile {
  std::string name;  // "model-0.uqff", "model-1.uqff", "residual.safetensors"
  std::vector<RawTensor> tensors;
};

struct UqffFixture {
  std::vector<UqffFile> files;  // in the order a reader takes them: shards by number, residual last
  std::string config_json;
};

UqffFixture uqff_fixture();

// UQFF as mistral.rs writes it where the first fixture did not look (issue #14; FORMATS.md §4):
// F8Q8 layers whose element counts are not multiples of 32 (f8q8 from_weight pads the flattened
// weight to whole blocks: [3, 20] = 60 values in 2 blocks, [2, 3, 7] = 42 in 2, [5, 5] = 25 in 1)
// beside one that is ([1, 32]), and the version tensors 1.2.0 in both shards (every shard set
// mistral.rs writes starts with them). model-0.uqff, model-1.uqff, residual.safetensors.
UqffFixture uqff_f8q8_fixture();

// The file's bytes: tensors in the reference writer's order, header padded to 8.
std::vector<uint8_t> uqff_file_bytes(const UqffFile& f);
// Where a tensor sits in uqff_file_bytes(f): the offset of its quoted name in the header (its
// entry) and of its first data byte; ~0 when absent.
uint64_t uqff_entry_offset(const UqffFile& f, const std::string& name);
uint64_t uqff_data_offset(const UqffFile& f, const std::string& name);

// Edits for variants: the tensor of that name (in any file), or null.
RawTensor* uqff_find(UqffFixture* f, const std::string& name, size_t* file = nullptr);
bool uqff_drop(UqffFixture* f, const std::string& name);

struct UqffVariant {
  std::string name;      // e.g. "missing-version"
  UqffFixture fixture;
  std::string status;    // the ws::Status name a reader must give
  size_t file;           // the file the error is in
  std::string tensor;    // the tensor name the error names
  std::string at;        // the tensor whose offset the error gives ("" = `tensor`)
  bool data_offset;      // the offset is the tensor's first data byte (else its header entry);
                         // offset 0 when `tensor` is absent from the files
  std::string detail;    // the missing/unexpected suffix or the unsupported type, or ""
  int64_t found = -1;    // Error::found / expected where the error carries them (-1: not checked)
  int64_t expected = -1;
};
std::vector<UqffVariant> uqff_malformed_variants();
// The malformed neighbours of uqff_f8q8_fixture(): F8Q8 num_blocks one too few / one too many,
// a version copy of another value, a version copy that is not a U32 scalar.
std::vector<UqffVariant> uqff_f8q8_variants();

// uqff/ and uqff-f8q8/: model-0.uqff, model-1.uqff, residual.safetensors, config.json.
std::vector<SampleFile> build_uqff_fixtures();

}  // namespace samplegen
