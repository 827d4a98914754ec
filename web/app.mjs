// The weightstream web page: open a model (files, drop, URL), validate and inspect it, stream it
// into WebGPU with progress and cancel, then read tensors back from the GPU and check them.
// Plain ES module on the package in wasm/dist (served at /dist/ by serve.mjs); models.mjs turns
// what the user gave into the model the package loads (one file, sharded, UQFF, Ollama manifest).
import { validate, inspect, createReader, loadToWebGPU, plan, init, cacheInfo, evict, persist, convert, WeightstreamError } from './dist/weightstream.mjs';
import { fromFiles, fromUrlText } from './models.mjs';
import { setupGpu, readTensor } from './gpu-check.mjs';
import { loadInWorker } from './dist/worker.mjs';

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const fmtInt = (n) => (n == null ? '–' : Number(n).toLocaleString('en-US'));
function fmtBytes(n) {
  if (n == null) return '–';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${u[i]}`;
}
const fmtSecs = (ms) => `${(ms / 1000).toFixed(1)} s`;
const AUTO_VALIDATE_LIMIT = 256 * 1048576;  // larger sources are validated byte by byte while loading

// ---------------- state ----------------
const state = {
  source: null, sourceName: '', header: null, verdict: null,
  gpu: null,            // {adapter, device} or {error}
  model: null, loading: null, lastLoad: null,
  converting: null, lastConvert: null,  // convert(): the AbortController of the one running, its outcome
  peaks: { jsHeap: 0, wasm: 0 },
  sort: { key: null, dir: 1 },
  generation: 0,
  headerJob: 0, tableJob: 0,  // the newest header's and table's work in slices
  tableSlices: { longest: 0, count: 0, all: [] },
};
let wasm = null;

// ---------------- the load worker ----------------
// Loads run in a module worker (load-worker.mjs) unless "on the main thread" is chosen or the
// model's source cannot cross to a worker; the worker has its own WebGPU device and tracker.
const worker = { w: null, seq: 0, waiting: new Map(), stats: { live: 0, created: 0, destroyed: 0, wasm: 0 }, gpu: null };
function startWorker() {
  try {
    worker.w = new Worker(new URL('./load-worker.mjs', import.meta.url), { type: 'module' });
  } catch (e) {
    worker.gpu = { error: `no module worker: ${e.message}` };
    return;
  }
  worker.w.addEventListener('message', (ev) => {
    const m = ev.data;
    if (m?.page !== 'reply') return;
    const f = worker.waiting.get(m.seq);
    worker.waiting.delete(m.seq);
    f?.(m);
  });
}
function ask(page, extra = {}, transfer = []) {
  const seq = ++worker.seq;
  return new Promise((resolve, reject) => {
    worker.waiting.set(seq, (m) => (m.error ? reject(new Error(m.error)) : resolve(m)));
    worker.w.postMessage({ page, seq, ...extra }, transfer);
  });
}
async function workerStats() {
  if (!worker.w) return worker.stats;
  worker.stats = await ask('stats');
  return worker.stats;
}
const inWorker = () => $('where').value === 'worker' && !!worker.w && !worker.gpu?.error;
const hex8 = (v) => v.toString(16).padStart(8, '0');

// ---------------- memory peaks ----------------
function sampleMemory() {
  const js = performance.memory?.usedJSHeapSize ?? 0;
  const w = state.loading?.where === 'worker' ? worker.stats.wasm : wasm?.memory?.buffer?.byteLength ?? 0;
  if (js > state.peaks.jsHeap) state.peaks.jsHeap = js;
  if (w > state.peaks.wasm) state.peaks.wasm = w;
  $('st-heap').textContent = performance.memory ? fmtBytes(state.peaks.jsHeap) : 'n/a';
  $('st-wasm').textContent = fmtBytes(state.peaks.wasm);
}

// ---------------- opening ----------------
// open() takes the URL box's text (one URL, or several for a UQFF directory), a File, a list of
// Files (picker, drop), or a spec from models.mjs; `state.spec` is the model the package loads.
async function toSpec(input) {
  if (input && typeof input === 'object' && typeof input.kind === 'string') return input;
  if (typeof input === 'string') return fromUrlText(input);
  if (typeof Blob !== 'undefined' && input instanceof Blob) return fromFiles([input]);
  if (Array.isArray(input) || (typeof FileList !== 'undefined' && input instanceof FileList)) return fromFiles(input);
  throw new TypeError('open(): give a URL, a File, a list of Files or a model spec');
}

function describeSpec(spec) {
  if (spec.kind === 'uqff') return `UQFF: ${spec.files.map((f) => f.name + (f.size != null ? ` (${fmtBytes(f.size)})` : '')).join(', ')}`;
  if (spec.kind === 'ollama') return `Ollama: ${spec.manifestName} (${spec.layers.length} tensor layers)`;
  if (spec.kind === 'splits') return `Split GGUF: ${spec.files.map((f) => f.name + (f.size != null ? ` (${fmtBytes(f.size)})` : '')).join(', ')}`;
  if (spec.kind === 'sharded' && typeof spec.source !== 'string') {
    const files = `${spec.files[0].name} + ${spec.files.length - 1} shard file${spec.files.length === 2 ? '' : 's'}`;
    return spec.configName ? `${files} + ${spec.configName}` : files;
  }
  const f = spec.files[0];
  const name = typeof spec.source === 'string' ? spec.source : f.url ?? `${f.name}${f.size != null ? ` (${fmtBytes(f.size)})` : ''}`;
  return spec.configName ? `${name} + ${spec.configName.split('/').pop()}` : name;
}

// Options every package call gets for this model (the MLX quantization config, when found).
const modelOptions = () => (state.spec?.quantization ? { quantization: state.spec.quantization } : {});

async function open(input) {
  const gen = ++state.generation;
  cancelLoad();
  // The verdict says "checking" at once (before any await), so no one reads the last model's.
  $('verdict').hidden = false;
  setVerdict('checking', 'Reading the header…');
  await checksDone();
  if (gen !== state.generation) return;
  dropModel();
  state.spec = null;
  state.source = null;
  state.header = null;
  state.verdict = null;
  showWarnings([]);
  $('source-name').textContent = typeof input === 'string' ? input : '';
  $('verdict').hidden = false;
  $('details').hidden = true;
  $('logical').hidden = true;
  $('manifest').hidden = true;
  $('gpu').hidden = true;
  $('convert').hidden = true;
  state.converting?.abort(new DOMException('another model was opened', 'AbortError'));
  $('check').hidden = true;
  $('preflight').hidden = true;
  state.plan = null;
  $('notes').textContent = '';
  setVerdict('checking', 'Reading the header…');
  hideError();
  $('summary').textContent = '';
  let spec;
  try {
    spec = await toSpec(input);
  } catch (e) {
    if (gen !== state.generation) return;
    setVerdict('invalid', e.message);
    state.verdict = { code: 'Error', message: e.message };
    return;
  }
  if (gen !== state.generation) return;
  state.spec = spec;
  state.source = spec.source;
  state.sourceName = describeSpec(spec);
  $('source-name').textContent = state.sourceName;
  $('notes').textContent = spec.notes.join('; ');
  if (spec.kind === 'ollama') showManifest(spec);
  let header;
  try {
    header = spec.kind === 'uqff' || spec.kind === 'ollama' ? await multiHeader(spec) : await fileHeader(spec);
  } catch (e) {
    if (gen !== state.generation) return;
    if (e instanceof WeightstreamError) {
      showError(e);
      setVerdict('invalid', `Invalid ${{ uqff: 'UQFF directory', ollama: 'Ollama model' }[spec.kind] ?? guessFormat(spec)}: ${e.code}`);
      state.verdict = e.toJSON();
      return;
    }
    setVerdict('invalid', `Could not read: ${e.message}`);
    state.verdict = { code: 'Error', message: e.message };
    return;
  }
  if (gen !== state.generation) return;
  state.header = header;
  showHeader(header);
  $('gpu').hidden = false;
  // Convert needs a directory to write to: File System Access (Chromium); hidden elsewhere.
  $('convert').hidden = typeof window.showDirectoryPicker !== 'function';
  $('convert-status').textContent = '';
  $('convert-status').dataset.state = 'none';
  resetLoadUi();
  preflight();  // not awaited: the table fills in while the data is validated
  const size = header.totalSize ?? header.size ?? (spec.source instanceof Blob ? spec.source.size : null);
  const what = header.multi ? `${fmtInt(header.logical?.length ?? header.tensors.length)} ${header.logical ? 'logical weights' : 'tensors'} in ${header.shards.length} files` : `${fmtInt(header.tensors.length)} tensors`;
  if (size != null && size > AUTO_VALIDATE_LIMIT) {
    setVerdict('header-valid', `Header valid: ${what}. The data (${fmtBytes(size)}) is validated byte by byte while it loads to the GPU.`);
    state.verdict = { valid: null, header: true };
    return;
  }
  setVerdict('checking', `Header valid: ${what}; validating every byte…`);
  const v = await validate(spec.source, modelOptions());
  if (gen !== state.generation) return;
  state.verdict = v;
  showWarnings(v.warnings);
  if (v.valid) {
    const kind = header.multi ? modelName(header) : v.format;
    const parts = header.multi ? ` (${header.shards.length} files)` : header.sharded ? ` (${header.shards.length} shards)` : '';
    setVerdict('valid', `Valid ${kind}${parts}: every byte read, ${fmtInt(v.tensors)} tensors${header.logical ? ` → ${fmtInt(header.logical.length)} logical weights` : ''}.`);
  } else {
    showError(v.error);
    setVerdict('invalid', `Invalid ${v.format ?? guessFormat(spec)}: ${v.error.code}`);
  }
}

// A single file (or a sharded index): the package's inspect(), which also groups an MLX or Ollama
// safetensors file into its logical weights. The package reads a config.json beside a URL itself
// when the model's convention reads one (the file picker gives it with the file); inspect() says
// which document the parameters came from, and the source line names it.
async function fileHeader(spec) {
  const h = await inspect(spec.source, modelOptions());
  if (h.logical?.config && !spec.configName) {
    spec.configName = h.logical.config;
    $('source-name').textContent = state.sourceName = describeSpec(spec);
  }
  return withLogical(h, '');
}

// A UQFF directory or an Ollama manifest: inspect() gives every file's header and the model's
// logical weights, after applying every rule of the convention (UQFF: versions, companion sets,
// tags, scalars; Ollama: the manifest, blob sizes, quant params).
async function multiHeader(spec) {
  const h = await inspect(spec.source);
  return withLogical({
    format: h.convention, multi: true, convention: h.convention, version: h.version, metadata: null,
    shards: h.files.map((f) => f.file), files: h.files,
    totalSize: h.files.reduce((a, f) => a + (f.size ?? 0), 0),
    tensors: h.tensors.map((t) => ({ ...t, shard: t.file })),
    logical: h.logical,
  }, null);
}

// The page's rows from inspect()'s `logical` (the CLI's inspect --json values): name, format,
// mode, bits, group, logical shape, bytes of all its pieces, the plan's scratch, file.
function withLogical(h, file) {
  const l = h.logical;
  h.logical = null;
  h.plan = null;
  if (!l) return h;
  if (l.error) { h.logicalError = l.error; return h; }
  h.plan = l.plan;
  h.convention = l.convention;
  h.logical = l.weights.map((w) => ({
    name: w.name, format: w.format, mode: w.mode !== 'none' ? w.mode : methodText(w.parameters), bits: w.bits, group: w.group, shape: w.shape,
    bytes: w.bytes, scratch: [w.sequentialScratch, w.seekableScratch], file: w.file ?? file, convention: w.convention,
  }));
  return h;
}

// A weight with no MLX mode whose convention names a method (FP8): the method and its parameters as
// the library presents them (inspect()'s `parameters`), e.g. "fp8 block 128×128, F32 scales".
function methodText(p) {
  if (!p?.method) return '—';
  const block = p.scaling === 'block' ? ` ${p.block_rows}×${p.block_cols}` : '';
  return `${p.method} ${p.scaling ?? ''}${block}${p.scale_dtype ? `, ${p.scale_dtype} scales` : ''}`;
}

function guessFormat(spec) {
  const n = spec?.files?.[0]?.name ?? '';
  return /\.gguf/i.test(n) ? 'GGUF' : 'safetensors';
}

// The library's warnings (validate()'s, a load's): beside the verdict, each with its file, byte
// offset and tensor, in the package's (the library's) words. None: the list is hidden.
function showWarnings(warnings) {
  const ul = $('warnings');
  ul.replaceChildren(...(warnings ?? []).map((w) => {
    const li = document.createElement('li');
    li.dataset.code = w.code;
    li.textContent = `⚠ ${w.code} at byte ${w.offset}${w.file ? ` of ${w.file}` : ''} in tensor ${w.tensor}: ${w.message}`;
    return li;
  }));
  ul.hidden = ul.children.length === 0;
}

function setVerdict(kind, text) {
  $('verdict').dataset.state = kind;
  $('verdict-line').textContent = (kind === 'valid' ? '✔ ' : kind === 'invalid' ? '✘ ' : '') + text;
}
function hideError() { $('error').hidden = true; }

// The file an error is in: the one the package names; for a UQFF directory without one (missing
// version tensors, which no file holds) the first file, where mistral.rs writes them; for a single
// file, that file.
function errorFile(e) {
  const spec = state.spec;
  if (e.shard) return e.shard;
  if (!spec) return null;
  if (spec.kind === 'uqff') {
    const first = state.header?.shards?.[0] ?? spec.files[0]?.name;
    return first ? `${first} (the first file; no file holds the version tensors)` : null;
  }
  return spec.files[0]?.name ?? null;
}

// The sentence: the error's description (WeightstreamError) or its message without the
// "Code at byte N in tensor "x": " prefix (validate() results).
function showError(e) {
  $('error').hidden = false;
  $('error-code').textContent = e.code;
  $('error-file').textContent = errorFile(e) ?? '—';
  $('error-offset').textContent = e.offset == null ? '—' : `${fmtInt(e.offset)} (0x${Number(e.offset).toString(16)})`;
  $('error-tensor').textContent = e.tensor == null ? '—' : `"${e.tensor}"`;
  let sentence = e.description;
  let hint = e.hint;
  if (!sentence) {
    const m = String(e.message ?? '');
    const i = m.indexOf(': ');
    sentence = i >= 0 ? m.slice(i + 2) : m;
    hint = '';
  }
  sentence = sentence ? sentence[0].toUpperCase() + sentence.slice(1) : '';
  const missing = state.spec?.missing ?? [];
  if (missing.length) hint = `${hint ? `${hint} ` : ''}Not among the files: ${missing.join(', ')}.`;
  $('error-sentence').textContent = sentence;
  $('error-hint').textContent = hint || '—';
}

// An Ollama manifest's tensor layers: the model is all of their blobs together; each blob also
// opens alone.
function showManifest(spec) {
  const el = $('manifest');
  el.hidden = false;
  $('manifest-note').textContent = spec.blobsDir ? `blobs from ${spec.blobsDir}` : '';
  el.querySelector('tbody').innerHTML = spec.layers.map((l, i) => `<tr><td>${esc(l.name)}</td><td>${esc(l.digest.slice(0, 19))}…</td><td class="num">${fmtInt(l.size)}</td>`
    + `<td>${l.source ? `<button type="button" data-layer="${i}">open this blob alone</button>` : '<span class="muted">blob not given</span>'}</td></tr>`).join('');
}

function modelName(h) {
  if (h.convention === 'uqff') return `UQFF ${h.version}`;
  if (h.convention === 'ollama') return 'Ollama model';
  return h.sharded ? 'sharded safetensors' : h.format;
}

// ---------------- header views ----------------
async function showHeader(h) {
  $('details').hidden = false;
  // inspect()'s table is a view (an object per tensor only when asked for): the table renders the
  // rows it shows, and what needs every tensor (the dtype totals, filtering, sorting) runs in slices
  // that give the main thread back (table-slices below).
  state.rows = h.tensors;
  $('tensors').querySelector('th[data-key=shard]').hidden = !multiFile(h);
  $('tensors').querySelector('th[data-key=shard]').textContent = h.multi ? 'file' : 'shard';
  const job = ++state.headerJob;
  renderTable();
  renderMetadata(h);
  showLogical(h.logical ?? null, h);
  const by = new Map();
  let total = 0;
  const dtypes = column(h.tensors, 'dtype'), bytes = column(h.tensors, 'byteLength');
  const done = await sliced(() => job === state.headerJob, h.tensors.length, (i) => {
    const e = by.get(dtypes[i]) ?? { bytes: 0, n: 0 };
    e.bytes += bytes[i];
    e.n++;
    by.set(dtypes[i], e);
    total += bytes[i];
  }, 'totals');
  if (!done) return;
  drawDtypeChart(by, total);
  const parts = [modelName(h), `${fmtInt(h.tensors.length)} ${h.multi ? 'stored ' : ''}tensors`, `${fmtBytes(total)} of tensor data`];
  if (h.logical) parts.push(`${fmtInt(h.logical.length)} logical weights`);
  if (h.multi) parts.push(`${h.shards.length} files (${h.shards.map((f) => (/^sha256-/.test(f) ? `${f.slice(0, 19)}…` : f)).join(', ')})`, `${fmtBytes(h.totalSize)}`);
  if (h.size != null) parts.push(`file ${fmtBytes(h.size)}`);
  if (h.gguf) parts.push(`GGUF v${h.gguf.version}`, `alignment ${h.gguf.alignment}`, `${h.gguf.kvCount} KVs`, h.gguf.architecture ? `architecture ${h.gguf.architecture}` : null, h.gguf.dialect !== 'upstream' ? h.gguf.dialect : null);
  if (h.headerSize != null) parts.push(`header ${fmtInt(h.headerSize)} B`);
  if (h.sharded) parts.push(`${h.shards.length} shards`);
  if (h.splits) parts.push(`${h.splits.length} splits (${h.splits.map((x) => x.file).join(', ')})`);
  $('summary').textContent = parts.filter(Boolean).join(' · ');
}

const multiFile = (h) => !!(h?.sharded || h?.multi);
// Ollama blob names are 71 characters of digest: the tables show the start (the title has it all).
const fileCell = (name) => (/^sha256-[0-9a-f]{20,}$/.test(name ?? '') ? `<td title="${esc(name)}">${esc(name.slice(0, 19))}…</td>` : `<td>${esc(name)}</td>`);

// The logical weights of a convention model (MLX, Ollama, UQFF): what an engine uses, each from a
// packed weight and its companions, with the scratch its load plan needs from a sequential stream
// and from a seekable source (FORMATS §2–§4; the CLI's `inspect` lists the same).
function showLogical(rows, h) {
  state.logical = rows;
  const card = $('logical');
  const conv = rows || h?.logicalError;
  card.hidden = !conv;
  if (!conv) { card.querySelector('tbody').innerHTML = ''; return; }
  $('logical-count').textContent = rows ? `(${fmtInt(rows.length)})` : '';
  const note = $('logical-note');
  if (h.logicalError) {
    const e = h.logicalError;
    const text = String(e.message ?? '').replace(/^\w+ at byte \d+(?: of [^ ]+)?(?: in tensor "[^"]*")?: /, '');
    note.textContent = `✘ ${e.code}${e.tensor ? ` in "${e.tensor}"` : ''}: ${text}`;
    note.dataset.state = 'error';
  } else {
    const config = state.spec?.configName ? `; bits and group size from ${state.spec.configName.split('/').pop()}` : '';
    const from = h.convention === 'fp8' ? 'FP8 (quant_method fp8): F8_E4M3 weights with their weight_scale_inv (per block) or weight_scale (per tensor / channel); the mode column names the method and block'
      : h.convention === 'uqff' ? `UQFF ${h.version}: each layer's .weight with its .weight.* companions (format tag, GGML type, shape, scales, …)`
      : h.convention === 'ollama' ? `Ollama ${h.multi ? 'model (every blob of the manifest)' : 'blob'}: packed weights with their scales/biases`
        // The Hub methods the library decodes (issue #27): the method, then what it groups.
        : h.convention === 'mxfp4' ? 'quant_method mxfp4 (gpt-oss): each <p>_blocks with its <p>_scales (E8M0, one per 32 values) as the weight <p>, rows = output features (transformers\' parameter swaps axes 1 and 2)'
        : h.convention === 'modelopt' ? 'quant_method modelopt, NVFP4 (NVIDIA ModelOpt): each .weight with its .weight_scale (E4M3, one per 16 values) and .weight_scale_2 (multiplies them); input_scale as stored'
        : `MLX${h.sharded ? ', sharded' : ''}: packed weights with their scales/biases${h.sharded ? ' (which may sit in another shard)' : ''}${config}`;
    const peaks = h.plan ? `; load plan peak scratch: ${fmtInt(h.plan.sequentialPeak)} B from a sequential stream, ${fmtInt(h.plan.seekablePeak)} B from a seekable source` : '';
    note.textContent = `${from}; bytes count every piece${peaks}.`;
    note.dataset.state = '';
  }
  const multi = multiFile(h);
  card.querySelector('th[data-key=file]').hidden = !multi;
  card.querySelector('tbody').innerHTML = (rows ?? []).map((r) => `<tr><td>${esc(r.name)}</td><td>${esc(r.format)}</td><td>${esc(r.mode)}</td>`
    + `<td class="num">${r.bits ?? '–'}</td><td class="num">${r.group ?? '–'}</td><td>[${r.shape.join(', ')}]</td><td class="num">${fmtInt(r.bytes)}</td>`
    + `<td class="num">${fmtInt(r.scratch[0])} / ${fmtInt(r.scratch[1])}</td>${multi ? fileCell(r.file) : ''}</tr>`).join('');
}

