// Types of the weightstream npm package (wasm/js/*.mjs). Offsets and sizes are numbers: exact
// below 2^53, which every file offset is. GGUF 64-bit integer values are bigints.

/// <reference lib="dom" />

/** A model source. Strings are URLs (relative to the page in browsers); in Node a string without
 * a scheme is a file path. A URL ending in `.index.json` loads a sharded model. */
export type Source =
  | string
  | URL
  | Response
  | Blob
  | ReadableStream<Uint8Array>
  | ArrayBuffer
  | ArrayBufferView
  | AsyncIterable<Uint8Array>;

/** A UQFF directory (createReader().read and loadToWebGPU): its `<stem>-<n>.uqff` shards (taken in
 * numeric order of n) and `residual.safetensors`. Names come from paths/URLs/Files, or are given
 * with `{name, source}`. A source that cannot seek is read into memory first. */
export interface UqffSource {
  uqff: (Source | { name: string; source: Source })[];
}

/** An Ollama model by its manifest (manifests/registry.ollama.ai/library/<model>/<tag>): the
 * tensor layers' blobs `sha256-<hex>` as one logical model. `blobs`: the directory holding them
 * (path or URL), or a function from the blob file name to its source; omitted for a manifest
 * path in Node, the nearest ancestor's `blobs/` directory (Ollama's models root). */
export interface OllamaManifestSource {
  ollama: Source;
  blobs?: string | URL | ((file: string) => Source | Promise<Source>);
}

/** A sharded model (model.safetensors.index.json + shards) from local files: a File list, Blobs
 * or buffers. `index`: the index's bytes. `shards`: Files / paths / URLs (named by their file
 * name, as in `uqff`) or `{name, source}` entries, a directory (path or URL), or a function from
 * a shard name of the index to its source. Entries the index does not name are not read; a
 * shard it names but not given is `ShardNotGiven` (error.shard names it). Checks and errors are
 * those of the index's URL. */
export interface ShardedFilesSource {
  index: Source;
  shards: (Source | { name: string; source: Source; sha256?: string })[] | string | URL
    | ((file: string) => Source | null | undefined | Promise<Source | null | undefined>);
}

/** A split GGUF model (`<prefix>-00001-of-0000N.gguf` ...) as a list of its splits, in any order
 * (a URL or path of any one split finds the others beside it). `sha256` per entry: its digest. */
export interface GgufSplitsSource {
  gguf: (Source | { name: string; source: Source; sha256?: string })[];
}

/** What validate/inspect/createReader/loadToWebGPU take. */
export type ModelSource = Source | UqffSource | OllamaManifestSource | ShardedFilesSource | GgufSplitsSource;

/** A ws::Status name (lib/include/weightstream/status.h), or one of the bindings' own codes (IoError,
 * BufferTooLarge, GpuError, Aborted, InternalError, ShardNotGiven, ManifestNoBlobs, SourceChanged, ResumeUnsupported, ...). */
export type ErrorCode = string;

export interface ErrorInfo {
  code: ErrorCode;
  offset: number | null;
  tensor: string | null;
  message: string;
  /** Sharded models: the shard file the offset is in (absent for single files). */
  shard?: string | null;
}

export declare class WeightstreamError extends Error {
  /** 'WeightstreamError', or 'AbortError' when code is 'Aborted'. */
  name: string;
  code: ErrorCode;
  /** Absolute byte offset where the input became invalid (null when none applies). */
  offset: number | null;
  tensor: string | null;
  shard: string | null;
  /** The values behind the rejection, where the library reports them. */
  found: bigint | null;
  expected: bigint | null;
  description: string;
  hint: string;
  /** IoError of a URL's body: how many resume attempts failed before it (0: none was made). */
  retries?: number;
  toJSON(): ErrorInfo;
}

export interface Limits {
  maxHeaderBytes?: number | bigint;
  maxTensors?: number;
  maxNameBytes?: number | bigint;
  maxRank?: number;
  maxNesting?: number;
  keepMetadata?: boolean;
}

export interface Progress {
  /** Absent in onProgress calls; 'progress' as a createReader event. */
  type?: 'progress';
  /** Bytes read from the source(s) so far. */
  bytes: number;
  /** Bytes expected in all, when known. */
  totalBytes: number | null;
  /** Tensors completed. */
  tensors: number;
  /** Average bytes per second since the start. */
  rate: number;
}

/** The persistent cache's events (`cache: 'opfs'`), given to onProgress (with the progress figures
 * of the moment) and yielded by createReader. `cache`: a URL's entry when its file opens —
 * 'hit' (complete: no network), 'partial' (the missing ranges come from the network), 'miss',
 * 'stale' (the server's file changed: a fresh entry), 'off' (the entry could not be used). */
export type CacheEvent =
  | { type: 'cache'; url: string; state: 'hit' | 'partial' | 'miss' | 'stale' | 'off'; size: number | null; cachedBytes: number }
  /** The cache is off for this file for the rest of the load; the load goes on from the network. */
  | { type: 'cache-warning'; url: string; code: 'QuotaExceeded' | 'CacheUnavailable' | 'CacheBusy' | 'CacheUnverified' | 'CacheWriteFailed' | 'CacheReadFailed'; message: string; cause?: unknown };

