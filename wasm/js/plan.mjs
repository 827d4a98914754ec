// plan(source, { device | limits, dtype, filter, split, budget }): what loadToWebGPU would do with
// a model, from its headers alone — before a byte of tensor data is downloaded.
//
// The model is opened as loadToWebGPU opens it (the same loader mode for the dtype, the same
// selection by filter) and closed at ModelReady: a URL is read by its first `Range: bytes=0-`
// request up to the end of its header (and its UQFF scalars, by range), then cancelled. Every size
// is the library's: each output's bytes are ModelLoader::output_bytes (f32/f16 values, stored
// bytes for weights nothing decodes, raw pieces), the files' sizes what their sources state, the
// bytes a load would read bytes_read() + bytes_to_read() for the selection. Buffers are laid out
// by loadToWebGPU's own rule (gpu-writer.mjs layout: 4-byte multiples, split pieces of whole
// elements or blocks).
import { init } from './module.mjs';
import { modelEvents, outputDescriptor } from './model.mjs';
import { LazyList } from './tensor-table.mjs';
import { planDecodeFormats } from './gpu-decode/index.mjs';
import { layout, bufferSize, roundUp4, unitOf, DEFAULT_MAX_BUFFER, DEFAULT_MAX_BINDING } from './gpu-writer.mjs';
import { storageCheck, deviceCheck, cachedUrls } from './storage-checks.mjs';

// The reader's caps (ws::Limits) a `limits` object may hold beside the GPU's.
const READER_LIMITS = ['maxHeaderBytes', 'maxTensors', 'maxNameBytes', 'maxRank', 'maxNesting', 'keepMetadata'];

const count = (v, what) => {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') v = Number(v);
  if (typeof v !== 'number' || !(v >= 0)) throw new TypeError(`weightstream: plan(): ${what} must be a number of bytes, not ${JSON.stringify(v)}`);
  return v;
};

