// weightstream — convert's rules: a model's logical weights out as plain safetensors.
//
// Hosts (the CLI's `convert`, the JS package) execute a plan; every decision is made here, so
// they write the same bytes:
//   - convert_decide(): what one weight becomes (decoded to the target dtype, copied as stored,
//     or left out) and its output bytes;
//   - ShardAssigner: which output file each weight goes to (Hugging Face's max_shard_size rule)
//     and convert_shard_name(): the files' names;
//   - convert_metadata(): the output's __metadata__ (the input's, kept, and marked);
//   - ConvertIndexWriter: model.safetensors.index.json of a sharded output;
//   - config_without_quantization(): config.json without its quantization sections;
//   - ConvertPlan: all of the above put together for a loaded model (ModelLoader at ModelReady):
//     the weights converted, in order, and per output file its name, its SafetensorsWriter table
//     and sizes, in the caller's arena.
// The bytes themselves come from ws::ModelLoader (Decode mode with the target OutType, and
// pass_stored for the weights copied) and go out through ws::SafetensorsWriter. Nothing here
// allocates.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/conventions.h"
#include "weightstream/dequant.h"
#include "weightstream/dtype.h"
#include "weightstream/ggml_types.h"
#include "weightstream/safetensors_writer.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {

struct ConvertOptions {
  OutType to = OutType::BF16;
  // A bit per DType (1u << uint32_t(dtype)): weights stored in one of these dtypes whose decoding
  // is that dtype's element-wise one (plain tensors, a convention's unquantized layers) are copied
  // as stored instead of converted (`--keep f32` keeps f32 norms of a bf16 output). Hosts pass the
  // dtypes' formats as ModelLoaderOptions::stored_formats, so the loader hands those out stored.
  uint32_t keep_dtypes = 0;
  // The most tensor bytes one output file holds (Hugging Face's max_shard_size); 0: one file.
  // parse_byte_size() reads it as hosts are given it ("5GB", "2GiB", ...).
  uint64_t max_shard_size = 0;
};

// A byte count as Hugging Face's `max_shard_size` spells it (transformers' and accelerate's
// convert_file_size_to_int): a number with a unit, KiB / MiB / GiB (2^10, 2^20, 2^30) or KB / MB /
// GB (10^3, 10^6, 10^9), the unit in any case and the number with an optional decimal fraction
// ("1.5GB"), where a lowercase final `b` means bits ("8Gb" and "8gb": a byte is 8 of them);
// also, as the CLI's other sizes, digits alone (bytes; no fraction) and one-letter binary units
// k, M, G ("64k").
// The product is truncated to whole bytes, as upstream's int(float(...)) (exact decimal arithmetic
// here, on the fraction's first nine digits). False for anything else, for zero and for a value
// past 2^64 - 1.
bool parse_byte_size(const char* text, size_t n, uint64_t* out);

enum class ConvertAction : uint8_t {
  Decode,      // through the Dequantizer to ConvertOptions::to
  CopyStored,  // its stored bytes as they are (a plain weight of a kept dtype, or one without a
               // float decoding that safetensors can hold: integers, F64, ...)
  Skip,        // nothing safetensors can hold (a GGUF type without a decoding: TL1, TL2, I8_S)
};
const char* convert_action_name(ConvertAction a);

struct ConvertDecision {
  ConvertAction action = ConvertAction::Skip;
  DType dtype = DType::F32;  // the output dtype
  uint64_t bytes = 0;        // output bytes
};

// DType of an output type: F32, F16, BF16.
DType out_type_dtype(OutType t);

// The ModelLoaderOptions::stored_formats that go with `keep_dtypes` (a bit per QuantFormat: each
// kept dtype's element-wise format), so the loader hands kept weights out stored, as
// convert_decide() plans them.
uint64_t convert_stored_formats(uint32_t keep_dtypes);

// What weight `w` becomes. `stored_type` is its packed piece's type (a DType for safetensors, a
// GGML type id for GGUF: `gguf`), `stored_bytes` the packed piece's bytes.
ConvertDecision convert_decide(const LogicalWeight& w, uint32_t stored_type, bool gguf, GgmlDialect dialect,
                               uint64_t stored_bytes, const ConvertOptions& options);