/** What onProgress receives: a progress report, or a cache or retry event with the figures of the moment. */
export type ProgressEvent = (Progress & { type?: undefined }) | (ProgressFigures & CacheEvent) | (ProgressFigures & RetryEvent) | (ProgressFigures & ConnectionsEvent);

/** A progress report's figures, without its `type`: what cache and retry events carry beside theirs. */
export type ProgressFigures = Omit<Progress, 'type'>;

/** One entry of the OPFS cache (cacheInfo()). */
export interface CacheEntry {
  url: string;
  size: number | null;
  bytesCached: number;
  /** The byte ranges held, [start, end) sorted and merged (a parallel download cut short may leave holes). */
  extents: Array<[number, number]>;
  complete: boolean;
  etag: string | null;
  lastModified: string | null;
  /** The file's SHA-256 when its server stated it (X-Linked-Etag, a 64-hex ETag) or the caller gave it by name. */
  sha256: string | null;
  /** Milliseconds since the epoch. */
  lastUsed: number | null;
}

/** A FileSystemDirectoryHandle, or an object with the same methods (tests, other storage). */
export interface CacheRoot {
  getDirectoryHandle(name: string, options?: { create?: boolean }): Promise<any>;
}

/** A URL's body failed mid-way and is requested again from `offset` (Range + If-Range), after a
 * pause of retryDelay * 2^(attempt-1) ms. Handed to onProgress at once (createReader: also an event). */
export interface RetryEvent {
  type: 'retry';
  url: string;
  /** The next byte of the file to read: the resumed request starts there. */
  offset: number;
  /** 1..retries; starts again at 1 once bytes arrive after a resume. */
  attempt: number;
  /** What failed: the network error, or the body that ended early. */
  error: unknown;
}

/** A URL's parallel download changed (or settled) its connection count: `reason` 'faster' (the last
 * sample called for one more), 'settled' (no more growth), 'http 429' / 'http 503' (the server
 * refused one: half as many, at most that many from now on, new requests held `waitMs`),
 * 'ratelimit' (a RateLimit header said none remain: new requests held `waitMs`). */
export interface ConnectionsEvent {
  type: 'connections';
  url: string;
  connections: number;
  reason: 'faster' | 'settled' | 'ratelimit' | string;
  /** The sample's bytes received per second, and the part of its time the consumer waited for bytes ('faster', 'settled'). */
  rate?: number;
  starved?: number;
  /** How long new requests are held ('ratelimit', 'http 429', 'http 503'). */
  waitMs?: number | null;
}

export type Filter = string[] | Set<string> | RegExp | string | ((name: string, tensor: TensorHeader) => boolean);

export interface CommonOptions {
  signal?: AbortSignal;
  /** Initial reader arena (default 1 MiB); a header that needs more is retried with what it needs (a large safetensors header: estimated from its length before it is parsed; once counted through: what it needs, or, while later files of the model are still to be read, half as much again, up to twice the last arena). */
  arenaSize?: number;
  /** Largest piece fed to the reader at once, and the size of its input buffer in wasm memory (default 1 MiB). */
  chunkSize?: number;
  limits?: Limits;
  /** GGUF arrays up to this many elements are reported whole; longer ones as head/last (default 16). */
  arrayLimit?: number;
  /** Size of a ReadableStream or async iterable, when known (lets the reader reject a short file early). */
  size?: number;
  /** For URLs: headers for every request, a fetch to use, and whether Range requests may be used (default true). */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  rangeRequests?: boolean;
  /** URLs: resume attempts per failure of a body read (default 3; 0: no resume). Needs Range (rangeRequests). */
  retries?: number;
  /** URLs: milliseconds before the first resume attempt, doubled for each next one (default 250; a
   * server's Retry-After or RateLimit reset when longer). */
  retryDelay?: number;
  /** URLs: Range connections for a file read forward (default 'auto': start with one, add one while
   * the bytes received per second rise by >= 5 %, up to maxConnections). A number pins the count
   * (at most 4 in browsers); 1 turns parallel downloads off (one request per read, as before 0.4.0). */
  connections?: 'auto' | number;
  /** URLs: the most connections 'auto' opens (default 4; at most 4 in browsers). */
  maxConnections?: number;
  /** URLs: the most bytes a parallel download holds: a block is requested only when its end lies
   * within this many bytes of what was handed to the loader (default 32 MiB; blocks are this / (2 ×
   * connections), 256 KiB to 8 MiB). */
  maxInflightBytes?: number;
  /** URLs: a parallel connection that delivers nothing for this many ms is aborted and its block
   * requested again from its next byte (a retry; default 30000). */
  stallTimeout?: number;
  /** Neighbouring selected tensors closer than this share one range request (default 1 MiB for URLs). */
  rangeGap?: number;
  /** Expected SHA-256 (64 hex digits) of the file given, or by file name ({ 'model-00001-of-00002.safetensors': hex }):
   * each file is hashed as it streams; a mismatch is DigestMismatch (error.shard names the file). */
  sha256?: string | Record<string, string>;
  /** 'etag': verify each URL against the SHA-256 its server states (X-Linked-Etag, or an ETag of 64 hex digits). */
  verify?: 'etag';
  /** Ollama manifests: check every blob against its sha256-<hex> name (default true). */
  verifyBlobs?: boolean;
  /** URLs: keep their bytes in the Origin Private File System as they stream; a later load reads them
   * from there (one 1-byte request checks the ETag and size; none for a complete entry whose sha256
   * is given), an interrupted one resumes with the missing ranges only. Write failures (quota) turn
   * it off for the load with a 'cache-warning' event. Without OPFS (Node), a warning and no cache. */
  cache?: 'opfs' | false | null;
  /** Where the cache lives (default: navigator.storage.getDirectory()); it keeps a 'weightstream-cache' directory there. */
  cacheRoot?: CacheRoot;
  /** How long (ms) a load waits for another load's use of the same cache entry (any page or worker of
   * the origin) before reading from the network with a 'CacheBusy' warning (default 5000). */
  cacheWaitMs?: number;
  /** validate()/inspect(): receives the cache's and retry events (createReader and loadToWebGPU: progress reports too). */
  onProgress?: (p: ProgressEvent) => void;
  /** Load the module from elsewhere (first call only). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  wasmUrl?: string | URL;
}

export interface LoadOptions extends CommonOptions {
  /** Output of every decodable tensor: 'f32', 'f16', or 'raw' (bytes as stored; default). */
  dtype?: 'f32' | 'f16' | 'raw';
  /** Tensors to read; the others are skipped (and, from seekable sources, not even fetched). */
  filter?: Filter;
  /** Minimum milliseconds between progress reports (default 100). */
  progressInterval?: number;
  /** The model's config.json, or its "quantization" object (MLX: {group_size, bits, mode}, per-layer
   * overrides). When absent, the config.json beside a URL or path is read (as the CLI does; none
   * there is fine); false: there is none, and nothing is requested for it. */
  quantization?: Record<string, unknown> | null | false;
  /** Kernel family for decoding (default 'auto': SIMD128). */
  kernel?: 'auto' | 'reference' | 'simd128';
}

