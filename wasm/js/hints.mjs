// Fix hints, one per status: the same wording as the CLI's table (tools/cli/error_text.cpp), so a
// file rejected by `weightstream validate` and by the JS bindings gets the same advice. Keyed by
// status name; tests/js/errors.test.mjs checks that every ws::Status has a row and every row a
// status. The CLI's `--arena-size` becomes the `arenaSize` option here.

const SCHEMA = 'The header does not follow the safetensors schema: re-export the model with a safetensors writer.';
const JSON_ = 'The header is not valid JSON: the file is corrupt, or was written or edited by something other than a safetensors writer.';
const OFFSETS = 'Tensors must be laid out back to back in data_offsets order: the writer is buggy or the header was tampered with; re-export the model.';
const METADATA = '__metadata__ must be an object mapping strings to strings; re-export the model.';
const INDEX = 'Regenerate model.safetensors.index.json (save_pretrained writes it), or fix it by hand.';
const GGUF = 'ggml would reject this file: it is corrupt, or was written by a buggy converter.';
const PAST_END = 'The value does not fit in the rest of the file: was the download interrupted? If not, the file is corrupt or crafted to exhaust memory.';
const LIMIT = 'The file exceeds a limit of this reader; real models stay far below it, so the file may be crafted to exhaust memory.';
const ALIGNMENT = 'general.alignment must be a u32 power of two (32 by default): re-convert the model.';

