// weightstream — logical weights: a packed tensor and its companions, seen as one weight.
//
//   ws::LogicalWeight storage[256];
//   ws::LogicalModel m(storage, 256);
//   m.add_table(&reader.tensors(), reader.data_start());   // one per shard or blob
//   if (m.build_mlx(&config) != ws::Status::Ok) ... m.error() names the weight
//   for (uint32_t i = 0; i < m.weight_count(); ++i) {
//     const ws::LogicalWeight& w = m.weight(i);          // name, mode, bits, group, shape
//     ws::DequantSpec spec = w.spec();                    // fill spec.scales / .biases, decode
//   }
//
// MLX (FORMATS.md §2): `<p>.weight` U32 + `<p>.scales` (+ `<p>.biases` for affine); params from
// config.json (MlxQuantConfig), else from `__metadata__` keys "bits"/"group_size"/"mode", else from
// the shapes when exactly one (mode, bits, group) fits. Ollama (§3): `{name}` + `{name}.scale`
// (+ `.bias`, `.global_scale`), params from `__metadata__` quant_type / group_size, per tensor or
// per blob. Every other tensor (a linear's `.bias`, norms, embeddings) is a plain weight. Tables
// may come from several shards or blobs: companions are looked up across all of them, so a model
// split anywhere is one logical model. Nothing allocates: weights live in the caller's storage.
//
// UQFF (§4; mistral.rs): add every file of the directory (the shards, then residual.safetensors,
// by convention; the version tensors are found in whichever files hold them), each table once its
// file's header is read (the Reader at HeaderReady; every file's header is needed before
// build_uqff(), the data after it). Every shard set mistral.rs writes starts with the three
// `uqff.version.*` U32 scalars, so several files may hold them: the copies must be equal (the
// first in table order is the version), and no other name may appear in two files.
// A layer `<key>` is recognised by its
// `<key>.weight.format` tensor; its set of `<key>.weight*` tensors must be exactly one type's set
// (see uqff.h), which the header alone decides. The format tag, GGML type id, bits, group size,
// shape vector and block count live in tensor DATA, so UQFF is resolved in two steps:
//   m.build_uqff();                  // header only: versions present, sets, dtypes; load plans
//   ... stream the files; for every TensorBytes event e of table t:  m.feed_uqff(t, e.tensor,
//       e.offset, e.data, e.size);   // keeps the few scalar bytes it wants, ignores the rest
//   m.resolve_uqff();                // checks version and tags, fills params, shapes, formats
// Sequential streams get the scalars when they pass (a layer's packed weight usually precedes its
// tag: the load plan counts that weight as scratch); seekable sources read them first: they are
// pieces of the weight's plan (roles Format..NumBlocks), scheduled before the packed piece.
//
// Name lookups (companions, duplicates, find()) go through an open-addressing hash table in
// caller memory (set_index_slots) or, for small models, in the model object itself; a model too
// large for both falls back to linear scans with the same results.
//
// Errors name a tensor and give an offset in that tensor's own file; error_table() says which
// table (file) that is, since Error itself has no file field. Header-detected errors point at the
// tensor's header entry; errors about a scalar's value (version, tag, bits, type id) at its data.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/dequant.h"
#include "weightstream/dtype.h"
#include "weightstream/mlx_config.h"
#include "weightstream/quant_params.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {

// A convention: its row in the one table of conventions (lib/src/conventions/convention_table.cpp),
// where each row is a descriptor saying how the convention is signalled, which companions it has,
// how its logical weights are built and checked, and what it presents. An open id, not a closed
// enum: a new convention is a new row. The named rows are the ones built in; `id` is also the word
// the WebAssembly ABI passes (0 plain, 1 mlx, 2 ollama, 3 uqff).
struct Convention {
  uint8_t id = 0;
  static const Convention Plain, Mlx, Ollama, Uqff;
  constexpr bool operator==(const Convention& o) const { return id == o.id; }
  constexpr bool operator!=(const Convention& o) const { return id != o.id; }
};
inline constexpr Convention Convention::Plain{0};
inline constexpr Convention Convention::Mlx{1};
inline constexpr Convention Convention::Ollama{2};
inline constexpr Convention Convention::Uqff{3};