export interface TensorHeader {
  name: string;
  /** Safetensors dtype name, or GGML type name (Q4_K, ...) for GGUF. */
  dtype: string;
  /** Safetensors: row-major. GGUF: ggml order, ne[0] first. */
  shape: number[];
  /** [begin, end) relative to the data section. */
  dataOffsets: [number, number];
  byteLength: number;
  /** Absolute file offset of the first byte. */
  offset: number;
  /** A split GGUF model: the number of the split holding it. */
  split?: number;
  /** Sharded inspect(): the shard file. */
  shard?: string;
}

/** inspect()'s result with `plainArrays: true`: its lists as plain arrays (as before 0.4). */
export type PlainArrays<H> = H extends object ? {
  [K in keyof H]: H[K] extends LazyList<infer T> ? T[] : H[K] extends (infer E)[] ? PlainArrays<E>[] : H[K] extends object | undefined ? PlainArrays<H[K]> : H[K];
} : H;
/** inspect()'s options. */
export interface InspectOptions extends CommonOptions {
  quantization?: Record<string, unknown> | null | false;
  /** Deprecated (removed in 0.5): `tensors` and `logical.weights` as plain arrays of every object,
   * as before 0.4, instead of lazy views (LazyList). */
  plainArrays?: boolean;
}

/**
 * A read-only view over a table the library read (inspect()'s `tensors`, `logical.weights`, the
 * headers of createReader and loadToWebGPU): the table's bytes, copied out of wasm memory once, in
 * bulk; each object is made when asked for, anew at each request. Valid for as long as it is kept.
 * Not an array: `list.at(i)`, not `list[i]`; `Array.from(list)` / `list.toJSON()` give plain arrays.
 */
export interface LazyList<T> extends Iterable<T> {
  readonly length: number;
  /** Item i (negative: from the end); undefined out of range. */
  at(index: number): T | undefined;
  /** The item named `name` (exact bytes, as the library compares names); undefined when absent. */
  get(name: string): T | undefined;
  indexOf(name: string): number;
  has(name: string): boolean;
  keys(): IterableIterator<number>;
  values(): IterableIterator<T>;
  entries(): IterableIterator<[number, T]>;
  forEach(f: (item: T, index: number, list: this) => void, thisArg?: unknown): void;
  map<U>(f: (item: T, index: number, list: this) => U, thisArg?: unknown): U[];
  filter(f: (item: T, index: number, list: this) => unknown, thisArg?: unknown): T[];
  find(f: (item: T, index: number, list: this) => unknown, thisArg?: unknown): T | undefined;
  findIndex(f: (item: T, index: number, list: this) => unknown, thisArg?: unknown): number;
  some(f: (item: T, index: number, list: this) => unknown, thisArg?: unknown): boolean;
  every(f: (item: T, index: number, list: this) => unknown, thisArg?: unknown): boolean;
  reduce<U>(f: (acc: U, item: T, index: number, list: this) => U, initial: U): U;
  /** Plain objects of [start, end), as Array.prototype.slice counts. */
  slice(start?: number, end?: number): T[];
  /** Every item as a plain object: what inspect() listed before 0.4. */
  toArray(): T[];
  toJSON(): T[];
}
/** A list of tensors; `heldBytes`: the bytes the view holds (records, names, its name hash once built). */
export interface TensorList<T extends TensorHeader = TensorHeader> extends LazyList<T> {
  readonly heldBytes: number;
  /** One field of every tensor, without making their objects (for tables: sort and filter keys).
   * `elements`: the product of the shape. */
  column(field: 'name' | 'dtype' | 'shard' | 'file'): string[];
  column(field: 'split'): number[];
  column(field: 'byteLength' | 'offset' | 'elements' | 'rank'): Float64Array;
}

