// weightstream — a convention as one descriptor (internal; the table is convention_table.cpp).
//
// Everything the model layer knows of one quantization convention lives in its descriptor, in
// the convention's own file: how a model says it follows it (its model entry, a header-metadata
// signal, config.json), which companion tensors it names and how (for LogicalModel::owner()),
// how its logical weights are built and checked, what it adds to a weight's DequantSpec, and the
// generic parameters it presents to hosts. The loader and the hosts ask the table; none of them
// branches on a convention.
#pragma once

#include <stdint.h>

#include "weightstream/conventions.h"
#include "weightstream/warning.h"

namespace ws {

class MlxQuantConfig;

// How config.json bears on a convention.
enum class ConfigRole : uint8_t {
  Ignored,         // not read for it (its entry or metadata decides, and its params are its own)
  MaySignalOther,  // read: a quantization section makes the model another convention's (plain)
  ParamSource,     // read: its quantization section signals this convention and gives the params,
                   // so one that does not parse, when the files signal it, is the model's error
};

// A companion tensor's name relative to its weight's: a name ending in `text` (or, with `infix`,
// containing it) belongs to the weight named by the name before it + `weight_suffix`.
struct CompanionName {
  const char* text;
  const char* weight_suffix;
  bool infix;
};

// No entry implies the convention.
constexpr uint8_t kNoEntry = 0xFF;

// A convention resolved in a second step from tensor data, after its header build: UQFF's scalars
// (format tag, GGML type, shape...). The loader reads, before ModelReady, every tensor `wants`
// names — by range when the host can seek, else as the stream passes (then every file is read
// before ModelReady) — hands its bytes to `feed` in file order and pieces of any size, then calls
// `resolve` once, whose error is the model's.
struct ConventionDataPhase {
  bool (*wants)(const LogicalModel& m, uint32_t table, uint32_t tensor);
  // `offset`: the absolute file offset of data[0] (Event::offset).
  Status (*feed)(LogicalModel& m, uint32_t table, uint32_t tensor, uint64_t offset, const uint8_t* data,
                 size_t size);
  Status (*resolve)(LogicalModel& m);
  // The phase only checks bytes the weights do not depend on (compressed-tensors' weight_shape):
  // a source that cannot seek is not read whole before ModelReady for it; its wanted tensors are
  // fed as the validate or decode stream passes them (an error there ends the stream) and resolve
  // runs after the last file. Headers alone from such a source are not checked.
  bool check_only = false;
  // Resolved weight by weight as a forward stream passes (bitsandbytes: a 4-bit weight's shape and
  // parameters are its own quant_state JSON's). With both set, a sequential Decode or Raw load is
  // not read whole before ModelReady: ModelReady comes after the headers (a weight waiting on its
  // data has the header's provisional shape until then; output_bytes() is exact), the wanted
  // tensors are fed as the stream passes them, a selected weight whose `waits_for` tensor comes
  // after its pieces is held whole (packed bytes too, in the held region the dry run sizes) until
  // that tensor has passed, `resolve_weight` runs right before its decode (its error is the
  // model's), and `resolve` after the last file (every weight, selected or not, checked).
  // waits_for: the tensor of weight w's data the decode depends on that comes last in file order
  // (an absent ref: none).
  TensorRef (*waits_for)(const LogicalModel& m, uint32_t weight) = nullptr;
  Status (*resolve_weight)(LogicalModel& m, uint32_t weight) = nullptr;
};

// A warning a convention raises from tensor data as a load reads it (GPTQ v1's zero spill:
// warning.h). The loader (lib/src/model/data_warnings.cpp) hands every byte it reads of a scanned
// piece — Validate: every weight's; Decode and Raw: the selected weights' — in whole units to
// `hits`, and hands out one ModelEventType::Warning per piece that had any, at the piece's end.
// Headers mode reads no data: it raises none.
struct ConventionDataWarning {
  WarningCode code;
  // Whether piece `role` of weight `w` is scanned, and its unit in bytes (1..16; the piece is
  // whole units).
  bool (*scans)(const LogicalWeight& w, PieceRole role, uint32_t* unit);
  // The instances in one unit of that piece.
  uint32_t (*hits)(const LogicalWeight& w, const uint8_t* unit);
};

struct ConventionDescriptor {
  const char* name;
  Convention id;
  bool plain;  // weights are the stored tensors (ConventionInfo::plain)
  // Resolution order: the lowest rank whose signal holds wins (the entry, the header metadata, a
  // config.json quantization section); the plain row, last, takes what none claims.
  uint8_t rank;
  uint8_t entry;  // the ModelEntry that makes a model this convention, or kNoEntry
  bool (*metadata_signal)(const TensorTable& table);  // nullptr: the header never says
  ConfigRole config;
  // Resolved in a second step from tensor data (above); nullptr: the header build is the whole
  // resolution.
  const ConventionDataPhase* data_phase;
  const CompanionName* companions;
  uint8_t companion_count;
  Status (*build)(LogicalModel& model, const MlxQuantConfig* config);
  // What the convention adds to LogicalWeight::spec()'s generic fields; nullptr: nothing.
  void (*spec)(const LogicalWeight& w, DequantSpec* spec);
  // Its weights' generic parameters (quant_parameters()); returns how many it wrote.
  uint32_t (*parameters)(const LogicalWeight& w, QuantParameter* out, uint32_t cap);
  // A Hub quantization method it decodes (issue #27): true when `config` names its method
  // (quant_method, and ModelOpt's quant_algo) or, when `config` names none (or there is none),
  // when the tensor names show its scheme. choose_convention() asks it with that precedence; the
  // refusal of quant_methods.cpp does not apply to a model a row claims. nullptr: claims nothing.
  bool (*claims)(const LogicalModel& m, const MlxQuantConfig* config) = nullptr;
  // A packed tensor whose weight has a name no header string spells: `text` its suffix,
  // `weight_suffix` the weight's (GPTQ's and AWQ's `<m>.qweight` is the weight `<m>.weight`, the
  // parameter transformers dequantizes it into). The name is composed in the model's name storage
  // (LogicalModel::set_name_storage); nullptr: a weight's name is a view of its packed tensor's.
  const CompanionName* renamed = nullptr;
  // Warnings about its weights' data (above); nullptr: none.
  const ConventionDataWarning* data_warning = nullptr;
  // Its own wording of the fix for a status it raises (ConventionBitsNotAllowed, ...), or nullptr
  // for the library's (status_hint(Status, Convention) asks this first). nullptr: none of its own.
  const char* (*hint)(Status s) = nullptr;
};

// The rows, one per file (plain_convention.cpp, mlx_convention.cpp, ...).
extern const ConventionDescriptor kPlainConvention;
extern const ConventionDescriptor kMlxConvention;
extern const ConventionDescriptor kOllamaConvention;
extern const ConventionDescriptor kUqffConvention;
extern const ConventionDescriptor kFp8Convention;
extern const ConventionDescriptor kMxfp4BlocksConvention;   // mxfp4_blocks_convention.cpp (gpt-oss)
extern const ConventionDescriptor kModelOptNvfp4Convention;  // modelopt_nvfp4_convention.cpp
extern const ConventionDescriptor kCompressedTensorsConvention;  // compressed_tensors_convention.cpp
extern const ConventionDescriptor kGptqConvention;           // gptq_convention.cpp
extern const ConventionDescriptor kAwqConvention;            // awq_convention.cpp
extern const ConventionDescriptor kBnbConvention;            // bnb_convention.cpp (bitsandbytes)

// Every row, in id order.
const ConventionDescriptor* const* convention_rows(uint32_t* count);
// The row of `c`; the plain row for an id past the table.
const ConventionDescriptor& convention_descriptor(Convention c);

// The header-metadata signals of one file as a bit per convention id (OR them over the files).
uint32_t convention_signal_bits(const TensorTable& table);
// The convention a model follows: the first row in rank order that its entry, its files' metadata
// signals (bits) or, with `config_quantized`, a config.json quantization section claims.
const ConventionDescriptor& resolve_convention(uint8_t entry, uint32_t signal_bits, bool config_quantized);

// The convention a model follows, in one precedence: (1) a row that claims the quantization method
// the config names (ConventionDescriptor::claims, first in table order); else (2)
// resolve_convention(); else, when that leaves the model plain and the config names no method,
// (3) a row that claims it by its tensor names. *claimed: (1) or (3) chose it, so the refusal of
// undecoded methods does not apply.
const ConventionDescriptor& choose_convention(uint8_t entry, uint32_t signal_bits, bool config_quantized,
                                              const LogicalModel& m, const MlxQuantConfig* config,
                                              bool* claimed);

// quant_methods.cpp: a model whose config.json quantization section names a quant_method (none
// is decoded yet), or, with `by_names` (nothing but the tensors says what the model is), whose
// tensor names are a known scheme's, fails with QuantizationUnsupported naming the method and a
// tensor. Ok otherwise.
Status refuse_undecoded_quantization(LogicalModel& m, const MlxQuantConfig* config, bool by_names);
// True when the model's tensor names show a quantization scheme (quant_methods.cpp's names:
// `weight_scale_inv`, `qweight` + `qzeros`, `_blocks` + `_scales`, `.weight_scale`, ...).
bool quantization_named_by_tensors(const LogicalModel& m);
// True for a quant_method transformers (or ModelOpt) knows.
bool quant_method_known(const char* method, size_t n);

// Parameter helpers shared by the descriptors (convention_table.cpp).
uint32_t put_parameter(QuantParameter* out, uint32_t cap, uint32_t n, const char* key, const char* text,
                       uint64_t number = 0);
// GPTQ and AWQ share `.qweight` + `.scales` names and differ in their shapes: the first `.qweight`
// (table order) with a `.scales` beside it, both of rank 2, their shapes into qs and ss. False
// when there is none (or a rank differs).
bool first_qweight_shapes(const LogicalModel& m, uint64_t qs[2], uint64_t ss[2]);
// GPTQ's and AWQ's packed tensor: `<m>.qweight` is the weight `<m>.weight` (their `renamed`).
extern const CompanionName kQweightRenamed;
// The FP8 scales shared by the fp8 row and ModelOpt's FP8 variants (fp8_convention.cpp): an
// Fp8Block weight's geometry into the spec, and its parameters after `method` (scaling, block,
// dtypes). Both do nothing for a weight of another format.
void fp8_scale_spec(const LogicalWeight& w, DequantSpec* s);
uint32_t fp8_scale_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap, const char* method);

// ModelOpt's FP8 quant_algos (modelopt_fp8.cpp), as vLLM's ModelOptFp8Config tells them apart.
enum class ModelOptFp8Algo : uint32_t {
  None = 0,      // not an FP8 algo (NVFP4, another, or none)
  Tensor = 1,    // "FP8": one F32 weight_scale a weight
  Channel = 2,   // "FP8_PER_CHANNEL_PER_TOKEN": weight_scale [out]
  Block128 = 3,  // "FP8_PB_WO": weight_scale [out / 128, 1, in / 128, 1]
};
// The FP8 algo `config` names (quant_algo compared without case, as vLLM upper-cases it).
ModelOptFp8Algo modelopt_fp8_algo(const MlxQuantConfig* config);

// mode, bits, group, scale_dtype of an MLX-layout weight (MLX, Ollama, UQFF Afq/Mxfp4).
uint32_t mlx_layout_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap, uint32_t n);

}  // namespace ws