// What hosts may know of a convention without knowing which it is.
struct ConventionInfo {
  const char* name = "?";  // "plain", "mlx", "ollama", "uqff"; "?" for an id past the table
  // Its weights are the stored tensors, one each, with no companion (plain safetensors, GGUF
  // blocks); hosts show a logical-weight table only for the others.
  bool plain = false;
};
ConventionInfo convention_info(Convention c);
const char* convention_name(Convention c);
// The fix for status `s` in convention c's words (its descriptor's `hint`: GPTQ's bits for
// ConventionBitsNotAllowed, MLX's for MLX), else status_hint(s): every host ends its message
// with this. ModelLoader::error_convention() names the convention of an error.
const char* status_hint(Status s, Convention c);
// Rows in the table (ids 0 .. count-1).
uint32_t convention_count();

// What a safetensors file's metadata says it is: the first convention, in the table's resolution
// order, whose metadata signal the header carries (Ollama: a `quant_type` or `<tensor>.quant_type`
// key; MLX: `"format": "mlx"`), or Plain (no signal; a config.json with a quantization section
// still makes a model MLX). Several files: the loader combines every file's signals the same way.
Convention convention_signal(const TensorTable& table);

// A tensor of one of the model's tables.
struct TensorRef {
  uint32_t table = kNoTensor;
  uint32_t index = kNoTensor;
  bool present() const { return table != kNoTensor; }
};

// Format..NumBlocks: UQFF's scalar companions (`.weight.format`, `.weight.dtype` = GGML type id,
// `.weight.shape`, `.weight.bits`, `.weight.group_size`, `.weight.num_blocks`); tiny tensors whose
// values the layer needs before its packed bytes can be decoded.
enum class PieceRole : uint8_t { Packed, Scales, Biases, GlobalScale, Format, GgmlType, Shape, Bits, GroupSize, NumBlocks };
constexpr uint32_t kPieceRoles = 10;
constexpr uint32_t kFirstScalarRole = 4;  // PieceRole::Format
const char* piece_role_name(PieceRole r);

constexpr uint32_t kMaxLogicalRank = 4;

struct LogicalWeight {
  // The dequantized parameter's name: a view of the packed (or plain) tensor's name, or composed
  // in the model's name storage when no header string spells it (GPTQ/AWQ `<m>.weight`).
  StrView name;
  Convention convention = Convention::Plain;
  QuantParams params;           // mode None for a plain tensor
  QuantFormat format = QuantFormat::F32;
  bool decodable = false;       // plain tensors of integer dtypes have no decoder
  DType scale_dtype = DType::BF16;
  TensorRef piece[kPieceRoles];  // by PieceRole; absent ones are !present()
  uint32_t rank = 0;
  uint64_t shape[kMaxLogicalRank] = {};  // logical (unpacked) shape
  uint64_t elements = 0;
  // UQFF: the type its companion set names (uqff.h UqffType), and the scalar companions' bytes as
  // feed_uqff() collects them (fixed slots per role; sizes validated against the header).
  // compressed-tensors (feed_ct()): uqff_scalar[0, 16) the weight_shape's bytes (I32 or I64 [2]),
  // uqff_got[Shape - kFirstScalarRole] how many arrived.
  uint8_t uqff_type = 0;
  uint8_t uqff_scalar[32] = {};
  uint8_t uqff_got[kPieceRoles - kFirstScalarRole] = {};
  // FP8 (QuantFormat::Fp8Block): the scale block's rows and columns (0: the whole dimension, as
  // per-tensor and per-channel scales have it) and the stored element dtype (F8_E4M3, F8_E5M2).
  // compressed-tensors (QuantFormat::CtPacked) uses the same pair: [0] 1 for a scale row per row
  // (group, channel), 0 for one scale (tensor); [1] the group size (0: the whole row).
  uint32_t fp8_block[2] = {};
  DType fp8_dtype = DType::F8_E4M3;
  // GPTQ (QuantFormat::GptqPacked): the scales' rows (groups) and what a stored zero point adds
  // (1: checkpoint_format "gptq", v1; 0: "gptq_v2"). Its qzeros are the Biases piece and its
  // g_idx the GlobalScale piece (gptq_convention.cpp).
  uint32_t gptq_groups = 0;
  uint8_t gptq_zero_add = 0;
  // AWQ (awq_convention.cpp; QuantFormat::GptqPacked too): the stored qweight is [in, out / 8]
  // int32, packed along the output dimension in AWQ's interleave, and its qzeros likewise; the
  // loader gathers each logical row's words from it (model_stream.cpp transpose_refill).
  bool awq_packed = false;
  // compressed-tensors (compressed_tensors_convention.cpp): the format its weight was saved in:
  // 0 pack-quantized (CtPacked words), 1 naive-quantized, 2 int-quantized (the I8 weight as
  // stored: CtPacked of 8 bits with ct_int8), 3 float-quantized (F8_E4M3: Fp8Block),
  // 4 nvfp4-pack-quantized (MlxNvfp4, the global scale dividing), 5 mxfp4-pack-quantized (MlxMxfp4).
  uint8_t ct_format = 0;
  // AWQ GEMV (AutoAWQ awq/modules/linear/gemv.py WQLinear_GEMV; GptqPacked too): the stored
  // qweight is [out, in / 8], each row already a logical row's words in natural lane order (read
  // as stored, no transposition), and qzeros [out, this] / scales [out, this * 8] hold each
  // output's groups along its row, padded (calculate_zeros_width). 0: not GEMV.
  uint32_t awq_gemv_zero_words = 0;
  // The decoder's input is the stored words gathered down columns (GPTQ, AWQ GEMM), held whole.
  bool gptq_transposed() const { return format == QuantFormat::GptqPacked && awq_gemv_zero_words == 0; }
  // bitsandbytes 4-bit (QuantFormat::Bnb4, bnb_convention.cpp): what its quant_state JSON says
  // (quant_type fp4, the nested blocksize and offset, the dtype quantized from) and the data
  // phase's progress (kBnb* bits). Its absmax is the Scales piece, nested_absmax the Biases piece,
  // nested_quant_map the GlobalScale piece, the JSON the Format piece and quant_map the Shape piece;
  // 8-bit (QuantFormat::BnbInt8): SCB the Scales piece, weight_format the Format piece.
  uint8_t bnb_flags = 0;
  DType bnb_dtype = DType::F32;
  uint32_t bnb_nested_group = 0;
  float bnb_nested_offset = 0.0f;

