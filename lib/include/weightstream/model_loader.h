// weightstream — the model loader: a whole model (one file, a sharded index, an MLX file with its
// config.json, an Ollama manifest and its blobs, a UQFF directory) through one pull loop.
//
//   alignas(16) static uint8_t arena[1 << 20];
//   ws::ModelLoaderOptions opt;
//   opt.mode = ws::ModelLoadMode::Decode;        // Headers, Validate, Decode (F32/F16) or Raw
//   opt.seekable = true;                          // false: every file is only read forward
//   ws::ModelLoader L(arena, sizeof arena, opt);
//   L.open(ws::ModelEntry::ShardIndex, "model.safetensors.index.json");
//   for (;;) {
//     ws::ModelEvent e = L.next();
//     switch (e.type) {
//       case ws::ModelEventType::NeedRead:    // read file L.file_name(e.file) at e.offset, up to
//         ...                                 // e.length bytes; answer with exactly one of
//         L.feed(buf, n);                     // (0 < n <= e.length; the bytes stay valid until the
//         break;                              // next NeedRead), L.end_of_file(), L.file_missing()
//       case ws::ModelEventType::ModelReady:  // L.weight_count(), L.weight(i), L.model(), L.plan()
//         L.select_all();                     // or L.select(i); nothing: headers only
//         total = L.bytes_to_read();          // progress: L.bytes_read() from here on
//         break;
//       case ws::ModelEventType::WeightData:  // e.weight, e.data/e.size at e.offset of its output
//         break;
//       case ws::ModelEventType::Done: return true;
//       case ws::ModelEventType::Error: return false;   // L.error(), L.error_file()
//       case ws::ModelEventType::Warning:     // L.warning(): shown beside the verdict
//         break;
//       default: break;                       // Kv, WeightBegin, WeightEnd
//     }
//   }
//
// The loader decides everything a host used to: which files the model has and in which order
// (index shards by file name; UQFF `<stem>-<n>.uqff` by number, then residual.safetensors;
// manifest blobs as `blobs/sha256-<hex>`; a split GGUF model's `<prefix>-%05d-of-%05d.gguf` by split
// number; `config.json` beside an MLX or plain model, missing is fine), what to read next (seekable: headers, then each selected weight's companions by range
// and its packed bytes in read_size pieces; sequential: each file forward, companions and packed
// bytes that arrive too early kept in arena scratch), the convention (convention_signal, the
// config, the entry), the logical weights (LogicalModel, hashed: linear in tensors), UQFF's
// scalars, every check (index/shard, manifest/blob, convention), and decoding through the
// kernels into bounded output pieces. Names are relative to the entry's directory, as the model's
// documents give them; the host maps a name to a path, URL or File. Hosts only move bytes.
//
// No heap, no exceptions, no recursion: everything lives in the one caller arena (readers, the
// entry document, the file slots — as many as the model has —, the model's weights and name hash,
// digest records, scratch and output). After ArenaExhausted,
// arena_needed() is a size that gets the load past the part that ran out (and every fixed-size
// part after it); parts whose size the input decides (each header, the model's weights, config
// .json, the scratch of the selection) can each take one more retry. A host retries with
// arena_needed() while it grows: a few times at most, and not at all with a generous arena.
//
// Memory layout: components that keep data (the entry document's parser, one Reader per file)
// are placed one inside the other: each is given the whole free middle of the arena and, once
// its header is validated, keeps only its two ends (Reader::arena_low/high); the next one gets
// what lies between. Nothing is sized in advance and nothing is copied.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/conventions.h"
#include "weightstream/dequant.h"
#include "weightstream/limits.h"
#include "weightstream/load_plan.h"
#include "weightstream/reader.h"
#include "weightstream/sha256.h"
#include "weightstream/status.h"
#include "weightstream/warning.h"