// Shards, in weight order (files keep the model's order): a weight goes to the current file
// unless that file holds something already and the weight would take it past max_shard_size
// (huggingface_hub serialization split_state_dict_into_shards_factory); a weight larger than the
// limit is a file of its own. max_shard_size 0: everything in file 0.
class ShardAssigner {
 public:
  explicit ShardAssigner(uint64_t max_shard_size) : max_(max_shard_size) {}
  // The shard of the next weight of `bytes` output bytes (weights with no output: call anyway,
  // they go where the cursor is and take nothing).
  uint32_t add(uint64_t bytes);
  uint32_t count() const { return any_ ? cur_ + 1 : 1; }

 private:
  uint64_t max_;
  uint64_t size_ = 0;
  uint32_t cur_ = 0;
  bool any_ = false;
};

// "model.safetensors" for one file, else transformers' naming "model-00001-of-00003.safetensors"
// (shard `i` 0-based, of `n`). Writes at most cap - 1 bytes and a NUL; returns the name's length.
size_t convert_shard_name(uint32_t i, uint32_t n, char* out, size_t cap);
constexpr const char* kConvertIndexName = "model.safetensors.index.json";

// The output's __metadata__: the input's entries in their order (null `input`: none), each
// "weightstream.*" key of it dropped, "format": "pt" first when the input has no "format" (the
// marks make a metadata object, and transformers refuses one without a format it knows), then the
// marks "weightstream.converted_from" (`from`: the convention's name, "gguf" for a GGUF model) and
// "weightstream.converted_to" ("bf16", "f16", "f32"). Returns the count (at most
// input entries + 3); out must have that room (cap).
uint32_t convert_metadata(const TensorTable* input, const char* from, OutType to, WriterMetadata* out, uint32_t cap);

// Where index and config bytes go: return false to stop (the writer then returns Aborted).
using ByteSink = bool (*)(void* ctx, const uint8_t* data, size_t n);

// model.safetensors.index.json as transformers' save_pretrained writes it (json.dumps(index,
// indent=2, sort_keys=True) + "\n"): {"metadata": {"total_size": N}, "weight_map": {name: file,
// ...}} with the names sorted by their bytes (Python sorts str keys by code point: the same order
// for UTF-8), non-ASCII escaped as \uXXXX (json.dumps' ensure_ascii). `name(i)` / `shard(i)` give
// weight i's name and shard; `order` is scratch of n u32. InvalidUtf8 for a name that is not UTF-8.
struct ConvertIndexEntry {
  const char* name;
  size_t name_size;
  uint32_t shard;
};
Status write_convert_index(const ConvertIndexEntry* entries, uint32_t n, uint32_t shard_count, uint64_t total_size,
                           uint32_t* order, ByteSink sink, void* ctx);

// config.json without its top-level "quantization_config" and "quantization" members (the Hub's
// and mlx-lm's), every other byte as it was (the member's separator comma goes with it). A
// document that is no JSON object: ConfigNotObject at the offset. `removed` (optional): how many
// members went.
Status config_without_quantization(const uint8_t* json, size_t n, ByteSink sink, void* ctx, uint32_t* removed);

class ModelLoader;

// Which weights a plan takes (a host's --filter): true to convert the weight named name[0, n).
using ConvertFilter = bool (*)(void* ctx, const char* name, size_t n);

// One weight of the plan, in the model's order.
struct ConvertEntry {
  uint32_t weight = 0;  // the loader's weight index
  uint32_t shard = 0;   // its output file
  uint32_t row = 0;     // its row in that file's table
  ConvertDecision decision;
};

// One output file.
struct ConvertShard {
  char name[48] = {};     // convert_shard_name(); NUL-terminated
  uint32_t first = 0;     // its entries: [first, first + count) of the plan's (and its table rows)
  uint32_t count = 0;
  uint64_t header_size = 0;  // 8-byte length + padded JSON
  uint64_t data_size = 0;
  uint64_t file_size = 0;
};