  const TensorRef& ref(PieceRole r) const { return piece[uint32_t(r)]; }
  // A ready spec (its convention adds what is its own, such as Ollama's global-scale rule); the
  // caller sets scales/biases (and global_scale from the F32 scalar's bytes, with
  // has_global_scale) from the companion bytes it kept, and input_offset if it wants absolute
  // error offsets.
  DequantSpec spec() const;
};

// One quantization parameter of a logical weight as its convention presents it: a key ("mode",
// "bits", "group", "scale_dtype", "type", ...) and a text or a number. Hosts print or return these
// without knowing the convention.
struct QuantParameter {
  const char* key = "";
  const char* text = nullptr;  // the value when it is a name; nullptr when it is `number`
  uint64_t number = 0;
};
constexpr uint32_t kMaxQuantParameters = 8;
// The parameters `w`'s convention presents, in its fixed order, into out[0, cap); returns how many
// it has (at most kMaxQuantParameters; a plain weight has none).
uint32_t quant_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap);

// One table (file) of a LogicalModel: where its tensors are, and UQFF's copy of the version tensors
// it holds. LogicalModel keeps kInlineTables of these; set_table_storage() gives it more.
struct LogicalTable {
  const TensorTable* table = nullptr;
  uint64_t data_start = 0;
  uint32_t first = 0;  // the model-wide number of its first tensor (the name hash stores those)
  uint8_t version_copy[12] = {};  // UQFF: this file's copy of the version tensors, as fed
  uint8_t version_got[3] = {};    // ... and how many bytes of each arrived
};

class LogicalModel {
 public:
  // Tables held in the object itself; a model of more files (a model sharded into hundreds of
  // files, DeepSeek-V3's 163) gives caller storage with set_table_storage().
  static constexpr uint32_t kInlineTables = 64;

  LogicalModel(LogicalWeight* storage, uint32_t capacity);
  // Optional, before add_table(): room for `n` tables in caller memory (used instead of the
  // inline kInlineTables).
  void set_table_storage(LogicalTable* storage, uint32_t n);
  LogicalModel(const LogicalModel&) = delete;  // the hash may point into the object itself
  LogicalModel& operator=(const LogicalModel&) = delete;
  // Optional, before any build: `n` caller slots (any count; a power of two is used) for the name
  // hash of a large model. Two slots per tensor of all tables keeps lookups O(1); see
  // index_slots_for(). Without it the model's own kInlineSlots serve models of up to
  // kInlineSlots / 4 tensors.
  void set_index_slots(uint32_t* slots, uint32_t n);
  static constexpr uint32_t kInlineSlots = 1024;
  static uint32_t index_slots_for(uint64_t tensors);
  // Optional, before a build: `n` bytes of caller memory for the names of weights that no header
  // string spells (GPTQ's and AWQ's `<m>.weight`, grouped from `<m>.qweight`); a build that needs
  // more fails with ArenaExhausted at the packed tensor. Kept until the next call.
  void set_name_storage(char* storage, size_t n);
  // The bytes of name storage one table's tensors can need (0 for a model of no such convention):
  // sum this over the tables a model will have.
  static uint64_t name_storage_for(const TensorTable& table);
  // Adds one validated table (a shard or a blob); it must outlive the model. `data_start` is the
  // absolute offset of its data section (Reader::data_start()), used by load plans.
  Status add_table(const TensorTable* table, uint64_t data_start);