namespace ws {

class ShardIndex;
class OllamaManifest;
class MlxQuantConfig;

// What the host opens. Auto: `*.index.json` is an index; a file that starts like JSON is an Ollama
// manifest; else one safetensors or GGUF file (a split GGUF model's files are found from any one of
// them, see below); names given with add_file() make a UQFF directory (`*.uqff` among them) or a
// split GGUF model's list of splits (`*.gguf` names only: GgufSplits).
enum class ModelEntry : uint8_t { Auto, File, ShardIndex, UqffFiles, OllamaManifest, GgufSplits };

// What a model's entry name alone says (the rule open(Auto) and add_file() apply): ShardIndex for
// `*.index.json`, UqffFiles for a `*.uqff` part (a host then lists its directory with add_file()),
// Auto otherwise (one file, or a manifest found by its first bytes).
ModelEntry model_entry_from_name(const char* name, size_t n);

// Where a file's SHA-256 verification stands (file_digest_state()).
//   None: no digest was given for it. Pending: not (yet) hashed to its end — in Headers mode
//   digests stay Pending (only headers are read). Verified / Mismatch: its whole content was hashed.
enum class DigestState : uint8_t { None, Pending, Verified, Mismatch };
const char* digest_state_name(DigestState s);

// What a file is to the model (file_kind()).
enum class ModelFileKind : uint8_t { File, Index, Manifest, Shard, UqffPart, Blob, Config, Split };
const char* model_file_kind_name(ModelFileKind k);

// Headers: headers (and UQFF scalars), the model and its plan; ModelReady; Done.
// Validate: also every byte of every file through its Reader (truncation, trailing bytes, blob
//   sizes): the model's verdict.
// Decode: the selected weights decoded to `out` (F32/F16), in bounded pieces. Sequential sources
//   read every byte (so they validate too); seekable ones only the selected weights' ranges.
// Raw: the selected weights' stored pieces (packed, scales, biases, global scale) as they are.
enum class ModelLoadMode : uint8_t { Headers, Validate, Decode, Raw };

enum class ModelEventType : uint8_t {
  NeedRead,     // file, offset, length: answer with feed(), end_of_file() or file_missing()
  Kv,           // a GGUF key-value event of `file` (kv): metadata as it streams past
  ModelReady,   // headers validated, model built and resolved: select weights now (from a
                // sequential source, Decode and Raw: a bitsandbytes 4-bit weight is resolved as
                // its quant_state passes, its shape and parameters final at its WeightBegin)
  WeightBegin,  // weight
  WeightData,   // weight, data/size at `offset` of its output (Decode) or of piece `role` (Raw)
  WeightEnd,    // weight
  Done,
  Error,        // error(), error_file(); every later next() returns it again
  // warning() (warning.h): something the load decodes as one runtime does and another reads
  // otherwise (GPTQ v1's zero spill); file, offset (its first instance) and weight. Never stops
  // the load. Raised from tensor data as it is read: Validate for every weight, Decode and Raw
  // for the selected ones; Headers reads no data and raises none. Once per scanned tensor.
  Warning,
};
const char* model_event_type_name(ModelEventType t);

constexpr uint32_t kNoFile = 0xFFFFFFFFu;

struct ModelLoaderOptions {
  bool seekable = true;
  ModelLoadMode mode = ModelLoadMode::Headers;
  OutType out = OutType::F32;
  KernelImpl kernel = KernelImpl::Auto;
  bool validate_blocks = true;     // DequantSpec::validate (inf/NaN scales rejected)
  uint32_t read_size = 1 << 16;    // the most bytes one NeedRead asks for (>= 1)
  // Decode: output piece size in the arena (>= one block's values: 1 KiB covers every format at
  // f32), or the caller's own buffer (16-byte aligned) when out_buffer is set.
  uint32_t out_size = 1 << 16;
  void* out_buffer = nullptr;
  size_t out_buffer_size = 0;
  Limits limits;                   // for every reader and document
  // The most files the model may have, config.json and the entry document included; 0: as many
  // as the arena holds (each file takes a slot of about 200 bytes and its name, from the arena,
  // as the model's documents name them). Beyond it: TooManyFiles.
  uint32_t max_files = 0;
  // Decode: a selected weight without a decoding (LogicalWeight::decodable false: integer, BOOL
  // and F64 dtypes, GGUF types nothing decodes) goes out as it is stored instead of being refused:
  // WeightBegin, WeightData of role Packed at offsets into its stored bytes (the bytes exactly as
  // in the file), WeightEnd — as Raw mode hands out a one-piece weight. select() accepts it and
  // select_all() includes it; passes_stored() says which weights go out so.
  bool pass_stored = false;
  // Decode: weights (plain, MLX, Ollama, UQFF) whose format's bit (1 << QuantFormat) is set go out as stored
  // too, for a host that decodes those formats itself (the JS package's WebGPU decode pass): every
  // piece (packed, scales, biases) as Raw mode hands them out, WeightData with its role. Their
  // blocks and scales are not validated here: the host that decodes them checks them.
  // passes_stored() and stored_for_host() are true for them; output_bytes() is their pieces'
  // stored bytes.
  uint64_t stored_formats = 0;
  // Every tensor of every file as stored, each its own weight (one Packed piece), no convention
  // applied: the model is built plain over all tables (convention() is Plain), config.json is not
  // asked for, UQFF scalars are not read, MLX / Ollama companions are not grouped. The entry's own
  // checks stay (index <-> shards, manifest <-> blob sizes and names, split GGUF rules, digests);
  // the conventions' do not. A GGUF model already is one weight per tensor. Any mode.
  bool as_stored = false;
  // For a host that retries with arena_needed() after ArenaExhausted: a safetensors header whose
  // estimated need (from its length alone, detail::SafetensorsHeaderParser::arena_estimate) does not
  // fit in what is free fails with ArenaExhausted as soon as its 8-byte length is read, instead of
  // after being counted through — the retry is then its only parse (a DeepSeek-V3 header: 12 MB,
  // 92k tensors, parsed twice from a 1 MiB arena). arena_needed() is then the estimate, with the
  // model's part for the estimated tensor count; when the header needs more, that attempt counts
  // it through and fails as without the option (one more retry). Off by default: a caller that
  // cannot retry (a microcontroller's fixed arena) must not fail on an estimate.
  bool estimate_arena = false;
  // A preview of long GGUF string arrays (a 150k-token vocabulary is 150k Kv events otherwise):
  // an array of more than gguf_array_full strings hands out only its first gguf_array_head
  // elements and its last as Kv events; the readers read and check the ones between as always,
  // and their bytes are counted (kv_string_bytes()). Default: every element.
  uint64_t gguf_array_full = ~uint64_t(0);
  uint64_t gguf_array_head = ~uint64_t(0);
};

struct ModelEvent {
  ModelEventType type = ModelEventType::NeedRead;
  uint32_t file = kNoFile;        // NeedRead, Kv
  uint64_t offset = 0;            // NeedRead: absolute offset; WeightData: offset of data[0]
  uint32_t length = 0;            // NeedRead: at most this many bytes (<= read_size)
  uint32_t weight = kNoTensor;    // WeightBegin/Data/End
  PieceRole role = PieceRole::Packed;  // WeightData in Raw mode: which piece
  const uint8_t* data = nullptr;  // WeightData: valid until the next call of next()
  size_t size = 0;
  const Event* kv = nullptr;      // Kv
};

class HeldRegion;
class DataWarningScan;

class ModelLoader {
 public:
  // GptqPacked (GPTQ's qweight, [in * bits / 32, out] int32 words stored, [out, in] logical): the
  // words are handed to the decoder down the stored columns through a buffer of this many bytes
  // in the arena, taken when a selected weight needs it (the transposition's scratch besides the
  // held packed piece).
  static constexpr size_t kTransposeBytes = size_t(kTransposeScratchBytes);
  // File slots taken at construction; a model of more files gets a larger table once its file
  // count is known (the slots move: hosts keep file numbers, never slot addresses).
  static constexpr uint32_t kInitialFiles = 4;

