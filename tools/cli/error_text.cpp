// weightstream CLI — error messages (see error_text.h).
#include "error_text.h"

#include <string.h>

#include "weightstream/gguf.h"

namespace wscli {
namespace {

using ws::Status;

constexpr const char* kSchemaHint =
    "The header does not follow the safetensors schema: re-export the model with a safetensors "
    "writer.";
constexpr const char* kJsonHint =
    "The header is not valid JSON: the file is corrupt, or was written or edited by something "
    "other than a safetensors writer.";
constexpr const char* kOffsetsHint =
    "Tensors must be laid out back to back in data_offsets order: the writer is buggy or the "
    "header was tampered with; re-export the model.";
constexpr const char* kMetadataHint =
    "__metadata__ must be an object mapping strings to strings; re-export the model.";
constexpr const char* kIndexHint =
    "Regenerate model.safetensors.index.json (save_pretrained writes it), or fix it by hand.";
constexpr const char* kGgufHint =
    "ggml would reject this file: it is corrupt, or was written by a buggy converter.";
constexpr const char* kPastEndHint =
    "The value does not fit in the rest of the file: was the download interrupted? If not, the "
    "file is corrupt or crafted to exhaust memory.";
constexpr const char* kLimitHint =
    "The file exceeds a limit of this reader; real models stay far below it, so the file may be "
    "crafted to exhaust memory.";

struct HintEntry {
  const char* status;  // ws::status_name() spelling
  const char* hint;
};

// One row per status, keyed by the status's name (stable API, see status.h) rather than by the
// enumerator: the table can then carry rows for codes the library is adding without breaking the
// build against an older header, and a test checks both directions (every status has a row, every
// row names a status), so a new code cannot silently go without advice.
constexpr HintEntry kHints[] = {
    {"Ok", ""},
    {"ArenaExhausted", "Rerun with a larger arena (--arena-size)."},
    {"UsageError", "This is a bug in weightstream: please report it with the file."},
    {"Aborted", ""},
    {"UnknownFormat", "Is this really a safetensors or GGUF file?"},
    {"HeaderTooSmall", "The file is empty or cut off: was the download interrupted?"},
    {"HeaderTooLarge", "Is this really a safetensors file?"},
    {"InvalidHeaderLength",
     "The file is shorter than its header length says: was the download interrupted, or is this "
     "not a safetensors file?"},
    {"TruncatedData",
     "The file is shorter than its header says: was the download interrupted?"},
    {"TrailingBytes",
     "Bytes after the last tensor are how polyglot files (valid as two formats at once) hide a "
     "second payload: do not load this file unless you know where they come from."},
    {"TruncatedHeader", "The file ends inside its header: was the download interrupted?"},
    {"InvalidUtf8",
     "The header is corrupt, or the file was not written by a safetensors writer."},
    {"JsonSyntax", kJsonHint},
    {"JsonInvalidEscape", kJsonHint},
    {"JsonControlCharacter", kJsonHint},
    {"JsonLoneSurrogate", kJsonHint},
    {"JsonInvalidNumber", kJsonHint},
    {"JsonNumberOutOfRange", kJsonHint},
    {"JsonUnexpectedEnd",
     "The JSON header is cut off: the header length is wrong or the file is corrupt."},
    {"JsonTrailingCharacters",
     "Only spaces may pad the header: the header length is wrong or the file is corrupt."},
    {"NestingTooDeep",
     "No real safetensors header nests this deep: the file may be crafted to attack parsers."},
    {"HeaderNotObject", kSchemaHint},
    {"TensorEntryNotObject", kSchemaHint},
    {"MissingDtype", kSchemaHint},
    {"MissingShape", kSchemaHint},
    {"MissingDataOffsets", kSchemaHint},
    {"DuplicateField", kSchemaHint},
    {"InvalidDtype",
     "Dtype names are case-sensitive (F32, BF16, F8_E4M3, ...): re-export the model."},
    {"InvalidShape", kSchemaHint},
    {"InvalidDataOffsets", kSchemaHint},
    {"InvalidInteger",
     "Shapes and offsets must be plain integers (no sign, fraction, exponent or leading zero)."},
    {"DataOffsetsReversed", kOffsetsHint},
    {"DataOffsetGap", kOffsetsHint},
    {"DataOffsetOverlap", kOffsetsHint},
    {"ShapeOverflow",
     "No real tensor is this big: the file may be crafted to overflow size computations."},
    {"MisalignedSlice",
     "Sub-byte dtypes (F4, F6_*) need an element count whose bits fill whole bytes."},
    {"TensorSizeMismatch",
     "The shape and dtype do not match the bytes data_offsets reserve: re-export the model."},
    {"DuplicateTensorName",
     "Readers disagree on which copy wins (the reference keeps the last one silently): re-export "
     "the model so that every name appears once."},
    {"MetadataNotObject", kMetadataHint},
    {"MetadataValueNotString",
     "__metadata__ values must be strings: store numbers as \"1\" and structures as JSON text."},
    {"DuplicateMetadataKey",
     "Readers disagree on which value wins: re-export the model with unique metadata keys."},
    {"DuplicateMetadata", kMetadataHint},
    {"TooManyTensors", kLimitHint},
    {"NameTooLong", kLimitHint},
    {"RankTooLarge", kLimitHint},
    {"IndexNotObject", kIndexHint},
    {"IndexMissingWeightMap", kIndexHint},
    {"IndexInvalidWeightMap", kIndexHint},
    {"IndexInvalidTotalSize", kIndexHint},
    {"IndexDuplicateTensor", kIndexHint},
    {"IndexUnknownShard",
     "The shard is not named by the index: it belongs to another model, or the index is stale."},
    {"ShardTensorNotInIndex",
     "The index is stale or belongs to other shards: regenerate it from the shards."},
    {"ShardTensorWrongShard",
     "The index's weight_map points this tensor at another shard: regenerate the index, or check "
     "that the shards belong to this index."},
    {"ShardTensorMissing",
     "The shard does not hold this tensor: a shard was replaced, or the index comes from another "
     "save."},
    {"ShardTensorDuplicate",
     "Two shards hold the same tensor: remove the stale shard, or re-save the model."},
    {"IndexTotalSizeMismatch",
     "The index and the shards come from different saves: regenerate the index."},
    // Model conventions (FORMATS.md §2-§4).
    {"ConfigNotObject",
     "A config.json holds one JSON object of model settings: check that this is the model's "
     "config.json."},
    {"ConfigInvalidQuantization",
     "The quantization section must hold positive integers (group_size, bits) and per-layer "
     "objects or false: fix config.json or re-convert with mlx-lm."},
    {"ConfigUnknownMode", "MLX knows the modes affine, mxfp4, mxfp8 and nvfp4: fix config.json."},
    {"ManifestNotObject", "Is this really an Ollama manifest (models/manifests/...)?"},
    {"ManifestMissingLayers", "Is this really an Ollama manifest (models/manifests/...)?"},
    {"ManifestInvalidLayer", "The manifest is corrupt: pull the model again (ollama pull)."},
    {"ManifestInvalidDigest", "The manifest is corrupt: pull the model again (ollama pull)."},
    {"ManifestBlobSize", "The blob is incomplete or belongs to another model: pull the model again."},
    {"ManifestTensorInOtherLayer",
     "The manifest and its blobs come from different models: pull the model again."},
    {"ManifestLayerNotInBlob", "The layer's digest points at another blob: pull the model again."},
    {"ConventionMissingCompanion",
     "The quantized weight cannot be decoded without its scales/biases: a shard or blob is "
     "missing, or the converter is buggy."},
    {"ConventionOrphanCompanion",
     "Scales without their packed weight: a shard or blob is missing, or the converter is buggy."},
    {"ConventionCompanionShape",
     "The scales/biases do not fit the packed weight: the file is corrupt or the quantization "
     "config belongs to another model."},
    {"ConventionUnknownParams",
     "Give the model's config.json (quantization group_size and bits), or metadata stating them."},
    {"ConventionUnknownQuantType", "The blob is newer than this reader: update weightstream."},
    {"ConventionGroupNotDividing",
     "The group size must divide the row: the config belongs to another model, or the file is "
     "corrupt."},
    {"ConventionBitsNotAllowed",
     "MLX cannot produce this bits/group combination: check the quantization config."},
    {"ConventionTooManyWeights", "Give the logical model more storage for weights."},
    // UQFF (FORMATS.md §4).
    {"UqffPreV1",
     "A UQFF file from before version 1.0 (opaque numbered blobs): re-create it with a current "
     "mistral.rs (--write-uqff)."},
    {"UqffMissingVersion",
     "Give every file of the UQFF directory (the shards hold uqff.version.*); otherwise the "
     "file is not UQFF."},
    {"UqffVersionNotScalar",
     "The UQFF version tensors must be U32 scalars: the file is corrupt or was not written by "
     "mistral.rs."},
    {"UqffMajorVersion",
     "This reader reads UQFF 1.x: re-create the file with a mistral.rs that writes UQFF 1."},
    {"UqffMinorVersionTooNew",
     "The UQFF file is newer than this reader (1.2): update weightstream."},
    {"UqffDuplicateKey",
     "Two files of the UQFF directory hold the same tensor: a shard from another model or an "
     "old residual.safetensors is mixed in."},
    {"UqffFormatNotScalar", "A layer's .weight.format must be a U8 scalar: the file is corrupt."},
    {"UqffUnknownFormatTag",
     "The UQFF file uses a quantization type newer than this reader (tags 0-6): update "
     "weightstream."},
    {"UqffFormatTagMismatch",
     "The layer's format tag and its companion tensors disagree: the file is corrupt."},
    {"UqffUnexpectedCompanion",
     "The layer has a tensor its format does not have (see the name): the file is corrupt or "
     "mixes two writers."},
    {"UqffMissingCompanion",
     "The layer lacks a tensor its format needs (see the detail): a shard is missing or the "
     "file is corrupt."},
    {"UqffUnsupportedType",
     "Hqq and Fp8 UQFF layers are not decoded: re-create the UQFF with a GGUF, AFQ, F8Q8 or "
     "MXFP4 type."},
    {"UqffScalarNotFed",
     "Feed every UQFF scalar tensor's bytes (TensorBytes events) to the model before "
     "resolving: a usage error."},
    // Conventions as the upstream tools write them (issue #14).
    {"ConfigQuantizationIncomplete",
     "mlx-lm reads quantization.group_size and quantization.bits: give both, or re-convert with "
     "mlx-lm."},
    {"ConventionGroupNotInferable",
     "Ollama infers int4/int8 and the group from the shapes only for groups of 16, 32, 64 or 128 "
     "(and needs quant_type when both widths fit): state quant_type and group_size in the blob's "
     "metadata, or re-import the model."},
    {"UqffVersionMismatch",
     "The files of the UQFF directory state different versions: they come from different "
     "mistral.rs runs; re-create the directory in one run."},
    {"UqffNumBlocksMismatch",
     "An F8Q8 layer holds ceil(elements / 32) blocks of 33 bytes: the file is corrupt or was not "
     "written by mistral.rs."},
    // GGUF: ggml's own checks (FORMATS.md §5).
    {"GgufInvalidVersion", "No GGUF writer produces version 0: the file is corrupt."},
    {"GgufByteSwapped",
     "Big-endian GGUF is not supported: convert the file with gguf-py's gguf_convert_endian.py "
     "(order little), or re-convert the model on a little-endian machine."},
    {"GgufVersion1",
     "Re-convert the model with a current llama.cpp (convert_hf_to_gguf.py), which writes GGUF "
     "v3."},
    {"GgufVersionTooNew", "The file is newer than this reader: update weightstream."},
    {"GgufNegativeCount", kGgufHint},
    {"GgufCountTooLarge", kPastEndHint},
    {"GgufEmptyKey", kGgufHint},
    {"GgufDuplicateKey", kGgufHint},
    {"GgufInvalidValueType", kGgufHint},
    {"GgufStringTooLong", kPastEndHint},
    {"GgufArrayTooLong", kPastEndHint},
    {"GgufNestedArray", kGgufHint},
    {"GgufInvalidAlignmentType",
     "general.alignment must be a u32 power of two (32 by default): re-convert the model."},
    {"GgufInvalidAlignment",
     "general.alignment must be a u32 power of two (32 by default): re-convert the model."},
    {"GgufTensorNameTooLong", "ggml limits tensor names to 63 bytes: shorten it when converting."},
    {"GgufTooManyDims", "ggml tensors have at most 4 dimensions: re-convert the model."},
    {"GgufNegativeDim", kGgufHint},
    {"GgufInvalidType",
     "The tensor type is unknown to this reader: the file is corrupt, or newer than weightstream."},
    {"GgufRetiredType",
     "llama.cpp no longer loads this quantization type: re-quantize from the original weights "
     "with a current llama-quantize."},
    {"GgufBlockMisaligned",
     "A quantized row must hold whole blocks: the converter or the file is broken."},
    {"GgufInvalidTensorOffset",
     "ggml lays tensors out back to back, each padded to the alignment: the file is corrupt or "
     "was written by a buggy converter."},
    // GGUF NUL bytes (status.h): ggml would read the key or name shorter than it is.
    {"GgufNulInKey",
     "ggml reads keys up to the first NUL, so this file means something else to llama.cpp "
     "(general.alignment + NUL is its alignment key): it is crafted or corrupt; re-convert it."},
    {"GgufNulInTensorName",
     "ggml reads tensor names up to the first NUL, so llama.cpp would load this tensor under "
     "another name: the file is crafted or corrupt; re-convert it."},
    {"GgufNulInArchitecture",
     "llama.cpp reads the architecture up to the first NUL and would pick another model than the "
     "bytes say: the file is crafted or corrupt; re-convert it."},
    {"UnsupportedFormat", "weightstream cannot decode this tensor type; read it as raw bytes."},
    {"InvalidQuantParams",
     "The quantization parameters (bits, group size, scales) do not fit the tensor: check the "
     "model's quantization config."},
    {"InvalidBlockData",
     "ggml rejects rows with such a scale: the file is corrupt or was written by a buggy "
     "quantizer."},
    {"OutputTooSmall", "This is a bug in weightstream: please report it with the file."},
    {"ModelConfigInvalidFact",
     "A setting such as num_hidden_layers must be a plain non-negative number (model_type a "
     "string, text_config an object): fix the value at this offset."},
    // The model loader (ws::ModelLoader): files a model's documents name.
    {"FileMissing",
     "A file the model names is not there: check the download, or the names the loader asked for."},
    {"ShardNotGiven",
     "Pass every shard the index names (pick or drop them together with the index)."},
    {"UnsafeShardPath",
     "Shard names must be relative paths without \"..\": this index may be crafted to read other files."},
    {"ManifestBlobMissing",
     "Pull the model again (ollama pull), or say where its blobs are (the CLI's --blobs DIR, the JS blobs option)."},
    {"ManifestBlobNotSafetensors",
     "weightstream reads Ollama's safetensors tensor blobs from a manifest: give a GGUF blob to weightstream directly."},
    {"ModelFileNotSafetensors",
     "Sharded, UQFF and manifest models are made of safetensors files: give a GGUF file to weightstream on its own."},
    {"TooManyFiles",
     "The host set a limit on the files of one model (ModelLoaderOptions::max_files): raise it."},
    // Split GGUF models (llama.cpp's gguf-split): the split named is the one to look at.
    {"GgufSplitFirstNotZero",
     "The file named -00001-of-... is not the model's first split: the splits were renamed or mixed up; "
     "download the model's splits again."},
    {"GgufSplitCountMismatch",
     "Give every split of the model, and only those: the splits come from different split sets."},
    {"GgufSplitNoMismatch",
     "The split's file name and its split.no disagree: the splits were renamed or mixed up; download them again."},
    {"GgufSplitNoMissing",
     "gguf-split writes split.no in every split: this file is not a split of this model."},
    {"GgufSplitKeyType",
     "llama.cpp reads split.no and split.count as u16 and split.tensors.count as i32: re-split the model "
     "with llama.cpp's gguf-split."},
    {"GgufSplitDuplicateTensor",
     "llama.cpp refuses a tensor in two splits: the splits come from different split sets; download them again."},
    {"GgufSplitTensorCountMismatch",
     "A split is missing tensors or comes from another split set: download the model's splits again."},
    {"GgufSplitTensorCountMissing",
     "gguf-split writes split.tensors.count in the first split: re-split the model with llama.cpp's gguf-split."},
    {"GgufSplitNameMismatch",
     "llama.cpp finds the other splits from the first one's name: keep the names gguf-split wrote "
     "(<prefix>-00001-of-0000N.gguf ...)."},
    {"GgufSplitNotGguf",
     "Every split of a split GGUF model is a GGUF file: this one is something else; download it again."},
    {"GgufSplitMissing",
     "Put every split of the model beside the first (llama.cpp finds them by name), or pick all of them."},
    {"DigestMismatch",
     "The file is corrupt or is not the one its digest names: download it again (an Ollama blob: ollama pull)."},    {"QuantizationUnsupported",
     "weightstream does not decode this quantization yet: read as plain tensors it would give wrong numbers. "
     "Use the runtime it was made for, or take the tensors as stored (the JS package's dtype 'raw')."},
    {"QuantizationTensorsAbsent",
     "config.json says the model is quantized, but its tensors are not: the config belongs to other files "
     "(a dequantized copy, or a different download). Put the model's own config.json beside it."},
    {"QuantGroupIndexOutOfRange",
     "The weight's g_idx names a group its scales do not have: the checkpoint is damaged or its "
     "tensors come from different exports; download it again."},
    {"WriterTensorOutOfOrder",
     "The program writing the safetensors file gave a tensor's bytes out of the planned order: a bug in that program (weightstream convert's, if it was convert); the partial file is not a model."},
    {"WriterPastTensorEnd",
     "The program writing the safetensors file gave more bytes for a tensor than its header plans: a bug in that program; the partial file is not a model."},
    {"WriterIncomplete",
     "The safetensors file was left before every tensor's bytes were written: run the conversion again (complete files are kept)."},
    {"BnbQuantStateInvalid",
     "The quant_state tensor beside this bitsandbytes weight is not what bitsandbytes writes "
     "(QuantState.as_dict(packed=True)): the file is damaged or was edited; download the model again."},
    {"BnbQuantMapMismatch",
     "The quant_map beside this bitsandbytes weight is not the NF4 or FP4 table its quant_state names, "
     "which bitsandbytes' kernels decode with: the file was edited or written by another tool."},
    {"ConventionExcludedQuantized",
     "The model's quantization config says this module is not quantized (a modules_to_not_convert, ignored_layers, "
     "exclude_modules or ignore entry, no config_groups target, or GPTQModel's dynamic \"-:\" rule: the error names "
     "which), but its tensors are: the config belongs to another export. Put the model's own config.json beside it."},
};

const HintEntry* find_entry(Status s) {
  const char* name = ws::status_name(s);
  for (const HintEntry& e : kHints) {
    if (strcmp(e.status, name) == 0) return &e;
  }
  return nullptr;
}

std::string num(uint64_t v) { return std::to_string(v); }

uint32_t le32(const std::string& b, size_t at) {
  uint32_t v = 0;
  for (size_t k = 4; k-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[at + k]);
  return v;
}

// The numbers that explain a rejection, or "".
std::string details(const ErrorFacts& f) {
  switch (f.code) {
    case Status::TruncatedHeader:
      if (f.input_size && f.input_size_exact) return "the file is " + num(*f.input_size) + " bytes";
      return "";
    case Status::HeaderTooSmall:
      if (f.input_size)
        return "the file is " + num(*f.input_size) +
               " bytes; a safetensors file starts with an 8-byte header length";
      return "";
    case Status::HeaderTooLarge:
      if (f.declared_header)
        return "header says " + num(*f.declared_header) + " bytes; the limit is " +
               num(f.header_limit);
      return "";
    case Status::InvalidHeaderLength:
      if (f.declared_header && f.input_size)
        return "header says " + num(*f.declared_header) + " bytes, ending at byte " +
               num(*f.declared_header + 8) + "; the file is " + num(*f.input_size) + " bytes";
      return "";
    case Status::TruncatedData:
      if (f.data_end && f.input_size)
        return (*f.data_end == UINT64_MAX ? std::string("the tensors end past byte 2^64")
                                          : "the tensors end at byte " + num(*f.data_end)) +
               "; the file is " +
               num(*f.input_size) + " bytes";
      return "";
    case Status::TrailingBytes:
      // The offset is where the input should have ended (for GGUF after the last padding).
      if (f.input_size && f.input_size_exact && *f.input_size > f.offset)
        return num(*f.input_size - f.offset) + " bytes follow the end of the data at byte " +
               num(f.offset);
      return "the data ends at byte " + num(f.offset);
    case Status::ArenaExhausted:
      if (f.arena_needed)
        return num(f.arena_needed) + " bytes needed; the arena has " + num(f.arena_size);
      return "";
    case Status::ShardTensorWrongShard:
    case Status::ShardTensorMissing:
    case Status::ShardTensorDuplicate:
      if (!f.index_shard.empty()) return "the index places it in " + f.index_shard;
      return "";
    case Status::GgufByteSwapped:
    case Status::GgufVersionTooNew:
      if (f.prefix.size() >= 8) {
        const uint32_t v = le32(f.prefix, 4);
        if (f.code == Status::GgufVersionTooNew) return "version " + num(v);
        return "the version field reads " + num(v) + ", which is version " +
               num(__builtin_bswap32(v)) + " written big-endian";
      }
      return "";
    case Status::GgufInvalidType:
      if (f.ggml_type_id) return "type id " + num(*f.ggml_type_id);
      return "";
    case Status::GgufRetiredType:
      if (f.ggml_type_id) {
        std::string d = "type id " + num(*f.ggml_type_id);
        if (!f.ggml_type_name.empty()) d += " was " + f.ggml_type_name;
        // BitNet's fork reuses retired ids; its files are recognised by their architecture.
        if (!f.bitnet_type_name.empty())
          d += "; BitNet's llama.cpp fork uses it for " + f.bitnet_type_name +
               ", but general.architecture does not name bitnet";
        return d;
      }
      return "";
    case Status::GgufInvalidTensorOffset:
      if (f.tensor_offset_found && f.tensor_offset_expected) {
        std::string d = "expected " + num(*f.tensor_offset_expected) + ", found " +
                        num(*f.tensor_offset_found);
        if (*f.tensor_offset_expected == 0)
          d += ": the first tensor starts the data section";
        else if (f.gguf_alignment)
          d += ": the end of the tensor before it, rounded up to a multiple of " +
               num(f.gguf_alignment);
        return d;
      }
      return "";
    case Status::GgufDuplicateKey:
      if (!f.gguf_key.empty()) {
        std::string d = "key \"" + f.gguf_key + "\"";
        if (f.gguf_key_other) d += ", also at byte " + num(*f.gguf_key_other);
        return d;
      }
      return "";
    case Status::ConventionGroupNotInferable:
      if (f.found && f.expected)
        return num(*f.found) + " words and " + num(*f.expected) + " scales per row";
      return "";
    case Status::UqffVersionMismatch:
      if (f.found && f.expected)
        return "this copy says " + num(*f.found) + "; the first copy says " + num(*f.expected);
      return "";
    case Status::UqffNumBlocksMismatch:
      if (f.found && f.expected)
        return "num_blocks is " + num(*f.found) + "; the shape's values take " + num(*f.expected);
      return "";
    case Status::DigestMismatch:
      if (!f.digest_expected.empty())
        return "its SHA-256 is " + (f.digest_actual.empty() ? std::string("unknown (the file was not read in full)") : f.digest_actual) +
               ", expected " + f.digest_expected;
      return "";
    case Status::GgufSplitFirstNotZero:
      if (f.found) return "its split.no is " + num(*f.found);
      return "";
    case Status::GgufSplitNoMismatch:
      if (f.found && f.expected) return "its split.no is " + num(*f.found) + "; its place in the model is " + num(*f.expected);
      return "";
    case Status::GgufSplitCountMismatch:
    case Status::GgufSplitTensorCountMismatch:
      if (f.found && f.expected) return "found " + num(*f.found) + ", expected " + num(*f.expected);
      return "";
    case Status::GgufSplitKeyType:
      if (f.found && f.expected)
        return std::string("a ") + ws::gguf_type_name(ws::GgufType(*f.found)) + ", not a " +
               ws::gguf_type_name(ws::GgufType(*f.expected));
      return "";
    case Status::GgufSplitNameMismatch:
      if (!f.detail.empty()) return "its keys make it a split whose name ends in " + f.detail;
      return "";
    case Status::IndexTotalSizeMismatch:
      if (f.index_total_size && f.tensors_total_size)
        return "the index says " + num(*f.index_total_size) + " bytes; the tensors hold " +
               num(*f.tensors_total_size);
      return "";
    default:
      return "";
  }
}

bool starts_with(const std::string& s, const char* p) { return s.compare(0, strlen(p), p) == 0; }

}  // namespace

uint64_t data_end_of(uint64_t data_start, uint64_t data_size) {
  uint64_t end;
  return __builtin_add_overflow(data_start, data_size, &end) ? UINT64_MAX : end;
}

const char* fix_hint(Status s) {
  const HintEntry* e = find_entry(s);
  return e ? e->hint : "";
}

bool has_hint_entry(Status s) { return find_entry(s) != nullptr; }

size_t hint_table_size() { return sizeof kHints / sizeof kHints[0]; }
const char* hint_table_status(size_t i) { return i < hint_table_size() ? kHints[i].status : nullptr; }

std::string content_guess(const std::string& prefix) {
  // Things people mistake for a safetensors file, by their first bytes.
  if (starts_with(prefix, "version "))
    return "This looks like a Git LFS pointer, not the model: run `git lfs pull` in the "
           "repository.";
  if (starts_with(prefix, "<"))
    return "This looks like an HTML or XML page: did the download save an error page instead of "
           "the model?";
  if (starts_with(prefix, "{"))
    return "This looks like JSON, not a safetensors file (an index must be named *.index.json).";
  if (starts_with(prefix, "PK\x03\x04"))
    return "This is a zip archive (a PyTorch .bin/.pt checkpoint?), not a safetensors file.";
  if (prefix.size() >= 2 && static_cast<unsigned char>(prefix[0]) == 0x80 &&
      prefix[1] >= 2 && prefix[1] <= 5)
    return "This looks like a Python pickle (a PyTorch checkpoint?), not a safetensors file.";
  return "";
}

std::string error_message(const ErrorFacts& f) {
  std::string msg = ws::status_description(f.code);
  const std::string d = details(f);
  if (!d.empty()) msg += " (" + d + ")";
  msg += ".";

  std::string hint;
  const bool framing = f.code == Status::UnknownFormat || f.code == Status::HeaderTooLarge ||
                       f.code == Status::InvalidHeaderLength;
  if (framing) hint = content_guess(f.prefix);
  if (hint.empty() && f.code == Status::ArenaExhausted && f.arena_needed)
    hint = "Rerun with --arena-size " + num(f.arena_needed) + ".";
  if (hint.empty()) hint = fix_hint(f.code);
  if (!hint.empty()) msg += " " + hint;
  return msg;
}

}  // namespace wscli