export interface GgufKv {
  key: string;
  offset: number;
  /** gguf-py's type name: UINT8 … FLOAT64, BOOL, STRING, ARRAY. */
  type: string;
  value?: GgufValue;
  /** Strings longer than 1 MiB are cut; this is their length. */
  valueBytes?: number;
  elementType?: string;
  count?: number;
  stringBytes?: number;
  /** Arrays of up to arrayLimit elements. */
  values?: GgufValue[];
  /** Longer arrays: the first 5 and the last. */
  head?: GgufValue[];
  last?: GgufValue;
}
export type GgufValue = number | bigint | boolean | string;

export interface ArraySummary {
  type: 'ARRAY';
  elementType: string;
  count: number;
  head: GgufValue[];
  last: GgufValue;
  stringBytes?: number;
}

export interface Header {
  format: 'safetensors' | 'gguf';
  name: string | null;
  size: number | null;
  /** Safetensors: the u64 header length. */
  headerSize: number | null;
  dataStart: number;
  dataSize: number;
  tensors: TensorList;
  /** Safetensors __metadata__ (or null); GGUF: key → value, long arrays summarized. */
  metadata: Record<string, string> | Record<string, GgufValue | GgufValue[] | ArraySummary> | null;
  /** Safetensors with quantized logical weights (MLX, Ollama blobs): the library's grouping. */
  logical?: LogicalInfo;
  /** A split GGUF model: its splits in order (tensors then carry `split`, their split's number;
   * metadata and gguf are the first split's). foreignKvs: key-values other than split.* in a
   * later split, which llama.cpp does not read. */
  splits?: { file: string; tensors: number; dataStart: number; dataSize: number; size: number | null; foreignKvs: number }[];
  gguf?: {
    version: number;
    alignment: number;
    dialect: 'upstream' | 'bitnet';
    architecture: string | null;
    kvCount: number;
    tensorInfosOffset: number;
    kv: GgufKv[];
  };
}

/** One logical weight as the library groups it (inspect(): MLX, Ollama, UQFF). */
export interface LogicalWeightInfo {
  name: string;
  /** fp8: the Hub's FP8 (block / tensor / channel scales); mxfp4: gpt-oss's `<p>_blocks` + `<p>_scales`; modelopt: NVIDIA ModelOpt NVFP4; compressed-tensors: pack-quantized; gptq: GPTQ's qweight / qzeros / scales / g_idx; awq: AutoAWQ's GEMM qweight / qzeros / scales. */
  convention: 'plain' | 'mlx' | 'ollama' | 'uqff' | 'fp8' | 'mxfp4' | 'modelopt' | 'compressed-tensors' | 'gptq' | 'awq';
  /** 'none' for plain weights, GGML-block / F8Q8 UQFF layers and FP8 weights. */
  mode: 'none' | 'affine' | 'mxfp4' | 'mxfp8' | 'nvfp4';
  /** The packed tensor's stored dtype. */
  stored: string;
  /** The quant format it decodes with (MlxAffine, Q4_K, BF16, ...). */
  format: string;
  bits: number | null;
  group: number | null;
  /** Logical (unpacked) shape. */
  shape: number[];
  /** Stored bytes of all its pieces. */
  bytes: number;
  /** Roles of its other pieces: scales, biases, globalScale, format, ggmlType, shape, bits, groupSize, numBlocks. */
  companions: string[];
  /** The file of its packed piece (UQFF), null for a single file. */
  file: string | null;
  sequentialScratch: number;
  seekableScratch: number;
  packedBeforeCompanion: boolean;
  /** Its quantization parameters as the library presents them (ws::quant_parameters), or null for
   * a plain tensor: FP8 {method: 'fp8', scaling: 'block' | 'tensor' | 'channel', block_rows,
   * block_cols, weight_dtype, scale_dtype}; MLX {mode, bits, group, scale_dtype}; UQFF {type, ...}. */
  parameters: Record<string, string | number> | null;
}

export interface LogicalInfo {
  convention: 'mlx' | 'ollama' | 'uqff' | 'fp8' | 'mxfp4' | 'modelopt' | 'compressed-tensors' | 'gptq' | 'awq' | null;
  weights: LazyList<LogicalWeightInfo>;
  /** Peak scratch bytes: streaming every file in order, and reading by range in `chunk`-byte reads. */
  plan: { chunk: number; sequentialPeak: number; seekablePeak: number } | null;
  /** The configuration document(s) the quantization parameters came from ('config.json', read
   * beside a URL or path or given as the `quantization` option; GPTQ's 'quantize_config.json', ...;
   * several joined by ' + '), or null when the model's own files gave them. */
  config: string | null;
  /** A convention error (the header itself is valid); weights is then empty. */
  error: ErrorInfo | null;
}