  // `arena` is 8-byte aligned (16 for decode output) and outlives the loader.
  ModelLoader(void* arena, size_t arena_size, const ModelLoaderOptions& options = ModelLoaderOptions());
  ModelLoader(const ModelLoader&) = delete;
  ModelLoader& operator=(const ModelLoader&) = delete;
  ~ModelLoader();

  // The arena the loader takes before any file's own needs: its file slots, the entry's name (of
  // `entry_name_size` bytes), one reader object and alignment. A host that sizes "the headers'
  // arena" for its users (the CLI's --arena-size) adds this and reports needs without it.
  static size_t base_need(const ModelLoaderOptions& options, size_t entry_name_size);

  // UqffFiles (or Auto): one name of the model's directory; the loader picks and orders them.
  // GgufSplits (or Auto when no `*.uqff` name is given): one split of a split GGUF model; the
  // splits are read in name order, the first must be split 0, and there must be split.count of
  // them (llama.cpp's list of splits). Other names are ignored. Before open(). Names are copied.
  Status add_file(const char* name, size_t n);
  // The entry: a file, an index, a manifest (its name is copied; for UqffFiles it only names the
  // model). UsageError when called twice or with bad options.
  Status open(ModelEntry entry, const char* name, size_t n);
  Status open(ModelEntry entry, const char* name);

  ModelEvent next();
  // While a Kv event of a GGUF string array is handled: the bytes of the array's strings so far,
  // the elements a preview skipped included (gguf_array_*); 0 for other Kv events. (Not a field of
  // ModelEvent: eight more bytes in every event the loader passes by value cost the firmware 56 B
  // of stack.)
  uint64_t kv_string_bytes() const { return kv_strings_ ? kv_string_bytes_ : 0; }