// A conversion's whole plan for a loaded model, built once at ModelReady: the weights taken (the
// filter's, less those convert_decide skips), the output files (ShardAssigner, transformers'
// names), each file's SafetensorsWriter table (rows point at the loader's names and shapes: the
// loader must outlive the plan) and the shared __metadata__ (convert_metadata: a safetensors
// model's first data file's, marked; a GGUF model's marks only). The host selects entry(k).weight
// for each entry, opens shard(s)'s writer with init_writer() and moves the bytes; the index goes
// through write_index() when shard_count() > 1.
//
// Nothing allocates: everything lives in the caller's arena (8-byte aligned, outliving the plan).
// ArenaExhausted: arena_needed() is the size that suffices (build again with it).
class ConvertPlan {
 public:
  // Call at ModelReady or later. `filter` (optional) picks the weights; `options` as for
  // convert_decide. Errors: ArenaExhausted (error() found: the size given, expected: needed;
  // also for an arena not 8-byte aligned); the first shard table's SafetensorsWriter::init error
  // (error() says where: tensor is the row within that shard, failed_shard() which file).
  Status build(const ModelLoader& loader, const ConvertOptions& options, ConvertFilter filter, void* filter_ctx,
               void* arena, size_t arena_size);
  size_t arena_needed() const { return arena_needed_; }

  uint32_t entry_count() const { return entry_count_; }
  const ConvertEntry& entry(uint32_t k) const { return entries_[k]; }
  // The entry of loader weight `weight`, or kNotConverted (filtered out or skipped).
  static constexpr uint32_t kNotConverted = ~uint32_t(0);
  uint32_t entry_of_weight(uint32_t weight) const {
    return weight < weight_count_ ? entry_of_weight_[weight] : kNotConverted;
  }
  // The weights the filter took that convert_decide skips (nothing safetensors can hold).
  uint32_t skipped_count() const { return skipped_count_; }
  uint32_t skipped(uint32_t i) const { return skipped_[i]; }

  uint32_t shard_count() const { return shard_count_; }
  const ConvertShard& shard(uint32_t s) const { return shards_[s]; }
  const WriterTensor* shard_rows(uint32_t s) const { return rows_ + shards_[s].first; }
  // A writer for shard s, initialized from its table and the metadata (duplicates checked).
  Status init_writer(uint32_t s, SafetensorsWriter* writer) const;

  uint32_t metadata_count() const { return meta_count_; }
  const WriterMetadata* metadata() const { return meta_; }
  const char* converted_from() const { return from_; }  // the convention's name, "gguf" for GGUF
  // Whether the output gets a config.json (config_without_quantization of the one beside the
  // input): a safetensors model's config.json is its own; a GGUF file carries its settings in its
  // metadata, and a config.json beside it belongs to another model.
  bool writes_config() const { return writes_config_; }
  OutType out_type() const { return to_; }
  uint64_t total_size() const { return total_size_; }  // every entry's output bytes
  // model.safetensors.index.json (write_convert_index) of this plan.
  Status write_index(ByteSink sink, void* ctx) const;

  const Error& error() const { return error_; }
  uint32_t failed_shard() const { return failed_shard_; }

 private:
  ConvertEntry* entries_ = nullptr;
  WriterTensor* rows_ = nullptr;
  uint32_t* entry_of_weight_ = nullptr;
  uint32_t* skipped_ = nullptr;
  ConvertShard* shards_ = nullptr;
  WriterMetadata* meta_ = nullptr;
  uint32_t* scratch_ = nullptr;  // the writers' duplicate checks, then the index's order
  size_t scratch_size_ = 0;
  ConvertIndexEntry* index_ = nullptr;
  uint32_t entry_count_ = 0, weight_count_ = 0, skipped_count_ = 0, shard_count_ = 0, meta_count_ = 0;
  const char* from_ = "";
  bool writes_config_ = false;
  OutType to_ = OutType::BF16;
  uint64_t total_size_ = 0;
  size_t arena_needed_ = 0;
  Error error_;
  uint32_t failed_shard_ = 0;
};

}  // namespace ws