  // Groups every table's tensors into logical weights. `config` may be null.
  Status build_mlx(const MlxQuantConfig* config);
  Status build_ollama();
  // gpt-oss MXFP4 (transformers integrations/mxfp4.py): `<p>_blocks` U8 [..., G, 16] with
  // `<p>_scales` U8 E8M0 [..., G] is the weight `<p>`, [..., G * 32]; every other tensor plain.
  // `config` names mxfp4: a model without such a pair is an error; a module its
  // modules_to_not_convert leaves unquantized (lib/src/conventions/module_lists.h) must not have
  // one (ConventionExcludedQuantized). `config` may be null.
  Status build_mxfp4_blocks(const MlxQuantConfig* config);
  // NVIDIA ModelOpt NVFP4: `<m>.weight` U8 [..., K/2] with `<m>.weight_scale` F8_E4M3
  // [..., K/16] and `<m>.weight_scale_2` F32 (one value) is the weight `<m>.weight`, [..., K];
  // `<m>.input_scale` and every unquantized tensor plain. `config` as above (exclude_modules,
  // ignore).
  Status build_modelopt_nvfp4(const MlxQuantConfig* config);
  // NVIDIA ModelOpt FP8 (modelopt_fp8.cpp): `<m>.weight` F8_E4M3 [out, in] with its F32
  // `<m>.weight_scale` — one value (quant_algo FP8), [out] (FP8_PER_CHANNEL_PER_TOKEN) or
  // [out / 128, 1, in / 128, 1] (FP8_PB_WO) — is the weight `<m>.weight`; every other tensor
  // plain. `algo`: the variant (the internal ModelOptFp8Algo's value: 1, 2 or 3); `config` the
  // config that names it (its exclude_modules / ignore: module_lists.h).
  Status build_modelopt_fp8(uint32_t algo, const MlxQuantConfig* config);
  // compressed-tensors pack-quantized (compressed_tensors_convention.cpp): `<m>.weight_packed`
  // I32 with `<m>.weight_scale`, `<m>.weight_shape` (and `<m>.weight_zero_point` when
  // asymmetric) is the weight `<m>.weight`; the parameters are config.json's (required).
  Status build_compressed_tensors(const MlxQuantConfig* config);
  // Its naive- / int- / float-quantized formats (`kind` as LogicalWeight::ct_format).
  Status build_ct_stored(const MlxQuantConfig* config, uint8_t kind);
  // Its FP4 formats (compressed_tensors_fp4.cpp; `kind` 4 nvfp4-, 5 mxfp4-pack-quantized):
  // `<m>.weight_packed` U8 with `<m>.weight_scale` (and nvfp4's `<m>.weight_global_scale`) is the
  // weight `<m>.weight`. `config` null: nvfp4 named by its tensors alone.
  Status build_ct_fp4(const MlxQuantConfig* config, uint8_t kind);
  // Then, its data phase: ct_wants() names each weight's `<m>.weight_shape`, feed_ct() collects
  // its bytes and checks them against the shape the build inferred once they are all in (an error
  // at the tensor's data), resolve_ct() that every one was fed.
  bool ct_wants(uint32_t table, uint32_t tensor) const;
  Status feed_ct(uint32_t table, uint32_t tensor, uint64_t offset, const uint8_t* data, size_t size);
  Status resolve_ct();
  // Every tensor a plain weight (a sharded HF model).
  Status build_plain();
  // The Hub's FP8 checkpoints (fp8_convention.cpp): `<p>.weight` F8 + `<p>.weight_scale_inv`
  // (block scales) or `<p>.weight_scale` (per tensor / channel); `config` may be null.
  Status build_fp8(const MlxQuantConfig* config);
  // GPTQ (gptq_convention.cpp): `<m>.qweight` + `<m>.qzeros` + `<m>.scales` (+ `<m>.g_idx`) is
  // the weight `<m>.weight` (name storage), [out, in]; every other tensor plain. `config` may be null.
  Status build_gptq(const MlxQuantConfig* config);
  // AWQ GEMM (awq_convention.cpp): `<m>.qweight` [in, out / 8] + `<m>.qzeros` + `<m>.scales` is
  // the weight `<m>.weight` (name storage), [out, in]; every other tensor plain. `config` may be null.
  Status build_awq(const MlxQuantConfig* config);
  // UQFF, header step (see the top of this file); then feed_uqff() for the scalars' bytes and
  // resolve_uqff(). `offset` is the absolute file offset of data[0] (Event::offset).
  Status build_uqff();
  Status feed_uqff(uint32_t table, uint32_t tensor, uint64_t offset, const uint8_t* data, size_t size);
  Status resolve_uqff();
  // True when feed_uqff() wants this tensor's bytes (a version tensor, any copy, or a layer's
  // scalar).
  bool uqff_wants(uint32_t table, uint32_t tensor) const;
  // bitsandbytes (bnb_convention.cpp), header step: `<m>.weight` with its quant_state,
  // absmax and quant_map (4-bit) or its SCB (8-bit) is the weight `<m>.weight`; every other tensor
  // plain. Then feed_bnb() for the quant_state JSON, quant_map and weight_format bytes and
  // resolve_bnb(), which gives each 4-bit weight its shape and parameters. `method_named`:
  // config.json said bitsandbytes, so a model without such a weight is an error.
  Status build_bnb(bool method_named);
  bool bnb_wants(uint32_t table, uint32_t tensor) const;
  Status feed_bnb(uint32_t table, uint32_t tensor, uint64_t offset, const uint8_t* data, size_t size);
  Status resolve_bnb();
  // One weight's part of resolve_bnb() (a forward stream resolves each weight once its quant_state
  // has passed, before its decode); Ok for a weight of another convention. Idempotent.
  Status resolve_bnb_weight(uint32_t weight);
  // The version tensors (major, minor, patch) after build_uqff(): the first copy in table order.
  TensorRef uqff_version_ref(uint32_t i) const { return version_ref_[i < 3 ? i : 0]; }
  // After resolve_uqff(): the version the file states.
  uint32_t uqff_version(uint32_t i) const;