  // Answers to a NeedRead (exactly one of feed / end_of_file / file_missing per request).
  // set_file_size() may come first, on a file's first request: the size of the whole file when
  // the host knows it (stat, Content-Length); the reader then checks truncation and trailing
  // bytes at the header, and a blob's size is checked against its manifest layer before it is read.
  void set_file_size(uint64_t size);
  void feed(const void* data, size_t n);
  void end_of_file();
  void file_missing();

  // --- Digests (SHA-256; sha256.h) ------------------------------------------------------------
  // A file given a digest is hashed as its bytes arrive, in file order, and checked when its last
  // byte has come: a mismatch is DigestMismatch naming the file (error_file()); both digests come
  // from file_expected_sha256() / file_actual_sha256(). It is reported before the file's last
  // tensor is handed on as complete (its last WeightEnd, and Done), so a caller never marks a
  // corrupt model loaded. Verification reads every byte of a verified file in order: with any
  // digest, the data phase of a seekable source is the forward stream (Decode and Raw decode what
  // is selected as it passes, the sequential way; Validate streams every file anyway), and a
  // partly read file cannot be verified. Headers mode reads headers only: digests stay Pending.
  // The digest code (sha256.cpp) is linked only into programs that call these.
  //
  // Before open(): the expected SHA-256 of the model file `name` (as the loader names files:
  // relative to the entry's directory, `blobs/sha256-<hex>` for a manifest's blobs; the entry's
  // own name as given to open()). UsageError after open(); ArenaExhausted when the arena has no
  // room for its record (about 200 bytes and the name).
  Status expect_sha256(const char* name, size_t n, const uint8_t digest[kSha256Bytes]);
  // The same with 64 hex digits; UsageError for anything else.
  Status expect_sha256_hex(const char* name, size_t n, const char* hex, size_t hex_size);
  // On a file's first NeedRead, before it is answered (like set_file_size): its expected digest,
  // e.g. from the response that answers it (Hugging Face's X-Linked-Etag). UsageError elsewhere.
  Status set_file_sha256(const uint8_t digest[kSha256Bytes]);
  // Before open(): verify Ollama blobs against the digest their name is (content addressing): a
  // manifest's tensor blobs (`blobs/sha256-<hex>`, the manifest layer's digest), and an entry file
  // named `sha256-<64 hex>` (a blob given directly).
  Status verify_blobs();
  // Before open(): hash with the host's SHA-256 (a hardware-accelerated one) instead of
  // ws::Sha256; `engine` must outlive the loader. UsageError when its state is larger than
  // kSha256EngineState.
  Status set_sha256_engine(const Sha256Engine* engine);
  DigestState file_digest_state(uint32_t f) const;
  const uint8_t* file_expected_sha256(uint32_t f) const;  // null: no digest given
  const uint8_t* file_actual_sha256(uint32_t f) const;    // null until the whole file was hashed
  // The names given to expect_sha256(), and whether a file of the model had that name (a host
  // says so about a name that matched nothing: its file was not verified).
  uint32_t expected_digest_count() const;
  StrView expected_digest_name(uint32_t i) const;
  bool expected_digest_used(uint32_t i) const;

  // After ModelReady (Decode and Raw): which weights to load. Decode: UnsupportedFormat for a
  // weight without a decoding (select_all() skips those), unless options.pass_stored.
  Status select(uint32_t weight);
  void select_all();
  bool selected(uint32_t weight) const;
  // Decode with options.pass_stored: true for a weight that goes out as stored (it has no
  // decoding; or, with options.stored_formats, a weight of a format named there: all its pieces) —
  // its output is its stored bytes (the packed piece's piece_end - piece_begin), not elements * 4 (or
  // 2). False in other modes (Raw hands out every weight's stored pieces).
  bool passes_stored(uint32_t weight) const;
  // passes_stored() for a weight that has a decoding: one its host decodes (stored_formats), whose
  // every piece goes out (WeightData with its role, as in Raw mode).
  bool stored_for_host(uint32_t weight) const;
  // After ModelReady (selected or not): the bytes weight `weight` hands out in this mode, which a
  // host sizes its buffers by (a preflight reads headers only and asks this). Decode: elements * 4
  // (F32) or * 2 (F16); a weight that goes out as stored (passes_stored()) its packed piece's
  // stored bytes; one without a decoding and without pass_stored 0 (select() refuses it). Raw:
  // the sum of its pieces' stored bytes (packed, scales, biases, global scale; as_stored: the
  // tensor's). Headers and Validate hand nothing out: 0. Saturates at 2^64 - 1.
  uint64_t output_bytes(uint32_t weight) const;