/** inspect() of a UQFF directory or an Ollama manifest: one entry per file (shard, blob). */
export interface ModelHeader {
  format: 'safetensors';
  convention: 'uqff' | 'ollama';
  /** UQFF: major.minor.patch of the uqff.version.* tensors; null for Ollama. */
  version: string | null;
  metadata: null;
  files: (Header & { file: string })[];
  tensors: TensorList<TensorHeader & { file: string }>;
  logical: LogicalInfo;
}
export type UqffHeader = ModelHeader;

export interface ShardedHeader {
  format: 'safetensors';
  sharded: true;
  totalSize: number | null;
  metadata: Record<string, unknown> | null;
  shards: (Header & { file: string })[];
  tensors: TensorList<TensorHeader & { shard: string }>;
  /** MLX weights over all shards (pass quantization), as for one file. */
  logical?: LogicalInfo;
}

/** Something the library decodes as one runtime does and another reads otherwise: never a failure.
 * The code, its description and fix (`message`) are the library's (lib/include/weightstream/warning.h),
 * the CLI's words too. Raised from tensor data as it is read: validate() for every weight, loads for
 * the selected ones; inspect() reads headers only and gets none of these. */
export interface LoadWarning {
  /** 'GptqZeroSpill': a GPTQ v1 zero point stored as -1 (a zero point of 0 whose ones spill into
   * the lanes above it), decoded as vLLM reads it (2^bits), where GPTQModel's conversion reads 0. */
  code: 'GptqZeroSpill';
  /** The file it is in, as an error's `shard` names it: a shard or blob of a model of several
   * files; null for the one file given. */
  file: string | null;
  /** Absolute byte offset in that file of its first instance. */
  offset: number;
  /** The stored tensor it was found in (GPTQ: `<m>.qzeros`). */
  tensor: string;
  /** The logical weight it concerns (GPTQ: `<m>.weight`). */
  weight: string | null;
  /** Instances in that tensor (GPTQ: all-ones zero-point lanes). */
  count: number;
  /** What was found and the fix, in the library's words. */
  message: string;
}

export interface ValidateResult {
  valid: boolean;
  format: 'safetensors' | 'gguf' | null;
  tensors: number;
  error: ErrorInfo | null;
  /** What the library warned of while reading every byte (valid model or not). */
  warnings: LoadWarning[];
  /** UQFF directories and Ollama manifests. */
  convention?: 'uqff' | 'ollama';
  version?: string | null;
}

export interface QuantInfo {
  format: string;
  blockElems?: number;
  blockBytes?: number;
  /** MLX, Ollama blobs */
  mode?: string;
  bits?: number;
  groupSize?: number;
  scales?: string;
  biases?: string | null;
  /** Ollama: the `{name}.global_scale` companion (nvfp4), or null; ModelOpt: `<m>.weight_scale_2`. */
  globalScale?: string | null;
  /** 'ollama', 'uqff', 'mxfp4' (gpt-oss) or 'modelopt' for those conventions' weights; absent for MLX. */
  convention?: string;
  /** UQFF: the layer's type ('gguf', 'afq', 'f8q8', 'mxfp4'); gguf layers also name their GGML type. */
  uqffType?: string;
  ggmlType?: string;
  /** FP8 ('fp8' convention): the library's parameters (LogicalWeightInfo.parameters). */
  parameters?: Record<string, string | number>;
}

export interface OutputTensor {
  name: string;
  index: number;
  /** 'f32' / 'f16' when decoded, else the stored dtype (BF16, Q4_K, I32, ...). */
  dtype: string;
  /** Logical shape (MLX weights: unpacked). */
  shape: number[];
  elements: number;
  /** Bytes of output. */
  byteLength: number;
  /** The stored quantization, or null for plain types. */
  quant: QuantInfo | null;
  source: { dtype: string; shape: number[]; byteLength: number; offset: number };
}

export type ReaderEvent =
  | ({ type: 'header'; shard: string | null; outputs: OutputTensor[] } & Header)
  | { type: 'tensorBegin'; shard: string | null; tensor: OutputTensor }
  /** `data` views wasm memory: valid until the iterator is advanced. */
  | { type: 'tensorData'; shard: string | null; tensor: OutputTensor; offset: number; data: Uint8Array }
  | { type: 'tensorEnd'; shard: string | null; tensor: OutputTensor }
  /** The library's warning about a selected weight's data (f32 / f16; 'raw' applies no convention). */
  | ({ type: 'warning' } & LoadWarning)
  | ({ type: 'progress' } & Progress)
  | (ProgressFigures & CacheEvent)
  | (ProgressFigures & RetryEvent)
  | (ProgressFigures & ConnectionsEvent)
  | { type: 'end'; validated: 'full' | 'header'; index: { tensors: number; totalSize: number | null; metadata: unknown; shards: string[] } | { convention: 'uqff' | 'ollama'; version: string | null; metadata: null; shards: string[] } | null };

export interface Reader extends AsyncIterable<ReaderEvent> {
  read(source: ModelSource): AsyncIterable<ReaderEvent>;
}