export async function plan(source, options = {}) {
  const wasm = await init(options);
  const gpu = options.device?.limits ?? options.limits ?? {};
  const maxBufferSize = count(gpu.maxBufferSize, 'maxBufferSize') ?? DEFAULT_MAX_BUFFER;
  const maxBinding = count(gpu.maxStorageBufferBindingSize, 'maxStorageBufferBindingSize') ?? DEFAULT_MAX_BINDING;
  const budget = count(options.budget, 'budget');
  const split = options.split === true;
  // `limits` may be the GPU's (device.limits) or hold the reader's caps too: only those go on.
  const readerLimits = options.limits && READER_LIMITS.some((k) => options.limits[k] !== undefined) ? options.limits : undefined;
  const loadOptions = { ...options, limits: readerLimits };
  const dtype = options.dtype ?? 'raw';
  // decode 'gpu' / 'auto': which tensors the GPU decodes (tensors[].decode, uploadBytes).
  const gpuFormats = planDecodeFormats(options);

  let planned = null;
  for await (const ev of modelEvents(wasm, source, loadOptions, null, { headersOnly: true, gpuFormats })) {
    if (ev.kind === 'planned') planned = ev;
  }
  const table = planned.table;

  function entry(d, file) {
    const single = roundUp4(Math.max(d.byteLength, 4));
    const overBufferSize = single > maxBufferSize;
    const lay = layout(d.byteLength, maxBufferSize, unitOf(d), split || overBufferSize);
    let gpuBytes = null;
    if (lay) { gpuBytes = 0; for (let i = 0; i < lay.count; i++) gpuBytes += bufferSize(d.byteLength, lay, i); }
    return {
      name: d.name, file, dtype: d.dtype, shape: d.shape, elements: d.elements, byteLength: d.byteLength,
      // The buffers loadToWebGPU creates for it (with split where it needs it), their bytes.
      buffers: lay ? lay.count : null, pieceBytes: lay && lay.count > 1 ? lay.pieceBytes : null, gpuBytes,
      overBufferSize, overBindingSize: single > maxBinding, needsSplit: overBufferSize,
      source: d.source,
      // Where its values are decoded ('gpu': uploaded as stored, uploadBytes of them; null: raw).
      decode: dtype === 'raw' ? null : d.gpu ? 'gpu' : 'cpu', uploadBytes: d.gpu ? d.gpu.uploadBytes : d.byteLength,
      // decode 'gpu' / 'auto' asked, and this weight's format has no GPU decode pass (FP8's
      // Fp8Block among them): it is decoded on the CPU and uploaded as values, and plan() says so.
      ...(gpuFormats && dtype !== 'raw' && !d.gpu && d.quant?.format && !gpuFormats.has(d.quant.format)
        ? { cpuFallback: `${d.quant.format} has no GPU decode pass: decoded on the CPU` } : {}),
    };
  }

  // Every file read (the entry document, data files, a config.json among the files given; not the
  // one made of the quantization option, which nothing downloads).
  const files = planned.files.filter((f) => f.present && f.feed && !(f.kind === 'config' && planned.configFromOption))
    .map((f) => ({ name: f.name, kind: f.kind, size: f.size ?? null }));
  // The totals from the columns: an output's descriptor is made only for one over a limit (its
  // layout needs its element or block size).
  let outputBytes = 0, uploadBytes = 0, gpuBytes = 0;
  const needsSplit = [], overBindingSize = [];
  for (let p = 0; p < table.count; p++) {
    const n = table.byteLength[p];
    outputBytes += n;
    uploadBytes += table.upload[p];
    const single = roundUp4(Math.max(n, 4));
    if (single <= maxBufferSize) {
      if (gpuBytes !== null) gpuBytes += single;
    } else {
      needsSplit.push(table.name(p));
      const t = entry(outputDescriptor(table, p), null);
      gpuBytes = gpuBytes === null || t.gpuBytes === null ? null : gpuBytes + t.gpuBytes;
    }
    if (single > maxBinding) overBindingSize.push(table.name(p));
  }
  // The outputs as a view (tensor-table.mjs LazyList): each object made when asked for.
  const tensors = new PlanOutputs(table, entry);
  const fitsLimits = split || needsSplit.length === 0;
  const fitsBudget = budget === null ? null : gpuBytes !== null && gpuBytes <= budget;
  const readBytes = planned.bytes.read + planned.bytes.toRead;
  // The environment (storage-checks.mjs): storage for a cached load, shader-f16 for f16.
  const checked = await storageCheck(options, cachedUrls(planned.files.filter((f) => f.present && f.feed)), readBytes);
  const warnings = [...checked.warnings, ...deviceCheck(options, dtype)];
  return {
    dtype,
    format: planned.model.format === 'unknown' ? null : planned.model.format,
    convention: planned.model.convention,
    files,
    // The model's files as their sources state their sizes (null when one is not known: a stream).
    downloadBytes: files.every((f) => f.size !== null) ? files.reduce((a, f) => a + f.size, 0) : null,
    // What loading this selection reads (headers included): the loader's bytes_read + bytes_to_read.
    readBytes,
    // A view (plainArrays: true, for one minor version: a plain array, as before 0.6).
    tensors: options.plainArrays ? tensors.slice() : tensors,
    outputBytes,
    // What goes over to the GPU: outputBytes, less what the GPU decodes from stored bytes.
    uploadBytes,
    gpuBytes,
    limits: { maxBufferSize, maxStorageBufferBindingSize: maxBinding },
    split,
    needsSplit,
    overBindingSize,
    budget,
    fitsLimits,
    fitsBudget,
    fits: fitsLimits && fitsBudget !== false,
    // With cache: 'opfs' and a StorageManager: {quota, usage, available, cacheWrite, cached, persisted}.
    storage: checked.storage,
    // [{code: 'StorageQuota' | 'StorageNotPersisted' | 'NoShaderF16', message, fix}]
    warnings,
  };
}

// plan()'s `tensors`: output p's entry ({name, file, dtype, shape, byteLength, buffers, ...}) made
// anew at each request from the plan's columns; toJSON() / Array.from() give them all.
// Its columns are private: they reach the module and the files' tables, which a structured clone
// or a page-to-test serializer (Playwright's evaluate) must not walk; JSON.stringify calls toJSON.
class PlanOutputs extends LazyList {
  #table;
  #entry;
  constructor(table, entry) {
    super();
    this.#table = table;
    this.#entry = entry;
  }
  get length() { return this.#table.count; }
  get [Symbol.toStringTag]() { return 'PlanOutputs'; }
  make(p) { return this.#entry(outputDescriptor(this.#table, p), this.#table.file(p).shard ?? null); }
  indexOf(name) {
    if (typeof name !== 'string') return -1;
    for (let p = 0; p < this.#table.count; p++) if (this.#table.name(p) === name) return p;
    return -1;
  }
  get(name) { const p = this.indexOf(name); return p < 0 ? undefined : this.make(p); }
  has(name) { return this.indexOf(name) >= 0; }
}
