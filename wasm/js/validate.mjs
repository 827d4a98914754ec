// validate() and inspect(): a model (one file, a sharded model, a UQFF directory, an Ollama
// manifest) through the model loader — every byte of every file with every rule, or up to the
// headers. The verdict is the loader's, the CLI's.
import { init } from './module.mjs';
import { WeightstreamError } from './errors.mjs';
import { describeModel } from './model-files.mjs';
import { loadModel, Mode, tableFacts } from './host.mjs';
import { publicWeight } from './conventions.mjs';
import { withEvents } from './options.mjs';
import { TensorList, copyWeights, emptyWeights } from './tensor-table.mjs';
import { readWeight } from './words.mjs';
import { formatTable } from './formats.mjs';

// What a validate() / inspect() result says of the model beside the files.
function modelFacts(kind, ready) {
  const facts = {};
  if (kind === 'uqff' || kind === 'ollama') {
    facts.convention = kind;
    facts.version = kind === 'uqff' && ready ? ready.model.version.join('.') : null;
  }
  return facts;
}

const dataFiles = (files) => files.filter((f) => f.header);

// Streams every byte through the loader. Never throws for a bad model: the verdict says what is
// wrong. Throws only for misuse (a TypeError) and, like every call here, when options.signal aborts.
export async function validate(source, options = {}) {
  options = withEvents(options, null);
  const wasm = await init(options);
  let kind = null, ready = null, format = null, tensors = 0;
  const warnings = [];  // the library's (host.mjs publicWarning), valid model or not
  try {
    const model = await describeModel(source, options);
    kind = model.kind;
    for await (const ev of loadModel(wasm, model, options, { mode: Mode.validate })) {
      if (ev.kind === 'ready') {
        ready = ev;
        ({ format, tensors } = tableFacts(ev.loader));
      } else if (ev.kind === 'warning') {
        warnings.push(ev.warning);
      }
    }
    return { valid: true, format, ...modelFacts(kind, ready), tensors, error: null, warnings };
  } catch (e) {
    if (!(e instanceof WeightstreamError) || e.code === 'Aborted') throw e;
    if (!ready && e.verdict) ({ format, tensors } = e.verdict);
    const facts = modelFacts(kind, null);
    return { valid: false, format, ...facts, tensors, error: e.toJSON(), warnings };
  }
}

// Reads up to the end of the headers (the rest of a stream is cancelled, a URL's body not
// downloaded): format, tensors, metadata, and the library's logical weights. Throws a
// WeightstreamError when a header, the index or the manifest is invalid (or, for a UQFF directory
// or an Ollama model, the model); a safetensors file's or sharded model's convention rejection (the
// headers being valid) is reported in `logical.error`.
//
// `tensors` (and `logical.weights`) are views over the library's tables, copied out in bulk
// (tensor-table.mjs): an object per tensor only when asked for. `plainArrays: true` gives plain
// arrays of every object instead, as before 0.4 (deprecated: removed in 0.5).
export async function inspect(source, options = {}) {
  options = withEvents(options, null);
  const wasm = await init(options);
  const model = await describeModel(source, options);
  let ready = null, conventionError = null, weights = null, named = null;
  const warnings = [];  // headers only: the library's data warnings (validate()'s) never come here
  try {
    for await (const ev of loadModel(wasm, model, options, { mode: Mode.headers })) {
      if (ev.kind === 'warning') warnings.push(ev.warning);
      // Read out while the loader lives (it is gone when the loop ends). A plain model's weights
      // are its tensors: nothing to list.
      if (ev.kind === 'ready') {
        ready = { files: ev.files, model: ev.model };
        named = dataFiles(ready.files).map((f) => ({ header: f.header, name: f.shard }));
        weights = wasm.plainConventions.has(ev.model.convention) ? null : weightsOf(wasm, ev, named);
      }
    }
  } catch (e) {
    // A UQFF directory or an Ollama model is its logical model: its rejection is inspect()'s.
    if (!(e instanceof WeightstreamError) || !e.model || model.kind === 'uqff' || model.kind === 'ollama') throw e;
    ready = e.model;
    conventionError = e;
  }
  const out = inspected(model, ready, conventionError, weights);
  out.warnings = warnings;
  return options.plainArrays ? plain(out) : out;
}