// The filter box as a test of a tensor's name and dtype (null: every tensor).
function rowTest() {
  const q = $('filter').value.trim();
  if (!q) return null;
  const m = /^\/(.*)\/([a-z]*)$/.exec(q);
  if (m) {
    try { const re = new RegExp(m[1], m[2]); return (name, dtype) => re.test(name) || re.test(dtype); } catch { return null; }
  }
  const lq = q.toLowerCase();
  return (name, dtype) => name.toLowerCase().includes(lq) || dtype.toLowerCase() === lq;
}

// One field of every tensor: the view's column (no object per tensor), or an array's.
function column(list, field) {
  if (typeof list.column === 'function') return list.column(field);
  if (field === 'elements') return list.map((t) => t.shape.reduce((a, b) => a * b, 1));
  return list.map((t) => t[field] ?? '');
}

// ---------------- table slices ----------------
// Work over every tensor (92k for a DeepSeek-V3 header, 500k for the largest Hub indexes) runs in
// slices of at most SLICE_MS, the main thread given back between them (scheduler.yield where the
// browser has it): no long task (>= 50 ms) comes from the table. state.tableSlices.longest is the
// longest slice measured (the page test reads it); `alive()` false stops a job a newer one replaced.
const SLICE_MS = 5;
const yieldToMain = () => (globalThis.scheduler?.yield ? globalThis.scheduler.yield() : new Promise((r) => setTimeout(r, 0)));
function noteSlice(ms, what) {
  const t = state.tableSlices;
  if (ms > t.longest) { t.longest = ms; t.longestWhat = what; }
  t.count++;
  if (t.all.length < 10000) t.all.push(Math.round(ms * 10) / 10);
}
async function sliced(alive, n, step, what = 'scan') {
  let t0 = performance.now();
  for (let i = 0; i < n; i++) {
    step(i);
    if ((i & 127) === 127 && performance.now() - t0 > SLICE_MS) {
      noteSlice(performance.now() - t0, what);
      await yieldToMain();
      if (!alive()) return false;
      t0 = performance.now();
    }
  }
  noteSlice(performance.now() - t0, what);
  return true;
}

