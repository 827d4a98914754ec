// weightstream — a fix for every status (status.h status_hint): the one table the CLI's messages
// and the JS package's errors end with (issue #25: hints once, in the library). A convention's own
// wording for a status it raises (ConventionBitsNotAllowed from GPTQ says GPTQ's bits) is its
// descriptor's (lib/src/conventions/, status_hint(Status, Convention) in conventions.h).
//
// Its own file: a program that never asks for a hint (the parser-only firmware image) links none
// of these strings.
#include <string.h>

#include "weightstream/status.h"

namespace ws {
namespace {

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

struct HintRow {
  Status status;
  const char* hint;
};

// One row per status (tests/unit: every status has exactly one).
constexpr HintRow kHints[] = {
    {Status::Ok, ""},
    {Status::ArenaExhausted, "Retry with a larger arena (the CLI's --arena-size, the JS arenaSize option)."},
    {Status::UsageError, "This is a bug in weightstream: please report it with the file."},
    {Status::Aborted, ""},
    {Status::UnknownFormat, "Is this really a safetensors or GGUF file?"},
    {Status::HeaderTooSmall, "The file is empty or cut off: was the download interrupted?"},
    {Status::HeaderTooLarge, "Is this really a safetensors file?"},
    {Status::InvalidHeaderLength,
     "The file is shorter than its header length says: was the download interrupted, or is this "
     "not a safetensors file?"},
    {Status::TruncatedData,
     "The file is shorter than its header says: was the download interrupted?"},
    {Status::TrailingBytes,
     "Bytes after the last tensor are how polyglot files (valid as two formats at once) hide a "
     "second payload: do not load this file unless you know where they come from."},
    {Status::TruncatedHeader, "The file ends inside its header: was the download interrupted?"},
    {Status::InvalidUtf8,
     "The header is corrupt, or the file was not written by a safetensors writer."},
    {Status::JsonSyntax, kJsonHint},
    {Status::JsonInvalidEscape, kJsonHint},
    {Status::JsonControlCharacter, kJsonHint},
    {Status::JsonLoneSurrogate, kJsonHint},
    {Status::JsonInvalidNumber, kJsonHint},
    {Status::JsonNumberOutOfRange, kJsonHint},
    {Status::JsonUnexpectedEnd,
     "The JSON header is cut off: the header length is wrong or the file is corrupt."},
    {Status::JsonTrailingCharacters,
     "Only spaces may pad the header: the header length is wrong or the file is corrupt."},
    {Status::NestingTooDeep,
     "No real safetensors header nests this deep: the file may be crafted to attack parsers."},
    {Status::HeaderNotObject, kSchemaHint},
    {Status::TensorEntryNotObject, kSchemaHint},
    {Status::MissingDtype, kSchemaHint},
    {Status::MissingShape, kSchemaHint},
    {Status::MissingDataOffsets, kSchemaHint},
    {Status::DuplicateField, kSchemaHint},
    {Status::InvalidDtype,
     "Dtype names are case-sensitive (F32, BF16, F8_E4M3, ...): re-export the model."},
    {Status::InvalidShape, kSchemaHint},
    {Status::InvalidDataOffsets, kSchemaHint},
    {Status::InvalidInteger,
     "Shapes and offsets must be plain integers (no sign, fraction, exponent or leading zero)."},
    {Status::DataOffsetsReversed, kOffsetsHint},
    {Status::DataOffsetGap, kOffsetsHint},
    {Status::DataOffsetOverlap, kOffsetsHint},
    {Status::ShapeOverflow,
     "No real tensor is this big: the file may be crafted to overflow size computations."},
    {Status::MisalignedSlice,
     "Sub-byte dtypes (F4, F6_*) need an element count whose bits fill whole bytes."},
    {Status::TensorSizeMismatch,
     "The shape and dtype do not match the bytes data_offsets reserve: re-export the model."},
    {Status::DuplicateTensorName,
     "Readers disagree on which copy wins (the reference keeps the last one silently): re-export "
     "the model so that every name appears once."},
    {Status::MetadataNotObject, kMetadataHint},
    {Status::MetadataValueNotString,
     "__metadata__ values must be strings: store numbers as \"1\" and structures as JSON text."},
    {Status::DuplicateMetadataKey,
     "Readers disagree on which value wins: re-export the model with unique metadata keys."},
    {Status::DuplicateMetadata, kMetadataHint},
    {Status::TooManyTensors, kLimitHint},
    {Status::NameTooLong, kLimitHint},
    {Status::RankTooLarge, kLimitHint},
    {Status::IndexNotObject, kIndexHint},
    {Status::IndexMissingWeightMap, kIndexHint},
    {Status::IndexInvalidWeightMap, kIndexHint},
    {Status::IndexInvalidTotalSize, kIndexHint},
    {Status::IndexDuplicateTensor, kIndexHint},
    {Status::IndexUnknownShard,
     "The shard is not named by the index: it belongs to another model, or the index is stale."},
    {Status::ShardTensorNotInIndex,
     "The index is stale or belongs to other shards: regenerate it from the shards."},
    {Status::ShardTensorWrongShard,
     "The index's weight_map points this tensor at another shard: regenerate the index, or check "
     "that the shards belong to this index."},
    {Status::ShardTensorMissing,
     "The shard does not hold this tensor: a shard was replaced, or the index comes from another "
     "save."},
    {Status::ShardTensorDuplicate,
     "Two shards hold the same tensor: remove the stale shard, or re-save the model."},
    {Status::IndexTotalSizeMismatch,
     "The index and the shards come from different saves: regenerate the index."},
    // Model conventions (FORMATS.md §2-§4).
    {Status::ConfigNotObject,
     "A config.json holds one JSON object of model settings: check that this is the model's "
     "config.json."},
    {Status::ConfigInvalidQuantization,
     "The quantization section must hold positive integers (group_size, bits) and per-layer "
     "objects or false: fix config.json or re-convert with mlx-lm."},
    {Status::ConfigUnknownMode, "MLX knows the modes affine, mxfp4, mxfp8 and nvfp4: fix config.json."},
    {Status::ManifestNotObject, "Is this really an Ollama manifest (models/manifests/...)?"},
    {Status::ManifestMissingLayers, "Is this really an Ollama manifest (models/manifests/...)?"},
    {Status::ManifestInvalidLayer, "The manifest is corrupt: pull the model again (ollama pull)."},
    {Status::ManifestInvalidDigest, "The manifest is corrupt: pull the model again (ollama pull)."},
    {Status::ManifestBlobSize, "The blob is incomplete or belongs to another model: pull the model again."},
    {Status::ManifestTensorInOtherLayer,
     "The manifest and its blobs come from different models: pull the model again."},
    {Status::ManifestLayerNotInBlob, "The layer's digest points at another blob: pull the model again."},
    {Status::ConventionMissingCompanion,
     "The quantized weight cannot be decoded without its scales/biases: a shard or blob is "
     "missing, or the converter is buggy."},
    {Status::ConventionOrphanCompanion,
     "Scales without their packed weight: a shard or blob is missing, or the converter is buggy."},
    {Status::ConventionCompanionShape,
     "The scales/biases do not fit the packed weight: the file is corrupt or the quantization "
     "config belongs to another model."},
    {Status::ConventionUnknownParams,
     "Give the model's quantization config (config.json, or the file its quantizer writes beside "
     "it), or metadata stating the parameters."},
    {Status::ConventionUnknownQuantType, "The blob is newer than this reader: update weightstream."},
    {Status::ConventionGroupNotDividing,
     "The group size must divide the row: the config belongs to another model, or the file is "
     "corrupt."},
    // Convention-specific wording (MLX's, GPTQ's, ...) is the convention descriptor's
    // (status_hint(Status, Convention), conventions.h); this is the text without one.
    {Status::ConventionBitsNotAllowed,
     "The quantization states bits or a group size its method does not produce: check the "
     "quantization config."},
    {Status::ConventionTooManyWeights, "Give the logical model more storage for weights."},
    // UQFF (FORMATS.md §4).
    {Status::UqffPreV1,
     "A UQFF file from before version 1.0 (opaque numbered blobs): re-create it with a current "
     "mistral.rs (--write-uqff)."},
    {Status::UqffMissingVersion,
     "Give every file of the UQFF directory (the shards hold uqff.version.*); otherwise the "
     "file is not UQFF."},
    {Status::UqffVersionNotScalar,
     "The UQFF version tensors must be U32 scalars: the file is corrupt or was not written by "
     "mistral.rs."},
    {Status::UqffMajorVersion,
     "This reader reads UQFF 1.x: re-create the file with a mistral.rs that writes UQFF 1."},
    {Status::UqffMinorVersionTooNew,
     "The UQFF file is newer than this reader (1.2): update weightstream."},
    {Status::UqffDuplicateKey,
     "Two files of the UQFF directory hold the same tensor: a shard from another model or an "
     "old residual.safetensors is mixed in."},
    {Status::UqffFormatNotScalar, "A layer's .weight.format must be a U8 scalar: the file is corrupt."},
    {Status::UqffUnknownFormatTag,
     "The UQFF file uses a quantization type newer than this reader (tags 0-6): update "
     "weightstream."},
    {Status::UqffFormatTagMismatch,
     "The layer's format tag and its companion tensors disagree: the file is corrupt."},
    {Status::UqffUnexpectedCompanion,
     "The layer has a tensor its format does not have (see the name): the file is corrupt or "
     "mixes two writers."},
    {Status::UqffMissingCompanion,
     "The layer lacks a tensor its format needs (see the detail): a shard is missing or the "
     "file is corrupt."},
    {Status::UqffUnsupportedType,
     "Hqq and Fp8 UQFF layers are not decoded: re-create the UQFF with a GGUF, AFQ, F8Q8 or "
     "MXFP4 type."},
    {Status::UqffScalarNotFed,
     "Feed every UQFF scalar tensor's bytes (TensorBytes events) to the model before "
     "resolving: a usage error."},
    // Conventions as the upstream tools write them (issue #14).
    {Status::ConfigQuantizationIncomplete,
     "mlx-lm reads quantization.group_size and quantization.bits: give both, or re-convert with "
     "mlx-lm."},
    {Status::ConventionGroupNotInferable,
     "Ollama infers int4/int8 and the group from the shapes only for groups of 16, 32, 64 or 128 "
     "(and needs quant_type when both widths fit): state quant_type and group_size in the blob's "
     "metadata, or re-import the model."},
    {Status::UqffVersionMismatch,
     "The files of the UQFF directory state different versions: they come from different "
     "mistral.rs runs; re-create the directory in one run."},
    {Status::UqffNumBlocksMismatch,
     "An F8Q8 layer holds ceil(elements / 32) blocks of 33 bytes: the file is corrupt or was not "
     "written by mistral.rs."},
    // GGUF: ggml's own checks (FORMATS.md §5).
    {Status::GgufInvalidVersion, "No GGUF writer produces version 0: the file is corrupt."},
    {Status::GgufByteSwapped,
     "Big-endian GGUF is not supported: convert the file with gguf-py's gguf_convert_endian.py "
     "(order little), or re-convert the model on a little-endian machine."},
    {Status::GgufVersion1,
     "Re-convert the model with a current llama.cpp (convert_hf_to_gguf.py), which writes GGUF "
     "v3."},
    {Status::GgufVersionTooNew, "The file is newer than this reader: update weightstream."},
    {Status::GgufNegativeCount, kGgufHint},
    {Status::GgufCountTooLarge, kPastEndHint},
    {Status::GgufEmptyKey, kGgufHint},
    {Status::GgufDuplicateKey, kGgufHint},
    {Status::GgufInvalidValueType, kGgufHint},
    {Status::GgufStringTooLong, kPastEndHint},
    {Status::GgufArrayTooLong, kPastEndHint},
    {Status::GgufNestedArray, kGgufHint},
    {Status::GgufInvalidAlignmentType,
     "general.alignment must be a u32 power of two (32 by default): re-convert the model."},
    {Status::GgufInvalidAlignment,
     "general.alignment must be a u32 power of two (32 by default): re-convert the model."},
    {Status::GgufTensorNameTooLong, "ggml limits tensor names to 63 bytes: shorten it when converting."},
    {Status::GgufTooManyDims, "ggml tensors have at most 4 dimensions: re-convert the model."},
    {Status::GgufNegativeDim, kGgufHint},
    {Status::GgufInvalidType,
     "The tensor type is unknown to this reader: the file is corrupt, or newer than weightstream."},
    {Status::GgufRetiredType,
     "llama.cpp no longer loads this quantization type: re-quantize from the original weights "
     "with a current llama-quantize."},
    {Status::GgufBlockMisaligned,
     "A quantized row must hold whole blocks: the converter or the file is broken."},
    {Status::GgufInvalidTensorOffset,
     "ggml lays tensors out back to back, each padded to the alignment: the file is corrupt or "
     "was written by a buggy converter."},
    // GGUF NUL bytes (status.h): ggml would read the key or name shorter than it is.
    {Status::GgufNulInKey,
     "ggml reads keys up to the first NUL, so this file means something else to llama.cpp "
     "(general.alignment + NUL is its alignment key): it is crafted or corrupt; re-convert it."},
    {Status::GgufNulInTensorName,
     "ggml reads tensor names up to the first NUL, so llama.cpp would load this tensor under "
     "another name: the file is crafted or corrupt; re-convert it."},
    {Status::GgufNulInArchitecture,
     "llama.cpp reads the architecture up to the first NUL and would pick another model than the "
     "bytes say: the file is crafted or corrupt; re-convert it."},
    {Status::UnsupportedFormat, "weightstream cannot decode this tensor type; read it as raw bytes."},
    {Status::InvalidQuantParams,
     "The quantization parameters (bits, group size, scales) do not fit the tensor: check the "
     "model's quantization config."},
    {Status::InvalidBlockData,
     "ggml rejects rows with such a scale: the file is corrupt or was written by a buggy "
     "quantizer."},
    {Status::OutputTooSmall, "This is a bug in weightstream: please report it with the file."},
    {Status::ModelConfigInvalidFact,
     "A setting such as num_hidden_layers must be a plain non-negative number (model_type a "
     "string, text_config an object): fix the value at this offset."},
    // The model loader (ws::ModelLoader): files a model's documents name.
    {Status::FileMissing,
     "A file the model names is not there: check the download, or the names the loader asked for."},
    {Status::ShardNotGiven,
     "Pass every shard the index names (pick or drop them together with the index)."},
    {Status::UnsafeShardPath,
     "Shard names must be relative paths without \"..\": this index may be crafted to read other files."},
    {Status::ManifestBlobMissing,
     "Pull the model again (ollama pull), or say where its blobs are (the CLI's --blobs DIR, the JS blobs option)."},
    {Status::ManifestBlobNotSafetensors,
     "weightstream reads Ollama's safetensors tensor blobs from a manifest: give a GGUF blob to weightstream directly."},
    {Status::ModelFileNotSafetensors,
     "Sharded, UQFF and manifest models are made of safetensors files: give a GGUF file to weightstream on its own."},
    {Status::TooManyFiles,
     "The host set a limit on the files of one model (ModelLoaderOptions::max_files): raise it."},
    // Split GGUF models (llama.cpp's gguf-split): the split named is the one to look at.
    {Status::GgufSplitFirstNotZero,
     "The file named -00001-of-... is not the model's first split: the splits were renamed or mixed up; "
     "download the model's splits again."},
    {Status::GgufSplitCountMismatch,
     "Give every split of the model, and only those: the splits come from different split sets."},
    {Status::GgufSplitNoMismatch,
     "The split's file name and its split.no disagree: the splits were renamed or mixed up; download them again."},
    {Status::GgufSplitNoMissing,
     "gguf-split writes split.no in every split: this file is not a split of this model."},
    {Status::GgufSplitKeyType,
     "llama.cpp reads split.no and split.count as u16 and split.tensors.count as i32: re-split the model "
     "with llama.cpp's gguf-split."},
    {Status::GgufSplitDuplicateTensor,
     "llama.cpp refuses a tensor in two splits: the splits come from different split sets; download them again."},
    {Status::GgufSplitTensorCountMismatch,
     "A split is missing tensors or comes from another split set: download the model's splits again."},
    {Status::GgufSplitTensorCountMissing,
     "gguf-split writes split.tensors.count in the first split: re-split the model with llama.cpp's gguf-split."},
    {Status::GgufSplitNameMismatch,
     "llama.cpp finds the other splits from the first one's name: keep the names gguf-split wrote "
     "(<prefix>-00001-of-0000N.gguf ...)."},
    {Status::GgufSplitNotGguf,
     "Every split of a split GGUF model is a GGUF file: this one is something else; download it again."},
    {Status::GgufSplitMissing,
     "Put every split of the model beside the first (llama.cpp finds them by name), or pick all of them."},
    {Status::DigestMismatch,
     "The file is corrupt or is not the one its digest names: download it again (an Ollama blob: ollama pull)."},
    {Status::QuantizationUnsupported,
     "weightstream does not decode this quantization yet: read as plain tensors it would give wrong numbers. "
     "Use the runtime it was made for, or take the tensors as stored (the JS package's dtype 'raw')."},
    {Status::QuantizationTensorsAbsent,
     "config.json says the model is quantized, but its tensors are not: the config belongs to other files "
     "(a dequantized copy, or a different download). Put the model's own config.json beside it."},
    {Status::QuantGroupIndexOutOfRange,
     "The weight's g_idx names a group its scales do not have: the checkpoint is damaged or its "
     "tensors come from different exports; download it again."},
    {Status::WriterTensorOutOfOrder,
     "The program writing the safetensors file gave a tensor's bytes out of the planned order: a bug in that program (weightstream convert's, if it was convert); the partial file is not a model."},
    {Status::WriterPastTensorEnd,
     "The program writing the safetensors file gave more bytes for a tensor than its header plans: a bug in that program; the partial file is not a model."},
    {Status::WriterIncomplete,
     "The safetensors file was left before every tensor's bytes were written: run the conversion again (complete files are kept)."},
    {Status::BnbQuantStateInvalid,
     "The quant_state tensor beside this bitsandbytes weight is not what bitsandbytes writes "
     "(QuantState.as_dict(packed=True)): the file is damaged or was edited; download the model again."},
    {Status::BnbQuantMapMismatch,
     "The quant_map beside this bitsandbytes weight is not the NF4 or FP4 table its quant_state names, "
     "which bitsandbytes' kernels decode with: the file was edited or written by another tool."},
    {Status::ConventionExcludedQuantized,
     "The model's quantization config says this module is not quantized (a modules_to_not_convert, ignored_layers, "
     "exclude_modules or ignore entry, no config_groups target, or GPTQModel's dynamic \"-:\" rule: the error names "
     "which), but its tensors are: the config belongs to another export. Put the model's own config.json beside it."},
};

}  // namespace

const char* status_hint(Status s) {
  for (const HintRow& r : kHints)
    if (r.status == s) return r.hint;
  return "";
}

uint32_t status_hint_rows() { return uint32_t(sizeof kHints / sizeof kHints[0]); }
Status status_hint_row(uint32_t i) { return i < status_hint_rows() ? kHints[i].status : Status::Count_; }

}  // namespace ws