// The configuration documents the library took the quantization parameters from (the loader says
// whether it did; the files are those of kind 'config' it read), or null.
const configOf = (ready) => (ready.model.configUsed
  ? ready.files.filter((f) => f.kind === 'config' && f.present).map((f) => f.name).join(' + ') || null
  : null);

function inspected(model, ready, conventionError, weights) {
  const files = dataFiles(ready.files);
  const logicalOf = (convention) => (conventionError
    ? { convention: null, weights: emptyWeights(), plan: null, config: null, error: conventionError.toJSON() }
    : { convention, weights: weights ?? emptyWeights(), plan: ready.model.plan, config: configOf(ready), error: null });
  const quantized = conventionError || ready.model.convention === 'ollama' || weights?.quantized === true;
  // Several files' tensors as one list, each object with its file's field.
  const joined = (parts, field) => TensorList.concat(parts.map((p) => ({ list: p.tensors, extra: { [field]: p.key } })));
  if (model.kind === 'uqff' || model.kind === 'ollama') {
    const perFile = files.map((f) => ({ file: f.shard, ...publicHeader(f.header) }));
    return {
      format: 'safetensors', convention: model.kind, ...modelFacts(model.kind, ready), metadata: null, files: perFile,
      tensors: joined(perFile.map((f) => ({ tensors: f.tensors, key: f.file })), 'file'),
      logical: logicalOf(model.kind),
    };
  }
  if (model.kind === 'sharded') {
    const index = ready.files.find((f) => f.kind === 'index');
    const shards = files.map((f) => ({ file: f.shard, ...publicHeader(f.header) }));
    const out = {
      format: 'safetensors', sharded: true, totalSize: index?.totalSize ?? null, metadata: index?.metadata ?? null,
      shards, tensors: joined(shards.map((sh) => ({ tensors: sh.tensors, key: sh.file })), 'shard'),
    };
    if (quantized) out.logical = logicalOf(ready.model.convention);
    return out;
  }
  const out = publicHeader(files[0].header);
  if (ready.model.splitCount > 1) {
    files.sort((a, b) => a.table - b.table);  // split order (the entry may be any split)
    // A split GGUF model: one table over its splits (the CLI's inspect --json), the metadata and
    // key-values the first split's.
    out.tensors = joined(files.map((f) => ({ tensors: f.header.tensors, key: f.split })), 'split');
    out.splits = files.map((f) => ({
      file: f.name, tensors: f.header.tensors.length, dataStart: f.header.dataStart, dataSize: f.header.dataSize,
      size: f.header.size, foreignKvs: f.foreignKvs,
    }));
  }
  if (files[0].header.format === 'safetensors' && quantized) out.logical = logicalOf(ready.model.convention);
  return out;
}

// inspect()'s result with plain arrays for its views (the `plainArrays` option).
function plain(out) {
  const arrays = (o) => (o && typeof o.toArray === 'function' ? o.toArray() : o);
  out.tensors = arrays(out.tensors);
  for (const f of out.files ?? out.shards ?? []) f.tensors = arrays(f.tensors);
  if (out.logical) out.logical.weights = arrays(out.logical.weights);
  return out;
}

// The model's logical weights (MLX, Ollama, UQFF, plain), with their plans, copied out while the
// loader lives; each made into inspect()'s row when asked for.
function weightsOf(wasm, ready, named) {
  if (!ready.model.logical) return null;
  const formats = formatTable(wasm);
  return copyWeights(wasm, ready.loader, ready.model.weightCount, ready.model.plan.chunk,
    (view, w, i) => publicWeight(named, readWeight(view, w, i, formats)));
}

// What inspect() returns: the header without internal fields. Its tensors are the header's own
// view (tensor-table.mjs), shared, not copied.
export function publicHeader(h) {
  const out = {
    format: h.format,
    name: h.name,
    size: h.size,
    headerSize: h.headerSize,
    dataStart: h.dataStart,
    dataSize: h.dataSize,
    tensors: h.tensors,
    metadata: h.metadata,
  };
  if (h.gguf) out.gguf = h.gguf;
  return out;
}