// A stable bottom-up merge sort of `order` by cmp, in slices (a pass checks the clock every 256
// elements it writes, so a late pass's long runs do not make one long task).
async function slicedSort(alive, order, cmp) {
  let src = order, dst = new Uint32Array(order.length);
  const n = order.length;
  for (let width = 1; width < n; width *= 2) {
    let lo = 0, a = 0, b = 0, mid = 0, hi = 0, k = 0;
    let t0 = performance.now();
    while (k < n) {
      if (a >= mid && b >= hi) { a = lo; mid = Math.min(lo + width, n); b = mid; hi = Math.min(lo + 2 * width, n); lo = hi; }
      dst[k++] = a < mid && (b >= hi || cmp(src[b], src[a]) >= 0) ? src[a++] : src[b++];
      if ((k & 255) === 0 && performance.now() - t0 > SLICE_MS) {
        noteSlice(performance.now() - t0, 'sort');
        await yieldToMain();
        if (!alive()) return null;
        t0 = performance.now();
      }
    }
    noteSlice(performance.now() - t0, 'sort');
    [src, dst] = [dst, src];
  }
  return src;
}

// The table shows a window of rows where it is scrolled to (spacer rows keep the scrollbar true to
// every row): a 92k-row table lays out ≈ 100 rows, not 92k (nor the 5,000 it showed before 0.4).
const WINDOW_ROWS = 120;
const collator = new Intl.Collator();
// Filters and sorts the tensor table (state.order: the rows shown, by index into the list), then
// renders its window. #tensors' data-state is 'working' until the rows are there, then 'ready'.
async function renderTable() {
  const job = ++state.tableJob;
  const alive = () => job === state.tableJob;
  const table = $('tensors');
  table.dataset.state = 'working';
  const list = state.rows ?? [];
  const n = list.length;
  const { key, dir } = state.sort;
  for (const th of table.querySelectorAll('th')) {
    if (th.dataset.key === key) th.dataset.sort = dir > 0 ? 'asc' : 'desc';
    else delete th.dataset.sort;
  }
  const test = rowTest();
  let order;
  if (test) {
    const kept = [];
    const names = column(list, 'name'), dtypes = column(list, 'dtype');
    if (!await sliced(alive, n, (i) => { if (test(names[i], dtypes[i])) kept.push(i); }, 'filter')) return;
    order = Uint32Array.from(kept);
  } else {
    order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
  }
  if (key) {
    const numeric = key !== 'name' && key !== 'dtype' && key !== 'shard';
    const t0 = performance.now();
    const keys = column(list, key === 'shape' ? 'elements' : key);
    noteSlice(performance.now() - t0, 'keys');
    const cmp = numeric ? (a, b) => (keys[a] - keys[b]) * dir : (a, b) => collator.compare(keys[a], keys[b]) * dir;
    order = await slicedSort(alive, order, cmp);
    if (!order) return;
  }
  state.order = order;
  $('tensor-count').textContent = order.length === n ? `(${fmtInt(n)})` : `(${fmtInt(order.length)} of ${fmtInt(n)} shown)`;
  table.parentElement.scrollTop = 0;
  renderWindow();
  table.dataset.state = 'ready';
}

