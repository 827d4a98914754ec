// weightstream CLI — what a scan found, in plain C++ types.
//
// The scanners copy everything they need out of the reader's arena into these structs, so the
// output code (inspect, validate; text or JSON) never touches the library and the arena can be
// released as soon as a file is done.
#pragma once

#include <stdint.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weightstream/model_facts.h"
#include "weightstream/reader.h"

namespace wscli {

// A rejection as users see it.
struct Problem {
  std::string code;                   // ws::status_name(); or the CLI's own "IoError" (open/read
                                      // failures) and "UnsafeShardPath" (an index naming a file
                                      // outside its directory)
  uint64_t offset = 0;                // absolute byte offset in `shard` (or in the file itself)
  std::optional<std::string> tensor;  // the tensor concerned, when there is one
  std::string shard;                  // sharded models: the shard file the offset is in; empty
                                      // when it is in the file named on the command line
  std::string message;                // what is wrong, the details, and a fix where there is one
  bool io = false;                    // an I/O failure (exit code 2), not an invalid input
};

// A warning the library raised while reading the model (ws::Warning): never a rejection, shown
// beside the verdict (stderr) and in the --json outputs ("warnings").
struct WarningRow {
  std::string code;     // ws::warning_name()
  std::string file;     // the file it is in, as the model names it (relative to the entry's directory)
  std::string path;     // ... and where the host opened it (what the stderr line names)
  uint64_t offset = 0;  // absolute byte offset in that file of its first instance
  std::string tensor;   // the stored tensor it was found in
  std::string weight;   // the logical weight it concerns
  uint64_t count = 0;   // instances in the tensor
  std::string message;  // ws::warning_message(): what was found, and the fix
};

// One metadata value. Safetensors __metadata__ values are all strings; GGUF key-values are typed,
// and their arrays (vocabularies of 100k+ strings) are kept as a count, the first elements, the
// last one and, for strings, their total length: enough to summarize them, never the whole array.
struct MetaValue {
  enum class Kind { String, Unsigned, Signed, Float, Bool, Array };
  Kind kind = Kind::String;
  std::string text;        // String (at most kMaxKeptString bytes of it; array elements
                           // kMaxKeptArrayString)
  uint64_t full_size = 0;  // String: its real length; text is cut when larger
  uint64_t u = 0;          // Unsigned, Bool
  int64_t i = 0;           // Signed
  double f = 0;            // Float
  bool f32 = false;        // Float: a FLOAT32 (printed with float precision)
  // Array:
  std::string elem_type;        // gguf-py's type name: "STRING", "INT32", ...
  uint64_t count = 0;
  std::vector<MetaValue> head;  // the first kKeptArrayElements elements
  // The last element once it streamed past: zero or one entry (a vector because MetaValue is
  // still incomplete here, and it copies like the rest).
  std::vector<MetaValue> last;
  uint64_t string_bytes = 0;    // arrays of strings: the sum of the elements' lengths
};

constexpr size_t kMaxKeptString = 1 << 20;        // a chat template fits; a 1 GiB string does not
constexpr size_t kKeptArrayElements = 16;         // inspect --json lists arrays this short in full
constexpr size_t kMaxKeptArrayString = 64 << 10;  // per string element: any real token fits

struct MetadataRow {
  std::string key;
  std::string type;     // GGUF: gguf-py's type name ("UINT32", "ARRAY", ...); safetensors: ""
  uint64_t offset = 0;  // GGUF: absolute offset of the key-value (its key's length field)
  MetaValue value;
};

// GGUF header facts (valid once the header validated).
struct GgufFacts {
  uint32_t version = 0;
  uint32_t alignment = 0;
  uint64_t kv_count = 0;
  std::optional<std::string> architecture;
  bool bitnet = false;  // BitNet dialect: type ids 36-39 mean I2_S, I8_S, TL1, TL2
};

struct TensorRow {
  std::string name;
  std::string dtype;            // safetensors dtype, or GGML type name for GGUF
  std::vector<uint64_t> shape;  // safetensors: row-major; GGUF: ggml order, ne[0] first
  uint64_t begin = 0;  // relative to the data section, [begin, end)
  uint64_t end = 0;
  int32_t split = -1;  // a split GGUF model: the split (FileReport::splits) it is in
};

// One split of a split GGUF model, in split order.
struct SplitRow {
  std::string file;         // as the model names it (beside the file named on the command line)
  uint32_t tensors = 0;
  uint64_t data_start = 0;  // of its own data section (its tensors' offsets are relative to it)
  uint64_t data_size = 0;
  std::optional<uint64_t> size;  // the file's size
  uint32_t foreign_kvs = 0;      // key-values other than split.* in a split after the first
  uint64_t foreign_offset = 0;
};

// Model architecture facts shown by inspect: from the GGUF metadata or from a config.json beside
// a safetensors file.
struct ModelFactsReport {
  std::string source;  // "gguf" or the config.json's path
  ws::ModelFacts facts;
  std::optional<Problem> problem;  // a config.json that does not parse (the model stays valid)
};

// A model's logical weights (a packed tensor with its scales/biases seen as one weight; plain
// tensors as themselves) and the load plan's scratch, as inspect shows them.
struct LogicalRow {
  std::string name;
  std::string convention;  // its name, from the library (ws::convention_name)
  bool plain = true;       // ws::convention_info(...).plain: a tensor as stored, no convention
  std::string mode;        // "affine", "mxfp4", ...; "none" for a plain weight
  std::string stored;      // the packed (or plain) tensor's dtype
  std::string format;      // the ws::QuantFormat that decodes it ("MlxAffine", "Q4_K", "BF16");
                           // empty when nothing decodes it
  uint32_t bits = 0, group = 0;  // 0 for plain weights
  std::vector<uint64_t> shape;   // logical (unpacked) shape
  uint64_t bytes = 0;            // stored bytes of every piece
  std::vector<std::string> companions;  // "scales", "biases", "global_scale" present
  uint64_t sequential_scratch = 0, seekable_scratch = 0;
  bool packed_before_companion = false;  // sequential mode must buffer the packed piece
  // The convention's quantization parameters (ws::quant_parameters): key, value as text, and
  // whether the value is a number (JSON writes it unquoted).
  struct Parameter {
    std::string key, value;
    bool number = false;
  };
  std::vector<Parameter> parameters;
};
struct LogicalSummary {
  std::string convention;  // the model's name, from the library (ws::convention_name)
  std::string config;      // the config.json whose quantization was used; empty if none
  uint64_t chunk = 0;      // the read size the seekable plan assumes (--chunk-size)
  std::vector<LogicalRow> weights;
  uint64_t sequential_peak = 0, seekable_peak = 0;
  std::optional<Problem> problem;  // a convention error (the file itself may be valid)
};

// One safetensors file, validated by streaming it through ws::Reader.
struct FileReport {
  std::string path;  // as given on the command line
  ws::Format format = ws::Format::Unknown;
  bool size_known = false;
  uint64_t file_size = 0;
  std::optional<uint64_t> header_size;  // safetensors: the u64 prefix, once 8 bytes were read
  bool header_ready = false;            // the header validated: the fields below are filled
  uint64_t data_start = 0;
  uint64_t data_size = 0;
  std::vector<TensorRow> tensors;
  bool has_metadata = false;
  std::vector<MetadataRow> metadata;
  std::optional<GgufFacts> gguf;  // GGUF files, once the header validated
  std::optional<ModelFactsReport> model_facts;  // GGUF: when general.architecture is given;
                                                // safetensors: inspect adds a config.json's
  bool canonical = false;  // inspect --canonical: show each tensor's canonical name
  std::optional<LogicalSummary> logical;  // inspect: MLX / Ollama files
  // A split GGUF model named by one of its splits: every split, in order; `tensors` are all of the
  // model's (each with its split), the metadata and GGUF facts the first split's.
  std::vector<SplitRow> splits;
  size_t arena_size = 0;  // arena of the last attempt (after an ArenaExhausted retry, the bigger one)
  bool valid = false;
  std::optional<Problem> problem;  // set when !valid
  std::vector<WarningRow> warnings;  // what the load warned of (valid or not)
};

// One shard as listed by an index.
struct ShardRow {
  std::string file;               // as named in the index (a manifest: the blob, "sha256-<hex>")
  std::string layer;              // a manifest: the layer's name
  uint32_t index_tensors = 0;     // entries of the weight_map that point at it
  bool scanned = false;           // validated (tensor_bytes is filled)
  uint64_t tensor_bytes = 0;      // sum of its tensors' byte sizes
};

// A sharded model: model.safetensors.index.json plus the shards it names; or an Ollama model:
// its manifest plus the tensor blobs it names (`manifest`, one row per blob).
struct ShardedReport {
  std::string path;
  bool manifest = false;   // an Ollama manifest, not an index
  std::string blobs_dir;   // a manifest: where its blobs were found
  bool index_ok = false;  // the index (manifest) parsed: shards and counts below are filled
  uint32_t tensor_count = 0;
  std::optional<uint64_t> total_size;  // metadata.total_size, when present
  std::vector<ShardRow> shards;
  uint64_t checked_bytes = 0;  // sum of the byte sizes of every checked tensor
  std::optional<LogicalSummary> logical;  // inspect: the shards as one logical model
  bool valid = false;
  std::optional<Problem> problem;
  std::vector<WarningRow> warnings;
};

// The one-line summary validate prints, common to both kinds of input.
struct Verdict {
  std::string path;
  bool valid = false;
  std::optional<std::string> format;  // null when the input could not be recognised
  uint64_t tensors = 0;
  std::optional<Problem> problem;
  bool is_index = false;  // an index or a manifest (the JSON error names its shard / blob)
  bool is_manifest = false;
  uint32_t shards = 0;  // index inputs: the shards the index names; manifests: the tensor blobs
  uint32_t splits = 0;  // a split GGUF model: its splits
  std::vector<WarningRow> warnings;
};

Verdict verdict_of(const FileReport& r);
Verdict verdict_of(const ShardedReport& r);

}  // namespace wscli
