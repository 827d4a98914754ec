// weightstream — status codes.
//
// One enum of precise reasons. Every rejection of an input names exactly one of these, together
// with the absolute byte offset where it was detected and, where one is concerned, the tensor.
// Codes are stable API: their spelling is what the CLI, the JSON output and the JS bindings print.
#pragma once

#include <stdint.h>

namespace ws {

// X(name, description). Descriptions are one sentence; tools append offset and tensor.
#define WS_STATUS_LIST(X)                                                                          \
  X(Ok, "no error")                                                                                \
  /* API use */                                                                                    \
  X(ArenaExhausted, "the arena given to the reader is too small for this header")                 \
  X(UsageError, "the reader API was called out of order")                                         \
  X(Aborted, "the caller aborted the stream")                                                      \
  /* framing */                                                                                    \
  X(UnknownFormat, "input is neither safetensors nor GGUF")                                        \
  X(HeaderTooSmall, "input ended before the 8-byte header length")                                \
  X(HeaderTooLarge, "declared header length exceeds the header limit")                            \
  X(InvalidHeaderLength, "declared header length runs past the end of the input")                 \
  X(TruncatedData, "input ended inside tensor data")                                               \
  X(TrailingBytes, "bytes follow the last tensor's data")                                          \
  X(TruncatedHeader, "input ended inside the header")                                              \
  /* JSON */                                                                                       \
  X(InvalidUtf8, "header contains bytes that are not valid UTF-8")                                \
  X(JsonSyntax, "unexpected character in the JSON header")                                         \
  X(JsonInvalidEscape, "invalid escape sequence in a JSON string")                                 \
  X(JsonControlCharacter, "raw control character inside a JSON string")                          \
  X(JsonLoneSurrogate, "\\u escape is an unpaired UTF-16 surrogate")                              \
  X(JsonInvalidNumber, "malformed JSON number")                                                    \
  X(JsonNumberOutOfRange, "JSON number beyond the range of a 64-bit float (serde_json rejects it)") \
  X(JsonUnexpectedEnd, "the JSON header ended before the document was complete")                  \
  X(JsonTrailingCharacters, "non-whitespace bytes after the end of the JSON header")              \
  X(NestingTooDeep, "JSON nesting is deeper than the nesting limit")                              \
  /* safetensors schema */                                                                         \
  X(HeaderNotObject, "the JSON header is not an object")                                           \
  X(TensorEntryNotObject, "a tensor entry is not a JSON object")                                   \
  X(MissingDtype, "tensor entry has no \"dtype\"")                                                 \
  X(MissingShape, "tensor entry has no \"shape\"")                                                 \
  X(MissingDataOffsets, "tensor entry has no \"data_offsets\"")                                    \
  X(DuplicateField, "a field appears twice in one tensor entry")                                   \
  X(InvalidDtype, "dtype is not one of the safetensors dtype names")                              \
  X(InvalidShape, "shape is not an array of integers")                                             \
  X(InvalidDataOffsets, "data_offsets is not an array of exactly two integers")                    \
  X(InvalidInteger, "value is not a plain non-negative integer that fits in 64 bits")             \
  X(DataOffsetsReversed, "data_offsets end is before its begin")                                   \
  X(DataOffsetGap, "tensor data does not start where the previous tensor ends (hole)")           \
  X(DataOffsetOverlap, "tensor data overlaps the previous tensor")                                 \
  X(ShapeOverflow, "element count or byte size overflows 64 bits")                                \
  X(MisalignedSlice, "element count times dtype bits is not a whole number of bytes")             \
  X(TensorSizeMismatch, "data_offsets span differs from element count times dtype size")          \
  X(DuplicateTensorName, "two tensors have the same name")                                         \
  X(MetadataNotObject, "__metadata__ is neither an object nor null")                               \
  X(MetadataValueNotString, "a __metadata__ value is not a string")                                \
  X(DuplicateMetadataKey, "a __metadata__ key appears twice")                                      \
  X(DuplicateMetadata, "__metadata__ appears twice")                                               \
  X(TooManyTensors, "more tensors than the tensor-count limit")                                    \
  X(NameTooLong, "tensor name is longer than the name-length limit")                               \
  X(RankTooLarge, "tensor rank is larger than the rank limit")                                     \
  /* sharded models (model.safetensors.index.json) */                                              \
  X(IndexNotObject, "index JSON is not an object")                                                 \
  X(IndexMissingWeightMap, "index has no \"weight_map\" object")                                   \
  X(IndexInvalidWeightMap, "index \"weight_map\" is not an object of tensor name to shard file")  \
  X(IndexInvalidTotalSize, "index \"metadata.total_size\" is not a non-negative integer")         \
  X(IndexDuplicateTensor, "index lists a tensor twice")                                            \
  X(IndexUnknownShard, "shard file is not named by the index")                                     \
  X(ShardTensorNotInIndex, "shard holds a tensor the index does not list")                        \
  X(ShardTensorWrongShard, "shard holds a tensor the index places in another shard")              \
  X(ShardTensorMissing, "index lists a tensor that its shard does not hold")                      \
  X(ShardTensorDuplicate, "a tensor appears in more than one shard")                               \
  X(IndexTotalSizeMismatch, "index total_size differs from the sum of the tensors' byte sizes")    \
  /* model conventions: MLX config.json, Ollama manifests, logical weights */                    \
  X(ConfigNotObject, "config.json is not a JSON object (MLX quantization or model facts)")                                           \
  X(ConfigInvalidQuantization, "a quantization entry is not an object, false, or a positive integer where one is needed") \
  X(ConfigUnknownMode, "quantization mode is not affine, mxfp4, mxfp8 or nvfp4")                   \
  X(ManifestNotObject, "Ollama manifest is not a JSON object")                                     \
  X(ManifestMissingLayers, "Ollama manifest has no \"layers\" array")                              \
  X(ManifestInvalidLayer, "a manifest layer is not an object of mediaType, digest, size and name") \
  X(ManifestInvalidDigest, "a manifest digest is not sha256: followed by 64 lowercase hex digits") \
  X(ManifestBlobSize, "an Ollama blob's size differs from its manifest layer's size")          \
  X(ManifestTensorInOtherLayer, "a tensor of an Ollama blob is covered by another manifest layer's name") \
  X(ManifestLayerNotInBlob, "an Ollama manifest layer's name covers no tensor of its blob")       \
  X(ConventionMissingCompanion, "a packed weight lacks a companion tensor (scales, biases)")        \
  X(ConventionOrphanCompanion, "a companion tensor has no packed weight beside it")                \
  X(ConventionCompanionShape, "a companion tensor's dtype or shape does not fit its packed weight") \
  X(ConventionUnknownParams, "quantization parameters are neither stated nor derivable from shapes") \
  X(ConventionUnknownQuantType, "Ollama quant_type is not int4, int8, nvfp4, mxfp4, mxfp8 or an alias") \
  X(ConventionGroupNotDividing, "the group size does not divide the weight's rows")               \
  X(ConventionBitsNotAllowed, "bits or group size not allowed for the quantization mode")          \
  X(ConventionTooManyWeights, "more logical weights than the caller's storage holds")              \
  /* UQFF (mistral.rs): version tensors, layer format tags and their companion sets */           \
  X(UqffPreV1, "all tensor names are numeric: a pre-1.0 UQFF file of opaque blobs (unsupported)") \
  X(UqffMissingVersion, "no UQFF file holds a uqff.version.major/minor/patch tensor")    \
  X(UqffVersionNotScalar, "a UQFF version tensor is not a U32 scalar")                             \
  X(UqffMajorVersion, "UQFF major version is not 1")                                               \
  X(UqffMinorVersionTooNew, "UQFF minor version is newer than this reader supports (1.2)")        \
  X(UqffDuplicateKey, "a tensor name appears in more than one UQFF shard or residual file")       \
  X(UqffFormatNotScalar, "a UQFF layer's .weight.format is not a U8 scalar")                       \
  X(UqffUnknownFormatTag, "a UQFF .weight.format tag is not 0..6")                                  \
  X(UqffFormatTagMismatch, "a UQFF format tag names another type than the layer's companion set") \
  X(UqffUnexpectedCompanion, "a UQFF layer has a weight* tensor its format does not have")         \
  X(UqffMissingCompanion, "a UQFF layer lacks a weight* tensor its format needs")                 \
  X(UqffUnsupportedType, "UQFF Hqq and Fp8 layers are not decoded by this reader")                \
  X(UqffScalarNotFed, "a UQFF scalar tensor's bytes were not fed before resolving the layers")    \
  /* conventions as the upstream tools write them (mlx-lm, Ollama, mistral.rs; issue #14) */      \
  X(ConfigQuantizationIncomplete, "the quantization section lacks group_size or bits (mlx-lm reads both)") \
  X(ConventionGroupNotInferable, "no quant_type, and by Ollama's shape rule the weight's and scales' last dimensions fit no int4/int8 group") \
  X(UqffVersionMismatch, "a uqff.version tensor repeated in another UQFF file holds another value") \
  X(UqffNumBlocksMismatch, "a UQFF F8Q8 layer's .weight.num_blocks is not ceil(elements / 32) of its .weight.shape") \
  /* GGUF */                                                                                       \
  X(GgufInvalidVersion, "GGUF version 0 is not a version")                                         \
  X(GgufByteSwapped, "GGUF version looks byte-swapped: a big-endian file")                         \
  X(GgufVersion1, "GGUF version 1 is not supported (32-bit counts)")                               \
  X(GgufVersionTooNew, "GGUF version is newer than 3")                                             \
  X(GgufNegativeCount, "GGUF tensor or key-value count is negative")                              \
  X(GgufCountTooLarge, "GGUF tensor or key-value count cannot fit in the input")                  \
  X(GgufEmptyKey, "GGUF key is empty")                                                             \
  X(GgufDuplicateKey, "GGUF key appears twice")                                                    \
  X(GgufInvalidValueType, "GGUF value type is not one of 0..12")                                   \
  X(GgufStringTooLong, "GGUF string is longer than 1 GiB or than the rest of the input")          \
  X(GgufArrayTooLong, "GGUF array has over 2^30 elements or more bytes than the rest of the input") \
  X(GgufNestedArray, "GGUF array of arrays (ggml rejects nested arrays)")                         \
  X(GgufInvalidAlignmentType, "general.alignment is not a u32")                                    \
  X(GgufInvalidAlignment, "general.alignment is zero or not a power of two")                      \
  X(GgufTensorNameTooLong, "GGUF tensor name is 64 bytes or longer")                              \
  X(GgufTooManyDims, "GGUF tensor has more than 4 dimensions")                                     \
  X(GgufNegativeDim, "GGUF tensor dimension is negative")                                          \
  X(GgufInvalidType, "GGUF tensor type id is unknown")                                             \
  X(GgufRetiredType, "GGUF tensor type id is retired")                                             \
  X(GgufBlockMisaligned, "GGUF tensor's first dimension is not a multiple of its type's block")   \
  X(GgufInvalidTensorOffset, "GGUF tensor offset differs from the padded sum of the tensors before it") \
  /* GGUF: NUL bytes. ggml and llama.cpp read keys, tensor names and general.architecture as C     \
     strings (strcmp, ggml_set_name, gguf_get_val_str): a NUL ends them there and not here, so a     \
     file with one would be read differently (general.alignment\0 is ggml's alignment key and an   \
     unknown key to a byte-exact reader). Offset: the first NUL byte. */                            \
  X(GgufNulInKey, "GGUF key contains a NUL byte (ggml would read a shorter key)")                  \
  X(GgufNulInTensorName, "GGUF tensor name contains a NUL byte (ggml would read a shorter name)")  \
  X(GgufNulInArchitecture, "general.architecture contains a NUL byte (llama.cpp would read a shorter name)") \
  /* dequantization */                                                                             \
  X(UnsupportedFormat, "no decoder for this tensor format")                                        \
  X(InvalidQuantParams, "quantization parameters are inconsistent with the tensor")               \
  X(InvalidBlockData, "a block's scale is invalid (inf/NaN fp16, or E8M0 0xFF)")                  \
  X(OutputTooSmall, "the output buffer cannot hold one block of values")                         \
  /* model facts (config.json) */                                                                  \
  X(ModelConfigInvalidFact, "a config.json model fact has the wrong type (e.g. a string or fraction for a count)") \
  /* the model loader (model_loader.h): files a model's documents name */                         \
  X(FileMissing, "a file the model is read from is not there")                                     \
  X(ShardNotGiven, "a shard the index names is not among the files given")                        \
  X(UnsafeShardPath, "the index names a shard outside its own directory")                          \
  X(ManifestBlobMissing, "the blob of an Ollama manifest layer is not there")                      \
  X(ManifestBlobNotSafetensors, "the blob of an Ollama manifest tensor layer is not a safetensors file") \
  X(ModelFileNotSafetensors, "a file of a several-file model is not a safetensors file")          \
  X(TooManyFiles, "the model has more files than the host allows (ModelLoaderOptions::max_files)") \
  /* split GGUF models (llama.cpp gguf-split, llama_model_loader; gguf_split.h): the split file    \
     named, the key-value's offset in it */                                                         \
  X(GgufSplitFirstNotZero, "the first split's split.no is not 0")                                  \
  X(GgufSplitCountMismatch, "the model's split files are not split.count files, or a split states another split.count") \
  X(GgufSplitNoMismatch, "a split's split.no is not its position in the model")                   \
  X(GgufSplitNoMissing, "a split of a split GGUF model has no split.no key")                       \
  X(GgufSplitKeyType, "split.no or split.count is not a u16, or split.tensors.count not an i32")   \
  X(GgufSplitDuplicateTensor, "a tensor name appears in two splits")                               \
  X(GgufSplitTensorCountMismatch, "the splits' tensors do not add up to split.tensors.count, or a split states another total") \
  X(GgufSplitTensorCountMissing, "the first split of a split GGUF model has no split.tensors.count key") \
  X(GgufSplitNameMismatch, "a split's file name does not end in -NNNNN-of-MMMMM.gguf for its split.no and split.count") \
  X(GgufSplitNotGguf, "a split of a split GGUF model is not a GGUF file")                          \
  X(GgufSplitMissing, "a split file of a split GGUF model is not there")                          \
  /* digests (model_loader.h: expect_sha256, verify_blobs): the file named; both digests from      \
     ModelLoader::file_expected_sha256 / file_actual_sha256 */                                       \
  X(DigestMismatch, "a file's SHA-256 differs from the digest it was expected to have")             \
  /* quantized checkpoints of the Hub (issue #27): config.json's quantization_config.quant_method  \
     or the companion names say a scheme this reader does not decode (error_detail names it) */    \
  X(QuantizationUnsupported, "the model is quantized with a method this reader does not decode")      \
  /* config.json names a method this reader decodes, but no tensor is quantized with it */         \
  X(QuantizationTensorsAbsent, "config.json names a quantization method, but no tensor is quantized with it") \
  /* GPTQ (issue #28): a g_idx entry names a group past the scales' rows (or a negative one) */   \
  X(QuantGroupIndexOutOfRange, "a g_idx value is not a group of the weight's scales") \
  /* the safetensors writer (safetensors_writer.h): offset is the output file's, tensor the one due */ \
  X(WriterTensorOutOfOrder, "a data piece names another tensor than the one whose bytes are due")   \
  X(WriterPastTensorEnd, "a data piece runs past the end of its tensor's planned bytes")            \
  X(WriterIncomplete, "the output ended before every tensor's planned bytes were written")         \
  /* bitsandbytes (issue #28): a quant_state.bitsandbytes__* tensor's JSON, at the offending byte */ \
  X(BnbQuantStateInvalid, "a bitsandbytes quant_state JSON does not parse, or lacks or misstates an item bitsandbytes reads") \
  X(BnbQuantMapMismatch, "a bitsandbytes quant_map is not its quant_type's code table (the kernels decode with their own)") \
  /* GPTQ (issue #28): GPTQModel's dynamic "-:" rule leaves the module unquantized, yet it has a      \
     <m>.qweight (error_detail names the rule) */                                                    \
  X(ConventionExcludedQuantized, "the quantization config leaves a module unquantized, yet its tensors are quantized")

enum class Status : uint16_t {
#define WS_STATUS_ENUM(name, desc) name,
  WS_STATUS_LIST(WS_STATUS_ENUM)
#undef WS_STATUS_ENUM
      Count_
};

// "HeaderTooLarge" for Status::HeaderTooLarge; "Unknown" for values outside the enum.
const char* status_name(Status s);
// One sentence saying what is wrong.
const char* status_description(Status s);
// Parses a status name back (for tests and bindings). Returns false if unknown.
bool status_from_name(const char* name, Status* out);
// What to do about it: one or two sentences every host ends its message with ("" for Ok and
// Aborted). A convention's own wording for a status it raised is status_hint(Status, Convention)
// (conventions.h; ModelLoader::error_convention() names it), which falls back to this. (lib/src/core/status_hint.cpp: a program that asks
// for none links none of the text.)
const char* status_hint(Status s);
// The table's rows, for the test that every status has one: the count, and row i's status.
uint32_t status_hint_rows();
Status status_hint_row(uint32_t i);

constexpr uint32_t kNoTensor = 0xFFFFFFFFu;

// Where and why an input was rejected.
struct Error {
  Status code = Status::Ok;
  uint64_t offset = 0;             // absolute byte offset in the input where it was detected
  uint32_t tensor = kNoTensor;     // tensor index in file order, when the table is complete
  const char* tensor_name = nullptr;  // name of the tensor concerned (view into the arena), or null
  uint64_t tensor_name_size = 0;
  // The values behind the rejection, where there are such: what the input says (the declared
  // header length, the tensor offset, the type id, the version, ...) and what was required (the
  // limit, the running offset, the byte size from dtype x shape, ...).
  bool has_found = false, has_expected = false;
  uint64_t found = 0, expected = 0;

  void set_found(uint64_t v) {
    has_found = true;
    found = v;
  }
  void set_expected(uint64_t v) {
    has_expected = true;
    expected = v;
  }
};

}  // namespace ws