// The rows around the table's scroll position.
function renderWindow() {
  const table = $('tensors');
  const order = state.order ?? new Uint32Array(0);
  const list = state.rows ?? [];
  const body = table.querySelector('tbody');
  const t0 = performance.now();
  const rowH = state.rowHeight ?? 22;
  const first = Math.max(0, Math.min(order.length - WINDOW_ROWS, Math.floor(table.parentElement.scrollTop / rowH) - 20));
  const from = Math.max(0, first), to = Math.min(order.length, from + WINDOW_ROWS);
  const sharded = multiFile(state.header);
  const cols = sharded ? 6 : 5;
  let html = from > 0 ? `<tr class="spacer" style="height:${from * rowH}px"><td colspan="${cols}"></td></tr>` : '';
  for (let j = from; j < to; j++) {
    const t = list.at(order[j]);
    html += `<tr><td>${esc(t.name)}</td><td>${esc(t.dtype)}</td><td>[${t.shape.join(', ')}]</td>`
      + `<td class="num">${fmtInt(t.byteLength)}</td><td class="num">${fmtInt(t.offset)}</td>${sharded ? fileCell(t.shard ?? '') : ''}</tr>`;
  }
  if (to < order.length) html += `<tr class="spacer" style="height:${(order.length - to) * rowH}px"><td colspan="${cols}"></td></tr>`;
  body.innerHTML = html;
  // Rows are as high as the first one rendered (the spacers use it).
  const real = body.querySelector('tr:not(.spacer)');
  if (real && !state.rowHeight) {
    const h = real.getBoundingClientRect().height;
    if (h > 0 && Math.abs(h - rowH) > 0.5) { state.rowHeight = h; renderWindow(); return; }
  }
  noteSlice(performance.now() - t0, 'window');
}

function fmtValue(v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 200 ? `${v.slice(0, 200)}…` : v);
  return String(v);
}

function renderMetadata(h) {
  const rows = [];
  if (h.gguf) {
    for (const kv of h.gguf.kv) {
      let type = kv.type;
      let value;
      if (kv.type === 'ARRAY') {
        type = `ARRAY<${kv.elementType}>[${fmtInt(kv.count)}]`;
        if (kv.values) value = `[${kv.values.map(fmtValue).join(', ')}]`;
        else value = `[${kv.head.map(fmtValue).join(', ')}, … ${fmtInt(kv.count - kv.head.length - 1)} more …, ${fmtValue(kv.last)}]`
          + (kv.stringBytes != null ? ` (${fmtBytes(kv.stringBytes)} of strings)` : '');
      } else {
        value = fmtValue(kv.value);
        if (kv.valueBytes != null) value += ` (${fmtBytes(kv.valueBytes)})`;
      }
      rows.push([kv.key, type, value]);
    }
  } else if (h.metadata) {
    for (const [k, v] of Object.entries(h.metadata)) rows.push([k, typeof v === 'string' ? 'string' : typeof v, typeof v === 'string' ? fmtValue(v) : JSON.stringify(v)]);
  }
  $('metadata').querySelector('tbody').innerHTML = rows.length
    ? rows.map(([k, t, v]) => `<tr><td>${esc(k)}</td><td>${esc(t)}</td><td class="value">${esc(v)}</td></tr>`).join('')
    : '<tr><td colspan="3" class="muted">no metadata</td></tr>';
  $('meta-count').textContent = `(${rows.length})`;
}

const PALETTE = ['#2f6fde', '#e07b39', '#3aa76d', '#c04f8f', '#8a63d2', '#c9a227', '#3fa7b5', '#d14d4d', '#6b7b8c', '#9bbb3b'];
function setupCanvas(canvas, h) {
  const ratio = window.devicePixelRatio || 1;
  canvas.style.height = `${h}px`;
  const w = canvas.clientWidth || 600;
  canvas.width = w * ratio;
  canvas.height = h * ratio;
  const g = canvas.getContext('2d');
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = '12px ui-monospace, "DejaVu Sans Mono", monospace';
  return { g, w, h };
}

// `by`: dtype -> {bytes, n}; `total`: the bytes of every tensor.
function drawDtypeChart(by, total) {
  const items = [...by.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 14);
  const canvas = $('dtype-chart');
  const { g, w } = setupCanvas(canvas, Math.max(60, 22 * items.length + 16));
  total ||= 1;
  const max = Math.max(1, ...items.map(([, e]) => e.bytes));
  const left = 90;
  const label = (e) => `${fmtBytes(e.bytes)} · ${((100 * e.bytes) / total).toFixed(1)}% · ${e.n} tensor${e.n > 1 ? 's' : ''}`;
  const right = 12 + Math.max(0, ...items.map(([, e]) => g.measureText(label(e)).width));
  items.forEach(([dt, e], i) => {
    const y = 8 + i * 22;
    g.fillStyle = '#1d2330';
    g.textBaseline = 'middle';
    g.fillText(dt, 4, y + 8);
    const bw = Math.max(1, ((w - left - right) * e.bytes) / max);
    g.fillStyle = PALETTE[i % PALETTE.length];
    g.fillRect(left, y, bw, 16);
    g.fillStyle = '#6b7280';
    g.fillText(label(e), left + bw + 6, y + 8);
  });
  canvas.dataset.items = JSON.stringify(items.map(([dt, e]) => [dt, e.bytes, e.n]));
}

// ---------------- preflight ----------------
// The package's plan(): from the headers alone (URLs: Range requests), each output's bytes and GPU
// buffers for the chosen dtype, the tensors over the device's maxBufferSize (they need split) and
// maxStorageBufferBindingSize, the bytes to download, and the budget. "Load to GPU" warns first
// when the load cannot fit.
const budgetBytes = () => ($('budget').value === '' ? undefined : Math.round(Number($('budget').value) * 1048576));

function preflight() {
  state.planPromise = planNow();
  return state.planPromise;
}

// The newest plan once it is made (a click on "Load to GPU" right after the budget changed waits
// for the plan of that budget).
async function currentPlan() {
  let p;
  do { p = state.planPromise; await p; } while (p !== state.planPromise);
  return state.plan;
}