export interface GpuTensor {
  /** One buffer, or several (`buffers`, each `pieceBytes` but the last) with split: true. */
  buffer?: GPUBuffer;
  buffers?: GPUBuffer[];
  pieceBytes?: number;
  dtype: string;
  shape: number[];
  byteLength: number;
  quant: QuantInfo | null;
  source: { dtype: string; shape: number[]; byteLength: number; offset: number };
  shard?: string;
  /** 'gpu' when the decode pass expanded it from its stored bytes (decode: 'gpu' | 'auto'). */
  decodedOn?: 'gpu';
}

export interface GpuModel {
  format: 'safetensors' | 'gguf';
  tensors: Record<string, GpuTensor>;
  metadata: unknown;
  header: Header | null;
  shards: (Header & { file: string })[] | null;
  bytes: number;
  /** What the library warned of about the loaded weights' data. */
  warnings: LoadWarning[];
  /** decode 'gpu' / 'auto': the tensors the GPU decoded, the stored bytes uploaded for them, the
   * dispatches; absent with decode: 'cpu'. */
  gpuDecode?: { tensors: number; uploadBytes: number; dispatches: number };
  /** Destroys every buffer. */
  destroy(): void;
}

export interface GpuLoadOptions extends LoadOptions {
  /** Tensors larger than device.limits.maxBufferSize go into several buffers instead of failing. */
  split?: boolean;
  /** Where f32/f16 values are decoded: 'cpu' (default, in wasm), 'gpu' (weights of GPU_FORMATS are
   * uploaded as stored and expanded by a WGSL compute pass, bit for bit the CPU decode; the rest on
   * the CPU), 'auto' ('gpu' when the device runs compute passes). */
  decode?: 'cpu' | 'gpu' | 'auto';
  /** Staging bytes per decode dispatch (default 1 MiB; whole blocks and words of it are used). */
  decodeChunk?: number;
}

/** The formats decode: 'gpu' expands on the GPU (the library's names). */
export declare const GPU_FORMATS: readonly string[];
/** The WGSL every decoder needs (byte reads from `ws_src: array<u32>`, exact f32 construction,
 * ws_f32_to_f16 round to nearest even). */
export declare const WGSL_COMMON: string;
/** Per format: its block elements and bytes, and the WGSL of ws_decode_<FORMAT>(block, i) -> f32 bits
 * and ws_check_<FORMAT>(block) -> byte offset of an inf/NaN scale or 0xFFFFFFFF. */
export declare const WGSL_FORMATS: Record<string, { blockElems: number; blockBytes: number; wgsl: string }>;
/** Packed weights with companions (MLX affine): ws_decode_<FORMAT>(group, i) reading ws_src (the packed
 * bytes), ws_scales and ws_biases (array<u32>), with the constants WS_BITS, WS_GROUP and WS_SCALE
 * (0 F32, 1 F16, 2 BF16 companions) defined by the including shader. */
export declare const WGSL_COMPANION_FORMATS: Record<string, { wgsl: string }>;
/** WGSL_COMMON + the format's decoder (the engine declares `ws_src`); null for a format not covered. */
export declare function wgslDecoder(format: string): string | null;

export declare function init(options?: { wasmBinary?: ArrayBuffer | Uint8Array; wasmUrl?: string | URL }): Promise<unknown>;
export declare function validate(source: ModelSource, options?: CommonOptions): Promise<ValidateResult>;
/** A UQFF list gives a UqffHeader; a file a Header (with `logical` for MLX/Ollama); an index or `{ index, shards }` a ShardedHeader. */
/** `warnings`: the library's (LoadWarning); inspect() reads headers only, so warnings about tensor data do not come here (validate() reads every byte). */
export type InspectResult<S> = (S extends UqffSource | OllamaManifestSource ? ModelHeader : S extends ShardedFilesSource ? ShardedHeader : Header | ShardedHeader) & { warnings: LoadWarning[] };
export declare function inspect<S extends ModelSource>(source: S, options: InspectOptions & { plainArrays: true }): Promise<PlainArrays<InspectResult<S>>>;
export declare function inspect<S extends ModelSource>(source: S, options?: InspectOptions): Promise<InspectResult<S>>;
export declare function createReader(options?: LoadOptions & { source?: Source }): Reader;
export declare function loadToWebGPU(device: GPUDevice, source: ModelSource, options?: GpuLoadOptions): Promise<GpuModel>;
export interface PlanOptions extends CommonOptions {
  /** Its limits (maxBufferSize, maxStorageBufferBindingSize) are the ones checked. */
  device?: GPUDevice;
  /** GPU limits when no device is given (WebGPU's defaults otherwise: 256 MiB, 128 MiB); may also hold
   * the reader's caps (Limits). */
  limits?: Limits & { maxBufferSize?: number; maxStorageBufferBindingSize?: number };
  dtype?: 'f32' | 'f16' | 'raw';
  filter?: Filter;
  /** Whether the load will pass split: true (then a tensor over maxBufferSize still fits). */
  split?: boolean;
  /** Bytes the GPU buffers may take in all. */
  budget?: number | bigint;
  quantization?: Record<string, unknown> | null | false;
  /** As loadToWebGPU's: which tensors the GPU would decode ('gpu' assumes a device). */
  decode?: 'cpu' | 'gpu' | 'auto';
  /** With cache: 'opfs': the StorageManager whose estimate() / persisted() are checked (default navigator.storage). */
  storage?: StorageLike;
  /** Deprecated (removed in 0.7): `tensors` as a plain array of every output's object, as before
   * 0.6, instead of a lazy view (LazyList). */
  plainArrays?: boolean;
  /** For the shader-f16 check's advice: whether the adapter could give the feature. */
  adapter?: { features: { has(name: string): boolean } };
}