  // Fails the model with `s` at tensor `at` (may be absent); the detail (error_detail()) is `a`
  // (`an` bytes) followed by the C string `b` (may be null), copied and cut to 127 bytes. Used by
  // quant_methods.cpp to refuse a quantization this reader does not decode, by name.
  Status refuse(Status s, TensorRef at, const char* a, size_t an, const char* b);

  const Error& error() const { return error_; }
  // The table whose file error().offset is in: the tensor the check failed at (a header entry or
  // a scalar's data). kNoTensor when the error is about no tensor (a missing version tensor).
  uint32_t error_table() const { return error_table_; }
  // UQFF companion-set errors: the suffix that is missing or unexpected (".weight.scales");
  // UqffUnsupportedType: "hqq" or "fp8"; QuantizationUnsupported: the method and how it was
  // told ("gptq (config.json quant_method)"). Empty otherwise.
  StrView error_detail() const { return detail_; }
  uint32_t weight_count() const { return count_; }
  // True when the model was built by build_plain() alone: every weight is one tensor, with no
  // companion to hold or wait for (plan_model answers without a sweep). False otherwise, which
  // says nothing: a convention's weights may still all be single pieces.
  bool single_pieces() const { return single_pieces_; }
  const LogicalWeight& weight(uint32_t i) const { return weights_[i]; }
  // kNoTensor when absent. After build_plain() the first lookup (find, or a build after it) builds
  // the name hash build_plain deferred: a model shared between threads needs one lookup before
  // they look names up at once.
  uint32_t find(const char* name, size_t n) const;
  // The weight tensor `r` is a piece of, and its role; kNoTensor when it belongs to none (a UQFF
  // version tensor). O(1) with the name hash: the candidates are the tensor's own name and the
  // names its companion suffix points to (`.scales` -> `.weight`, `.scale` -> the prefix, ...).
  uint32_t owner(TensorRef r, PieceRole* role) const;