async function planNow() {
  const seq = (state.planSeq = (state.planSeq ?? 0) + 1);
  const gen = state.generation;
  if (!state.source || !state.header) return null;
  state.plan = null;
  state.preflightConfirmed = false;
  $('load').textContent = 'Load to GPU';
  $('preflight').hidden = false;
  $('preflight').dataset.state = 'planning';
  $('preflight-warn').hidden = true;
  $('preflight-env').hidden = true;
  $('preflight-summary').textContent = 'Planning from the headers…';
  $('preflight-table').querySelector('tbody').innerHTML = '';
  let p;
  try {
    // With the cache on, plan() also checks the origin's storage (estimate, persisted); with a
    // device, shader-f16 for f16.
    p = await plan(state.source, {
      ...modelOptions(), dtype: $('dtype').value, decode: $('dtype').value === 'raw' ? 'cpu' : $('decode').value, split: $('split').checked, budget: budgetBytes(),
      ...(state.gpu?.device ? { device: state.gpu.device, adapter: state.gpu.adapter } : {}),
      ...($('cache').checked ? { cache: 'opfs' } : {}),
    });
  } catch (e) {
    if (seq !== state.planSeq || gen !== state.generation) return null;
    $('preflight').dataset.state = 'error';
    $('preflight-summary').textContent = `No preflight: ${e.code ?? 'Error'}: ${e.message}`;
    return null;
  }
  if (seq !== state.planSeq || gen !== state.generation) return null;
  state.plan = p;
  showPlan(p);
  return p;
}

// Why a load cannot fit (empty: it can).
function planProblems(p) {
  const out = [];
  if (!p.fitsLimits) out.push(`${fmtInt(p.needsSplit.length)} tensor${p.needsSplit.length === 1 ? '' : 's'} larger than maxBufferSize (${fmtBytes(p.limits.maxBufferSize)}) with split off: the load fails with BufferTooLarge (${p.needsSplit.slice(0, 3).join(', ')}${p.needsSplit.length > 3 ? ', …' : ''})`);
  if (p.gpuBytes === null) out.push('a tensor has no layout within maxBufferSize');
  if (p.fitsBudget === false) out.push(`the GPU buffers take ${fmtBytes(p.gpuBytes)}, over the budget of ${fmtBytes(p.budget)}`);
  return out;
}

// The preflight table lists the outputs over a limit and then the others, PLAN_ROWS in all: a
// 92k-output plan made 92k rows of HTML (seconds of layout on the main thread).
const PLAN_ROWS = 300;
function showPlan(p) {
  const over = [], rest = [];
  for (const t of p.tensors) {
    if (t.needsSplit || t.overBindingSize) over.push(t);
    else if (over.length + rest.length < PLAN_ROWS) rest.push(t);
    if (over.length >= PLAN_ROWS) break;
  }
  const listed = [...over, ...rest].slice(0, PLAN_ROWS);
  const rows = listed.map((t) => {
    const flags = [t.needsSplit ? (p.split ? `split into ${t.buffers}` : 'over maxBufferSize: needs split') : '', t.overBindingSize ? 'over maxStorageBufferBindingSize' : ''].filter(Boolean).join('; ');
    return `<tr data-name="${esc(t.name)}" data-bytes="${t.byteLength}" data-gpu="${t.gpuBytes ?? ''}"${flags ? ' data-over="1"' : ''}>` +
      `<td class="mono">${esc(t.name)}</td><td class="mono">${esc(t.file ?? '')}</td><td>${esc(t.dtype)}</td><td class="mono">[${t.shape.join(', ')}]</td>` +
      `<td class="num">${fmtInt(t.byteLength)}</td><td class="num">${t.buffers ?? '–'}</td><td class="num">${t.gpuBytes === null ? '–' : fmtInt(t.gpuBytes)}</td><td>${esc(flags)}</td></tr>`;
  });
  if (listed.length < p.tensors.length) rows.push(`<tr class="more"><td colspan="8">… ${fmtInt(p.tensors.length - listed.length)} more outputs (the ${fmtInt(listed.length)} above: those over a limit first)</td></tr>`);
  $('preflight-table').querySelector('tbody').innerHTML = rows.join('');
  const problems = planProblems(p);
  const binding = p.overBindingSize.length ? `; ${fmtInt(p.overBindingSize.length)} over maxStorageBufferBindingSize (${fmtBytes(p.limits.maxStorageBufferBindingSize)}: they load, a shader binds them by ranges)` : '';
  $('preflight-summary').textContent = `Preflight (${p.dtype}): ${fmtInt(p.tensors.length)} outputs, ${fmtBytes(p.gpuBytes ?? 0)} of GPU buffers` +
    ` (${fmtInt(p.gpuBytes ?? 0)} bytes); download ${p.downloadBytes === null ? 'size unknown' : fmtBytes(p.downloadBytes)} in ${fmtInt(p.files.length)} file${p.files.length === 1 ? '' : 's'}` +
    `, a load reads ${fmtBytes(p.readBytes)}${binding}` +
    (p.tensors.some((t) => t.decode === 'gpu') ? `; ${fmtInt(p.tensors.filter((t) => t.decode === 'gpu').length)} decode on the GPU, ${fmtBytes(p.uploadBytes)} uploaded` : '') +
    `. ${problems.length ? 'Does not fit.' : p.budget === null ? 'Fits the device.' : 'Fits the device and the budget.'}`;
  $('preflight').dataset.state = problems.length ? 'warn' : 'ready';
  $('preflight').dataset.fits = String(problems.length === 0);
  showPlanWarnings(p);
}

// The plan's warnings about the environment (storage for the cache, shader-f16), each with its fix;
// a storage that is not persistent gets a button that asks for it (persist()) and says the outcome.
function showPlanWarnings(p) {
  const list = $('preflight-env');
  list.innerHTML = p.warnings.map((w) => `<li data-code="${esc(w.code)}">⚠ <b>${esc(w.code)}</b>: ${esc(w.message)}. <span class="fix">Fix: ${esc(w.fix)}.</span>` +
    (w.code === 'StorageNotPersisted' ? ' <button class="persist">Ask to keep the storage</button> <span class="persist-outcome"></span>' : '') + '</li>').join('');
  list.hidden = p.warnings.length === 0;
  list.querySelector('button.persist')?.addEventListener('click', async (ev) => {
    const r = await persist();
    ev.target.parentElement.querySelector('.persist-outcome').textContent = `${r.outcome}: ${r.message}`;
    if (r.persisted) preflight();
  });
}

async function onLoadClick() {
  if (state.loading || state.loadClicked) return;
  // Until the plan of the current settings is made, the load is pending: the status says so at
  // once (a click is never taken for the previous load's end) and a second click is ignored.
  state.loadClicked = true;
  $('load-status').dataset.state = 'planning';
  $('load-status').textContent = 'Checking the preflight…';
  let p;
  try {
    p = await currentPlan();
  } finally {
    state.loadClicked = false;
  }
  const problems = p ? planProblems(p) : [];
  if (problems.length && !state.preflightConfirmed) {
    $('load-status').dataset.state = 'idle';
    $('load-status').textContent = '';
    state.preflightConfirmed = true;
    $('preflight-warn').hidden = false;
    $('preflight-warn').textContent = `⚠ This load cannot fit: ${problems.join('; ')}. Click "Load anyway" to try.`;
    $('load').textContent = 'Load anyway';
    return;
  }
  $('preflight-warn').hidden = true;
  state.preflightConfirmed = false;
  $('load').textContent = 'Load to GPU';
  // A load that does not start (no device, no model, one already running) leaves no pending status.
  load().then((r) => {
    if (r === null && $('load-status').dataset.state === 'planning') {
      $('load-status').dataset.state = 'idle';
      $('load-status').textContent = '';
    }
  });
}

// ---------------- loading to the GPU ----------------
function resetLoadUi() {
  $('bar').style.width = '0';
  for (const id of ['st-bytes', 'st-tensors', 'st-rate', 'st-elapsed', 'st-heap', 'st-wasm']) $(id).textContent = '–';
  $('load-status').dataset.state = 'idle';
  $('load-status').textContent = '';
  $('load').disabled = !state.gpu?.device;
  $('cancel').disabled = true;
  if (state.gpu?.error) $('adapter').textContent = state.gpu.error;
  updateBuffers();
}

// The buffers of the load going on, else of the model loaded: its thread's count (a main-thread
// load after a worker one counts its own buffers, not the worker's last figure).
const liveBuffers = () => ((state.loading ? state.loading.where : state.modelWhere) === 'worker' ? worker.stats.live : state.gpu?.tracker?.live.size ?? 0);
function updateBuffers() { $('st-buffers').textContent = String(liveBuffers()); }

function dropModel() {
  if (state.model) { state.model.destroy(); state.model = null; }
  if (state.modelWhere === 'worker') workerStats().then(updateBuffers, () => {});
  updateBuffers();
}