  // --- Progress ---------------------------------------------------------------------------------
  // Every byte fed so far (all files: the entry document, headers, config.json, data).
  uint64_t bytes_read() const { return bytes_read_; }
  // After ModelReady and the selection: the bytes the data phase reads, from ModelReady to Done
  // (the same value whenever it is asked after the selection), so that bytes_read() at ModelReady
  // + bytes_to_read() == bytes_read() at Done for a load that ends well. Computed on demand,
  // O(weights + files). Headers mode: 0; a sequential UQFF model (read whole before ModelReady):
  // 0. By range (Decode and Raw from a seekable source without digests): each selected weight's
  // pieces as they are read (companions and packed bytes; Decode's I2_S: the codes and the 4-byte
  // scale of the tail). Forward (sequential sources, Validate, digests): every data file from
  // where its header reading stopped to its end — the size the host gave (set_file_size), or
  // else the end its header implies: safetensors data_start + data size (the only valid end);
  // GGUF the data's end rounded up to the alignment (ggml's writer pads the last tensor too; a
  // valid file may end up to alignment - 1 bytes earlier, and is then read to there). Before
  // ModelReady: 0. A load that fails stops at or before it.
  uint64_t bytes_to_read() const;

  // Files: the entry document (if any), the data files in model order, config.json (if asked).
  uint32_t file_count() const { return file_count_; }
  StrView file_name(uint32_t f) const;
  ModelFileKind file_kind(uint32_t f) const;
  bool file_present(uint32_t f) const;        // config.json may be missing
  uint32_t entry_file() const { return entry_file_; }
  // The Reader of a data file (its header, metadata, GGUF facts), or null.
  const Reader* file_reader(uint32_t f) const;
  uint32_t file_table(uint32_t f) const;      // kNoTensor for a file that is no table (yet)
  bool file_header_ready(uint32_t f) const;   // its Reader validated its header
  // The entry document, once parsed (null for other entries): its shard list and figures, its
  // layers (a blob's layer name), for messages.
  bool entry_ready() const { return entry_ready_; }  // the index / manifest parsed
  const ShardIndex* index() const { return index_; }
  const OllamaManifest* manifest() const { return manifest_; }
  uint32_t file_layer(uint32_t f) const;      // a blob's manifest layer, or kNoTensor

  // Split GGUF models (FORMATS.md §8; gguf_split.h). A GGUF entry whose split.count is above 1 is a
  // split model: from its name and keys the loader names the others `<prefix>-%05d-of-%05d.gguf`
  // and asks for them (any split may be the entry; a list given with add_file() is taken as it
  // is). Each split is read as its own GGUF file; the model is one table of weights in split
  // order (tables are the splits in order: table t is split t), its metadata the first split's.
  // The rules, each with its status and the split named (error_file()), checked at each split's
  // header: GgufSplitNotGguf, GgufSplitMissing, GgufSplitKeyType (split.no / split.count u16,
  // split.tensors.count i32), GgufSplitNoMissing, GgufSplitFirstNotZero, GgufSplitNoMismatch
  // (split.no not the split's position), GgufSplitCountMismatch (a list of another length, or a
  // split that states another split.count), GgufSplitNameMismatch (the entry's name does not end
  // in "-%05d-of-%05d.gguf" for its keys: error_detail() is that ending); after the last header:
  // GgufSplitTensorCountMissing, GgufSplitDuplicateTensor (the later split and its tensor),
  // GgufSplitTensorCountMismatch (the first split's split.tensors.count: found the tensors, expected
  // the key; or a later split that states another total).
  // Key-values other than split.* in a split after the first are not the model's (llama.cpp reads
  // only the first split's): they are handed on as Kv events of their file and reported here,
  // not merged and not an error.
  uint32_t split_count() const { return split_count_; }  // 0: not a split model
  uint32_t file_split(uint32_t f) const;      // a split's 0-based number, or kNoFile
  uint32_t split_foreign_kvs(uint32_t f) const;      // key-values other than split.* it holds
  uint64_t split_foreign_offset(uint32_t f) const;   // ... the first one's offset