/** What plan() and persist() use of navigator.storage. */
export interface StorageLike {
  estimate?(): Promise<{ quota?: number; usage?: number }>;
  persisted?(): Promise<boolean>;
  persist?(): Promise<boolean>;
}

export interface PlanWarning {
  /** StorageQuota: a cached load would write more than the origin has left. StorageNotPersisted: the
   * browser may evict the cache. NoShaderF16: an f16 plan on a device without shader-f16. */
  code: 'StorageQuota' | 'StorageNotPersisted' | 'NoShaderF16';
  message: string;
  /** The suggested fix. */
  fix: string;
}

export interface PlannedTensor {
  name: string;
  /** The file (shard, split, blob, UQFF part) of a model of several files, else null. */
  file: string | null;
  /** 'f32' / 'f16' when decoded, else the stored dtype. */
  dtype: string;
  shape: number[];
  elements: number;
  /** The output's bytes (the library's: ModelLoader::output_bytes). */
  byteLength: number;
  /** The buffers loadToWebGPU creates for it (with split where it needs it), and their bytes; null
   * when no layout fits (a block larger than maxBufferSize). */
  buffers: number | null;
  pieceBytes: number | null;
  gpuBytes: number | null;
  overBufferSize: boolean;
  /** Loads without split, but cannot be bound whole as one storage binding. */
  overBindingSize: boolean;
  /** loadToWebGPU refuses it (BufferTooLarge) without split: true. */
  needsSplit: boolean;
  source: { dtype: string; shape: number[]; byteLength: number; offset: number };
  /** Where its values are decoded with the plan's `decode` option; null for dtype 'raw'. */
  decode: 'cpu' | 'gpu' | null;
  /** What goes over to the GPU for it: its stored bytes when the GPU decodes it, else byteLength. */
  uploadBytes: number;
  /** With decode 'gpu' / 'auto': why a quantized weight is decoded on the CPU instead (its format
   * has no GPU decode pass, e.g. "Fp8Block has no GPU decode pass: decoded on the CPU"). */
  cpuFallback?: string;
}

export interface Plan {
  dtype: 'f32' | 'f16' | 'raw';
  format: 'safetensors' | 'gguf' | null;
  convention: string;
  /** Every file the model reads, with the size its source states (null: a stream of unknown size). */
  files: { name: string; kind: string; size: number | null }[];
  /** The files' total size (null when one is unknown). */
  downloadBytes: number | null;
  /** What loading this selection reads, headers included (the library's bytes_read + bytes_to_read). */
  readBytes: number;
  /** The outputs, as a view (LazyList: `at(i)`, `get(name)`, iteration, `map`, ...; each object made
   * when asked for) over the plan's columns; a plain array with `plainArrays: true`. */
  tensors: LazyList<PlannedTensor>;
  outputBytes: number;
  /** The tensors' uploadBytes in all. */
  uploadBytes: number;
  gpuBytes: number | null;
  limits: { maxBufferSize: number; maxStorageBufferBindingSize: number };
  split: boolean;
  needsSplit: string[];
  overBindingSize: string[];
  budget: number | null;
  /** No tensor needs split, or split is on. */
  fitsLimits: boolean;
  /** gpuBytes <= budget; null without a budget. */
  fitsBudget: boolean | null;
  fits: boolean;
  /** With cache: 'opfs', URLs and a StorageManager: the estimate and what a load would write to the
   * cache (readBytes less what it holds of these URLs already); else null. */
  storage: { quota: number | null; usage: number | null; available: number | null; cacheWrite: number; cached: number; persisted: boolean | null } | null;
  warnings: PlanWarning[];
}

/** Where convert() writes a file: a WritableStream (File System Access's createWritable() gives
 * one) or an object with its write/close (and abort) methods. */
export type ConvertWritable = WritableStream<Uint8Array> | {
  write(chunk: Uint8Array): unknown;
  close(): unknown;
  abort?(reason?: unknown): unknown;
};

/** A directory convert() can create files in (a FileSystemDirectoryHandle). One that can also read
 * files back and remove them (getFile, removeEntry: a real handle can) resumes: a conversion run
 * again there keeps the files an earlier run finished. */
export interface ConvertDirectory {
  getFileHandle(name: string, options?: { create?: boolean }): Promise<{
    createWritable(): Promise<ConvertWritable>;
    getFile?(): Promise<Blob>;
  }>;
  removeEntry?(name: string): Promise<void>;
}