export const HINTS = Object.freeze({
  Ok: '',
  ArenaExhausted: 'Retry with a larger arena (the arenaSize option).',
  UsageError: 'This is a bug in weightstream: please report it with the file.',
  Aborted: '',
  UnknownFormat: 'Is this really a safetensors or GGUF file?',
  HeaderTooSmall: 'The file is empty or cut off: was the download interrupted?',
  HeaderTooLarge: 'Is this really a safetensors file?',
  InvalidHeaderLength: 'The file is shorter than its header length says: was the download interrupted, or is this not a safetensors file?',
  TruncatedData: 'The file is shorter than its header says: was the download interrupted?',
  TrailingBytes: 'Bytes after the last tensor are how polyglot files (valid as two formats at once) hide a second payload: do not load this file unless you know where they come from.',
  TruncatedHeader: 'The file ends inside its header: was the download interrupted?',
  InvalidUtf8: 'The header is corrupt, or the file was not written by a safetensors writer.',
  JsonSyntax: JSON_,
  JsonInvalidEscape: JSON_,
  JsonControlCharacter: JSON_,
  JsonLoneSurrogate: JSON_,
  JsonInvalidNumber: JSON_,
  JsonNumberOutOfRange: JSON_,
  JsonUnexpectedEnd: 'The JSON header is cut off: the header length is wrong or the file is corrupt.',
  JsonTrailingCharacters: 'Only spaces may pad the header: the header length is wrong or the file is corrupt.',
  NestingTooDeep: 'No real safetensors header nests this deep: the file may be crafted to attack parsers.',
  HeaderNotObject: SCHEMA,
  TensorEntryNotObject: SCHEMA,
  MissingDtype: SCHEMA,
  MissingShape: SCHEMA,
  MissingDataOffsets: SCHEMA,
  DuplicateField: SCHEMA,
  InvalidDtype: 'Dtype names are case-sensitive (F32, BF16, F8_E4M3, ...): re-export the model.',
  InvalidShape: SCHEMA,
  InvalidDataOffsets: SCHEMA,
  InvalidInteger: 'Shapes and offsets must be plain integers (no sign, fraction, exponent or leading zero).',
  DataOffsetsReversed: OFFSETS,
  DataOffsetGap: OFFSETS,
  DataOffsetOverlap: OFFSETS,
  ShapeOverflow: 'No real tensor is this big: the file may be crafted to overflow size computations.',
  MisalignedSlice: 'Sub-byte dtypes (F4, F6_*) need an element count whose bits fill whole bytes.',
  TensorSizeMismatch: 'The shape and dtype do not match the bytes data_offsets reserve: re-export the model.',
  DuplicateTensorName: 'Readers disagree on which copy wins (the reference keeps the last one silently): re-export the model so that every name appears once.',
  MetadataNotObject: METADATA,
  MetadataValueNotString: '__metadata__ values must be strings: store numbers as "1" and structures as JSON text.',
  DuplicateMetadataKey: 'Readers disagree on which value wins: re-export the model with unique metadata keys.',
  DuplicateMetadata: METADATA,
  TooManyTensors: LIMIT,
  NameTooLong: LIMIT,
  RankTooLarge: LIMIT,
  IndexNotObject: INDEX,
  IndexMissingWeightMap: INDEX,
  IndexInvalidWeightMap: INDEX,
  IndexInvalidTotalSize: INDEX,
  IndexDuplicateTensor: INDEX,
  IndexUnknownShard: 'The shard is not named by the index: it belongs to another model, or the index is stale.',
  ShardTensorNotInIndex: 'The index is stale or belongs to other shards: regenerate it from the shards.',
  ShardTensorWrongShard: "The index's weight_map points this tensor at another shard: regenerate the index, or check that the shards belong to this index.",
  ShardTensorMissing: 'The shard does not hold this tensor: a shard was replaced, or the index comes from another save.',
  ShardTensorDuplicate: 'Two shards hold the same tensor: remove the stale shard, or re-save the model.',
  IndexTotalSizeMismatch: 'The index and the shards come from different saves: regenerate the index.',
  GgufInvalidVersion: 'No GGUF writer produces version 0: the file is corrupt.',
  GgufByteSwapped: "Big-endian GGUF is not supported: convert the file with gguf-py's gguf_convert_endian.py (order little), or re-convert the model on a little-endian machine.",
  GgufVersion1: 'Re-convert the model with a current llama.cpp (convert_hf_to_gguf.py), which writes GGUF v3.',
  GgufVersionTooNew: 'The file is newer than this reader: update weightstream.',
  GgufNegativeCount: GGUF,
  GgufCountTooLarge: PAST_END,
  GgufEmptyKey: GGUF,
  GgufDuplicateKey: GGUF,
  GgufInvalidValueType: GGUF,
  GgufStringTooLong: PAST_END,
  GgufArrayTooLong: PAST_END,
  GgufNestedArray: GGUF,
  GgufInvalidAlignmentType: ALIGNMENT,
  GgufInvalidAlignment: ALIGNMENT,
  GgufTensorNameTooLong: 'ggml limits tensor names to 63 bytes: shorten it when converting.',
  GgufTooManyDims: 'ggml tensors have at most 4 dimensions: re-convert the model.',
  GgufNegativeDim: GGUF,
  GgufInvalidType: 'The tensor type is unknown to this reader: the file is corrupt, or newer than weightstream.',
  GgufRetiredType: 'llama.cpp no longer loads this quantization type: re-quantize from the original weights with a current llama-quantize.',
  GgufBlockMisaligned: 'A quantized row must hold whole blocks: the converter or the file is broken.',
  GgufInvalidTensorOffset: 'ggml lays tensors out back to back, each padded to the alignment: the file is corrupt or was written by a buggy converter.',
  GgufNulInKey: 'ggml reads keys up to the first NUL, so this file means something else to llama.cpp (general.alignment + NUL is its alignment key): it is crafted or corrupt; re-convert it.',
  GgufNulInTensorName: 'ggml reads tensor names up to the first NUL, so llama.cpp would load this tensor under another name: the file is crafted or corrupt; re-convert it.',
  GgufNulInArchitecture: 'llama.cpp reads the architecture up to the first NUL and would pick another model than the bytes say: the file is crafted or corrupt; re-convert it.',
  UnsupportedFormat: 'weightstream cannot decode this tensor type; read it as raw bytes.',
  InvalidQuantParams: "The quantization parameters (bits, group size, scales) do not fit the tensor: check the model's quantization config.",
  InvalidBlockData: 'ggml rejects rows with such a scale: the file is corrupt or was written by a buggy quantizer.',
  OutputTooSmall: 'This is a bug in weightstream: please report it with the file.',
  ConfigNotObject: "A config.json holds one JSON object of model settings: check that this is the model's config.json.",
  ConfigInvalidQuantization: "The quantization section must hold positive integers (group_size, bits) and per-layer objects or false: fix config.json or re-convert with mlx-lm.",
  ConfigUnknownMode: "MLX knows the modes affine, mxfp4, mxfp8 and nvfp4: fix config.json.",
  ManifestNotObject: "Is this really an Ollama manifest (models/manifests/...)?",
  ManifestMissingLayers: "Is this really an Ollama manifest (models/manifests/...)?",
  ManifestInvalidLayer: "The manifest is corrupt: pull the model again (ollama pull).",
  ManifestInvalidDigest: "The manifest is corrupt: pull the model again (ollama pull).",
  ManifestBlobSize: 'The blob is incomplete or belongs to another model: pull the model again.',
  ManifestTensorInOtherLayer: 'The manifest and its blobs come from different models: pull the model again.',
  ManifestLayerNotInBlob: "The layer's digest points at another blob: pull the model again.",
  ConventionMissingCompanion: "The quantized weight cannot be decoded without its scales/biases: a shard or blob is missing, or the converter is buggy.",
  ConventionOrphanCompanion: "Scales without their packed weight: a shard or blob is missing, or the converter is buggy.",
  ConventionCompanionShape: "The scales/biases do not fit the packed weight: the file is corrupt or the quantization config belongs to another model.",
  ConventionUnknownParams: "Give the model's config.json (quantization group_size and bits), or metadata stating them.",
  ConventionUnknownQuantType: "The blob is newer than this reader: update weightstream.",
  ConventionGroupNotDividing: "The group size must divide the row: the config belongs to another model, or the file is corrupt.",
  ConventionBitsNotAllowed: "MLX cannot produce this bits/group combination: check the quantization config.",
  ConventionTooManyWeights: "Give the logical model more storage for weights.",
  UqffPreV1: "A UQFF file from before version 1.0 (opaque numbered blobs): re-create it with a current mistral.rs (--write-uqff).",
  UqffMissingVersion: 'Give every file of the UQFF directory (the shards hold uqff.version.*); otherwise the file is not UQFF.',
  UqffVersionNotScalar: "The UQFF version tensors must be U32 scalars: the file is corrupt or was not written by mistral.rs.",
  UqffMajorVersion: "This reader reads UQFF 1.x: re-create the file with a mistral.rs that writes UQFF 1.",
  UqffMinorVersionTooNew: "The UQFF file is newer than this reader (1.2): update weightstream.",
  UqffDuplicateKey: "Two files of the UQFF directory hold the same tensor: a shard from another model or an old residual.safetensors is mixed in.",
  UqffFormatNotScalar: "A layer's .weight.format must be a U8 scalar: the file is corrupt.",
  UqffUnknownFormatTag: "The UQFF file uses a quantization type newer than this reader (tags 0-6): update weightstream.",
  UqffFormatTagMismatch: "The layer's format tag and its companion tensors disagree: the file is corrupt.",
  UqffUnexpectedCompanion: "The layer has a tensor its format does not have (see the name): the file is corrupt or mixes two writers.",
  UqffMissingCompanion: "The layer lacks a tensor its format needs (see the detail): a shard is missing or the file is corrupt.",
  UqffUnsupportedType: "Hqq and Fp8 UQFF layers are not decoded: re-create the UQFF with a GGUF, AFQ, F8Q8 or MXFP4 type.",
  UqffScalarNotFed: "Feed every UQFF scalar tensor's bytes (TensorBytes events) to the model before resolving: a usage error.",
  ConfigQuantizationIncomplete: 'mlx-lm reads quantization.group_size and quantization.bits: give both, or re-convert with mlx-lm.',
  ConventionGroupNotInferable: "Ollama infers int4/int8 and the group from the shapes only for groups of 16, 32, 64 or 128 (and needs quant_type when both widths fit): state quant_type and group_size in the blob's metadata, or re-import the model.",
  UqffVersionMismatch: 'The files of the UQFF directory state different versions: they come from different mistral.rs runs; re-create the directory in one run.',
  UqffNumBlocksMismatch: 'An F8Q8 layer holds ceil(elements / 32) blocks of 33 bytes: the file is corrupt or was not written by mistral.rs.',
  ModelConfigInvalidFact: "A setting such as num_hidden_layers must be a plain non-negative number (model_type a string, text_config an object): fix the value at this offset.",
  FileMissing: "A file the model names is not there: check the download, or the names the loader asked for.",
  ShardNotGiven: "Pass every shard the index names (pick or drop them together with the index).",
  UnsafeShardPath: "Shard names must be relative paths without \"..\": this index may be crafted to read other files.",
  ManifestBlobMissing: "Pull the model again (ollama pull), or say where its blobs are (the CLI's --blobs DIR, the JS blobs option).",
  ManifestBlobNotSafetensors: "weightstream reads Ollama's safetensors tensor blobs from a manifest: give a GGUF blob to weightstream directly.",
  ModelFileNotSafetensors: "Sharded, UQFF and manifest models are made of safetensors files: give a GGUF file to weightstream on its own.",
  TooManyFiles: 'The host set a limit on the files of one model (ModelLoaderOptions::max_files): raise it.',
  // Split GGUF models (llama.cpp's gguf-split): the split named is the one to look at.
  GgufSplitFirstNotZero: 'The file named -00001-of-... is not the model\'s first split: the splits were renamed or mixed up; download the model\'s splits again.',
  GgufSplitCountMismatch: 'Give every split of the model, and only those: the splits come from different split sets.',
  GgufSplitNoMismatch: 'The split\'s file name and its split.no disagree: the splits were renamed or mixed up; download them again.',
  GgufSplitNoMissing: 'gguf-split writes split.no in every split: this file is not a split of this model.',
  GgufSplitKeyType: 'llama.cpp reads split.no and split.count as u16 and split.tensors.count as i32: re-split the model with llama.cpp\'s gguf-split.',
  GgufSplitDuplicateTensor: 'llama.cpp refuses a tensor in two splits: the splits come from different split sets; download them again.',
  GgufSplitTensorCountMismatch: 'A split is missing tensors or comes from another split set: download the model\'s splits again.',
  GgufSplitTensorCountMissing: 'gguf-split writes split.tensors.count in the first split: re-split the model with llama.cpp\'s gguf-split.',
  GgufSplitNameMismatch: 'llama.cpp finds the other splits from the first one\'s name: keep the names gguf-split wrote (<prefix>-00001-of-0000N.gguf ...).',
  GgufSplitNotGguf: 'Every split of a split GGUF model is a GGUF file: this one is something else; download it again.',
  DigestMismatch: 'The file is corrupt or is not the one its digest names: download it again (an Ollama blob: ollama pull).',
  GgufSplitMissing: 'Put every split of the model beside the first (llama.cpp finds them by name), or pick all of them.',
  QuantizationUnsupported: "weightstream does not decode this quantization yet: read as plain tensors it would give wrong numbers. Use the runtime it was made for, or take the tensors as stored (the JS package's dtype 'raw').",
  QuantizationTensorsAbsent: "config.json says the model is quantized, but its tensors are not: the config belongs to other files (a dequantized copy, or a different download). Put the model's own config.json beside it.",
  BnbQuantStateInvalid: 'The quant_state tensor beside this bitsandbytes weight is not what bitsandbytes writes (QuantState.as_dict(packed=True)): the file is damaged or was edited; download the model again.',
});