  // After ModelReady. Tables are the data files in order (table t = table_file(t)).
  Convention convention() const { return convention_; }
  Format format() const;                      // of the first data file
  bool config_used() const { return config_used_; }  // config.json's quantization was applied
  const LogicalModel* model() const { return model_; }  // null for GGUF (tensors are its weights)
  uint32_t table_count() const { return table_count_; }
  uint32_t table_file(uint32_t t) const { return t < table_count_ ? table_files_[t] : kNoFile; }
  const TensorTable& table(uint32_t t) const;
  uint32_t weight_count() const;
  const LogicalWeight& weight(uint32_t i) const;
  uint32_t weight_file(uint32_t i) const;     // the file of its packed piece
  uint64_t piece_begin(TensorRef r) const;    // absolute offsets in the piece's file
  uint64_t piece_end(TensorRef r) const;
  // The stored bytes of all of a weight's pieces (saturating).
  uint64_t stored_pieces_bytes(const LogicalWeight& lw) const;
  TensorInfo tensor(TensorRef r) const;
  // The load plan's peaks for reads of `chunk` bytes (LogicalModel's plan_model; zeros for GGUF).
  ModelPlan plan(uint64_t chunk) const;

  const Error& error() const { return error_; }
  uint32_t error_file() const { return error_file_; }  // kNoFile: the model as a whole
  // The last Warning event's warning (valid until the next one; its tensor name is a view into
  // the arena, valid while the loader lives). warning_message() (warning.h) words it.
  const Warning& warning() const { return warning_; }
  StrView error_detail() const { return error_detail_; }  // UQFF companion-set errors
  // The error is the convention's (the logical model's build or resolution, config.json's
  // quantization): every file's header was valid.
  bool convention_error() const { return convention_error_; }
  // The convention whose rule the error is (a convention error), or Plain: status_hint(Status,
  // Convention) words the fix in its terms (GPTQ's bits, not MLX's). Kept here, not in ws::Error,
  // which the parser-only firmware image builds and copies.
  Convention error_convention() const { return convention_error_ ? convention_ : Convention::Plain; }
  size_t arena_needed() const { return arena_needed_; }
  size_t arena_used() const;

 private:
  struct FileSlot;
  struct FileDigest;
  struct DigestOps;
  struct DigestOpsImpl;
  enum class Phase : uint8_t;
  struct WeightPieces;

  // model_loader.cpp: entry, headers, config, build.
  ModelEvent fail(Status s, uint64_t offset, uint32_t file);
  ModelEvent fail_error(const Error& e, uint32_t file);
  // A read of a piece the header placed came back short (Eof: TruncatedData at at_) or its file is
  // gone (Missing: FileMissing), naming the tensor or weight it was for.
  ModelEvent fail_piece_read(uint32_t file, uint32_t tensor, const StrView& name);
  ModelEvent fail_arena(size_t component_need, uint32_t file, size_t rest = ~size_t(0));
  size_t after_headers_need(uint64_t tensors, bool gguf) const;
  size_t table_storage_need() const;
  ModelEvent request(uint32_t f, uint64_t offset, uint64_t length);
  ModelEvent step();
  ModelEvent step_entry_doc();
  ModelEvent after_entry_doc();
  ModelEvent step_headers();
  ModelEvent start_header(uint32_t f);
  ModelEvent header_ready(uint32_t f);
  ModelEvent step_config();
  ModelEvent build();
  ModelEvent step_convention_data();
  ModelEvent resolve_convention_data();
  ModelEvent model_ready();
  ModelEvent after_ready();
  uint32_t add_slot(ModelFileKind kind, const char* name, size_t n, bool copy);
  bool reserve_files(uint32_t n);
  void order_uqff_files();
  ModelEvent fail_files(uint64_t files, size_t extra, uint32_t file);
  void* take_low(size_t n, size_t align);
  void* take_high(size_t n);
  bool gguf_weights();
  uint64_t gguf_tensor_total() const;

  // model_split.cpp: split GGUF models.
  void note_kv(FileSlot& s, const Event& e);
  bool split_header(uint32_t f, ModelEvent* out);
  ModelEvent split_entry(uint32_t f);
  ModelEvent split_later(uint32_t f);
  ModelEvent split_key_fail(Status code, uint32_t f, uint32_t key);
  bool keep_split_tail(uint32_t f);
  bool split_finish(ModelEvent* out);
  bool split_weights_check(ModelEvent* out);

  // Digests (the calls into model_digest.cpp go through digest_ops_, set by the digest API).
  bool seek_data() const;  // the data phase reads by range (a seekable source, no digest)
  ModelEvent fail_digest(uint32_t f);
  bool digest_failed(uint32_t f) const;
  FileDigest* new_digest(const char* name, size_t n, const uint8_t* digest);
  friend struct DigestOpsImpl;