// The parallel download's changes of its connection count (parallel-ranges.mjs): the latest is
// shown beside the progress; every one is kept for the tests.
function connectionsEvent(p) {
  const l = state.loading;
  if (!l) return;
  (l.connections ??= []).push({ connections: p.connections, reason: p.reason });
}

// The cache's events of the current load: shown under the progress, kept for the tests.
function cacheEvent(p) {
  const c = state.loading?.cache;
  if (!c) return;
  if (p.type === 'cache') c.states.push({ url: p.url, state: p.state, cachedBytes: p.cachedBytes, size: p.size });
  else c.warnings.push({ url: p.url, code: p.code, message: p.message });
  const s = c.states.at(-1);
  const from = s ? ({ hit: 'every byte from the OPFS cache', partial: `${fmtBytes(s.cachedBytes)} of ${fmtBytes(s.size)} from the OPFS cache, the rest from the network`, miss: 'not cached yet: kept in OPFS as it streams', stale: 'the server\'s file changed: cached afresh', off: 'the cache entry could not be used' }[s.state]) : '';
  $('cache-status').textContent = [from && `cache: ${from}`, ...c.warnings.map((w) => `⚠ ${w.code}: ${w.message}`)].filter(Boolean).join(' · ');
  $('cache-status').dataset.state = c.warnings.length ? 'warning' : s?.state ?? '';
}

function cancelLoad() { state.loading?.controller.abort(new DOMException('cancelled by the user', 'AbortError')); }

async function load(opts = {}) {
  if (!state.gpu?.device || state.loading || !state.source) return null;
  await checksDone();
  if (state.loading) return null;
  dropModel();
  $('check').hidden = true;
  const dtype = opts.dtype ?? $('dtype').value;
  const tracker = state.gpu.tracker;
  tracker.hash = opts.hash ?? $('hash').checked;
  const cache = opts.cache ?? $('cache').checked;
  let where = opts.where ?? (inWorker() ? 'worker' : 'main');
  const controller = new AbortController();
  const t0 = performance.now();
  const total = multiFile(state.header) ? state.header.totalSize : state.header.size;
  // Decoded, a convention model yields its logical weights; raw, its stored tensors.
  const nTensors = dtype !== 'raw' && state.logical ? state.logical.length : state.header.tensors.length;
  state.loading = { controller, t0, where, cache: { states: [], warnings: [] } };
  $('cache-status').textContent = '';
  $('cache-status').dataset.state = '';
  state.peaks = { jsHeap: 0, wasm: 0 };
  $('load').disabled = true;
  $('cancel').disabled = false;
  $('load-status').dataset.state = 'loading';
  $('load-status').textContent = `Streaming into WebGPU as ${dtype}…`;
  let last = { bytes: 0, tensors: 0, rate: 0, totalBytes: total };
  const show = () => {
    const el = performance.now() - t0;
    const tb = last.totalBytes ?? total;
    $('bar').style.width = tb ? `${Math.min(100, (100 * last.bytes) / tb)}%` : '0';
    $('st-bytes').textContent = `${fmtBytes(last.bytes)}${tb ? ` / ${fmtBytes(tb)}` : ''}`;
    $('st-tensors').textContent = `${fmtInt(last.tensors)} / ${fmtInt(nTensors)}`;
    const conns = state.loading?.connections?.at(-1)?.connections;
    $('st-rate').textContent = `${(last.bytes / 1e6 / Math.max(el / 1000, 1e-3)).toFixed(1)} MB/s${conns > 1 ? ` over ${conns} connections` : ''}`;
    $('st-elapsed').textContent = fmtSecs(el);
    sampleMemory();
    updateBuffers();
  };
  const timer = setInterval(() => { if (where === 'worker') workerStats().then(show, () => {}); else show(); }, 100);
  const result = { dtype, ok: false, where, cache };
  try {
    const onProgress = (p) => {
      // A URL's body failed and is being resumed from p.offset (the package's retry event).
      if (p.type === 'retry') $('load-status').textContent = `Connection lost at byte ${fmtInt(p.offset)} of ${p.url.split('/').pop()}; resuming (attempt ${p.attempt})…`;
      else if (p.type === 'connections') connectionsEvent(p);
      else if (p.type) cacheEvent(p);
      else last = p;
      if (opts.onProgress) opts.onProgress(p);
    };
    const decode = dtype === 'raw' ? 'cpu' : opts.decode ?? $('decode').value;
    const connections = $('connections').value === 'auto' ? 'auto' : Number($('connections').value);
    const common = { ...modelOptions(), dtype, decode, split: opts.split ?? $('split').checked, connections, signal: controller.signal, progressInterval: 50, onProgress, ...(cache ? { cache: 'opfs' } : {}) };
    let model;
    if (where === 'worker') {
      try {
        await ask('hash', { on: tracker.hash });
        model = await loadInWorker(worker.w, state.source, common);
      } catch (e) {
        // A source that cannot cross to a worker (a function): this load runs here.
        if (!(e instanceof TypeError) || !/cannot cross to a worker/.test(e.message)) throw e;
        where = state.loading.where = result.where = 'main';
      }
    }
    if (where === 'main') {
      const { source, extra } = cache ? { source: state.source, extra: {} } : loadSource(opts.lean ?? true);
      model = await loadToWebGPU(tracker.wrap(), source, { ...common, ...extra });
    }
    state.model = model;
    if (model.warnings?.length) showWarnings(model.warnings);
    state.modelWhere = where;
    state.modelDtype = dtype;
    last = { ...last, bytes: model.bytes, tensors: Object.keys(model.tensors).length };
    show();
    const el = performance.now() - t0;
    const gpuBytes = Object.values(model.tensors).reduce((a, t) => a + t.byteLength, 0);
    $('load-status').dataset.state = 'done';
    // Bytes uploaded: what the CPU decode wrote, less the GPU-decoded tensors' outputs, plus the
    // stored bytes the decode pass read instead.
    const onGpu = Object.values(model.tensors).filter((t) => t.decodedOn === 'gpu');
    const uploaded = gpuBytes - onGpu.reduce((a, t) => a + t.byteLength, 0) + (model.gpuDecode?.uploadBytes ?? 0);
    const gpuNote = model.gpuDecode ? `; ${fmtInt(onGpu.length)} decoded on the GPU, ${fmtBytes(uploaded)} uploaded` : '';
    $('load-status').textContent = `✔ Loaded ${fmtInt(Object.keys(model.tensors).length)} tensors (${fmtBytes(gpuBytes)} on the GPU as ${dtype}${gpuNote}) in ${fmtSecs(el)}${where === 'worker' ? ' in a worker' : ' on the main thread'}; every byte validated on the way.`;
    if (state.verdict?.header) setVerdict('valid', `Valid ${modelName(state.header)}: every byte read while loading, ${fmtInt(Object.keys(model.tensors).length)} tensors.`);
    Object.assign(result, { ok: true, tensors: Object.keys(model.tensors).length, bytes: model.bytes, gpuBytes, ms: el, decode, uploaded, gpuDecoded: onGpu.length });
    fillCheck(model);
  } catch (e) {
    show();
    if (e?.code === 'Aborted' || e?.name === 'AbortError') {
      $('load-status').dataset.state = 'cancelled';
      const live = where === 'worker' ? (await workerStats().catch(() => worker.stats)).live : tracker.live.size;
      $('load-status').textContent = `Cancelled after ${fmtBytes(last.bytes)}; ${live === 0 ? 'every GPU buffer was destroyed' : `${live} GPU buffers still alive`}.`;
      Object.assign(result, { cancelled: true, bytes: last.bytes });
    } else {
      $('load-status').dataset.state = 'error';
      $('load-status').textContent = `✘ ${e.code ?? 'Error'}: ${e.message}`;
      if (e instanceof WeightstreamError) { showError(e); setVerdict('invalid', `Invalid: ${e.code}`); }
      Object.assign(result, { error: e.code ?? e.message });
    }
  } finally {
    clearInterval(timer);
    const c = state.loading.cache;
    const connections = state.loading.connections ?? [];
    // The load's end (loading cleared) and its result are one step: a caller that sees no load
    // going on reads this load's result, never the one before it (the worker's counts are awaited
    // first).
    const t = where === 'worker' ? await workerStats().catch(() => worker.stats) : { live: tracker.live.size, created: tracker.created, destroyed: tracker.destroyed };
    Object.assign(result, { liveBuffers: t.live, created: t.created, destroyed: t.destroyed, peaks: { ...state.peaks }, cacheStates: c.states, cacheWarnings: c.warnings, connections });
    state.lastLoad = result;
    state.loading = null;
    $('load').disabled = false;
    $('cancel').disabled = true;
    updateBuffers();
  }
  return result;
}