// Codes of the JS bindings themselves (not ws::Status values), with their hints.
export const JS_CODES = Object.freeze({
  IoError: 'Check the URL or file and the network; HTTP errors carry the status in the message.',
  BufferTooLarge: 'Request a device with a larger maxBufferSize (requestDevice({requiredLimits})), or pass split: true to spread the tensor over several buffers.',
  GpuError: 'The GPU device refused the buffer: it may be out of memory or lost.',
  // Resuming a URL's download after a network failure (sources.mjs UrlSource).
  SourceChanged: 'The file on the server changed during the download (a new ETag or size): load it again from the start.',
  ResumeUnsupported: 'The server does not answer Range requests, so an interrupted download cannot continue: load it again, or serve the file from a host with Range support.',
  // Ollama manifests ({ ollama, blobs }): the CLI's codes for the same problems.
  InternalError: 'This is a bug in weightstream (the WebAssembly module trapped): please report it with the file. The module was reset; the next call starts afresh.',
  ManifestNoBlobs: 'Ollama keeps manifests/ and blobs/ in one models directory: pass blobs (the directory that holds the sha256-* blobs, or (file) => source).',
});

// What the first bytes of a rejected input look like, as advice (the CLI's content_guess).
export function contentGuess(prefix) {
  if (!prefix || prefix.length === 0) return '';
  const ascii = String.fromCharCode(...prefix.subarray(0, 8));
  if (ascii.startsWith('version ')) return 'This looks like a Git LFS pointer, not the model: run `git lfs pull` in the repository.';
  if (ascii.startsWith('<')) return 'This looks like an HTML or XML page: did the download save an error page instead of the model?';
  if (ascii.startsWith('{')) return 'This looks like JSON, not a safetensors file (an index must be named *.index.json).';
  if (ascii.startsWith('PK\x03\x04')) return 'This is a zip archive (a PyTorch .bin/.pt checkpoint?), not a safetensors file.';
  if (prefix.length >= 2 && prefix[0] === 0x80 && prefix[1] >= 2 && prefix[1] <= 5)
    return 'This looks like a Python pickle (a PyTorch checkpoint?), not a safetensors file.';
  return '';
}