  // model_stream.cpp: reads of weights (seekable), the forward stream (sequential, validate).
  ModelEvent step_seek();
  ModelEvent step_stream();
  enum class EndStep : uint8_t { Next, Return, RouteDeferred };
  EndStep file_end(uint32_t f, ModelEvent* out);
  ModelEvent fail_reader(uint32_t f);
  bool route(uint32_t table, const Event& e, ModelEvent* out);
  bool decode_step(ModelEvent* out);
  ModelEvent start_decode(uint32_t w, bool from_held, const WeightPieces& p);
  // GptqPacked: the decoder reads the stored [rows, cols] int32 words at `base` down its columns;
  // transpose_refill() gathers the next words into tr_buf_ when the decoder has taken the last.
  void transpose_begin(uint32_t w, const uint8_t* base);
  bool transpose_refill();
  ModelEvent finish_weight(uint32_t w);
  ModelEvent stream_end();
  bool prepare_scratch();
  // A sequential Decode or Raw load whose convention resolves weight by weight as the stream
  // passes (ConventionDataPhase::waits_for): ModelReady comes before the data (model_stream.cpp).
  bool weight_stream() const;
  // Before weight w's decode on such a stream: its resolution (false: the model's error in *out).
  bool resolve_streamed(uint32_t w, ModelEvent* out);
  // Sequential: where piece k of weight w (its pieces p) is kept in the held region; null when
  // it has no block.
  uint8_t* held_piece(uint32_t w, const WeightPieces& p, uint32_t k);
  size_t held_keys() const;  // the held region's keys: a block per weight, two on such a stream
  void pieces_of(uint32_t w, WeightPieces* p) const;
  WeightPieces& cur_pieces();  // the weight the data phase is at (in the object, not on the stack)
  uint32_t owner_of(uint32_t table, uint32_t index, PieceRole* role) const;
  uint64_t stream_rest() const;  // every data file's rest, forward (bytes_to_read())
  void sim_sequential(uint64_t* peak, uint32_t* blocks) const;
  // data_warnings.cpp: a convention's warnings about tensor data, scanned as pieces are read.
  DataWarningScan& warn_scan();
  void warn_prepare();
  bool warn_begin(uint32_t w, PieceRole role, uint32_t table, uint32_t index);
  void warn_feed(uint32_t table, uint32_t index, uint64_t offset, const uint8_t* data, size_t size);
  bool warn_end(uint32_t table, uint32_t index);
  bool warn_stream(uint32_t table, const Event& e);
  ModelEvent warning_event();
  // The held region (lib/src/model/held_region.h), in held_storage_.
  HeldRegion& held();
  const HeldRegion& held() const;

  // Answer to the pending NeedRead.
  enum class Answer : uint8_t { None, Data, Eof, Missing };

  ModelLoaderOptions opt_;
  uint8_t* base_ = nullptr;
  uint8_t* end_ = nullptr;
  uint8_t* lo_ = nullptr;  // the free middle [lo_, hi_)
  uint8_t* hi_ = nullptr;
  Phase phase_;
  ModelEntry entry_ = ModelEntry::Auto;
  bool opened_ = false;

  FileSlot* files_ = nullptr;  // files_cap_ slots (and table_files_), from the arena
  uint32_t files_cap_ = 0;
  uint32_t max_files_ = 0;     // 0: no limit but the arena's
  uint32_t file_count_ = 0;
  uint32_t entry_file_ = kNoFile;
  uint32_t config_file_ = kNoFile;
  uint32_t* table_files_ = nullptr;  // table -> file, files_cap_ entries
  uint32_t table_count_ = 0;
  uint32_t cur_ = 0;  // the file (or table, weight, tensor) a phase is at

  ShardIndex* index_ = nullptr;
  OllamaManifest* manifest_ = nullptr;
  MlxQuantConfig* config_ = nullptr;
  LogicalModel* model_ = nullptr;
  LogicalWeight* gguf_weights_ = nullptr;
  uint32_t gguf_count_ = 0;
  Convention convention_ = Convention::Plain;
  bool config_used_ = false;
  bool config_drain_ = false;  // a config.json that failed to parse, read on for its digest
  // The config file being read (ConfigSource) and how many of the other files were asked for
  // (hf_quant_config.json, quantize_config.json, quant_config.json; model_loader.cpp build()).
  uint8_t config_source_ = 0;
  uint8_t other_configs_ = 0;
  // The files' header-metadata signals, a bit per convention id (convention_signal_bits()).
  uint32_t signal_bits_ = 0;
  uint8_t* config_mark_ = nullptr;  // lo_ before config.json's parser (dropped after the build)
  bool data_stream_ = false;        // sequential: the stream feeds the convention's data phase before ModelReady
  bool check_stream_ = false;       // sequential: the stream feeds a check-only data phase after ModelReady
  bool streamed_ = false;           // every file was read to its end already
  uint64_t bytes_read_ = 0;         // every byte fed (bytes_read())
  uint64_t stream_rest_ = 0;        // at ModelReady: what the forward stream reads from there on
  bool ready_ = false;              // ModelReady came (bytes_to_read())
  uint8_t* selected_ = nullptr;  // bit per weight (Decode, Raw)