export interface ConvertOptions extends CommonOptions {
  /** The output files' sink: (name) => a WritableStream, a directory handle, or (Node) a directory
   *  path or file: URL (each file written as <name>.partial and renamed when complete). Into a
   *  directory, each shard's SHA-256 is recorded beside it (`.<name>.sha256`, as the CLI records
   *  it) and a run again keeps every shard that still has its planned size, header and digest
   *  (resume; a CLI's directory too). */
  output: ((name: string) => ConvertWritable | Promise<ConvertWritable>) | ConvertDirectory | string | URL;
  /** The type decoded weights are written in; default 'bf16'. */
  to?: 'bf16' | 'f16' | 'f32';
  /** Safetensors dtypes (F32, BF16, ...; any case) whose plain weights are copied as stored
   *  (the CLI's --keep). */
  keep?: string | string[] | Set<string>;
  /** The most tensor bytes one output file holds (Hugging Face's max_shard_size); 0 or absent:
   *  one file. Several files get transformers' names and a model.safetensors.index.json. A string
   *  is read as transformers reads max_shard_size ('5GB' = 5e9, '2GiB' = 2^31, '500MB', a
   *  lowercase final b for bits), or as the CLI's sizes ('64k', '1M'); anything else is a
   *  TypeError. */
  maxShardSize?: number | bigint | string;
  /** The weights to convert, by their (logical) names; the function gets (name, {name, index}). */
  filter?: string[] | Set<string> | RegExp | string | ((name: string, weight: { name: string; index: number }) => boolean);
  /** Reports the output bytes written: bytes of totalBytes (every shard's size), weights done. */
  onProgress?: (p: ProgressEvent) => void;
  progressInterval?: number;
  /** The model's config.json or its quantization section (for decoding); given without `config`,
   *  no config.json is written. */
  quantization?: Record<string, unknown> | null | false;
  /** The config.json written beside the output (without its quantization sections): a File, bytes,
   *  a URL or path; false: none. Default: the one beside the model's URL or path (or among
   *  `{ index, shards }`), if any. */
  config?: Source | false | null;
  kernel?: 'auto' | 'reference' | 'simd128';
}

export interface ConvertResult {
  /** The files written, in order: the shards, model.safetensors.index.json (several shards),
   *  config.json (a safetensors model with one beside it), with their sizes; `kept`: a shard an
   *  earlier run into the same directory finished, not written again. */
  files: { name: string; size: number; kept?: true }[];
  /** The weights written. */
  weights: number;
  /** Their bytes (the shards' data sections). */
  totalSize: number;
  to: 'bf16' | 'f16' | 'f32';
  /** The convention converted from ('mlx', 'fp8', 'gptq', ..., 'plain'; 'gguf' for a GGUF model). */
  from: string;
  /** Weights with nothing safetensors can hold (GGUF TL1, TL2, I8_S): left out. */
  skipped: string[];
}

/** The model's weights as plain safetensors (bf16, f16 or f32), the bytes the CLI's
 *  `weightstream convert` writes, streamed to `output` one file after the other (memory: the
 *  loader's arena and one output piece). Rejects with a WeightstreamError (Aborted on the signal,
 *  IoError when a sink fails, naming the file in `shard`); the file being written is aborted. */
export declare function convert(source: ModelSource, options: ConvertOptions): Promise<ConvertResult>;

/** A preflight: what loadToWebGPU would create and read, from the headers alone. */
export declare function plan(source: ModelSource, options: PlanOptions & { plainArrays: true }): Promise<Omit<Plan, 'tensors'> & { tensors: PlannedTensor[] }>;
export declare function plan(source: ModelSource, options?: PlanOptions): Promise<Plan>;
export declare function supportedFormats(options?: CommonOptions): Promise<string[]>;
/** The kind of model file whose first bytes are `head` (4 KiB is plenty), by the library's one rule
 *  (file_kind.h); `size`: the file's size when known (a safetensors length must fit in it). */
export declare function fileKind(head: Uint8Array | ArrayBuffer, size?: number | bigint | null,
  options?: CommonOptions): Promise<'safetensors' | 'gguf' | 'ollama-manifest' | 'shard-index' | 'json' | 'unknown'>;
/** The OPFS cache's entries, most recently used first ([] without OPFS). */
export declare function cacheInfo(options?: { cacheRoot?: CacheRoot }): Promise<CacheEntry[]>;
/** Asks the browser to make the origin's storage persistent (the cache is then evicted only by the
 * user) and says what came of it; never throws. */
export declare function persist(options?: { storage?: StorageLike }): Promise<{ persisted: boolean; outcome: 'already' | 'granted' | 'denied' | 'unsupported' | 'error'; message: string }>;
/** Removes the entry of `url`, or every entry; resolves to how many were removed. */
export declare function evict(url?: string | URL, options?: { cacheRoot?: CacheRoot }): Promise<number>;

// Minimal WebGPU shapes, so that the types need no @webgpu/types (use those for real code).
declare global {
  interface GPUBuffer { readonly size: number; readonly usage: number; destroy(): void }
  interface GPUDevice {
    readonly limits: { readonly maxBufferSize: number; readonly maxStorageBufferBindingSize?: number };
    readonly features?: { has(name: string): boolean };
    readonly queue: { writeBuffer(buffer: GPUBuffer, offset: number, data: ArrayBufferView | ArrayBuffer, dataOffset?: number, size?: number): void };
    createBuffer(descriptor: { label?: string; size: number; usage: number; mappedAtCreation?: boolean }): GPUBuffer;
  }
}