  uint32_t table_count() const { return table_count_; }
  const TensorTable& table(uint32_t t) const { return *tables_[t].table; }
  uint64_t data_start(uint32_t t) const { return tables_[t].data_start; }
  TensorInfo tensor(TensorRef r) const { return tables_[r.table].table->get(r.index); }
  // Absolute file offsets [begin, end) of a piece in its table's file.
  uint64_t piece_begin(TensorRef r) const { return tables_[r.table].data_start + tensor(r).begin; }
  uint64_t piece_end(TensorRef r) const { return tables_[r.table].data_start + tensor(r).end; }

 private:
  Status fail(Status s, TensorRef at, const StrView& name);
  Status fail_data(Status s, TensorRef at, const StrView& name);  // offset = the tensor's data
  // The weight name `packed`'s name up to `base` + `suffix`, composed in the name storage.
  Status compose_name(TensorRef packed, size_t base, const char* suffix, StrView* out);
  // Whether tensor r, named `name`, ends in one of suffixes[0, n) (a companion, read with its
  // weight); one whose weight (the name before it + `weight_suffix`) is absent fails the build
  // with ConventionOrphanCompanion (the return value is then false and error_ set).
  bool is_companion(TensorRef r, const StrView& name, const char* const* suffixes, size_t n, const char* weight_suffix);
  TensorRef find_tensor(const char* name, size_t n) const;
  TensorRef ref_of(uint32_t id) const;  // a model-wide tensor number (the name hash's) -> table, index
  // Tensor named a + b. `table` = kNoTensor: any table (first or, with `last`, last added);
  // otherwise only that table.
  TensorRef find_concat(const char* a, size_t an, const char* b, uint32_t table = kNoTensor,
                        bool last = false) const;
  // Numbers the tensors model-wide (LogicalTable::first); returns their count.
  uint64_t number_tables();
  // The tensor half of the name hash; the weight half is cleared for index_weight() unless
  // `clear_weight_half` is false (ensure_index copies the tensor half over it).
  Status build_index(bool reject_duplicates, bool clear_weight_half = true);
  // build_plain's hash, built by the first lookup that needs it (index_pending_).
  void ensure_index() const;
  uint32_t find_weight_concat(const char* a, size_t an, const char* b) const;
  void index_weight(uint32_t w);
  Status uqff_layer(TensorRef format_ref, size_t key_len);
  Status uqff_resolve_layer(LogicalWeight* w);
  bool uqff_scalar_slot(uint32_t table, uint32_t tensor, uint8_t** dst, uint8_t** got, uint64_t* begin);
  Status add_weight(const LogicalWeight& w, bool index = true);  // index: into the weight half of the hash
  Status finish_quantized(LogicalWeight* w);
  Status plain_weight(TensorRef r, LogicalWeight* w) const;
  Status gptq_shape(TensorRef r, bool dtype_ok, uint64_t rows, uint64_t cols, uint32_t rank);
  Status bnb_resolve_weight(LogicalWeight* w);
  Status bnb_companion_count(TensorRef r, DType dtype, uint64_t count);

  LogicalWeight* weights_;
  uint32_t capacity_;
  uint32_t count_ = 0;
  LogicalTable* tables_ = inline_tables_;
  uint32_t table_cap_ = kInlineTables;
  uint32_t table_count_ = 0;
  Error error_;
  uint32_t error_table_ = kNoTensor;
  StrView detail_;
  char refusal_[128] = {};  // refuse()'s detail
  char* names_ = nullptr;   // set_name_storage(): composed weight names
  size_t names_cap_ = 0;
  size_t names_used_ = 0;
  // Name hash: [0, half) tensors (model-wide number + 1: LogicalTable::first + index), [half,
  // 2 half) weights (index + 1);
  // 0 = empty. indexed_ is false when the model does not fit (linear scans then).
  uint32_t* slots_ = inline_slots_;
  uint32_t slot_count_ = kInlineSlots;
  uint32_t half_ = 0;
  bool indexed_ = false;
  bool single_pieces_ = false;
  bool index_pending_ = false;  // build_plain's hash is not built yet (ensure_index)
  TensorRef version_ref_[3];
  uint8_t version_bytes_[12] = {};  // the version (the first copy's bytes), after resolve_uqff()
  // bitsandbytes: the quant_state JSON parser (bnb_quant_state.h; one document is fed at a time,
  // in file order) in opaque storage, and the weight whose JSON it is reading.
  alignas(8) uint8_t bnb_parser_[456];
  uint32_t bnb_parsing_ = kNoTensor;
  LogicalTable inline_tables_[kInlineTables];
  uint32_t inline_slots_[kInlineSlots] = {};
};

}  // namespace ws