// A single-file URL is streamed through a BYOB reader into one reused 1 MiB buffer: the fetch
// body's chunks are then not a new ArrayBuffer each (garbage that piles up to ~100 MiB before V8
// collects it), which keeps the page's memory flat. Bytes before the data section are handed on
// as copies: the reader may keep them to replay the header (arena retry).
async function* leanBody(url, signal, keepBefore) {
  const res = await fetch(url, { signal });
  if (!res.ok) throw new Error(`HTTP ${res.status} for ${url}`);
  let reader;
  try { reader = res.body.getReader({ mode: 'byob' }); } catch { reader = null; }
  if (!reader) { for await (const c of res.body) yield c; return; }
  let buf = new ArrayBuffer(1 << 20);
  let pos = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read(new Uint8Array(buf));
      if (done) return;
      buf = value.buffer;
      const start = pos;
      pos += value.length;
      yield start < keepBefore ? value.slice() : value;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function loadSource(lean) {
  const src = state.source;
  const h = state.header;
  // A model of several files (a split GGUF model's siblings are found from its URL) is given as is.
  if (!lean || typeof src !== 'string' || multiFile(h) || h.splits || h.size == null) return { source: src, extra: {} };
  const controller = state.loading.controller;
  return { source: leanBody(src, controller.signal, h.dataStart + (1 << 20)), extra: { size: h.size } };
}

// ---------------- per-tensor check ----------------
function fillCheck(model) {
  const names = Object.keys(model.tensors);
  $('check-tensor').innerHTML = names.map((n) => {
    const t = model.tensors[n];
    const from = t.quant?.format && t.quant.format !== t.dtype ? ` ← ${t.quant.format}${t.quant.bits ? ` ${t.quant.bits}-bit` : ''}` : '';
    return `<option value="${esc(n)}">${esc(n)} — ${esc(t.dtype)}${esc(from)} [${t.shape.join(', ')}] ${fmtBytes(t.byteLength)}${t.shard ? ` · ${esc(t.shard)}` : ''}</option>`;
  }).join('');
  $('check').hidden = false;
  $('check-result').textContent = '';
  $('check-result').dataset.match = '';
  $('hist-caption').textContent = '';
  const c = $('hist');
  c.getContext('2d').clearRect(0, 0, c.width, c.height);
  // The first tensor is checked at once when small (reading back allocates its size twice).
  if (names.length && model.tensors[names[0]].byteLength <= 4 * 1048576) check(names[0]);
}

async function sha256(u8) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', u8));
  return [...d].map((x) => x.toString(16).padStart(2, '0')).join('');
}

// The same tensor decoded on the CPU: the package's createReader over the model's source(s) with
// only this tensor selected (a seekable source reads just its byte ranges) and the load's dtype.
const CPU_CHECK_LIMIT = 64 * 1048576;
async function cpuDecode(name, dtype) {
  const parts = [];
  let n = 0;
  for await (const ev of createReader({ dtype, filter: [name], ...modelOptions() }).read(state.source)) {
    if (ev.type === 'tensorData' && ev.tensor.name === name) { parts.push(ev.data.slice()); n += ev.data.length; }
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

// Read-backs still running (the automatic check after a load runs unawaited) finish before a
// model is dropped: a copy from a destroyed buffer would land in the next load's GPU error scope.
const checksRunning = new Set();
const checksDone = () => Promise.all([...checksRunning]);
function check(name) {
  const p = checkNow(name);
  const settled = p.catch(() => null);
  checksRunning.add(settled);
  settled.then(() => checksRunning.delete(settled));
  return p;
}

async function checkNow(name) {
  const t = state.model?.tensors[name];
  if (!t) return null;
  $('check-tensor').value = name;
  const { bytes, pieces, buffers: nBufs } = state.modelWhere === 'worker'
    ? await ask('read', { id: state.model.id, name })
    : await readTensor(state.gpu.device, state.gpu.tracker, t);
  const bufs = { length: nBufs };
  // A tensor the GPU decoded was written by the decode pass, not streamed: its check is the CPU decode.
  const hashed = t.decodedOn !== 'gpu' && pieces.every((p) => p.streamed != null);
  const match = hashed && pieces.every((p) => p.gpu === p.streamed && p.inOrder);
  const res = {
    name, dtype: t.dtype, shape: t.shape, byteLength: t.byteLength, buffers: bufs.length, pieces,
    match: hashed ? match : null, sha256: await sha256(bytes), quant: t.quant ?? null, shard: t.shard ?? null,
  };
  let cpuLine;
  if (t.byteLength <= CPU_CHECK_LIMIT) {
    try {
      const cpu = await cpuDecode(name, state.modelDtype);
      const equal = cpu.length === bytes.length && cpu.every((v, i) => v === bytes[i]);
      res.cpu = { sha256: await sha256(cpu), byteLength: cpu.length, equal };
      cpuLine = `SHA-256 of the CPU decode:              ${res.cpu.sha256}\n${equal ? '✔ the GPU bytes equal the CPU decode byte for byte' : `✘ the CPU decode differs (${fmtInt(cpu.length)} bytes)`}`;
    } catch (e) {
      res.cpu = { error: e.code ?? e.message };
      cpuLine = `CPU decode failed: ${e.code ?? ''} ${e.message}`;
    }
  } else {
    cpuLine = `CPU decode skipped (over ${fmtBytes(CPU_CHECK_LIMIT)})`;
  }
  const gpuA = pieces.map((p) => hex8(p.gpu)).join(' ');
  const strA = hashed ? pieces.map((p) => hex8(p.streamed)).join(' ')
    : t.decodedOn === 'gpu' ? 'not applicable (decoded on the GPU from its stored bytes)' : 'not recorded (checksum while streaming was off)';
  const el = $('check-result');
  el.dataset.match = hashed ? String(match && res.cpu?.equal !== false && !res.cpu?.error) : '';
  el.textContent = `${name}: ${t.dtype} [${t.shape.join(', ')}], ${fmtInt(t.byteLength)} bytes in ${bufs.length} buffer${bufs.length > 1 ? 's' : ''}\n`
    + `Adler-32 read back from the GPU  ${gpuA}\nAdler-32 of the streamed bytes   ${strA}\n`
    + (hashed ? (match ? '✔ identical: the GPU holds exactly the bytes that were streamed' : '✘ MISMATCH') : '')
    + `\nSHA-256 of the tensor's bytes on the GPU: ${res.sha256}\n${cpuLine}`;
  res.histogram = drawHistogram(t, bytes);
  state.lastCheck = res;
  return res;
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

function valuesOf(dtype, bytes) {
  const n = bytes.length;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, n);
  switch (dtype) {
    case 'f32': case 'F32': return { values: new Float32Array(bytes.buffer, bytes.byteOffset, n >> 2), what: 'values' };
    case 'f16': case 'F16': { const v = new Float32Array(n >> 1); for (let i = 0; i < v.length; i++) v[i] = halfToFloat(dv.getUint16(2 * i, true)); return { values: v, what: 'values' }; }
    case 'BF16': { const v = new Float32Array(n >> 1); const u = new Uint32Array(v.buffer); for (let i = 0; i < v.length; i++) u[i] = dv.getUint16(2 * i, true) << 16; return { values: v, what: 'values' }; }
    default: return { values: bytes, what: `stored bytes (${dtype} is not decoded; load as f32 to see its values)` };
  }
}

function drawHistogram(t, bytes) {
  const { values, what } = valuesOf(t.dtype, bytes);
  const canvas = $('hist');
  const { g, w, h } = setupCanvas(canvas, 200);
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let sq = 0;
  let bad = 0;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (!Number.isFinite(x)) { bad++; continue; }
    if (x < min) min = x;
    if (x > max) max = x;
    sum += x;
    sq += x * x;
  }
  const n = values.length - bad;
  const bins = new Array(64).fill(0);
  if (n > 0) {
    const span = max - min || 1;
    for (let i = 0; i < values.length; i++) {
      const x = values[i];
      if (!Number.isFinite(x)) continue;
      bins[Math.min(63, Math.floor(((x - min) / span) * 64))]++;
    }
  }
  const top = Math.max(1, ...bins);
  const plotH = h - 24;
  const bw = (w - 20) / 64;
  g.fillStyle = '#2f6fde';
  bins.forEach((c, i) => { const bh = (plotH - 8) * (c / top); g.fillRect(10 + i * bw, plotH - bh, Math.max(1, bw - 1), bh); });
  g.fillStyle = '#6b7280';
  g.strokeStyle = '#c7ccd4';
  g.beginPath(); g.moveTo(10, plotH + 0.5); g.lineTo(w - 10, plotH + 0.5); g.stroke();
  g.textBaseline = 'top';
  if (n > 0) {
    g.fillText(min.toPrecision(4), 10, plotH + 5);
    const r = max.toPrecision(4);
    g.fillText(r, w - 10 - g.measureText(r).width, plotH + 5);
  }
  const mean = n ? sum / n : NaN;
  const std = n ? Math.sqrt(Math.max(0, sq / n - mean * mean)) : NaN;
  const stats = { count: values.length, min: n ? min : null, max: n ? max : null, mean: n ? mean : null, std: n ? std : null, nonFinite: bad, what, bins };
  $('hist-caption').textContent = `Histogram of ${fmtInt(values.length)} ${what}: min ${stats.min?.toPrecision(4)} · max ${stats.max?.toPrecision(4)} · mean ${mean.toPrecision(4)} · std ${std.toPrecision(4)}${bad ? ` · ${bad} NaN/Inf` : ''}`;
  return stats;
}

// ---------------- samples, events ----------------
async function loadSamples() {
  let list;
  try {
    const r = await fetch('api/samples');
    list = r.ok ? await r.json() : null;
  } catch { list = null; }
  list ??= [{ label: 'tiny-llama.safetensors', url: 'samples/tiny-llama.safetensors' }];
  $('samples').innerHTML = '<span class="muted">samples:</span>' + list.map((s) => `<button type="button" data-url="${esc(s.url)}">${esc(s.label)}</button>`).join('');
}

function bind() {
  // Several files at once: a UQFF directory's shards (+ residual.safetensors), a model with its
  // config.json, an Ollama manifest with its blobs (models.mjs decides).
  $('file').addEventListener('change', () => { const fs = [...$('file').files]; if (fs.length) open(fs); });
  $('url-form').addEventListener('submit', (e) => { e.preventDefault(); const u = $('url').value.trim(); if (u) open(u); });
  $('samples').addEventListener('click', (e) => {
    const u = e.target?.dataset?.url;
    if (u) { $('url').value = u; open(u); }
  });
  $('manifest').addEventListener('click', (e) => {
    const i = e.target?.dataset?.layer;
    const layer = i != null ? state.spec?.layers?.[Number(i)] : null;
    if (!layer) return;
    if (typeof layer.source === 'string') $('url').value = layer.source;
    open(layer.source);
  });
  $('filter').addEventListener('input', renderTable);
  // The table's window follows its scrolling (once a frame).
  let scrollQueued = false;
  $('tensors').parentElement.addEventListener('scroll', () => {
    if (scrollQueued) return;
    scrollQueued = true;
    requestAnimationFrame(() => { scrollQueued = false; renderWindow(); });
  });
  $('tensors').querySelector('thead').addEventListener('click', (e) => {
    const key = e.target?.dataset?.key;
    if (!key) return;
    state.sort = { key, dir: state.sort.key === key ? -state.sort.dir : 1 };
    renderTable();
  });
  $('load').addEventListener('click', onLoadClick);
  $('convert-go').addEventListener('click', onConvert);
  $('convert-cancel').addEventListener('click', () => state.converting?.abort(new DOMException('cancelled by the user', 'AbortError')));
  for (const id of ['dtype', 'decode', 'split', 'budget', 'cache']) $(id).addEventListener('change', () => preflight());
  $('cancel').addEventListener('click', cancelLoad);
  $('cache-clear').addEventListener('click', async () => {
    const n = await window.wsPage.evict().catch((e) => { $('cache-status').textContent = `clearing the cache failed: ${e.message}`; return null; });
    if (n !== null) $('cache-status').textContent = `cache cleared (${n} ${n === 1 ? 'entry' : 'entries'})`;
  });
  $('check-run').addEventListener('click', () => check($('check-tensor').value));
  let depth = 0;
  window.addEventListener('dragenter', (e) => { e.preventDefault(); depth++; $('drop').hidden = false; });
  window.addEventListener('dragleave', () => { if (--depth <= 0) { depth = 0; $('drop').hidden = true; } });
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    $('drop').hidden = true;
    const fs = [...(e.dataTransfer?.files ?? [])];
    if (fs.length) open(fs);
  });
}