  // The pending request and its answer.
  bool awaiting_ = false;
  uint32_t req_file_ = kNoFile;
  uint64_t req_offset_ = 0;
  uint64_t req_length_ = 0;
  Answer answer_ = Answer::None;
  const uint8_t* answer_data_ = nullptr;
  size_t answer_size_ = 0;

  // Progress inside a phase.
  uint32_t sub_ = 0;          // step within a weight / piece index
  bool weight_begun_ = false; // WeightBegin was handed out for the weight at cur_
  uint64_t at_ = 0;           // next offset within the current range
  Event reader_event_;        // the last Kv event handed on
  // The GGUF string array streaming past (the preview, ModelLoaderOptions::gguf_array_*).
  uint64_t kv_string_bytes_ = 0;
  bool kv_strings_ = false, kv_preview_ = false;

  // The pieces of the weight the data phase is at (a WeightPieces: kept here, not on the stack,
  // which a microcontroller counts).
  alignas(8) uint8_t cur_pieces_[256];

  // Decoding.
  Dequantizer dq_;
  uint8_t* out_ = nullptr;
  size_t out_cap_ = 0;
  uint8_t* scratch_ = nullptr;  // seekable: one weight's companions
  uint64_t scratch_cap_ = 0;
  bool decoding_ = false;       // dq_ is on dec_weight_
  uint32_t dec_weight_ = kNoTensor;
  const uint8_t* dec_src_ = nullptr;  // bytes to decode now
  size_t dec_left_ = 0;
  uint64_t dec_input_left_ = 0;  // stored bytes the decoder still takes
  uint64_t dec_out_pos_ = 0;
  bool pending_end_ = false;     // WeightEnd (then free) once the kept bytes are decoded
  uint32_t start_weight_ = kNoTensor;  // sequential: route() asks step_stream to start the decoder
  bool start_held_ = false;            // ... on the weight's kept bytes (its last piece came)
  // GptqPacked's transposition: the held stored words, their geometry, the next word in column
  // order, and the arena buffer the decoder reads them from (kTransposeBytes; null when no
  // selected weight needs it).
  const uint8_t* tr_base_ = nullptr;
  uint64_t tr_rows_ = 0, tr_cols_ = 0, tr_next_ = 0;
  bool tr_awq_ = false;  // AWQ's [in, out / 8] interleaved words (LogicalWeight::awq_packed)
  uint8_t* tr_buf_ = nullptr;

  // Sequential: the held region's state (a HeldRegion, compacting blocks in address order; the
  // type is internal, its size checked where it is constructed).
  alignas(8) unsigned char held_storage_[48];

  // Data warnings: the scan (a DataWarningScan, internal), whether this load scans, the last
  // warning and whether it still waits to be handed out.
  alignas(8) unsigned char warn_storage_[88];
  bool warn_scans_ = false;
  bool warn_pending_ = false;
  Warning warning_;

  // Digests: the records given by name before open() (a list), the calls into model_digest.cpp.
  FileDigest* digests_ = nullptr;
  const DigestOps* digest_ops_ = nullptr;
  uint32_t digest_files_ = 0;  // files with a digest: the data phase streams
  bool verify_blobs_ = false;
  const Sha256Engine* sha_engine_ = nullptr;  // null: ws::Sha256
  Event deferred_end_;         // the last TensorEnd of a file whose digest is not checked yet
  bool have_deferred_end_ = false;

  // Split GGUF: the count (0: not split) and the names' prefix (a view of the entry's name).
  uint32_t split_count_ = 0;
  const char* split_prefix_ = nullptr;
  uint32_t split_prefix_size_ = 0;
  char split_detail_[24] = {};  // GgufSplitNameMismatch: the name's expected ending

  Error error_;
  uint32_t error_file_ = kNoFile;
  StrView error_detail_;
  bool convention_error_ = false;
  bool entry_ready_ = false;
  size_t arena_needed_ = 0;
};

}  // namespace ws