// ---------------- convert ----------------
// The model as plain safetensors into a directory the user picks: the package's convert() (the
// bytes of `weightstream convert`), each file written through the directory handle's
// createWritable(); config.json beside the model (or picked with it) is written without its
// quantization sections.
async function onConvert() {
  if (!state.source || state.converting) return;
  let dir;
  try {
    dir = await window.showDirectoryPicker({ id: 'weightstream-convert', mode: 'readwrite' });
  } catch {
    return;  // the picker was dismissed
  }
  const ctl = new AbortController();
  state.converting = ctl;
  const status = $('convert-status');
  $('convert-go').disabled = true;
  $('convert-cancel').disabled = false;
  status.dataset.state = 'running';
  status.textContent = 'converting…';
  const t0 = performance.now();
  try {
    const r = await convert(state.source, {
      ...modelOptions(), config: state.spec?.config, to: $('convert-to').value, output: dir, signal: ctl.signal,
      onProgress: (p) => { if (p.totalBytes) status.textContent = `${fmtBytes(p.bytes)} of ${fmtBytes(p.totalBytes)} written`; },
    });
    state.lastConvert = { ok: true, ...r };
    status.dataset.state = 'done';
    status.textContent = `${fmtInt(r.weights)} weights (${fmtBytes(r.totalSize)} of ${r.to} from ${r.from}) → ${r.files.map((f) => f.name).join(', ')} in ${fmtSecs(performance.now() - t0)}` +
      (r.skipped.length ? `; skipped (no float decoding): ${r.skipped.join(', ')}` : '');
  } catch (e) {
    state.lastConvert = { ok: false, code: e.code ?? e.name, message: e.message };
    status.dataset.state = e.code === 'Aborted' ? 'cancelled' : 'error';
    status.textContent = e.code === 'Aborted' ? 'Cancelled: the file being written was discarded.' : e.message;
  } finally {
    if (state.converting === ctl) state.converting = null;
    $('convert-go').disabled = false;
    $('convert-cancel').disabled = true;
  }
}

// Hooks for the Playwright tests (and the console).
window.wsPage = {
  state,
  open: (src) => open(src),
  load: (opts) => load(opts),
  preflight: () => preflight(),
  cancel: () => cancelLoad(),
  check: (name) => check(name),
  liveBuffers,
  wasmMemory: () => wasm?.memory?.buffer?.byteLength ?? 0,
  // The OPFS cache as the loading side sees it (the worker, or this page).
  cacheInfo: () => (inWorker() ? ask('cacheInfo').then((r) => r.entries) : cacheInfo()),
  evict: (url) => (inWorker() ? ask('evict', { url: url ? new URL(url, location.href).href : null }).then((r) => r.removed) : evict(url)),
  worker: () => worker.w,
};

async function main() {
  bind();
  startWorker();
  wasm = await init();
  const [gpu, wgpu] = await Promise.all([setupGpu(), worker.w ? ask('gpu').catch((e) => ({ error: e.message })) : null, loadSamples()]);
  state.gpu = gpu;
  if (wgpu?.error) worker.gpu = wgpu;
  const params = new URLSearchParams(location.search);
  if (params.get('where') === 'main' || !worker.w || wgpu?.error) $('where').value = 'main';
  if (params.get('cache') === '1') $('cache').checked = true;
  if (['1', '2', '3', '4'].includes(params.get('connections'))) $('connections').value = params.get('connections');
  $('adapter').textContent = gpu.error ?? `WebGPU: ${gpu.name}, maxBufferSize ${fmtBytes(gpu.device.limits.maxBufferSize)}${wgpu && !wgpu.error ? '; in a worker too' : wgpu?.error ? ` (worker: ${wgpu.error})` : ''}`;
  const u = new URLSearchParams(location.search).get('url');
  document.body.dataset.ready = 'true';
  if (u) { $('url').value = u; await open(u); }
}
window.wsPage.ready = main();
